"""DuckDB's macros (`CREATE MACRO` in sql/macros/) expanded in place, so a statement
Spark runs has no macro left in it: a scalar macro's call becomes its body with the arguments put in for
its parameters; a table macro's call (`FROM split_exactly('some_input')`) becomes its query as a subquery,
reading the table its argument names where the body says `query_table(<parameter>)` and putting its other
arguments in for their parameters.

The macros are read from the same files DuckDB's bootstrap runs (warehouse.macro_files: every file of
sql/macros/), never copied: one definition per macro, two engines."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sqlglot
from sqlglot import exp

from pipelines.lib.warehouse import macro_files, sql


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...]
    body: exp.Expression

    @property
    def is_table(self) -> bool:
        # a table macro's body is a query; a scalar macro's may be a scalar subquery in parentheses
        return isinstance(self.body, exp.Query) and not isinstance(self.body, exp.Subquery)


@cache
def macros() -> dict[str, Macro]:
    found: dict[str, Macro] = {}
    for name in macro_files():
        for statement in sqlglot.parse(sql(name), read="duckdb"):
            if not (isinstance(statement, exp.Create) and str(statement.args.get("kind")).upper() == "MACRO"):
                continue
            udf = statement.this
            if isinstance(udf.this, (exp.Dot, exp.Table)) and udf.this.args.get("db"):
                continue  # a schema's macro (finance.times_rate): the finance views run on DuckDB (docs/spark.md)
            macro = Macro(udf.this.name.lower(), tuple(p.name.lower() for p in udf.expressions),
                          statement.expression)
            found[macro.name] = macro
    return found


def expand_macros(tree: exp.Expression) -> exp.Expression:
    """`tree` with every macro call replaced by the macro's body, macros called by macros too."""
    known = macros()
    for _ in range(20):  # macros call macros a few levels deep; a cycle would be a bug in sql/
        changed = False

        def replace(node: exp.Expression) -> exp.Expression:
            nonlocal changed
            if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous):
                macro = known.get(node.this.name.lower())
                if macro and macro.is_table:
                    changed = True
                    return _table_call(macro, node)
            name = _call_name(node)
            macro = known.get(name) if name else None
            if macro and not macro.is_table:
                changed = True
                return _scalar_call(macro, _call_args(node))
            return node

        tree = tree.transform(replace)
        if not changed:
            return tree
    raise RuntimeError("macro expansion did not finish: macros calling each other in a cycle?")


def _call_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Func) and not isinstance(node, exp.Anonymous):
        # sqlglot parses some macro names as its own functions; a macro of that name wins, as in DuckDB
        name = node.sql_name().lower()
        return name if name in macros() else None
    return None


def _call_args(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    return [v for v in node.args.values() if isinstance(v, exp.Expression)]


def _scalar_call(macro: Macro, args: list[exp.Expression]) -> exp.Expression:
    if len(args) != len(macro.params):
        raise ValueError(f"macro {macro.name} takes {len(macro.params)} argument(s), got {len(args)}")
    by_param = dict(zip(macro.params, args))
    if macro.body.find(exp.Select):
        # inside the macro's subquery an unqualified column would name the subquery's own column of that
        # name (DuckDB binds a macro's arguments as values; text put in place does not)
        bare = [c.sql("duckdb") for a in args for c in a.find_all(exp.Column) if not c.table]
        if bare:
            raise ValueError(f"macro {macro.name} reads a table: qualify its argument(s) {bare} with their table")
    lambda_vars = {v.name.lower() for lam in macro.body.find_all(exp.Lambda) for v in lam.expressions}

    def put(node: exp.Expression) -> exp.Expression:
        if (isinstance(node, exp.Column) and not node.table and node.name.lower() in by_param
                and node.name.lower() not in lambda_vars):
            return exp.Paren(this=by_param[node.name.lower()].copy())
        return node

    return exp.Paren(this=macro.body.copy().transform(put))


def _table_call(macro: Macro, node: exp.Table) -> exp.Expression:
    """A table macro's query as a subquery: a parameter the body reads as `query_table(<parameter>)`
    takes the name of a table as text, any other parameter a value, put in where the body names it."""
    args = list(node.this.expressions)
    if len(args) != len(macro.params):
        raise ValueError(f"table macro {macro.name} takes {len(macro.params)} argument(s), got {len(args)}")
    read = {inner.this.expressions[0].name.lower() for inner in macro.body.find_all(exp.Table)
            if isinstance(inner.this, exp.Anonymous) and inner.this.name.lower() == "query_table"}
    by_param = dict(zip(macro.params, args))
    if not all(isinstance(by_param[p], exp.Literal) and by_param[p].is_string for p in read):
        raise ValueError(f"table macro {macro.name} takes the name(s) of its table(s) {sorted(read)} as text")
    values = {p: a for p, a in by_param.items() if p not in read}

    def put(inner: exp.Expression) -> exp.Expression:
        if (isinstance(inner, exp.Table) and isinstance(inner.this, exp.Anonymous)
                and inner.this.name.lower() == "query_table"):
            param = inner.this.expressions[0].name.lower()
            alias = inner.args.get("alias")
            return exp.Table(this=exp.to_identifier(by_param[param].this), alias=alias.copy() if alias else None)
        if isinstance(inner, exp.Column) and not inner.table and inner.name.lower() in values:
            return exp.Paren(this=values[inner.name.lower()].copy())
        return inner

    body = macro.body.copy().transform(put)
    alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(f"_{macro.name}"))
    return exp.Subquery(this=body, alias=alias.copy())

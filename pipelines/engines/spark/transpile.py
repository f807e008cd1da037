"""A statement of sql/ (DuckDB's dialect) as Spark SQL: macros expanded (macros.py), then sqlglot's
DuckDB → Spark translation, with the few constructs it does not carry the way the ledger needs handled
by the named transforms below, each once, here. docs/spark.md lists them and why. (About 400 lines, one
module: the transforms run in one order, which split over files would be hard to see.)

Tables keep their names apart from their schema: `intermediate.int_nodes` is the Spark view
`intermediate__int_nodes` (runner.py registers one per table over its Parquet), since temporary views
have no schema. Parameters stay parameters (`$day` → `:day`), bound by `spark.sql(..., args=...)`."""

from __future__ import annotations

import re

from sqlglot import exp

from pipelines.engines.spark.macros import expand_macros

# schemas whose tables are Parquet datasets on Spark
SCHEMAS = ("staging", "intermediate", "marts", "ops", "finance")

# DuckDB strftime/strptime specifiers → Java DateTimeFormatter letters (Spark's patterns)
_FORMAT = {"%Y": "yyyy", "%m": "MM", "%d": "dd", "%H": "HH", "%M": "mm", "%S": "ss", "%f": "SSSSSS"}


def view_name(schema: str, table: str) -> str:
    return f"{schema}__{table}"


def to_spark(tree: exp.Expression) -> str:
    """A parsed DuckDB statement (sqlglot, read="duckdb") as Spark SQL text."""
    tree = expand_macros(tree.copy())
    text = None
    for _ in range(5):  # a replaced node's children are not visited again: repeat until nothing changes
        for transform in TRANSFORMS:
            tree = tree.transform(transform)
        if tree.sql(dialect="spark") == text:
            return text
        text = tree.sql(dialect="spark")
    raise RuntimeError("the Spark transforms did not settle")


def schema_tables(node: exp.Expression) -> exp.Expression:
    """`schema.table` → the view `schema__table`, aliased as the table so `table.column` still reads."""
    if isinstance(node, exp.Table) and node.db in SCHEMAS and isinstance(node.this, exp.Identifier):
        alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.name))
        return exp.Table(this=exp.to_identifier(view_name(node.db, node.name)), alias=alias.copy())
    return node


def hugeint_as_decimal(node: exp.Expression) -> exp.Expression:
    """HUGEINT (money in integer units of 1e-18, weights) → DECIMAL(38, 0), Spark's widest exact integer;
    UBIGINT → DECIMAL(20, 0). Spark has no 128-bit or unsigned integers; ANSI mode makes an overflow an
    error, as in DuckDB."""
    if isinstance(node, exp.DataType):
        if node.this == exp.DataType.Type.INT128:
            return exp.DataType.build("DECIMAL(38, 0)")
        if node.this == exp.DataType.Type.UBIGINT:
            return exp.DataType.build("DECIMAL(20, 0)")
    return node


def _dec(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=exp.Paren(this=e.copy()), to=exp.DataType.build("DECIMAL(38, 0)"))


def _dbl(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=exp.Paren(this=e.copy()), to=exp.DataType.build("DOUBLE"))


def _exact_quotient(multiple: exp.Expression, b: exp.Expression) -> exp.Expression:
    # multiple / b for a multiple of b: its DECIMAL quotient has no fraction to round
    div = exp.Div(this=exp.Paren(this=multiple), expression=b)
    div.set("_spark_double", True)  # not a DOUBLE division: division_is_double leaves it
    return _dec(div)


def integer_division(node: exp.Expression) -> exp.Expression:
    """DuckDB's `a // b` (integer division, toward zero) exactly. Spark's `div` gives a BIGINT (1e-18
    money units overflow it above 9.2 units of money) and its DECIMAL division rounds to a scale its type
    rules choose. But m = a - a % b is a multiple of b with m / b the quotient toward zero (`%` keeps a's
    sign), and a DECIMAL division of a multiple has no fraction to round: only its integer digits are
    bounded (20 for a DECIMAL(38, 0) divisor). So: by a constant of k digits (typed DECIMAL(k, 0): 38 - k/2
    integer digits), m / b; by a column, a DOUBLE estimate q0 of m / b plus the exact (m - q0·b) / b,
    which is within 20 digits while the quotient is below ~1e35. Past that, ANSI mode fails the day."""
    if not isinstance(node, exp.IntDiv):
        return node
    a, divisor = _dec(node.this), node.expression
    if isinstance(divisor, exp.Literal) and not divisor.is_string and divisor.this.isdigit() and int(divisor.this) > 0:
        b = exp.Cast(this=divisor.copy(), to=exp.DataType.build(f"DECIMAL({len(divisor.this)}, 0)"))
    else:
        b = _dec(divisor)
    multiple = exp.Paren(this=exp.Sub(this=a, expression=exp.Mod(this=a.copy(), expression=b.copy())))
    if isinstance(b.this, exp.Literal):
        return _exact_quotient(multiple, b)
    estimate = _dec(exp.Div(this=_dbl(multiple), expression=_dbl(b)))
    residual = exp.Sub(this=multiple.copy(), expression=exp.Mul(this=estimate.copy(), expression=b.copy()))
    return _dec(exp.Add(this=estimate, expression=_exact_quotient(residual, b.copy())))


def division_is_double(node: exp.Expression) -> exp.Expression:
    """DuckDB's `/` is always a DOUBLE division (DECIMAL too); Spark's keeps DECIMAL with its own scale
    rules. Both sides as DOUBLE give DuckDB's value; the SQL casts the result where it wants a DECIMAL."""
    if isinstance(node, exp.Div) and not node.args.get("_spark_double"):
        div = exp.Div(this=_dbl(node.this), expression=_dbl(node.expression))
        div.set("_spark_double", True)
        return div
    return node


def numeric_trunc(node: exp.Expression) -> exp.Expression:
    """trunc(x) of a number: toward zero, at its own type (sqlglot writes a BIGINT cast: too small for money)."""
    if isinstance(node, exp.Trunc) and not node.args.get("decimals"):
        x = node.this
        return exp.Case(ifs=[exp.If(this=exp.LT(this=x.copy(), expression=exp.Literal.number(0)),
                                    true=exp.Ceil(this=x.copy()))], default=exp.Floor(this=x.copy()))
    return node


def epoch_seconds(node: exp.Expression) -> exp.Expression:
    """epoch(ts) is seconds with their fraction (DOUBLE) in DuckDB; sqlglot writes unix_timestamp, whole
    seconds. epoch_us(ts) is unix_micros."""
    if isinstance(node, exp.TimeToUnix) and isinstance(node.this, exp.Sub):
        # epoch(t1 - t0): the seconds of an interval, the difference of the two times' microseconds
        micros = exp.Paren(this=exp.Sub(this=_unix_micros(node.this.this), expression=_unix_micros(node.this.expression)))
        return exp.Paren(this=exp.Div(this=_dbl(micros), expression=exp.Literal.number("1000000.0")))
    if isinstance(node, exp.TimeToUnix):
        micros = _unix_micros(node.this)
        return exp.Paren(this=exp.Div(this=_dbl(micros), expression=exp.Literal.number("1000000.0")))
    if isinstance(node, exp.Anonymous) and node.name.lower() == "epoch_us":
        return _unix_micros(node.expressions[0])
    if isinstance(node, exp.UnixToTime) and node.text("scale") == "3":
        # sqlglot reads epoch_ms(x) as milliseconds → timestamp; the SQL calls it on timestamps only
        # (milliseconds since the epoch)
        return _unix_micros(node.this, "unix_millis")
    return node


def _unix_micros(ts: exp.Expression, function: str = "unix_micros") -> exp.Expression:
    # unix_micros takes a TIMESTAMP_LTZ; the ledger's are NTZ, read in the session's UTC
    ltz = exp.Cast(this=ts.copy(), to=exp.DataType.build("TIMESTAMP_LTZ", dialect="spark"))
    return exp.Anonymous(this=function, expressions=[ltz])


def truncated_time_stays_ntz(node: exp.Expression) -> exp.Expression:
    """date_trunc gives Spark's TIMESTAMP_LTZ whatever it truncates; the ledger's times are NTZ."""
    if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)) and not isinstance(node.parent, exp.Cast):
        ntz = exp.DataType.build("TIMESTAMP_NTZ", dialect="spark")
        return exp.Cast(this=node.copy(), to=ntz)
    return node


_JSON_TYPES = {"VARCHAR": "string", "INTEGER": "int", "BIGINT": "bigint", "DATE": "date",
               "BOOLEAN": "boolean", "DOUBLE": "double", "TIMESTAMP": "timestamp_ntz"}


def _spark_json_schema(structure: object) -> str:
    if isinstance(structure, list):
        (item,) = structure
        return f"array<{_spark_json_schema(item)}>"
    if isinstance(structure, dict):
        return "struct<" + ",".join(f"`{k}`:{_spark_json_schema(v)}" for k, v in structure.items()) + ">"
    return _JSON_TYPES[str(structure).upper()]


def json_records(node: exp.Expression) -> exp.Expression:
    """from_json(x, '<DuckDB JSON structure>') → from_json(x, '<Spark DDL schema>'), the same shape;
    unnest(list of structs, recursive := true) in a select list → inline(list): a row per element, a
    column per field."""
    if isinstance(node, exp.FromJson) and isinstance(node.expression, exp.Literal) and node.expression.is_string:
        import json

        schema = _spark_json_schema(json.loads(node.expression.this))
        return exp.Anonymous(this="from_json", expressions=[node.this.copy(), exp.Literal.string(schema)])
    if isinstance(node, exp.Explode) and any(
            isinstance(e, exp.PropertyEQ) and e.name.lower() == "recursive" for e in node.expressions):
        return exp.Anonymous(this="inline", expressions=[node.this.copy()])
    return node


def series_in_from(node: exp.Expression) -> exp.Expression:
    """`FROM range(n) t(h)` (a table function, end exclusive) → `FROM explode(sequence(0, n - 1)) AS t(h)`;
    sqlglot writes `EXPLODE(…, _u(t))`."""
    if isinstance(node, exp.Table) and isinstance(node.this, exp.GenerateSeries):
        series = node.this
        end = series.args["end"].copy()
        if series.args.get("is_end_exclusive"):
            end = exp.Sub(this=exp.Paren(this=end), expression=exp.Literal.number(1))
        args = [series.args["start"].copy(), end] + ([series.args["step"].copy()] if series.args.get("step") else [])
        generator = exp.Anonymous(this="explode", expressions=[exp.Anonymous(this="sequence", expressions=args)])
        alias = node.args.get("alias")
        return exp.Table(this=generator, alias=alias.copy() if alias else None)
    return node


def month_boundaries(node: exp.Expression) -> exp.Expression:
    """datediff('month', a, b) counts the month boundaries between a and b in DuckDB; Spark's counts
    whole months elapsed: (year·12 + month) of b less a's."""
    if isinstance(node, exp.DateDiff) and node.text("unit").upper() == "MONTH":
        def months(d: exp.Expression) -> exp.Expression:
            return exp.Paren(this=exp.Add(
                this=exp.Mul(this=exp.Anonymous(this="year", expressions=[d.copy()]), expression=exp.Literal.number(12)),
                expression=exp.Anonymous(this="month", expressions=[d.copy()])))
        return exp.Paren(this=exp.Sub(this=months(node.this), expression=months(node.expression)))
    if isinstance(node, exp.DateDiff):
        raise NotImplementedError(f"datediff by {node.text('unit')} on Spark: {node.sql('duckdb')}")
    return node


_PRINTF_SPEC = re.compile(r"%(%|[-#+ 0,(]*\d*(?:\.\d+)?([a-zA-Z]))")


def printf_text(node: exp.Expression) -> exp.Expression:
    """printf('%s', x): Spark formats a DATE's internal day number for %s; DuckDB the date. Each %s
    argument is cast to STRING first (a date as YYYY-MM-DD, text as it is)."""
    if not (isinstance(node, exp.Anonymous) and node.name.lower() in ("printf", "format_string")
            and node.expressions and isinstance(node.expressions[0], exp.Literal) and not node.args.get("_spark_done")):
        return node
    fmt, *args = node.expressions
    kinds = [m.group(2) for m in _PRINTF_SPEC.finditer(fmt.this) if m.group(1) != "%"]
    if len(kinds) != len(args):
        raise ValueError(f"printf format {fmt.this!r} takes {len(kinds)} argument(s), given {len(args)}")
    cast = [exp.Cast(this=a.copy(), to=exp.DataType.build("STRING")) if k == "s" else a.copy()
            for k, a in zip(kinds, args)]
    out = exp.Anonymous(this="format_string", expressions=[fmt.copy(), *cast])
    out.set("_spark_done", True)
    return out


def numbering_without_order(node: exp.Expression) -> exp.Expression:
    """row_number() OVER () numbers rows in no particular order (an id); Spark wants an ORDER BY:
    monotonically_increasing_id(), unique, fixed once the temp table holding it is checkpointed."""
    if (isinstance(node, exp.Window) and isinstance(node.this, exp.RowNumber)
            and not node.args.get("partition_by") and not node.args.get("order")):
        return exp.Anonymous(this="monotonically_increasing_id", expressions=[])
    return node


def _java_format(duckdb_format: str) -> str:
    out, literal, i = [], [], 0

    def flush():
        if literal:
            out.append("'" + "".join(literal).replace("'", "''") + "'")
            literal.clear()

    while i < len(duckdb_format):
        spec = duckdb_format[i:i + 2]
        if spec in _FORMAT:
            flush()
            out.append(_FORMAT[spec])
            i += 2
        elif duckdb_format[i] == "%":
            raise ValueError(f"strftime/strptime format {duckdb_format!r}: {spec} has no Spark pattern here")
        elif duckdb_format[i].isalpha():
            literal.append(duckdb_format[i])
            i += 1
        else:
            flush()
            out.append(duckdb_format[i])
            i += 1
    flush()
    return "".join(out)


def time_formats(node: exp.Expression) -> exp.Expression:
    """strftime/strptime with their format as Spark's pattern, letters quoted ('T', 'Z'): sqlglot turns
    '%Y-%m-%dT%H' into 'yyyy-M-dTH'."""
    if isinstance(node, (exp.StrToTime, exp.TimeToStr)):
        fmt = node.args.get("format")
        if isinstance(fmt, exp.Literal) and fmt.is_string:
            name = "to_timestamp" if isinstance(node, exp.StrToTime) else "date_format"
            return exp.Anonymous(this=name, expressions=[node.this.copy(), exp.Literal.string(_java_format(fmt.this))])
    return node


def list_length(node: exp.Expression) -> exp.Expression:
    """len(list) → size(list): the SQL takes len() of lists only."""
    if isinstance(node, exp.Length):
        return exp.Anonymous(this="size", expressions=[node.this.copy()])
    return node


def list_index(node: exp.Expression) -> exp.Expression:
    """list[i] is NULL past the end in DuckDB, an error in Spark under ANSI: try_element_at (1-based)."""
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
        index = node.expressions[0]
        if isinstance(index, exp.Literal) and not index.is_string:
            return exp.Anonymous(this="try_element_at",
                                 expressions=[node.this.copy(), exp.Literal.number(int(index.this) + 1)])
    return node


def ordered_list(node: exp.Expression) -> exp.Expression:
    """list(x ORDER BY k…) [FILTER (…)] → the values of collect_list(struct(k…, x)) [FILTER (…)] sorted
    (collect_list keeps no order); list(DISTINCT x ORDER BY x) → array_sort(collect_set(x)). A list of no
    rows is NULL in DuckDB, [] from collect_list: NULL it is."""
    where = None
    if isinstance(node, exp.Filter) and isinstance(node.this, exp.ArrayAgg) and isinstance(node.this.this, exp.Order):
        where, agg = node.expression, node.this
    elif isinstance(node, exp.ArrayAgg) and isinstance(node.this, exp.Order) and not isinstance(node.parent, exp.Filter):
        agg = node
    else:
        return node
    order = agg.this
    value, keys = order.this, order.expressions
    if any(k.args.get("desc") for k in keys):
        raise NotImplementedError(f"list(… ORDER BY … DESC) on Spark: {node.sql('duckdb')}")

    def filtered(collect: exp.Expression) -> exp.Expression:
        return exp.Filter(this=collect, expression=where.copy()) if where is not None else collect

    if isinstance(value, exp.Distinct):
        inner = value.expressions[0]
        if len(keys) != 1 or keys[0].this != inner:
            raise NotImplementedError(f"list(DISTINCT x ORDER BY other) on Spark: {node.sql('duckdb')}")
        collected = filtered(exp.Anonymous(this="collect_set", expressions=[inner.copy()]))
        result = exp.Anonymous(this="array_sort", expressions=[collected])
    else:
        fields = []
        for i, k in enumerate(keys):
            fields += [exp.Literal.string(f"k{i}"), k.this.copy()]
        fields += [exp.Literal.string("v"), value.copy()]
        collected = filtered(exp.Anonymous(this="collect_list", expressions=[
            exp.Anonymous(this="named_struct", expressions=fields)]))
        result = exp.Anonymous(this="transform", expressions=[
            exp.Anonymous(this="array_sort", expressions=[collected]),
            exp.Lambda(this=exp.Dot(this=exp.column("s"), expression=exp.to_identifier("v")),
                       expressions=[exp.to_identifier("s")])])
    return exp.Case(ifs=[exp.If(this=exp.GT(this=exp.Anonymous(this="size", expressions=[collected.copy()]),
                                            expression=exp.Literal.number(0)), true=result)])


def list_functions(node: exp.Expression) -> exp.Expression:
    """to_seconds/to_minutes/to_months(n) → make_dt_interval/make_ym_interval; list_slice(l, a, b)
    (1-based, b inclusive) → slice(l, a, b - a + 1); list_sum(l) → aggregate over
    l, NULLs skipped, NULL for an empty list (as DuckDB)."""
    if not isinstance(node, exp.Anonymous):
        return node
    name, args = node.name.lower(), [a.copy() for a in node.expressions]
    if name in ("to_seconds", "to_minutes", "to_months"):
        (n,) = args
        as_int = exp.Cast(this=exp.Paren(this=n), to=exp.DataType.build("INT"))
        if name == "to_months":
            return exp.Anonymous(this="make_ym_interval", expressions=[exp.Literal.number(0), as_int])
        zero = exp.Literal.number(0)
        parts = [zero, zero, as_int, zero] if name == "to_minutes" else [zero, zero, zero.copy(), as_int]
        return exp.Anonymous(this="make_dt_interval", expressions=[p.copy() for p in parts])
    if name == "list_slice":
        lst, start, end = args
        length = exp.Add(this=exp.Sub(this=exp.Paren(this=end), expression=exp.Paren(this=start.copy())),
                         expression=exp.Literal.number(1))
        as_int = lambda e: exp.Cast(this=exp.Paren(this=e), to=exp.DataType.build("INT"))  # noqa: E731
        return exp.Anonymous(this="slice", expressions=[lst, as_int(start), as_int(length)])
    if name == "list_sum":
        (lst,) = args
        add = exp.Lambda(this=exp.Add(this=exp.column("acc"), expression=exp.Coalesce(
            this=exp.column("x"), expressions=[exp.Literal.number(0)])), expressions=[
            exp.to_identifier("acc"), exp.to_identifier("x")])
        total = exp.Anonymous(this="aggregate", expressions=[
            lst, exp.Cast(this=exp.Literal.number(0), to=exp.DataType.build("DECIMAL(38, 0)")), add])
        return exp.Case(ifs=[exp.If(this=exp.GT(this=exp.Anonymous(this="size", expressions=[lst.copy()]),
                                                expression=exp.Literal.number(0)), true=total)])
    return node


def unnest_in_from(node: exp.Expression) -> exp.Expression:
    """`FROM t, unnest(t.list) [WITH ORDINALITY] AS u(value[, n])` → `FROM t, LATERAL explode(t.list) AS
    u(value)`, or with the ordinality (1-based, as DuckDB's) `LATERAL inline(transform(t.list, (x, i) ->
    named_struct('value', x, 'n', i + 1))) AS u`: sqlglot writes a LATERAL VIEW after the joins, where a
    later JOIN's ON cannot see it, and numbers from 0."""
    if not (isinstance(node, exp.Join) and isinstance(node.this, exp.Unnest)):
        return node
    unnest = node.this
    (values,) = unnest.expressions
    alias = unnest.args.get("alias")
    if alias is None or not alias.columns:
        raise NotImplementedError(f"unnest in FROM without column names: {unnest.sql('duckdb')}")
    ordinality = unnest.args.get("offset")
    if not isinstance(ordinality, exp.Identifier):
        generator = exp.Anonymous(this="explode", expressions=[values.copy()])
        new_alias = alias.copy()
    else:
        (value_name,) = [c.name for c in alias.columns]
        struct = exp.Anonymous(this="named_struct", expressions=[
            exp.Literal.string(value_name), exp.column("x"), exp.Literal.string(ordinality.name),
            exp.Add(this=exp.column("i"), expression=exp.Literal.number(1))])
        numbered = exp.Anonymous(this="transform", expressions=[
            values.copy(), exp.Lambda(this=struct, expressions=[exp.to_identifier("x"), exp.to_identifier("i")])])
        generator = exp.Anonymous(this="inline", expressions=[numbered])
        new_alias = exp.TableAlias(this=alias.this.copy())
    join = node.copy()
    join.set("this", exp.Lateral(this=generator, alias=new_alias))
    return join


TRANSFORMS = (
    # statement shapes first (they move expressions into new places), then types and functions
    printf_text, unnest_in_from, series_in_from, month_boundaries, json_records, schema_tables,
    numbering_without_order, truncated_time_stays_ntz, hugeint_as_decimal, integer_division,
    division_is_double, numeric_trunc, epoch_seconds, time_formats, list_length, list_index, ordered_list,
    list_functions,
)

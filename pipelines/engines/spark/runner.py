"""A day of a ledger table on Spark: the same steps as warehouse.write_day (sql/<layer>/<table>.sql, or the
numbered steps of its folder), each statement transpiled (transpile.py) and run by a SparkSession; the
day's rows written as Parquet under `<root>/<schema>/<table>/day=<day>/` with dynamic partition
overwrite, so re-running a day replaces exactly that day.

The DuckDB statements a step holds map to Spark as:
  CREATE [OR REPLACE] TEMP TABLE t AS q   q run and checkpointed, as the temporary view t
  INSERT INTO t q   (t a temp table)      the view t becomes t UNION ALL q, by position as in DuckDB
  DROP TABLE t                            the view dropped
  a step of DELETE/INSERT on ops.* only   handed to `ops` (the warehouse's DuckDB runs it: ops is
                                          DuckDB's bookkeeping), listed in `skipped` without one
  the table's query                       its rows, written as the day's partition
"""

from __future__ import annotations

import json
import os

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import sqlglot
from sqlglot import exp

from pipelines.engines.spark.sql_cache import spark_sql
from pipelines.engines.spark.transpile import SCHEMAS, view_name
from pipelines.lib.atomic import remove_stale_temps, replace_atomically
from pipelines.lib.warehouse import sql, table_sql

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")  # the driver logs errors only

# Money exact: ANSI arithmetic (an overflow fails instead of becoming NULL) and DECIMAL results at the
# scale their operands have (no rounding away of digits to fit 38; docs/spark.md#money).
SESSION_CONF = {
    "spark.sql.ansi.enabled": "true",
    "spark.sql.decimalOperations.allowPrecisionLoss": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.timestampType": "TIMESTAMP_NTZ",  # DuckDB's TIMESTAMP has no time zone
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # to_json of a struct writes its NULL fields, as DuckDB's does (a mart's `details` the same on both)
    "spark.sql.jsonGenerator.ignoreNullFields": "false",
}


def local_session(app: str = "gpuledger", cores: int = 2, shuffle_partitions: int = 2):
    """A local SparkSession on 127.0.0.1 with the ledger's settings, UI off."""
    return session(f"local[{cores}]", app=app, cores=cores, shuffle_partitions=shuffle_partitions)


def session(master: str, app: str = "gpuledger", cores: int = 2, shuffle_partitions: int = 2,
            conf: dict[str, str] | None = None):
    """A SparkSession on `master` (`local[n]`, `spark://host:port` of a standalone cluster, `yarn`,
    `k8s://…`) with the ledger's settings, its driver on 127.0.0.1, UI off; `conf` adds settings
    (`spark.executor.memory`, …) but cannot change the ledger's own (SESSION_CONF)."""
    import tempfile

    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName(app)
               # the ledger names its own Parquet folders; Spark's catalog folder stays out of the cwd
               .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="gpuledger-spark-"))
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
               .config("spark.default.parallelism", str(cores)))
    settings = {**(conf or {}), **SESSION_CONF}
    quiet = f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
    settings["spark.driver.extraJavaOptions"] = f"{quiet} {settings.get('spark.driver.extraJavaOptions', '')}".strip()
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


@dataclass
class SparkLedger:
    """The ledger's tables as Parquet under `root` (`<schema>/<table>/`), read by a SparkSession."""

    spark: object
    root: Path
    # runs a step file that only writes ops.* (name, params); without it such steps are skipped
    ops: Callable[[str, dict[str, object]], None] | None = None
    skipped: list[str] = field(default_factory=list)  # statements not run on Spark, for the caller to see

    def table_path(self, table: str) -> Path:
        return self.root / table

    def register(self, table: str) -> None:
        """(Re)creates the view of `table` ("schema/name") over its Parquet; `day` read as a DATE. A
        view the session already has over the very same files (names, sizes, times) is kept: each step
        registers every table it reads, and making a view lists and opens its files (~0.1 s)."""
        from pyspark.sql import functions as F

        from pyspark.sql.types import StructType

        path = self.table_path(table)
        files = _files_of(path)
        registered = self.spark.__dict__.setdefault("_gpuledger_views", {})  # dies with the session
        if registered.get(str(path)) == files:
            return
        reader = self.spark.read.option("basePath", str(path))
        schema_file = path / "_schema.json"
        if schema_file.exists():  # a day of no rows writes no file to infer the columns from
            reader = reader.schema(StructType.fromJson(json.loads(schema_file.read_text())))
        df = reader.parquet(str(path))
        if "day" in df.columns:
            df = df.withColumn("day", F.col("day").cast("date"))
        schema, name = table.split("/")
        df.createOrReplaceTempView(view_name(schema, name))
        registered[str(path)] = files

    def register_all(self) -> None:
        for schema in SCHEMAS:
            folder = self.root / schema
            if folder.is_dir():
                for table in sorted(p.name for p in folder.iterdir() if p.is_dir()):
                    self.register(f"{schema}/{table}")

    def write_day(self, table: str, params: dict[str, object]) -> int:
        """Runs `table`'s steps for day params["day"] and writes the day's rows; returns their count."""
        steps = table_sql(table)
        for name in steps.prepare:
            self.run_script(name, params)
        # computed once: counted and written from the checkpoint
        df = self.query(sql(steps.query), params).localCheckpoint()
        rows = df.count()
        out = self.table_path(table)
        if rows:
            df.write.mode("overwrite").partitionBy("day").parquet(str(out))
        else:
            # a dynamic overwrite of no rows replaces no partition: the day's earlier rows would stay.
            # An empty file in the day's folder replaces them, and gives readers the columns.
            df.drop("day").coalesce(1).write.mode("overwrite").parquet(str(out / f"day={params['day']}"))
        schema = df.schema.json()  # renamed in: another day's run may be reading it
        remove_stale_temps(out, of="_schema.json")  # a killed run's; never a live day's run's
        replace_atomically(out / "_schema.json", lambda tmp: tmp.write_text(schema))
        self.register(table)
        for name in steps.finish:
            self.run_script(name, params)
        return rows

    def query(self, text: str, params: dict[str, object]):
        (statement,) = [s for s in sqlglot.parse(text, read="duckdb") if s is not None]
        return self._sql(statement, params)

    def run_script(self, name: str, params: dict[str, object]) -> None:
        statements = [s for s in sqlglot.parse(sql(name), read="duckdb") if s is not None]
        if self.ops and statements and all(_writes_ops(s) for s in statements):
            self.ops(name, params)
            return
        for statement in statements:
            self._run_statement(name, statement, params)

    def _run_statement(self, name: str, statement: exp.Expression, params: dict[str, object]) -> None:
        if isinstance(statement, exp.Create) and str(statement.args.get("kind")).upper() == "TABLE":
            target = statement.this.this if isinstance(statement.this, exp.Schema) else statement.this
            if target.db:
                raise NotImplementedError(f"sql/{name}.sql creates {target.sql()}: only temp tables on Spark")
            self._sql(statement.expression, params).localCheckpoint().createOrReplaceTempView(target.name)
        elif isinstance(statement, exp.Insert) and not statement.this.find(exp.Table).db:
            temp = statement.this.find(exp.Table).name
            rows = self._sql(statement.expression, params)
            self.spark.table(temp).union(rows).localCheckpoint().createOrReplaceTempView(temp)
        elif isinstance(statement, exp.Drop):
            self.spark.catalog.dropTempView(statement.find(exp.Table).name)
        elif _writes_ops(statement):
            self.skipped.append(f"sql/{name}.sql: {type(statement).__name__.upper()} on ops.*")
        else:
            raise NotImplementedError(f"sql/{name}.sql: {statement.sql('duckdb')[:80]}… has no Spark form yet")

    def _sql(self, query: exp.Expression, params: dict[str, object]):
        text = spark_sql(query)
        wanted = {p.name for p in query.find_all(exp.Parameter)} | {
            p.name for p in query.find_all(exp.Placeholder) if p.name}
        missing = wanted - params.keys()
        if missing:
            raise KeyError(f"SQL parameter(s) not provided: {sorted(missing)}")
        return self.spark.sql(text, args={k: _spark_value(params[k]) for k in wanted})


def _files_of(folder: Path) -> tuple:
    """Every file under `folder` with its size and modification time, in order: equal means the same
    Parquet (a write, in this process or another, renames new files in)."""
    found = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            st = os.stat(os.path.join(root, name))
            found.append((os.path.join(root, name), st.st_size, st.st_mtime_ns))
    return tuple(found)


def _writes_ops(statement: exp.Expression) -> bool:
    return isinstance(statement, (exp.Insert, exp.Delete)) and statement.this.find(exp.Table).db == "ops"


def _spark_value(value: object):
    """A parameter as Spark binds it: lists as array literals."""
    if isinstance(value, (list, tuple)):
        from pyspark.sql import functions as F

        return F.array(*[F.lit(v) for v in value]) if value else F.array().cast("array<string>")
    return value


def day_params(day: date, config_params: dict[str, object]) -> dict[str, object]:
    return {"day": day, **config_params}


def in_dependency_order(tables: list[str]) -> list[str]:
    """`tables` ordered so each comes after the tables its SQL reads (sql_lineage, as the assets' deps)."""
    from graphlib import TopologicalSorter

    from pipelines.lib.warehouse.sql_lineage import tables_read

    wanted = set(tables)
    graph = {t: {d for d in tables_read(t) if d in wanted} for t in tables}
    return list(TopologicalSorter(graph).static_order())

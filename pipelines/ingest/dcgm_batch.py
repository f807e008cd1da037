"""DCGM telemetry in long Parquet files, staged set-based: a batch of files at a time is read in one
DuckDB pass that applies the landing contract's row checks as SQL and rolls the samples up per
GPU-minute (no sample or scrape is kept, only the minutes), then written in one transaction that
replaces the batch's staging and ops.landed_files rows.

This is the hot path of a daily run (a fleet's day is thousands of node files, millions of samples
each hour), and the path of the Parquet that exporters' dumps and the simulator write. Every other
DCGM file goes through the per-file parser (pipelines/ingest/dcgm.py via `landing.sync`) as before:
CSV (long or wide), Prometheus scrapes, wide Parquet, Parquet whose times or numbers are text, empty
or unreadable files, and any file DuckDB cannot read whole.

Whether a row is bad is the DcgmSample contract's to decide, as SQL compiled from it
(`Contract.sql_failed`), and whether its time is plausible the rule of pipelines/ingest/plausible.py;
this pass only proves, from a file's first and last staged time, that none of its times can be
implausible (sql/staging/stg_dcgm__gpu_minutes/50_batch_files.sql). A file with any row that does not
stage, or whose times are not proven plausible, is handed to the per-file parser whole, which judges
and words every such row: a row gets the same reason, row and payload whichever path its file took,
and is never judged by two definitions. Clean files of a day or a week, nearly all of them, stay on
this path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from models.landing import DCGM_SENTINEL_MIN, DcgmSample
from pipelines.ingest import dcgm
if TYPE_CHECKING:
    import pyarrow as pa

from pipelines.landing.batches import BatchFile, Changed, batches, in_order, write_batch
from pipelines.ingest.common import NULL_TOKENS
from pipelines.landing.parsed import empty_rejects
from pipelines.ingest.plausible import SLACK, earliest_plausible
from pipelines.landing.source import Source, SyncReport
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import run_sql, sql, step

DCGM_TABLE = "staging/stg_dcgm__gpu_minutes"  # its steps: sql/staging/stg_dcgm__gpu_minutes/

# Landing rows per batch (one transaction; ~35 node-days of 8 GPUs). The pass's memory grows with the
# batch (about 0.9 GiB at this size, whatever the fleet); its CPU time does not shrink with larger ones.
BATCH_ROWS = 4_000_000
# What polars' str.strip_chars() strips (Unicode White_Space), so labels trim alike on both paths.
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
               "\u200a\u2028\u2029\u202f\u205f\u3000")
# DuckDB's own columns of a Parquet read; a file with a column of one of these names goes per file.
VIRTUAL = {"file_index", "file_row_number", "filename"}


def sync_batches(con: duckdb.DuckDBPyConnection, source: Source, changed: list[Changed], known: set[str],
                 cfg: OrgConfig, report: SyncReport) -> list[Changed]:
    """Stages every file of `changed` that is long, typed Parquet, a batch at a time; returns the
    others, in their order, for the per-file parser. `known` are the files ops.landed_files has: their
    old rows go."""
    # files read together share their columns' names and types (DuckDB reads a batch as its first file)
    layouts: dict[tuple[tuple[str, ...], tuple[str, ...]], list[BatchFile]] = {}
    rest: list[Changed] = []
    for path, rel, size, sha in changed:
        layout = _layout(path) if size else None  # an empty file is refused as empty, per file
        if layout is None:
            rest.append((path, rel, size, sha))
            continue
        columns, types, rows = layout
        layouts.setdefault((columns, types), []).append(BatchFile(path, rel, size, sha, rows))
    try:
        for (columns, _), files in layouts.items():
            for batch in batches(files, BATCH_ROWS):
                rest += _stage(con, source, columns, batch, known, cfg, report)
    finally:  # the batch's temp tables hold memory until the connection closes
        con.execute("DROP TABLE IF EXISTS dcgm_batch_minutes")
    return in_order(rest, changed)


def _layout(path: Path) -> tuple[tuple[str, ...], tuple[str, ...], int] | None:
    """The SQL that puts a file's columns under our names, their types, and its row count; None unless
    the file is long Parquet with a timestamp column, integer GPUs, numeric values and text (or integer)
    labels."""
    import pyarrow.parquet as pq  # here, not at the top: `inspect` of CSV landings never needs it
    from pyarrow import types as arrow

    try:
        meta = pq.read_metadata(path)
        types = {field.name: field.type for field in meta.schema.to_arrow_schema()}
    except Exception:  # noqa: BLE001 - not Parquet, or damaged: the per-file parser says which
        return None
    if len({name.lower() for name in types}) < len(types) or VIRTUAL & {name.lower() for name in types}:
        return None  # DuckDB matches names without case, and has its own columns by these names
    if not {"metric", "value"} <= types.keys():
        return None  # wide, or not DCGM: the per-file parser handles or refuses it
    present = {ours: next((name for name in names if name in types), None) for ours, names in dcgm.LABELS.items()}
    if any(present[k] is None for k in ("timestamp", "hostname", "gpu")):
        return None
    ts = types[present["timestamp"]]

    def text(t: pa.DataType) -> bool:
        t = t.value_type if arrow.is_dictionary(t) else t
        return arrow.is_string(t) or arrow.is_large_string(t) or arrow.is_string_view(t)

    integer = arrow.is_integer
    if not (arrow.is_timestamp(ts) and integer(types[present["gpu"]]) and text(types["metric"])
            and (integer(types["value"]) or arrow.is_float32(types["value"]) or arrow.is_float64(types["value"]))
            and all(text(types[name]) or integer(types[name]) for name in present.values() if name
                    and name not in (present["timestamp"], present["gpu"]))):
        return None
    column = {ours: _quoted(name) for ours, name in present.items() if name}
    if ts.unit == "ns":  # polars floors nanoseconds to the microsecond; DuckDB's cast would round
        epoch = f"epoch_ns({column['timestamp']})"
        timestamp = f"make_timestamp(({epoch} - (({epoch} % 1000) + 1000) % 1000) // 1000)"
    else:
        timestamp = f"make_timestamp(epoch_us({column['timestamp']}))"
    labels = [f"{column.get(ours, 'NULL')} AS {ours}" for ours in
              ("hostname", "gpu", "gpu_instance", "uuid", "model_name", "hpc_job", "namespace", "pod")]
    columns = ("file_index AS f", "file_row_number + 1 AS _row", f"{timestamp} AS timestamp", *labels,
               '"metric" AS metric', '"value" AS value')
    used = [name for name in present.values() if name] + ["metric", "value"]
    return columns, tuple(f"{name}: {types[name]}" for name in used), meta.num_rows


def _quoted(name: str) -> str:
    """An identifier of dcgm.LABELS (our constants, never a file's text) quoted for SQL."""
    return '"' + name.replace('"', '""') + '"'


def _stage(con: duckdb.DuckDBPyConnection, source: Source, columns: tuple[str, ...], batch: list[BatchFile],
           known: set[str], cfg: OrgConfig, report: SyncReport) -> list[Changed]:
    """One batch read, checked and written; returned are the files of it DuckDB cannot read and those
    with rows that do not stage, for the per-file parser."""
    try:
        counts = _read(con, columns, batch, cfg)
    except duckdb.Error as err:
        if isinstance(err, (duckdb.BinderException, duckdb.ParserException, duckdb.CatalogException)):
            raise  # the SQL's fault, not a file's
        # a file DuckDB cannot read whole (a damaged page, say): find it by halves, and leave it to the
        # per-file parser, which quarantines it as unreadable or reads what it can
        if len(batch) == 1:
            return [batch[0].changed]
        half = len(batch) // 2
        return (_stage(con, source, columns, batch[:half], known, cfg, report)
                + _stage(con, source, columns, batch[half:], known, cfg, report))
    # a file with rows that do not stage, or times not proven plausible, is the per-file parser's,
    # whole; the rest of the batch is written from this read (the rollup takes only the files
    # registered below)
    is_dirty = (pl.col("bad") > 0) | ~pl.col("plausible")
    left = [batch[f].changed for f in counts.filter(is_dirty)["f"].to_list()]
    counts = counts.filter(~is_dirty)
    clean = [batch[f] for f in counts["f"].to_list()]
    if not clean:
        return left
    con.register("dcgm_batch_files", counts.select("f", "file"))
    try:
        write_batch(con, source, clean, known, counts, empty_rejects(), report=report, insert=lambda: run_sql(
            con, step(DCGM_TABLE, "batch_rollup"), {}))
    finally:
        con.unregister("dcgm_batch_files")
    sentinels = int(counts["sentinels"].sum())
    if sentinels:
        report.rows_dropped["unsupported_sentinel"] = report.rows_dropped.get("unsupported_sentinel", 0) + sentinels
    return left


def _read(con: duckdb.DuckDBPyConnection, columns: tuple[str, ...], batch: list[BatchFile], cfg: OrgConfig) -> pl.DataFrame:
    """Reads the batch into its GPU-minutes (temp table dcgm_batch_minutes); returns what each file
    staged, quarantined and dropped and whether its times are surely plausible, one row per file in
    batch order."""
    for name, value in (("dcgm_paths", [str(f.path) for f in batch]), ("dcgm_sentinel_min", DCGM_SENTINEL_MIN),
                        ("dcgm_null_tokens", NULL_TOKENS), ("dcgm_white_space", WHITE_SPACE),
                        ("dcgm_null_token_bytes", max(len(token.encode()) for token in NULL_TOKENS))):
        con.execute(f"SET VARIABLE {name} = $value", {"value": value})  # names are the constants above
    # the contract's checks, compiled from models/ (constants, never input)
    con.execute(f"CREATE OR REPLACE TEMP MACRO dcgm_sample_fails({', '.join(DcgmSample.columns)}) AS "
                f"{DcgmSample.sql_failed()}")
    # the column list is built from dcgm.LABELS' spellings and the fixed expressions of _layout
    con.execute(f"CREATE OR REPLACE TEMP VIEW dcgm_raw AS SELECT {', '.join(columns)} "
                "FROM read_parquet(getvariable('dcgm_paths'), file_row_number = true)")
    run_sql(con, step(DCGM_TABLE, "checked"), {})
    run_sql(con, step(DCGM_TABLE, "minutes"), {})
    files = pl.DataFrame({"f": range(len(batch)), "file": [f.rel for f in batch]},
                         schema={"f": pl.Int64, "file": pl.String})
    counts = con.sql(sql(step(DCGM_TABLE, "batch_files")),
                     params={"floor": earliest_plausible(cfg), "slack_days": SLACK.days}).pl()
    zero = {"staged": 0, "bad": 0, "sentinels": 0}
    # a file without a row has no minute: nothing to stage, nothing to judge
    return files.join(counts.with_columns(pl.col("f").cast(pl.Int64)), on="f", how="left").with_columns(
        [pl.col(c).fill_null(v).cast(pl.Int64) for c, v in zero.items()] + [pl.col("plausible").fill_null(True)])

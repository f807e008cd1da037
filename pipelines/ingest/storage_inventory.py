"""Storage inventories under inventory/storage/ (docs/ingest/storage.md): what a delivery is, and its
objects read set-wise in DuckDB into the rows of staging.stg_storage__objects.

Two formats:

- **S3 Inventory**, as AWS delivers it: a `manifest.json` (`sourceBucket`, `fileFormat` CSV | Parquet |
  ORC, `fileSchema`, `creationTimestamp` in epoch milliseconds, `files: [{key, size, MD5checksum}]`)
  and the data files it names. CSV data files are gzip, without a header, their columns in
  `fileSchema`'s order, keys URL-encoded; Parquet and ORC carry their (lower-case) column names and
  plain keys. A key names a landed file as bill manifests' keys do (pipelines/landing/deliveries.names:
  either path ends with the other at a `/`, the file's path taken below inventory/storage/), else the one
  file under inventory/storage/ with the key's name.
- **POSIX listings**: `inventory/storage/<file system>/<YYYY-MM-DD>.csv` (or `.csv.gz`) with a header
  `path, size_bytes, mtime, tier [, atime]`; the folder names the file system, the name its day.

A bad row (a size that is no non-negative integer, an empty key) is quarantined with its file and row
and not staged; a row whose time does not parse is staged with no time (its bytes still count and
cost) and quarantined too, so the bad value is seen.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path, PurePosixPath

import duckdb

from pipelines.landing.deliveries import names

FOLDER = "inventory/storage"
SOURCE = "storage"
LISTING = re.compile(r"^inventory/storage/(?P<store>[^/]+)/(?P<day>\d{4}-\d{2}-\d{2})\.csv(?:\.gz)?$")
FORMATS = ("CSV", "Parquet", "ORC")
# S3 Inventory's CSV field names (fileSchema) -> the Parquet/ORC column names, which are ours too
FIELDS = {"Bucket": "bucket", "Key": "key", "Size": "size", "LastModifiedDate": "last_modified_date",
          "StorageClass": "storage_class", "IntelligentTieringAccessTier": "intelligent_tiering_access_tier"}
POSIX_COLUMNS = ("path", "size_bytes", "mtime", "tier")


@dataclass
class Delivery:
    """One snapshot of one store: an S3 Inventory manifest with its data files, or a POSIX listing."""

    path: Path                        # the manifest or listing
    rel: str                          # and its path relative to the landing root
    kind: str                         # s3 | posix
    store: str = ""
    snapshot_day: date | None = None
    created: datetime | None = None   # which of a day's deliveries is the newest
    file_format: str = "CSV"
    columns: list[str] = field(default_factory=list)   # CSV data files: their columns, in order
    files: list[tuple[Path, str]] = field(default_factory=list)  # data files (path, rel) in manifest order
    sizes: dict[str, int] = field(default_factory=dict)          # rel -> size the manifest says
    missing: list[str] = field(default_factory=list)             # keys no landed file answers
    problem: str | None = None        # why it cannot be read at all

    @property
    def source(self) -> str:
        return "s3_inventory" if self.kind == "s3" else "posix"


def find_deliveries(root: Path, files: list[tuple[Path, str]]) -> list[Delivery]:
    """Every manifest and listing among `files` (the source's discovered files), data files resolved."""
    found = []
    below = {rel[len(FOLDER) + 1:]: (path, rel) for path, rel in files}
    for path, rel in files:
        if PurePosixPath(rel).name == "manifest.json":
            found.append(read_manifest(path, rel, below))
        elif (m := LISTING.match(rel)) is not None:
            found.append(Delivery(path=path, rel=rel, kind="posix", store=m.group("store"),
                                  snapshot_day=date.fromisoformat(m.group("day")), files=[(path, rel)],
                                  created=datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)))
    return found


def read_manifest(path: Path, rel: str, below: dict[str, tuple[Path, str]]) -> Delivery:
    d = Delivery(path=path, rel=rel, kind="s3")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        d.store = str(doc["sourceBucket"]).strip()
        created_ms = int(str(doc["creationTimestamp"]).strip())
        d.created = datetime.fromtimestamp(created_ms / 1000, timezone.utc)
        d.snapshot_day = d.created.date()
        d.file_format = str(doc.get("fileFormat", "CSV")).strip()
        listed = [(str(f["key"]), int(f.get("size", -1))) for f in doc["files"]]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
        d.problem = f"unreadable S3 Inventory manifest: {type(err).__name__}: {err}"
        return d
    fmt = {f.lower(): f for f in FORMATS}.get(d.file_format.lower())
    if fmt is None or not d.store:
        d.problem = (f"fileFormat {d.file_format!r} is not one of {', '.join(FORMATS)}" if fmt is None
                     else "sourceBucket is empty")
        return d
    d.file_format = fmt
    if fmt == "CSV":
        d.columns = [c.strip() for c in str(doc.get("fileSchema", "")).split(",") if c.strip()]
        if "Key" not in d.columns or "Size" not in d.columns:
            d.problem = f"fileSchema {doc.get('fileSchema')!r} lacks Key or Size"
            return d
    by_name: dict[str, list[str]] = {}
    for key_below in below:
        by_name.setdefault(PurePosixPath(key_below).name, []).append(key_below)
    for key, size in listed:
        hit = next((b for b in below if names(key, b)), None)
        if hit is None:
            same = by_name.get(PurePosixPath(key).name, [])
            hit = same[0] if len(same) == 1 else None
        if hit is None or (size >= 0 and below[hit][0].stat().st_size != size):
            # not landed, or still being copied in (its size is not yet the manifest's)
            d.missing.append(key)
            continue
        d.files.append(below[hit])
        d.sizes[below[hit][1]] = size
    return d


# --- reading ---------------------------------------------------------------------------------------

def read_into(con: duckdb.DuckDBPyConnection, d: Delivery, file: tuple[Path, str],
              table: str = "storage_read") -> None:
    """One of the delivery's files into TEMP table `table` (staging's columns and `reason`, `bad`,
    `payload`): `bad` rows are not staged, rows with a `reason` are quarantined. A file at a time keeps
    memory to one data file's rows (AWS writes a delivery in files of a few million objects)."""
    raw = _raw(con, d, file)
    key = ("url_decode(replace(r_key, '+', '%20'))" if d.kind == "s3" and d.file_format == "CSV" else "r_key")
    # numbered in file order: read_csv has no row number of its own, so a CSV is scanned by one thread
    # (parallel = false; a gzip stream is read in order anyway) and numbered as its rows stream, which
    # holds whatever preserve_insertion_order says; Parquet and ORC have their own row numbers
    # (numbered first, alone: the typing below then runs on every core, not after the one-thread numbering)
    number = "_row" if d.kind == "s3" and d.file_format != "CSV" else "row_number() OVER () AS _row"
    con.execute(f"CREATE OR REPLACE TEMP TABLE storage_raw AS SELECT *, {number} FROM ({raw})")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {table} AS
        WITH numbered AS (
            SELECT * FROM storage_raw
        ), typed AS (
            SELECT _file, _row, $delivery AS delivery, $source AS source, $day::DATE AS snapshot_day,
                   $store AS store, $kind AS store_kind, nullif({key}, '') AS key,
                   -- an integer as written: a cast would round 12.5 to 13
                   -- (Parquet and ORC give typed values, n_*, read as they are)
                   coalesce(n_size, CASE WHEN regexp_full_match(trim(r_size), '-?[0-9]+')
                                         THEN TRY_CAST(trim(r_size) AS BIGINT) END) AS size_bytes,
                   coalesce(n_modified, storage_time(r_modified)) AS last_modified,
                   storage_time(r_accessed) AS last_accessed,
                   coalesce(nullif(trim(r_tier), ''), $default_tier) AS tier,
                   r_key, coalesce(r_size, n_size::VARCHAR) AS r_size, r_modified, r_accessed, r_tier
            FROM numbered
        )
        SELECT * EXCLUDE (r_key, r_size, r_modified, r_accessed, r_tier),
               key IS NULL OR size_bytes IS NULL OR size_bytes < 0 AS bad,
               CASE WHEN key IS NULL THEN 'key is empty'
                    WHEN nullif(trim(r_size), '') IS NULL THEN 'size is empty'
                    WHEN size_bytes IS NULL THEN 'size ''' || r_size || ''' is not an integer'
                    WHEN size_bytes < 0 THEN 'size ' || size_bytes || ' is negative'
                    WHEN last_modified IS NULL AND nullif(trim(r_modified), '') IS NOT NULL
                         THEN 'last modified ''' || r_modified || ''' is not a time: staged without one'
                    WHEN last_accessed IS NULL AND nullif(trim(r_accessed), '') IS NOT NULL
                         THEN 'last accessed ''' || r_accessed || ''' is not a time: staged without one'
               END AS reason,
               CASE WHEN reason IS NOT NULL THEN to_json(struct_pack(key := r_key, size := r_size, last_modified := r_modified,
                                                                  last_accessed := r_accessed, tier := r_tier))::VARCHAR
               END AS payload
        FROM typed
    """, {"delivery": d.rel, "source": d.source, "day": d.snapshot_day, "store": d.store, "kind": d.kind,
          "default_tier": "STANDARD" if d.kind == "s3" else "default"})


def _raw(con: duckdb.DuckDBPyConnection, d: Delivery, file: tuple[Path, str]) -> str:
    """SELECT of a file's raw values: _file, r_key, r_size, r_modified, r_accessed, r_tier as text, and
    n_size, n_modified where the format types them (Parquet, ORC; NULL for text)."""
    con.execute("CREATE OR REPLACE TEMP MACRO storage_time(t) AS coalesce("
                "TRY_CAST(nullif(trim(t), '') AS TIMESTAMP), "
                "make_timestamp(TRY_CAST(TRY_CAST(nullif(trim(t), '') AS DOUBLE) * 1000000 AS BIGINT)))")
    paths = [str(file[0])]
    con.execute("SET VARIABLE storage_paths = $p", {"p": paths})
    con.execute("SET VARIABLE storage_rel = $r", {"r": file[1]})
    rel_of = "getvariable('storage_rel')"
    if d.kind == "posix":
        posix = "read_csv(getvariable('storage_paths'), header = true, all_varchar = true, parallel = false)"
        return (f"SELECT {rel_of} AS _file, path AS r_key, size_bytes AS r_size, mtime AS r_modified, "
                f"{'atime' if 'atime' in _columns(con, posix) else 'NULL::VARCHAR'} AS r_accessed, tier AS r_tier, "
                f"NULL::BIGINT AS n_size, NULL::TIMESTAMP AS n_modified FROM {posix}")
    if d.file_format == "CSV":
        cols = [f"c{i}" for i in range(len(d.columns))]
        spec = "{" + ", ".join(f"'{c}': 'VARCHAR'" for c in cols) + "}"
        at = {name: f"c{i}" for i, name in enumerate(d.columns)}
        pick = lambda name: at.get(name, "NULL::VARCHAR")  # noqa: E731
        return (f"SELECT {rel_of} AS _file, {pick('Key')} AS r_key, {pick('Size')} AS r_size, "
                f"{pick('LastModifiedDate')} AS r_modified, NULL::VARCHAR AS r_accessed, "
                f"{pick('StorageClass')} AS r_tier, NULL::BIGINT AS n_size, NULL::TIMESTAMP AS n_modified "
                f"FROM read_csv(getvariable('storage_paths'), header = false, columns = {spec}, "
                f"quote = '\"', escape = '\"', delim = ',', compression = 'auto', parallel = false)")
    if d.file_format == "Parquet":
        source = "read_parquet(getvariable('storage_paths'), file_row_number = true)"
    else:
        source = _orc(con, d, file)
    have = _columns(con, source)
    col = lambda name: f"{name}::VARCHAR" if name in have else "NULL::VARCHAR"  # noqa: E731
    # typed values kept typed (a round trip through text costs seconds a file); an instant (UTC, as AWS
    # writes TIMESTAMP_MILLIS) is taken at UTC whatever the session's time zone
    size = "TRY_CAST(size AS BIGINT)" if "size" in have else "NULL::BIGINT"
    ts = have.get("last_modified_date", "")
    modified = ("timezone('UTC', last_modified_date::TIMESTAMPTZ)" if "TIME ZONE" in ts or ts.startswith("TIMESTAMPTZ")
                else "TRY_CAST(last_modified_date AS TIMESTAMP)" if ts.startswith(("TIMESTAMP", "DATE"))
                else "NULL::TIMESTAMP")
    text_modified = "NULL::VARCHAR" if modified != "NULL::TIMESTAMP" else col("last_modified_date")
    return (f"SELECT {rel_of} AS _file, {col('key')} AS r_key, NULL::VARCHAR AS r_size, "
            f"{text_modified} AS r_modified, NULL::VARCHAR AS r_accessed, "
            f"{col('storage_class')} AS r_tier, {size} AS n_size, {modified} AS n_modified, "
            f"{'file_row_number + 1' if 'file_row_number' in have else 'NULL'} AS _row "
            f"FROM {source}")


def _columns(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, str]:
    """The lower-case column names of a table expression (a reader over the delivery's files) and their
    DuckDB types."""
    return {name.lower(): str(dtype).upper() for name, dtype, *_ in
            con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}


def _orc(con: duckdb.DuckDBPyConnection, d: Delivery, file: tuple[Path, str]) -> str:
    """DuckDB reads no ORC: pyarrow does, when installed, into a registered Arrow table."""
    try:
        import pyarrow.orc as orc
    except ImportError as err:  # pragma: no cover - pyarrow ships with the project
        raise StorageFormatError(f"{d.rel}: fileFormat ORC needs pyarrow (pyarrow.orc), which is not installed") from err
    import pyarrow as pa

    t = orc.read_table(str(file[0]))
    t = t.select([c for c in t.column_names if c in ("key", "size", "last_modified_date", "storage_class")])
    # the file's own row order, as read_parquet's file_row_number gives it
    con.register("storage_orc", t.append_column("file_row_number", pa.array(range(t.num_rows), pa.int64())))
    return "storage_orc"


class StorageFormatError(RuntimeError):
    """A delivery in a format this machine cannot read."""


def parse(con: duckdb.DuckDBPyConnection, path: Path, rel: str, cfg=None):
    """A file as `gpuledger inspect` counts it, without the warehouse: a manifest or listing with its
    rows and quarantine (read on the caller's DuckDB `con`, inspect's in-memory one), a data file as part
    of its manifest (no rows of its own)."""
    from pipelines.landing.parsed import Parsed, QUARANTINE_SCHEMA, conform, empty_rejects, file_reject

    import polars as pl

    root = Path(str(path)[: -len(rel)]) if str(path).endswith(rel) else path.parent
    is_delivery = PurePosixPath(rel).name == "manifest.json" or LISTING.match(rel) is not None
    if not is_delivery:
        return Parsed(rows=pl.DataFrame())
    base = root / FOLDER
    files = [(p, p.relative_to(root).as_posix()) for p in sorted(base.rglob("*")) if p.is_file()]
    found = find_deliveries(root, [(path, rel)] + [f for f in files if f[1] != rel])
    d = next(x for x in found if x.rel == rel)
    # the delivery rule without a warehouse: of a store's day, only the newest complete delivery (then the
    # first in path order) counts, so a copied manifest is not counted twice
    rivals = [x for x in found if x.problem is None and not x.missing
              and (x.store, x.snapshot_day) == (d.store, d.snapshot_day)]
    if d.problem is None and not d.missing and min(rivals, key=lambda x: (-x.created.timestamp(), x.rel)) is not d:
        return Parsed(rows=pl.DataFrame())
    if d.problem or d.missing:
        reason = d.problem or f"manifest names {len(d.missing)} file(s) not landed: {', '.join(d.missing[:5])}"
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, rel, reason))
    rows, rejects = [], []
    # a cursor of its own: the temp tables, macro and variables read_into makes are no other file's or
    # thread's, and go when it closes
    with con.cursor() as own:
        for file in d.files:
            read_into(own, d, file)
            rows.append(own.sql("SELECT * EXCLUDE (bad, reason, payload) FROM storage_read WHERE NOT bad").pl())
            rejects.append(own.sql(
                "SELECT $s AS source, _file AS file, 'row ' || _row AS row_ref, reason, payload, "
                "snapshot_day AS day FROM storage_read WHERE reason IS NOT NULL", params={"s": SOURCE}).pl())
    return Parsed(rows=pl.concat(rows) if rows else pl.DataFrame(),
                  rejects=conform(pl.concat(rejects), QUARANTINE_SCHEMA) if rejects else empty_rejects())

"""`python -m pipelines.bench_storage --objects N [--format csv|parquet]`: how fast a day of a large S3
Inventory is staged and priced (docs/ingest/storage.md#benchmark).

Writes, in a temporary folder, one bucket's daily S3 Inventory of N objects as AWS delivers it (a
manifest.json and data files of about a million objects each: CSV.gz without a header, or Parquet),
checkpoints of 300 runs with their steps, datasets and logs over three storage classes; then, in a child
process so its peak memory is its own, times against a fresh warehouse:
  staging   the sync of inventory/storage/ (manifest, every data file read set-wise, quarantine);
  objects   intermediate.int_storage_objects of the day: the snapshot, the rules (run, step, kind);
  pricing   intermediate.int_storage_costs: three storage bill lines of the bucket split exactly over
            its objects by bytes, and marts.fct_storage_daily.
Prints each step's seconds, the total, the child's peak resident memory and objects per second; the
target is under a minute and 2 GiB on a 2-core machine. The bill lines stand in for the ledger's
(intermediate.int_bill_line_placements is written directly): the ledger's own steps are `make bench`'s.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path

DAY = date(2026, 11, 2)
BUCKET = "bench-ckpt"
PER_FILE = 1_000_000
RULES = [{"pattern": f"s3://{BUCKET}/runs/{{run_id}}/step_{{step}}/", "kind": "checkpoint"},
         {"pattern": f"s3://{BUCKET}/datasets/", "kind": "dataset", "project": "data"},
         {"pattern": f"s3://{BUCKET}/logs/**.log", "kind": "log", "project": "ops"}]
# the day's storage lines of the bucket: one per storage class (by a storage_class tag) and requests
LINES = [("STANDARD", "1234.567891"), ("STANDARD_IA", "321.000001"), (None, "17.33")]

OBJECTS_SQL = """
SELECT '{bucket}' AS bucket,
       CASE WHEN i % 10 < 8 THEN 'runs/run-' || (i % 300) || '/step_' || ((i // 300) % 5000) || '/shard-' || i || '.pt'
            WHEN i % 10 = 8 THEN 'datasets/web/part-' || i || '.parquet'
            ELSE 'logs/run-' || (i % 300) || '/rank-' || i || '.log' END AS key,
       (i * 7919 % 1000000000)::BIGINT AS size,
       TIMESTAMP '2026-10-01' + to_seconds(i % 2678400) AS last_modified_date,
       CASE WHEN i % 10 < 7 THEN 'STANDARD' WHEN i % 10 < 9 THEN 'STANDARD_IA' ELSE 'GLACIER' END AS storage_class
FROM range({first}, {last}) t(i)
"""


def write_inventory(landing: Path, objects: int, fmt: str) -> dict:
    """The day's inventory under landing/inventory/storage/, written by DuckDB; returns its figures."""
    import duckdb

    began = time.perf_counter()
    created = datetime(DAY.year, DAY.month, DAY.day, 0, 5, tzinfo=timezone.utc)
    stamp = created.strftime("%Y-%m-%dT%H-%MZ")
    base = landing / "inventory" / "storage" / BUCKET / "daily"
    (base / "data").mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    files = []
    for n, first in enumerate(range(0, objects, PER_FILE)):
        name = f"{stamp}-{n:04d}." + ("csv.gz" if fmt == "csv" else "parquet")
        out = base / "data" / name
        query = OBJECTS_SQL.format(bucket=BUCKET, first=first, last=min(objects, first + PER_FILE))
        if fmt == "csv":
            # AWS's CSV: every value quoted, no header, keys URL-encoded (these need no escaping), ISO times
            con.execute(f"COPY (SELECT bucket, key, size, strftime(last_modified_date, '%Y-%m-%dT%H:%M:%S.000Z'), "
                        f"storage_class FROM ({query})) TO '{out}' (HEADER false, FORCE_QUOTE *, COMPRESSION gzip)")
        else:
            con.execute(f"COPY ({query}) TO '{out}' (FORMAT parquet)")
        files.append({"key": f"inventory/{BUCKET}/daily/data/{name}", "size": out.stat().st_size,
                      "MD5checksum": "0" * 32})
    con.close()
    manifest = base / stamp / "manifest.json"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({
        "sourceBucket": BUCKET, "destinationBucket": "arn:aws:s3:::bench-inventory", "version": "2016-11-30",
        "creationTimestamp": str(int(created.timestamp() * 1000)), "fileFormat": "CSV" if fmt == "csv" else "Parquet",
        "fileSchema": "Bucket, Key, Size, LastModifiedDate, StorageClass", "files": files}))
    return {"files": len(files), "bytes": sum(f["size"] for f in files), "seconds": time.perf_counter() - began}


def child(landing: Path, warehouse: Path) -> None:
    """The timed part, in its own process: staging, classification and pricing of the day."""
    from pipelines.ingest.sources import STORAGE
    from pipelines.landing.sync import sync
    from pipelines.lib.config import OrgConfig
    from pipelines.lib.config.storage import rule_macros
    from pipelines.lib.dagster_glue.resources import warehouse_resource
    from pipelines.lib.warehouse import bootstrap, write_day
    from pipelines.lib.warehouse.writer_lock import connect_writer

    settings = warehouse_resource().connection_config  # threads, memory limit, as the daily run's

    def connect(path):
        return connect_writer(path, dict(settings))

    cfg = OrgConfig.model_validate({"storage": {"rules": RULES}})
    params = {"day": DAY, **cfg.sql_params()}
    steps = {}
    # a connection per step, as Dagster gives each asset its own (DuckDB 2.0.0 answered an aggregate over
    # rows the same connection had just inserted with no rows at all: docs/ingest/storage.md#benchmark)
    con = connect(warehouse)
    bootstrap(con)
    began = time.perf_counter()
    report = sync(con, landing, STORAGE, cfg)
    steps["staging"] = time.perf_counter() - began
    _bill_lines(con)
    con.close()
    con = connect(warehouse)
    began = time.perf_counter()
    for statement in rule_macros(cfg.storage):
        con.execute(statement)
    objects = write_day(con, "intermediate/int_storage_objects", params)
    steps["objects"] = time.perf_counter() - began
    con.close()
    con = connect(warehouse)
    began = time.perf_counter()
    write_day(con, "intermediate/int_storage_costs", params)
    con.close()
    con = connect(warehouse)
    groups = write_day(con, "marts/fct_storage_daily", params)
    steps["pricing"] = time.perf_counter() - began
    con.close()
    con = connect(warehouse)
    placed, lines = con.execute("""
        SELECT (SELECT sum(effective_cost) FROM marts.fct_storage_daily WHERE priced_by = 'bill'),
               (SELECT sum(effective_cost) FROM intermediate.int_bill_line_placements)""").fetchall()[0]
    con.close()
    print(json.dumps({"steps": steps, "rows_staged": report.rows_staged, "objects": objects, "groups": groups,
                      "placed": str(placed), "lines": str(lines),
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _bill_lines(con) -> None:
    """The bucket's storage lines of the day, as int_bill_line_placements would give them (untagged: shared)."""
    rows = ", ".join(
        f"(DATE '{DAY}', 'bench#{i}', '{BUCKET}', 'USD', {amount}::DECIMAL(38, 18), {amount}::DECIMAL(38, 18), "
        f"'{json.dumps({'storage_class': tier} if tier else {})}', NULL, NULL, 'shared', 'Storage')"
        for i, (tier, amount) in enumerate(LINES))
    con.execute(f"""CREATE OR REPLACE TABLE intermediate.int_bill_line_placements AS SELECT * FROM (VALUES {rows})
                    t(day, line_key, resource_id, billing_currency, effective_cost, billed_cost, tags, tag_project,
                      tag_team, placement, service_category)""")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=10_000_000)
    parser.add_argument("--format", choices=("csv", "parquet"), default="csv")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--child", nargs=2, metavar=("LANDING", "WAREHOUSE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]))
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="bench_storage_"))
    try:
        landing = tmp / "landing"
        written = write_inventory(landing, args.objects, args.format)
        print(f"inventory: {args.objects:,} objects in {written['files']} {args.format} file(s), "
              f"{written['bytes'] / 2**20:,.0f} MiB, written in {written['seconds']:.1f} s ({tmp})")
        began = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "pipelines.bench_storage", "--child", str(landing),
                              str(tmp / "warehouse.duckdb")], capture_output=True, text=True, check=False)
        wall = time.perf_counter() - began
        if out.returncode:
            print(out.stdout, out.stderr, file=sys.stderr)
            return out.returncode
        result = json.loads(out.stdout.strip().splitlines()[-1])
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"{'step':<10}{'seconds':>10}")
        for name, seconds in result["steps"].items():
            print(f"{name:<10}{seconds:>10.1f}")
        total = sum(result["steps"].values())
        print(f"{'total':<10}{total:>10.1f}   (child process {wall:.1f} s with start-up)")
        print(f"peak RSS {peak:,.0f} MiB; {result['rows_staged']:,} objects staged, {result['objects']:,} classified, "
              f"{result['groups']:,} fct_storage_daily rows; {args.objects / total:,.0f} objects/s")
        print(f"bill lines {result['lines']} = placed {result['placed']}: "
              f"{'conserved' if result['lines'] == result['placed'] else 'NOT CONSERVED'}")
        print(f"target: < 60 s and <= 2048 MiB: {'met' if total < 60 and peak <= 2048 else 'NOT met'} "
              f"(DuckDB threads and memory limit as the daily run's: $GPULEDGER_THREADS, $GPULEDGER_MEMORY_LIMIT)")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

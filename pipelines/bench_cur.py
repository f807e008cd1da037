"""`make bench-cur [ROWS=n]` (or `python -m pipelines.bench_cur --rows N`): how fast and how lean
`gpuledger inspect` reads a large AWS CUR, against the FinOps Foundation's focus-converter.

Builds a legacy CUR of N rows under /tmp by replicating the real sample
(`../shared/data/real/cur/aws_cur_legacy_sample_anonymized.csv`) with the peers' `make_big_cur.py`
when it is there (new line ids, accounts and months per replica, costs copied), else by a plain
replication here. Then runs, back to back and `--repeat` times each, both tools under
`/usr/bin/time -v`:
  converter  `../shared/peers/convert_cur.sh FILE OUT` with CONVERT_SOURCE_COLUMNS=0 (skipped, saying
             so, when the peers are not installed: `../shared/peers/setup.sh`);
  inspect    `gpuledger inspect --landing DIR --json`;
  read floor what inspect cannot do without: start Python, import what inspect imports, and read
             the columns it reads (polars, a chunk at a time), parsing nothing.
Prints wall seconds and peak RSS (medians), both tools' BilledCost/EffectiveCost, the file's own
Σ lineItem/UnblendedCost (Python's decimal, from the text), the ratios, and the machine's load.
Generated files stay under /tmp (`--work`), never in the repository.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from pipelines.lib.warehouse import PROJECT_ROOT

SHARED = PROJECT_ROOT.parent / "shared"
SAMPLE = SHARED / "data" / "real" / "cur" / "aws_cur_legacy_sample_anonymized.csv"
PEERS = SHARED / "peers"
PEER_DIR = Path(os.environ.get("PEER_DIR", "/tmp/gl-peers"))  # where the peers' setup.sh installs
TIME = "/usr/bin/time"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.bench_cur", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each tool, alternated (medians shown)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/gpuledger-bench-cur"))
    parser.add_argument("--sample", type=Path, default=SAMPLE, help="the CUR to replicate")
    parser.add_argument("--read-only", type=Path, metavar="CUR", help=argparse.SUPPRESS)  # the read floor's own run
    args = parser.parse_args(argv)
    if args.read_only:
        return _read_only(args.read_only)
    if not args.sample.is_file():
        print(f"no CUR sample at {args.sample}: pass --sample FILE", file=sys.stderr)
        return 2
    if not Path(TIME).is_file():
        print(f"{TIME} is needed to measure peak memory", file=sys.stderr)
        return 2

    landing = args.work / "landing"
    cur = landing / "bills" / "aws_cur" / f"cur_{args.rows}.csv"
    if not cur.is_file():
        if landing.exists():
            shutil.rmtree(landing)
        cur.parent.mkdir(parents=True)
        _build(args.sample, cur, args.rows)
    print(f"CUR: {cur} ({cur.stat().st_size / 2**20:,.0f} MiB, {args.rows:,} rows)")
    file_total = _unblended_sum(cur)
    print(f"file's own Σ lineItem/UnblendedCost (Python decimal): {file_total}")

    converter = PEER_DIR / "converter" / "bin" / "focus-converter"
    converter_installed = (PEERS / "convert_cur.sh").is_file() and converter.is_file()
    if not converter_installed:
        print(f"focus-converter: skipped (not installed; run {PEERS / 'setup.sh'})")
    runs: dict[str, list[dict]] = {"focus-converter": [], "gpuledger inspect": [], "read floor": []}
    for i in range(args.repeat):
        print(f"load before run {i + 1}: {_load()}")
        if converter_installed:
            runs["focus-converter"].append(_converter(cur, args.work / f"converted_{i}"))
        runs["gpuledger inspect"].append(_inspect(landing))
        runs["read floor"].append(_floor(cur))

    print(f"\n{'':<20}{'wall s':>8}{'peak MiB':>10}{'BilledCost':>22}{'EffectiveCost':>22}")
    medians = {}
    for name, results in runs.items():
        if not results:
            continue
        wall = statistics.median(r["seconds"] for r in results)
        rss = statistics.median(r["peak_mib"] for r in results)
        medians[name] = (wall, rss)
        print(f"{name:<20}{wall:>8.2f}{rss:>10.0f}{results[-1]['billed']:>22}{results[-1]['effective']:>22}")
        if len(results) > 1:
            print(f"{'':<20}runs: " + ", ".join(f"{r['seconds']:.2f} s / {r['peak_mib']:.0f} MiB" for r in results))
    inspect_totals = runs["gpuledger inspect"][-1]
    exact = Decimal(inspect_totals["effective"]) == Decimal(inspect_totals["billed"]) == file_total
    print(f"\ninspect totals equal the file's own decimal sum: {exact}")
    if "focus-converter" in medians:
        (cw, cr), (iw, ir) = medians["focus-converter"], medians["gpuledger inspect"]
        print(f"inspect is {cw / iw:.2f}× faster (wall) and uses {cr / ir:.2f}× less peak memory "
              "than focus-converter")
        print(f"the read floor alone is {cw / medians['read floor'][0]:.2f}× faster than focus-converter")
    print(f"inspect takes {medians['gpuledger inspect'][0] / medians['read floor'][0]:.2f}× the read floor")
    print(f"load after: {_load()}")
    return 0 if exact else 1


def _build(sample: Path, out: Path, rows: int) -> None:
    script = PEERS / "make_big_cur.py"
    if script.is_file():
        subprocess.run([sys.executable, str(script), str(sample), str(out), str(rows)], check=True)
        return
    # without the peers' builder: the sample's rows over and over, each replica's line ids made unique
    with sample.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        records = [r for r in reader if r]
    id_col = header.index("identity/LineItemId")
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for i in range(rows):
            replica, record = divmod(i, len(records))
            row = list(records[record])
            row[id_col] = f"{row[id_col]}-{replica}" if replica else row[id_col]
            writer.writerow(row)


def _unblended_sum(cur: Path) -> Decimal:
    with cur.open(newline="", encoding="utf-8") as fh:
        return sum((Decimal(r["lineItem/UnblendedCost"]) for r in csv.DictReader(fh) if r["lineItem/UnblendedCost"]),
                   Decimal(0))


def _converter(cur: Path, out: Path) -> dict:
    if out.exists():
        shutil.rmtree(out)
    env = {**os.environ, "CONVERT_SOURCE_COLUMNS": "0"}
    proc = subprocess.run([str(PEERS / "convert_cur.sh"), str(cur), str(out)], capture_output=True, text=True, env=env)
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    fields = dict(re.findall(r"(\w+)=(\S+)", last))
    if proc.returncode != 0 or "seconds" not in fields:
        raise SystemExit(f"focus-converter failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    shutil.rmtree(out, ignore_errors=True)
    return {"seconds": float(fields["seconds"]), "peak_mib": float(fields["peak_rss_mb"]),
            "billed": fields["BilledCost"], "effective": fields["EffectiveCost"]}


def _inspect(landing: Path) -> dict:
    gpuledger = Path(sys.executable).parent / "gpuledger"
    proc = subprocess.run([TIME, "-v", str(gpuledger), "inspect", "--landing", str(landing), "--json"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"inspect failed:\n{proc.stderr[-3000:]}")
    report = json.loads(proc.stdout)["aws_cur"]
    return {"seconds": _wall_seconds(proc.stderr), "peak_mib": _peak_mib(proc.stderr),
            "billed": report["billed_cost"], "effective": report["effective_cost"]}


def _floor(cur: Path) -> dict:
    proc = subprocess.run([TIME, "-v", sys.executable, "-m", "pipelines.bench_cur", "--read-only", str(cur)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the read floor failed:\n{proc.stderr[-3000:]}")
    return {"seconds": _wall_seconds(proc.stderr), "peak_mib": _peak_mib(proc.stderr), "billed": "", "effective": ""}


def _read_only(cur: Path) -> int:
    """Inspect's imports and its read of the file, nothing parsed: how fast inspect could be at best."""
    import pipelines.cli.inspect  # noqa: F401 - what inspect imports
    import pipelines.cli.main  # noqa: F401
    from pipelines.ingest import aws_cur
    from pipelines.ingest.chunks import read_ahead, read_chunks

    rows = sum(chunk.frame.height for chunk in
               read_ahead(read_chunks(cur, lambda header: aws_cur.cur_columns(header, descriptive=False))))
    print(rows)
    return 0


def _wall_seconds(time_report: str) -> float:
    clock = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", time_report).group(1)
    seconds = 0.0
    for part in clock.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def _peak_mib(time_report: str) -> float:
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", time_report).group(1)) / 1024


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


if __name__ == "__main__":
    sys.exit(main())

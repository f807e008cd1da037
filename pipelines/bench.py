"""`make bench [SCALE=n]`: how fast the daily run is against the floor of reading the telemetry once.

Simulates one day of 512·SCALE nodes × 8 GPUs (30 s DCGM telemetry), then times, each in its own
process so peak memory is its own:
  floor    one DuckDB query that reads every telemetry column of the day once and rolls it up per
           GPU and minute — no pipeline can do its job faster than this;
  pipeline `gpuledger run` of that day end to end (Dagster, ingestion of every source, checks, the
           ledger, the marts) into a fresh warehouse.
Prints both times, their ratio, peak memory and telemetry samples per second, then every step of the
pipeline run (from the run Dagster recorded in DAGSTER_HOME) in the order it ran: when it started,
how long it took, its share of the run; the time outside any step is Dagster's own (launching the
run, planning, the event log). The figures are also written to data/bench/scale<n>/result.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from pipelines.lib.warehouse import PROJECT_ROOT

DAY = date(2026, 11, 2)

FLOOR_SQL = """
CREATE TABLE rollup AS
SELECT hostname, gpu, hpc_job, date_trunc('minute', timestamp) AS minute_ts,
       count(DISTINCT timestamp) AS samples, min(timestamp) AS first_ts, max(timestamp) AS last_ts,
       any_value(UUID) AS uuid, any_value(modelName) AS model_name,
       min(value) FILTER (metric = 'DCGM_FI_DEV_GPU_UTIL') AS util_min,
       max(value) FILTER (metric = 'DCGM_FI_DEV_GPU_UTIL') AS util_max,
       avg(value) FILTER (metric = 'DCGM_FI_DEV_GPU_UTIL') AS util_avg,
       max(value) FILTER (metric = 'DCGM_FI_PROF_SM_ACTIVE') AS sm_max,
       avg(value) FILTER (metric = 'DCGM_FI_PROF_SM_ACTIVE') AS sm_avg,
       avg(value) FILTER (metric = 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE') AS tensor_avg,
       avg(value) FILTER (metric = 'DCGM_FI_DEV_POWER_USAGE') AS power_avg,
       max(value) FILTER (metric = 'DCGM_FI_DEV_FB_USED') AS fb_max
FROM read_parquet($files)
GROUP BY ALL
"""


def _floor(landing: Path) -> dict:
    import duckdb

    files = sorted(str(p) for p in (landing / "telemetry" / "dcgm" / f"day={DAY}").glob("*.parquet"))
    con = duckdb.connect(config={"threads": 2})
    start = time.perf_counter()
    con.execute(FLOOR_SQL, {"files": files})
    seconds = time.perf_counter() - start
    samples = con.execute("SELECT sum(samples) FROM rollup").fetchall()[0][0]
    return {"seconds": seconds, "samples": int(samples)}


def _pipeline(landing: Path, work: Path) -> dict:
    from pipelines.cli import main

    warehouse = work / "warehouse.duckdb"
    warehouse.unlink(missing_ok=True)
    start = time.perf_counter()
    code = main(["run", "--landing", str(landing), "--config", str(landing.parent / "gpuledger.yaml"),
                 "--warehouse", str(warehouse), "--start", DAY.isoformat()])
    return {"seconds": time.perf_counter() - start, "exit_code": code, "steps": _steps()}


def _steps() -> list[dict]:
    """Every step of the run this process just made, in the order they started (asset checks are
    steps too): its key, its start in seconds from the run's start, and its seconds."""
    import dagster as dg

    from pipelines.lib.dead_runs import PID_TAG

    with dg.DagsterInstance.get() as instance:
        mine = [r for r in instance.get_runs(limit=20) if r.tags.get(PID_TAG) == str(os.getpid())]
        if not mine:
            return []
        stats = instance.get_run_step_stats(mine[0].run_id)
    timed = sorted((s for s in stats if s.end_time and s.start_time), key=lambda s: s.start_time)
    if not timed:
        return []
    t0 = timed[0].start_time
    return [{"step": s.step_key, "start": s.start_time - t0, "seconds": s.end_time - s.start_time} for s in timed]


def _child(kind: str, landing: Path, work: Path) -> None:
    result = _floor(landing) if kind == "floor" else _pipeline(landing, work)
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("BENCH " + json.dumps(result))


def _measure(kind: str, landing: Path, work: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.bench", "--child", kind, "--landing", str(landing), "--work", str(work)],
        capture_output=True, text=True,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("BENCH ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{kind} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("BENCH "):])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m pipelines.bench")
    parser.add_argument("--scale", type=int, default=1, help="512 × SCALE nodes of 8 GPUs")
    parser.add_argument("--child", choices=["floor", "pipeline"], help=argparse.SUPPRESS)
    parser.add_argument("--landing", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.landing, args.work)
        return

    from simulator import simulate

    nodes = 512 * args.scale
    work = PROJECT_ROOT / "data" / "bench" / f"scale{args.scale}"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    start = time.perf_counter()
    simulate(work / "sim", DAY, 1, nodes=nodes, seed=7)
    print(f"simulated 1 day of {nodes} nodes ({nodes * 8:,} GPUs) in {time.perf_counter() - start:.1f} s")
    landing = work / "sim" / "landing"
    floor = _measure("floor", landing, work)
    pipeline = _measure("pipeline", landing, work)
    if pipeline["exit_code"] != 0:
        raise SystemExit("the pipeline run failed; see `gpuledger run` on the same landing zone")
    samples = floor["samples"]
    print(f"\n{'':<10}{'seconds':>10}{'peak MiB':>10}{'samples/s':>14}")
    for name, r in (("floor", floor), ("pipeline", pipeline)):
        print(f"{name:<10}{r['seconds']:>10.1f}{r['peak_rss_mib']:>10.0f}{samples / r['seconds']:>14,.0f}")
    print(f"\ntelemetry samples (GPU × scrape): {samples:,}")
    print(f"pipeline / floor: {pipeline['seconds'] / floor['seconds']:.2f}×")
    _print_steps(pipeline)
    (work / "result.json").write_text(json.dumps({"scale": args.scale, "floor": floor, "pipeline": pipeline}, indent=1))


def _print_steps(pipeline: dict) -> None:
    steps = pipeline.get("steps") or []
    if not steps:
        print("\n(no step times: the run was not found in DAGSTER_HOME)")
        return
    total = pipeline["seconds"]
    in_steps = sum(s["seconds"] for s in steps)
    print(f"\npipeline steps, in the order they ran ({len(steps)} steps, {in_steps:.1f} s in steps):")
    print(f"{'start s':>9}{'seconds':>9}{'share':>7}  step")
    for s in steps:
        print(f"{s['start']:>9.1f}{s['seconds']:>9.1f}{s['seconds'] / total:>7.0%}  {s['step']}")
    # the run's steps run one after another (in-process executor), so the rest is Dagster's own
    print(f"{'':>9}{total - in_steps:>9.1f}{(total - in_steps) / total:>7.0%}  outside any step "
          "(Python and Dagster start-up, run planning, the event log, publishing)")
    slowest = max(steps, key=lambda s: s["seconds"])
    print(f"slowest step: {slowest['step']} {slowest['seconds']:.1f} s ({slowest['seconds'] / total:.0%} of the run)")

if __name__ == "__main__":
    main()

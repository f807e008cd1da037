"""`make bench [SCALE=n] [ENGINE=spark]`: how fast the daily run is against the floor of reading the
telemetry once, and, with ENGINE=spark, on Spark beside DuckDB.

Simulates one day of 512·SCALE nodes × 8 GPUs (30 s DCGM telemetry), then times, each in its own
process so peak memory is its own:
  floor    one DuckDB query that reads every telemetry column of the day once and rolls it up per
           GPU and minute — no pipeline can do its job faster than this;
  pipeline `gpuledger run` of that day end to end (Dagster, ingestion of every source, checks, the
           ledger, the marts) into a fresh warehouse;
  spark    with ENGINE=spark, the same run with `--engine spark` (local[2]): the intermediate tables
           and marts computed by Spark as Parquet; its session's start-up is shown apart.
Peak memory is the resident memory of the process and its children together (Spark's JVM is one).
Prints both times, their ratio, peak memory and telemetry samples per second, then every step of the
pipeline run (from the run Dagster recorded in DAGSTER_HOME) in the order it ran: when it started,
how long it took, its share of the run and the process's peak memory while it ran (resident memory
sampled every 0.2 s); the time outside any step is Dagster's own (launching the run, planning, the
event log). The figures are also written to data/bench/scale<n>/result.json.
`--reuse-landing` keeps the landing zone a previous bench of the same scale simulated (the simulator
is seeded, so it is the same day) and saves the minutes of simulating it again.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
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


def _pipeline(landing: Path, work: Path, engine: str) -> dict:
    from pipelines.cli import main

    warehouse = work / ("warehouse.duckdb" if engine == "duckdb" else f"warehouse_{engine}.duckdb")
    warehouse.unlink(missing_ok=True)
    shutil.rmtree(warehouse.with_name(f"{warehouse.stem}.spark"), ignore_errors=True)
    memory = _MemorySampler()
    memory.start()
    start = time.perf_counter()
    code = main(["run", "--landing", str(landing), "--config", str(landing.parent / "gpuledger.yaml"),
                 "--warehouse", str(warehouse), "--start", DAY.isoformat(), "--engine", engine])
    seconds = time.perf_counter() - start
    memory.stop()
    result = {"seconds": seconds, "exit_code": code, "steps": _steps(memory), "peak_tree_mib": memory.peak_mib()}
    if engine == "spark":
        from pipelines.engines.spark.daily import session_start_seconds

        result["spark_start_seconds"] = sum(session_start_seconds.values())
    return result


class _MemorySampler(threading.Thread):
    """Resident memory of this process and its children (Spark's JVM is one) every 0.2 s, with the
    wall-clock time of each sample, so each step's peak can be read from the samples inside its start
    and end."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, int]] = []
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.2):
            self.samples.append((time.time(), _tree_rss(os.getpid())))

    def stop(self) -> None:
        self._done.set()
        self.join()

    def peak_mib(self, start: float = 0.0, end: float = float("inf")) -> float | None:
        inside = [rss for t, rss in self.samples if start <= t <= end]
        return max(inside) / 2**20 if inside else None


def _tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and its descendants, from /proc (0 for a process gone meanwhile)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as statm:
                total += int(statm.read().split()[1]) * page
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as children:
                    todo.extend(int(c) for c in children.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def _steps(memory: _MemorySampler) -> list[dict]:
    """Every step of the run this process just made, in the order they started (asset checks are
    steps too): its key, its start in seconds from the run's start, its seconds and peak memory."""
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
    return [{"step": s.step_key, "start": s.start_time - t0, "seconds": s.end_time - s.start_time,
             "peak_mib": memory.peak_mib(s.start_time, s.end_time)} for s in timed]


def _child(kind: str, landing: Path, work: Path) -> None:
    result = _floor(landing) if kind == "floor" else _pipeline(landing, work, kind)
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
    parser.add_argument("--reuse-landing", action="store_true",
                        help="keep the landing zone a previous bench of this scale simulated")
    parser.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb",
                        help="spark: run the day on Spark too (local[2]), beside DuckDB")
    parser.add_argument("--child", choices=["floor", "duckdb", "spark"], help=argparse.SUPPRESS)
    parser.add_argument("--landing", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.landing, args.work)
        return

    from simulator import simulate

    nodes = 512 * args.scale
    work = PROJECT_ROOT / "data" / "bench" / f"scale{args.scale}"
    landing = work / "sim" / "landing"
    if args.reuse_landing and (work / "sim" / "truth").is_dir():
        print(f"reusing the landing zone of {nodes} nodes ({nodes * 8:,} GPUs) in {landing}")
    else:
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        start = time.perf_counter()
        simulate(work / "sim", DAY, 1, nodes=nodes, seed=7)
        print(f"simulated 1 day of {nodes} nodes ({nodes * 8:,} GPUs) in {time.perf_counter() - start:.1f} s")
    floor = _measure("floor", landing, work)
    runs = {"duckdb": _measure("duckdb", landing, work)}
    if args.engine == "spark":
        runs["spark"] = _measure("spark", landing, work)
    for name, run in runs.items():
        if run["exit_code"] != 0:
            raise SystemExit(f"the {name} run failed; see `gpuledger run --engine {name}` on the same landing zone")
    samples = floor["samples"]
    print(f"\n{'':<10}{'seconds':>10}{'peak MiB':>10}{'samples/s':>14}")
    print(f"{'floor':<10}{floor['seconds']:>10.1f}{floor['peak_rss_mib']:>10.0f}{samples / floor['seconds']:>14,.0f}")
    for name, r in runs.items():
        peak = r.get("peak_tree_mib") or r["peak_rss_mib"]
        print(f"{name:<10}{r['seconds']:>10.1f}{peak:>10.0f}{samples / r['seconds']:>14,.0f}")
    print(f"\ntelemetry samples (GPU × scrape): {samples:,}")
    print(f"pipeline (duckdb) / floor: {runs['duckdb']['seconds'] / floor['seconds']:.2f}×")
    if "spark" in runs:
        spark, duck = runs["spark"], runs["duckdb"]
        start_up = spark["spark_start_seconds"]
        print(f"spark / duckdb: {spark['seconds'] / duck['seconds']:.2f}× the time, "
              f"{(spark.get('peak_tree_mib') or 0) / (duck.get('peak_tree_mib') or 1):.2f}× the peak memory "
              f"(Python and the JVM together)")
        print(f"Spark session start-up: {start_up:.1f} s; without it {(spark['seconds'] - start_up) / duck['seconds']:.2f}× "
              "DuckDB's time")
    for name, run in runs.items():
        print(f"\n== {name} ==")
        _print_steps(run)
    (work / "result.json").write_text(json.dumps({"scale": args.scale, "floor": floor, **runs}, indent=1))


def _print_steps(pipeline: dict) -> None:
    steps = pipeline.get("steps") or []
    if not steps:
        print("\n(no step times: the run was not found in DAGSTER_HOME)")
        return
    total = pipeline["seconds"]
    in_steps = sum(s["seconds"] for s in steps)
    print(f"\npipeline steps, in the order they ran ({len(steps)} steps, {in_steps:.1f} s in steps):")
    print(f"{'start s':>9}{'seconds':>9}{'share':>7}{'peak MiB':>10}  step")
    for s in steps:
        peak = f"{s['peak_mib']:>10.0f}" if s.get("peak_mib") else f"{'-':>10}"
        print(f"{s['start']:>9.1f}{s['seconds']:>9.1f}{s['seconds'] / total:>7.0%}{peak}  {s['step']}")
    # the run's steps run one after another (in-process executor), so the rest is Dagster's own
    print(f"{'':>9}{total - in_steps:>9.1f}{(total - in_steps) / total:>7.0%}{'':>10}  outside any step "
          "(Python and Dagster start-up, run planning, the event log, publishing)")
    slowest = max(steps, key=lambda s: s["seconds"])
    print(f"slowest step: {slowest['step']} {slowest['seconds']:.1f} s ({slowest['seconds'] / total:.0%} of the run)")
    hungriest = max(steps, key=lambda s: s.get("peak_mib") or 0)
    if hungriest.get("peak_mib"):
        print(f"most memory: {hungriest['step']} {hungriest['peak_mib']:.0f} MiB")

if __name__ == "__main__":
    main()

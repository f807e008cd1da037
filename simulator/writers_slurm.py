"""sacct exports: scheduler/slurm/<cluster>/sacct_<YYYY-MM-DD>.psv, one per cluster-local day.

Each file is what `sacct -a -D -P -S <day 00:00> -E <day+1 00:00> -o <FIELDS>` prints when run at the end of
that local day: every job record whose pending or running time overlaps the day, in its state at export time
(RUNNING with End Unknown, PENDING with Start/End Unknown). The world ends with the simulated window, so the
export of a local day that ends after the window is taken at the window's end, and a cluster whose local days
straddle the window (west) gets one file more than there are UTC days. Times are cluster-local, no offset
(ambiguous during a DST fall-back hour, as in real sacct output).

Each started allocation is followed by its steps .batch (first node only), .extern and .0, which share the
job's Submit/Start/End; pending records have no steps. Records are ordered by Submit, then JobIDRaw, then
requeue instance; a job array's tasks are listed individually (as with --array).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from zoneinfo import ZoneInfo

from .fleet import ACCOUNTS, CLUSTER_BY_NAME, GPU_SPECS, Fleet
from .jobs import Job

FIELDS = ("JobIDRaw", "JobID", "JobName", "User", "Account", "Partition", "State", "ExitCode", "Submit", "Start",
          "End", "AllocTRES", "NodeList", "Comment", "Restarts", "QOS")
STEP_NAMES = {"run": "torchrun", "train": "python", "requeue": "python", "eval": "python", "array": "python",
              "debug": "python", "partial": "python", "hung": "torchrun", "interactive": "bash"}
# job state -> (step state, step exit code) for .batch/.0; .extern always completes
STEP_STATE = {
    "COMPLETED": ("COMPLETED", "0:0"), "FAILED": ("FAILED", "1:0"), "NODE_FAIL": ("CANCELLED", "0:9"),
    "OUT_OF_MEMORY": ("OUT_OF_MEMORY", "0:125"), "TIMEOUT": ("CANCELLED", "0:15"),
    "CANCELLED": ("CANCELLED", "0:15"), "REQUEUED": ("CANCELLED", "0:15"),
}


def hostlist(hosts: list[str]) -> str:
    """Slurm hostlist: east-gpu-[001-003,005]; a single host stays bare."""
    if len(hosts) == 1:
        return hosts[0]
    prefix = hosts[0].rsplit("-", 1)[0] + "-"
    nums = sorted(int(h.rsplit("-", 1)[1]) for h in hosts)
    parts, a = [], nums[0]
    prev = a
    for n in nums[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(f"{a:03d}" if a == prev else f"{a:03d}-{prev:03d}")
        if n is not None:
            a = prev = n
    return f"{prefix}[{','.join(parts)}]"


def tres(job: Job, n_nodes: int, billing: bool = True, specs: Mapping = CLUSTER_BY_NAME) -> str:
    spec = specs[job.cluster]
    short = GPU_SPECS[spec.gpu_model]["short"]
    g = job.gpus_per_node * n_nodes
    cpu = g * spec.cpus_per_gpu
    out = [f"billing={cpu}"] if billing else []
    out += [f"cpu={cpu}", f"gres/gpu={g}", f"gres/gpu:{short}={g}", f"mem={g * spec.mem_gb_per_gpu}G",
            f"node={n_nodes}"]
    return ",".join(out)


def local_days(tz: ZoneInfo, t0: int, t1: int) -> list[tuple[dt.date, int, int]]:
    """Local dates overlapping [t0, t1) with their UTC bounds."""
    d = dt.datetime.fromtimestamp(t0, tz).date()
    last = dt.datetime.fromtimestamp(t1 - 1, tz).date()
    out = []
    while d <= last:
        a = int(dt.datetime(d.year, d.month, d.day, tzinfo=tz).timestamp())
        n = d + dt.timedelta(days=1)
        b = int(dt.datetime(n.year, n.month, n.day, tzinfo=tz).timestamp())
        out.append((d, a, b))
        d = n
    return out


def write_sacct(root: Path, fleet: Fleet, jobs: list[Job], t0: int, t1: int,
                clusters: tuple[str, ...] = ("east", "west"), *, specs: Mapping = CLUSTER_BY_NAME,
                hosts: list[str] | None = None) -> dict:
    """`specs`: cluster name -> its time zone, GPU model, CPUs and memory per GPU (fleet.ClusterSpec, or
    offbill.OffBillCluster for the nodes no bill covers); `hosts`: hostnames by node index (default the
    billed fleet's)."""
    hosts = hosts if hosts is not None else [n.hostname for n in fleet.nodes]
    stats = {"files": 0, "rows": 0, "allocations": 0, "steps": 0, "clusters": {}}
    for cname in clusters:
        tz = ZoneInfo(specs[cname].timezone)

        def fmt(t: int) -> str:
            return dt.datetime.fromtimestamp(t, tz).strftime("%Y-%m-%dT%H:%M:%S")

        cjobs = sorted((j for j in jobs if j.cluster == cname),
                       key=lambda j: (j.submit, int(j.job_id_raw), j.restarts))
        cstats = {"files": 0, "allocations": 0, "steps": 0}
        for day, a, b in local_days(tz, t0, t1):
            x = min(b, t1)
            lines = ["|".join(FIELDS)]
            for j in cjobs:
                gone = j.end if (j.start is not None and j.end is not None) else None
                if j.submit < x and (gone is None or gone > a):
                    rec = _record(j, x, fmt, hosts, specs)
                    lines.extend(rec)
                    cstats["allocations"] += 1
                    cstats["steps"] += len(rec) - 1
            path = root / cname / f"sacct_{day.isoformat()}.psv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            cstats["files"] += 1
        stats["clusters"][cname] = cstats
        stats["files"] += cstats["files"]
        stats["allocations"] += cstats["allocations"]
        stats["steps"] += cstats["steps"]
    stats["rows"] = stats["allocations"] + stats["steps"]
    return stats


def _record(j: Job, x: int, fmt, hosts: list[str], specs: Mapping) -> list[str]:
    account = ACCOUNTS[j.project]
    submit = fmt(j.submit)
    if j.start is None or j.start >= x:
        return ["|".join([j.job_id_raw, j.job_id, j.name, j.user, account, j.partition, "PENDING", "0:0", submit,
                          "Unknown", "Unknown", "", "None assigned", j.comment, str(j.restarts), j.qos])]
    running = j.end is None or j.end > x
    state = "RUNNING" if running else j.state
    exit_code = "0:0" if running else j.exit_code
    end = "Unknown" if running else fmt(j.end)
    start = fmt(j.start)
    nodes = [hosts[n] for n in j.nodes]
    nl = hostlist(nodes)
    out = ["|".join([j.job_id_raw, j.job_id, j.name, j.user, account, j.partition, state, exit_code, submit, start,
                     end, tres(j, len(nodes), specs=specs), nl, j.comment, str(j.restarts), j.qos])]
    if running:
        s_state, s_exit = "RUNNING", "0:0"
    else:
        s_state, s_exit = STEP_STATE[j.state.split(" ")[0]]
    ext_state = "RUNNING" if running else "COMPLETED"
    for step, st, ex, n_nodes, nlist in (
            ("batch", s_state, s_exit, 1, nodes[0]),
            ("extern", ext_state, "0:0", len(nodes), nl),
            ("0", s_state, s_exit, len(nodes), nl)):
        name = {"batch": "batch", "extern": "extern", "0": STEP_NAMES.get(j.kind, "python")}[step]
        out.append("|".join([f"{j.job_id_raw}.{step}", f"{j.job_id}.{step}", name, "", account, "", st, ex, submit,
                             start, end, tres(j, n_nodes, billing=False, specs=specs), nlist, "", "", ""]))
    return out

"""Entry point: simulate a fleet and write its landing zone, config and ground truth.

    out/landing/bills/focus/<export>/<billing period>/<delivery id>/<export>-00001.csv
                                                             /Manifest.json
                                    (per billing account - `gpuledger-focus`, AWS in USD, and `kestrel-focus`,
                                    the GPU cloud of `west` in EUR - two month-to-date deliveries a day, each
                                    superseding the account's earlier ones)
    out/landing/scheduler/slurm/<cluster>/sacct_<local day>.psv
    out/landing/scheduler/kubernetes/<cluster>/pods_<day>.jsonl   (only with kubernetes_cluster=...)
    out/landing/telemetry/dcgm/day=<day>/<hostname>.parquet
    out/landing/runs/<run_id>.jsonl
    out/landing/inventory/nodes.csv
    out/landing/plans/<run_id>.yaml     (the biggest runs' plans)
    out/landing/inventory/storage/...   (daily inventories of the runs' checkpoints, logs and the datasets:
                                        simulator/storage.py; out/truth/storage.csv their cost per run and tier)
    out/gpuledger.yaml
    out/truth/gpu_seconds.csv, out/truth/runs.csv, out/truth/badput.csv (every run GPU-second by badput kind:
    simulator/truth.py), out/truth/costs.csv (what the nodes no bill covers cost,
    per day, cluster, cost source, team and project: simulator/offbill.py) and offbill_gpu_seconds.csv
    (their GPU-seconds per cluster and category), out/truth/incidents.csv (hung jobs and step-time
    regressions an alert is owed for: simulator/incidents.py), out/truth/efficiency.csv (the under-use lens:
    simulator/efficiency.py), out/truth/savings.csv (the GPU-seconds of the savings opportunities it knows
    exactly: simulator/truth.py, simulator/savings.py), out/truth/landing_manifest.json

The simulated world starts empty at `start` 00:00 UTC and stops at the end of the last day: no job ran
before, nothing is submitted or logged after, and exports taken "at the end of a day" that ends later are
taken at the window's end. Deterministic by seed: no wall-clock time, no set iteration, fixed Parquet
settings, and every random stream is seeded from (seed, purpose, index), so results do not depend on the
order things are processed in.

`kubernetes_cluster` (e.g. "west") runs that cluster under Kubernetes instead of Slurm: the same jobs run on
the same GPUs (so ground truth is unchanged), but the cluster's records are pod exports instead of sacct
files, and its jobs' ids in telemetry and trainer events are `namespace/pod` (writers_kubernetes.py has the
mapping). Without it the output is exactly as before.
"""
from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path

import numpy as np

from . import mig
from .efficiency import EfficiencyTruth
from .fleet import GPUS_PER_NODE, PROJECTS, build_fleet
from .jobs import SAMPLE_S
from .manifest import BillTotals
from .offbill import OFF_BILL, OFF_BILL_BY_NAME, CostTruth, costing_of, off_bill_nodes
from .timeline import C_UNALLOC, DAY, NodeIndex, count_categories, count_project_hours, paint_categories, paint_state
from .incidents import incident_rows, write_incidents
from .storage import StorageTruth, checkpoint_bucket_line, snapshot, write_inventories
from .storage import config_yaml as storage_yaml
from .savings import job_savings, node_savings, write_savings
from .truth import BadputTruth, GpuSecondsTruth, runs_truth, write_runs_truth
from .workload import Knobs, WorkloadBuilder
from .writers_dcgm import N_SAMPLES, short_gaps, write_node_day
from .writers_focus import build_day, month_to_date_deliveries, write_delivery
from .writers_kubernetes import assign_pod_ids, write_pods
from .writers_inventory import write_config, write_inventory
from .writers_plans import write_plans
from .writers_runs import write_runs
from .writers_slurm import write_sacct


def simulate(out: Path, start: dt.date, days: int, nodes: int = 16, seed: int = 7, *,
             knobs: Knobs | None = None, kubernetes_cluster: str | None = None) -> dict:
    """Write a simulated landing zone under `out` and return the manifest (also truth/landing_manifest.json)."""
    out = Path(out)
    knobs = knobs or Knobs()
    if days < 1:
        raise ValueError("days must be >= 1")
    if kubernetes_cluster is not None and kubernetes_cluster not in ("east", "west"):
        raise ValueError(f"unknown cluster {kubernetes_cluster!r}")
    t0 = int(dt.datetime(start.year, start.month, start.day, tzinfo=dt.timezone.utc).timestamp())
    t1 = t0 + days * DAY
    fleet = build_fleet(nodes, seed)
    off_bill = off_bill_nodes(seed, len(fleet.nodes))    # costed from the config, beside the billed fleet
    wl = WorkloadBuilder(fleet, t0, t1, seed, knobs).build(off_bill)
    hostnames = [n.hostname for n in (*fleet.nodes, *off_bill)]    # by node index
    landing = out / "landing"

    # bills: the truth is every line of every day, per currency; what lands is each account's month-to-date
    # deliveries
    totals = BillTotals()
    seen_months: set[tuple[int, int]] = set()
    focus_days = []
    storage_truth, storage_stats = StorageTruth(seed), {}
    for di in range(days):
        day = start + dt.timedelta(days=di)
        first_of_month = (day.year, day.month) not in seen_months
        seen_months.add((day.year, day.month))
        fd = build_day(fleet, seed, day, di, days, first_of_month)
        if knobs.mig_node:
            mig.add_bill(fd, seed, day)
        if knobs.storage:   # last, so every other line keeps its x_LineItemId
            at = t0 + di * DAY
            objects = snapshot(wl.runs, seed, t0, at)
            checkpoint_bucket_line(fd, day, objects)
            inventories = write_inventories(landing / "inventory" / "storage", seed, day, at, objects)
            storage_stats = {k: storage_stats.get(k, 0) + v for k, v in inventories.items()}
            storage_truth.add_day(day, fd.rows, objects)
        for r, billed, effective, cps, cpe in fd.rows:
            totals.add(r["BillingCurrency"], effective, billed, cps, cpe)
        focus_days.append(fd)
    deliveries = month_to_date_deliveries(focus_days)
    written = [write_delivery(landing, seed, d) for d in deliveries]
    # per account and billing period, the latest delivery wins
    last_of_period = {(d.account.id, d.period): path for d, path in zip(deliveries, written)}
    current = sorted(p.relative_to(landing).as_posix() for p in last_of_period.values())
    assert sum(len(d.rows) for d, p in zip(deliveries, written) if p in last_of_period.values()) == totals.rows
    del focus_days

    kube = None
    pod_overrides: dict[int, dict[int, str]] = {}    # node index -> job key -> its pod there (ranks > 0)
    if kubernetes_cluster is None:
        slurm = write_sacct(landing / "scheduler" / "slurm", fleet, wl.jobs, t0, t1)
    else:
        pods = assign_pod_ids(wl.jobs, kubernetes_cluster)    # renames the cluster's jobs to rank-0 pods
        slurm = write_sacct(landing / "scheduler" / "slurm", fleet, wl.jobs, t0, t1,
                            clusters=tuple(c for c in ("east", "west") if c != kubernetes_cluster))
        kube = write_pods(landing / "scheduler" / "kubernetes", fleet, wl.jobs, pods, kubernetes_cluster, t0, t1)
        for j in wl.jobs:
            if j.key in pods and j.start is not None:
                for rank, n in enumerate(j.nodes[1:], start=1):
                    pod_overrides.setdefault(n, {})[j.key] = pods[j.key][1][rank]
    ob = write_sacct(landing / "scheduler" / "slurm", fleet, wl.off_bill_jobs, t0, t1,
                     clusters=tuple(c.name for c in OFF_BILL), specs=OFF_BILL_BY_NAME, hosts=hostnames)
    slurm.update(files=slurm["files"] + ob["files"], rows=slurm["rows"] + ob["rows"],
                 allocations=slurm["allocations"] + ob["allocations"], steps=slurm["steps"] + ob["steps"],
                 clusters={**slurm["clusters"], **ob["clusters"]})
    mig_jobs = mig.build_jobs(seed, t0, t1) if knobs.mig_node else []
    if knobs.mig_node:
        n = mig.write_sacct(landing / "scheduler" / "slurm" / mig.CLUSTER / "sacct_mig.psv", mig_jobs)
        slurm.update(files=slurm["files"] + 1, rows=slurm["rows"] + n, allocations=slurm["allocations"] + n)
    runs_stats = write_runs(landing / "runs", wl.runs, t1)
    plans_stats = write_plans(landing / "plans", wl.runs)
    inventory = write_inventory(landing / "inventory" / "nodes.csv", fleet, off_bill,
                                extra=[mig.inventory_row(seed)] if knobs.mig_node else [])
    months = sorted({f"{start + dt.timedelta(days=di):%Y-%m}" for di in range(days)})
    write_config(out / "gpuledger.yaml", fleet, kubernetes_cluster, months,
                 extra=storage_yaml(seed) if knobs.storage else "")
    storage_rows = storage_truth.write(out / "truth" / "storage.csv") if knobs.storage else 0

    # telemetry and GPU-second truth, one node-day at a time
    all_jobs = [*wl.jobs, *wl.off_bill_jobs]
    max_key = max(j.key for j in all_jobs) + 1
    job_ids = [""] * max_key
    project_of_key = np.zeros(max_key, dtype=np.int32)
    mfu = np.zeros(max_key)
    fb = np.zeros(max_key)
    pidx = {p: i for i, p in enumerate(PROJECTS)}
    for j in all_jobs:
        job_ids[j.key] = j.job_id
        project_of_key[j.key] = pidx[j.project]
        mfu[j.key] = j.mfu
        fb[j.key] = j.fb_mib
    badput = BadputTruth(wl.runs)
    index = NodeIndex(wl.jobs, len(fleet.nodes))
    truth = GpuSecondsTruth(fleet, off_bill)
    efficiency = EfficiencyTruth(project_of_key)
    dcgm = {"files": 0, "rows": 0, "samples": 0}
    idle_unallocated: Counter[int] = Counter()    # node index -> its GPU-seconds no job held (savings.py)
    for node in fleet.nodes:
        outages = wl.outages.get(node.index, [])
        node_job_ids = job_ids
        if node.index in pod_overrides:     # a multi-node job's telemetry on this node names its pod here
            node_job_ids = list(job_ids)
            for key, pid in pod_overrides[node.index].items():
                node_job_ids[key] = pid
        for di in range(days):
            day0 = t0 + di * DAY
            day = start + dt.timedelta(days=di)
            jobs = index.jobs(node.index, day0, day0 + DAY, t1)
            kind, holder = paint_state(jobs, day0)
            cat = paint_categories(jobs, holder, day0, t1, outages)
            badput.add(day, day0, jobs, cat, holder)
            counts = count_categories(cat, holder, project_of_key, len(PROJECTS))
            truth.add(day, node.index, counts)
            idle_unallocated[node.index] += int(counts[len(PROJECTS), C_UNALLOC])
            present = np.ones(N_SAMPLES, dtype=bool)
            for a, b in outages:
                ia = max(0, -(-(a - day0) // SAMPLE_S))
                ib = min(N_SAMPLES, -(-(b - day0) // SAMPLE_S))
                if ib > ia:
                    present[ia:ib] = False
            ks, hs = kind[:, ::SAMPLE_S], holder[:, ::SAMPLE_S]
            rng = np.random.default_rng([seed, 606, node.index, di])
            present = short_gaps(ks, hs, present, knobs.short_gaps_per_node_day, rng)
            path = landing / "telemetry" / "dcgm" / f"day={day.isoformat()}" / f"{node.hostname}.parquet"
            sm: list = []
            rows, samples = write_node_day(path, node, day0, ks, hs, present, node_job_ids, mfu, fb, rng, sm_out=sm)
            efficiency.add(day, cat, kind, holder, *sm[0])
            del cat
            dcgm["files"] += 1
            dcgm["rows"] += rows
            dcgm["samples"] += samples
    for di in range(days) if knobs.mig_node else ():
        day0, day = t0 + di * DAY, start + dt.timedelta(days=di)
        rows, samples = mig.write_day(landing / "telemetry" / "dcgm" / f"day={day.isoformat()}" / f"{mig.HOST}.parquet",
                                      seed, mig_jobs, day0)
        mig.add_truth(truth, day, day0, mig_jobs)
        dcgm.update(files=dcgm["files"] + 1, rows=dcgm["rows"] + rows, samples=dcgm["samples"] + samples)
    # the nodes no bill covers: their jobs painted like the billed fleet's (no outages or dropped scrapes:
    # the owned nodes' energy counter is written for complete days), their power kept for the energy truth
    costs = CostTruth()
    ob_index = NodeIndex(wl.off_bill_jobs, len(hostnames))
    for node in off_bill:
        # the owned nodes' GPUs export the energy counter too (it prices their power); it runs on across days
        energy_mj = (np.arange(1, 9, dtype=np.float64) * 1e10) if costing_of(node) == "owned" else None
        for di in range(days):
            day0 = t0 + di * DAY
            day = start + dt.timedelta(days=di)
            jobs = ob_index.jobs(node.index, day0, day0 + DAY, t1)
            kind, holder = paint_state(jobs, day0)
            cat = paint_categories(jobs, holder, day0, t1, [])
            counts = count_categories(cat, holder, project_of_key, len(PROJECTS))
            truth.add(day, node.index, counts)
            idle_unallocated[node.index] += int(counts[len(PROJECTS), C_UNALLOC])
            hour_counts = count_project_hours(holder, project_of_key, len(PROJECTS))
            rng = np.random.default_rng([seed, 707, node.index, di])
            path = landing / "telemetry" / "dcgm" / f"day={day.isoformat()}" / f"{node.hostname}.parquet"
            power: list = []
            sm = []
            rows, samples = write_node_day(path, node, day0, kind[:, ::SAMPLE_S], holder[:, ::SAMPLE_S],
                                           np.ones(N_SAMPLES, dtype=bool), job_ids, mfu, fb, rng, power,
                                           energy_from_mj=energy_mj, sm_out=sm)
            efficiency.add(day, cat, kind, holder, *sm[0])
            del cat
            costs.add_node_day(node, day, counts, hour_counts, power[0][1], power[0][0], SAMPLE_S)
            dcgm["files"] += 1
            dcgm["rows"] += rows
            dcgm["samples"] += samples
    n_billed = len(fleet.nodes) + (1 if knobs.mig_node else 0)
    hosts = n_billed + len(off_bill)
    dcgm.update({"hosts": hosts, "gpus": hosts * 8, "metrics": 5, "sample_interval_s": SAMPLE_S})

    gpu_rows = truth.write(out / "truth" / "gpu_seconds.csv")
    efficiency_rows = efficiency.write(out / "truth" / "efficiency.csv")
    cost_rows = costs.write(out / "truth" / "costs.csv")
    run_rows = runs_truth(wl.runs, t0, t1)
    write_runs_truth(out / "truth" / "runs.csv", run_rows)
    badput_rows = badput.write(out / "truth" / "badput.csv")
    incidents = incident_rows(all_jobs, mig_jobs, wl.slowdowns, hostnames, t1, mig.CLUSTER, mig.HOST)
    write_incidents(out / "truth" / "incidents.csv", incidents)
    # the nodes paid by the hour with no commitment: the billed fleet's shared pools (on-demand instance
    # hours) and the rented nodes on a rate card; every one is billed every second of the window
    on_demand = [n for n in fleet.nodes if not n.owner_team] + [n for n in off_bill if costing_of(n) == "rate_card"]
    savings_rows = job_savings(all_jobs, t1) + node_savings(
        on_demand, idle_unallocated, {n.index: GPUS_PER_NODE * DAY * days for n in on_demand})
    savings_n = write_savings(out / "truth" / "savings.csv", savings_rows)

    manifest = {
        "simulator": {"start": start.isoformat(), "days": days, "nodes": nodes, "seed": seed,
                      "window_utc": [_iso(t0), _iso(t1)]},
        "focus": {"files": len(written), "deliveries": len(deliveries), "current_files": current,
                  "exports": _exports(deliveries, written, current, landing), **totals.as_dict()},
        "slurm": slurm,
        **({} if kube is None else {"kubernetes": kube}),
        "dcgm": dcgm,
        "runs": runs_stats,
        "plans": plans_stats,
        "inventory": inventory,
        **({"storage": storage_stats} if knobs.storage else {}),
        "truth": {"gpu_seconds_rows": gpu_rows, "runs_rows": len(run_rows), "cost_rows": cost_rows,
                  "efficiency_rows": efficiency_rows,
                  "incidents_rows": len(incidents),
                  "savings_rows": savings_n,
                  "badput_rows": badput_rows,
                  "storage_rows": storage_rows,
                  "billed_gpu_seconds_per_day": n_billed * 8 * DAY,
                  "config_costed_gpu_seconds_per_day": len(off_bill) * 8 * DAY},
        "off_bill": {"nodes": len(off_bill), "hostnames": " ".join(n.hostname for n in off_bill),
                     "jobs": len(wl.off_bill_jobs),
                     "job_states": _states(wl.off_bill_jobs),
                     "hung_jobs": sum(1 for j in wl.off_bill_jobs if j.kind == "hung")},
        "features": {**_features(wl, fleet), **({"mig": _mig_features(mig_jobs)} if knobs.mig_node else {})},
    }
    path = out / "truth" / "landing_manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _exports(deliveries, written, current: list[str], landing: Path) -> dict:
    """Per billing account's export: who bills, in what currency, its deliveries and its current files."""
    out = {}
    for d, path in zip(deliveries, written):
        acct = d.account
        e = out.setdefault(acct.export, {"billing_account_id": acct.id, "billing_account_name": acct.name,
                                         "provider": acct.provider, "currency": acct.currency,
                                         "deliveries": 0, "current_files": []})
        e["deliveries"] += 1
        rel = path.relative_to(landing).as_posix()
        if rel in current:
            e["current_files"].append(rel)
    for e in out.values():
        e["current_files"].sort()
    return out


def _mig_features(jobs) -> dict:
    return {"hostname": mig.HOST, "jobs": len(jobs), "instances": sum(len(v) for v in mig.LAYOUT.values()),
            "idle_stretches": sum(1 for j in jobs if j.idle), "failed": sum(1 for j in jobs if j.failed),
            "teams": sorted({mig.PROJECT_TEAM[j.project] for j in jobs})}


def _iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _states(jobs) -> dict:
    states: dict[str, int] = {}
    for j in jobs:
        s = j.state.split(" ")[0]
        states[s] = states.get(s, 0) + 1
    return dict(sorted(states.items()))


def _features(wl, fleet) -> dict:
    """What this simulation contains, so tests and readers need not re-derive it."""
    return {
        "jobs": len(wl.jobs),
        "job_states": _states(wl.jobs),
        "runs": len(wl.runs),
        "interruptions": sum(len(r.lost_windows) for r in wl.runs),
        "hung_jobs": sum(1 for j in wl.jobs if j.kind == "hung"),
        "rare_checkpoint_runs": sorted(r.run_id for r in wl.runs if r.rare_checkpoints),
        "array_tasks": sum(1 for j in wl.jobs if j.array is not None),
        "requeued": sum(1 for j in wl.jobs if j.state == "REQUEUED"),
        "outages": [{"hostname": fleet.nodes[n].hostname, "start": _iso(a), "end": _iso(b)}
                    for n, ivs in wl.outages.items() for a, b in ivs],
        "drained": None if wl.drain is None else {"hostname": fleet.nodes[wl.drain[0]].hostname,
                                                  "start": _iso(wl.drain[1]), "end": _iso(wl.drain[2])},
    }

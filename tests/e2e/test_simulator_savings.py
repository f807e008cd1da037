"""The demo's fleet (`make demo`: 16 nodes, 7 days from 2026-10-29, seed 7) holds every savings scenario the
ledger prices, from the simulator's own state (its workload, not its files; the pipeline never runs here):
an idle rented node, hung batch jobs, idle notebooks, an oversized job and a run checkpointing too rarely."""
from __future__ import annotations

import datetime as dt
import math
from collections import Counter

import pytest

from simulator import Knobs
from simulator.fleet import GPUS_PER_NODE, build_fleet
from simulator.offbill import costing_of, off_bill_nodes
from simulator.runs import RARE_CKPT_S
from simulator.savings import job_savings, node_savings
from simulator.workload import WorkloadBuilder

START, DAYS, NODES, SEED = dt.date(2026, 10, 29), 7, 16, 7


@pytest.fixture(scope="module")
def demo():
    t0 = int(dt.datetime(START.year, START.month, START.day, tzinfo=dt.timezone.utc).timestamp())
    t1 = t0 + DAYS * 86400
    fleet = build_fleet(NODES, SEED)
    off = off_bill_nodes(SEED, len(fleet.nodes))
    wl = WorkloadBuilder(fleet, t0, t1, SEED, Knobs()).build(off)
    return fleet, off, wl, t1


def test_jobs_to_cancel_sessions_to_stop_and_gpus_to_give_back(demo):
    _, _, wl, t1 = demo
    kinds = Counter(r[0] for r in job_savings([*wl.jobs, *wl.off_bill_jobs], t1))
    assert kinds["cancel_hung_jobs"] >= 2 and kinds["idle_session_timeout"] >= 5 and kinds["right_size"] >= 5, kinds


def test_an_idle_rented_node(demo):
    fleet, off, wl, t1 = demo
    held: dict[int, int] = {}
    for j in [*wl.jobs, *wl.off_bill_jobs]:
        if j.start is not None:
            for n in j.nodes:
                held[n] = held.get(n, 0) + (j.alloc_end(t1) - j.start) * len(j.gpus)
    billed = GPUS_PER_NODE * 86400 * DAYS
    on_demand = [n for n in fleet.nodes if not n.owner_team] + [n for n in off if costing_of(n) == "rate_card"]
    idle = {n.index: billed - held.get(n.index, 0) for n in on_demand}
    rows = node_savings(on_demand, idle, {n.index: billed for n in on_demand})
    assert rows, {n.hostname: round(idle[n.index] / billed, 3) for n in on_demand}


def test_a_run_checkpointing_too_rarely(demo):
    """Its mean interval between saves is far above the Young–Daly optimum sqrt(2 × save × MTBF), with
    MTBF its held wall time over its interruptions (what fct_run_overhead_daily measures); the other runs
    save every 30–60 minutes."""
    _, _, wl, t1 = demo
    rare = [r for r in wl.runs if r.rare_checkpoints]
    assert len(rare) == 1 and RARE_CKPT_S[0] <= rare[0].ckpt_interval <= RARE_CKPT_S[1]
    run = rare[0]
    assert run.logs_badput and run.lost_windows
    saves = [(e.ts, e.event, e.job.key) for e in run.events if e.event in ("checkpoint_started", "checkpoint_saved")]
    lengths = [b - a for (a, ea, ja), (b, eb, jb) in zip(saves, saves[1:])
               if ea == "checkpoint_started" and eb == "checkpoint_saved" and ja == jb]
    saved = [(ts, job) for ts, ev, job in saves if ev == "checkpoint_saved"]
    intervals = [b - a for (a, ja), (b, jb) in zip(saved, saved[1:]) if ja == jb]
    wall = sum(j.alloc_end(t1) - j.start for j in run.jobs)
    young_daly = math.sqrt(2 * (sum(lengths) / len(lengths)) * wall / len(run.lost_windows))
    assert sum(intervals) / len(intervals) > 2 * young_daly
    assert all(r.ckpt_interval <= 3600 for r in wl.runs if r is not run)

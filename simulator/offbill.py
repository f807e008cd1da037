"""The simulated fleet's nodes that no bill covers, costed from the config instead
(docs/ledger.md#cost-sources):

- `onprem`: owned H100 nodes, no bill lines — depreciated straight line and paying a facility fee per
  node-month, their energy priced from their DCGM power (PUE, price per kWh);
- `gpucloud`: H100 nodes rented from a GPU cloud on a per-GPU-hour rate card that includes power.

They stand beside the billed fleet (fleet.Fleet), never in it, so every billed figure of a simulation is
as before. They run jobs like a billed cluster's non-run nodes (workload.py draws them after the billed
fleet's, from streams of their own: the single-node job stream plus a hung and a failed job per cluster),
written as sacct (scheduler/slurm/<cluster>/, UTC) and DCGM telemetry; the GPU-seconds no job holds are
`idle_unallocated`, to the pool's owning team. Their truth per category (truth/offbill_gpu_seconds.csv,
and in truth/gpu_seconds.csv with every node) and what they cost per source, team and project
(truth/costs.csv) come from the jobs' own phases, the prices below and the power the simulator wrote,
never from the pipeline.
"""
from __future__ import annotations

import csv
import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np

from .fleet import GPUS_PER_NODE, PROJECT_TEAM, PROJECTS, Node, uuid_like
from .timeline import CATEGORIES

H100 = "NVIDIA H100 80GB HBM3"


@dataclass(frozen=True)
class OffBillCluster:
    name: str
    pool: str
    team: str
    nodes: int
    costing: str            # "owned" or "rate_card"
    projects: tuple[str, ...]   # whose jobs run there (workload.py); the first's is the hung job
    job_id_base: int
    # what writers_slurm.py reads of a cluster (as of fleet.ClusterSpec)
    timezone: str = "UTC"
    gpu_model: str = "NVIDIA H100 80GB HBM3"
    cpus_per_gpu: int = 8
    mem_gb_per_gpu: int = 100


OFF_BILL = (
    OffBillCluster("onprem", "onprem-train", "pretrain", 2, "owned",
                   ("llm-7b", "llm-70b", "sft", "rlhf", "eval-harness"), 300000),
    OffBillCluster("gpucloud", "gpucloud-rented", "research", 2, "rate_card",
                   ("moe-exp", "long-context", "distill", "eval-harness"), 400000),
)
OFF_BILL_BY_NAME = {c.name: c for c in OFF_BILL}
# the config's `costs:` figures (writers_inventory.config_yaml writes them)
PURCHASE_PRICE = Decimal("300000")
PURCHASE_DATE = dt.date(2025, 12, 1)
DEPRECIATION_MONTHS = 36
FACILITY_PER_NODE_MONTH = Decimal("1500")
RATE_PER_GPU_HOUR = Decimal("2.10")
PRICE_PER_KWH = Decimal("0.12")
PUE = Decimal("1.3")
KG_CO2E_PER_KWH = 0.4


def off_bill_nodes(seed: int, first_index: int) -> list[Node]:
    out = []
    for c in OFF_BILL:
        for i in range(1, c.nodes + 1):
            host = f"{c.name}-gpu-{i:03d}"
            out.append(Node(index=first_index + len(out), cluster=c.name, number=i, hostname=host, pool=c.pool,
                            owner_team=c.team, resource_id="",
                            gpu_model=H100,
                            uuids=tuple("GPU-" + uuid_like(seed, "gpu", host, g) for g in range(GPUS_PER_NODE))))
    return out


def costing_of(node: Node) -> str:
    return next(c.costing for c in OFF_BILL if c.name == node.cluster)


def _months_between(a: dt.date, b: dt.date) -> int:
    return (b.year - a.year) * 12 + b.month - a.month


class CostTruth:
    """The off-bill nodes' truth, from the simulator's own state: their GPU-seconds per day, cluster, team,
    project and category (as painted by timeline.py), and what they cost per day, cluster, cost source,
    team and project (USD), exactly from the prices above — each hour's cost goes to the GPU-seconds held
    in it (a job's to its project and team, the idle rest to the pool's owning team, project
    `_unallocated`); energy from the power the simulator wrote (each GPU's mean over an hour's samples,
    for the hour)."""

    def __init__(self) -> None:
        self.cost: dict[tuple[str, str, str, str, str], Decimal] = defaultdict(Decimal)
        self.gpu_seconds: dict[tuple[str, str, str, str, str], int] = defaultdict(int)
        self.kwh: dict[str, float] = defaultdict(float)

    def add_node_day(self, node: Node, day: dt.date, counts: np.ndarray, hour_counts: np.ndarray,
                     power_w: np.ndarray, t_idx: np.ndarray, sample_s: int) -> None:
        """`counts`: (projects + 1, categories) GPU-seconds of the day, the last row no job's
        (timeline.count_categories); `hour_counts`: (projects + 1, 24) GPU-seconds per hour
        (timeline.count_project_hours); `power_w`: (samples, GPUs) as written, at sample indices `t_idx`."""
        d = day.isoformat()
        who = [(PROJECT_TEAM[p], p) for p in PROJECTS] + [(node.owner_team or "_unallocated", "_unallocated")]
        for pi, (team, project) in enumerate(who):
            for ci, category in enumerate(CATEGORIES):
                if counts[pi, ci]:
                    self.gpu_seconds[(d, node.cluster, team, project, category)] += int(counts[pi, ci])
        node_hour = Decimal(GPUS_PER_NODE * 3600)       # a node-hour's GPU-seconds, every hour of the day
        share = [[Decimal(int(x)) / node_hour for x in row] for row in hour_counts]
        if costing_of(node) == "rate_card":
            sources = {"rate_card": [RATE_PER_GPU_HOUR * GPUS_PER_NODE] * 24}
        else:
            # straight line over 36 calendar months from the 1st, each month's amount over its hours alike;
            # the facility fee likewise
            life_month = _months_between(PURCHASE_DATE, day)
            first = dt.date(day.year, day.month, 1)
            month_hours = 24 * (dt.date(day.year + day.month // 12, day.month % 12 + 1, 1) - first).days
            month = FACILITY_PER_NODE_MONTH
            if 0 <= life_month < DEPRECIATION_MONTHS:
                month += PURCHASE_PRICE / DEPRECIATION_MONTHS
            sources = {"amortization": [month / month_hours] * 24}
        hours = (t_idx * sample_s) // 3600
        gpu_kwh = [0.0] * 24
        for h in np.unique(hours):
            gpu_kwh[int(h)] = float(power_w[hours == h].mean(axis=0).sum()) * 3600 / 3.6e6
        self.kwh[d] += sum(gpu_kwh) * float(PUE)
        if costing_of(node) == "owned":
            sources["energy"] = [Decimal(repr(k)) * PUE * PRICE_PER_KWH for k in gpu_kwh]
        for source, per_hour in sources.items():
            for pi, (team, project) in enumerate(who):
                cost = sum((c * s for c, s in zip(per_hour, share[pi])), Decimal(0))
                if cost:
                    self.cost[(d, node.cluster, source, team, project)] += cost

    def write(self, path: Path) -> int:
        """truth/costs.csv, and beside it offbill_gpu_seconds.csv and energy.csv. Returns costs.csv's rows."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["day", "cluster", "cost_source", "billing_currency", "team", "project", "cost"])
            w.writerows([d, c, s, "USD", t, p, format(cost.quantize(Decimal("1e-9")), "f")]
                        for (d, c, s, t, p), cost in sorted(self.cost.items()))
        with path.with_name("offbill_gpu_seconds.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["day", "cluster", "team", "project", "category", "gpu_seconds"])
            w.writerows([*k, v] for k, v in sorted(self.gpu_seconds.items()))
        with path.with_name("energy.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["day", "kwh"])     # the off-bill nodes' facility energy: GPU kWh × PUE
            w.writerows([d, round(k, 6)] for d, k in sorted(self.kwh.items()))
        return len(self.cost)


def costs_yaml() -> str:
    """The config's `costs:` section for the off-bill clusters."""
    owned = next(c for c in OFF_BILL if c.costing == "owned")
    rented = next(c for c in OFF_BILL if c.costing == "rate_card")
    return f"""\
costs:                       # the fleet no bill covers (docs/config.md#costs)
  rate_cards:                # the GPU cloud's reserved price per GPU-hour, power included
    - {{pool: {rented.pool}, price_per_gpu_hour: "{RATE_PER_GPU_HOUR}", currency: USD, valid_from: 2026-01-01}}
  owned:                     # owned nodes: straight-line depreciation, facility fee per node-month
    - {{cluster: {owned.name}, purchase_price: "{PURCHASE_PRICE}", purchase_date: {PURCHASE_DATE.isoformat()},
       depreciation_months: {DEPRECIATION_MONTHS}, residual: "0", facility_per_node_month: "{FACILITY_PER_NODE_MONTH}",
       currency: USD}}
  energy: {{price_per_kwh: "{PRICE_PER_KWH}", pue: {PUE}, kg_co2e_per_kwh: {KG_CO2E_PER_KWH}, currency: USD}}
"""


"""The simulated fleet's nodes that no bill covers, costed from the config instead
(docs/ledger.md#cost-sources):

- `onprem`: owned H100 nodes, no bill lines — depreciated straight line and paying a facility fee per
  node-month, their energy priced from their DCGM power (PUE, price per kWh);
- `gpucloud`: H100 nodes rented from a GPU cloud on a per-GPU-hour rate card that includes power.

They stand beside the billed fleet (fleet.Fleet), never in it, so every billed figure of a simulation is
as before. They run no jobs in the simulation: every GPU-second is `idle_unallocated`, to the pool's
owning team. What they cost is truth too (truth/costs.csv), from the prices below and the power the
simulator wrote, never from the pipeline.
"""
from __future__ import annotations

import csv
import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np

from .fleet import GPUS_PER_NODE, Node, uuid_like

H100 = "NVIDIA H100 80GB HBM3"


@dataclass(frozen=True)
class OffBillCluster:
    name: str
    pool: str
    team: str
    nodes: int
    costing: str            # "owned" or "rate_card"


OFF_BILL = (
    OffBillCluster("onprem", "onprem-train", "pretrain", 2, "owned"),
    OffBillCluster("gpucloud", "gpucloud-rented", "research", 2, "rate_card"),
)
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
    """What the off-bill nodes cost per day, source and currency (USD), exactly from the prices above;
    energy from the power the simulator wrote (each GPU's mean over an hour's samples, for the hour)."""

    def __init__(self) -> None:
        self.cost: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
        self.kwh: dict[str, float] = defaultdict(float)

    def add_node_day(self, node: Node, day: dt.date, power_w: np.ndarray, t_idx: np.ndarray, sample_s: int) -> None:
        """`power_w`: (samples, GPUs) as written, at sample indices `t_idx` of the day."""
        d = day.isoformat()
        if costing_of(node) == "rate_card":
            self.cost[(d, "rate_card")] += RATE_PER_GPU_HOUR * GPUS_PER_NODE * 24
        else:
            # straight line over 36 calendar months from the 1st: a month's share per day of it
            life_month = _months_between(PURCHASE_DATE, day)
            first = dt.date(day.year, day.month, 1)
            days_in_month = (dt.date(day.year + day.month // 12, day.month % 12 + 1, 1) - first).days
            if 0 <= life_month < DEPRECIATION_MONTHS:
                self.cost[(d, "amortization")] += PURCHASE_PRICE / DEPRECIATION_MONTHS / days_in_month
            self.cost[(d, "amortization")] += FACILITY_PER_NODE_MONTH / days_in_month
        hours = (t_idx * sample_s) // 3600
        gpu_kwh = 0.0
        for h in np.unique(hours):
            gpu_kwh += float(power_w[hours == h].mean(axis=0).sum()) * 3600 / 3.6e6
        self.kwh[d] += gpu_kwh * float(PUE)
        if costing_of(node) == "owned":
            self.cost[(d, "energy")] += Decimal(repr(gpu_kwh)) * PUE * PRICE_PER_KWH

    def write(self, path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["day", "cost_source", "billing_currency", "cost"])
            rows = 0
            for (d, source), cost in sorted(self.cost.items()):
                w.writerow([d, source, "USD", format(cost.quantize(Decimal("1e-9")), "f")])
                rows += 1
        with path.with_name("energy.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["day", "kwh"])     # the off-bill nodes' facility energy: GPU kWh × PUE
            w.writerows([d, round(k, 6)] for d, k in sorted(self.kwh.items()))
        return rows


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


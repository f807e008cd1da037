"""inventory/nodes.csv and the organisation config out/gpuledger.yaml."""
from __future__ import annotations

import csv
from pathlib import Path

from .fleet import ACCOUNTS, BILLING_ACCOUNTS, CLUSTERS, GPUS_PER_NODE, SIMULATED_USD_RATE, TEAMS, Fleet, Node
from .offbill import costs_yaml

INVENTORY_FIELDS = ("hostname", "cluster", "resource_id", "gpu_model", "gpu_count", "pool", "team")


def write_inventory(path: Path, fleet: Fleet, off_bill: list[Node] = (), extra: list[list] = ()) -> dict:
    """The billed fleet's nodes, then those costed from the config (offbill.py), which have no resource id,
    then `extra` rows (the MIG node's, simulator/mig.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    nodes = [*fleet.nodes, *off_bill]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(INVENTORY_FIELDS)
        for n in nodes:
            w.writerow([n.hostname, n.cluster, n.resource_id, n.gpu_model, GPUS_PER_NODE, n.pool, n.owner_team])
        w.writerows(extra)
    return {"files": 1, "rows": len(nodes) + len(extra)}


def config_yaml(fleet: Fleet, kubernetes_cluster: str | None = None, months: list[str] | tuple = ()) -> str:
    """The config for the fleet; `months` (YYYY-MM) are those the simulation covers, each gets an exchange rate
    to USD for every billing currency but USD."""
    teams = "\n".join(f"  {t}: {{projects: [{', '.join(ps)}]}}" for t, ps in TEAMS.items())
    accounts = "\n".join(f"  {a}: {p}" for p, a in ACCOUNTS.items())
    clusters = "\n".join(
        f"  {c.name}: {{timezone: {c.timezone}}}"
        for c in CLUSTERS)
    kube = "" if kubernetes_cluster is None else (
        "kubernetes:                  # pods' project is their `project` label; namespaces (team-<team>) are\n"
        "  project_labels: [project]  # per team, not per project, so no `namespaces:` mapping is needed\n")
    pools = "\n".join(f"  {p}: {t}" for p, t in fleet.pools.items())
    foreign = sorted({a.currency for a in BILLING_ACCOUNTS} - {"USD"})
    rates = "".join(f'\n    - {{currency: {c}, month: "{m}", rate: "{SIMULATED_USD_RATE[c]}", source: simulated}}'
                    for c in foreign for m in months) or " []"
    return f"""\
# gpuledger organisation config for the simulated demo fleet (written by the simulator).
# Every key is optional: without this file the pipeline falls back to Slurm accounts and bill tags.

teams:                       # team -> its projects; a project belongs to exactly one team
{teams}
slurm_accounts:              # Slurm account (sacct Account) -> project
{accounts}
tag_keys:                    # canonical key -> accepted spellings on bill lines (FOCUS Tags JSON keys)
  project: [project, Project, user:project]
  team: [team, Team, user:team]
  node: [node, hostname, Hostname]
  cluster: [cluster]
clusters:                    # cluster -> time zone of its sacct times (IANA name)
{clusters}
{kube}pools:                       # node pool -> owning team (idle of reserved pools is charged to it);
                             # pools not listed here (the *-shared pools) have no owner: their idle is _unallocated
{pools}
shared_cost_rule: gpu_cost   # untagged shared lines split in proportion to GPU cost that day
idle: {{min_stretch_minutes: 10, sm_active_threshold: 0.05}}   # allocated_idle: GPU_UTIL = 0 or SM_ACTIVE below
                             # the threshold for at least min_stretch_minutes in a row within one job
mfu_target: 0.40             # target MFU for mfu_adjusted_cost_per_mtok and mfu_gap_cost
attention_flops: palm        # attention term of flops_per_token: palm = 12·L·H·Q·T, causal = 6·L·H·Q·T
ledger: {{freshness_checks: false}}   # the demo's days are past: no "published by 09:00" check in the UI
quarantine: {{max_share: 0.05}}    # data check: quarantined lines may hold at most this share of a day's cost
budgets:                     # monthly budgets per project, in the budget's currency (default USD): the
  llm-70b: "60000"           # project_month budget_threshold alerts at 30/50/80/100 % of each month
  distill: "11000"
  long-context: {{amount: "25000", currency: EUR}}
fx:                          # west's GPU cloud bills in EUR: the finance views add *_reporting columns in USD
  reporting_currency: USD    # at these rates (USD per unit of the currency, per month; a fixed simulated rate)
  rates:{rates}
{costs_yaml()}"""


def write_config(path: Path, fleet: Fleet, kubernetes_cluster: str | None = None,
                 months: list[str] | tuple = (), extra: str = "") -> None:
    """`extra`: sections appended as they are (the storage: section, simulator/storage.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config_yaml(fleet, kubernetes_cluster, months) + extra, encoding="utf-8")

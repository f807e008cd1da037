"""The names the published ledger has — projects (and the teams charged for them), node pools, clusters —
for checking what a person typed elsewhere: a run plan's project (`gpuledger plan`), the org config's
`budgets:`, `pools:` and `clusters:` (`gpuledger config check --warehouse`). A name that matches nothing
is said with "did you mean" (pipelines/lib/names.py `unknown_name`).

A config entry whose name matches nothing does nothing, silently: a budget that never alerts, a pool whose
idle GPUs are charged to nobody, a time zone never applied. Each is a warning, not an error: a budget or
a pool may be set up before the ledger has seen its first GPU-hour.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from pipelines.lib.config import OrgConfig
from pipelines.lib.names import unknown_name


@dataclass(frozen=True)
class LedgerNames:
    """What a published warehouse names. Names the ledger makes itself (`_unallocated`) are left out."""

    warehouse: Path
    # project -> the teams the ledger charged it to, the latest first (marts.dim_projects)
    projects: dict[str, tuple[str, ...]] = field(default_factory=dict)
    pools: frozenset[str] = frozenset()      # marts.dim_nodes
    clusters: frozenset[str] = frozenset()   # marts.dim_nodes and marts.fct_job_cost


def _names(con: duckdb.DuckDBPyConnection, query: str) -> list[tuple]:
    try:
        return con.execute(query).fetchall()
    except duckdb.CatalogException:  # a warehouse of an older version, or one never run: nothing to check against
        return []


def _own(name: str | None) -> bool:
    """A name the ledger makes itself (`_unallocated`), or none: not one a person would type."""
    return name is None or name.startswith("_")


def read_ledger_names(warehouse: Path | None) -> LedgerNames | None:
    """The names of the published warehouse at `warehouse`, or None when there is none."""
    if warehouse is None or not warehouse.exists():
        return None
    with duckdb.connect(str(warehouse), read_only=True) as con:
        projects = _names(con, "SELECT project, list(team ORDER BY last_day DESC, days DESC, team) FROM ("
                               "  SELECT project, team, max(day) AS last_day, count(DISTINCT day) AS days "
                               "  FROM marts.dim_projects GROUP BY ALL) GROUP BY project")
        pools = _names(con, "SELECT DISTINCT pool FROM marts.dim_nodes")
        clusters = _names(con, "SELECT cluster FROM marts.dim_nodes UNION SELECT cluster FROM marts.fct_job_cost")
    return LedgerNames(
        warehouse,
        {p: tuple(t for t in teams if not _own(t)) for p, teams in projects if not _own(p)},
        frozenset(p for (p,) in pools if not _own(p)),
        frozenset(c for (c,) in clusters if not _own(c)))


def config_projects(cfg: OrgConfig) -> set[str]:
    """The projects the org config names as such: its teams' projects and its Slurm accounts' projects."""
    return {p for spec in cfg.teams.values() for p in spec.projects} | set(cfg.slurm_accounts.values())


def config_name_warnings(cfg: OrgConfig, ledger: LedgerNames) -> list[tuple[tuple[str, str], str]]:
    """((section, name), sentence) per `budgets:`, `pools:` and `clusters:` entry naming what the ledger
    does not have (a budget's project may also be one the config's teams or Slurm accounts name: a project
    not begun)."""
    where = f"the ledger ({ledger.warehouse})"
    declared = config_projects(cfg)
    out = [(("budgets", p), unknown_name("project", p, sorted(ledger.projects), where))
           for p in cfg.budgets if p not in ledger.projects and p not in declared]
    out += [(("pools", p), unknown_name("pool", p, sorted(ledger.pools), where)) for p in cfg.pools
            if p not in ledger.pools]
    out += [(("clusters", c), unknown_name("cluster", c, sorted(ledger.clusters), where)) for c in cfg.clusters
            if c not in ledger.clusters]
    return out

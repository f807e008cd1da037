"""The organisation config: one YAML file mapping teams, projects, accounts, tags and clusters.

Every key is optional. Without a file the pipeline still runs on a landing zone alone (DESIGN §2):
project = Slurm account or a bill line's `project` tag, team = the project, clusters in UTC.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

DEFAULT_TAG_KEYS: dict[str, list[str]] = {
    "project": ["project", "Project", "user:project"],
    "team": ["team", "Team", "user:team"],
    "node": ["node", "hostname", "Hostname"],
    "cluster": ["cluster", "Cluster"],
    "pool": ["pool", "Pool"],
}


DEFAULT_KUBERNETES_PROJECT_LABELS: list[str] = ["project", "gpuledger.dev/project"]


@dataclass(frozen=True)
class ClusterConfig:
    scheduler: str = "slurm"
    timezone: str = "UTC"
    # sacct exports without a header line (e.g. `sacct -p --noheader --delimiter=X -o ...`) need both.
    delimiter: str | None = None
    columns: tuple[str, ...] | None = None


@dataclass(frozen=True)
class OrgConfig:
    teams: dict[str, list[str]] = field(default_factory=dict)
    slurm_accounts: dict[str, str] = field(default_factory=dict)
    tag_keys: dict[str, list[str]] = field(default_factory=lambda: dict(DEFAULT_TAG_KEYS))
    clusters: dict[str, ClusterConfig] = field(default_factory=dict)
    pools: dict[str, str] = field(default_factory=dict)
    shared_cost_rule: str = "gpu_cost"
    idle_min_stretch_minutes: int = 10
    idle_sm_active_threshold: float = 0.05
    mfu_target: float = 0.40
    attention_flops: str = "palm"
    gpu_cost_share: dict[str, float] = field(default_factory=lambda: {"default": 1.0})
    quarantine_max_share: float = 0.05
    scrape_interval_seconds: int = 30  # DCGM scrape interval; gaps over 3 of them are `unmonitored`
    budgets: dict[str, Decimal] = field(default_factory=dict)  # project -> monthly budget, bill currency
    # Kubernetes pods: namespace -> project, and the pod labels naming a project (first present wins)
    kubernetes_namespaces: dict[str, str] = field(default_factory=dict)
    kubernetes_project_labels: list[str] = field(default_factory=lambda: list(DEFAULT_KUBERNETES_PROJECT_LABELS))
    # the currency of bill files that carry no BillingCurrency (ISO 4217)
    default_currency: str = "USD"
    source: str | None = None  # the file this came from, None for built-in defaults

    def cluster(self, name: str) -> ClusterConfig:
        return self.clusters.get(name, ClusterConfig())

    def team_of_project(self, project: str) -> str | None:
        for team, projects in self.teams.items():
            if project in projects:
                return team
        return None

    def sql_params(self) -> dict[str, object]:
        """The config as bound SQL parameters: lists for tag spellings, JSON objects for mappings
        (read with the config_lookup macro), numbers for thresholds."""
        return {
            **{f"{key}_keys": list(keys) for key, keys in self.tag_keys.items()},
            "project_teams": json.dumps({p: t for t, ps in self.teams.items() for p in ps}),
            "account_projects": json.dumps(self.slurm_accounts),
            "pool_teams": json.dumps(self.pools),
            "idle_min_minutes": self.idle_min_stretch_minutes,
            "idle_sm_threshold": self.idle_sm_active_threshold,
            "scrape_seconds": self.scrape_interval_seconds,
            "mfu_target": self.mfu_target,
            "attention_flops": self.attention_flops,
            "shared_cost_rule": self.shared_cost_rule,
        }


def load_config(path: str | Path | None) -> OrgConfig:
    """Reads the YAML file at `path`; None or an empty path gives the built-in defaults."""
    if not path:
        return OrgConfig()
    path = Path(path)
    try:
        raw: dict[str, Any] = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise SystemExit(f"config file {path} does not exist: pass --config with an existing file or none")
    except yaml.YAMLError as err:
        raise SystemExit(f"config file {path} is not valid YAML: {err}")
    if not isinstance(raw, dict):
        raise SystemExit(f"config file {path} must hold a mapping at its top level")

    tag_keys = dict(DEFAULT_TAG_KEYS)
    tag_keys.update({k: list(v) for k, v in (raw.get("tag_keys") or {}).items()})
    clusters = {}
    for name, c in (raw.get("clusters") or {}).items():
        c = c or {}
        cols = c.get("columns")
        clusters[str(name)] = ClusterConfig(
            scheduler=c.get("scheduler", "slurm"),
            timezone=c.get("timezone", "UTC"),
            delimiter=c.get("delimiter"),
            columns=tuple(cols) if cols else None,
        )
    idle = raw.get("idle") or {}
    kubernetes = raw.get("kubernetes") or {}
    quarantine = raw.get("quarantine") or {}
    return OrgConfig(
        teams={str(t): list((v or {}).get("projects", [])) for t, v in (raw.get("teams") or {}).items()},
        slurm_accounts={str(k): str(v) for k, v in (raw.get("slurm_accounts") or {}).items()},
        tag_keys=tag_keys,
        clusters=clusters,
        pools={str(k): str(v) for k, v in (raw.get("pools") or {}).items()},
        shared_cost_rule=raw.get("shared_cost_rule", "gpu_cost"),
        idle_min_stretch_minutes=int(idle.get("min_stretch_minutes", 10)),
        idle_sm_active_threshold=float(idle.get("sm_active_threshold", 0.05)),
        mfu_target=float(raw.get("mfu_target", 0.40)),
        attention_flops=raw.get("attention_flops", "palm"),
        gpu_cost_share={str(k): float(v) for k, v in (raw.get("gpu_cost_share") or {"default": 1.0}).items()},
        quarantine_max_share=float(quarantine.get("max_share", 0.05)),
        scrape_interval_seconds=int((raw.get("telemetry") or {}).get("scrape_interval_seconds", 30)),
        budgets={str(k): _money(path, k, v) for k, v in (raw.get("budgets") or {}).items()},
        kubernetes_namespaces={str(k): str(v) for k, v in (kubernetes.get("namespaces") or {}).items()},
        kubernetes_project_labels=[str(k) for k in kubernetes["project_labels"]]
        if kubernetes.get("project_labels") is not None else list(DEFAULT_KUBERNETES_PROJECT_LABELS),
        default_currency=str(raw.get("default_currency", "USD")).upper(),
        source=str(path),
    )


def _money(path: Path, key: object, value: object) -> Decimal:
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise SystemExit(f"config file {path}: budgets.{key} = {value!r} is not an amount")

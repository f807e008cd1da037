"""The organisation config: one YAML file mapping teams, projects, accounts, tags and clusters.

Every key is optional. Without a file the pipeline still runs on a landing zone alone: project = the
Slurm account or a bill line's `project` tag, team = the project, clusters in UTC.

The file is validated against one schema (the pydantic models below, with their sections in the
modules beside this one: collect, costs, policies, serve, storage): an unknown key is an error that
suggests the closest known one, and a wrong type or value names the key, the file and its line, so a
typo never silently changes who pays for what. `gpuledger config check FILE` prints the config as it
will be used, defaults filled in. docs/config.md describes every key. (About 400 lines: the top of
the schema, and the loading that names the file and line of every problem.)
"""

from __future__ import annotations

import difflib
import json
import os
import re
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from models.currencies import check_currency
from pipelines.lib.config.collect import CollectConfig
from pipelines.lib.config.costs import CostsConfig, FxConfig
from pipelines.lib.config.policies import (AlertsConfig, Budget, EfficiencyConfig, IdleConfig, LedgerConfig,
                                          PoliciesConfig, QuarantineConfig, SavingsConfig, TelemetryConfig,
                                          glob_regex)
from pipelines.lib.config.section import currency as _currency
from pipelines.lib.config.section import Section as _Section
from pipelines.lib.config.serve import ServeConfig
from pipelines.lib.config.storage import StorageConfig
from pipelines.lib.redact import redact, url_secrets
from pipelines.lib.config.strict_yaml import StrictYamlError, dump_yaml, load_yaml, read_yaml_text

DEFAULT_TAG_KEYS: dict[str, list[str]] = {
    "project": ["project", "Project", "user:project"],
    "team": ["team", "Team", "user:team"],
    "node": ["node", "hostname", "Hostname"],
    "cluster": ["cluster", "Cluster"],
    "pool": ["pool", "Pool"],
}
DEFAULT_KUBERNETES_PROJECT_LABELS: list[str] = ["project", "gpuledger.dev/project"]
# sacct's job states (sacct(1), JOB STATE CODES); the ledger's categories depend on them, so any other
# value is quarantined unless `slurm.state_map` says which of these it means.
SLURM_STATES = (
    "BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "PENDING",
    "PREEMPTED", "RUNNING", "REQUEUED", "RESIZING", "REVOKED", "SUSPENDED", "TIMEOUT",
)


class TeamConfig(_Section):
    projects: list[str] = Field(default_factory=list, description="the team's projects")


class ClusterConfig(_Section):
    timezone: str = Field("UTC", description="IANA zone of the cluster's sacct times")
    # sacct exports without a header line (e.g. `sacct -p --noheader --delimiter=X -o ...`) need both.
    delimiter: str | None = Field(None, min_length=1)
    columns: tuple[str, ...] | None = None
    # GPUs shared by Slurm's own sharing GRES, as the cluster's gres.conf counts them: shards per GPU
    # (`Name=shard Count=` over the node's GPUs) and MPS units per GPU (`Name=mps Count=`, often 100)
    gpu_shards: int | None = Field(None, ge=1, le=1000)
    mps_per_gpu: int | None = Field(None, ge=1, le=100000)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not an IANA time zone (e.g. UTC, America/Los_Angeles)") from None
        return value


class KubernetesConfig(_Section):
    namespaces: dict[str, str] = Field(default_factory=dict, description="namespace -> project")
    project_labels: list[str] = Field(default_factory=lambda: list(DEFAULT_KUBERNETES_PROJECT_LABELS))
    # node name (or glob: `infer-*`) -> the replicas each of its GPUs is shared into by the NVIDIA device
    # plugin's time-slicing or MPS (its `sharing.*.resources[].replicas`): a pod's GPU there is that share
    gpu_replicas: dict[str, int] = Field(default_factory=dict)

    @field_validator("gpu_replicas")
    @classmethod
    def _whole_replicas(cls, mapping: dict[str, int]) -> dict[str, int]:
        for node, replicas in mapping.items():
            if not 1 <= replicas <= 1000:
                raise ValueError(f"{node}: {replicas} replicas: a GPU is shared into 1 to 1000 replicas")
        return mapping

    def replicas_on(self, node: str | None) -> int | None:
        """The replicas the GPUs of `node` are shared into (the first pattern that matches), or None."""
        if node is None:
            return None
        return next((n for pattern, n in self.gpu_replicas.items() if fnmatchcase(node, pattern)), None)


class SlurmConfig(_Section):
    # a site's own state spellings -> a sacct state, e.g. {PREEMPTED_REQUEUE: REQUEUED}
    state_map: dict[str, str] = Field(default_factory=dict)

    @field_validator("state_map")
    @classmethod
    def _known_targets(cls, mapping: dict[str, str]) -> dict[str, str]:
        out = {}
        for state, target in mapping.items():
            if target.upper() not in SLURM_STATES:
                raise ValueError(f"{state}: {target!r} is not a sacct state ({', '.join(SLURM_STATES)})")
            out[state.upper()] = target.upper()
        return out


class SparkConfig(_Section):
    """Where the ledger's SQL runs when `engine: spark` (docs/spark.md#running-on-spark)."""

    master: str = Field("local[2]", min_length=1,
                        description="Spark master URL: local[n], spark://host:7077, yarn, k8s://https://host:443")
    # the Parquet root of staging, intermediate and marts: a folder both Spark's executors and this
    # machine's DuckDB read (local, or a shared filesystem mounted at the same path)
    root: str | None = Field(None, min_length=1, description="default: <warehouse>.spark/ beside the warehouse file")
    conf: dict[str, str] = Field(default_factory=dict, description="more Spark settings, e.g. spark.executor.memory")


# "512MB", "2GB", "1.5GiB": DuckDB's own spelling of a memory size
MEMORY_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.IGNORECASE)


class QueryConfig(_Section):
    """Limits of one `gpuledger query` (docs/operations.md#query-limits): SQL typed by people and by
    tools must not run for ever, fill the machine's memory or print a billion rows."""

    timeout_seconds: float = Field(60, gt=0, le=24 * 3600)
    memory_limit: str = Field("2GB", description="DuckDB's memory limit for the query, e.g. 512MB, 2GB")
    max_rows: int = Field(100_000, ge=1, le=100_000_000)

    @field_validator("memory_limit")
    @classmethod
    def _memory_size(cls, value: str) -> str:
        if not MEMORY_SIZE.match(value):
            raise ValueError(f"{value!r} is not a memory size: a number and a unit, e.g. 512MB or 2GB")
        return value


class OrgConfig(_Section):
    teams: dict[str, TeamConfig] = Field(default_factory=dict)
    slurm_accounts: dict[str, str] = Field(default_factory=dict, description="sacct Account -> project")
    tag_keys: dict[str, list[str]] = Field(default_factory=lambda: dict(DEFAULT_TAG_KEYS))
    clusters: dict[str, ClusterConfig] = Field(default_factory=dict)
    pools: dict[str, str] = Field(default_factory=dict, description="node pool -> owning team")
    # how untagged shared lines are split among projects: by their GPU cost or GPU-seconds of the day
    shared_cost_rule: Literal["gpu_cost", "gpu_seconds"] = "gpu_cost"
    idle: IdleConfig = IdleConfig()
    efficiency: EfficiencyConfig = EfficiencyConfig()
    mfu_target: float = Field(0.40, gt=0, le=1)
    attention_flops: Literal["palm", "causal"] = "palm"
    quarantine: QuarantineConfig = QuarantineConfig()
    telemetry: TelemetryConfig = TelemetryConfig()
    budgets: dict[str, Budget] = Field(default_factory=dict, description="project -> monthly budget")
    alerts: AlertsConfig = AlertsConfig()
    policies: PoliciesConfig = PoliciesConfig()
    savings: SavingsConfig = SavingsConfig()
    kubernetes: KubernetesConfig = KubernetesConfig()
    slurm: SlurmConfig = SlurmConfig()
    ledger: LedgerConfig = LedgerConfig()
    collect: CollectConfig = CollectConfig()
    serve: ServeConfig = ServeConfig()
    default_currency: str = "USD"  # the currency of bill files that carry no BillingCurrency
    fx: FxConfig = FxConfig()
    costs: CostsConfig = CostsConfig()
    storage: StorageConfig = StorageConfig()  # inventoried storage: classification and prices (docs/ingest/storage.md)
    # where the intermediate tables and marts are computed (docs/spark.md); `gpuledger run --engine` overrides
    engine: Literal["duckdb", "spark"] = "duckdb"
    spark: SparkConfig = SparkConfig()
    query: QueryConfig = QueryConfig()

    _check_currency = field_validator("default_currency")(lambda cls, v: _currency(v))

    @model_validator(mode="before")
    @classmethod
    def _budgets_in_full(cls, data: Any) -> Any:
        # `project: 50000` is short for `project: {amount: 50000}`, in the default currency
        if isinstance(data, dict) and isinstance(data.get("budgets"), dict):
            currency = _filled_currency(data)
            data = {**data, "budgets": {
                k: ({"currency": currency, **v} if isinstance(v, dict) else {"amount": v, "currency": currency})
                for k, v in data["budgets"].items()}}
        return data

    @model_validator(mode="before")
    @classmethod
    def _costs_currency(cls, data: Any) -> Any:
        # a cost entry written without a currency is in the default currency
        if isinstance(data, dict) and isinstance(data.get("costs"), dict):
            currency = _filled_currency(data)
            costs = dict(data["costs"])
            for key in ("rate_cards", "contracts", "owned"):
                if isinstance(costs.get(key), list):
                    costs[key] = [{"currency": currency, **e} if isinstance(e, dict) else e for e in costs[key]]
            if isinstance(costs.get("energy"), dict):
                costs["energy"] = {"currency": currency, **costs["energy"]}
            data = {**data, "costs": costs}
        if isinstance(data, dict) and isinstance(data.get("storage"), dict) \
                and isinstance(data["storage"].get("rate_card"), list):
            currency = _filled_currency(data)
            data = {**data, "storage": {**data["storage"], "rate_card": [
                {"currency": currency, **e} if isinstance(e, dict) else e for e in data["storage"]["rate_card"]]}}
        return data

    @field_validator("tag_keys")
    @classmethod
    def _tag_keys(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        # spellings given for some keys replace the defaults of those keys only
        unknown = sorted(set(value) - set(DEFAULT_TAG_KEYS))
        if unknown:
            raise ValueError(f"unknown tag key(s) {unknown}: known are {sorted(DEFAULT_TAG_KEYS)}")
        return {**DEFAULT_TAG_KEYS, **value}

    @model_validator(mode="after")
    def _project_in_one_team(self) -> OrgConfig:
        owner: dict[str, str] = {}
        for team, spec in self.teams.items():
            for project in spec.projects:
                if project in owner and owner[project] != team:
                    raise ValueError(f"project {project!r} is in two teams: {owner[project]!r} and {team!r}")
                owner[project] = team
        return self

    def cluster(self, name: str) -> ClusterConfig:
        return self.clusters.get(name, ClusterConfig())

    def sql_params(self) -> dict[str, object]:
        """The config as bound SQL parameters: lists for tag spellings, JSON objects for mappings
        (read with the config_lookup macro), numbers for thresholds."""
        return {
            **{f"{key}_keys": list(keys) for key, keys in self.tag_keys.items()},
            "project_teams": json.dumps({p: t for t, spec in self.teams.items() for p in spec.projects}),
            "account_projects": json.dumps(self.slurm_accounts),
            "pool_teams": json.dumps(self.pools),
            "idle_min_minutes": self.idle.min_stretch_minutes,
            # how far before midnight int_gpu_seconds looks for the start of an idle stretch (at most a day)
            "idle_lookback_minutes": max(self.idle.min_stretch_minutes, self.policies.hung_job_cancel_minutes,
                                         self.policies.idle_session_minutes),
            "idle_sm_threshold": self.idle.sm_active_threshold,
            "low_activity": self.efficiency.low_activity,
            "memory_headroom": self.efficiency.memory_headroom,
            "scrape_seconds": self.telemetry.scrape_interval_seconds,
            "mfu_target": self.mfu_target,
            # where a plan's defaults came from (marts.dim_run_plans): a config file's key, or the built-in value
            "mfu_target_source": self._source_of("mfu_target", f"built-in ({self.mfu_target:g})"),
            "default_currency_source": self._source_of("default_currency", f"built-in {self.default_currency}"),
            "attention_flops": self.attention_flops,
            "shared_cost_rule": self.shared_cost_rule,
            "default_currency": self.default_currency,
            "project_budgets": json.dumps([{"project": p, "amount": str(b.amount), "currency": b.currency}
                                           for p, b in self.budgets.items()]),
            "budget_thresholds": list(self.alerts.budget_thresholds_pct),
            "burn_ahead_margin": self.alerts.burn_ahead_margin_pct,
            "anomaly_window_days": self.alerts.anomaly_window_days,
            "anomaly_min_days": self.alerts.anomaly_min_days,
            "anomaly_score": self.alerts.anomaly_score,
            "hung_minutes": self.alerts.hung_minutes,
            "alert_severity": json.dumps(self.alerts.severity),
            "step_time_ratio": self.alerts.step_time_ratio,
            "step_time_minutes": self.alerts.step_time_minutes,
            "step_time_baseline_minutes": round(self.alerts.step_time_baseline_hours * 60),
            "hung_cancel_minutes": self.policies.hung_job_cancel_minutes,
            "idle_session_minutes": self.policies.idle_session_minutes,
            # the is_interactive_session macro's patterns, in its order
            "session_patterns": [glob_regex(p) for p in (
                self.policies.interactive.partitions, self.policies.interactive.qos,
                self.policies.interactive.job_names, self.policies.interactive.pod_labels)],
            "savings_window_days": self.savings.window_days,
            # 0: not given (add_commitment skipped); a NULL parameter does not bind on every engine
            "commitment_discount": self.savings.commitment_discount or 0.0,
            "release_idle_share": self.savings.release_idle_share,
            "cost_entries": self.costs.entries_json(),
            "energy_prices": self.costs.hourly_energy_prices_json(),
            "energy_pue": str(self.costs.energy.pue),
            "energy_currency": self.costs.energy.currency,
            "kg_co2e_per_kwh": self.costs.energy.kg_co2e_per_kwh,
            **self.storage.sql_params(),
        }

    def _source_of(self, key: str, built_in: str) -> str:
        """`org config <key>` when the config file set the key, else how the built-in value is said."""
        return f"org config {key}" if key in self.model_fields_set else built_in

    def as_yaml(self) -> str:
        """The config as it will be used, every default filled in."""
        return dump_yaml(self.model_dump(mode="json"))


def _filled_currency(data: dict) -> str:
    """The currency an entry written without one takes: default_currency, when it is a valid code (else
    its own error is the one to read, not one more per budget and cost entry that inherited it)."""
    currency = data.get("default_currency", "USD")
    return currency if isinstance(currency, str) and check_currency(currency.strip()) is None else "USD"


class ConfigError(ValueError):
    """A config file that cannot be used, with every problem named by key, file and line."""


def config_file(given: str | Path | None) -> Path | None:
    """The config a command reads, the same for every command: the one given (`--config`), else
    $GPULEDGER_CONFIG, else none (the built-in defaults)."""
    chosen = given or os.environ.get("GPULEDGER_CONFIG")
    return Path(chosen) if chosen else None


ENGINE_ENV = "GPULEDGER_ENGINE"  # set by `gpuledger run --engine`; overrides the config's `engine`
ENGINES = ("duckdb", "spark")


def engine_of(cfg: OrgConfig) -> str:
    """The engine the ledger's SQL runs on: $GPULEDGER_ENGINE, else the config's `engine`."""
    name = os.environ.get(ENGINE_ENV) or cfg.engine
    if name not in ENGINES:
        raise ValueError(f"${ENGINE_ENV}={name!r} is no engine: one of {', '.join(ENGINES)}")
    return name


def load_config(path: str | Path | None) -> OrgConfig:
    """Reads and validates the YAML file at `path`; None or an empty path gives the built-in defaults.
    Raises ConfigError naming the file, each bad key, its line and what to do."""
    if not path:
        return OrgConfig()
    path = Path(path)
    try:
        text = read_yaml_text(path)
    except StrictYamlError as err:
        raise ConfigError(f"config file {err}") from None
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist: pass --config with an existing file, or none") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {path} cannot be read: {err}") from None
    return _parse_config(path, text)


@lru_cache(maxsize=16)
def _parse_config(path: Path, text: str) -> OrgConfig:
    """The validated config of `text` (read from `path`, named in errors). Every asset of a run loads
    the config; the file is read each time, so an edit is seen at once, but the same text is parsed
    and validated once (OrgConfig is frozen, so sharing it is safe)."""
    try:
        document = load_yaml(text, path)
    except StrictYamlError as err:
        raise ConfigError(f"config file {err}") from None
    raw, lines = document.data, document.key_lines
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {path}: the top level must be a mapping of keys (teams:, clusters: …), "
                          f"not a {type(raw).__name__}")
    try:
        return OrgConfig.model_validate(raw)
    except ValidationError as err:
        raise ConfigError("\n".join(_problems(path, err, lines, raw))) from None


def _problems(path: Path, err: ValidationError, lines: dict[tuple, int], raw: dict) -> list[str]:
    out = []
    for problem in err.errors():
        loc = tuple(str(p) if not isinstance(p, int) else p for p in problem["loc"])
        # pydantic's loc can name the validator's function after a field: keep the document's part
        while loc and loc not in lines and len(loc) > 1 and not _in_document(raw, loc):
            loc = loc[:-1]
        key = ".".join(str(p) for p in loc) or "(top level)"
        line = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), 0)
        where = f"{path}:{line}" if line else str(path)
        if problem["type"] == "extra_forbidden":
            known = _known_keys(loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
            hint = f" — did you mean `{close[0]}`?" if close else f" (known keys here: {', '.join(known)})"
            out.append((line, f"{where}: unknown key `{key}`{hint}"))
        else:
            value = f" (got {problem['input']!r})" if not isinstance(problem["input"], dict) else ""
            message = problem["msg"].removeprefix("Value error, ")
            # the value may be a URL with a password or token in it (alerts.channels.url): redacted, with
            # its pieces (a URL with a space is cut there by the URL pattern, the rest is still secret)
            given = problem["input"] if isinstance(problem["input"], str) else None
            out.append((line, redact(f"{where}: `{key}`: {message}{value}", url_secrets(given))))
    return [f"config file {path} is not valid:", *(f"  {p}" for _, p in sorted(out, key=lambda x: x[0])),
            "fix these keys (gpuledger config check FILE shows the config as it will be used)"]


def _in_document(raw: Any, loc: tuple) -> bool:
    for part in loc:
        if isinstance(raw, dict) and part in raw:
            raw = raw[part]
        elif isinstance(raw, list) and isinstance(part, int) and part < len(raw):
            raw = raw[part]
        else:
            return False
    return True


def _known_keys(parent: tuple) -> list[str]:
    """The keys a mapping at `parent` may hold (for suggestions); [] where any key is allowed."""
    kind: Any = OrgConfig
    for part in parent:
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            field = kind.model_fields.get(str(part))
            if field is None:
                return []
            kind = field.annotation
        elif getattr(kind, "__origin__", None) in (dict, list, tuple):
            kind = kind.__args__[-1]  # a mapping's or list's values
        else:
            return []
        # `X | None` -> X
        args = [a for a in getattr(kind, "__args__", ()) if a is not type(None)]
        if getattr(kind, "__origin__", None) is None and len(args) == 1:
            kind = args[0]
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return list(kind.model_fields)
    return []

"""The sections of the organisation config that say how the ledger judges and acts: idle stretches and
activity thresholds (`idle:`, `efficiency:`, `telemetry:`), the quarantine limit, `ledger:` rules,
interactive sessions, `policies:` and `savings:`, and `budgets:` and `alerts:`. docs/config.md
describes every key; pipelines/lib/config/__init__.py puts them together in OrgConfig."""

from __future__ import annotations

import re
from datetime import date

from pydantic import Field, field_validator

from pipelines.lib.config.alert_channels import AlertActions, AlertChannels, AlertKinds, KindSeverities, RetryConfig
from pipelines.lib.config.section import Money
from pipelines.lib.config.section import currency as _currency
from pipelines.lib.config.section import Section as _Section


class IdleConfig(_Section):
    min_stretch_minutes: int = Field(10, ge=1, le=24 * 60)
    sm_active_threshold: float = Field(0.05, ge=0, le=1)


class EfficiencyConfig(_Section):
    # the under-use lens on productive time (docs/ledger.md#under-use-a-lens-on-productive-time):
    # a productive minute below this SM activity is low activity
    low_activity: float = Field(0.25, ge=0, le=1)
    # a smaller GPU "fits" a job when its memory holds the job's peak with this share to spare
    memory_headroom: float = Field(0.20, ge=0, le=10)


class TelemetryConfig(_Section):
    # DCGM scrape interval; gaps over three of them are `unmonitored`
    scrape_interval_seconds: int = Field(30, ge=1, le=3600)


class QuarantineConfig(_Section):
    # the share of a day's landing rows that may be quarantined before the day's contract check fails
    max_share: float = Field(0.05, ge=0, le=1)


class LedgerConfig(_Section):
    # the first day the ledger has (its first daily partition); days before it are refused
    start: date | None = None
    # the Dagster UI's ledger_freshness_sensor runs (yesterday published by 09:00 UTC); off for a
    # landing zone of past days, such as the demo's, where every check would fail at once
    freshness_checks: bool = True


class InteractivePatterns(_Section):
    """What makes a job an interactive session (a notebook, an editor, a shell): any pattern matching.
    Patterns are globs (`jupyter*`), matched whole and case-sensitively; a pod label is `key=glob`."""

    partitions: list[str] = Field(default_factory=lambda: ["interactive*"])
    qos: list[str] = Field(default_factory=lambda: ["interactive*"])
    job_names: list[str] = Field(default_factory=lambda: [
        "jupyter*", "notebook*", "vscode*", "code-server*", "interactive*", "bash", "sh", "zsh"])
    pod_labels: list[str] = Field(default_factory=lambda: ["notebook-name=*", "app=jupyter*"])

    @field_validator("pod_labels")
    @classmethod
    def _key_glob(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if "=" not in v or not v.split("=", 1)[0]]
        if bad:
            raise ValueError(f"a pod label pattern is `key=glob`, e.g. `notebook-name=*` (got {bad[0]!r})")
        return value


class PoliciesConfig(_Section):
    """The policies the savings opportunities price (docs/ledger.md#savings-opportunities): what a sweep
    that cancels hung batch jobs, and an idle timeout on interactive sessions, would have saved."""

    # at most a day: the ledger judges an idle stretch's start at most a day before midnight
    hung_job_cancel_minutes: int = Field(60, ge=1, le=24 * 60)
    idle_session_minutes: int = Field(120, ge=1, le=24 * 60)
    interactive: InteractivePatterns = InteractivePatterns()


class SavingsConfig(_Section):
    """marts.fct_savings_opportunities (docs/ledger.md#savings-opportunities)."""

    window_days: int = Field(30, ge=1, le=366)
    # the discount a commitment would give on the steady on-demand GPU base (0.30 = 30 % off); without
    # it `add_commitment` is not computed
    commitment_discount: float | None = Field(None, gt=0, lt=1)
    # an on-demand or rented node idle and unallocated above this share of its billed hours is one to release
    release_idle_share: float = Field(0.5, gt=0, le=1)


def glob_regex(patterns: list[str]) -> str:
    """One anchored regular expression matching a text any of the globs matches whole (`*` any run,
    `?` one character, `[...]` / `[!...]` a set), in the syntax RE2 (DuckDB) and Java (Spark) share;
    `^$` (matching only the empty text, which callers never pass) when there are none. Written here,
    not by fnmatch.translate, whose output changes with the Python version (atomic groups from 3.12,
    which RE2 refuses)."""
    return "^(?:" + "|".join(_glob_part(p) for p in patterns) + ")$" if patterns else "^$"


def _glob_part(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        close = pattern.find("]", i + 2) if ch == "[" else -1
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and close > 0:
            body = pattern[i + 1:close]
            negate = body.startswith("!")
            members = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + members.replace("\\", "\\\\").replace("[", "\\[") + "]")
            i = close
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


class Budget(_Section):
    amount: Money = Field(gt=0)
    currency: str = "USD"  # written without one: the config's default_currency

    _check_currency = field_validator("currency")(lambda cls, v: _currency(v))


class AlertsConfig(_Section):
    """When ops.alerts raises a budget or cost alert (docs/plans.md#alerts)."""

    # shares of a run's GPU-hour budget, or of a project's monthly budget, that raise an alert once crossed
    budget_thresholds_pct: list[float] = Field(default_factory=lambda: [30.0, 50.0, 80.0, 100.0], min_length=1)
    # a run whose GPU-hours (as % of planned) run ahead of its tokens (as % of planned) by more points
    burn_ahead_margin_pct: float = Field(10.0, gt=0)
    # cost_anomaly: a team's day against its previous `anomaly_window_days` (at least `anomaly_min_days`
    # of them with cost), by the robust score (day - median) / (1.4826 · MAD)
    anomaly_window_days: int = Field(14, ge=3, le=365)
    anomaly_min_days: int = Field(5, ge=3)
    anomaly_score: float = Field(3.5, gt=0)
    # delivery (docs/plans.md#delivery): where alerts go, how failing channels are retried, what a kind runs
    channels: AlertChannels = Field(default_factory=list)
    retry: RetryConfig = RetryConfig()
    actions: AlertActions = Field(default_factory=dict)
    # a kind's severity, over the one its query gives (hung_job: warning, critical after 4 × hung_minutes …)
    severity: KindSeverities = Field(default_factory=dict)
    # kinds delivered one message per alert as soon as raised; the others go in each team's digest
    immediate: AlertKinds = Field(default_factory=list)
    # a team's digest to a channel goes out at most this often, unless it holds a critical alert
    digest_hours: float = Field(24, ge=0, le=24 * 7)
    # hung_job: a batch job whose GPUs all sat idle (the ledger's idle minute) this many minutes in a row
    # (an interactive session: policies.idle_session_minutes, as idle_session)
    hung_minutes: int = Field(30, ge=1)
    # step_time_regression: a run's step time (median of its last 3 step events) above `step_time_ratio` ×
    # its baseline (the median over the `step_time_baseline_hours` before) for `step_time_minutes` in a row
    step_time_ratio: float = Field(1.2, gt=1)
    step_time_minutes: int = Field(30, ge=1)
    step_time_baseline_hours: float = Field(2.0, gt=0, le=12)
    # the live sensor that raises hung_job and step_time_regression from today's landing files
    live_interval_minutes: int = Field(5, ge=1)

    @field_validator("budget_thresholds_pct")
    @classmethod
    def _positive(cls, value: list[float]) -> list[float]:
        if any(v <= 0 for v in value):
            raise ValueError("thresholds are percentages above 0")
        return sorted(set(value))

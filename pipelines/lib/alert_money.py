"""The money of a set of alerts (rows of ops.alerts as dicts, money as Decimal): at stake per currency,
money two alerts both name counted once, and the summary per kind and team. In lib, as the alert
messages (pipelines/alerts), `gpuledger alerts` and the served /alerts page (pipelines/reports) all
count it this one way."""

from __future__ import annotations

from decimal import Decimal


def at_stake(alerts: list[dict]) -> dict[str, Decimal]:
    """The money at stake of `alerts`, summed per currency (two currencies are never added), the money
    two alerts both name once (money_subject)."""
    once: dict[tuple[str, tuple[str, str]], Decimal] = {}
    for a in alerts:
        if a.get("cost_at_stake") is not None:
            key = (a.get("billing_currency") or "", money_subject(a))
            once[key] = max(once.get(key, a["cost_at_stake"]), a["cost_at_stake"])
    out: dict[str, Decimal] = {}
    for (cur, _), amount in once.items():
        out[cur] = out.get(cur, Decimal(0)) + amount
    return dict(sorted(out.items()))


def summary_groups(alerts: list[dict]) -> list[tuple[str, str, int, int, dict[str, Decimal]]]:
    """Per kind and team, sorted: (kind, team, alerts, open ones, money at stake per currency, money two
    alerts both name once: at_stake). Budgets of runs and of project months are groups apart, as a
    month's spend holds its runs'. `gpuledger alerts` and the served /alerts page summarise with it."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for a in alerts:
        groups.setdefault((_summary_kind(a), a["team"] or "–"), []).append(a)
    return [(kind, team, len(group), sum(a["resolved_at"] is None for a in group), at_stake(group))
            for (kind, team), group in sorted(groups.items())]


def _summary_kind(a: dict) -> str:
    if a["kind"] != "budget_threshold":
        return a["kind"]
    return "budget: project month" if a["subject_type"] == "project_month" else "budget: run"


def money_subject(alert: dict) -> tuple[str, str]:
    """What an alert's money is the money of: its subject, a run's pace (burn ahead) being its run's
    spend to date, as its budget alert is."""
    kind = alert.get("subject_type") or ""
    return ("run" if kind == "run_pace" else kind, alert.get("subject") or "")

"""The savings page (`gpuledger serve` answers it at /savings): every savings opportunity of a period, a
section per team, each the team report's own "What to do" (html_page.what_to_do over savings.load), here
with all its rows rather than the report's first ten. Money per billing currency; two are never added."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.reports import savings
from pipelines.reports.fmt import esc, money
from pipelines.reports.html_page import page, what_to_do

NO_TEAM = "opportunities of no one team"  # a commitment's, a cluster's: what the organisation could save


def split_by_team(found: savings.Savings, teams: Sequence[str | None]) -> list[tuple[str | None, savings.Savings]]:
    """`found` (largest first) as one Savings per team of `teams`, in that order; a team without any
    gets an empty one, so its section says so."""
    return [(t, savings.Savings(found.available, found.start, found.end,
                                [o for o in found.opportunities if o.team == t])) for t in teams]


def _who(team: str | None) -> str:
    return f"team {team}" if team is not None else NO_TEAM


def render_savings(groups: list[tuple[str | None, savings.Savings]], label: str, who: str,
                   nav: Sequence[tuple[str, str]] = ()) -> str:
    """The page: a sentence of totals per currency, then each group's "What to do", all rows."""
    every = [o for _, s in groups for o in s.opportunities]
    totals = savings.Savings(True, groups[0][1].start, groups[0][1].end, every).totals() if groups else {}
    money_text = "; ".join(f"{money(w, c)} over the window ({money(m, c)} a month) billed in {c}"
                           for c, (w, m) in totals.items())
    lead = (f"{len(every)} savings opportunit{'y' if len(every) == 1 else 'ies'} for {who} in {label}: {money_text}."
            if every else f"No savings opportunities for {who} in {label}: nothing to do.")
    body = f'<p class="summary">{esc(lead)}</p>' + "".join(
        what_to_do(s, _who(t), heading=f"Team {t}" if t is not None else NO_TEAM[:1].upper() + NO_TEAM[1:],
                   limit=None) for t, s in groups)
    return page(f"Savings: {who}, {label}", f"Savings · {who} · {label}", body,
                "Days in UTC · money in the currency it was billed in", nav=nav)

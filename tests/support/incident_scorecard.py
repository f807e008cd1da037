"""How well the live alerts find the simulator's incidents (truth/incidents.csv): replays one simulated day
at the sensor's interval — as_of = day start + k·interval, each tick reading only data up to as_of — and
scores the alerts against the truth: recall (incidents alerted), precision (alerts that are incidents) and
each alert's delay after the moment its threshold was crossed (incident start + alerts.hung_minutes, or +
alerts.step_time_minutes).

    python -m tests.support.incident_scorecard OUT_DIR [--day YYYY-MM-DD] [--interval-minutes 5]

OUT_DIR is what `gpuledger simulate --out OUT_DIR` wrote (landing/, truth/, gpuledger.yaml).
"""

from __future__ import annotations

import argparse
import csv
import json
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

from pipelines.alerts.live import RATE_COLUMNS, detect, stage_live
from pipelines.lib.config import load_config

HUNG, SESSION, SLOW = "hung_job", "idle_session", "step_time_regression"


@dataclass
class Scorecard:
    day: date
    interval_minutes: int
    owed: dict[str, int] = field(default_factory=dict)           # kind -> incidents whose threshold fell in the day
    found: dict[str, int] = field(default_factory=dict)          # kind -> of those, alerted
    alerts: dict[str, int] = field(default_factory=dict)         # kind -> distinct alerts raised over the day
    true_alerts: dict[str, int] = field(default_factory=dict)    # kind -> of those, an incident of the truth
    delays: dict[str, list[float]] = field(default_factory=dict)  # kind -> seconds after the threshold was crossed
    missed: list[dict] = field(default_factory=list)
    false: list[dict] = field(default_factory=list)

    def recall(self, kind: str) -> float | None:
        return self.found.get(kind, 0) / self.owed[kind] if self.owed.get(kind) else None

    def precision(self, kind: str) -> float | None:
        return self.true_alerts.get(kind, 0) / self.alerts[kind] if self.alerts.get(kind) else None

    def text(self) -> str:
        lines = [f"incident scorecard for {self.day}, sensor every {self.interval_minutes} min"]
        for kind in (HUNG, SESSION, SLOW):
            if not self.owed.get(kind) and not self.alerts.get(kind):
                continue
            d = sorted(self.delays.get(kind, []))
            delay = (f"delay after threshold min {d[0] / 60:.1f} / median {d[len(d) // 2] / 60:.1f} / "
                     f"max {d[-1] / 60:.1f} min" if d else "no delays")
            lines.append(f"  {kind:<21} recall {self.found.get(kind, 0)}/{self.owed.get(kind, 0)}"
                         f"  precision {self.true_alerts.get(kind, 0)}/{self.alerts.get(kind, 0)}  {delay}")
        for m in self.missed:
            lines.append(f"  missed: {m}")
        for f in self.false:
            lines.append(f"  false alert: {f}")
        return "\n".join(lines)


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


def incident_scorecard(out: Path, day: date, interval_minutes: int | None = None) -> Scorecard:
    cfg = load_config(out / "gpuledger.yaml")
    interval = interval_minutes or cfg.alerts.live_interval_minutes
    threshold = {HUNG: timedelta(minutes=cfg.alerts.hung_minutes),
                 SESSION: timedelta(minutes=cfg.policies.idle_session_minutes),
                 SLOW: timedelta(minutes=cfg.alerts.step_time_minutes)}
    with (out / "truth" / "incidents.csv").open(newline="") as fh:
        truth = [{**r, "start": _ts(r["start_ts"]), "end": _ts(r["end_ts"])} for r in csv.DictReader(fh)]

    con = duckdb.connect()
    stage_live(con, out / "landing", cfg, day)
    con.register("no_rates", pl.DataFrame(schema=RATE_COLUMNS))
    con.execute("CREATE TABLE marts.fct_node_hourly AS SELECT * FROM no_rates")

    start = datetime.combine(day, datetime.min.time())
    # an alert is an episode per job (or run); each of its stretches is scored, first seen when; a stretch
    # begun before the queries' look-back (since_edge) starts where the window does, which moves each tick
    first_seen: dict[tuple[str, str], tuple[datetime, dict]] = {}
    for k in range(1, 24 * 60 // interval + 1):
        as_of = start + timedelta(minutes=k * interval)
        for row in detect(con, cfg, as_of).iter_rows(named=True):
            details = json.loads(row["details"])
            began = "edge" if row["since_edge"] else details.get("idle_from") or details.get("slow_from")
            first_seen.setdefault((row["alert_id"], began), (as_of, row))

    card = Scorecard(day, interval)
    matched: set[int] = set()
    for as_of, row in first_seen.values():
        kind = row["kind"]
        details = json.loads(row["details"])
        began = _ts(details["idle_from"] if kind in (HUNG, SESSION) else details["slow_from"])
        cluster = details.get("cluster")
        subject = details.get("job_id", row["subject"])  # a job's subject is cluster/JobID
        hits = [i for i, t in enumerate(truth)
                if t["kind"] == kind and t["subject"] == subject and (cluster is None or t["cluster"] == cluster)
                and t["start"] - timedelta(minutes=interval) <= began < t["end"]]
        card.alerts[kind] = card.alerts.get(kind, 0) + 1
        if hits:
            card.true_alerts[kind] = card.true_alerts.get(kind, 0) + 1
            i = hits[0]
            matched.add(i)
            crossed = truth[i]["start"] + threshold[kind]
            if start <= crossed:
                card.delays.setdefault(kind, []).append((as_of - crossed).total_seconds())
        else:
            card.false.append({"kind": kind, "subject": row["subject"], "threshold": row["threshold"],
                               "seen": as_of.isoformat()})
    end = start + timedelta(days=1)
    for i, t in enumerate(truth):
        crossed = t["start"] + threshold[t["kind"]]
        if t["end"] - t["start"] < threshold[t["kind"]] or not start < crossed <= end:
            continue
        card.owed[t["kind"]] = card.owed.get(t["kind"], 0) + 1
        if i in matched:
            card.found[t["kind"]] = card.found.get(t["kind"], 0) + 1
        else:
            card.missed.append({k: t[k] for k in ("kind", "subject", "cluster", "start_ts", "end_ts")})
    return card


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="a `gpuledger simulate --out` folder")
    parser.add_argument("--day", type=date.fromisoformat,
                        help="the UTC day to replay (default: the day of the first step_time_regression incident)")
    parser.add_argument("--interval-minutes", type=int, help="default: the config's alerts.live_interval_minutes")
    args = parser.parse_args(argv)
    day = args.day
    if day is None:
        with (args.out / "truth" / "incidents.csv").open(newline="") as fh:
            slow = [r for r in csv.DictReader(fh) if r["kind"] == SLOW]
        day = _ts(slow[0]["start_ts"]).date() if slow else None
        if day is None:
            parser.error("no step_time_regression in the truth: give --day")
    print(incident_scorecard(args.out, day, args.interval_minutes).text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

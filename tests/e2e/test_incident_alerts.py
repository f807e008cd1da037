"""The live alerts against the simulator's own truth (truth/incidents.csv): one simulated day replayed at the
sensor's interval (tests/support/incident_scorecard.py), each tick reading only data up to its as_of. Every
hung job, idle session and step-time regression is alerted, within one sensor interval plus the data's granularity of the
moment its threshold was crossed, and no alert is raised for a healthy job or run."""

import csv
import datetime as dt

import pytest

from simulator.simulate import simulate
from tests.support.incident_scorecard import HUNG, SESSION, SLOW, incident_scorecard

pytestmark = pytest.mark.slow

INTERVAL = 5
# what the data adds to the sensor's interval: DCGM rolled up to whole minutes (a stretch is seen once its
# minute is complete), trainer step events about a minute apart (slowed: 1.5 min; a stretch is flagged
# from its second slow event)
GRANULARITY_S = {HUNG: 90, SESSION: 90, SLOW: 240}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("incidents")
    simulate(out, dt.date(2026, 10, 29), 4, seed=7)
    with (out / "truth" / "incidents.csv").open(newline="") as fh:
        slow = [r for r in csv.DictReader(fh) if r["kind"] == SLOW]
    assert slow, "the simulator slows one run's steps"
    return out, dt.date.fromisoformat(slow[0]["start_ts"][:10])


def test_every_incident_is_alerted_within_one_sensor_interval_and_nothing_else(world):
    out, day = world
    card = incident_scorecard(out, day, INTERVAL)
    print(card.text())
    assert card.owed.get(HUNG, 0) + card.owed.get(SESSION, 0), "the replayed day has idle jobs or sessions"
    assert card.owed.get(SLOW), "the replayed day has a slowed run"
    for kind in (HUNG, SESSION, SLOW):
        # a day may owe no batch job idle for half an hour (its hung jobs began the day before), or no
        # notebook idle for two hours: what it owes is all alerted, and what it alerts is all owed
        if card.owed.get(kind):
            assert card.recall(kind) == 1.0, card.missed
        if card.alerts.get(kind):
            assert card.precision(kind) == 1.0, card.false
        for delay in card.delays.get(kind, []):
            assert -60 <= delay <= INTERVAL * 60 + GRANULARITY_S[kind], (kind, delay)

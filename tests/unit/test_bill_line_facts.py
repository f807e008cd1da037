"""A bill file's per-day digests and line sample (pipelines/landing/bill_deliveries.py, `line_facts`) are
stored in ops.landed_files and compared with the next delivery's, so however they are computed they must
stay the values warehouses already hold. They used to be taken on a DuckDB the parser opened for each
file; now on the connection of whoever reads the file (the warehouse's, in sync). The values pinned
below were computed by that earlier code, on the real samples and on a sample made hostile so that
quarantined lines (which keep their money, and count in the digests) are among them."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import duckdb
import pytest

from pipelines.ingest.sources import AWS_CUR, FOCUS
from pipelines.landing.bill_deliveries import line_facts
from pipelines.lib.config import load_config
from tests.support.memory_db import memory_db

# sha256 of the JSON of (digests, sample) as `_facts_json` writes it, by the code before this change
PINNED = {
    "focus/focus_1_0_sample_1000.csv": "c01c0716688991fd3ef4b3cf6528a84f60fd465b94389b11f779aec4fbce4529",
    "cur/aws_cur_legacy_sample_anonymized.csv": "7559ad599d5c26747b4fcb0d1567ba0104476b0a1fdcaa49aec6adb22acc79ae",
    "hostile": "5857f6754b58c3f2f84c9fa402c3480c8ee374bc9b7c2bc9e6fa6707d81da488",
}
SIMULATED = "b11255a30875ade3b5574071544610563d909583313d9bdd834d9f79a1d9497b"


def hostile_sample(real: Path, out: Path) -> Path:
    """The FOCUS sample with lines the contract refuses: three with a currency that is none, two whose
    Tags are not a JSON object, and one line id repeated."""
    with (real / "focus" / "focus_1_0_sample_1000.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    at = {name: header.index(name) for name in ("BillingCurrency", "Tags")}
    for n in (10, 11, 12):
        rows[n][at["BillingCurrency"]] = "dollars"
    for n in (20, 21):
        rows[n][at["Tags"]] = "[1, 2]"
    rows.append(list(rows[30]))  # the sample has no x_LineItemId: a repeated line is simply a line twice
    with out.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return out


def _facts_json(con: duckdb.DuckDBPyConnection | None, path: Path) -> str:
    source = AWS_CUR if path.parent.name == "cur" else FOCUS
    parsed = source.parse(memory_db(), path, path.name, load_config(None))
    digests, sample = line_facts(con, parsed) if con is not None else line_facts(parsed)  # the earlier signature
    return json.dumps([{d: str(v) for d, v in sorted(digests.items())}, [str(h) for h in sample]])


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def warehouse(tmp_path):
    """A bootstrapped warehouse file's connection, as sync holds it."""
    from pipelines.lib.warehouse import bootstrap

    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    bootstrap(con)
    yield con
    con.close()


@pytest.mark.parametrize("name", sorted(PINNED))
def test_digests_and_sample_on_the_warehouse_connection_are_the_values_warehouses_hold(real, tmp_path, warehouse, name):
    path = hostile_sample(real, tmp_path / "hostile.csv") if name == "hostile" else real / name
    facts = _facts_json(warehouse, path)
    assert _sha(facts) == PINNED[name]
    digests, sample = json.loads(facts)
    assert digests and sample  # the pin is of something
    if name == "hostile":  # quarantined lines with a charge period are in the digests
        parsed = FOCUS.parse(memory_db(), path, path.name, load_config(None))
        assert parsed.rejects.height >= 5


def simulated_bills_facts(con: duckdb.DuckDBPyConnection | None, out: Path) -> str:
    """The facts of every bill file of a small simulated fleet (3 days, 2 nodes, seed 7), one JSON text."""
    from datetime import date

    from simulator import simulate

    simulate(out, date(2026, 3, 1), 3, nodes=2, seed=7)
    files = sorted((out / "landing" / "bills").rglob("*.csv"))
    assert len(files) >= 3  # deliveries that repeat and restate earlier lines
    return json.dumps({p.relative_to(out).as_posix(): _facts_json(con, p) for p in files})


def test_the_simulated_bills_digests_are_the_values_warehouses_hold(tmp_path, warehouse):
    assert _sha(simulated_bills_facts(warehouse, tmp_path / "sim")) == SIMULATED


def test_the_registered_lines_are_let_go(real, warehouse):
    """The lines are registered on the caller's connection for the two queries, and unregistered after:
    the warehouse keeps no view of a parsed file."""
    _facts_json(warehouse, real / "cur" / "aws_cur_legacy_sample_anonymized.csv")
    views = warehouse.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'bill_lines_in'").fetchone()[0]
    assert views == 0

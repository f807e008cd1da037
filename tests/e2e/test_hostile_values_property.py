"""Property: hostile text in any text field of any landing format is data, never code.

Hypothesis puts quotes, backslashes, control characters, spreadsheet formula prefixes, JSON-path and
SQL metacharacters, very long strings and deeply nested JSON into every text field a user controls —
bill tags, resource ids and service names; node, pool and team names; sacct job names, users,
accounts and comments; DCGM host, model and job labels; trainer run ids and projects; config team
names — and the day must run through every check, reconcile exactly per currency, account for every
bill line (staged, or quarantined with its reason), and give a report and a FOCUS export whose CSV
cells cannot run as formulas."""

from __future__ import annotations

import csv
import json
from datetime import date
from decimal import Decimal as D

import duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.exports import export_focus
from pipelines.lib.csv_cells import FORMULA_PREFIXES
from pipelines.reports import write_team_report
import pytest

from tests.support.depth import examples
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

# a minute or more: runs in CI too (`-m "not slow"` leaves it out of a quick local run)
pytestmark = pytest.mark.slow

DAY = date(2026, 11, 2)
NASTY = [
    '"', "'", "\\", '\\"', "\"'; DROP TABLE marts.fct_cost_daily; --", "=1+1+cmd|' /C calc'!A0", "@SUM(A1)", "+1",
    "-2", "\t=x", "\r\n", "$.x", '$."a"', "*", "[0]", "../etc/passwd", "a/b", "é" * 128, "x" * 10_000, "\x00",
    "\x1b[31mred", "<script>alert(1)</script>", "R&D", "%s%n", "${jndi:ldap://x}", "|", ",", "\u202eevil",
    "{" + '"a":{' * 300, "NULL", "", " ", "null", "None",
]
hostile = st.one_of(st.sampled_from(NASTY),
                    st.text(alphabet=st.sampled_from(list("\"'\\|,;$*.[]{}=+-@\t\x00é <>&%\n")), max_size=30))
DEEP_TAGS = '{"project": ' + '{"a":' * 5000 + "1" + "}" * 5000 + "}"


def _write(root, v) -> Landing:
    L = Landing(root)
    L.config = {"teams": {v["team"]: {"projects": [v["project"]]}}, "slurm_accounts": {v["account"]: v["project"]},
                "pools": {v["pool"]: v["team"]}, "quarantine": {"max_share": 1.0}}
    L.node(v["host"], resource_id=v["resource"], pool=v["pool"], team=v["team"])
    L.node_hours(v["host"], utc(2026, 11, 2), 6, D("10.00"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("3.30"), service=v["service"],
           tags={"project": v["project"], v["tag_key"]: v["tag_value"]})
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("1.10"), service="Storage", resource_id=v["resource2"],
           tags={"team": v["team"], "project": v["tag_value"]})
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Tax", D("0.77"), tags={v["tag_key"]: v["project"]})
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("2.00"), service="Networking")  # its Tags: DEEP_TAGS
    L.job("c1", "11", account=v["account"], start="2026-11-02T00:00:00", end="2026-11-02T03:00:00",
          state="COMPLETED", host=v["host"], name=v["job_name"], user=v["user"], comment=f"run_id={v['run_id']}")
    L.job("c1", "12", account=v["account2"], start="2026-11-02T03:00:00", end="2026-11-02T05:00:00",
          state="FAILED", host=v["host"], name=v["job_name"], user=v["user"], comment=v["comment"])
    L.telemetry(v["host"], [DAY], [Activity(utc(2026, 11, 2), utc(2026, 11, 2, 3), "11", True),
                                   Activity(utc(2026, 11, 2, 3), utc(2026, 11, 2, 5), "12", False)])
    L.event(v["run_id"], "run_config", utc(2026, 11, 2), project=v["project"], dtype=v["dtype"],
            model={"params": 7e9, "layers": 32, "heads": 32, "head_dim": 128, "seq_len": 4096})
    L.event(v["run_id"], "step", utc(2026, 11, 2, 1), job_id="11", step=1, tokens=1000)
    L.write()
    # the networking line's Tags: JSON nested deeper than any parser's recursion
    bill = L.landing / "bills" / "focus" / "bill.csv"
    rows = list(csv.DictReader(bill.open(newline="", encoding="utf-8")))
    rows[-1]["Tags"] = DEEP_TAGS
    with bill.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    # hostile DCGM labels: the model name and a job label no job has
    import pyarrow.parquet as pq
    path = next((L.landing / "telemetry" / "dcgm").rglob("*.parquet"))
    table = pq.read_table(path)
    table = table.set_column(table.schema.get_field_index("modelName"), "modelName",
                             __import__("pyarrow").array([v["model"]] * table.num_rows))
    pq.write_table(table, path)
    # a trainer line with a hostile key and a value nested too deep to read
    with (L.landing / "runs" / "extra.jsonl").open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": "step", "run_id": v["run_id"], v["tag_key"]: v["tag_value"], "step": 2,
                             "tokens": 5, "ts": "2026-11-02T02:00:00Z"}) + "\n")
        fh.write('{"event":"step","x":' + "[" * 100_000 + "]" * 100_000 + "}\n")
    return L


FIELDS = ["team", "project", "account", "account2", "pool", "host", "resource", "resource2", "service", "tag_key",
          "tag_value", "job_name", "user", "comment", "run_id", "dtype", "model"]


@settings(max_examples=examples(5), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.fixed_dictionaries({f: hostile for f in FIELDS}))
def test_hostile_text_is_data(tmp_path_factory, values):
    # a team or project must be a non-empty name in the config; the rest may be anything
    values["team"] = values["team"] or "t"
    values["project"] = values["project"] or "p"
    root = tmp_path_factory.mktemp("hostile")
    L = _write(root, values)

    failed = run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    assert not failed, failed

    published = L.warehouse.with_name("warehouse.published.duckdb")
    with duckdb.connect(str(published), read_only=True) as con:
        recon = con.execute("SELECT billing_currency, bill_effective_cost, difference_effective_cost, "
                            "difference_billed_cost FROM finance.reconciliation_daily").fetchall()
        accounted = dict(con.execute("SELECT file, rows_staged + rows_quarantined FROM ops.landed_files "
                                     "WHERE source = 'focus'").fetchall())
    assert recon and all(de == 0 and db == 0 for _, _, de, db in recon), recon
    assert sum(b for _, b, _, _ in recon) == D("60") + D("3.30") + D("1.10") + D("0.77") + D("2.00")
    assert accounted == {"bills/focus/bill.csv": 10}

    with duckdb.connect(str(published), read_only=True) as con:
        paths = write_team_report(con, values["team"], DAY, DAY, DAY.isoformat(), root / "reports")
    assert all(p.is_file() and p.is_relative_to(root / "reports") for p in paths)
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        export_focus(con, DAY, DAY, root / "focus.csv")
    for path, text_columns in ((root / "focus.csv", None), (paths[2], ("team", "project", "category"))):
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                for column, cell in row.items():
                    if column in ("EffectiveCost", "BilledCost", "effective_cost", "billed_cost", "gpu_seconds"):
                        continue
                    if text_columns is None or column in text_columns:
                        assert not cell or cell[0] not in FORMULA_PREFIXES, (path.name, column, cell)


def test_the_issues_own_values(tmp_path):
    """The values that broke days before: a `"` in a tag value, a sacct Account and a trainer project;
    a team named `R&D`; `é`×128 as a team (a report folder); a 100,000-deep JSON trainer line."""
    values = {f: f"v{i}" for i, f in enumerate(FIELDS)}
    values.update(tag_value='say "hi"', account='acct"1', project='proj"x', team="R&D", job_name="é" * 128,
                  user="=1+1+cmd|x")
    L = _write(tmp_path, values)
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    published = L.warehouse.with_name("warehouse.published.duckdb")
    with duckdb.connect(str(published), read_only=True) as con:
        teams = dict(con.execute("SELECT project, any_value(team) FROM marts.fct_cost_daily GROUP BY 1").fetchall())
        deep = con.execute("SELECT reason FROM ops.quarantine WHERE source = 'runs'").fetchall()
    assert teams['proj"x'] == "R&D"
    assert deep == [("JSON nested too deeply to read",)]
    with duckdb.connect(str(published), read_only=True) as con:
        for team in ("R&D", "é" * 128):
            paths = write_team_report(con, team, DAY, DAY, DAY.isoformat(), tmp_path / "reports")
            assert all(p.is_file() for p in paths)

"""Property: whatever happens to the landing files, the run does not crash and no money goes missing.

Hypothesis corrupts the files of a small simulated day at random (truncation, flipped bytes, garbage
lines, deleted and repeated lines, NaN amounts, stray quotes); the day must still run through every
check, reconcile to the cent (what the ledger allocates equals the bill lines that landed, staged or
quarantined), and account for every bill line: staged, or quarantined with a reason."""

import shutil
from datetime import date

import duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from tests.support.bill_truth import current_bill_files
from tests.support.depth import examples
from tests.support.pipeline import run_pipeline

# a minute or more: runs in CI too (`-m "not slow"` leaves it out of a quick local run)
pytestmark = pytest.mark.slow

DAY = date(2026, 11, 2)
KINDS = ["truncate", "flip", "garbage", "delete", "repeat", "nan", "quote"]


def _corrupt(data: bytes, kind: str, at: float, parquet: bool) -> bytes:
    if not data:
        return data
    pos = int(at * (len(data) - 1))
    if kind == "truncate" or parquet and kind != "flip":
        return data[:pos]
    if kind == "flip":
        return data[:pos] + bytes([data[pos] ^ 0xFF]) + data[pos + 1:]
    lines = data.split(b"\n")
    i = 1 + int(at * max(len(lines) - 2, 0))
    if kind == "garbage":
        lines.insert(i, b"\x00\xff garbage,,,\"")
    elif kind == "delete" and len(lines) > 2:
        del lines[i]
    elif kind == "repeat":
        lines.insert(i, lines[i])
    elif kind == "nan":
        lines[i] = lines[i].replace(b",", b",NaN,", 1)
    elif kind == "quote":
        lines[i] = b'"' + lines[i]
    return b"\n".join(lines)


def _template(tmp_path_factory):
    from simulator import simulate

    root = tmp_path_factory.getbasetemp() / "corruption_template"
    if not root.exists():
        simulate(root, DAY, 1, nodes=2, seed=13)
        config = root / "gpuledger.yaml"
        from pipelines.lib.config.strict_yaml import dump_yaml, load_yaml

        org = load_yaml(config.read_text()).data   # its quarantine section replaced: a second one is refused
        config.write_text(dump_yaml({**org, "quarantine": {"max_share": 1.0}}))
    return root


@settings(max_examples=examples(6), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(["bill", "sacct", "telemetry", "runs"]), st.sampled_from(KINDS),
                          st.floats(0, 1)), min_size=1, max_size=3))
def test_corrupted_landing_never_crashes_and_loses_no_money(tmp_path_factory, corruptions):
    template = _template(tmp_path_factory)
    work = tmp_path_factory.mktemp("corrupted")
    shutil.copytree(template, work, dirs_exist_ok=True)
    landing = work / "landing"
    files = {
        "bill": current_bill_files(landing),  # the deliveries that are the bill (the manifest's word)
        "sacct": sorted((landing / "scheduler" / "slurm").rglob("*.psv")),
        "telemetry": sorted((landing / "telemetry" / "dcgm").rglob("*.parquet")),
        "runs": sorted((landing / "runs").glob("*.jsonl")),
    }
    for which, kind, at in corruptions:
        if files[which]:
            path = files[which][int(at * (len(files[which]) - 1))]
            path.write_bytes(_corrupt(path.read_bytes(), kind, at, path.suffix == ".parquet"))

    failed = run_pipeline(landing, work / "w.duckdb", work / "gpuledger.yaml", [DAY])
    with duckdb.connect(str(work / "w.duckdb"), read_only=True) as con:
        bill_lines = con.execute("SELECT count(*) FROM intermediate.int_bill_line_hours WHERE day = $d", {"d": DAY}).fetchall()[0][0]
    if bill_lines == 0:
        # nothing of the day's bill could be read: the day must be stopped, saying so, not published empty
        assert failed and "expect_table_row_count_to_be_between" in str(failed), failed
        return
    assert not failed, failed

    with duckdb.connect(str(work / "w.published.duckdb"), read_only=True) as con:
        # a row per currency of the day (AWS bills in USD, west's GPU cloud in EUR), each reconciled
        differences = con.execute(
            "SELECT billing_currency, difference_effective_cost, difference_billed_cost FROM finance.reconciliation_daily "
            "WHERE day = $d", {"d": DAY}).fetchall()
        assert differences and all(e == 0 and b == 0 for _, e, b in differences), differences
        accounted = dict(con.execute(
            """SELECT file, rows_staged + rows_quarantined FROM ops.landed_files
               WHERE source = 'focus' AND status IN ('current', 'unreadable')""").fetchall())
    for bill in files["bill"]:
        rel = bill.relative_to(landing).as_posix()
        lines = [l for l in bill.read_bytes().split(b"\n")[1:] if l.strip()]
        # every non-empty line after the header is a row, staged or quarantined (a whole unreadable file
        # is one quarantine row), unless a record legitimately spans lines
        assert accounted[rel] == len(lines) or accounted[rel] == 1, (rel, accounted[rel], len(lines))

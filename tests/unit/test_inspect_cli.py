"""`gpuledger inspect` on tiny landings: `--strict` fails on a quarantined row or an unreadable file
and says why in its last line; without it, exit 0; a row's reasons are listed one a line."""

from __future__ import annotations

import json

import pytest

from pipelines.cli.main import main

FOCUS = ("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost\n"
         "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,1.25,1.25\n")
# three problems on one line: an amount that is no number, a category FOCUS does not have, no EffectiveCost
THREE_PROBLEMS = "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Refund,x,\n"


def _landing(tmp_path, bill: str):
    bills = tmp_path / "bills" / "focus"
    bills.mkdir(parents=True)
    (bills / "b.csv").write_text(bill)
    return tmp_path


def _inspect(capsys, landing, *flags) -> tuple[int, str, str]:
    code = main(["inspect", "--landing", str(landing), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_strict_fails_on_a_quarantined_row_and_names_it(tmp_path, capsys):
    landing = _landing(tmp_path, FOCUS + THREE_PROBLEMS)
    code, out, err = _inspect(capsys, landing, "--strict")
    assert code == 1
    assert err.splitlines()[-1] == "inspect --strict: 1 row quarantined (first: bills/focus/b.csv row 2)"
    assert out.startswith("1 file, 2 rows; 1 row quarantined, in")
    # every reason of the row, in plain words, one a line
    assert "\n    BilledCost 'x' is not a number\n" in out
    assert "\n    charge_category 'Refund' is not one of Usage, Purchase, Tax, Credit,\n      Adjustment\n" in out
    assert "\n    effective_cost is empty\n" in out
    # without --strict the same landing exits 0, as before
    code, _, err = _inspect(capsys, landing)
    assert (code, err) == (0, "")


def test_strict_fails_on_an_unreadable_file_also_with_json(tmp_path, capsys):
    landing = _landing(tmp_path, FOCUS)
    runs = landing / "runs"
    runs.mkdir()
    (runs / "latin1.jsonl").write_bytes(b'{"event": "step", "run_id": "caf\xe9"}\n')
    code, out, err = _inspect(capsys, landing, "--strict", "--json")
    assert code == 1
    assert json.loads(out)["runs"]["unreadable_files"] == ["runs/latin1.jsonl"]   # stdout stays JSON
    assert err.strip() == "inspect --strict: 1 row quarantined and 1 file unreadable (first: runs/latin1.jsonl)"


def test_strict_passes_a_clean_landing(tmp_path, capsys):
    code, out, err = _inspect(capsys, _landing(tmp_path, FOCUS), "--strict")
    assert (code, err) == (0, "")
    assert out.startswith("1 file, 1 row; nothing quarantined, in")


@pytest.mark.parametrize("flags", [(), ("--verbose",)])
def test_the_summary_fits_80_columns(tmp_path, capsys, flags):
    landing = _landing(tmp_path, FOCUS + THREE_PROBLEMS * 3)
    _, out, _ = _inspect(capsys, landing, *flags)
    assert max(len(line) for line in out.splitlines()) <= 80, out

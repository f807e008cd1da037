"""The FOCUS export against the FinOps Foundation's focus-validator, when it is installed
(docs/focus-export.md#conformance-measured-with-the-finops-focus-validator). It is no project dependency: 2.2.1 needs Python 3.12
exactly (numpy<2) and the project runs on 3.11, so CI does not install it; /work/shared/peers/setup.sh (or
`pip install focus-validator==2.2.1 pyarrow==21.0.0 numpy==1.26.4` in a 3.12 venv) does. The test finds it
by $FOCUS_VALIDATOR (the `focus-validator` script), else under $PEER_DIR (default /tmp/gl-peers), else on
PATH, and skips when there is none. It runs offline on the rules the wheel bundles (FOCUS 1.2)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pipelines.exports import export_focus

# Rules no FOCUS file with invoiced charges can pass (docs/focus-export.md): the model encodes "InvoiceId MUST
# be null when the charge is not associated … with an invoice" without its condition, so every non-NULL
# InvoiceId fails it; its sibling (MUST NOT be null …) and their OR pass.
VALIDATOR_FALSE_POSITIVES = {"InvoiceId-C-004-C"}
_TOTALS = re.compile(r"^Total: (\d+) \| Pass: (\d+) \| Fail: (\d+) \| Skipped: (\d+)", re.M)
_FAILED = re.compile(r"^❌ ([A-Za-z]+-[A-Z]-\d{3}-[A-Z]): FAIL", re.M)


def _validator() -> Path | None:
    peer_dir = Path(os.environ.get("PEER_DIR", "/tmp/gl-peers"))
    for candidate in (os.environ.get("FOCUS_VALIDATOR"), peer_dir / "validator" / "bin" / "focus-validator",
                      shutil.which("focus-validator")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


# skipped before any fixture is built (the simulated ledger takes a minute)
pytestmark = pytest.mark.skipif(_validator() is None, reason="focus-validator is not installed "
                                "(set FOCUS_VALIDATOR, or run /work/shared/peers/setup.sh)")


@pytest.fixture(scope="module")
def validator(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(the script, a working directory for it, its bundled rules folder)."""
    script = _validator()
    python = script.parent / "python"
    package = Path(subprocess.run([python, "-c", "import focus_validator, os; print(os.path.dirname("
                                   "focus_validator.__file__))"], capture_output=True, text=True,
                                  check=True).stdout.strip())
    # 2.2.1 opens focus_validator/rules/currency_codes.csv relative to its working directory
    cwd = tmp_path_factory.mktemp("focus_validator_cwd")
    (cwd / "focus_validator").symlink_to(package)
    return script, cwd, package / "rules"


def _validate(validator, data: Path) -> tuple[dict[str, int], set[str], str]:
    script, cwd, rules = validator
    run = subprocess.run([script, "--data-file", data, "--validate-version", "1.2", "--rule-set-path", rules,
                          "--block-download"], cwd=cwd, capture_output=True, text=True, timeout=600)
    out = run.stdout + run.stderr
    totals = _TOTALS.search(out)
    assert run.returncode == 0 and totals, out[-3000:]
    counts = dict(zip(("total", "pass", "fail", "skipped"), map(int, totals.groups())))
    return counts, set(_FAILED.findall(out)), out


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_export_passes_focus_validator(validator, simulated_ledger, tmp_path, suffix):
    """Every rule the validator checks passes but its one false positive, on the simulated fleet's export:
    bill lines of two providers (one in EUR, with a `€` description and GB-Month units, none with a
    ServiceSubcategory) and the config's cost lines, which no provider invoices."""
    out = tmp_path / f"focus{suffix}"
    with simulated_ledger.connect() as con:
        assert export_focus(con, simulated_ledger.days[0], simulated_ledger.days[-1], out) > 0
    counts, failed, report = _validate(validator, out)
    assert failed == VALIDATOR_FALSE_POSITIVES, report[-3000:]
    assert counts["fail"] == len(VALIDATOR_FALSE_POSITIVES) and counts["pass"] > 100, counts


def test_allowed_subcategories_are_the_validators(validator):
    """The export's ServiceSubcategory table (00_focus_values.sql) is the validator's allowed pairs."""
    import duckdb

    from pipelines.lib.warehouse import run_sql

    model = json.loads(next(validator[2].glob("model-1.2*.json")).read_text())
    items = model["ModelRules"]["ServiceSubcategory-C-004-M"]["ValidationCriteria"]["Requirement"]["Items"]
    theirs = {tuple(next(i["Value"] for i in pair["Items"] if i["ColumnName"] == c)
                    for c in ("ServiceCategory", "ServiceSubcategory")) for pair in items}
    with duckdb.connect() as con:
        run_sql(con, "exports/focus_allocation/00_focus_values", {})
        ours = set(con.execute("SELECT service_category, service_subcategory FROM focus_service_subcategories").fetchall())
    assert ours == theirs

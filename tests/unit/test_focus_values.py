"""How the FOCUS export spells the values FOCUS constrains (sql/exports/focus_allocation/00_focus_values.sql,
docs/focus-export.md#values-focus-constrains): text as printable ASCII, units in FOCUS UnitFormat, a
ServiceSubcategory from the allowed values under its ServiceCategory, never NULL. Each rule is checked
against the spec's own words (FOCUS_Spec v1.2, attributes/unit_format.md, columns/servicesubcategory.md),
written out here, not against the code under test; tests/e2e/test_focus_validator.py runs the FinOps
focus-validator itself when it is installed."""

from __future__ import annotations

import re

import duckdb
import pytest

from pipelines.lib.warehouse import run_sql

STEP = "exports/focus_allocation/00_focus_values"

# FOCUS UnitFormat, from the attribute's requirements: `<plural-units>`, `<singular-unit>-<plural-time-units>`,
# `<plural-units>/<singular-time-unit>`, `<quantity> <plural-units>`, `<plural-units>/<interval>
# <plural-time-units>`; time units are Year, Month, Day, Hour, Minute, Second; a count unit is a
# capitalised noun (or a data-size abbreviation like GB, kWh's k excepted by the validator's looser rule).
_TIME_SINGULAR = "Year|Month|Day|Hour|Minute|Second"
_TIME_PLURAL = "Years|Months|Days|Hours|Minutes|Seconds"
_WORDS = r"[A-Za-z][A-Za-z0-9]*(?: [A-Za-z][A-Za-z0-9]*)*"
UNIT_FORMAT = re.compile(
    rf"^(?:(?:{_TIME_PLURAL})|{_WORDS}"
    rf"|{_WORDS}-(?:{_TIME_PLURAL})"
    rf"|{_WORDS}/(?:{_TIME_SINGULAR})"
    rf"|[0-9]+ {_WORDS}"
    rf"|{_WORDS}/[0-9]+ (?:{_TIME_PLURAL}))$")
_SINGULAR_TIME = re.compile(rf"^(?:{_TIME_SINGULAR})$")

PRINTABLE_ASCII = re.compile(r"^[\x20-\x7e]*$")

# the FOCUS 1.2 ServiceCategory values (columns/servicecategory.md)
SERVICE_CATEGORIES = (
    "AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases", "Developer Tools",
    "Identity", "Integration", "Internet of Things", "Management and Governance", "Media", "Migration",
    "Mobile", "Multicloud", "Networking", "Security", "Storage", "Web", "Other",
)


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    run_sql(c, STEP, {})
    yield c
    c.close()


def _one(con, expr: str, **params):
    return con.execute(f"SELECT {expr}", params).fetchall()[0][0]


# --- ChargeDescription and the other names: printable ASCII ----------------------------------------

@pytest.mark.parametrize("text, want", [
    # the simulated EUR provider's description (the validator's ChargeDescription-C-002-M failure)
    ("€40.96575 per On Demand Linux p4de.24xlarge Instance Hour",
     "EUR 40.96575 per On Demand Linux p4de.24xlarge Instance Hour"),
    ("£0.5 per GB", "GBP 0.5 per GB"),
    ("Preis 3,20 € pro Stunde", "Preis 3,20 EUR pro Stunde"),
    ("Crème brûlée Zürich", "Creme brulee Zurich"),
    ("8 × H100 – spot “best effort” …", '8 x H100 - spot "best effort" ...'),
    ("line one\nline two\ttab", "line one line two tab"),
    ("plain ASCII stays as it is: $1.25/hr (50% off)", "plain ASCII stays as it is: $1.25/hr (50% off)"),
    ("GPU Ω node", "GPU ? node"),
    (None, None),
])
def test_text_becomes_printable_ascii(con, text, want):
    got = _one(con, "focus_ascii($t)", t=text)
    assert got == want
    assert got is None or PRINTABLE_ASCII.match(got)


def test_every_character_becomes_printable_ascii(con):
    """Whatever a bill holds (here every code point from 1 to 0x3000 but the surrogates, and some
    beyond), the export's text is printable ASCII, of which every printable character is kept."""
    chars = [chr(c) for c in (*range(1, 0x3000), 0x20AC, 0x20B9, 0x1F600) if not 0xD800 <= c <= 0xDFFF]
    got = _one(con, "focus_ascii($t)", t="".join(chars))
    assert PRINTABLE_ASCII.match(got)
    assert "".join(chr(c) for c in range(0x20, 0x7F)) in got


# --- PricingUnit and ConsumedUnit: UnitFormat --------------------------------------------------------

@pytest.mark.parametrize("unit, want", [
    ("GB-Month", "GB-Months"),      # the simulated bills' storage unit (PricingUnit-C-003-O)
    ("Month", "Months"),
    ("Hrs", "Hours"), ("hour", "Hours"), ("Hours", "Hours"),
    ("GB-Mo", "GB-Months"), (" GB - month ", "GB-Months"), ("vCPU-Hour", "vCPU-Hours"),
    ("Requests/Hours", "Requests/Hour"), ("GB/Secs", "GB/Second"),
    # already UnitFormat, or not a time unit: as the bill spells it
    ("GB", "GB"), ("GPU-Hours", "GPU-Hours"), ("kWh", "kWh"), ("1000 Requests", "1000 Requests"),
    ("Units/3 Months", "Units/3 Months"), ("Requests", "Requests"), ("IOs", "IOs"),
    (None, None),
])
def test_units_take_focus_time_spellings(con, unit, want):
    assert _one(con, "focus_unit($u)", u=unit) == want


@pytest.mark.parametrize("unit", ["GB-Month", "Month", "Hrs", "GB-Mo", "hour", "vCPU-Hour", "Requests/Hours",
                                  "GB", "GPU-Hours", "Hours", "kWh", "1000 Requests", "Units/3 Months"])
def test_units_are_in_unit_format(con, unit):
    got = _one(con, "focus_unit($u)", u=unit)
    assert UNIT_FORMAT.match(got), got
    # a time unit alone is `<plural-units>`
    assert not _SINGULAR_TIME.match(got), got


# --- ServiceSubcategory: never NULL, an allowed value of its ServiceCategory ---------------------------

def test_allowed_subcategories_have_one_parent_and_an_other(con):
    pairs = con.execute("SELECT service_category, service_subcategory FROM focus_service_subcategories").fetchall()
    assert len(pairs) == 82 and len({s for _, s in pairs}) == 82          # one parent each
    assert {c for c, _ in pairs} == set(SERVICE_CATEGORIES)
    for category in SERVICE_CATEGORIES:
        others = [s for c, s in pairs if c == category and s.startswith("Other")]
        assert others == [f"Other ({category})"], category


@pytest.mark.parametrize("category, subcategory, want", [
    ("Compute", "Virtual Machines", "Virtual Machines"),     # the bill's, allowed under its category
    ("Storage", "Object Storage", "Object Storage"),
    ("Compute", None, "Other (Compute)"),                   # the simulated bills name none (ServiceSubcategory-C-002-M)
    ("Networking", None, "Other (Networking)"),
    ("Storage", "Virtual Machines", "Other (Storage)"),     # not a subcategory of Storage
    ("Compute", "GPU Clusters", "Other (Compute)"),         # not an allowed value
    ("Other", None, "Other (Other)"),
    ("Bogus", None, "Other (Other)"),                       # no FOCUS category (a bad bill's) and none at all
    (None, None, "Other (Other)"),
])
def test_subcategory_is_allowed_under_its_category(con, category, subcategory, want):
    assert _one(con, "focus_service_subcategory($c, $s)", c=category, s=subcategory) == want


def test_every_category_gets_an_allowed_subcategory(con):
    got = con.execute(
        """SELECT c, focus_service_subcategory(c, NULL) IN
                  (SELECT service_subcategory FROM focus_service_subcategories WHERE service_category = c)
           FROM unnest($cats) t(c)""", {"cats": list(SERVICE_CATEGORIES)}).fetchall()
    assert [c for c, ok in got if not ok] == []

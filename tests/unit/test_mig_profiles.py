"""The MIG profile catalog and the share units a GPU is weighed in (models/mig_profiles.py)."""

import pytest

from models.mig_profiles import MIG_PROFILES, SHARE_UNITS_PER_GPU, fraction_units, profile_of, profile_units
from tests.support.sql_steps import warehouse


def test_the_sql_weighs_a_gpu_in_the_same_share_units():
    con = warehouse()
    assert con.execute("SELECT share_units_per_gpu()").fetchall() == [(SHARE_UNITS_PER_GPU,)]


def test_every_profile_is_a_whole_number_of_units():
    for name, (slices, total) in MIG_PROFILES.items():
        assert slices * SHARE_UNITS_PER_GPU % total == 0, name
        assert int(name.split("g.")[0]) == slices, name


@pytest.mark.parametrize("name, profile, units", [
    ("3g.40gb", "3g.40gb", 3000), ("a100_3g.40gb", "3g.40gb", 3000), ("1g.10gb+me", "1g.10gb+me", 1000),
    ("nvidia_a30_2g.12gb", "2g.12gb", 3500), ("7g.80gb", "7g.80gb", 7000), ("h100", None, None),
    ("5g.50gb", "5g.50gb", None),
])
def test_profiles(name, profile, units):
    assert profile_of(name) == profile
    assert (profile_units(profile) if profile else None) == units


@pytest.mark.parametrize("text, units", [
    ("0.5", 3500), ("0.25", 1750), ("0.33", 2310), ("1", 7000), (" 0.001 ", 7),
    ("0.33333", 2333),   # kept to 1/7000 of a GPU, half-even
    ("0", None), ("1.5", None), ("-0.5", None), ("half", None), ("NaN", None), ("0.00001", None),
])
def test_fractions(text, units):
    assert fraction_units(text) == units

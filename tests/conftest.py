from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# Real public samples live beside the project in ../shared (never copied in); a user's clone has none.
REAL = PROJECT_ROOT.parent / "shared" / "data" / "real"


@pytest.fixture
def real() -> Path:
    if not REAL.is_dir():
        pytest.skip("../shared/data/real is not present in this checkout")
    return REAL

"""Loads the reference catalogs of models/ into the warehouse, so SQL joins them like any table."""

from dataclasses import asdict

import duckdb
import polars as pl

from models.gpu_catalog import PEAK_FLOPS, TDP_WATTS, gpu_model_patterns
from models.ledger_categories import CATEGORIES


# the tables load_reference (re)creates
TABLES = ("intermediate.ref_gpu_peak_flops", "intermediate.ref_gpu_model_patterns", "intermediate.ref_gpu_tdp",
          "marts.dim_ledger_categories")


def load_reference(con: duckdb.DuckDBPyConnection) -> None:
    peaks = pl.DataFrame(
        [{"gpu_model": m, "dtype": d, "peak_flops": f} for m, by_dtype in PEAK_FLOPS.items() for d, f in by_dtype.items()]
    )
    patterns = pl.DataFrame(
        [{"ord": i, "pattern": p, "gpu_model": m} for i, (p, m) in enumerate(gpu_model_patterns())]
    )
    con.register("peaks_in", peaks)
    con.register("patterns_in", patterns)
    con.execute("CREATE OR REPLACE TABLE intermediate.ref_gpu_peak_flops AS SELECT * FROM peaks_in")
    con.execute("CREATE OR REPLACE TABLE intermediate.ref_gpu_model_patterns AS SELECT * FROM patterns_in")
    tdp = pl.DataFrame([{"gpu_model": m, "tdp_w": w} for m, w in TDP_WATTS.items()])
    con.register("tdp_in", tdp)
    con.execute("CREATE OR REPLACE TABLE intermediate.ref_gpu_tdp AS SELECT * FROM tdp_in")
    con.unregister("tdp_in")
    con.unregister("peaks_in")
    con.unregister("patterns_in")
    # a dimension of the published marts: finance and report SQL read it there
    categories = pl.DataFrame([{"ord": i, **asdict(c)} for i, c in enumerate(CATEGORIES)])
    con.register("categories_in", categories)
    con.execute("CREATE OR REPLACE TABLE marts.dim_ledger_categories AS SELECT * FROM categories_in")
    con.unregister("categories_in")


def reference_fingerprint() -> str:
    """What load_reference loads, as text: when it changes, a warehouse's reference tables are reloaded."""
    return repr((PEAK_FLOPS, TDP_WATTS, list(gpu_model_patterns()), [asdict(c) for c in CATEGORIES]))

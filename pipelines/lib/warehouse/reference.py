"""Loads the reference catalogs of models/ into the warehouse, so SQL joins them like any table."""

from dataclasses import asdict

import duckdb
import polars as pl

from models.gpu_catalog import MEMORY_GB, PEAK_FLOPS, TDP_WATTS, gpu_model_patterns
from models.ledger_categories import CATEGORIES, LINE_RULES
from models.mig_profiles import PROFILES_BY_GPU_MEMORY_GB, profile_memory_gb, profile_units


# the tables load_reference (re)creates
TABLES = ("intermediate.ref_gpu_peak_flops", "intermediate.ref_gpu_model_patterns", "intermediate.ref_gpu_tdp",
          "intermediate.ref_gpu_memory", "intermediate.ref_mig_slices", "marts.dim_ledger_categories",
          "intermediate.ref_line_placements")


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
    _load(con, "intermediate.ref_gpu_memory", gpu_memory())
    _load(con, "intermediate.ref_mig_slices", mig_slices())
    # a dimension of the published marts: finance and report SQL read it there
    categories = pl.DataFrame([{"ord": i, **asdict(c)} for i, c in enumerate(CATEGORIES)])
    con.register("categories_in", categories)
    con.execute("CREATE OR REPLACE TABLE marts.dim_ledger_categories AS SELECT * FROM categories_in")
    con.unregister("categories_in")
    _load(con, "intermediate.ref_line_placements", line_placements())


def line_placements() -> pl.DataFrame:
    """The rules placing a bill line that is not a GPU node-hour in a category, first match wins (`ord`)."""
    return pl.DataFrame([{"ord": i, **asdict(r)} for i, r in enumerate(LINE_RULES)],
                        schema={"ord": pl.Int32, "category": pl.Utf8, "quarantined": pl.Boolean,
                                "commitment_status": pl.Utf8, "charge_category": pl.Utf8,
                                "project_tagged": pl.Boolean, "service_category": pl.Utf8, "node_like": pl.Boolean})


def gpu_memory() -> pl.DataFrame:
    """Memory per GPU of each canonical model (GB)."""
    return pl.DataFrame([{"gpu_model": m, "memory_gb": gb} for m, gb in MEMORY_GB.items()],
                        schema={"gpu_model": pl.Utf8, "memory_gb": pl.Int32})


def mig_slices() -> pl.DataFrame:
    """The MIG profiles a GPU of each memory size is cut into: memory and share units of each."""
    return pl.DataFrame(
        [{"gpu_memory_gb": gb, "profile": p, "memory_gb": profile_memory_gb(p), "share_units": profile_units(p)}
         for gb, profiles in PROFILES_BY_GPU_MEMORY_GB.items() for p in profiles],
        schema={"gpu_memory_gb": pl.Int32, "profile": pl.Utf8, "memory_gb": pl.Int32, "share_units": pl.Int32})


def _load(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    con.register("reference_in", frame)
    con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM reference_in")  # a constant of this module
    con.unregister("reference_in")


def reference_fingerprint() -> str:
    """What load_reference loads, as text: when it changes, a warehouse's reference tables are reloaded."""
    return repr((PEAK_FLOPS, TDP_WATTS, MEMORY_GB, PROFILES_BY_GPU_MEMORY_GB, list(gpu_model_patterns()),
                 [asdict(c) for c in CATEGORIES], [asdict(r) for r in LINE_RULES]))

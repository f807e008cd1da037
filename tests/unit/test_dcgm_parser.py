from datetime import datetime, timezone

import polars as pl

from pipelines.ingest import dcgm

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _long(n=4):
    rows = []
    for i in range(n):
        ts = T0.replace(second=30 * (i % 2), minute=i // 2)
        for metric, value in (("DCGM_FI_DEV_GPU_UTIL", 50.0 + i), ("DCGM_FI_PROF_SM_ACTIVE", 0.5)):
            rows.append({"timestamp": ts, "Hostname": "h1", "gpu": 0, "UUID": "GPU-a", "modelName": "NVIDIA H100 80GB HBM3",
                         "metric": metric, "value": value, "hpc_job": "812"})
    return pl.DataFrame(rows).with_columns(pl.col("gpu").cast(pl.Int32))


def test_long_and_wide_give_the_same_samples():
    long = _long()
    wide = long.pivot(on="metric", index=["timestamp", "Hostname", "gpu", "UUID", "modelName", "hpc_job"], values="value")
    a = dcgm.from_frame(long, "long.parquet")
    b = dcgm.from_frame(wide, "wide.parquet")
    assert a.rejects.height == b.rejects.height == 0
    key = ["timestamp", "metric"]
    assert a.rows.sort(key).equals(b.rows.sort(key).select(a.rows.columns))
    assert a.rows["hostname"].unique().to_list() == ["h1"]  # `Hostname` label accepted
    assert a.rows["timestamp"].dtype == pl.Datetime("us")


def test_csv_text_values_sentinels_and_bad_values():
    df = pl.DataFrame(
        {
            "timestamp": ["2026-11-01T00:00:00Z", "2026-11-01T00:00:30Z", "2026-11-01T00:01:00Z", "2026-11-01T00:01:30Z", "2026-11-01T00:02:00Z", "x"],
            "hostname": ["h1"] * 6,
            "gpu": ["0"] * 6,
            "metric": ["DCGM_FI_DEV_GPU_UTIL"] * 5 + ["DCGM_FI_DEV_GPU_UTIL"],
            "value": ["10", "9223372036854775794", "NaN", "inf", "-3", "1"],
            "pod": ["", "", "", "", "", ""],
        }
    )
    parsed = dcgm.from_frame(df, "t.csv")
    assert parsed.rows["value"].to_list() == [10.0]
    assert parsed.rows["hpc_job"].to_list() == [None]  # empty pod label = no label
    assert parsed.dropped == {"unsupported_sentinel": 1}
    reasons = dict(parsed.rejects.select("row_ref", "reason").iter_rows())
    assert set(reasons) == {"row 3", "row 4", "row 5", "row 6"}
    assert reasons["row 3"] == "value is NaN, not a number"
    assert reasons["row 4"] == "value inf is not less than 9.22e+18"
    assert reasons["row 5"] == "value -3.0 is negative"
    assert reasons["row 6"] == "timestamp 'x' is not a timestamp"


def test_kubernetes_labels_become_the_job_label():
    df = _long(1).drop("hpc_job").with_columns(pl.lit("team-a").alias("namespace"), pl.lit("train-0").alias("pod"))
    parsed = dcgm.from_frame(df, "k.parquet")
    assert parsed.rows["hpc_job"].unique().to_list() == ["team-a/train-0"]

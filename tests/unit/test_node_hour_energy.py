"""intermediate.int_node_hour_energy on given GPU-minutes: the DCGM energy counter where it runs on
unbroken, mean power where it does not, the GPU model's TDP where there is no reading (hand-computed)."""

from datetime import date, datetime, timedelta
from decimal import Decimal

import polars as pl

from tests.support.sql_steps import given, rows_of, warehouse

DAY = date(2026, 11, 2)
H0 = datetime(2026, 11, 2, 0, 0)
MINUTE = {"day": date, "minute_ts": datetime, "hostname": str, "gpu": int, "gpu_instance": str,
          "first_sample_ts": datetime, "last_sample_ts": datetime, "power_avg_w": float,
          "energy_first_mj": float, "energy_last_mj": float}


def _minute(host, gpu, minute, power=None, first_mj=None, last_mj=None):
    ts = H0 + timedelta(minutes=minute)
    return {"day": DAY, "minute_ts": ts, "hostname": host, "gpu": gpu, "gpu_instance": None,
            "first_sample_ts": ts, "last_sample_ts": ts + timedelta(seconds=30), "power_avg_w": power,
            "energy_first_mj": first_mj, "energy_last_mj": last_mj}


def _energy(minutes, allocated=()):
    con = warehouse()
    given(con, "staging.stg_dcgm__gpu_minutes", minutes, schema=MINUTE)
    given(con, "intermediate.int_gpu_seconds",
          [{"day": DAY, "hostname": h, "hour_ts": t, "gpu_seconds": Decimal(s)} for h, t, s in allocated],
          schema={"day": date, "hostname": str, "hour_ts": datetime, "gpu_seconds": pl.Decimal(38, 6)})
    given(con, "intermediate.int_nodes", [{"day": DAY, "hostname": "t1", "gpu_model": "NVIDIA H100 80GB HBM3"}])
    rows = rows_of(con, "intermediate/int_node_hour_energy",
                   {"day": DAY, "energy_pue": "1.5", "kg_co2e_per_kwh": "0.4"}, order_by="hostname, hour_ts")
    return {(r["hostname"], r["hour_ts"].hour): (r["gpu_kwh"], r["kwh"], r["energy_basis"]) for r in rows}


def test_the_counter_measures_the_hour_and_power_or_tdp_fill_in_where_it_cannot():
    minutes = []
    # n1 GPU 0, hour 0: the counter every minute, rising 6,000 J a minute (100 W) plus 500 J inside the
    # first minute; its power readings (999 W) are not used where the counter is
    for m in range(60):
        minutes.append(_minute("n1", 0, m, power=999.0, first_mj=1e9 + 6e6 * m - (5e5 if m == 0 else 0),
                               last_mj=1e9 + 6e6 * m))
    # n1 GPU 0, hour 1: the counter breaks off for 10 minutes (minutes 70..79 missing): power (200 W) for
    # the hour instead
    for m in list(range(60, 70)) + list(range(80, 120)):
        minutes.append(_minute("n1", 0, m, power=200.0, first_mj=2e9 + 6e6 * m, last_mj=2e9 + 6e6 * m))
    # n1 GPU 0, hour 2: the counter falls back (a driver reload) at minute 130: power (300 W)
    for m in range(120, 180):
        base = 3e9 if m < 130 else 0.0
        minutes.append(_minute("n1", 0, m, power=300.0, first_mj=base + 6e6 * m, last_mj=base + 6e6 * m))
    # n2 GPU 3, hour 0: power only, two readings of 100 and 300 W: 200 W for the hour
    minutes += [_minute("n2", 3, 5, power=100.0), _minute("n2", 3, 6, power=300.0)]
    # t1 has no telemetry, a job held 7,200 GPU-seconds in hour 4: the H100's 700 W for them
    got = _energy(minutes, allocated=[("t1", H0 + timedelta(hours=4), "7200")])

    # hour 0: 500 J in the first minute + 59 rises of 6,000 J = 354,500 J = 0.098472222 kWh (to 1e-9)
    assert got[("n1", 0)] == (Decimal("0.098472222"), Decimal("0.098472222") * Decimal("1.5"), "dcgm_energy")
    assert got[("n1", 1)][0] == Decimal("0.200000000") and got[("n1", 1)][2] == "dcgm_power"
    assert got[("n1", 2)][0] == Decimal("0.300000000") and got[("n1", 2)][2] == "dcgm_power"
    assert got[("n2", 0)][0] == Decimal("0.200000000") and got[("n2", 0)][2] == "dcgm_power"
    # 7,200 GPU-seconds at 700 W = 1.4 kWh
    assert got[("t1", 4)][0] == Decimal("1.400000000") and got[("t1", 4)][2] == "tdp_allocated"
    assert len(got) == 5


def test_a_node_hour_is_counted_by_the_counter_only_when_every_gpu_is():
    minutes = [_minute("n1", g, m, power=100.0, first_mj=6e6 * m, last_mj=6e6 * m) for g in (0, 1) for m in range(60)]
    minutes += [_minute("n1", 2, m, power=100.0) for m in range(60)]   # a GPU without the counter: its power
    got = _energy(minutes)
    # GPUs 0 and 1: 59 rises of 6,000 J each (the first minute has one reading: no rise), 2 × 354,000 J
    # = 0.196666… kWh; GPU 2: 100 W for the hour = 0.1 kWh; to 1e-9
    assert got[("n1", 0)][0] == Decimal("0.296666667")
    assert got[("n1", 0)][2] == "dcgm_power"

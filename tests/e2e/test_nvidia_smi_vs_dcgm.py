"""A fleet with only nvidia-smi gets the ledger DCGM gives it (docs/ingest/nvidia-smi.md).

One 8-GPU node's day, the same activity landed twice: as dcgm-exporter Parquet (written by
tests/support/scenario_builder.py) and as the `nvidia-smi --query-gpu ... --format=csv -l 30` log of the
node, written here, in the node's local time (Europe/Berlin, said by the sidecar) with the header
repeated as a restarted `-l` log repeats it. Each is run through the pipeline on its own; the GPU-seconds
of every ledger category must agree to 1 %, and both must be what the activity says on paper.

The jobs hold the whole node, so nvidia-smi (no job label: a job is judged by all its host's GPUs,
docs/ledger.md#which-gpus-a-job-holds) and DCGM (per GPU, by the hpc_job label) see the same thing.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal as D
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.support.pipeline import ledger_of
from tests.support.scenario_builder import H100, SAMPLE_S, Activity, Landing, utc

DAY = date(2026, 11, 2)
HOUR = 3600
GPUS = 8
LOCAL = ZoneInfo("Europe/Berlin")
GAP = (utc(2026, 11, 2, 12), utc(2026, 11, 2, 12, 30))   # the node's telemetry is down: unmonitored
HEADER = ("timestamp, name, pci.bus_id, index, uuid, utilization.gpu [%], utilization.memory [%], "
          "memory.used [MiB], memory.total [MiB], power.draw [W]")
# (start, end, job, busy): the whole node, all 8 GPUs alike
ACTIVITY = [
    (utc(2026, 11, 2, 0), utc(2026, 11, 2, 3), "1001", True),
    (utc(2026, 11, 2, 3), utc(2026, 11, 2, 4), "1001", False),       # a stalled loader: 60 min idle
    (utc(2026, 11, 2, 4), utc(2026, 11, 2, 5), "1001", True),
    (utc(2026, 11, 2, 5), utc(2026, 11, 2, 5, 5), "1001", False),    # 5 min: shorter than a stretch
    (utc(2026, 11, 2, 5, 5), utc(2026, 11, 2, 8), "1001", True),
    (utc(2026, 11, 2, 10), utc(2026, 11, 2, 15), "1002", True),
    (utc(2026, 11, 2, 15), utc(2026, 11, 2, 15, 30), "1002", False),
    (utc(2026, 11, 2, 15, 30), utc(2026, 11, 2, 20), "1002", True),
    (utc(2026, 11, 2, 20, 30), utc(2026, 11, 2, 22, 30), "1003", False),  # a hung job, idle throughout
]
JOBS = [("1001", "00:00:00", "08:00:00"), ("1002", "10:00:00", "20:00:00"), ("1003", "20:30:00", "22:30:00")]
# on paper, in node-hours of 8 GPUs: allocated 8 + 10 + 2 = 20 h, the rest of the 24 unallocated
EXPECTED_HOURS = {"productive": 7 + 9, "allocated_idle": 1 + 0.5 + 2, "unmonitored": 0.5, "idle_unallocated": 4}


def _landing(root, telemetry: str) -> Landing:
    L = Landing(root)
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "clusters": {"c1": {"timezone": "UTC"}}}
    L.node("n1", pool="pool-a", team="infra")
    L.node_hours("n1", utc(2026, 11, 2), 24, D("36.00"))
    for job, start, end in JOBS:
        L.job("c1", job, account="acct1", start=f"{DAY}T{start}", end=f"{DAY}T{end}", state="COMPLETED",
              host="n1", gpus=GPUS)
    if telemetry == "dcgm":
        L.telemetry("n1", [DAY], [Activity(a, b, job, busy, fb_mib=30000.0 if busy else 500.0)
                                  for a, b, job, busy in ACTIVITY], power_w=350.0)
    return L


def _drop_gap_from_dcgm(L: Landing) -> None:
    path = next((L.landing / "telemetry" / "dcgm").rglob("*.parquet"))
    table = pq.read_table(path)
    ts = table["timestamp"]
    start, end = (pa.scalar(t, type=ts.type) for t in GAP)
    keep = pc.or_(pc.less(ts, start), pc.greater_equal(ts, end))
    pq.write_table(table.filter(keep), path)


def _busy(t: datetime) -> bool:
    """As the DCGM writer samples an activity: the samples from its start's to its end's, end excluded."""
    day0 = utc(2026, 11, 2)
    i = int((t - day0).total_seconds()) // SAMPLE_S
    return any(int((a - day0).total_seconds()) // SAMPLE_S <= i < int((b - day0).total_seconds()) // SAMPLE_S
               and busy for a, b, _, busy in ACTIVITY)


def _write_nvidia_smi(L: Landing) -> None:
    folder = L.landing / "telemetry" / "nvidia_smi" / "n1" / f"day={DAY}"
    folder.mkdir(parents=True)
    (folder / "nvidia_smi.yaml").write_text("timezone: Europe/Berlin\n")
    lines = [HEADER]
    for i in range(86400 // SAMPLE_S):
        t = utc(2026, 11, 2) + timedelta(seconds=i * SAMPLE_S)
        if GAP[0] <= t < GAP[1]:
            continue
        if i and i % 960 == 0:          # `-l` restarted by logrotate every 8 hours: the header again
            lines.append(HEADER)
        busy = _busy(t)
        for gpu in range(GPUS):
            # nvidia-smi stamps each GPU's line a little later, in the node's local time, to the millisecond
            local = (t + timedelta(milliseconds=120 + 3 * gpu)).astimezone(LOCAL)
            stamp = local.strftime("%Y/%m/%d %H:%M:%S.") + f"{local.microsecond // 1000:03d}"
            util, mem, fb = (100, 45, 30000) if busy else (0, 0, 500)
            lines.append(f"{stamp}, {H100}, 00000000:{0x18 + gpu:02X}:00.0, {gpu}, GPU-n1-{gpu}, {util} %, "
                         f"{mem} %, {fb} MiB, 81559 MiB, 350.00 W")
    (folder / "n1.csv").write_text("\n".join(lines) + "\n")


def _categories(con) -> dict[str, float]:
    return dict(con.execute("SELECT category, sum(gpu_seconds) FROM marts.fct_cost_daily WHERE day = ? "
                            "AND gpu_seconds > 0 GROUP BY category", [DAY]).fetchall())


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory):
    dcgm = _landing(tmp_path_factory.mktemp("dcgm"), "dcgm")
    smi = _landing(tmp_path_factory.mktemp("nvidia_smi"), "nvidia_smi")
    dcgm.write()
    _drop_gap_from_dcgm(dcgm)
    smi.write()
    _write_nvidia_smi(smi)
    out = {}
    for name, L in (("dcgm", dcgm), ("nvidia_smi", smi)):
        L.write = lambda: None        # written above; ledger_of writes a landing before it runs it
        with ledger_of(L, [DAY]) as con:
            out[name] = {
                "categories": _categories(con),
                "landed": con.execute("SELECT source, count(*), sum(rows_quarantined) FROM ops.landed_files "
                                      "WHERE source IN ('dcgm', 'nvidia_smi') GROUP BY source").fetchall(),
                "quarantined": con.execute("SELECT count(*) FROM ops.quarantine WHERE source = 'nvidia_smi'")
                .fetchone()[0],
                "energy": con.execute("SELECT energy_basis, sum(gpu_kwh) FROM intermediate.int_node_hour_energy "
                                      "WHERE day = ? GROUP BY 1", [DAY]).fetchall(),
            }
    return out


def test_the_dcgm_day_is_what_the_activity_says(ledgers):
    got = ledgers["dcgm"]["categories"]
    assert set(got) == set(EXPECTED_HOURS)
    for category, hours in EXPECTED_HOURS.items():
        assert got[category] == pytest.approx(hours * HOUR * GPUS, abs=GPUS * 60), category


def test_nvidia_smi_gives_the_same_categories_as_dcgm(ledgers):
    dcgm, smi = ledgers["dcgm"]["categories"], ledgers["nvidia_smi"]["categories"]
    assert set(smi) == set(dcgm)
    for category, seconds in dcgm.items():
        assert smi[category] == pytest.approx(seconds, rel=0.01), category
    assert sum(smi.values()) == pytest.approx(24 * HOUR * GPUS)


def test_the_nvidia_smi_log_is_read_whole_and_alone(ledgers):
    smi = ledgers["nvidia_smi"]
    assert smi["landed"] == [("nvidia_smi", 1, 0)]   # the sidecar is no file of its own
    assert smi["quarantined"] == 0


def test_energy_is_power_times_time_on_both(ledgers):
    # neither landing has an energy counter: every GPU's 350 W over each hour it reported, by power
    for name in ("dcgm", "nvidia_smi"):
        (basis, kwh), = ledgers[name]["energy"]
        assert basis == "dcgm_power"
        assert float(kwh) == pytest.approx(24 * GPUS * 0.350, rel=0.03), name   # the gap's half hour has no power

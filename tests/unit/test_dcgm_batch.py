"""DCGM Parquet staged set-based (pipelines/ingest/dcgm_batch.py) is the per-file parser's result, row
for row: the same staging minutes, the same quarantine rows (reason, row, payload, day), the same
ops.landed_files entries and counts. The per-file parser (`dcgm.parse`, the reference) is run through
the same `landing.sync` with the batch pass switched off."""

from __future__ import annotations

import dataclasses
from datetime import date, datetime, timedelta, timezone

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.ingest import dcgm_batch
from pipelines.ingest.sources import DCGM
from pipelines.landing import source as landing_source, sync as landing
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import bootstrap, connect

DAY = date(2026, 11, 2)
T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)
FOLDER = f"telemetry/dcgm/day={DAY}"
PER_FILE = dataclasses.replace(DCGM, batch=None)
UTIL, SM = "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_SM_ACTIVE"


def _long(host="h1", minutes=3, gpus=2, **extra) -> dict[str, list]:
    """A clean long table: every 30 s, every GPU, two metrics."""
    rows = {"timestamp": [], "hostname": [], "gpu": [], "UUID": [], "modelName": [], "metric": [], "value": [],
            "hpc_job": []}
    for i in range(minutes * 2):
        for g in range(gpus):
            for metric, value in ((UTIL, 10.0 * (i % 3)), (SM, 0.25)):
                rows["timestamp"].append(T0 + timedelta(seconds=30 * i))
                rows["hostname"].append(host)
                rows["gpu"].append(g)
                rows["UUID"].append(f"GPU-{host}-{g}")
                rows["modelName"].append("NVIDIA H100 80GB HBM3")
                rows["metric"].append(metric)
                rows["value"].append(value)
                rows["hpc_job"].append("812" if i < 3 else None)
    rows.update(extra)
    return rows


def _write(root, name, columns: dict[str, list], types: dict[str, pa.DataType] | None = None) -> str:
    types = {"timestamp": pa.timestamp("us", tz="UTC"), "gpu": pa.int32(), **(types or {})}
    table = pa.table({c: pa.array(v, types.get(c)) for c, v in columns.items()})
    rel = f"{FOLDER}/{name}"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return rel


def _state(con) -> tuple:
    return (
        con.execute("SELECT * EXCLUDE (loaded_at) FROM ops.landed_files ORDER BY ALL").fetchall(),
        con.execute("SELECT * FROM staging.stg_dcgm__gpu_minutes ORDER BY ALL").fetchall(),
        con.execute("SELECT * FROM ops.quarantine ORDER BY ALL").fetchall(),
    )


def _report(r: landing_source.SyncReport) -> tuple:
    return sorted(r.files_read), r.rows_staged, r.rows_quarantined, r.rows_dropped


@pytest.fixture
def both(tmp_path, new_warehouse):
    """Syncs the landing zone into two warehouses, set-based and file by file; returns their states."""
    root = tmp_path / "landing"
    root.mkdir()
    cons = {}

    def sync(cfg: OrgConfig = OrgConfig()) -> tuple:
        out = []
        for kind, source in (("batch", DCGM), ("file", PER_FILE)):
            if kind not in cons:
                cons[kind] = new_warehouse(tmp_path / f"{kind}.duckdb")
            report = landing.sync(cons[kind], root, source, cfg, DAY)
            out.append((_report(report), _state(cons[kind])))
        return out

    yield root, sync
    for con in cons.values():
        con.close()


def test_clean_files_are_the_per_file_result(both):
    root, sync = both
    for host in ("h1", "h2", "h3"):
        _write(root, f"{host}.parquet", _long(host))
    (batch, file) = sync()
    assert batch == file
    report, (landed, minutes, quarantine) = batch
    assert report[1] == 3 * 6 * 2 * 2 and quarantine == []
    assert len(minutes) == 3 * 2 * 4  # hosts × GPUs × (3 minutes, the second split by the job label ending at 1:30)
    assert [row[4] for row in landed] == [24, 24, 24]


def test_every_kind_of_bad_row_is_worded_as_the_contract_words_it(both):
    root, sync = both
    bad = _long("h1", minutes=1, gpus=1)
    n = len(bad["timestamp"])
    cases = [  # timestamp, hostname, gpu, metric, value
        (None, "h1", 0, UTIL, 1.0), (T0, None, 0, UTIL, 1.0), (T0, "", 0, UTIL, 1.0), (T0, " \t", 0, UTIL, 1.0),
        (T0, "NULL", 0, UTIL, 1.0), (T0, "h1", None, UTIL, 1.0), (T0, "h1", 300, UTIL, 1.0), (T0, "h1", -1, UTIL, 1.0),
        (T0, "h1", 0, None, 1.0), (T0, "h1", 0, " ", 1.0), (T0, "h1", 0, UTIL, None), (T0, "h1", 0, UTIL, float("nan")),
        (T0, "h1", 0, UTIL, float("inf")), (T0, "h1", 0, UTIL, float("-inf")), (T0, "h1", 0, UTIL, -2.5),
        (T0, "h1", 0, UTIL, 9.3e18), (T0, "h1", 0, UTIL, 9.22e18), (datetime(2031, 1, 1, tzinfo=timezone.utc), "h1", 0, UTIL, 1.0),
        (None, "", 400, "", -1.0), (T0, "h1", 2**40, UTIL, 1.0),
        (datetime(1970, 1, 1, tzinfo=timezone.utc), "h1", 0, UTIL, 1.0),   # implausible: before 2000
        (datetime(2022, 5, 1, tzinfo=timezone.utc), "h1", 0, SM, 0.5),     # implausible: far from the file's median
    ]
    for ts, host, gpu, metric, value in cases:
        for column, v in (("timestamp", ts), ("hostname", host), ("gpu", gpu), ("metric", metric), ("value", value)):
            bad[column].append(v)
        for column in ("UUID", "modelName", "hpc_job"):
            bad[column].append(None)
    _write(root, "bad.parquet", bad, {"gpu": pa.int64()})
    _write(root, "good.parquet", _long("h2"))
    (batch, file) = sync()
    assert batch == file
    report, (landed, _, quarantine) = batch
    assert report[2] == len(cases) - 2 and report[3] == {"unsupported_sentinel": 2}
    refs = {row[2] for row in quarantine}
    assert {f"row {n + i}" for i in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 18, 19, 20)} <= refs
    assert "h1 gpu 0 at 1970-01-01 00:00:00.000000" in refs
    assert {(row[1], row[5]) for row in landed} == {(f"{FOLDER}/bad.parquet", len(cases) - 2),
                                                    (f"{FOLDER}/good.parquet", 0)}


def test_labels_and_types_are_read_as_the_per_file_parser_reads_them(both):
    root, sync = both
    k8s = _long("h1")
    n = len(k8s["timestamp"])
    del k8s["hpc_job"]
    k8s["namespace"] = ["team-a"] * (n // 2) + [None] * (n - n // 2)
    k8s["pod"] = ["train-0"] * (n // 3) + [""] * (n // 3) + ["infer-1"] * (n - 2 * (n // 3))
    k8s["hostname"] = ["h1"] * (n // 2) + [" h1\u00a0"] * (n - n // 2)  # the same host, trimmed as polars trims
    k8s["GPU_I_ID"] = ["1", "2"] * (n // 2)
    _write(root, "k8s.parquet", k8s)
    typed = _long("Hh2", minutes=2)
    typed["Hostname"] = typed.pop("hostname")
    typed["hpc_job"] = [812 if j else None for j in typed["hpc_job"]]  # job ids as integers
    _write(root, "naive-ns.parquet", typed, {"timestamp": pa.timestamp("ns"), "value": pa.float32(), "hpc_job": pa.int64(),
                                            "gpu": pa.uint8()})
    paris = _long("h3")
    paris["value"] = [int(v) for v in paris["value"]]
    _write(root, "paris-ms.parquet", paris, {"timestamp": pa.timestamp("ms", tz="Europe/Paris"), "value": pa.int64(),
                                             "hostname": pa.dictionary(pa.int32(), pa.string())})
    (batch, file) = sync()
    assert batch == file
    minutes = batch[1][1]
    assert {row[8] for row in minutes} >= {"team-a/train-0", "infer-1", None, "812"}
    assert {row[3] for row in minutes} == {"h1", "Hh2", "h3"}


def test_files_whose_columns_differ_in_type_are_read_apart(both):
    root, sync = both
    ints = _long("h1")
    ints["value"] = [int(v) for v in ints["value"]]
    _write(root, "a-ints.parquet", ints, {"value": pa.int64()})
    fractions = _long("h2")
    fractions["value"] = [v + 0.375 for v in fractions["value"]]
    _write(root, "b-fractions.parquet", fractions)
    (batch, file) = sync()
    assert batch == file
    assert {row[3]: row[16] for row in batch[1][1] if row[2].minute == 0} == {"h1": 5.0, "h2": 5.375}  # util avg


def test_files_the_batch_does_not_take_go_file_by_file(both, tmp_path):
    root, sync = both
    _write(root, "long.parquet", _long("h1"))
    wide = {"timestamp": [T0, T0 + timedelta(seconds=30)], "hostname": ["h2"] * 2, "gpu": [0, 0],
            UTIL: [50.0, 60.0], SM: [0.5, 0.6]}
    _write(root, "wide.parquet", wide)
    text = _long("h3")
    text["timestamp"] = [t.isoformat() for t in text["timestamp"]]
    _write(root, "text-times.parquet", text, {"timestamp": pa.string()})
    (root / FOLDER / "empty.parquet").write_bytes(b"")
    good = (root / FOLDER / "long.parquet").read_bytes()
    (root / FOLDER / "cut.parquet").write_bytes(good[: len(good) // 2])
    (root / FOLDER / "h4.csv").write_text("timestamp,hostname,gpu,metric,value\n2026-11-02T00:00:00Z,h4,0,"
                                           f"{UTIL},5\n2026-11-02T00:00:30Z,h4,0,{UTIL},x\n")
    taken = []
    real = dcgm_batch._stage

    def spy(con, source, columns, batch, *args):
        taken.extend(f.rel.rsplit("/", 1)[1] for f in batch)
        return real(con, source, columns, batch, *args)

    dcgm_batch._stage = spy
    try:
        (batch, file) = sync()
    finally:
        dcgm_batch._stage = real
    assert taken == ["long.parquet"]
    assert batch == file
    reasons = {row[1].rsplit("/", 1)[1]: row[3] for row in batch[1][2]}
    assert reasons["empty.parquet"].startswith("empty file (0 bytes)")
    assert reasons["cut.parquet"].startswith("unreadable file")
    assert reasons["h4.csv"] == "value 'x' is not a number"


def test_a_file_duckdb_cannot_read_is_left_to_the_per_file_parser(both):
    root, sync = both
    for host in ("h1", "h2", "h3"):
        _write(root, f"{host}.parquet", _long(host, minutes=30))
    path = root / FOLDER / "h2.parquet"
    good = path.read_bytes()
    con = duckdb.connect()
    for at in range(len(good) // 4, len(good) // 2):  # a flipped byte in a data page: the footer still reads
        path.write_bytes(good[:at] + bytes([good[at] ^ 0xFF]) + good[at + 1:])
        try:
            con.execute("SELECT sum(value), count(hostname), min(timestamp), count(metric) FROM read_parquet($p)",
                        {"p": str(path)}).fetchall()
        except duckdb.Error:
            break
    else:
        pytest.fail("no flipped byte DuckDB refuses")
    (batch, file) = sync()
    assert batch == file
    assert {row[1].rsplit("/", 1)[1] for row in batch[1][0]} == {"h1.parquet", "h2.parquet", "h3.parquet"}


def test_a_redelivered_file_replaces_its_rows_and_an_unchanged_one_is_not_read(both):
    root, sync = both
    first = _long("h1")
    first["value"][0] = -1.0
    _write(root, "h1.parquet", first)
    _write(root, "h2.parquet", _long("h2"))
    sync()
    again = _long("h1", minutes=2)
    again["value"][1] = float("nan")
    _write(root, "h1.parquet", again)
    (batch, file) = sync()
    assert batch == file
    report, (landed, minutes, quarantine) = batch
    assert report[0] == [f"{FOLDER}/h1.parquet"]
    assert [(row[2], row[3]) for row in quarantine] == [("row 2", "value is NaN, not a number")]
    assert sum(1 for row in minutes if row[3] == "h1") == 2 * 3  # GPUs × (minute 0, minute 1 under two job labels)


def test_a_crash_in_a_batch_leaves_every_file_of_it_as_it_was(tmp_path, monkeypatch):
    root = tmp_path / "landing"
    _write(root, "h1.parquet", _long("h1"))
    con = connect(tmp_path / "w.duckdb")
    bootstrap(con)
    landing.sync(con, root, DCGM, OrgConfig(), DAY)
    before = _state(con)
    _write(root, "h1.parquet", _long("h1", minutes=1))
    _write(root, "h2.parquet", _long("h2"))
    real = dcgm_batch.run_sql
    monkeypatch.setattr(dcgm_batch, "run_sql", lambda con, name, params: (_ for _ in ()).throw(RuntimeError("disk full"))
                        if name.endswith("batch_rollup") else real(con, name, params))
    with pytest.raises(RuntimeError):
        landing.sync(con, root, DCGM, OrgConfig(), DAY)
    assert _state(con) == before
    monkeypatch.undo()
    landing.sync(con, root, DCGM, OrgConfig(), DAY)  # the next run picks both files up
    assert {row[1] for row in _state(con)[0]} == {f"{FOLDER}/h1.parquet", f"{FOLDER}/h2.parquet"}
    con.close()


def test_implausible_times_are_judged_against_the_whole_file(both):
    root, sync = both
    # a dump over four years and two strays, 18 rows: the median averages the 9th and 10th time, and
    # three interquartile ranges (about 2,470 days) allow all of 2022-2025 but neither stray
    times = [datetime(y, m, 1, tzinfo=timezone.utc) for y in (2022, 2023, 2024, 2025) for m in (1, 4, 7, 10)]
    times += [datetime(2008, 1, 1, tzinfo=timezone.utc), datetime(2001, 6, 1, 12, tzinfo=timezone.utc)]
    rows = {"timestamp": times, "hostname": ["h1"] * len(times), "gpu": [0] * len(times),
            "metric": [UTIL] * len(times), "value": [1.0] * len(times)}
    _write(root, "dump.parquet", rows)
    (batch, file) = sync()
    assert batch == file
    reasons = sorted(row[3] for row in batch[1][2])
    assert [r.split(" is implausible: ")[0] for r in reasons] == ["timestamp 2001-06-01 12:00:00", "timestamp 2008-01-01 00:00:00"]
    assert all("days from the median time of this file's rows (2023-08-16 00:00:00)" in r for r in reasons)
    late = OrgConfig.model_validate({"ledger": {"start": "2023-03-01"}})
    _write(root, "dump.parquet", rows | {"value": [2.0] * len(times)})
    (batch, file) = sync(late)
    assert batch == file
    assert sum("before 2022-03-01 (a year before ledger.start 2023-03-01)" in row[3] for row in batch[1][2]) == 3


def test_only_files_whose_times_may_be_implausible_leave_the_batch(both, monkeypatch):
    """The batch proves a file's times plausible from its first and last staged time (none before the
    floor, at most a year's slack of days between them); a file it cannot prove is the per-file
    parser's, which judges each time by the file's median and quartiles, and stages the same."""
    root, sync = both

    def two(host: str, first: datetime, last: datetime) -> dict[str, list]:
        return {"timestamp": [first, last], "hostname": [host] * 2, "gpu": [0, 0], "metric": [UTIL] * 2,
                "value": [1.0, 2.0]}

    slack = timedelta(days=366)
    _write(root, "day.parquet", _long("h1"))
    _write(root, "year.parquet", two("h2", T0 - slack - timedelta(hours=23), T0))  # 366 whole days: proven
    _write(root, "longer.parquet", two("h3", T0 - slack - timedelta(days=1), T0))  # 367: not, yet plausible
    _write(root, "early.parquet", two("h4", datetime(1999, 12, 31, tzinfo=timezone.utc), T0))
    left = []
    real = dcgm_batch._stage

    def spy(*args):
        files = real(*args)
        left.extend(rel.rsplit("/", 1)[1] for _, rel, *_ in files)
        return files

    monkeypatch.setattr(dcgm_batch, "_stage", spy)
    (batch, file) = sync()
    assert sorted(left) == ["early.parquet", "longer.parquet"]
    assert batch == file
    assert [row[1].rsplit("/", 1)[1] for row in batch[1][2]] == ["early.parquet"]  # only 1999 is implausible
    assert {row[1].rsplit("/", 1)[1]: row[4] for row in batch[1][0]} == {
        "day.parquet": 24, "year.parquet": 2, "longer.parquet": 2, "early.parquet": 1}


@st.composite
def _rows(draw):
    n = draw(st.integers(1, 12))
    times = st.sampled_from([None, T0, T0 + timedelta(seconds=30), T0 + timedelta(minutes=1, seconds=5),
                             datetime(1999, 12, 31, tzinfo=timezone.utc), datetime(2024, 1, 1, tzinfo=timezone.utc),
                             datetime(2099, 1, 1, tzinfo=timezone.utc)])
    labels = st.sampled_from([None, "", "h1", " h1", "h1\u3000", "NULL", "null", "\t", "h 2", "\u200b"])
    values = st.sampled_from([None, 0.0, -0.0, 5.0, 100.0, -1e-7, 1e300, float("nan"), float("inf"), float("-inf"),
                              9.22e18, 9.2e18, 2.0**63])
    metrics = st.sampled_from([UTIL, SM, " " + UTIL, "", "  ", None, "DCGM_FI_DEV_MEM_CLOCK",
                               "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"])
    return {
        "timestamp": [draw(times) for _ in range(n)],
        "hostname": [draw(labels) for _ in range(n)],
        "gpu": [draw(st.sampled_from([None, 0, 1, 255, 256, -1])) for _ in range(n)],
        "metric": [draw(metrics) for _ in range(n)],
        "value": [draw(values) for _ in range(n)],
        "hpc_job": [draw(labels) for _ in range(n)],
        "pod": [draw(labels) for _ in range(n)],
    }


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(rows=_rows())
def test_any_rows_stage_and_quarantine_alike(tmp_path_factory, new_warehouse, rows):
    tmp = tmp_path_factory.mktemp("dcgm")
    root = tmp / "landing"
    _write(root, "x.parquet", rows)
    _write(root, "y.parquet", _long("h9", minutes=1))
    states = []
    for kind, source in (("batch", DCGM), ("file", PER_FILE)):
        con = new_warehouse(tmp / f"{kind}.duckdb")
        report = landing.sync(con, root, source, OrgConfig(), DAY)
        states.append((_report(report), _state(con)))
        con.close()
    assert states[0] == states[1]

import json
import os
import shutil
from datetime import date, datetime, timezone

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.ingest import dcgm, dcgm_prom

REAL_SCRAPE = "dcgm/nvidia_cloud_native_docs_a100_mig_scrape.prom"
MTIME = datetime(2026, 11, 2, 0, 0, 30, tzinfo=timezone.utc)
T0_MS = 1_793_577_600_000  # 2026-11-02T00:00:00Z
UUID = "GPU-34319582-d595-d1c7-d1d2-179bcfa61660"


def _landed(real, tmp_path, name="nvidia_cloud_native_docs_a100_mig_scrape.prom"):
    folder = tmp_path / "landing" / "telemetry" / "dcgm"
    folder.mkdir(parents=True)
    path = folder / name
    shutil.copyfile(real / REAL_SCRAPE, path)
    os.utime(path, (MTIME.timestamp(), MTIME.timestamp()))
    return path


def _value(rows, metric, mig):
    picked = rows.filter((pl.col("metric") == metric) & (pl.col("gpu_instance").is_not_null() == mig))
    assert picked.height == 1
    return picked["value"][0]


def test_real_nvidia_mig_scrape(real, tmp_path):
    # Expected counts read from the file by hand, not from the parser:
    #   grep -c '^DCGM_FI_' → 21 sample lines (lines 1-17, a blank line 18, lines 19-22); no other lines,
    #   grep -c 'GPU_I_ID="13"' → 4 (MIG instance, profile 1g.5gb), so 17 whole-GPU series;
    #   every line has Hostname="ub20-a100-k8s", gpu="0" and the same UUID; no timestamps; no HELP/TYPE;
    #   the largest value is TOTAL_ENERGY_CONSUMPTION 319159391, so no DCGM sentinel (>= 9.22e18) is in
    #   this scrape (its MEMORY_TEMP is 69) and nothing is dropped or quarantined.
    path = _landed(real, tmp_path)
    parsed = dcgm_prom.parse(path, "telemetry/dcgm/" + path.name)
    rows = parsed.rows
    assert rows.height == 21
    assert parsed.rejects.height == 0
    assert parsed.dropped == {}
    assert rows.filter(pl.col("gpu_instance").is_null()).height == 17
    assert rows.filter(pl.col("gpu_instance") == "13").height == 4
    assert rows["hostname"].unique().to_list() == ["ub20-a100-k8s"]  # the capital-H `Hostname` label
    assert rows["gpu"].unique().to_list() == [0]
    assert rows["uuid"].unique().to_list() == [UUID]
    assert rows["hpc_job"].null_count() == 21 and rows["model_name"].null_count() == 21
    # values exactly as written in the file
    assert _value(rows, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", mig=False) == 0.929260
    assert _value(rows, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", mig=True) == 0.930433
    assert _value(rows, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", mig=False) == 0.995630
    assert _value(rows, "DCGM_FI_PROF_DRAM_ACTIVE", mig=True) == 0.800339
    assert _value(rows, "DCGM_FI_DEV_POWER_USAGE", mig=False) == 409.692
    assert _value(rows, "DCGM_FI_DEV_FB_USED", mig=False) == 4845
    assert _value(rows, "DCGM_FI_DEV_MEMORY_TEMP", mig=False) == 69
    assert _value(rows, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", mig=False) == 319159391
    # no timestamps on its lines and none in its name: the file's modification time
    assert dcgm_prom.scrape_time(path) == (int(MTIME.timestamp() * 1000), "mtime")
    assert rows["timestamp"].unique().to_list() == [MTIME.replace(tzinfo=None)]


def test_real_scrape_time_from_the_file_name(real, tmp_path):
    path = _landed(real, tmp_path, "ub20-a100-k8s_20261101T120000Z.prom")
    rows = dcgm_prom.parse(path, path.name).rows
    assert rows["timestamp"].unique().to_list() == [datetime(2026, 11, 1, 12)]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("node07_20261102T000030Z.prom", datetime(2026, 11, 2, 0, 0, 30)),
        ("node07-2026-11-02T00-00-30.250Z.prom", datetime(2026, 11, 2, 0, 0, 30, 250000)),
        ("node07.2026-11-02T00:00:30Z.prom", datetime(2026, 11, 2, 0, 0, 30)),
        ("node07_1793577630.prom", datetime(2026, 11, 2, 0, 0, 30)),
        ("1793577630000.prom", datetime(2026, 11, 2, 0, 0, 30)),
        ("node07_job0001234567.prom", None),     # digits not separated: not a stamp
        ("node07_0000001234.prom", None),        # 10 digits, but 1970: a job id, not a time
        ("node07_20261340T000030Z.prom", None),  # month 40
        ("node07.prom", None),
    ],
)
def test_scrape_time_patterns(tmp_path, name, expected):
    path = tmp_path / name
    path.write_text("")
    mtime = datetime(2026, 1, 5, tzinfo=timezone.utc).timestamp()
    os.utime(path, (mtime, mtime))
    ms, origin = dcgm_prom.scrape_time(path)
    if expected is None:
        assert (ms, origin) == (int(mtime * 1000), "mtime")
    else:
        assert origin == "file name"
        assert ms == int(expected.replace(tzinfo=timezone.utc).timestamp() * 1000)


SYNTHETIC = "\n".join(
    [
        "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).",                                              # 1
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge",                                                                # 2
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3",hostname="h1",DCGM_FI_DRIVER_VERSION="550.54.15",hpc_job="812"}} 60 {T0_MS}',  # 3
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3",hostname="h1",DCGM_FI_DRIVER_VERSION="550.54.15",hpc_job="813"}} 30 {T0_MS}',  # 4
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="1",UUID="GPU-b",hostname="h1",namespace="ml",pod="train-0",container="main"}} 99 {T0_MS}',  # 5
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="2",UUID="GPU-c",hostname="h1",namespace="ml",pod=""}} 0 {T0_MS}',      # 6
        "",                                                                                                 # 7
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="3",hostname="h1",namespace="ml",pod="say \\"hi\\", a,b}}=c\\\\d"}} 5 {T0_MS + 30000}',  # 8
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="4",hostname="h1"}} NaN {T0_MS}',                                       # 9
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="5",hostname="h1"}} +Inf {T0_MS}',                                      # 10
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="6",hostname="h1" 7 {T0_MS}',                                           # 11 no closing brace
        "# TYPE process_cpu_seconds_total counter",                                                         # 12
        f"process_cpu_seconds_total 12.5 {T0_MS}",                                                          # 13
        f'DCGM_FI_DEV_MEMORY_TEMP{{gpu="0",hostname="h1"}} 9223372036854775794 {T0_MS}',                    # 14 sentinel
        'DCGM_FI_DEV_GPU_UTIL{gpu="7",hostname="h1"} 8 1793577600',                                        # 15 seconds, not ms
        f'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{gpu="0",GPU_I_PROFILE="1g.10gb",GPU_I_ID="9",hostname="h1"}} 0.5 {T0_MS}',  # 16 MIG
        f'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{gpu="0",hostname="h1"}} 0.25 {T0_MS}',                           # 17 whole GPU
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"8\",hostname=\"h1\"} 3",                                                # 18 no timestamp
        "",
    ]
)


def test_synthetic_scrape(tmp_path):
    path = tmp_path / "h1_20261102T000100Z.prom"
    path.write_text(SYNTHETIC)
    parsed = dcgm_prom.parse(path, "telemetry/dcgm/" + path.name)
    rows = parsed.rows
    by_gpu = {(r["gpu"], r["gpu_instance"], r["hpc_job"], r["metric"]): r for r in rows.iter_rows(named=True)}
    util = "DCGM_FI_DEV_GPU_UTIL"
    # two jobs on one GPU at the same timestamp: both kept, each with its job
    assert by_gpu[(0, None, "812", util)]["value"] == 60 and by_gpu[(0, None, "813", util)]["value"] == 30
    assert by_gpu[(0, None, "812", util)]["timestamp"] == datetime(2026, 11, 2)
    assert by_gpu[(0, None, "812", util)]["model_name"] == "NVIDIA H100 80GB HBM3"
    assert by_gpu[(0, None, "812", util)]["hostname"] == "h1"  # lower-case `hostname`
    assert by_gpu[(1, None, "ml/train-0", util)]["value"] == 99  # namespace/pod is the job
    assert (2, None, None, util) in by_gpu  # pod="" is no pod
    # escaped quote and backslash, commas, braces and '=' inside a label value
    job3 = by_gpu[(3, None, 'ml/say "hi", a,b}=c\\d', util)]
    assert job3["timestamp"] == datetime(2026, 11, 2, 0, 0, 30)
    # MIG and whole-GPU series of one GPU stay apart
    assert by_gpu[(0, "9", None, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE")]["value"] == 0.5
    assert by_gpu[(0, None, None, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE")]["value"] == 0.25
    # no timestamp on the line: the scrape time in the file name
    assert by_gpu[(8, None, None, util)]["timestamp"] == datetime(2026, 11, 2, 0, 1)
    assert rows.height == 8  # lines 3, 4, 5, 6, 8, 16, 17 and 18
    assert parsed.dropped == {"not_dcgm": 1, "unsupported_sentinel": 1}

    reasons = dict(parsed.rejects.select("row_ref", "reason").iter_rows())
    assert list(reasons) == ["line 9", "line 10", "line 11", "line 15"]
    assert "value" in reasons["line 9"] and "NaN" in reasons["line 9"]
    assert "value" in reasons["line 10"] and "inf" in reasons["line 10"]
    assert reasons["line 11"].startswith("malformed exposition line: expected ',' or '}' after label 'hostname'")
    assert "seconds?" in reasons["line 15"]
    rejects = parsed.rejects
    assert set(rejects["source"]) == {"dcgm"} and set(rejects["file"]) == {"telemetry/dcgm/" + path.name}
    assert set(rejects["day"]) == {date(2026, 11, 2)}
    lines = SYNTHETIC.split("\n")
    for ref, payload in rejects.select("row_ref", "payload").iter_rows():
        assert json.loads(payload) == {"line": lines[int(ref.split()[1]) - 1]}


@pytest.mark.parametrize(
    "line, reason",
    [
        ('DCGM_FI_X{gpu="0",hostname="h"} abc', "value 'abc' is not a number"),
        ('DCGM_FI_X{gpu="0",hostname="h"} 1 12.5', "timestamp '12.5' is not an integer"),
        ('DCGM_FI_X{gpu="0",hostname="h"} 1 2 3', "unexpected text after the timestamp"),
        ('DCGM_FI_X{gpu="0",hostname="h} 1', "unterminated value of label 'hostname'"),
        ('DCGM_FI_X{gpu="0",hostname="h\\t"} 1', "invalid escape '\\t'"),
        ('DCGM_FI_X{gpu="0",gpu="1",hostname="h"} 1', "duplicate label name gpu"),
        ('DCGM_FI_X{gpu="0" hostname="h"} 1', "expected ',' or '}' after label 'gpu'"),
        ('DCGM_FI_X{gpu=0,hostname="h"} 1', "expected a quoted value for label 'gpu'"),
        ('DCGM_FI_X{gpu="0",hostname="h"}', "has no value"),
        ("DCGM_FI_X-1 2", "expected a blank or '{' after metric name"),
        ('{gpu="0",hostname="h"} 1', "no metric name"),
        ("5 DCGM_FI_X", "expected a metric name at column 1"),
    ],
)
def test_malformed_lines_are_quarantined_with_their_line(line, reason):
    text = f'# TYPE DCGM_FI_X gauge\nDCGM_FI_X{{gpu="0",hostname="h"}} 1 {T0_MS}\n{line}\n'
    parsed = dcgm_prom.from_bytes(text.encode(), "m.prom", T0_MS)
    assert parsed.rows.height == 1
    assert parsed.rejects["row_ref"].to_list() == ["line 3"]
    assert reason in parsed.rejects["reason"][0]
    assert parsed.rejects["day"].to_list() == [date(2026, 11, 2)]


def test_exposition_details():
    text = (
        # blanks around labels, trailing comma, tab before the timestamp, CRLF
        f'DCGM_FI_A {{ hostname = "h" , gpu="0", }} 1\t{T0_MS}  \r\n'
        # quoted (text format 1.0) metric and label names; Go hex float; legacy `uuid` label
        f'{{"DCGM_FI_B", "k8s.io/x"="y", hostname="h", gpu="1", uuid="GPU-old"}} 0x1p-2 {T0_MS}\n'
        # both spellings of hostname: lower case wins
        f'DCGM_FI_C{{Hostname="old",hostname="new",gpu="2"}} 3 {T0_MS}\n'
        # the same series at the same time twice: the second is quarantined
        f'DCGM_FI_A{{hostname="h",gpu="0"}} 2 {T0_MS}\n'
        # not UTF-8
    ).encode() + b'DCGM_FI_D{hostname="h\xff",gpu="0"} 1\n'
    parsed = dcgm_prom.from_bytes(text, "d.prom", T0_MS)
    got = {r["metric"]: r for r in parsed.rows.iter_rows(named=True)}
    assert got["DCGM_FI_A"]["value"] == 1 and got["DCGM_FI_A"]["gpu"] == 0
    assert got["DCGM_FI_B"]["value"] == 0.25 and got["DCGM_FI_B"]["uuid"] == "GPU-old"
    assert got["DCGM_FI_C"]["hostname"] == "new"
    reasons = dict(parsed.rejects.select("row_ref", "reason").iter_rows())
    assert reasons == {
        "line 4": "duplicate sample: same series and timestamp as line 1",
        "line 5": reasons["line 5"],
    }
    assert "not UTF-8" in reasons["line 5"]


def test_unreadable_file_is_one_reject(tmp_path):
    parsed = dcgm_prom.parse(tmp_path / "missing.prom", "telemetry/dcgm/missing.prom")
    assert parsed.rows.height == 0
    assert parsed.rejects["row_ref"].to_list() == ["file"]


def _prom_value(v: float) -> str:
    return repr(v) if v == v else "NaN"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def test_prom_and_long_parquet_give_the_same_rows(tmp_path):
    samples = []
    for minute in range(3):
        ts = datetime(2026, 11, 2, 0, minute)
        for gpu in range(2):
            base = {"timestamp": ts, "hostname": "node-1", "gpu": gpu, "UUID": f"GPU-{gpu}",
                    "modelName": "NVIDIA H100 80GB HBM3", "GPU_I_ID": None, "hpc_job": None, "namespace": None, "pod": None}
            samples.append({**base, "metric": "DCGM_FI_DEV_GPU_UTIL", "value": 10.0 * minute + gpu, "hpc_job": "812"})
            samples.append({**base, "metric": "DCGM_FI_DEV_GPU_UTIL", "value": 1.5, "hpc_job": "813"})
            samples.append({**base, "metric": "DCGM_FI_PROF_SM_ACTIVE", "value": 0.123456789, "namespace": "ml", "pod": 'p"1,{x}'})
            samples.append({**base, "metric": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "value": 0.5, "GPU_I_ID": "3"})
            samples.append({**base, "metric": "DCGM_FI_DEV_FB_USED", "value": 1e3 * (gpu + 1)})
            samples.append({**base, "metric": "DCGM_FI_DEV_MEMORY_TEMP", "value": 9223372036854775794.0})  # sentinel
    labels = ["gpu", "UUID", "modelName", "GPU_I_ID", "hostname", "hpc_job", "namespace", "pod"]
    lines = ["# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).", "# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    for s in samples:
        ls = ",".join(f'{k}="{_escape(str(s[k]))}"' for k in labels if s[k] is not None)
        ms = int(s["timestamp"].replace(tzinfo=timezone.utc).timestamp() * 1000)
        lines.append(f"{s['metric']}{{{ls}}} {_prom_value(s['value'])} {ms}")
    prom = tmp_path / "node-1.prom"
    prom.write_text("\n".join(lines) + "\n")
    parquet = tmp_path / "node-1.parquet"
    pl.DataFrame(samples).with_columns(pl.col("gpu").cast(pl.Int32)).write_parquet(parquet)

    a = dcgm_prom.parse(prom, "telemetry/dcgm/node-1.prom")
    b = dcgm.parse(parquet, "telemetry/dcgm/node-1.parquet")
    key = ["timestamp", "gpu", "gpu_instance", "hpc_job", "metric"]
    assert a.rejects.height == b.rejects.height == 0
    assert a.dropped == b.dropped == {"unsupported_sentinel": 6}
    assert a.rows.height == b.rows.height == 30
    assert a.rows.sort(key, nulls_last=True).equals(b.rows.sort(key, nulls_last=True))
    assert 'ml/p"1,{x}' in a.rows["hpc_job"].to_list()


label_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=30)


@settings(max_examples=200, deadline=None)
@given(value=label_text, other=label_text, number=st.floats(allow_nan=False, allow_infinity=False))
def test_any_label_value_round_trips(value, other, number):
    # what the exporter writes (Go's expfmt escaping) is read back exactly, by the fast path and by the
    # careful parser alike
    line = f'DCGM_FI_X{{gpu="0",pod="{_escape(value)}",x="{_escape(other)}"}} {number!r} {T0_MS}'
    name, (labels, picked), parsed_value, ts = dcgm_prom._parse_sample(line, {})
    assert (name, parsed_value, ts) == ("DCGM_FI_X", number, T0_MS)
    assert dict(labels) == {"gpu": "0", "pod": value, "x": other}
    assert picked[list(dcgm_prom.COLUMNS).index("pod")] == value
    careful = dcgm_prom._careful(line)
    assert careful[:2] == ("DCGM_FI_X", [("gpu", "0"), ("pod", value), ("x", other)])

"""nvidia-smi logs → DCGM's long samples (pipelines/ingest/nvidia_smi.py, docs/ingest/nvidia-smi.md).

The files below are written as nvidia-smi prints them (`--query-gpu ... --format=csv[,nounits] -l N`,
`dmon -o DT`); every expected value is read off the text by hand."""

from __future__ import annotations

import json
from datetime import datetime

import polars as pl
import pytest

from pipelines.ingest import dcgm
from pipelines.ingest.ignored import ignored_files
from pipelines.ingest.sources import NVIDIA_SMI
from pipelines.landing import writer
from pipelines.landing.source import fingerprint
from pipelines.lib.config import OrgConfig
from tests.support.sql_steps import warehouse
from tests.support.memory_db import memory_db

UNITS = """\
timestamp, name, pci.bus_id, index, uuid, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W]
2026/11/02 00:00:05.123, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 0, GPU-aaa, 87 %, 40 %, 41234 MiB, 81559 MiB, 512.34 W
2026/11/02 00:00:05.125, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 1, GPU-bbb, 0 %, 0 %, 4 MiB, 81559 MiB, 68.10 W
"""
NOUNITS = """\
timestamp, name, pci.bus_id, index, uuid, utilization.gpu, utilization.memory, memory.used, memory.total, power.draw
2026/11/02 00:00:05.123, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 0, GPU-aaa, 87, 40, 41234, 81559, 512.34
2026/11/02 00:00:05.125, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 1, GPU-bbb, 0, 0, 4, 81559, 68.10
"""
# on a MIG-mode A100 nvidia-smi cannot read the GPU's utilisation: "[N/A]"; power and memory it can
MIG = """\
timestamp, index, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]
2026/11/02 00:00:05.000, 0, GPU-mig, [N/A], 10240 MiB, 250.00 W
2026/11/02 00:00:35.000, 0, GPU-mig, [N/A], 10240 MiB, 251.00 W
"""
DMON = """\
#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk     fb   bar1
#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %      %      %    MHz    MHz     MB     MB
 20261102   00:00:05      0    512     61     70     87     40      0      0   2619   1980  41234      5
 20261102   00:00:05      1     68     33     40      -      0      0      0   2619    345      4      1
#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk     fb   bar1
#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %      %      %    MHz    MHz     MB     MB
 20261102   00:00:35      0    510     61     70     90     41      0      0   2619   1980  41234      5
"""
DMON_NO_DATES = """\
# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk
# Idx      W      C      C      %      %      %      %    MHz    MHz
    0    512     61     70     87     40      0      0   2619   1980
"""
UTIL, FB, POWER = "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE"


def _land(tmp_path, text: str | bytes, name: str = "gpu.csv", host: str = "node07", sidecar: str | None = None):
    folder = tmp_path / "telemetry" / "nvidia_smi" / host / "day=2026-11-02"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    if sidecar is not None:
        (folder / "nvidia_smi.yaml").write_text(sidecar)
    return path, path.relative_to(tmp_path).as_posix()


def _parse(tmp_path, text, **kw):
    path, rel = _land(tmp_path, text, **kw)
    return NVIDIA_SMI.parse(memory_db(), path, rel, OrgConfig())


def _values(parsed) -> dict[tuple[int, str], float]:
    return {(g, m): v for g, m, v in parsed.rows.select("gpu", "metric", "value").iter_rows()}


def test_query_gpu_csv_with_units_gives_dcgm_samples(tmp_path):
    parsed = _parse(tmp_path, UNITS)
    assert parsed.read_as == "query-gpu csv" and parsed.rejects.height == 0
    assert _values(parsed) == {(0, UTIL): 87.0, (0, FB): 41234.0, (0, POWER): 512.34,
                               (1, UTIL): 0.0, (1, FB): 4.0, (1, POWER): 68.10}   # utilization.memory: not read
    row = parsed.rows.filter(pl.col("gpu") == 0).row(0, named=True)
    assert row["hostname"] == "node07"              # the folder: nvidia-smi does not print the host
    assert row["uuid"] == "GPU-aaa" and row["model_name"] == "NVIDIA H100 80GB HBM3"
    assert row["timestamp"] == datetime(2026, 11, 2, 0, 0, 5, 123000)   # no zone said: UTC
    assert row["gpu_instance"] is None and row["hpc_job"] is None


def test_nounits_reads_the_same_samples(tmp_path):
    a = _parse(tmp_path / "a", UNITS)
    b = _parse(tmp_path / "b", NOUNITS)
    assert a.rows.sort("gpu", "metric").equals(b.rows.sort("gpu", "metric"))


def test_the_samples_are_those_dcgm_gives_for_the_same_readings(tmp_path):
    ours = _parse(tmp_path, UNITS).rows
    long = ours.select(pl.col("timestamp").dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"), "hostname",
                       pl.col("gpu").cast(pl.String), pl.col("uuid").alias("UUID"),
                       pl.col("model_name").alias("modelName"), "metric", pl.col("value").cast(pl.String))
    theirs = dcgm.from_frame(long, "telemetry/dcgm/same.csv")
    assert theirs.rejects.height == 0
    key = ["gpu", "metric"]
    assert theirs.rows.sort(key).equals(ours.sort(key))


def test_columns_are_read_by_name_in_any_order_and_unknown_ones_ignored(tmp_path):
    text = ("power.draw [W], temperature.gpu, index, clocks.sm [MHz], timestamp, utilization.gpu [%]\n"
            "300.00 W, 55, 3, 1980 MHz, 2026/11/02 00:00:05.000, 12 %\n")
    parsed = _parse(tmp_path, text)
    assert _values(parsed) == {(3, POWER): 300.0, (3, UTIL): 12.0}


def test_a_repeated_header_is_skipped_and_counted(tmp_path):
    header, *rows = UNITS.splitlines()
    parsed = _parse(tmp_path, "\n".join([header, rows[0], header, rows[1], header]) + "\n")
    assert parsed.rejects.height == 0 and parsed.rows.height == 6
    assert parsed.dropped == {"repeated header lines": 2}


@pytest.mark.parametrize("cell", ["[N/A]", "[Not Supported]", "N/A", "[Unknown Error]", "[Insufficient Permissions]"])
def test_no_value_cells_are_no_reading_never_zero(tmp_path, cell):
    text = UNITS.replace("512.34 W", cell)
    parsed = _parse(tmp_path, text)
    assert parsed.rejects.height == 0
    assert (0, POWER) not in _values(parsed) and (1, POWER) in _values(parsed)


def test_mig_utilisation_na_stages_power_and_memory_and_no_utilisation(tmp_path):
    parsed = _parse(tmp_path, MIG)
    assert parsed.rejects.height == 0
    assert sorted(set(parsed.rows["metric"])) == [FB, POWER]
    con = warehouse()   # the DCGM rollup, as the staging asset runs it
    writer.put_rows(con, NVIDIA_SMI, parsed.rows, "telemetry/nvidia_smi/node07/gpu.csv")
    minute = con.sql("SELECT samples, gpu_util_max, gpu_util_avg, sm_active_max, power_avg_w, fb_used_max_mib "
                     "FROM staging.stg_dcgm__gpu_minutes").fetchall()
    # a minute with no utilisation reading: the ledger calls it neither idle nor used (docs/ledger.md)
    assert minute == [(2, None, None, None, 250.5, 10240.0)]


def test_dmon_with_dates_gives_dcgm_samples(tmp_path):
    parsed = _parse(tmp_path, DMON, name="dmon.log")
    assert parsed.read_as == "dmon" and parsed.rejects.height == 0
    assert parsed.dropped == {"repeated header lines": 2}
    rows = {(t.second, g, m): v for t, g, m, v in parsed.rows.select("timestamp", "gpu", "metric", "value").iter_rows()}
    # sm is read as utilisation, fb (MiB) as framebuffer use, pwr as power; gpu 1's sm `-` is no reading
    assert rows == {(5, 0, UTIL): 87.0, (5, 0, FB): 41234.0, (5, 0, POWER): 512.0,
                    (5, 1, FB): 4.0, (5, 1, POWER): 68.0,
                    (35, 0, UTIL): 90.0, (35, 0, FB): 41234.0, (35, 0, POWER): 510.0}


def test_dmon_without_dates_is_refused_naming_o_dt(tmp_path):
    parsed = _parse(tmp_path, DMON_NO_DATES, name="dmon.log")
    assert parsed.rows.height == 0 and parsed.read_as == "dmon"
    (row,) = parsed.rejects.select("row_ref", "reason").to_dicts()
    assert row["row_ref"] == "file" and "-o DT" in row["reason"]


def test_a_file_without_a_header_is_refused_saying_to_log_one(tmp_path):
    parsed = _parse(tmp_path, "".join(UNITS.splitlines(keepends=True)[1:]))
    assert parsed.rows.height == 0
    (row,) = parsed.rejects.select("row_ref", "reason").to_dicts()
    assert row["row_ref"] == "file" and "noheader" in row["reason"]
    assert "log with --format=csv" in row["reason"]


def test_a_file_that_is_not_utf8_is_one_quarantine_row(tmp_path):
    parsed = _parse(tmp_path, UNITS.encode().replace(b"NVIDIA H100", b"NVIDIA \xe9H100", 1))
    assert parsed.rows.height == 0
    (row,) = parsed.rejects.select("row_ref", "reason").to_dicts()
    assert row["row_ref"] == "file"
    assert row["reason"].startswith("not UTF-8 text: byte 0xE9 at byte ")


def test_a_bad_value_quarantines_its_line_with_its_cells_and_the_rest_stays(tmp_path):
    text = UNITS.replace("87 %", "8x7 %").replace("68.10 W", "-5.00 W")
    parsed = _parse(tmp_path, text)
    rejects = {r["row_ref"]: r for r in parsed.rejects.to_dicts()}
    assert set(rejects) == {"line 2", "line 3"}              # line 1 is the header
    assert rejects["line 2"]["reason"] == "utilization.gpu '8x7 %' is not a reading in %"
    assert rejects["line 3"]["reason"] == "power.draw -5.0 is negative"   # the contract's check, named
    assert json.loads(rejects["line 2"]["payload"])["utilization.gpu [%]"] == "8x7 %"
    assert rejects["line 2"]["source"] == "nvidia_smi" and rejects["line 2"]["day"].isoformat() == "2026-11-02"
    assert parsed.rows.height == 0                           # a refused line stages none of its readings


def test_a_line_of_the_wrong_width_is_quarantined_as_its_text(tmp_path):
    parsed = _parse(tmp_path, UNITS + "2026/11/02 00:00:35.123, NVIDIA H100 80GB HBM3, 00000000:18\n")
    (row,) = parsed.rejects.to_dicts()
    assert row["row_ref"] == "line 4" and row["reason"] == "3 values where the header (line 1) has 10"
    assert json.loads(row["payload"]) == {"line": "2026/11/02 00:00:35.123, NVIDIA H100 80GB HBM3, 00000000:18"}
    assert parsed.rows.height == 6


def test_a_line_without_any_reading_still_has_its_time_checked(tmp_path):
    text = "timestamp, index, utilization.gpu [%]\n2026/11/02 00:00:05.000, 0, [N/A]\nyesterday, 1, [N/A]\n"
    parsed = _parse(tmp_path, text)
    assert parsed.rows.height == 0 and parsed.dropped == {"lines without a reading": 1}
    assert parsed.rejects.select("row_ref", "reason").rows() == [
        ("line 3", "timestamp 'yesterday' is not a time (nvidia-smi writes YYYY/MM/DD HH:MM:SS.mmm, dmon -o DT "
                   "YYYYMMDD HH:MM:SS)")]


def test_the_sidecar_gives_the_zone_and_a_repeated_hour_is_read_in_order(tmp_path):
    # Europe/Berlin falls back at 03:00 on 2026-10-25: 02:00–02:59 comes twice
    lines = ["timestamp, index, utilization.gpu [%]"] + [
        f"2026/10/25 {t}.000, 0, 50 %" for t in ("01:30:00", "02:00:00", "02:30:00", "02:00:00", "02:30:00", "03:00:00")]
    parsed = _parse(tmp_path, "\n".join(lines) + "\n", sidecar="timezone: Europe/Berlin\n")
    assert [t.strftime("%d %H:%M") for t in parsed.rows["timestamp"]] == [
        "24 23:30", "25 00:00", "25 00:30", "25 01:00", "25 01:30", "25 02:00"]


def test_a_wall_time_the_clocks_skipped_is_quarantined_saying_so(tmp_path):
    text = "timestamp, index, utilization.gpu [%]\n2026/03/29 02:30:00.000, 0, 50 %\n"
    parsed = _parse(tmp_path, text, sidecar="timezone: Europe/Berlin\n")
    assert parsed.rejects["reason"].to_list() == [
        "timestamp '2026/03/29 02:30:00.000' does not exist in Europe/Berlin: the clocks skipped it when daylight "
        "saving time began"]


def test_the_sidecar_may_name_the_host_and_nothing_else(tmp_path):
    assert set(_parse(tmp_path / "a", UNITS, sidecar="host: gpu-node-07.example\n").rows["hostname"]) == {
        "gpu-node-07.example"}
    refused = _parse(tmp_path / "b", UNITS, sidecar="timezone: Mars/Olympus\n")
    assert refused.rows.height == 0 and "is not an IANA time zone" in refused.rejects["reason"][0]
    refused = _parse(tmp_path / "c", UNITS, sidecar="zone: UTC\n")
    assert "unknown key(s) zone" in refused.rejects["reason"][0]


def test_without_a_host_folder_the_file_is_refused(tmp_path):
    folder = tmp_path / "telemetry" / "nvidia_smi" / "day=2026-11-02"
    folder.mkdir(parents=True)
    (folder / "gpu.csv").write_text(UNITS)
    parsed = NVIDIA_SMI.parse(memory_db(), folder / "gpu.csv", "telemetry/nvidia_smi/day=2026-11-02/gpu.csv", OrgConfig())
    assert parsed.rows.height == 0 and parsed.rejects["reason"][0].startswith("no host: ")


def test_the_energy_counter_is_read_when_the_driver_has_it(tmp_path):
    text = ("timestamp, index, total_energy_consumption [J], power.draw [W]\n"
            "2026/11/02 00:00:05.000, 0, 123456.789 J, 300.00 W\n")
    assert _values(_parse(tmp_path / "j", text))[(0, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")] == pytest.approx(
        123456789.0)   # mJ, as DCGM counts it
    refused = _parse(tmp_path / "kw", text.replace("power.draw [W]", "power.draw [kW]"))
    assert "reads power.draw in W, not kW" in refused.rejects["reason"][0]


def test_the_sidecar_is_in_the_fingerprint_and_never_an_ignored_file(tmp_path):
    path, _ = _land(tmp_path, UNITS, sidecar="timezone: UTC\n")
    before = fingerprint(path, NVIDIA_SMI.sidecar)
    (path.parent / "nvidia_smi.yaml").write_text("timezone: Europe/Berlin\n")
    assert fingerprint(path, NVIDIA_SMI.sidecar) != before     # editing the zone reads the file again
    (tmp_path / "telemetry" / "nvidia_smi" / "loose.csv").write_text(UNITS)
    assert [f["file"] for f in ignored_files(tmp_path)] == ["telemetry/nvidia_smi/loose.csv"]


def test_inspect_lists_the_source_and_the_format_each_file_was_read_as(tmp_path, capsys):
    from pipelines.cli.main import main

    _land(tmp_path, UNITS.replace("68.10 W", "-5.00 W"), sidecar="timezone: UTC\n")
    _land(tmp_path, DMON, name="dmon.log", host="node08")
    _land(tmp_path, DMON_NO_DATES, name="old-dmon.txt", host="node08")
    assert main(["inspect", "--landing", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "ignored_files" not in report                        # the sidecar is no one's input
    entry = report["nvidia_smi"]
    # 3 samples of the CSV's line 2 and 8 of dmon staged; the CSV's line 3 quarantined, old-dmon refused
    assert (entry["files"], entry["rows"], entry["quarantined"]) == (3, 3 + 8 + 1 + 1, 2)
    assert sorted(entry["formats"].values()) == ["dmon", "dmon", "query-gpu csv"]   # file -> format
    assert entry["formats"]["telemetry/nvidia_smi/node08/day=2026-11-02/old-dmon.txt"] == "dmon"
    assert entry["unreadable_files"] == ["telemetry/nvidia_smi/node08/day=2026-11-02/old-dmon.txt"]
    assert (entry["hosts"], entry["gpus"], entry["samples"]) == (2, 3, 4)
    assert main(["inspect", "--landing", str(tmp_path)]) == 0
    assert "read as: dmon 2 files, query-gpu csv 1 file" in capsys.readouterr().out

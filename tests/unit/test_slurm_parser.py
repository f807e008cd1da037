from datetime import datetime

import polars as pl
import pytest

from pipelines.ingest import slurm
from pipelines.lib.config import ClusterConfig

HB_COLUMNS = (
    "JobID,JobName,User,Partition,NodeList,NNodes,NCPUs,NTasks,State,Submit,Start,End,Timelimit,Elapsed,"
    "TotalCPU,CPUTime,UserCPU,SystemCPU,ReqMem,MaxRSS,MaxVMSize,ReqTRES,AllocTRES,TRESUsageInMax,"
    "TRESUsageInTot,TRESUsageOutTot,MaxDiskRead,MaxDiskWrite,MaxRSSNode,MaxRSSTask,MaxVMSizeNode,"
    "MaxVMSizeTask,MaxDiskReadNode,MaxDiskReadTask,MaxDiskWriteNode,MaxDiskWriteTask,Comment"
).split(",")
HEADER = "JobIDRaw|JobID|JobName|User|Account|Partition|State|ExitCode|Submit|Start|End|AllocTRES|NodeList|Comment|Restarts|QOS"


def test_real_headerless_snowman_export(real):
    cfg = ClusterConfig(timezone="Europe/Amsterdam", delimiter="☃", columns=tuple(HB_COLUMNS))
    parsed = slurm.parse(real / "slurm" / "hb-jobinfo_sacct_snowman_delimited.txt", "hb.txt", "habrok", cfg)
    assert parsed.rejects.height == 0
    rows = parsed.rows
    assert rows.height == 242
    assert rows.filter(~pl.col("is_step")).height == 100
    # the README's state counts over all lines: CANCELLED 11 + `CANCELLED by <uid>` 8
    states = dict(rows.group_by("state").len().iter_rows())
    assert states == {"COMPLETED": 182, "FAILED": 17, "CANCELLED": 19, "RUNNING": 9, "PENDING": 7, "TIMEOUT": 7, "NODE_FAIL": 1}
    assert rows.filter(pl.col("cancelled_by").is_not_null()).height == 8
    # only 9 allocations carry gres/gpu (README)
    assert rows.filter(~pl.col("is_step") & pl.col("gpus").is_not_null()).height == 9
    # pending jobs: Start/End `Unknown` → NULL, not an error
    pending = rows.filter(pl.col("state") == "PENDING")
    assert pending["start_ts"].null_count() == pending.height
    # `omni[1,10-12]` expands to four hosts
    hosts = rows.filter(pl.col("node_list") == "omni[1,10-12]")["hosts"].to_list()
    assert hosts and hosts[0] == ["omni1", "omni10", "omni11", "omni12"]
    # Amsterdam is UTC+2 in April: 2024-04-03T20:32:21 local is 18:32:21 UTC
    job = rows.filter(pl.col("job_id") == "7939708").row(0, named=True)
    assert job["start_ts"] == datetime(2024, 4, 3, 18, 32, 21)


@pytest.mark.parametrize(
    "text, hosts",
    [
        ("east-gpu-[001-003,007]", ["east-gpu-001", "east-gpu-002", "east-gpu-003", "east-gpu-007"]),
        ("a1,b[2-3]", ["a1", "b2", "b3"]),
        ("node[08-10]", ["node08", "node09", "node10"]),
        ("west-gpu-007", ["west-gpu-007"]),
    ],
)
def test_hostlists(text, hosts):
    assert slurm.expand_hostlist(text) == hosts


def _parse(tmp_path, body, zone="UTC"):
    path = tmp_path / "sacct.psv"
    path.write_text(HEADER + "\n" + body)
    return slurm.parse(path, "scheduler/slurm/west/sacct.psv", "west", ClusterConfig(timezone=zone))


def test_gpus_steps_arrays_and_comment(tmp_path):
    parsed = _parse(
        tmp_path,
        "812|812|pt|alice|acct-a|gpu|CANCELLED by 1234|0:15|2026-11-02T00:00:00|2026-11-02T00:10:00|2026-11-02T05:00:00|billing=16,cpu=16,gres/gpu=16,gres/gpu:h100=16,mem=100G,node=2|g[01-02]|run_id=r1 retry|2|normal\n"
        "812.batch|812.batch|batch||||CANCELLED|0:15|2026-11-02T00:10:00|2026-11-02T00:10:00|2026-11-02T05:00:00|cpu=8,gres/gpu:h100=8,mem=50G,node=1|g01||0|\n"
        "9001|9000_3|arr|bob|acct-b|gpu|COMPLETED|0:0|1762041600|1762041600|1762045200|cpu=1,gres/gpu:a100=1,gres/gpu:h100=2,node=1|g03||0|normal\n",
    )
    assert parsed.rejects.height == 0
    rows = {r["job_key"]: r for r in parsed.rows.iter_rows(named=True)}
    assert rows["812"]["gpus"] == 16  # untyped count, not 16 + 16
    assert rows["812"]["state"] == "CANCELLED" and rows["812"]["cancelled_by"] == "1234"
    assert rows["812"]["run_id"] == "r1" and rows["812"]["restarts"] == 2
    assert rows["812.batch"]["is_step"] and rows["812.batch"]["parent_job_key"] == "812"
    assert rows["812.batch"]["gpus"] == 8  # typed only
    assert rows["9001"]["array_job_id"] == "9000" and rows["9001"]["array_task_id"] == "3"
    assert rows["9001"]["gpus"] == 3  # two typed entries, no untyped: summed
    assert rows["9001"]["start_ts"] == datetime(2025, 11, 2, 0, 0)  # epoch seconds


def test_local_time_across_the_dst_fall_back(tmp_path):
    # Los Angeles, 2026-11-01: 01:00–02:00 happens twice (PDT, then PST).
    parsed = _parse(
        tmp_path,
        "1|1|j|u|a|p|COMPLETED|0:0|2026-10-31T23:00:00|2026-10-31T23:00:00|2026-11-01T03:00:00|gres/gpu=1,node=1|n1||0|q\n"
        "2|2|j|u|a|p|COMPLETED|0:0|2026-11-01T01:30:00|2026-11-01T01:30:00|2026-11-01T01:10:00|gres/gpu=1,node=1|n1||0|q\n",
        zone="America/Los_Angeles",
    )
    rows = {r["job_key"]: r for r in parsed.rows.iter_rows(named=True)}
    assert rows["1"]["start_ts"] == datetime(2026, 11, 1, 6, 0)  # PDT, UTC-7
    assert rows["1"]["end_ts"] == datetime(2026, 11, 1, 11, 0)  # PST, UTC-8: 5 hours of wall time
    # started 01:30 PDT, ended 01:10 PST (40 minutes later): the repeated hour is read correctly
    assert rows["2"]["start_ts"] == datetime(2026, 11, 1, 8, 30)
    assert rows["2"]["end_ts"] == datetime(2026, 11, 1, 9, 10)


def test_broken_lines_are_quarantined_by_line(tmp_path):
    parsed = _parse(
        tmp_path,
        "1|1|j|u|a|p|COMPLETED|0:0|2026-11-01T00:00:00|2026-11-01T00:00:00|2026-11-01T01:00:00|gres/gpu=1,node=1|n1||0|q\n"
        "2|2|j|u|a|p|COMPLETED|0:0\n"
        "3|3|j|u|a|p|COMPLETED|0:0|2026-11-01T00:00:00|2026-11-01T05:00:00|2026-11-01T01:00:00|gres/gpu=1,node=1|n1||0|q\n"
        "4|4|j|u|a|p|COMPLETED|0:0|2026-11-01T00:00:00|yesterday|2026-11-01T01:00:00|gres/gpu=1,node=1|n1||0|q\n",
    )
    assert parsed.rows["job_key"].to_list() == ["1"]
    reasons = dict(parsed.rejects.select("row_ref", "reason").iter_rows())
    assert reasons["line 3"] == "8 fields where the header has 16"
    assert reasons["line 4"] == "End must not be before Start"
    assert reasons["line 5"] == "Start 'yesterday' is not a time"


ROW = "{id}|{id}|train|alice|acct-a|gpu|{state}|0:0|2026-11-02T00:00:00|2026-11-02T00:00:00|2026-11-02T01:00:00|gres/gpu=8,node=1|g01||0|normal"


def test_an_unknown_state_is_quarantined_naming_it(tmp_path):
    parsed = _parse(tmp_path, ROW.format(id=1, state="FOO") + "\n" + ROW.format(id=2, state="COMPLETED") + "\n")
    assert parsed.rows["job_key"].to_list() == ["2"]
    assert parsed.rejects["reason"].to_list() == [
        "State 'FOO' is not a sacct state: map it to one in the config's slurm.state_map"]
    assert parsed.rejects["row_ref"].to_list() == ["line 2"]


def test_the_config_maps_a_site_state(tmp_path):
    path = tmp_path / "sacct.psv"
    path.write_text(HEADER + "\n" + ROW.format(id=1, state="FOO") + "\n" + ROW.format(id=2, state="PREEMPTED") + "\n")
    parsed = slurm.parse(path, "s.psv", "west", ClusterConfig(), state_map={"FOO": "FAILED"})
    assert parsed.rejects.height == 0
    assert dict(zip(parsed.rows["job_key"], parsed.rows["state"])) == {"1": "FAILED", "2": "PREEMPTED"}


def test_comment_and_blank_lines_are_skipped_and_counted(tmp_path):
    body = "# exported by cron at 06:00\n" + ROW.format(id=1, state="COMPLETED") + "\n\n   \n# end\n"
    parsed = _parse(tmp_path, body)
    assert parsed.rejects.height == 0 and parsed.rows.height == 1
    assert parsed.dropped == {"blank lines": 2, "comment lines": 2}
    assert parsed.rows["_row"].to_list() == [3]   # line numbers stay those of the file


def test_an_empty_file_is_named_as_empty(tmp_path):
    path = tmp_path / "sacct.psv"
    path.write_bytes(b"")
    parsed = slurm.parse(path, "scheduler/slurm/west/sacct.psv", "west", ClusterConfig())
    assert parsed.rejects["reason"].to_list() == [
        "empty sacct file (0 bytes, no header line and no records): re-export it with `sacct -P` (with a header), "
        "or delete it"]


@pytest.mark.parametrize("tres, whole, slices, error", [
    ("cpu=4,gres/gpu=1,gres/gpu:1g.10gb=1,node=1", 0, [1000], None),       # the untyped count includes MIG
    ("cpu=4,gres/gpu:3g.40gb=2,node=1", 0, [3000, 3000], None),             # two 3g.40gb instances
    ("gres/gpu=3,gres/gpu:h100=2,gres/gpu:a100_2g.20gb=1,node=1", 2, [2000], None),  # typed prefix, mixed
    ("gres/gpu:nvidia_a30_1g.6gb=1", 0, [1750], None),                      # an A30 has 4 compute slices
    ("gres/gpu=2,gres/gpu:h100=2", 2, None, None),
    ("cpu=4,mem=1G", None, None, None),
    ("gres/gpu:5g.50gb=1", None, None, "gres/gpu:5g.50gb: MIG profile '5g.50gb' is not in the catalog of MIG "
                                    "profiles (models/mig_profiles.py)"),
])
def test_mig_gres_types_are_slices_of_a_gpu(tres, whole, slices, error):
    assert slurm.gpu_request(tres) == (whole, slices, error)


@pytest.mark.parametrize("tres, whole, slices, error", [
    ("cpu=4,gres/shard=2,node=1", 0, [875, 875], None),                     # 2 shards of 8 per GPU
    ("cpu=4,gres/shard:h100=3,node=1", 0, [875, 875, 875], None),           # a typed shard is a shard
    ("cpu=4,gres/mps=50,node=1", 0, [3500], None),                          # 50 of 100 MPS units: half a GPU
    ("cpu=4,gres/mps=250,node=1", 0, [7000, 7000, 3500], None),             # 2½ GPUs
    ("gres/gpu=1,gres/gpu:h100=1,gres/shard=1", 1, [875], None),            # a whole GPU beside a shard
])
def test_slurm_sharing_gres_are_slices_of_a_gpu(tres, whole, slices, error):
    """Slurm's own GPU sharing (gres.conf `Name=shard`, `Name=mps`): the cluster config says how many
    units make one GPU (8 shards, 100 MPS units here)."""
    assert slurm.gpu_request(tres, gpu_shards=8, mps_per_gpu=100) == (whole, slices, error)


def test_sharing_gres_without_the_clusters_count_is_an_error():
    assert slurm.gpu_request("cpu=4,gres/shard=2,node=1") == (
        None, None, "gres/shard=2: the cluster's gpu_shards (its gres.conf count per GPU) is not in the config, so "
                    "its share of a GPU is unknown")
    assert slurm.gpu_request("gres/mps=30")[2].startswith("gres/mps=30: the cluster's mps_per_gpu")


def test_a_mig_gres_job_stages_its_slices_and_an_unknown_profile_is_quarantined(tmp_path):
    parsed = _parse(
        tmp_path,
        "70|70|infer|alice|acct-a|gpu|COMPLETED|0:0|2026-11-02T00:00:00|2026-11-02T00:00:00|2026-11-02T01:00:00|cpu=4,gres/gpu=2,gres/gpu:3g.40gb=2,node=1|g01||0|normal\n"
        "71|71|infer|alice|acct-a|gpu|COMPLETED|0:0|2026-11-02T00:00:00|2026-11-02T00:00:00|2026-11-02T01:00:00|cpu=4,gres/gpu=1,gres/gpu:9g.99gb=1,node=1|g01||0|normal\n",
    )
    row = parsed.rows.row(0, named=True)
    assert (row["job_key"], row["gpus"], row["gpu_slices"], row["gpu_index"]) == ("70", 0, [3000, 3000], None)
    assert parsed.rejects["row_ref"].to_list() == ["line 3"]
    assert "MIG profile '9g.99gb' is not in the catalog" in parsed.rejects["reason"][0]

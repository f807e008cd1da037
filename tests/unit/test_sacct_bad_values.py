"""sacct lines that carry bytes that are not UTF-8 or GPU counts no node can hold: each costs its own
line (or, for text costing never reads, only the bad bytes), never the file, and never bills a node."""

import pytest

from pipelines.ingest import slurm
from pipelines.lib.config import ClusterConfig

HEADER = b"JobIDRaw|JobID|JobName|User|Account|Partition|State|ExitCode|Submit|Start|End|AllocTRES|NodeList|Comment|Restarts|QOS"
FILE = "scheduler/slurm/west/sacct_2026-10-29.psv"


def _line(job="101", name=b"train", user=b"ana", account=b"acct-a", tres=b"gres/gpu=8,node=1", comment=b"run_id=r1"):
    return b"|".join([job.encode(), job.encode(), name, user, account, b"gpu", b"COMPLETED", b"0:0",
                      b"2026-10-29T01:00:00", b"2026-10-29T01:00:00", b"2026-10-29T05:00:00", tres,
                      b"west-gpu-001", comment, b"0", b"normal"])


def _parse(tmp_path, *lines):
    path = tmp_path / "sacct_2026-10-29.psv"
    path.write_bytes(b"\n".join([HEADER, *lines]) + b"\n")
    return slurm.parse(path, FILE, "west", ClusterConfig())


def test_a_bad_byte_in_a_comment_keeps_the_job_and_the_file(tmp_path):
    """Was: `'utf-8' codec can't decode byte 0xe9` refused the whole file, its jobs' cost moved to idle."""
    parsed = _parse(tmp_path, _line("101", comment=b"caf\xe9 run_id=r1"), _line("102"))
    assert parsed.rejects.height == 0
    assert sorted(parsed.rows["job_key"].to_list()) == ["101", "102"]
    kept = parsed.rows.filter(job_key="101").row(0, named=True)
    assert kept["comment"] == "caf\ufffd run_id=r1" and kept["run_id"] == "r1"
    assert parsed.defaulted == {"comment": {slurm.REPLACED_BYTES: 1}}


def test_a_bad_byte_where_costing_reads_quarantines_that_line_naming_the_byte_offset(tmp_path):
    first = _line("101")
    parsed = _parse(tmp_path, first, _line("102", account=b"acct-\xff"), _line("103", name=b"\xfe\xfe"))
    assert sorted(parsed.rows["job_key"].to_list()) == ["101", "103"]
    [reject] = parsed.rejects.to_dicts()
    # the byte is the header's, the first line's and "102|102|train|ana|acct-"'s length further on
    offset = len(HEADER) + 1 + len(first) + 1 + len(b"102|102|train|ana|acct-")
    assert (reject["file"], reject["row_ref"]) == (FILE, "line 3")
    assert reject["reason"] == f"Account has a byte that is not UTF-8 at byte offset {offset} of the file"
    assert "acct-\ufffd" in reject["payload"]


def test_a_bad_byte_in_the_header_refuses_the_file_by_name(tmp_path):
    path = tmp_path / "sacct_2026-10-29.psv"
    path.write_bytes(HEADER.replace(b"Comment", b"Comm\xffent") + b"\n" + _line() + b"\n")
    parsed = slurm.parse(path, FILE, "west", ClusterConfig())
    assert parsed.rows.height == 0
    offset = HEADER.index(b"Comment") + len(b"Comm")
    assert parsed.rejects["reason"].to_list() == [
        f"unreadable sacct file: header line 1 has a byte that is not UTF-8 at byte offset {offset} of the file"]


@pytest.mark.parametrize("tres, why", [
    ("gres/gpu=-4,node=1", "AllocTRES gres/gpu=-4: the count is not a whole number of devices"),
    ("gres/gpu=1.5,node=1", "AllocTRES gres/gpu=1.5: the count is not a whole number of devices"),
    ("gres/gpu=100000000000000000000,node=1",
     "AllocTRES gres/gpu=100000000000000000000: the count is more than 1,000,000, more than any allocation holds"),
    ("gres/gpu:h100=x,node=1", "AllocTRES gres/gpu:h100=x: the count is not a whole number of devices"),
    ("gres/shard=-1", "AllocTRES gres/shard=-1: the count is not a whole number of devices"),
])
def test_an_invalid_gpu_count_is_a_quarantined_job_not_one_without_gpus(tmp_path, tres, why):
    """Was: `gres/gpu=-4` and 10^20 staged with gpus NULL, which the ledger reads as the whole node."""
    parsed = _parse(tmp_path, _line("101", tres=tres.encode()), _line("102"))
    assert parsed.rows["job_key"].to_list() == ["102"]
    [reject] = parsed.rejects.to_dicts()
    assert reject["row_ref"] == "line 2" and reject["reason"] == why


def test_a_failing_row_whose_reason_words_to_null_still_gets_a_named_reason(tmp_path):
    """ops.quarantine.reason is NOT NULL: a reason formatted from a NULL value must not reach it as NULL."""
    import polars as pl

    from models.landing import SchedulerJobAllocation
    from pipelines.ingest.common import split_by_contract

    rows = _parse(tmp_path, _line("101")).rows
    _, rejects = split_by_contract(
        rows, SchedulerJobAllocation, source="slurm", file=FILE, staged_columns=slurm.STAGED, raw_columns=["job_id"],
        row_ref=pl.lit("line 2"), checks=[(pl.lit(True), pl.lit(None, dtype=pl.String))])
    assert rejects["reason"].to_list() == [
        f"fails the {SchedulerJobAllocation.name} contract (no reason could be worded from its values)"]

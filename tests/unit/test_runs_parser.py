import json
from datetime import datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.ingest import runs
from tests.support.memory_db import memory_db

LINES = [
    '{"event":"run_config","run_id":"r1","project":"llm-7b","model":{"params":6.7e9,"active_params":6.7e9,"layers":32,"heads":32,"head_dim":128,"seq_len":4096},"dtype":"bf16","ts":"2026-11-01T00:00:00Z"}',
    '{"event":"step","run_id":"r1","job_id":"812","step":1200,"tokens":4194304,"ts":"2026-11-01T00:01:00Z"}',
    "",
    '{"event":"checkpoint_saved","run_id":"r1","job_id":"812","step":1200,"ts":"2026-11-01T00:02:00Z"}',
    "{truncated",
    '{"event":"step","run_id":"r1","job_id":"812","step":1201,"ts":"2026-11-01T00:03:00Z"}',
    '{"event":"step","run_id":"r1","job_id":"812","step":1202,"tokens":"many","ts":"2026-11-01T00:04:00Z"}',
    '["not", "an", "object"]',
]


def test_events_and_their_faults(tmp_path):
    path = tmp_path / "r1.jsonl"
    path.write_text("\n".join(LINES) + "\n")
    parsed = runs.parse(memory_db(), path, "runs/r1.jsonl")
    rows = parsed.rows.sort("_row")
    assert rows["event"].to_list() == ["run_config", "step", "checkpoint_saved"]
    config = rows.row(0, named=True)
    assert (config["model_layers"], config["model_heads"], config["model_head_dim"], config["model_seq_len"]) == (32, 32, 128, 4096)
    assert config["model_active_params"] == 6.7e9 and config["project"] == "llm-7b"
    assert rows.row(1, named=True)["tokens"] == 4194304
    assert rows.row(1, named=True)["ts"] == datetime(2026, 11, 1, 0, 1)
    reasons = dict(parsed.rejects.select("row_ref", "reason").iter_rows())
    assert set(reasons) == {"line 5", "line 6", "line 7", "line 8"}
    assert reasons["line 5"].startswith("not JSON: ")
    assert reasons["line 6"] == "step events must carry step and tokens"
    assert reasons["line 7"] == "tokens 'many' is not an integer"
    assert reasons["line 8"].startswith("not a JSON object")


# Lines DuckDB's JSON reader and Python's json could read apart; read column-wise they must come out
# as Python reads them one by one.
TRICKY = [
    '{"event":"step","run_id":"r","step":1,"tokens":2,"ts":"2026-11-01T00:00:00Z",}',      # trailing comma
    '{"event":"step","run_id":"a","run_id":"b","step":1,"tokens":2,"ts":"2026-11-01T00:00:00Z"}',  # key twice
    '{"event":"run_config","run_id":"r","model":{"layers":32,"layers":48},"ts":"2026-11-01T00:00:00Z"}',
    '{"event":"step","run_id":"r","step":1.5,"tokens":1e3,"ts":"2026-11-01T00:00:00Z"}',    # fractions, exponents
    '{"event":"step","run_id":"r","step":NaN,"tokens":Infinity,"ts":"2026-11-01T00:00:00Z"}',
    '{"event":"step","run_id":"r","step":-0,"tokens":123456789012345678901234567890,"ts":"2026-11-01T00:00:00Z"}',
    '{"event":"step","run_id":7,"job_id":812,"step":true,"tokens":null,"ts":1762041600}',   # numbers as ids, epoch ts
    '{"event":"step","run_id":"r\\u0000x","project":"\\u00e9\\t\\"q\\"","ts":"2026-11-01T00:00:00Z"}',
    '{"event":"step","run_id":"r\\ud800","ts":"2026-11-01T00:00:00Z"}',                        # a lone surrogate
    '{"event":"step","run_id":["r"],"project":{"p":1},"dtype":[],"ts":"2026-11-01T00:00:00Z"}',
    '{"event":"run_config","run_id":"r","model":[1],"ts":"2026-11-01T00:00:00Z"}',
    '{"event":"run_config","run_id":"r","model":{"params":6.7e9,"active_params":1e400,"seq_len":4096},"ts":"x"}',
    '{"event":"step","x":' + "[" * 300 + "]" * 300 + ',"run_id":"r","ts":"2026-11-01T00:00:00Z"}',
    '{"event":"step","x":' + "[" * 100_000 + "]" * 100_000 + "}",                                # nested too deeply
    '{"event":"step","run_id":"' + "x" * (1 << 20) + '"}',                                      # too long
    '\ufeff{"event":"step","run_id":"r"}', '{"a":1}{"b":2}', "[1, 2]", '"text"', "null", "{truncated", "\x1f", " \t ",
    '{"event":"step","run_id":"r","ts":"2026-11-01T00:00:00Z"} ', '{"run_id":"r\u2028x","event":"step"}',
]


def _alike(lines: list[str]) -> pl.DataFrame:
    """Lines read column-wise, having checked they are what Python reads one by one. The two fields read
    as floats may be spelled apart (6.7e9 or 6700000000.0); their numbers must be the same."""
    floats = [pl.coalesce(pl.col(c).cast(pl.Float64, strict=False).cast(pl.String), pl.col(c)).alias(c)
              for c in (runs.RAW + "model_params", runs.RAW + "model_active_params")]
    column_wise = runs.read_lines(memory_db(), lines)
    one_by_one = runs.read_lines(memory_db(), lines, column_wise=False)
    assert column_wise.with_columns(floats).equals(one_by_one.with_columns(floats))
    return column_wise


def test_column_wise_lines_are_read_as_python_reads_them_one_by_one():
    column_wise = _alike(TRICKY)
    assert column_wise.filter(pl.col("_error").is_null()).height >= 10  # and most of them are events


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
keys = st.sampled_from([*runs.FIELDS, "model", "other"])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.dictionaries(keys, json_values | st.dictionaries(st.sampled_from(list(runs.MODEL_FIELDS.values())),
                                                                    json_values, max_size=4), max_size=6),
                min_size=1, max_size=8))
def test_any_json_objects_are_read_alike(objects):
    _alike([json.dumps(o) for o in objects])


def test_blank_is_what_python_strips():
    chars = [chr(c) for c in range(0x3001) if not 0xD800 <= c <= 0xDFFF]
    lines = [f"{c}{c}" for c in chars if c not in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"]  # line breaks
    kept = pl.Series(lines).str.contains(runs.BLANK)
    assert kept.to_list() == [not line.strip() for line in lines]


# The badput's events (docs/ingest/runs.md): phase events, and step timers held to the step's seconds.
TIMED = [
    '{"event":"step","run_id":"r1","job_id":"8","step":1,"tokens":4,"ts":"2026-11-01T00:00:00Z"}',
    '{"event":"step","run_id":"r1","job_id":"8","step":2,"tokens":4,"ts":"2026-11-01T00:00:10Z","data_seconds":1.5,"comm_seconds":2}',
    '{"event":"step","run_id":"r1","job_id":"8","step":3,"tokens":4,"ts":"2026-11-01T00:00:20Z","data_seconds":-1}',
    '{"event":"step","run_id":"r1","job_id":"8","step":4,"tokens":4,"ts":"2026-11-01T00:00:30Z","data_seconds":NaN}',
    '{"event":"step","run_id":"r1","job_id":"8","step":5,"tokens":4,"ts":"2026-11-01T00:00:40Z","data_seconds":6,"comm_seconds":5}',
    '{"event":"step","run_id":"r1","job_id":"8","step":6,"tokens":4,"ts":"2026-11-01T00:00:50Z","data_seconds":"slow"}',
    '{"event":"checkpoint_started","run_id":"r1","job_id":"8","step":6,"ts":"2026-11-01T00:00:51Z"}',
    '{"event":"eval_started","run_id":"r1","job_id":"8","ts":"2026-11-01T00:00:52Z"}',
    '{"event":"eval_done","run_id":"r1","job_id":"8","ts":"2026-11-01T00:00:55Z"}',
    '{"event":"step","run_id":"r1","job_id":"8","step":7,"tokens":4,"ts":"2026-11-01T00:01:00Z","comm_seconds":Infinity}',
    '{"event":"step","run_id":"r1","job_id":"9","step":1,"tokens":4,"ts":"2026-11-01T00:01:00Z","data_seconds":1e3}',
    '{"event":"step","run_id":"r1","job_id":"8","step":8,"tokens":4,"ts":"2026-11-01T00:01:30Z","data_seconds":1e-3}',
]


def test_step_timers_and_phase_events(tmp_path):
    path = tmp_path / "r1.jsonl"
    path.write_text("\n".join(TIMED) + "\n")
    parsed = runs.parse(memory_db(), path, "runs/r1.jsonl")
    rows = {r["_row"]: r for r in parsed.rows.iter_rows(named=True)}
    assert sorted(rows) == [1, 2, 7, 8, 9, 11, 12]
    # old events keep their meaning: no timers, NULL, not 0
    assert (rows[1]["data_seconds"], rows[1]["comm_seconds"], rows[1]["step_seconds"]) == (None, None, None)
    assert (rows[2]["data_seconds"], rows[2]["comm_seconds"], rows[2]["step_seconds"]) == (1.5, 2.0, 10.0)
    assert [rows[n]["event"] for n in (7, 8, 9)] == ["checkpoint_started", "eval_started", "eval_done"]
    # the first step of job 9 has no previous step to hold its timer to; job 8's step 8 follows line 10,
    # which was refused but is still the step before it in time
    assert rows[11]["step_seconds"] is None and rows[11]["data_seconds"] == 1000.0
    assert rows[12]["step_seconds"] == 30.0 and rows[12]["data_seconds"] == 0.001
    reasons = dict(parsed.rejects.select("row_ref", "reason").iter_rows())
    assert set(parsed.rejects["file"]) == {"runs/r1.jsonl"}
    assert reasons == {
        "line 3": "data_seconds -1.0 is negative",
        "line 4": "data_seconds must be a finite number",
        "line 5": "data_seconds + comm_seconds must not exceed the step's seconds since the job's previous step",
        "line 6": "data_seconds 'slow' is not a number",
        "line 10": "comm_seconds must be a finite number",
    }


def test_step_timers_read_column_wise_as_python_reads_them():
    assert runs.read_lines(memory_db(), TIMED).equals(runs.read_lines(memory_db(), TIMED, column_wise=False))

from datetime import datetime

from pipelines.ingest import runs

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
    parsed = runs.parse(path, "runs/r1.jsonl")
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

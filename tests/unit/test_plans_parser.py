"""The run plan parser (docs/ingest/plans.md): a good plan is one staged row; a bad one is quarantined
whole, each problem a row naming the file, the key and its line."""

from __future__ import annotations

import time
from datetime import date
from decimal import Decimal

import pytest

from pipelines.ingest import plans
from tests.unit.test_plan_estimate import EXAMPLE


def parsed(tmp_path, text: str, name: str = "p.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return plans.parse(path, f"plans/{name}")


def test_a_plan_is_one_staged_row_with_yaml_1_1_exponents_read_as_numbers(tmp_path):
    # PyYAML reads `1.5e12` (no sign in the exponent) as text: the schema turns it into the number
    out = parsed(tmp_path, EXAMPLE)
    assert out.rejects.height == 0
    row = out.rows.to_dicts()[0]
    assert row["tokens"] == 1.5e12 and row["model_params"] == 8e9 and row["model_active_params"] == 8e9
    assert row["price_per_gpu_hour"] == Decimal("3.12")  # the YAML float's shortest text, exactly
    assert row["start"] == date(2026, 12, 1) and row["_file"] == "plans/p.yaml"
    assert row["gpus"] == 1024 and row["dtype"] == "bf16"


def test_active_params_default_to_params_and_optional_inputs_stay_null(tmp_path):
    text = EXAMPLE.replace("active_params: 8.0e9, ", "")
    for key in ("price_per_gpu_hour", "checkpoint_seconds", "restart_seconds", "mtbf_gpu_hours", "redundancy"):
        text = "\n".join(line for line in text.splitlines() if not line.startswith(key)) + "\n"
    row = parsed(tmp_path, text).rows.to_dicts()[0]
    assert row["model_active_params"] == 8e9
    assert [row[k] for k in ("price_per_gpu_hour", "checkpoint_seconds", "restart_seconds", "mtbf_gpu_hours",
                             "redundancy")] == [None] * 5


@pytest.mark.parametrize("text, row_ref, words", [
    (EXAMPLE.replace("tokens: 1.5e12", "tokens: -5"), "line 4", ["`tokens`", "greater than 0", "-5"]),
    (EXAMPLE.replace("gpus: 1024", "gpu: 1024"), "line 6", ["unknown key `gpu`", "did you mean `gpus`?"]),
    (EXAMPLE.replace("tokens: 1.5e12\n", ""), "file", ["missing key `tokens`"]),
    (EXAMPLE.replace("heads: 32,", "heads: 32, hidden: 4096,"), "line 3", ["unknown key `model.hidden`"]),
    (EXAMPLE.replace("gpus: 1024", "gpus: [1024"), "line 7", ["not valid YAML"]),
    ("- just\n- a list\n", "file", ["a plan is a mapping"]),
    (EXAMPLE.replace("price_per_gpu_hour: 3.12", "price_per_gpu_hour: 3.12\ncurrency: dollars"), "line 11",
     ["`currency`", "ISO 4217"]),
    # a cluster's FLOP/s written as one GPU's: 1,024 H100s are 1.0e18
    (EXAMPLE + "peak_flops: 1.0127e18\n", "line 15", ["`peak_flops`", "one GPU's peak FLOP/s, at most 1e+17"]),
])
def test_a_bad_plan_is_quarantined_whole_naming_file_key_and_line(tmp_path, text, row_ref, words):
    out = parsed(tmp_path, text)
    assert out.rows.height == 0
    reject = next(r for r in out.rejects.to_dicts() if words[0] in r["reason"])
    assert (reject["source"], reject["file"], reject["row_ref"]) == ("plans", "plans/p.yaml", row_ref)
    for w in words:
        assert w in reject["reason"], reject["reason"]


def test_every_problem_of_a_plan_is_named(tmp_path):
    text = EXAMPLE.replace("tokens: 1.5e12", "tokens: -5").replace("gpus: 1024", "gpus: 0")
    reasons = parsed(tmp_path, text).rejects["reason"].to_list()
    assert len(reasons) == 2 and "`tokens`" in reasons[0] and "`gpus`" in reasons[1]


def test_an_unreadable_file_is_one_row(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_bytes(b"run_id: \xff\xfe\n")
    out = plans.parse(path, "plans/p.yaml")
    assert out.rejects["row_ref"].to_list() == ["file"] and "unreadable" in out.rejects["reason"][0]


# --- issue 22: a plan says one thing, and reading it costs little --------------------------------------

@pytest.mark.parametrize("text, row_ref, words", [
    (EXAMPLE + "gpus: 8\n", "line 15", ["`gpus` is given twice, on line 6 and line 15"]),
    (EXAMPLE.replace("heads: 32,", "heads: 32, layers: 80,"), "line 3", ["`model.layers` is given twice on line 3"]),
    ("shape: &s {params: 8.0e9}\n" + EXAMPLE, "line 1", ["an anchor (&s) is not allowed"]),
    (EXAMPLE.replace("price_per_gpu_hour: 3.12", "price_per_gpu_hour: '1e400'"), "line 10",
     ["`price_per_gpu_hour`", "below 1e12"]),
    (EXAMPLE.replace("price_per_gpu_hour: 3.12", "price_per_gpu_hour: 3.12\ncurrency: usd"), "line 11",
     ["`currency`", "did you mean USD?"]),
])
def test_duplicate_keys_anchors_and_out_of_range_money_quarantine_the_plan(tmp_path, text, row_ref, words):
    out = parsed(tmp_path, text)
    assert out.rows.height == 0
    reject = next(r for r in out.rejects.to_dicts() if words[0] in r["reason"])
    assert (reject["file"], reject["row_ref"]) == ("plans/p.yaml", row_ref), reject
    for w in words:
        assert w in reject["reason"], reject["reason"]


def test_a_yaml_bomb_in_plans_is_quarantined_at_once(tmp_path):
    # nine lines of nested aliases took `gpuledger inspect` to 11.7 GB; six here: 9^6 values if expanded
    bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcde", "bcdef"))
    started = time.perf_counter()
    out = parsed(tmp_path, bomb)
    assert time.perf_counter() - started < 1
    assert out.rejects.to_dicts()[0]["row_ref"] == "line 1"
    assert "an anchor (&a) is not allowed" in out.rejects["reason"][0]


def test_a_plan_over_the_byte_limit_is_one_row(tmp_path):
    out = parsed(tmp_path, EXAMPLE + "#" * (1 << 20) + "\n")
    assert out.rejects["row_ref"].to_list() == ["file"]
    assert "over the 1,048,576-byte limit" in out.rejects["reason"][0]


def test_the_plan_command_refuses_a_duplicate_key_naming_file_and_lines(tmp_path, capsys, monkeypatch):
    from pipelines.cli import main

    monkeypatch.delenv("GPULEDGER_CONFIG", raising=False)
    path = tmp_path / "p.yaml"
    path.write_text(EXAMPLE + "tokens: 1.0e9\n", encoding="utf-8")
    assert main(["plan", str(path)]) == 2
    assert f"{path}:15: `tokens` is given twice, on line 4 and line 15" in capsys.readouterr().err


def test_a_plan_may_give_the_peak_flops_of_its_gpu(tmp_path):
    row = parsed(tmp_path, EXAMPLE.replace("gpu_model: H100-SXM", "gpu_model: MI355X") + "peak_flops: 2.3e15\n"
                 ).rows.to_dicts()[0]
    assert (row["gpu_model"], row["peak_flops"]) == ("MI355X", 2.3e15)
    assert parsed(tmp_path, EXAMPLE).rows.to_dicts()[0]["peak_flops"] is None

"""What `gpuledger plan` says of a plan's names and of where each input came from (docs/plans.md):
a GPU or dtype outside the catalog without `peak_flops` is an error with "did you mean"; a project
neither the ledger nor the config has is a warning (a new project); the team is the config's, else the
ledger's, else none — never the project's name; a built-in default is "built-in", never "config"; a
plan's `peak_flops` plans a GPU the catalog lacks; the text fits 80 columns. The ledger's names are
given by hand (LedgerNames), so no warehouse is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.cli.plan import as_json, as_text, estimate
from pipelines.cli.plan_names import check_plan_names, plan_team
from pipelines.lib.config import OrgConfig, load_config
from pipelines.lib.ledger_names import LedgerNames, config_name_warnings
from tests.unit.test_plan_estimate import EXAMPLE, plan_of

LEDGER = LedgerNames(Path("w.duckdb"), projects={"llm-7b": ("pretrain",), "rlhf": ("posttrain",)},
                     pools=frozenset({"east-reserved"}), clusters=frozenset({"east", "west"}))


def checked(text: str, cfg: OrgConfig = OrgConfig(), ledger: LedgerNames | None = LEDGER):
    return check_plan_names(plan_of(text), text, "plan.yaml", cfg, ledger)


def test_a_gpu_outside_the_catalog_is_an_error_naming_the_line_and_the_closest_model():
    errors, _ = checked(EXAMPLE.replace("gpu_model: H100-SXM", "gpu_model: MI355X"))
    assert errors == ["plan.yaml:5: `gpu_model`: no GPU model 'MI355X' in the GPU catalog (models/gpu_catalog.py) — "
                      "did you mean 'MI300X'? (a GPU outside it needs peak_flops: per GPU, FLOP/s, dense bf16)"]
    errors, _ = checked(EXAMPLE.replace("dtype: bf16", "dtype: int8"))
    assert errors == ["plan.yaml:7: `dtype`: no dtype 'int8' in the GPU catalog's H100 SXM; it has: bf16, fp16, fp8 "
                      "(or give peak_flops: per GPU, FLOP/s, dense int8)"]
    assert "did you mean 'fp8'?" in checked(EXAMPLE.replace("dtype: bf16", "dtype: fp4"))[0][0]
    # the catalog's spellings are matched as before: these are no errors
    for spelling in ("NVIDIA H100 80GB HBM3", "h100-sxm", "B200"):
        assert checked(EXAMPLE.replace("gpu_model: H100-SXM", f"gpu_model: {spelling}"))[0] == []


def test_a_gpu_outside_the_catalog_is_planned_at_the_peak_flops_the_plan_gives():
    text = EXAMPLE.replace("gpu_model: H100-SXM", "gpu_model: MI355X") + "peak_flops: 2.3e15\n"
    assert checked(text)[0] == []
    row = estimate(plan_of(text), "plan.yaml", OrgConfig(), None)
    # 60,884,901,888 FLOPs a token × 1.5e12 tokens / (2.3e15 · 0.40) / 3600
    #   = 9.1327352832e22 / 9.2e14 / 3600 = 99,268,861.77 s / 3600 = 27,574.6838 GPU-hours
    assert row["ideal_gpu_hours"] == pytest.approx(9.1327352832e22 / 9.2e14 / 3600, rel=1e-13)
    assert row["ideal_gpu_hours"] == pytest.approx(27_574.6838, abs=1e-4)
    assert as_json(row)["inputs"]["peak_flops"] == {"value": 2.3e15, "source": "plan"}
    assert row["missing_inputs"] == [] and row["gpu_model_canonical"] is None


def test_a_project_nobody_has_is_a_warning_with_the_closest_and_a_new_project_is_still_estimated():
    errors, warnings = checked(EXAMPLE.replace("project: llm-8b", "project: llm-7bb"))
    assert errors == []
    assert warnings == ["plan.yaml:2: `project`: no project 'llm-7bb' in the ledger — did you mean 'llm-7b'? "
                        "(estimated as a new project)"]
    # a project the config's teams name is known, though the ledger has no cost of it yet
    cfg = OrgConfig(teams={"pretrain": {"projects": ["llm-7b", "llm-8b"]}})
    assert checked(EXAMPLE, cfg) == ([], [])
    # nothing to check against: nothing said
    assert checked(EXAMPLE, OrgConfig(), None) == ([], [])
    _, warnings = checked(EXAMPLE.replace("project: llm-8b", "project: zzz"), cfg, None)
    assert warnings == ["plan.yaml:2: `project`: no project 'zzz' in the org config; it has: llm-7b, llm-8b "
                        "(estimated as a new project)"]


def test_the_team_is_the_configs_else_the_ledgers_else_none_never_the_projects_name():
    cfg = OrgConfig(teams={"ml": {"projects": ["llm-7b"]}})
    assert plan_team("llm-7b", cfg, LEDGER) == ("ml", "org config teams.ml.projects")
    assert plan_team("llm-7b", OrgConfig(), LEDGER) == (
        "pretrain", "marts.dim_projects (the team the ledger charged project llm-7b to lately)")
    assert plan_team("llm-8b", OrgConfig(), LEDGER) == (None, "none: no config names the project's team, nor has "
                                                              "the ledger charged it")
    row = estimate(plan_of(EXAMPLE), "plan.yaml", OrgConfig(), None)
    assert (row["team"], as_json(row)["team_source"]) == (None, "none: no config names the project's team")
    text = as_text(row)
    assert text.splitlines()[0] == "plan llm-8b-pretrain-v2: project llm-8b, no team" and "team llm-8b" not in text


def test_a_built_in_default_is_said_built_in_and_a_config_files_value_org_config(tmp_path):
    text = EXAMPLE.replace("mfu_target: 0.40\n", "").replace("redundancy: 1.3\n", "").replace("dtype: bf16\n", "")
    row = estimate(plan_of(text), "plan.yaml", OrgConfig(), None)
    sources = {name: i["source"] for name, i in as_json(row)["inputs"].items()}
    assert sources["mfu_target"] == "built-in (0.4)" and sources["redundancy"] == "built-in (1.3)"
    assert sources["dtype"] == "built-in (bf16)" and sources["price_per_gpu_hour"] == "plan (currency: built-in USD)"
    assert not any("config" in s for s in sources.values()), sources
    assert as_text(row).splitlines()[3] == "no config file: the built-in defaults"
    # a config file that sets them: its keys, named; one that leaves mfu_target out: still the built-in
    path = tmp_path / "org.yaml"
    path.write_text("mfu_target: 0.5\ndefault_currency: EUR\nteams: {ml: {projects: [llm-8b]}}\n")
    row = estimate(plan_of(text), "plan.yaml", load_config(path), None, path)
    out = as_json(row)
    assert out["inputs"]["mfu_target"] == {"value": 0.5, "source": "org config mfu_target"}
    assert out["inputs"]["price_per_gpu_hour"] == {"value": "3.12", "currency": "EUR",
                                                   "source": "plan (currency: org config default_currency)"}
    assert (out["team"], out["team_source"], out["defaults"]["config"]) == ("ml", "org config teams.ml.projects",
                                                                            str(path))
    path.write_text("teams: {ml: {projects: [llm-8b]}}\n")
    assert as_json(estimate(plan_of(text), "plan.yaml", load_config(path), None, path)
                   )["inputs"]["mfu_target"]["source"] == "built-in (0.4)"


def test_the_estimate_reads_on_an_80_column_terminal():
    text = EXAMPLE.replace("price_per_gpu_hour: 3.12\n", "").replace("mtbf_gpu_hours: 50000\n", "")
    lines = as_text(estimate(plan_of(text), "a/rather/long/path/to/the/plans/folder/llm-8b.yaml", OrgConfig(),
                             None)).splitlines()
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    assert any(line.startswith("missing mtbf_gpu_hours: ") for line in lines)


def test_config_names_the_ledger_lacks_are_named_with_the_closest():
    cfg = OrgConfig(budgets={"llm-7bb": 100, "rlhf": 50, "llm-9b": 10}, pools={"east-reserve": "pretrain"},
                    clusters={"eats": {"timezone": "UTC"}, "west": {}},
                    teams={"pretrain": {"projects": ["llm-9b"]}})   # a budget for a project not begun: declared
    assert config_name_warnings(cfg, LEDGER) == [
        (("budgets", "llm-7bb"), "no project 'llm-7bb' in the ledger (w.duckdb) — did you mean 'llm-7b'?"),
        (("pools", "east-reserve"), "no pool 'east-reserve' in the ledger (w.duckdb) — did you mean 'east-reserved'?"),
        (("clusters", "eats"), "no cluster 'eats' in the ledger (w.duckdb) — did you mean 'east'?"),
    ]

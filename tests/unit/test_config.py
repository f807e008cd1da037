"""The organisation config is validated: unknown keys, wrong types and values out of range are refused
with the key, the file and the line named, and `config check` shows what will be used."""

from __future__ import annotations

from decimal import Decimal

import pytest
import yaml

from pipelines.cli import main
from pipelines.lib.config import ConfigError, OrgConfig, load_config


def _load(tmp_path, text: str) -> OrgConfig:
    path = tmp_path / "org.yaml"
    path.write_text(text)
    return load_config(path)


def _error(tmp_path, text: str) -> str:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, text)
    return str(err.value)


def test_misspelled_key_is_refused_with_the_close_one_suggested(tmp_path):
    message = _error(tmp_path, "teams:\n  ml: {projects: [p1]}\nslurm_acounts:\n  acct1: p1\n")
    assert "org.yaml:3: unknown key `slurm_acounts` — did you mean `slurm_accounts`?" in message


def test_misspelled_nested_key_is_refused(tmp_path):
    message = _error(tmp_path, "idle:\n  min_strech_minutes: 5\n")
    assert "org.yaml:2: unknown key `idle.min_strech_minutes` — did you mean `min_stretch_minutes`?" in message


@pytest.mark.parametrize("text, key, line", [
    ("telemetry:\n  scrape_interval_seconds: 0\n", "telemetry.scrape_interval_seconds", 2),
    ("idle:\n  min_stretch_minutes: -5\n", "idle.min_stretch_minutes", 2),
    ("mfu_target: -2\n", "mfu_target", 1),
    ("quarantine: {max_share: -1}\n", "quarantine.max_share", 1),
    ("\n\nidle:\n  min_stretch_minutes: ten\n", "idle.min_stretch_minutes", 4),
    ("teams:\n  - ml\n  - infra\n", "teams", 1),
    ("clusters:\n  east: {timezone: Mars/Olympus}\n", "clusters.east.timezone", 2),
    ("default_currency: dollars\n", "default_currency", 1),
    ("slurm: {state_map: {PREEMPTED_X: WHATEVER}}\n", "slurm.state_map", 1),
    ("attention_flops: linear\n", "attention_flops", 1),
])
def test_wrong_values_name_key_file_and_line(tmp_path, text, key, line):
    message = _error(tmp_path, text)
    assert f"org.yaml:{line}: `{key}`" in message, message
    assert "Traceback" not in message


def test_a_project_in_two_teams_is_refused(tmp_path):
    assert "project 'p1' is in two teams" in _error(tmp_path, "teams:\n  a: {projects: [p1]}\n  b: {projects: [p1]}\n")


def test_top_level_must_be_a_mapping(tmp_path):
    assert "the top level must be a mapping" in _error(tmp_path, "- teams\n")


def test_defaults_and_shorthands(tmp_path):
    cfg = _load(tmp_path, "default_currency: EUR\nbudgets: {p1: 100, p2: {amount: '2.50', currency: USD}}\n"
                          "fx: {rates: [{currency: EUR, month: 2026-11, rate: '1.08', source: ECB}]}\n")
    assert cfg.default_currency == "EUR"
    assert cfg.budgets["p1"].amount == Decimal(100) and cfg.budgets["p1"].currency == "EUR"
    assert cfg.budgets["p2"].amount == Decimal("2.50") and cfg.budgets["p2"].currency == "USD"
    assert cfg.fx.rates[0].month == "2026-11" and cfg.fx.rates[0].rate == Decimal("1.08")
    assert cfg.idle.min_stretch_minutes == 10 and cfg.telemetry.scrape_interval_seconds == 30
    assert load_config(None) == OrgConfig()


def test_config_check_prints_the_config_with_defaults(tmp_path, capsys):
    path = tmp_path / "org.yaml"
    path.write_text("teams:\n  ml: {projects: [p1]}\n")
    assert main(["config", "check", str(path)]) == 0
    out = capsys.readouterr().out
    used = yaml.safe_load(out)
    assert used["teams"] == {"ml": {"projects": ["p1"]}}
    assert used["idle"] == {"min_stretch_minutes": 10, "sm_active_threshold": 0.05}
    assert used["default_currency"] == "USD"


def test_run_and_inspect_stop_on_a_bad_config_before_anything_runs(tmp_path, capsys):
    path = tmp_path / "org.yaml"
    path.write_text("slurm_acounts: {a: b}\n")
    landing = tmp_path / "landing"
    landing.mkdir()
    assert main(["run", "--landing", str(landing), "--config", str(path), "--start", "2026-11-01",
                 "--warehouse", str(tmp_path / "w.duckdb")]) == 2
    assert "did you mean `slurm_accounts`" in capsys.readouterr().err
    assert main(["inspect", "--landing", str(landing), "--config", str(path)]) == 2
    assert main(["config", "check", str(path)]) == 2
    assert not (tmp_path / "w.duckdb").exists()


def test_the_simulators_config_is_valid(tmp_path):
    from simulator.fleet import build_fleet
    from simulator.writers_inventory import config_yaml

    path = tmp_path / "gpuledger.yaml"
    path.write_text(config_yaml(build_fleet(4, seed=1), kubernetes_cluster="west", months=["2026-10", "2026-11"]))
    cfg = load_config(path)
    assert cfg.clusters["west"].timezone == "America/Los_Angeles"
    # west's GPU cloud bills in EUR: a rate to USD for each month simulated
    assert cfg.fx.reporting_currency == "USD"
    assert [(r.currency, r.month, r.rate, r.source) for r in cfg.fx.rates] == [
        ("EUR", "2026-10", Decimal("1.08"), "simulated"), ("EUR", "2026-11", Decimal("1.08"), "simulated")]
    path.write_text(config_yaml(build_fleet(4, seed=1)))    # no months, no rates: still valid
    assert load_config(path).fx.rates == []


def test_engine_comes_from_the_config_and_the_command_line_overrides_it(tmp_path, monkeypatch):
    from pipelines.engines.sql_asset import ENGINE_ENV, engine_of

    monkeypatch.delenv(ENGINE_ENV, raising=False)
    assert engine_of(load_config(None)) == "duckdb"
    path = tmp_path / "gpuledger.yaml"
    path.write_text("engine: spark\nspark:\n  master: spark://10.0.0.5:7077\n  conf: {spark.executor.memory: 8g}\n")
    cfg = load_config(path)
    assert engine_of(cfg) == "spark" and cfg.spark.master == "spark://10.0.0.5:7077"
    monkeypatch.setenv(ENGINE_ENV, "duckdb")  # what `gpuledger run --engine duckdb` sets
    assert engine_of(cfg) == "duckdb"
    monkeypatch.setenv(ENGINE_ENV, "sparkk")
    with pytest.raises(ValueError, match="no engine: one of duckdb, spark"):
        engine_of(cfg)

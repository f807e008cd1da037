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
    from pipelines.lib.config import ENGINE_ENV, engine_of

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


# --- issue 22: the file says one thing, and only one --------------------------------------------------

def test_a_second_costs_section_is_refused_by_config_check_naming_both_lines(tmp_path, capsys):
    # a second top-level `costs:` silently dropped the first's rate cards and owned hardware
    from simulator.fleet import build_fleet
    from simulator.writers_inventory import config_yaml

    text = config_yaml(build_fleet(4, seed=1)) + "costs:\n  energy: {price_per_kwh: '0.1'}\n"
    first = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith("costs:"))
    last = len(text.splitlines()) - 1
    path = tmp_path / "org.yaml"
    path.write_text(text)
    assert main(["config", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"org.yaml:{last}: `costs` is given twice, on line {first} and line {last}" in err, err


def test_a_budget_written_twice_is_refused_not_last_wins(tmp_path):
    message = _error(tmp_path, 'default_currency: USD\nbudgets: {llm-70b: "60000", llm-70b: "1"}\n')
    assert "org.yaml:2: `budgets.llm-70b` is given twice on line 2" in message


def test_a_config_with_anchors_or_over_the_size_limit_is_refused_quickly(tmp_path):
    bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))
    assert "org.yaml:1: an anchor (&a) is not allowed" in _error(tmp_path, bomb)
    assert "over the 1,048,576-byte limit" in _error(tmp_path, "teams: {}\n" + "#" * (1 << 20) + "\n")


@pytest.mark.parametrize("text, key, line", [
    ('budgets:\n  llm-70b: "1e400"\n', "budgets.llm-70b", 2),
    ("budgets:\n  llm-70b: {amount: .nan}\n", "budgets.llm-70b.amount", 2),
    ("budgets:\n  llm-70b: {amount: 1.0e+400}\n", "budgets.llm-70b.amount", 2),  # a YAML float: inf
    ("budgets:\n  llm-70b: {amount: '1000000000000'}\n", "budgets.llm-70b.amount", 2),   # 1e12: a bill line's limit
    ("budgets:\n  llm-70b: {amount: '0.0000000000000000001'}\n", "budgets.llm-70b.amount", 2),
    ("costs:\n  rate_cards: [{pool: a, price_per_gpu_hour: '1e400'}]\n", "costs.rate_cards.0.price_per_gpu_hour", 2),
    ("costs:\n  contracts: [{pool: a, amount_per_month: 'inf'}]\n", "costs.contracts.0.amount_per_month", 2),
    ("costs:\n  owned:\n    - {pool: a, purchase_price: '1e21', purchase_date: 2026-01-01, depreciation_months: 36}\n",
     "costs.owned.0.purchase_price", 3),
    ("costs:\n  energy: {price_per_kwh: 'NaN'}\n", "costs.energy.price_per_kwh", 2),
    ("fx:\n  rates: [{currency: EUR, month: 2026-11, rate: '1e30', source: ECB}]\n", "fx.rates.0.rate", 2),
])
def test_money_beyond_the_warehouse_decimal_is_refused_with_its_key(tmp_path, capsys, text, key, line):
    # "1e400" passed config check and then failed every day's run
    path = tmp_path / "org.yaml"
    path.write_text(text)
    assert main(["config", "check", str(path)]) == 2
    assert f"org.yaml:{line}: `{key}`" in capsys.readouterr().err


def test_the_largest_and_finest_amounts_the_warehouse_holds_are_accepted(tmp_path):
    cfg = _load(tmp_path, "budgets:\n  a: '999999999999.999999999999999999'\n  b: '0.000000000000000001'\n"
                          "  c: 1.5e3\n  d: '0.10000000000000000000000'\n")
    assert [b.amount for b in cfg.budgets.values()] == [
        Decimal("999999999999.999999999999999999"), Decimal("1e-18"), Decimal(1500), Decimal("0.1")]


def test_the_money_limits_are_the_warehouse_money_type():
    from models.landing import MONEY
    from pipelines.lib.config.section import MONEY_LIMIT, MONEY_PRECISION, MONEY_SCALE

    assert (MONEY.precision, MONEY.scale) == (MONEY_PRECISION, MONEY_SCALE)
    assert MONEY_LIMIT == Decimal("1e12")   # a bill line's limit too, so that sums of 1e8 amounts still fit


@pytest.mark.parametrize("text, key, line", [
    ("default_currency: XYZ\n", "default_currency", 1),
    ("fx: {reporting_currency: ABC}\n", "fx.reporting_currency", 1),
    ("fx:\n  rates: [{currency: QQQ, month: 2026-11, rate: '1.08', source: ECB}]\n", "fx.rates.0.currency", 2),
    ("budgets:\n  p: {amount: 5, currency: XTS}\n", "budgets.p.currency", 2),
    ("costs:\n  rate_cards: [{pool: a, price_per_gpu_hour: '2', currency: EUD}]\n", "costs.rate_cards.0.currency", 2),
    ("costs:\n  contracts: [{pool: a, amount_per_month: '2', currency: ZZZ}]\n", "costs.contracts.0.currency", 2),
    ("costs:\n  owned:\n    - {pool: a, purchase_price: '1', purchase_date: 2026-01-01, depreciation_months: 3, "
     "currency: BGN}\n", "costs.owned.0.currency", 3),
    ("costs:\n  energy: {price_per_kwh: '0.1', currency: usd}\n", "costs.energy.currency", 2),
])
def test_currencies_must_be_iso_4217_codes(tmp_path, capsys, text, key, line):
    path = tmp_path / "org.yaml"
    path.write_text(text)
    assert main(["config", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"org.yaml:{line}: `{key}`" in err and "ISO 4217" in err, err


def test_a_lower_case_currency_is_refused_with_the_code_meant(tmp_path):
    message = _error(tmp_path, "default_currency: usd\nbudgets: {p: 5}\n")
    assert "org.yaml:1: `default_currency`: 'usd' is not an ISO 4217 currency code as written: did you mean USD?" \
        in message
    assert "budgets" not in message  # the budget that took the default is not one more error


def test_config_check_output_reads_back_as_the_same_config(tmp_path, capsys):
    path = tmp_path / "org.yaml"
    path.write_text("teams:\n  ml: {projects: [p1]}\ncosts:\n  rate_cards: [{pool: a, price_per_gpu_hour: '2.5'}]\n")
    assert main(["config", "check", str(path)]) == 0
    again = tmp_path / "again.yaml"
    again.write_text(capsys.readouterr().out)
    assert load_config(again) == load_config(path)


def test_interactive_globs_match_in_duckdb_as_fnmatch_matches_them():
    """policies.interactive's globs become one regular expression per key (the is_interactive_session
    macro's): DuckDB's RE2 must match exactly the names fnmatch matches, for every glob feature."""
    from fnmatch import fnmatchcase

    import duckdb

    from pipelines.lib.config.policies import glob_regex

    patterns = ["jupyter*", "bash", "a?c", "x[!0-9]y", "f[ab]", "a.b", "c+d*e*f", "(x)|y"]
    names = ["jupyter", "jupyter-lab", "bash", "bashx", "xjupyter", "abc", "ac", "xqy", "x5y", "fa", "fc",
             "a.b", "axb", "c+dxxexf", "cdef", "(x)|y", "x", "y", "", "JUPYTER"]
    regex = glob_regex(patterns)
    got = dict(duckdb.sql("SELECT n, regexp_matches(n, $r) FROM unnest($names) t(n)",
                          params={"r": regex, "names": names}).fetchall())
    assert got == {n: any(fnmatchcase(n, p) for p in patterns) for n in names}
    assert duckdb.sql("SELECT regexp_matches('anything', $r)", params={"r": glob_regex([])}).fetchall() == [(False,)]

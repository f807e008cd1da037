import dagster as dg

from pipelines.definitions import defs
from pipelines.lib.dagster_glue.resources import WarehouseResource


def test_code_location_loads():
    d = defs()
    dg.Definitions.validate_loadable(d)
    keys = {k.to_user_string() for k in d.resolve_asset_graph().get_all_asset_keys()}
    assert {
        "staging/stg_focus__bill_lines",
        "staging/stg_scheduler__job_allocations",
        "staging/stg_dcgm__gpu_minutes",
        "staging/stg_runs__events",
        "staging/stg_inventory__nodes",
    } <= keys


def test_every_asset_is_daily_but_the_collectors_and_every_warehouse_writer_goes_through_the_locked_resource():
    d = defs()
    assert isinstance(d.resources["duckdb"], WarehouseResource)  # its connections hold the warehouse lock
    assets = list(d.assets)
    assert assets
    for asset in assets:
        # no Dagster pool: a killed run's claim on one would outlive it and block every later run
        assert asset.op.pool is None, asset.key
        if asset.key.path[0] == "landing":  # collectors fill the landing zone on their own schedule
            assert asset.group_names_by_key[asset.key] == "collect" and asset.partitions_def is None, asset.key
            assert "duckdb" not in asset.required_resource_keys, asset.key
            continue
        assert asset.partitions_def is not None and asset.partitions_def.get_first_partition_key() == "2000-01-01"
        if asset.key.path[0] not in ("reports", "collect"):  # reports read the published file, collectors write landing
            assert "duckdb" in asset.required_resource_keys, asset.key


def test_every_data_check_in_the_daily_job_is_blocking():
    d = defs()
    graph = d.resolve_job_def("daily_ledger").asset_layer.asset_graph
    specs = {key: graph.get_check_spec(key) for key in graph.asset_check_keys}
    assert all(spec.blocking for spec in specs.values()), [k for k, s in specs.items() if not s.blocking]
    names = {(k.asset_key.to_user_string(), k.name) for k in specs}
    staging = {k.to_user_string() for k in graph.get_all_asset_keys() if k.path[0] == "staging"}
    assert {a for a, _ in names if a.startswith("staging/")} == staging  # a contract check each
    assert ("marts/fct_cost_daily", "conservation") in names
    assert ("marts/fct_cost_daily", "expectations") in names


def test_freshness_checks_watch_yesterday_by_nine_and_stay_out_of_the_daily_job():
    d = defs()
    graph = d.resolve_asset_graph()
    freshness = {k for k in graph.asset_check_keys if "freshness" in k.name}
    assert {k.asset_key.to_user_string() for k in freshness} == {"marts/fct_cost_daily", "ops/published_warehouse"}
    job = d.resolve_job_def("daily_ledger")
    in_job = {k for k in job.asset_layer.asset_graph.asset_check_keys}
    assert not (freshness & in_job)
    assert d.resolve_sensor_def("ledger_freshness_sensor") is not None


def test_the_daily_job_collects_from_prometheus_only_when_the_config_names_a_server(tmp_path, monkeypatch):
    def job_keys() -> set[str]:
        job = defs().resolve_job_def("daily_ledger")
        return {k.to_user_string() for k in job.asset_layer.selected_asset_keys}

    assert "collect/dcgm_prometheus" not in job_keys()
    config = tmp_path / "org.yaml"
    config.write_text("collect:\n  prometheus:\n    url: http://prometheus:9090\n")
    monkeypatch.setenv("GPULEDGER_CONFIG", str(config))
    assert "collect/dcgm_prometheus" in job_keys()
    # and the DCGM staging asset waits for it
    graph = defs().resolve_asset_graph()
    staging = graph.get(dg.AssetKey(["staging", "stg_dcgm__gpu_minutes"]))
    assert dg.AssetKey(["collect", "dcgm_prometheus"]) in staging.parent_keys

"""Books that never lie (issue 22): a host only telemetry knows is never priced by the config, a day
whose run failed is never published as complete, a live warehouse that lost days never shrinks the
published history, and every refused file or moneyless quarantined bill line makes its days
incomplete, naming the file and why."""

from datetime import date
from decimal import Decimal

import duckdb

from pipelines.lib.warehouse.publish import published_path
from tests.support.pipeline import pipeline_env, run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

D1, D2 = date(2026, 11, 2), date(2026, 11, 3)
GHOST = ("timestamp,hostname,gpu,UUID,modelName,metric,value\n"
         "2026-11-02T12:00:00Z,ghost-gpu-999,0,GPU-ghost,NVIDIA H100 80GB HBM3,DCGM_FI_DEV_GPU_UTIL,50\n")


def _recon(landing: Landing) -> dict:
    """finance.reconciliation_daily of the published file, by (day, currency)."""
    with pipeline_env(landing.landing, landing.warehouse, landing.config_path):
        path = published_path()
    with duckdb.connect(str(path), read_only=True) as con:
        rows = con.sql("SELECT * FROM finance.reconciliation_daily ORDER BY day, billing_currency").pl().to_dicts()
    return {(r["day"], r["billing_currency"]): r for r in rows}


def _billed_fleet(tmp_path, days=(D1, D2)) -> Landing:
    """n1 billed $36 an hour, every hour of `days`."""
    L = Landing(tmp_path)
    L.node("n1")
    for d in days:
        L.node_hours("n1", utc(d.year, d.month, d.day), 24, "36")
    return L


def test_a_stray_or_respelt_telemetry_host_is_reported_not_priced(tmp_path):
    L = Landing(tmp_path)
    L.config = {"costs": {"rate_cards": [{"pool": "rented", "price_per_gpu_hour": "2.10", "currency": "USD"},
                                         {"gpu_model": "NVIDIA H100 80GB HBM3", "price_per_gpu_hour": "3.00",
                                          "currency": "USD"}]}}
    L.node("n1", pool="rented")
    L.telemetry("n1", [D1], [Activity(utc(2026, 11, 2), utc(2026, 11, 2, 6), None, True)])
    L.telemetry("N1.ec2.internal", [D1], [Activity(utc(2026, 11, 2), utc(2026, 11, 2, 6), None, True)])
    L.write()
    (L.landing / "telemetry" / "dcgm" / "ghost.csv").write_text(GHOST)
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [D1])
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        by_host = dict(con.execute("SELECT hostname, sum(effective_cost) FROM intermediate.int_config_cost_lines "
                                   "GROUP BY 1").fetchall())
        notes = dict(con.execute("SELECT row_ref, file || ' | ' || reason FROM ops.quarantine "
                                 "WHERE row_ref LIKE 'host %'").fetchall())
    # n1 alone, by its pool's rate card: $2.10 × 8 GPUs × 24 h; neither the ghost nor n1's other spelling
    assert by_host == {"n1": Decimal("403.20")}
    assert notes["host ghost-gpu-999"].startswith("telemetry/dcgm/ghost.csv | host ghost-gpu-999 sends telemetry "
                                                  "but is in no inventory, bill line or config hostname")
    assert "looks like known node n1" in notes["host N1.ec2.internal"]
    (row,) = _recon(L).values()
    assert row["complete"] and row["config_effective_cost"] == Decimal("403.20")


def test_a_failed_day_is_published_incomplete_with_its_reason(tmp_path, monkeypatch):
    # the day's bill and config lines are written, then its ledger fails: the next day's publish must
    # not show the half-written day as complete (it showed bill 36 × 24, allocated 0, complete)
    from pipelines.engines import sql_asset

    L = _billed_fleet(tmp_path)
    L.write()
    real_write = sql_asset.write_day

    def failing(warehouse, table, params, cfg):
        if table == "marts/fct_cost_daily" and params["day"] == D1:
            raise RuntimeError("the disk holding the warehouse caught fire")
        return real_write(warehouse, table, params, cfg)

    monkeypatch.setattr(sql_asset, "write_day", failing)
    failed = run_pipeline(L.landing, L.warehouse, L.config_path, [D1, D2])
    assert [d for d, _ in failed] == [D1]
    recon = _recon(L)
    bad, good = recon[(D1, "USD")], recon[(D2, "USD")]
    assert not bad["complete"] and bad["run_status"] == "failed"
    assert bad["incomplete_reason"].startswith("the day's last run failed: ")
    assert "caught fire" in bad["incomplete_reason"]
    assert good["complete"] and good["incomplete_reason"] is None and good["difference_effective_cost"] == 0


def test_a_lost_live_warehouse_never_shrinks_the_published_history(tmp_path):
    from pipelines.cli.commands.run import _lost_days_problem

    L = _billed_fleet(tmp_path)
    L.write()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [D1, D2])
    L.warehouse.unlink()
    # the run of D2 alone refuses to publish (the CLI refuses before it starts), naming the lost day
    with pipeline_env(L.landing, L.warehouse, L.config_path):
        problem = _lost_days_problem([D2])
    assert problem.startswith(f"the published warehouse {published_path_of(L)} has 2026-11-02 but the live")
    assert "gpuledger run --start 2026-11-02" in problem
    failed = run_pipeline(L.landing, L.warehouse, L.config_path, [D2])
    assert [d for d, _ in failed] == [D2] and "publishing would drop those days" in " ".join(failed[0][1])
    assert {d for d, _ in _recon(L)} == {D1, D2}
    # a run that rebuilds them publishes once they are all back
    with pipeline_env(L.landing, L.warehouse, L.config_path):
        assert _lost_days_problem([D1, D2]) is None
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [D1, D2])
    recon = _recon(L)
    assert {d for d, _ in recon} == {D1, D2} and all(r["complete"] for r in recon.values())


def published_path_of(L: Landing):
    with pipeline_env(L.landing, L.warehouse, L.config_path):
        return published_path()


def test_every_refused_file_and_moneyless_bill_line_makes_its_days_incomplete(tmp_path):
    L = _billed_fleet(tmp_path, days=(D1,))
    # a bill line whose amount does not read: quarantined, its money on no day's bill side
    L.line(utc(2026, 11, 2, 3), utc(2026, 11, 2, 4), "Usage", "1", extra={"EffectiveCost": "12,5 EUR"})
    L.write()
    # a scheduler export refused whole: its jobs (and what they would be charged) are missing
    bad = L.landing / "scheduler" / "slurm" / "c9" / "sacct.psv"
    bad.parent.mkdir(parents=True)
    bad.write_text("Foo|Bar\n1|2\n")
    failed = run_pipeline(L.landing, L.warehouse, L.config_path, [D1])
    assert not failed, failed
    row = _recon(L)[(D1, "USD")]
    assert not row["complete"]
    assert set(row["refused_file_names"]) == {"bills/focus/bill.csv", "scheduler/slurm/c9/sacct.psv"}
    assert "bills/focus/bill.csv: 1 quarantined bill line(s) whose money is on no day" in row["incomplete_reason"]
    # recorded unreadable in ops.landed_files with its reason (a file's refusal is named once)
    assert "scheduler/slurm/c9/sacct.psv: no JobID or JobIDRaw column" in row["incomplete_reason"]

"""`collect slurm` without a cluster: the sacct command line, the window from the watermark, refusals, the
config keys and the Dagster asset. sacct is a script printing recorded output (tests/support/fake_sacct.py);
the real cluster is tests/e2e/test_collect_slurm.py."""

from __future__ import annotations

import json
from datetime import date, datetime

import dagster as dg
import pytest
import yaml

from pipelines.collect.slurm import CollectError, collect, sacct_argv
from pipelines.lib.config import ConfigError, load_config
from pipelines.lib.config.collect import CollectSlurmConfig
from tests.support import fake_sacct

UNTIL = datetime(2026, 11, 5, 13, 30)


def _calls(sacct_dir) -> list[str]:
    return [c for c in (sacct_dir / "calls").read_text().splitlines() if "--helpformat" not in c]


def test_the_command_is_launcher_words_then_env_then_sacct_with_bound_arguments():
    cfg = CollectSlurmConfig(sacct=("ssh", "login-1", "/opt/slurm/bin/sacct"))
    argv = sacct_argv(cfg, "east", datetime(2026, 11, 2), datetime(2026, 11, 3))
    assert argv[:7] == ["ssh", "login-1", "env", "TZ=UTC", "SLURM_TIME_FORMAT=%s", "/opt/slurm/bin/sacct",
                        "--parsable2"]
    assert "--allusers" in argv and "--duplicates" in argv and "--clusters=east" in argv
    assert "--starttime=2026-11-02T00:00:00" in argv and "--endtime=2026-11-03T00:00:00" in argv
    assert not [a for a in argv if a in ("-X", "--allocations") or a.startswith(("--state", "-s"))]


def test_a_first_collect_reads_the_look_back_and_then_from_the_watermark_less_it(tmp_path):
    sacct_dir = tmp_path / "sacct"
    cfg = CollectSlurmConfig(sacct=(str(fake_sacct.install(sacct_dir)),), lookback_hours=30)
    first = collect(tmp_path / "landing", "east", cfg, until=UNTIL)
    # 30 h before 11-05 13:30 is 11-04 07:30: whole days from 11-04
    assert [f.name for f in first.files] == ["sacct-2026-11-04.psv", "sacct-2026-11-05.psv"]
    assert _calls(sacct_dir)[-1].split()[4:6] == ["--starttime=2026-11-05T00:00:00", "--endtime=2026-11-05T13:30:00"]
    state = json.loads((tmp_path / "landing/scheduler/slurm/east/.collect-state.json").read_text())
    assert state["collected_until"] == "2026-11-05T13:30:00"

    # two days later: from the watermark less 30 h, i.e. 11-04 again, to now
    second = collect(tmp_path / "landing", "east", cfg, until=datetime(2026, 11, 7, 1))
    assert [f.name for f in second.files] == [f"sacct-2026-11-0{d}.psv" for d in (4, 5, 6, 7)]
    # 11-05 asked for whole this time; the fake prints the same, so its file is left as it was
    assert [c.split()[4:6] for c in _calls(sacct_dir)[-4:-2]] == [
        ["--starttime=2026-11-04T00:00:00", "--endtime=2026-11-05T00:00:00"],
        ["--starttime=2026-11-05T00:00:00", "--endtime=2026-11-06T00:00:00"]]
    assert [f.written for f in second.files] == [False, False, True, True]
    # --since goes back further, whatever the watermark
    third = collect(tmp_path / "landing", "east", cfg, since=date(2026, 11, 1), until=datetime(2026, 11, 7, 2))
    assert third.files[0].name == "sacct-2026-11-01.psv"
    assert json.loads((tmp_path / "landing/scheduler/slurm/east/.collect-state.json").read_text())[
        "collected_until"] == "2026-11-07T02:00:00"


def test_jobs_are_counted_once_across_days_and_requeued_runs_apart(tmp_path):
    sacct_dir = tmp_path / "sacct"
    cfg = CollectSlurmConfig(sacct=(str(fake_sacct.install(sacct_dir)),))
    rows = [{"JobIDRaw": "7", "JobID": "7", "State": "REQUEUED", "Start": "100", "End": "200"},
            {"JobIDRaw": "7", "JobID": "7", "State": "COMPLETED", "Start": "300", "End": "90000"},
            {"JobIDRaw": "7.batch", "JobID": "7.batch", "State": "COMPLETED", "Start": "300", "End": "90000"}]
    fake_sacct.record(sacct_dir, "2026-11-04", rows)
    fake_sacct.record(sacct_dir, "2026-11-05", rows[1:])
    result = collect(tmp_path / "landing", "east", cfg, since=date(2026, 11, 4), until=UNTIL)
    assert [(f.jobs, f.steps) for f in result.files] == [(2, 1), (1, 1)]
    assert (result.jobs, result.steps) == (2, 1)


def test_times_that_are_not_epoch_seconds_are_refused_and_nothing_moves(tmp_path):
    sacct_dir = tmp_path / "sacct"
    cfg = CollectSlurmConfig(sacct=(str(fake_sacct.install(sacct_dir)),))
    fake_sacct.record(sacct_dir, "2026-11-05", [{"JobIDRaw": "1", "Submit": "1796118675", "Start": "Unknown"},
                                                 {"JobIDRaw": "2", "Submit": "2026-11-05T10:00:00"}])
    with pytest.raises(CollectError, match=r"sacct-2026-11-05.psv line 3: times are not epoch seconds "
                                           r"\(Submit '2026-11-05T10:00:00'\)"):
        collect(tmp_path / "landing", "east", cfg, since=date(2026, 11, 4), until=UNTIL)
    folder = tmp_path / "landing/scheduler/slurm/east"
    # no watermark, no temporary file (the lock file stays: the OS holds the lock, not the file)
    assert sorted(p.name for p in folder.iterdir()) == [".collect.lock", "sacct-2026-11-04.psv"]


def test_another_header_and_a_failing_sacct_are_refused(tmp_path):
    sacct_dir = tmp_path / "sacct"
    cfg = CollectSlurmConfig(sacct=(str(fake_sacct.install(sacct_dir)),))
    (sacct_dir / "2026-11-05.psv").write_text("JobID|State\n1|COMPLETED\n")
    with pytest.raises(CollectError, match=r"sacct-2026-11-05.psv: sacct printed the columns JobID\|State, not JobIDRaw"):
        collect(tmp_path / "landing", "east", cfg, since=date(2026, 11, 5), until=UNTIL)
    with pytest.raises(CollectError, match=r"sacct failed \(exit 1\): .*false"):
        collect(tmp_path / "landing", "east", CollectSlurmConfig(sacct=("false",)), until=UNTIL)
    with pytest.raises(CollectError, match=r"cannot run 'no-such-sacct'.*collect.slurm.sacct"):
        collect(tmp_path / "landing", "east", CollectSlurmConfig(sacct=("no-such-sacct",)), until=UNTIL)


@pytest.mark.parametrize("name", ["../etc", "-x", "a b", "east/west", ""])
def test_a_cluster_name_that_is_no_folder_name_is_refused(tmp_path, name):
    with pytest.raises(CollectError, match="is not a cluster name"):
        collect(tmp_path, name, CollectSlurmConfig(sacct=("true",)))
    assert not (tmp_path / "scheduler").exists()


def test_the_config_keys(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"collect": {"slurm": {"sacct": ["ssh", "login", "sacct"], "lookback_hours": 6,
                                                          "clusters": ["east"]}}}))
    got = load_config(path).collect.slurm
    assert (got.sacct, got.lookback_hours, got.clusters) == (("ssh", "login", "sacct"), 6, ("east",))
    assert load_config(None).collect.slurm.sacct == ("sacct",)
    assert load_config(None).collect.slurm.lookback_hours == 48
    path.write_text(yaml.safe_dump({"collect": {"slurm": {"clusters": ["../x"], "lookbak_hours": 1}}}))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "collect.slurm.clusters" in str(err.value) and "lookbak_hours" in str(err.value)


def test_the_dagster_asset_collects_each_configured_cluster(tmp_path):
    from pipelines.defs.collect.assets_slurm import slurm_sacct
    from pipelines.lib.dagster_glue.resources import LandingZone

    sacct = fake_sacct.install(tmp_path / "sacct")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"collect": {"slurm": {"sacct": [str(sacct)], "clusters": ["east", "west"]}}}))
    landing = LandingZone(root=str(tmp_path / "landing"), config_file=str(config))
    result = dg.materialize([slurm_sacct], resources={"landing": landing})
    assert result.success
    for cluster in ("east", "west"):
        assert (tmp_path / "landing/scheduler/slurm" / cluster / ".collect-state.json").exists()


def test_a_second_collect_of_the_same_cluster_at_once_is_refused(tmp_path):
    from pipelines.collect.slurm import LOCK_FILE, _only_collect

    folder = tmp_path / "landing/scheduler/slurm/east"
    folder.mkdir(parents=True)
    with _only_collect(folder, "east"):
        with pytest.raises(CollectError, match=f"another collect of east is running .*{LOCK_FILE}"):
            collect(tmp_path / "landing", "east", CollectSlurmConfig(sacct=("true",)), until=UNTIL)
    assert not (folder / ".collect-state.json").exists()

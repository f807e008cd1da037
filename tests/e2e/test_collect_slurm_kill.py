"""A `gpuledger collect slurm` killed with SIGKILL half-way, then run again, leaves exactly the files an
uninterrupted collect leaves, byte for byte, and no temporary file; the killed collect never moved the
watermark. sacct is a script printing recorded output (tests/support/fake_sacct.py): what is tested
is the collect's own writing, not Slurm."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pipelines.lib.config.strict_yaml import dump_yaml
from tests.conftest import PROJECT_ROOT
from tests.support import fake_sacct

CLUSTER = "east"


def _days() -> list[str]:
    today = datetime.now(timezone.utc).date()
    return [(today - timedelta(days=n)).isoformat() for n in (3, 2, 1, 0)]


def _record(sacct_dir: Path) -> None:
    d0, d1, d2, d3 = _days()
    epoch = lambda day, h: int(datetime.fromisoformat(f"{day}T{h:02d}:00:00+00:00").timestamp())  # noqa: E731
    job = lambda i, day, s, e, state: {  # noqa: E731
        "JobIDRaw": i, "JobID": i, "JobName": f"train {i}", "User": "alice", "Account": "llm", "Partition": "gpu",
        "State": state, "ExitCode": "0:0", "Submit": epoch(day, s), "Start": epoch(day, s),
        "End": epoch(day, e) if e is not None else "Unknown", "AllocTRES": "cpu=8,gres/gpu=4,node=1",
        "NodeList": "gpu-001", "QOS": "normal"}
    fake_sacct.record(sacct_dir, d0, [job("100", d0, 1, 5, "COMPLETED")])
    # job 101 runs from d1 to d3: in each of those days' files, as sacct knows it now (ended)
    long = job("101", d1, 22, None, "COMPLETED") | {"End": epoch(d3, 2)}
    fake_sacct.record(sacct_dir, d1, [long])
    fake_sacct.record(sacct_dir, d2, [long, job("102", d2, 3, 4, "FAILED")])
    fake_sacct.record(sacct_dir, d3, [long])


def _landing_config(root: Path, sacct: Path) -> Path:
    cfg = root / "gpuledger.yaml"
    cfg.write_text(dump_yaml({"collect": {"slurm": {"sacct": [str(sacct)]}}}))
    return cfg


def _argv(landing: Path, cfg: Path, since: str) -> list[str]:
    return [sys.executable, "-m", "pipelines.cli", "collect", "slurm", "--landing", str(landing),
            "--cluster", CLUSTER, "--since", since, "--config", str(cfg)]


def _files(landing: Path) -> dict[str, bytes]:
    folder = landing / "scheduler" / "slurm" / CLUSTER
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_killed_collect_then_run_again_leaves_what_an_uninterrupted_one_leaves(tmp_path):
    sacct_dir = tmp_path / "sacct"
    sacct = fake_sacct.install(sacct_dir)
    _record(sacct_dir)
    cfg = _landing_config(tmp_path, sacct)
    d0, d1, d2, d3 = _days()

    reference = tmp_path / "reference"
    subprocess.run(_argv(reference, cfg, d0), check=True, capture_output=True, cwd=PROJECT_ROOT, timeout=60)
    expected = _files(reference)
    assert sorted(expected) == [".collect-state.json", ".collect.lock"] + [f"sacct-{d}.psv" for d in (d0, d1, d2, d3)]

    landing = tmp_path / "landing"
    folder = landing / "scheduler" / "slurm" / CLUSTER
    # killed on a fresh landing while sacct runs for d2: d0 and d1 are in place, whole; no watermark
    _kill_during(landing, cfg, sacct_dir, d0, d2)
    assert _files(landing) == {k: expected[k] for k in (".collect.lock", f"sacct-{d0}.psv", f"sacct-{d1}.psv")}
    # a kill between writing a temporary file and renaming it leaves one behind: the next collect removes it
    (folder / f".sacct-{d3}.psv.99999.tmp").write_text("half a file")

    _collect(landing, cfg, d0)
    _same_as_reference(_files(landing), expected)

    # as if that collect had run an hour ago (the test sets the clock the watermark is read against,
    # rather than waiting for the wall clock to tick past it)
    state = json.loads((folder / ".collect-state.json").read_text())
    earlier = datetime.fromisoformat(state["collected_until"]) - timedelta(hours=1)
    state["collected_until"] = earlier.isoformat()
    (folder / ".collect-state.json").write_text(json.dumps(state, indent=2) + "\n")
    state_before = (folder / ".collect-state.json").read_bytes()

    # killed again, with a watermark now: it stays where the last whole collect put it
    _kill_during(landing, cfg, sacct_dir, d0, d2)
    assert (folder / ".collect-state.json").read_bytes() == state_before
    # run whole, the collect moves it on to its own start
    _collect(landing, cfg, d0)
    got = _files(landing)
    _same_as_reference(got, expected)
    assert datetime.fromisoformat(json.loads(got[".collect-state.json"])["collected_until"]) > earlier


def _collect(landing: Path, cfg: Path, since: str) -> None:
    subprocess.run(_argv(landing, cfg, since), check=True, capture_output=True, cwd=PROJECT_ROOT, timeout=60)


def _kill_during(landing: Path, cfg: Path, sacct_dir: Path, since: str, day: str) -> None:
    """Starts a collect and SIGKILLs it (and the sacct it runs) while sacct runs for `day`."""
    (sacct_dir / f"started-{day}").unlink(missing_ok=True)
    (sacct_dir / f"sleep-{day}").write_text("60")
    proc = subprocess.Popen(_argv(landing, cfg, since), cwd=PROJECT_ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (sacct_dir / f"started-{day}").exists():
            assert time.monotonic() < deadline and proc.poll() is None, f"the collect never reached {day}"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the collect's own process group: it and its sacct
    finally:
        proc.wait(timeout=30)
        (sacct_dir / f"sleep-{day}").unlink()
    assert proc.returncode == -signal.SIGKILL


def _same_as_reference(got: dict[str, bytes], expected: dict[str, bytes]) -> None:
    assert sorted(got) == sorted(expected)  # the same files, no temporary one
    assert {k: v for k, v in got.items() if k.endswith(".psv")} == {k: v for k, v in expected.items() if k.endswith(".psv")}
    state, ref = json.loads(got[".collect-state.json"]), json.loads(expected[".collect-state.json"])
    assert state["files"] == ref["files"] and state["last_window"][0] == ref["last_window"][0]

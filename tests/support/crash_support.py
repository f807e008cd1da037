"""Shared by the crash tests: `gpuledger run` as a real process, with its own DAGSTER_HOME (holding
the project's dagster.yaml) and its own warehouse, over a small simulated fleet."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Iterator

import duckdb

PROJECT_ROOT = Path(__file__).resolve().parents[2]
START = date(2026, 11, 2)
_environ_guard = threading.Lock()


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A folder in RAM when the machine has /dev/shm, else in the temp folder. A process killed with
    SIGKILL loses nothing the kernel already holds, so RAM-backed files test the same thing; they
    only spare the SQLite fsyncs of the Dagster instance, which dominate a small run."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def simulate(out: Path, days: int, nodes: int = 2, seed: int = 7) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "simulate", "--out", str(out), "--start", START.isoformat(),
         "--days", str(days), "--nodes", str(nodes), "--seed", str(seed)],
        capture_output=True, text=True, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr
    return out


@dataclass
class Ledger:
    """One warehouse and one Dagster instance, fed by a simulated landing zone."""

    root: Path
    sim: Path
    days: int

    def __post_init__(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT_ROOT / "dagster_home" / "dagster.yaml", self.home / "dagster.yaml")

    @property
    def home(self) -> Path:
        return self.root / "dagster_home"

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse.duckdb"

    @property
    def published(self) -> Path:
        return self.root / "warehouse.published.duckdb"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GPULEDGER_", "DAGSTER_"))}
        return {**env, "DAGSTER_HOME": str(self.home), "GPULEDGER_REPORTS": str(self.root / "reports"), **extra}

    def run_command(self) -> list[str]:
        end = START + timedelta(days=self.days - 1)
        return [sys.executable, "-m", "pipelines.cli", "run", "--landing", str(self.sim / "landing"),
                "--config", str(self.sim / "gpuledger.yaml"), "--warehouse", str(self.warehouse),
                "--start", START.isoformat(), "--end", end.isoformat()]

    def start_run(self, **env: str) -> subprocess.Popen:
        return subprocess.Popen(self.run_command(), env=self.env(**env), cwd=PROJECT_ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, timeout: float, **env: str) -> subprocess.CompletedProcess:
        """`gpuledger run` to its end; a run still going after `timeout` seconds is wedged: it is
        killed and the test fails, naming what it last printed."""
        proc = self.start_run(**env)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"`gpuledger run` still going after {timeout:.0f}s (wedged); it last said: "
                                 f"{err[-600:]!r}") from None
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    @contextmanager
    def instance(self):
        """The run's Dagster instance, opened in this process (its dagster.yaml reads DAGSTER_HOME)."""
        import dagster as dg

        with _environ_guard:  # DAGSTER_HOME is process-wide: one instance open at a time
            saved = os.environ.get("DAGSTER_HOME")
            os.environ["DAGSTER_HOME"] = str(self.home)
            instance = dg.DagsterInstance.from_config(str(self.home))
            try:
                yield instance
            finally:
                instance.dispose()
                if saved is None:
                    os.environ.pop("DAGSTER_HOME")
                else:
                    os.environ["DAGSTER_HOME"] = saved


def mart_rows(published: Path) -> dict[str, list[tuple]]:
    """Every table of the published file's `marts` schema, all rows in a fixed order."""
    with duckdb.connect(str(published), read_only=True) as con:
        tables = [t for (t,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'marts' ORDER BY 1").fetchall()]
        return {t: con.execute(f'SELECT * FROM marts."{t}" ORDER BY ALL').fetchall() for t in tables}

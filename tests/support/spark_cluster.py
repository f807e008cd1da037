"""A real Spark standalone cluster for tests: one master and one worker started from the pyspark
distribution's own `bin/spark-class` (the same jars the driver runs), on 127.0.0.1 ports picked free,
their logs and work folders in a temporary folder, and stopped again by `close()` (also when starting
fails half-way)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_class() -> Path | None:
    """pyspark's `bin/spark-class`, or None without pyspark."""
    try:
        import pyspark
    except ImportError:
        return None
    path = Path(pyspark.__file__).parent / "bin" / "spark-class"
    return path if path.is_file() else None


class SparkStandalone:
    def __init__(self, base: Path, worker_cores: int = 2, worker_memory: str = "2g"):
        self.base = base
        self.port, self.master_ui, self.worker_ui = _free_port(), _free_port(), _free_port()
        self.worker_cores, self.worker_memory = worker_cores, worker_memory
        self.procs: list[tuple[str, subprocess.Popen]] = []
        home = spark_class().parent.parent
        self.env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1",
                        SPARK_WORKER_DIR=str(base / "work"), SPARK_LOG_DIR=str(base / "logs"),
                        PYSPARK_PYTHON=sys.executable)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def start(self) -> "SparkStandalone":
        try:
            self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(self.port), "--webui-port", str(self.master_ui)])
            self._wait_for("master", "Starting Spark master at")
            self._spawn("worker", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                   "--cores", str(self.worker_cores), "--memory", self.worker_memory,
                                   "--webui-port", str(self.worker_ui), self.url])
            self._wait_for("worker", "Successfully registered with master")
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for _, proc in reversed(self.procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()

    def log(self, name: str) -> str:
        path = self.base / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _spawn(self, name: str, args: list[str]) -> None:
        (self.base / "work").mkdir(parents=True, exist_ok=True)
        out = (self.base / f"{name}.log").open("wb")
        proc = subprocess.Popen([str(spark_class()), *args], env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.procs.append((name, proc))

    def _wait_for(self, name: str, line: str, timeout: float = 90) -> None:
        proc = dict(self.procs)[name]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if line in self.log(name):
                return
            if proc.poll() is not None:
                raise RuntimeError(f"spark {name} exited ({proc.returncode}):\n{self.log(name)[-3000:]}")
            time.sleep(0.3)
        raise TimeoutError(f"spark {name} did not log {line!r} in {timeout:.0f} s:\n{self.log(name)[-3000:]}")

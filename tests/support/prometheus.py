"""A real Prometheus server holding a landing zone's DCGM telemetry, for the collector's tests.

The simulator's long DCGM Parquet is written as OpenMetrics text (each sample with its own timestamp,
in seconds), turned into TSDB blocks by `promtool tsdb create-blocks-from openmetrics`, and served by
a `prometheus` process of its own on a free 127.0.0.1 port, stopped (killed if need be) on exit.
The simulator never imports the pipeline; this converts its output the way a dcgm-exporter scrape
would have labelled it (`Hostname`, `gpu`, `UUID`, `modelName`, `hpc_job`)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

LABELS = {"hostname": "Hostname", "gpu": "gpu", "UUID": "UUID", "modelName": "modelName", "hpc_job": "hpc_job",
          "GPU_I_ID": "GPU_I_ID", "pod": "pod", "namespace": "namespace"}


def missing_binaries() -> list[str]:
    return [b for b in ("prometheus", "promtool") if shutil.which(b) is None]


def _escaped(col: str) -> pl.Expr:
    # OpenMetrics label values escape backslash, double quote and newline
    return pl.col(col).cast(pl.String).str.replace_all("\\", "\\\\", literal=True) \
        .str.replace_all('"', '\\"', literal=True).str.replace_all("\n", "\\n", literal=True)


def write_openmetrics(dcgm_files: list[Path], out: Path, drop: pl.Expr | None = None) -> int:
    """The long DCGM samples of `dcgm_files` as one OpenMetrics file (gauges, one family per metric,
    each series' samples in time order, `# EOF` last); `drop` leaves out the samples it selects (a
    gap). Returns the number of samples written."""
    samples = pl.concat([pl.read_parquet(f) for f in dcgm_files], how="diagonal_relaxed")
    if drop is not None:
        samples = samples.filter(~drop)
    present = [c for c in LABELS if c in samples.columns]
    label_set = pl.concat_str(
        [pl.when(pl.col(c).is_not_null()).then(pl.format(f'{LABELS[c]}="{{}}"', _escaped(c))) for c in present],
        separator=",", ignore_nulls=True)
    seconds = pl.col("timestamp").dt.epoch("ms").cast(pl.Float64) / 1000
    lines = samples.with_columns(label_set.alias("_labels"), seconds.alias("_s")).sort("metric", "_labels", "_s")
    text = lines.select(pl.format("{}{{{}}} {} {}", "metric", "_labels", pl.col("value").cast(pl.String),
                                  pl.col("_s").cast(pl.String)).alias("line"), "metric")
    with out.open("w", encoding="utf-8") as fh:
        for (metric,), family in text.partition_by("metric", as_dict=True, maintain_order=True).items():
            fh.write(f"# TYPE {metric} gauge\n")
            fh.write("\n".join(family["line"]) + "\n")
        fh.write("# EOF\n")
    return samples.height


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def prometheus_server(openmetrics: Path, workdir: Path, ready_timeout: float = 120) -> Iterator[str]:
    """A Prometheus process serving the samples of `openmetrics`; yields its base URL."""
    data = workdir / "tsdb"
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(openmetrics), str(data)],
                   check=True, capture_output=True)
    config = workdir / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 30s\nscrape_configs: []\n")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = (workdir / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={data}",
         "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {proc.returncode}: see {workdir / 'prometheus.log'}")
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"prometheus not ready after {ready_timeout}s: see {workdir / 'prometheus.log'}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()

"""The Prometheus collector's own rules, against a small fake of Prometheus' HTTP API (the real
server is tests/e2e/test_collect_dcgm.py): chunk boundaries, label mapping, file names, errors, and
the atomic file replacement it relies on."""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from datetime import date, datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import polars as pl
import pytest

from pipelines.cli import main
from pipelines.collect import prometheus
from pipelines.collect.prometheus import CollectError, Prometheus, collect_day, host_file_name, settings_of
from pipelines.lib.atomic import remove_stale_temps, replace_atomically, temp_path
from pipelines.lib.config import ConfigError, load_config
from pipelines.lib.config.collect import PrometheusCollectConfig

DAY = date(2026, 11, 2)
T0 = datetime(2026, 11, 2, tzinfo=timezone.utc).timestamp()


class FakePrometheus:
    """Serves `series` ({metric: [(labels, [(epoch seconds, "value"), ...]), ...]}) to range-selector
    instant queries, with Prometheus 2's window [time - range, time]; `status` overrides the answer."""

    def __init__(self, series: dict, status: int = 200):
        self.series, self.status, self.queries = series, status, []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
                fake.queries.append(q["query"][0])
                if fake.status != 200:
                    body = {"status": "error", "errorType": "bad_data", "error": "parse error"}
                    return self._send(fake.status, body)
                metric, ms = re.fullmatch(r"(\w+)\[(\d+)ms\]", q["query"][0]).groups()
                at = float(q["time"][0])
                result = [{"metric": {"__name__": metric, **labels},
                           "values": [[t, v] for t, v in samples if at - int(ms) / 1000 <= t <= at]}
                          for labels, samples in fake.series.get(metric, [])]
                self._send(200, {"status": "success",
                                 "data": {"resultType": "matrix", "result": [r for r in result if r["values"]]}})

            def _send(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake(request):
    servers = []

    def start(series, status=200):
        servers.append(FakePrometheus(series, status))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def _settings(**kw) -> PrometheusCollectConfig:
    return PrometheusCollectConfig(url="http://unused", metrics=["DCGM_FI_DEV_GPU_UTIL"], **kw)


def test_samples_on_chunk_boundaries_are_kept_once_and_other_days_are_left_out(fake, tmp_path):
    labels = {"Hostname": "node01", "gpu": "0", "UUID": "GPU-1", "modelName": "H100", "instance": "10.0.0.1:9400"}
    # midnight before, the day's first instant, an hour's boundary, the day's last sample, next midnight
    times = [T0 - 30, T0, T0 + 3600, T0 + 3630, T0 + 86370, T0 + 86400]
    server = fake({"DCGM_FI_DEV_GPU_UTIL": [(labels, [(t, str(i)) for i, t in enumerate(times)])]})
    result = collect_day(tmp_path, Prometheus(server.url, 5), DAY, _settings())
    rows = pl.read_parquet(tmp_path / "telemetry/dcgm/collected/day=2026-11-02/node01.parquet")
    assert rows["value"].to_list() == [1.0, 2.0, 3.0, 4.0]
    assert [t.timestamp() for t in rows["timestamp"]] == times[1:5]
    assert result.requests == 24 and result.samples == 4 and result.hosts == 1  # hourly chunks by default


def test_labels_are_mapped_mig_and_pod_labels_kept_and_instance_stands_in_for_a_missing_host(fake, tmp_path):
    series = [
        ({"node": "n1", "gpu": "3", "GPU_I_ID": "2", "pod": "train-0", "namespace": "ml", "UUID": "GPU-3"},
         [(T0 + 60, "1.5")]),
        ({"instance": "n2.example:9400", "gpu": "0"}, [(T0 + 60, "+Inf")]),
        ({"gpu": "1"}, [(T0 + 60, "7")]),  # no host at all: counted, not written
    ]
    server = fake({"DCGM_FI_DEV_GPU_UTIL": series})
    result = collect_day(tmp_path, Prometheus(server.url, 5), DAY, _settings(labels={"hostname": "node"}))
    folder = tmp_path / "telemetry/dcgm/collected/day=2026-11-02"
    n1 = pl.read_parquet(folder / "n1.parquet").row(0, named=True)
    assert (n1["hostname"], n1["gpu"], n1["GPU_I_ID"], n1["pod"], n1["namespace"], n1["UUID"], n1["value"]) == \
        ("n1", 3, "2", "train-0", "ml", "GPU-3", 1.5)
    n2 = pl.read_parquet(folder / "n2.example.parquet")
    assert n2["value"].to_list() == [float("inf")]  # read as the exporter wrote it; the ingest refuses it
    assert result.no_host == 1 and result.hosts == 2


def test_a_day_without_samples_writes_nothing_and_keeps_earlier_files(fake, tmp_path):
    folder = tmp_path / "telemetry/dcgm/collected/day=2026-11-02"
    folder.mkdir(parents=True)
    (folder / "node01.parquet").write_bytes(b"earlier")
    server = fake({})
    result = collect_day(tmp_path, Prometheus(server.url, 5), DAY, _settings())
    assert result.files == [] and (folder / "node01.parquet").read_bytes() == b"earlier"


def test_a_refused_query_and_an_unreachable_server_are_clear_errors(fake, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(prometheus.time, "sleep", lambda s: None)
    server = fake({}, status=400)
    with pytest.raises(CollectError, match=r"HTTP 400 to 'DCGM_FI_DEV_GPU_UTIL\[3600000ms\]': bad_data: parse error"):
        collect_day(tmp_path, Prometheus(server.url, 5), DAY, _settings())
    assert len(server.queries) == 1  # a 4xx is not retried
    server = fake({}, status=503)
    with pytest.raises(CollectError, match="HTTP 503"):
        collect_day(tmp_path, Prometheus(server.url, 5), DAY, _settings())
    assert len(server.queries) == prometheus.RETRIES
    code = main(["collect", "dcgm", "--landing", str(tmp_path), "--prometheus", "http://127.0.0.1:1",
                 "--start", "2026-11-02"])
    assert code == 1 and "cannot reach Prometheus at http://127.0.0.1:1" in capsys.readouterr().err
    code = main(["collect", "dcgm", "--landing", str(tmp_path), "--start", "2026-11-02"])
    assert code == 2 and "pass --prometheus URL or set collect.prometheus.url" in capsys.readouterr().err


def test_a_chunk_may_not_ask_for_more_than_11000_samples_per_series(tmp_path):
    path = tmp_path / "org.yaml"
    path.write_text("telemetry: {scrape_interval_seconds: 5}\ncollect:\n  prometheus: {chunk_minutes: 917}\n")
    cfg = load_config(path)
    with pytest.raises(CollectError, match=r"chunk_minutes 917 asks for up to 11,004 samples per series at "
                                           r"telemetry.scrape_interval_seconds 5; .* lower chunk_minutes to 916"):
        settings_of(cfg, "http://p:9090")
    path.write_text("telemetry: {scrape_interval_seconds: 5}\ncollect:\n  prometheus: {chunk_minutes: 916}\n")
    assert settings_of(load_config(path), "http://p:9090/").url == "http://p:9090"


def test_host_file_names_stay_inside_the_days_folder_and_apart():
    assert host_file_name("gpu-node-07.cluster") == "gpu-node-07.cluster.parquet"
    assert host_file_name("../etc") == "%2E.%2Fetc.parquet"
    assert host_file_name("a/b") == "a%2Fb.parquet"
    assert host_file_name("a%2Fb") != host_file_name("a/b")


def test_collect_config_errors_name_the_key(tmp_path):
    path = tmp_path / "org.yaml"
    path.write_text("collect:\n  prometheus:\n    url: prometheus:9090\n    labels: {hostnme: node}\n"
                    "    metrics: [up]\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert "org.yaml:3: `collect.prometheus.url`: 'prometheus:9090' is not an http(s) URL" in message
    assert "org.yaml:4: `collect.prometheus.labels`: unknown landing column(s) ['hostnme']" in message
    assert "org.yaml:5: `collect.prometheus.metrics`: ['up'] are not DCGM field metric names" in message
    path.write_text("collect:\n  prometheus:\n    url: http://p:9090/\n    chunk_minutes: 15\n")
    settings = load_config(path).collect.prometheus
    assert (settings.url, settings.chunk_minutes, settings.labels["hostname"]) == ("http://p:9090", 15, "Hostname")


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    target = tmp_path / "day" / "node.parquet"
    replace_atomically(target, lambda tmp: tmp.write_bytes(b"old"))

    def half_then_fail(tmp):
        tmp.write_bytes(b"ha")
        raise OSError("disk full")

    with pytest.raises(OSError):
        replace_atomically(target, half_then_fail)
    assert target.read_bytes() == b"old" and not temp_path(target).exists()


def _a_dead_pid() -> int:
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def test_temps_of_killed_writers_are_cleared_and_a_live_writers_kept(tmp_path):
    import subprocess
    import sys

    target = tmp_path / "node.parquet"
    killed = tmp_path / f".node.parquet.{_a_dead_pid()}.tmp"
    older = tmp_path / ".node.parquet.tmp"  # an earlier version's temp carried no pid
    alive = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        live = tmp_path / f".node.parquet.{alive.pid}.tmp"
        for path in (killed, older, live):
            path.write_bytes(b"half")
        other = tmp_path / f".other.parquet.{_a_dead_pid()}.tmp"
        other.write_bytes(b"half")
        assert remove_stale_temps(tmp_path, of="node.parquet") == sorted([killed, older])  # that file's only
        assert other.exists() and live.exists()
        assert remove_stale_temps(tmp_path) == [other]
        replace_atomically(target, lambda tmp: tmp.write_bytes(b"new"))
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "node.parquet"])
    finally:
        alive.communicate(b"")


def test_two_processes_replacing_one_file_at_once_both_succeed(tmp_path):
    """Another process replaces the file while this one is between its write and its rename (two days
    of a Spark backfill writing one table's schema): each renames its own temp file, the last wins."""
    import subprocess
    import sys

    target = tmp_path / "_schema.json"
    other = ("import sys; from pathlib import Path; from pipelines.lib.atomic import replace_atomically; "
             "replace_atomically(Path(sys.argv[1]), lambda tmp: tmp.write_text('theirs'))")

    def ours_while_they_replace(tmp):
        tmp.write_text("ours")
        subprocess.run([sys.executable, "-c", other, str(target)], check=True)

    replace_atomically(target, ours_while_they_replace)
    assert target.read_text() == "ours"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_schema.json"]


def test_an_error_never_shows_the_prometheus_urls_credentials(tmp_path, monkeypatch):
    monkeypatch.setattr(prometheus.time, "sleep", lambda s: None)
    with pytest.raises(CollectError) as refused:
        collect_day(tmp_path, Prometheus("http://bob:pwSECRET@127.0.0.1:1/?token=tokSECRET", 1), DAY, _settings())
    assert "SECRET" not in str(refused.value) and "cannot reach Prometheus at http://" in str(refused.value)
    assert "127.0.0.1:1" in str(refused.value)

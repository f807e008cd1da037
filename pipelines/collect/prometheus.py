"""`gpuledger collect dcgm`: dcgm-exporter series from Prometheus' HTTP API into the landing zone, one
long Parquet file per UTC day and host at `telemetry/dcgm/collected/day=<day>/<host>.parquet`.

Raw samples, not a resampled grid: each request is an instant query of a range selector,
`DCGM_FI_…[<chunk>]`, which returns every stored sample of the chunk with its own timestamp.
`query_range` at a step would instead return a value at every step for which a sample lies within
the lookback window (5 minutes by default), so a scrape gap of up to 5 minutes would come back
filled with copies of the last sample at invented times — and the ledger measures exactly those gaps
(`unmonitored` time, docs/ledger.md). A request spans `collect.prometheus.chunk_minutes` (an hour by
default), checked to return at most 11,000 samples per series at the scrape interval
(`telemetry.scrape_interval_seconds`; the limit Prometheus sets on a range query's points per series).

Each file is written to a temp file and renamed into place (pipelines/lib/atomic.py): a re-collect of
the same day replaces each host's file, and a collect killed mid-way leaves only whole files.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import polars as pl

from pipelines.lib.atomic import remove_stale_temps, replace_atomically
from pipelines.lib.config import OrgConfig
from pipelines.lib.config.collect import PrometheusCollectConfig
from pipelines.lib.redact import redact, url_secrets

FOLDER = "telemetry/dcgm/collected"
POINTS_PER_SERIES = 11_000   # Prometheus refuses range queries with more points per series
RETRIES = 3
# Landing columns in file order: the long DCGM landing format (docs/ingest/dcgm.md)
LABEL_COLUMNS = ("hostname", "gpu", "UUID", "modelName", "hpc_job", "pod", "namespace", "GPU_I_ID")
COLUMNS = ("timestamp", "hostname", "gpu", "UUID", "modelName", "metric", "value", "hpc_job", "pod", "namespace",
           "GPU_I_ID")
# one order whatever order Prometheus answered in, so a re-collect writes the same bytes
ORDER = ("timestamp", "gpu", "GPU_I_ID", "metric", "hpc_job", "namespace", "pod", "UUID", "modelName", "value")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class CollectError(RuntimeError):
    """Prometheus could not be read (unreachable, refused the query, answered nonsense); says which request."""


@dataclass
class DayResult:
    day: date
    files: list[str] = field(default_factory=list)   # relative to the landing root
    hosts: int = 0
    samples: int = 0
    requests: int = 0
    no_host: int = 0    # samples of series with neither the hostname label nor `instance`: not written
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {"day": self.day.isoformat(), "files": self.files, "hosts": self.hosts, "samples": self.samples,
                "requests": self.requests, "samples_without_host": self.no_host, "seconds": round(self.seconds, 3)}


class Prometheus:
    """The few calls of Prometheus' HTTP API the collector makes (stdlib HTTP, GET, read-only)."""

    def __init__(self, url: str, timeout: float, token: str | None = None):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._secrets = url_secrets(self.url)  # a user:password@ or ?token= of the URL never shows in an error
        self.headers = {"Accept": "application/json", "User-Agent": "gpuledger-collect"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    def instant(self, query: str, at: float) -> list[dict]:
        """The result of an instant query evaluated at `at` (epoch seconds)."""
        data = self._get("/api/v1/query", {"query": query, "time": f"{at:.3f}"})
        return data.get("result") or []

    def _error(self, message: str) -> CollectError:
        return CollectError(redact(message, self._secrets))

    def _get(self, path: str, params: dict[str, str]) -> dict:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        for attempt in range(RETRIES):
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=self.headers),
                                            timeout=self.timeout) as resp:
                    body = json.load(resp)
                break
            except urllib.error.HTTPError as err:
                # 4xx is the query's fault (retrying changes nothing); 5xx may be a restart or overload
                if err.code < 500 or attempt == RETRIES - 1:
                    raise self._error(f"{self.url} ({path}) answered HTTP {err.code} to {params['query']!r}: "
                                      f"{_api_error(err)}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                if attempt == RETRIES - 1:
                    raise self._error(f"cannot reach Prometheus at {self.url}: {getattr(err, 'reason', err)}") from None
            except json.JSONDecodeError:
                raise self._error(f"{self.url} ({path}) did not answer JSON: is {self.url} a Prometheus server?") from None
            time.sleep(2 ** attempt)
        if body.get("status") != "success":
            raise CollectError(f"Prometheus refused {params['query']!r}: {body.get('errorType')}: {body.get('error')}")
        return body.get("data") or {}


def _api_error(err: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(err.read() or b"{}")
        return f"{body.get('errorType')}: {body.get('error')}"
    except (ValueError, OSError):
        return err.reason


def day_samples(prom: Prometheus, day: date, settings: PrometheusCollectConfig, result: DayResult) -> pl.DataFrame:
    """Every sample of the configured metrics stored for `day` (UTC), as long landing rows (unsorted)."""
    start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp()
    span = settings.chunk_minutes * 60
    frames = []
    for metric in settings.metrics:
        t = start
        while t < start + 86400:
            end = min(t + span, start + 86400)
            # a range selector ending 1 ms before the chunk's end holds the samples in [t - 1 ms, end - 1 ms]
            # (both ends included before Prometheus 3, the start excluded from 3 on); only [t, end) is
            # kept, so chunks neither overlap nor miss a sample on their boundary
            ms = round((end - t) * 1000)
            series = prom.instant(f"{metric}[{ms}ms]", end - 0.001)
            result.requests += 1
            frames.append(_series_frame(series, metric, settings.labels, round(t * 1000), round(end * 1000)))
            t = end
    samples = pl.concat(frames, how="vertical") if frames else _series_frame([], "", settings.labels, 0, 0)
    gpu = samples["gpu"].cast(pl.Int32, strict=False)
    if gpu.null_count() == samples["gpu"].null_count():  # integer GPU indexes, else the text for the ingest to refuse
        samples = samples.with_columns(gpu.alias("gpu"))
    return samples


def _series_frame(series: list[dict], metric: str, labels: dict[str, str], from_ms: int, to_ms: int) -> pl.DataFrame:
    """One row per sample of a matrix result within [from_ms, to_ms): its labels (as landing columns),
    time and value. Labels are resolved per series, then repeated for its samples."""
    per_series = pl.DataFrame(
        {col: [s["metric"].get(label) for s in series] for col, label in labels.items()}
        | {"instance": [s["metric"].get("instance") for s in series]},
        schema={c: pl.String for c in [*labels, "instance"]},
    ).with_columns(
        # the host label, else `instance` without its port; an empty label is an absent one
        pl.coalesce(pl.col("hostname").replace("", None),
                    pl.col("instance").str.replace(r":\d+$", "").replace("", None)).alias("hostname"),
    )
    lengths = np.array([len(s.get("values") or []) for s in series], dtype=np.int64)
    which = np.repeat(np.arange(len(series), dtype=np.int64), lengths)  # each sample's series
    # [[time, "value"], …] of every series, flattened; values are Go float text ("0.5", "NaN", "+Inf")
    pairs = [pair for s in series for pair in (s.get("values") or [])]
    times, values = zip(*pairs) if pairs else ((), ())
    ms = np.rint(np.array(times, dtype=np.float64) * 1000).astype(np.int64)
    keep = (ms >= from_ms) & (ms < to_ms)
    return per_series.select(LABEL_COLUMNS)[which[keep]].with_columns(
        pl.Series("timestamp", ms[keep]).cast(pl.Datetime("ms", "UTC")).cast(pl.Datetime("us", "UTC")),
        pl.lit(metric, dtype=pl.String).alias("metric"),
        pl.Series("value", np.array(values, dtype=np.float64)[keep]),
    ).select(*COLUMNS)


def host_file_name(host: str) -> str:
    """A host's file name: the hostname itself when it is a plain DNS-like name, else percent-encoded
    (so no label value can name a path outside the day's folder, and two hosts never share a file)."""
    if SAFE_NAME.match(host):
        return f"{host}.parquet"
    encoded = urllib.parse.quote(host, safe="")
    if encoded.startswith("."):  # never a dotfile (or `..`): the ingest skips those
        encoded = "%2E" + encoded[1:]
    return f"{encoded}.parquet"


def collect_day(landing: Path, prom: Prometheus, day: date, settings: PrometheusCollectConfig,
                pause_between_files: float = 0.0) -> DayResult:
    """Collects one UTC day: one file per host that has samples that day, each replaced atomically.
    A day without any sample writes nothing (and leaves files an earlier collect wrote)."""
    began = time.monotonic()
    result = DayResult(day)
    folder = landing / FOLDER / f"day={day.isoformat()}"
    remove_stale_temps(folder)  # what a collect killed mid-write left
    rows = day_samples(prom, day, settings, result)
    result.no_host = rows.filter(pl.col("hostname").is_null()).height
    rows = rows.filter(pl.col("hostname").is_not_null())
    for (host,), part in sorted(rows.partition_by("hostname", as_dict=True, maintain_order=False).items()):
        part = part.sort(ORDER, nulls_last=True)
        target = folder / host_file_name(host)
        replace_atomically(target, lambda tmp, part=part: part.write_parquet(tmp, compression="zstd", statistics=True))
        result.files.append(target.relative_to(landing).as_posix())
        result.samples += part.height
        result.hosts += 1
        if pause_between_files:
            time.sleep(pause_between_files)  # test hook: a window to kill the process between two files
    result.seconds = time.monotonic() - began
    return result


def settings_of(cfg: OrgConfig, url: str | None) -> PrometheusCollectConfig:
    """The collector's settings (a `--prometheus` URL wins over the config's), checked against the
    scrape interval: a request may not ask for more than 11,000 samples per series."""
    settings = cfg.collect.prometheus
    if url:
        settings = settings.model_copy(update={"url": PrometheusCollectConfig(url=url).url})
    if not settings.url:
        raise CollectError("no Prometheus to collect from: pass --prometheus URL or set collect.prometheus.url")
    scrape = cfg.telemetry.scrape_interval_seconds
    if settings.chunk_minutes * 60 / scrape > POINTS_PER_SERIES:
        raise CollectError(
            f"collect.prometheus.chunk_minutes {settings.chunk_minutes} asks for up to "
            f"{settings.chunk_minutes * 60 // scrape:,} samples per series at telemetry.scrape_interval_seconds "
            f"{scrape}; Prometheus answers at most {POINTS_PER_SERIES:,}: lower chunk_minutes to "
            f"{POINTS_PER_SERIES * scrape // 60} or less")
    return settings


def client(settings: PrometheusCollectConfig) -> Prometheus:
    token = None
    if settings.bearer_token_file:
        try:
            token = Path(settings.bearer_token_file).read_text(encoding="utf-8").strip()
        except OSError as err:
            raise CollectError(f"collect.prometheus.bearer_token_file {settings.bearer_token_file}: {err}") from None
    return Prometheus(settings.url, settings.timeout_seconds, token)


def days_between(start: date, end: date | None) -> list[date]:
    end = end or start
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


def prometheus_collect_configured(cfg: OrgConfig) -> bool:
    """Whether the daily job collects from Prometheus before ingesting (the config names a server)."""
    return bool(cfg.collect.prometheus.url)

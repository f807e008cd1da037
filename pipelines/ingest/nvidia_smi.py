"""nvidia-smi logs (`telemetry/nvidia_smi/<host>/**/*.csv|*.log|*.txt`) → the same validated long
samples as DCGM's (metric names DCGM_FI_DEV_GPU_UTIL, _FB_USED, _POWER_USAGE, _TOTAL_ENERGY_CONSUMPTION),
rolled up per GPU and minute into staging.stg_dcgm__gpu_minutes by the DCGM rollup: fleets without
dcgm-exporter get idle and under-use from what nvidia-smi prints.

Two formats, told apart by the first line: `nvidia-smi --query-gpu=... --format=csv[,nounits] -l N`
(read as "query-gpu csv") and `nvidia-smi dmon -o DT` ("dmon"). Here the lines become tables of text
cells under the file's own column names; `nvidia_smi_samples` turns them into samples. nvidia-smi does
not name its host, nor the zone of its times: the host is the folder, the zone UTC, unless a sidecar
`nvidia_smi.yaml` beside the file says `host:` or `timezone:`. Columns, units, what is refused:
docs/ingest/nvidia-smi.md."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from pipelines.ingest import nvidia_smi_samples
from pipelines.landing.parsed import Parsed, file_reject
from pipelines.lib.config import OrgConfig
from pipelines.lib.config.strict_yaml import StrictYamlError, load_yaml, read_yaml_text

SOURCE = "nvidia_smi"
SIDECAR = "nvidia_smi.yaml"
QUERY_CSV, DMON = "query-gpu csv", "dmon"
HIVE = re.compile(r"day=\d{4}-\d{2}-\d{2}")
MAX_SIDECAR_BYTES = 64 << 10

# --query-gpu fields, as `nvidia-smi --help-query-gpu` names them (either spelling of a pair), → ours
LABELS = {"timestamp": "timestamp", "index": "gpu", "uuid": "uuid", "gpu_uuid": "uuid",
          "name": "model_name", "gpu_name": "model_name"}
# field → (DCGM metric, {unit the header may give: factor to the metric's unit}); of several fields of
# one metric the first present wins (power.draw is the 1-s average on Ampere and newer)
QUERY_METRICS = {
    "utilization.gpu": ("DCGM_FI_DEV_GPU_UTIL", {"%": 1.0}),
    "memory.used": ("DCGM_FI_DEV_FB_USED", {"MiB": 1.0}),
    "power.draw": ("DCGM_FI_DEV_POWER_USAGE", {"W": 1.0}),
    "power.draw.average": ("DCGM_FI_DEV_POWER_USAGE", {"W": 1.0}),
    "power.draw.instant": ("DCGM_FI_DEV_POWER_USAGE", {"W": 1.0}),
    "total_energy_consumption": ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", {"mJ": 1.0, "J": 1000.0}),
}
# dmon columns (`-s pucm`): sm is the share of time a kernel ran, which is what utilization.gpu is
DMON_METRICS = {
    "sm": ("DCGM_FI_DEV_GPU_UTIL", {"%": 1.0}),
    "fb": ("DCGM_FI_DEV_FB_USED", {"MB": 1.0, "MiB": 1.0}),   # dmon's MB are MiB
    "pwr": ("DCGM_FI_DEV_POWER_USAGE", {"W": 1.0}),
}
_FIELD = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)(?:\s*\[([^\]]*)\])?")
NO_HEADER = ("no header line: the file starts with data, and nvidia-smi's --format=csv,noheader gives no column "
             "names, so which value is which cannot be known; log with --format=csv (or csv,nounits), which "
             "writes the header")
NO_DATES = ("dmon output without dates (its header has no Date column): a time of day alone cannot be placed "
            "on a day; run nvidia-smi dmon with -o DT, which prints each line's date and time")


@dataclass(frozen=True)
class Place:
    """Where a file's samples are from: the host, and the zone of its naive times."""

    host: str
    zone: str = "UTC"


@dataclass
class Table:
    """The lines under one header: their cells by the file's own column names, and what the columns
    are to the ledger (the time, the GPU index, labels, and each metric with its unit and factor)."""

    columns: list[str]
    header_line: int
    time: list[str]
    gpu: str
    labels: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, tuple[str, str | None, float]] = field(default_factory=dict)
    rows: list[list] = field(default_factory=list)       # [line number, *cells]
    units_seen: bool = False                              # dmon: its units line was read


@dataclass
class Lines:
    """A file's lines as tables, the lines that are no record (line number, text, reason), and what was
    skipped on purpose."""

    read_as: str
    tables: list[Table] = field(default_factory=list)
    bad: list[tuple[int, str, str]] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)

    def record(self, table: Table, n: int, line: str, cells: list[str]) -> None:
        """Line `n`'s cells under `table`'s header, or the line as no record when they do not fit it."""
        if len(cells) != len(table.columns):
            self.bad.append((n, line, f"{len(cells)} values where the header (line {table.header_line}) "
                                      f"has {len(table.columns)}"))
        else:
            table.rows.append([n, *cells])


class Refused(ValueError):
    """The whole file cannot be read; the message is the quarantine reason."""


def parse(path: Path, rel: str, cfg: OrgConfig | None = None) -> Parsed:
    try:
        data = path.read_bytes()
    except OSError as err:
        return _refused(rel, f"unreadable file: {err}")
    read_as = None
    try:
        text = _text(data)
        place = place_of(path, rel)
        lines = [(n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), start=1)]
        if lines and lines[-1][1] == "":
            lines.pop()
        read_as = DMON if _first(lines).lstrip().startswith("#") else QUERY_CSV
        read = dmon_lines(lines) if read_as == DMON else csv_lines(lines)
    except Refused as err:
        return _refused(rel, str(err), read_as)
    parsed = nvidia_smi_samples.to_samples(read, rel, place)
    parsed.read_as = read_as
    return parsed


def _refused(rel: str, reason: str, read_as: str | None = None) -> Parsed:
    return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, rel, reason), read_as=read_as)


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Refused(f"not UTF-8 text: byte 0x{data[err.start]:02X} at byte {err.start} of the file ({err.reason}); "
                      "nvidia-smi writes UTF-8, so the file is damaged or is not nvidia-smi output") from None


def _first(lines: list[tuple[int, str]]) -> str:
    return next((line for _, line in lines if line.strip()), "")


def place_of(path: Path, rel: str) -> Place:
    """The host (the first folder under telemetry/nvidia_smi/ that is no `day=` folder, or the sidecar's
    `host:`) and the zone (the sidecar's `timezone:`, else UTC)."""
    folders = rel.split("/")[2:-1]
    host = next((f for f in folders if not HIVE.fullmatch(f)), None)
    settings = _sidecar(path.with_name(SIDECAR), "/".join(rel.split("/")[:-1] + [SIDECAR]))
    host = settings.get("host") or host
    if not host:
        raise Refused("no host: nvidia-smi output does not name its host, so put the file in a folder named after "
                      f"it (telemetry/nvidia_smi/<host>/), or say `host:` in a {SIDECAR} beside it")
    return Place(host=host, zone=settings.get("timezone", "UTC"))


def _sidecar(path: Path, shown: str) -> dict[str, str]:
    if not path.is_file():
        return {}
    try:
        data = load_yaml(read_yaml_text(path, MAX_SIDECAR_BYTES), shown).data
    except (StrictYamlError, OSError, UnicodeDecodeError) as err:
        raise Refused(f"{shown} cannot be read: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise Refused(f"{shown} must be a mapping with host: and/or timezone:")
    unknown = sorted(str(k) for k in data if k not in ("host", "timezone"))
    if unknown:
        raise Refused(f"{shown}: unknown key(s) {', '.join(unknown)}; it may say host: and timezone:")
    settings = {k: v for k, v in data.items() if v is not None}
    for key, value in settings.items():
        if not isinstance(value, str) or not value.strip():
            raise Refused(f"{shown}: {key}: must be a non-empty text, not {value!r}")
    if "timezone" in settings:
        try:
            ZoneInfo(settings["timezone"])
        except (ZoneInfoNotFoundError, ValueError):
            raise Refused(f"{shown}: timezone {settings['timezone']!r} is not an IANA time zone "
                          "(e.g. UTC, Europe/Berlin, America/Los_Angeles)") from None
    return {k: v.strip() for k, v in settings.items()}


def csv_lines(lines: list[tuple[int, str]]) -> Lines:
    """`--query-gpu ... --format=csv`: a header line (again whenever the query is started anew), then
    `, `-separated cells. Columns are read by name; a line that repeats the header is skipped."""
    out = Lines(QUERY_CSV)
    table, header = None, None
    for n, line in lines:
        if not line.strip():
            out.dropped["blank lines"] += 1
            continue
        cells = [c.strip() for c in line.split(",")]
        if _is_header(cells):
            if cells == header:
                out.dropped["repeated header lines"] += 1
                continue
            header, table = cells, _query_table(cells, n)
            out.tables.append(table)
            continue
        if table is None:
            raise Refused(NO_HEADER)
        out.record(table, n, line, cells)
    if not out.tables:
        raise Refused(NO_HEADER)
    return out


def _is_header(cells: list[str]) -> bool:
    """A header names fields (`utilization.gpu [%]`), and at least one the ledger knows: no data line does."""
    names = [_FIELD.fullmatch(c) for c in cells]
    return all(names) and any(m[1].lower() in LABELS or m[1].lower() in QUERY_METRICS for m in names)


def _query_table(cells: list[str], n: int) -> Table:
    names = [(m[1].lower(), m[2]) for m in (_FIELD.fullmatch(c) for c in cells)]
    _no_repeats(cells, [name for name, _ in names], n)
    by_role = {}
    for cell, (name, _) in zip(cells, names):
        if name in LABELS:
            by_role.setdefault(LABELS[name], cell)
    missing = [what for role, what in (("timestamp", "timestamp"), ("gpu", "index")) if role not in by_role]
    if missing:
        raise Refused(f"the header (line {n}) has no {' or '.join(missing)} column: query "
                      "--query-gpu=timestamp,index,... so each line says when and which GPU")
    table = Table(columns=cells, header_line=n, time=[by_role["timestamp"]], gpu=by_role["gpu"],
                  labels={k: v for k, v in by_role.items() if k in ("uuid", "model_name")})
    for cell, (name, unit) in zip(cells, names):
        if name in QUERY_METRICS:
            _add_metric(table, QUERY_METRICS[name], cell, name, unit, n)
    if not table.metrics:
        raise Refused(f"the header (line {n}) has none of the columns the ledger reads "
                      f"({', '.join(QUERY_METRICS)})")
    return table


def _add_metric(table: Table, spec: tuple[str, dict[str, float]], cell: str, name: str, unit: str | None,
                n: int) -> None:
    metric, units = spec
    if metric in table.metrics:
        return
    if unit is not None and unit not in units:
        raise Refused(f"column {cell!r} (line {n}): gpuledger reads {name} in {' or '.join(units)}, not {unit}")
    table.metrics[metric] = (cell, unit, units.get(unit, 1.0) if unit else 1.0)


def _no_repeats(cells: list[str], names: list[str], n: int) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(names, start=1):
        if name in seen:
            raise Refused(f"the header (line {n}) names {cells[i - 1]!r} twice (columns {seen[name]} and {i}): "
                          "which of them holds the values cannot be known")
        seen[name] = i


def dmon_lines(lines: list[tuple[int, str]]) -> Lines:
    """`nvidia-smi dmon -o DT`: `#` header lines (names, then units), again every few screens, then
    whitespace-separated cells, `-` for no reading."""
    out = Lines(DMON)
    table, header = None, None
    for n, line in lines:
        text = line.strip()
        if not text:
            out.dropped["blank lines"] += 1
            continue
        if text.startswith("#"):
            tokens = text[1:].split()
            lowered = [t.lower() for t in tokens]
            if "gpu" in lowered:
                if tokens == header:
                    out.dropped["repeated header lines"] += 1
                    continue
                header, table = tokens, _dmon_table(tokens, n)
                out.tables.append(table)
            elif table is not None and len(tokens) == len(table.columns):
                if table.units_seen:
                    out.dropped["repeated header lines"] += 1
                _dmon_units(table, tokens, n)
            else:
                out.dropped["comment lines"] += 1
            continue
        if table is None:
            raise Refused(f"line {n} holds values before any `# gpu ...` header line: not dmon output as "
                          "nvidia-smi writes it")
        cells = text.split()
        out.record(table, n, line, cells)
    if not out.tables:
        raise Refused("no `# gpu ...` header line: not dmon output as nvidia-smi writes it")
    return out


def _dmon_table(tokens: list[str], n: int) -> Table:
    lowered = [t.lower() for t in tokens]
    _no_repeats(tokens, lowered, n)
    if "date" not in lowered or "time" not in lowered:
        raise Refused(NO_DATES)
    table = Table(columns=tokens, header_line=n, time=[tokens[lowered.index("date")], tokens[lowered.index("time")]],
                  gpu=tokens[lowered.index("gpu")])
    for token, name in zip(tokens, lowered):
        if name in DMON_METRICS:
            _add_metric(table, DMON_METRICS[name], token, name, None, n)
    if not table.metrics:
        raise Refused(f"the dmon header (line {n}) has none of the columns the ledger reads (sm, fb, pwr): "
                      "run dmon with -s pucm")
    return table


def _dmon_units(table: Table, units: list[str], n: int) -> None:
    """The units line under the names: each metric the ledger reads must be in a unit it knows."""
    table.units_seen = True
    for metric, (column, _, _) in list(table.metrics.items()):
        unit = units[table.columns.index(column)]
        spec = DMON_METRICS[column.lower()]
        if unit not in spec[1]:
            raise Refused(f"dmon column {column} is in {unit} (line {n}): gpuledger reads it in "
                          f"{' or '.join(spec[1])}")
        table.metrics[metric] = (column, None, spec[1][unit])

"""dcgm-exporter scrapes in the Prometheus text exposition format (`telemetry/dcgm/**/*.prom`) → the
same validated long samples as the Parquet/CSV path: the lines are parsed here into a long frame and
handed to `pipelines.ingest.dcgm.from_frame`, so contract, sentinels and quarantine are one DCGM path.

The parse rules (text format 0.0.4 as `expfmt` reads it, and 1.0's quoted names), the scrape time of a
line without a timestamp (`scrape_time()`: the stamp in the file name, else the modification time) and
what is quarantined: docs/ingest/dcgm.md#prometheus-scrapes-prom."""

from __future__ import annotations

import bisect
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from pipelines.ingest import dcgm
from pipelines.landing.parsed import QUARANTINE_SCHEMA, Parsed, file_reject

SOURCE = dcgm.SOURCE
KEEP_PREFIX = "DCGM_FI_"
# label → the long-format column handed to dcgm.from_frame (first spelling found wins)
COLUMNS = {
    "hostname": ("hostname", "Hostname"),
    "gpu": ("gpu",),
    "UUID": ("UUID", "uuid"),
    "modelName": ("modelName",),
    "GPU_I_ID": ("GPU_I_ID",),
    "hpc_job": ("hpc_job",),
    "namespace": ("namespace",),
    "pod": ("pod",),
}
# plausible sample times, in ms since the epoch: [2000-01-01, 2100-01-01)
MIN_MS, MAX_MS = 946_684_800_000, 4_102_444_800_000

_BLANK = " \t"
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}
# Fast path for the usual line: name, optional label block (between the first `{` and the last `}`),
# value, optional timestamp. The label block is checked by _LABEL_BLOCK and cached; whatever the fast
# path does not accept goes through the careful parser, which gives the reason.
_FAST = re.compile(r"[ \t]*([a-zA-Z_:][a-zA-Z0-9_:]*)(?:[ \t]*\{(.*)\}[ \t]*|[ \t]+)(\S+)(?:[ \t]+(\S+))?[ \t]*")
_PAIR = r'[a-zA-Z_][a-zA-Z0-9_]*[ \t]*=[ \t]*"(?:[^"\\]|\\.)*"'
_LABEL_BLOCK = re.compile(rf"[ \t]*(?:{_PAIR}[ \t]*,[ \t]*)*(?:{_PAIR}[ \t]*)?")
_LABEL_PAIRS = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"((?:[^"\\]|\\.)*)"')
# Go's strconv.ParseFloat: decimal, hex float (p exponent required), inf/infinity/nan in any case
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+")
_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)
_INT = re.compile(r"[+-]?\d+")
# scrape time in the file name (see the module docstring)
_STAMP = re.compile(
    r"(?:^|[_.-])(?:"
    r"(?P<basic>\d{8}T\d{6}(?:\.\d{1,6})?Z)"
    r"|(?P<ext>\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:\.\d{1,6})?Z)"
    r"|(?P<epoch_ms>\d{13})|(?P<epoch_s>\d{10})"
    r")$"
)


class LineError(ValueError):
    """A line that is not valid exposition text; the message is the quarantine reason."""


def parse(path: Path, file: str) -> Parsed:
    try:
        data = path.read_bytes()
        scraped_ms, _ = scrape_time(path)
    except OSError as err:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable file: {err}"))
    return from_bytes(data, file, scraped_ms)


def scrape_time(path: Path) -> tuple[int, str]:
    """(ms since the epoch, "file name" | "mtime"): the time of samples that carry none."""
    stem = path.name[: -len(".prom")] if path.name.lower().endswith(".prom") else path.stem
    m = _STAMP.search(stem)
    ms = None
    if m and (m["epoch_ms"] or m["epoch_s"]):
        ms = int(m["epoch_ms"]) if m["epoch_ms"] else int(m["epoch_s"]) * 1000
    elif m:
        main, _, frac = (m["basic"] or m["ext"])[:-1].partition(".")
        try:
            t = datetime.strptime(re.sub(r"[:-]", "", main), "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc)
            ms = int(t.timestamp()) * 1000 + int((frac + "000")[:3])
        except ValueError:
            pass  # e.g. month 13: not a time after all
    if ms is not None and MIN_MS <= ms < MAX_MS:  # else a number that only looks like a time (a job id?)
        return ms, "file name"
    return path.stat().st_mtime_ns // 1_000_000, "mtime"


def from_bytes(data: bytes, file: str, scraped_ms: int) -> Parsed:
    """Parses exposition text; samples without a timestamp get `scraped_ms`."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    bad: list[tuple[int, str, str]] = []          # (line number, reason, source line)
    rows: list[tuple] = []                        # (line number, ms, metric, value, *COLUMNS)
    seen: dict[tuple, int] = {}
    line_ms: dict[int, int] = {}                  # line → sample time, to date quarantined lines
    not_dcgm = 0
    labels_cache: dict[str, tuple | LineError] = {}
    for n, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            bad.append((n, f"line is not UTF-8 ({err.reason} at byte {err.start})", raw.decode("utf-8", "replace")))
            continue
        text = text.removesuffix("\r")
        stripped = text.lstrip(_BLANK)
        if not stripped or stripped.startswith("#"):
            continue
        try:
            name, labels, value, ts = _parse_sample(text, labels_cache)
        except LineError as err:
            bad.append((n, f"malformed exposition line: {err}", text))
            continue
        ms = scraped_ms if ts is None else ts
        line_ms[n] = ms
        if ts is not None and not MIN_MS <= ts < MAX_MS:
            unit = "seconds" if ts < MIN_MS else "microseconds or nanoseconds"
            bad.append((n, f"timestamp {ts} is outside 2000..2100 as milliseconds since the epoch ({unit}?)", text))
            continue
        key = (name, labels[0], ms)
        if key in seen:
            bad.append((n, f"duplicate sample: same series and timestamp as line {seen[key]}", text))
            continue
        seen[key] = n
        if not name.startswith(KEEP_PREFIX):
            not_dcgm += 1
            continue
        rows.append((n, ms, name, value, *labels[1]))

    frame = pl.DataFrame(
        rows,
        schema={
            "_line": pl.Int64, "_ms": pl.Int64, "metric": pl.String, "value": pl.Float64,
            **{c: pl.String for c in COLUMNS},
        },
        orient="row",
    )
    frame = frame.with_columns(pl.from_epoch("_ms", time_unit="ms").cast(pl.Datetime("us")).alias("timestamp"))
    parsed = dcgm.from_frame(frame.select("timestamp", *COLUMNS, "metric", "value"), file)

    rejects = _with_lines(parsed.rejects, frame["_line"], lines)
    if bad:
        rejects = pl.concat([rejects, _line_rejects(bad, file, line_ms, scraped_ms)])
        rejects = rejects.sort(pl.col("row_ref").str.strip_prefix("line ").cast(pl.Int64, strict=False), nulls_last=True)
    dropped = {**parsed.dropped, **({"not_dcgm": not_dcgm} if not_dcgm else {})}
    return Parsed(rows=parsed.rows, rejects=rejects, dropped=dropped)


def _parse_sample(text: str, cache: dict) -> tuple[str, tuple, float, int | None]:
    """(metric name, (all labels as a sorted tuple, the COLUMNS values), value, timestamp ms or None)."""
    m = _FAST.fullmatch(text)
    labels = None
    if m:
        name, block, value_text, ts_text = m.groups()
        labels = cache.get(block or "")
        if labels is None:
            labels = cache[block or ""] = _fast_labels(block or "")
    if not isinstance(labels, tuple):  # not the usual shape: the careful parser accepts it or says why
        name, pairs, value_text, ts_text = _careful(text)
        labels = _columns(pairs)
    return name, labels, _float(value_text), None if ts_text is None else _int(ts_text)


def _fast_labels(block: str) -> tuple | LineError:
    if not _LABEL_BLOCK.fullmatch(block):
        return LineError("label set")
    pairs = []
    for name, value in _LABEL_PAIRS.findall(block):
        try:
            pairs.append((name, _unescape(value)))
        except LineError as err:
            return err
    try:
        return _columns(pairs)
    except LineError as err:
        return err


def _careful(text: str) -> tuple[str, list[tuple[str, str]], str, str | None]:
    """The reference parser, position by position, for the lines the fast path does not take."""
    i = _skip(text, 0)
    name = None
    m = _NAME.match(text, i)
    if m:
        name, i = m.group(), m.end()
        if i < len(text) and text[i] not in _BLANK and text[i] != "{":
            raise LineError(f"expected a blank or '{{' after metric name {name!r}, found {_show(text, i)}")
    elif i >= len(text) or text[i] != "{":
        raise LineError(f"expected a metric name at column {i + 1}, found {_show(text, i)}")
    i = _skip(text, i)
    pairs: list[tuple[str, str]] = []
    if i < len(text) and text[i] == "{":
        i += 1
        while True:
            i = _skip(text, i)
            if i < len(text) and text[i] == "}":
                i += 1
                break
            if i < len(text) and text[i] == '"':  # quoted (UTF-8) name: a label name, or the metric name
                q = _QUOTED.match(text, i)
                if not q:
                    raise LineError(f"unterminated quoted name at column {i + 1}")
                label, i = _unescape(q.group(1)), q.end()
            else:
                q = _LABEL_NAME.match(text, i)
                if not q:
                    raise LineError(f"expected a label name at column {i + 1}, found {_show(text, i)}")
                label, i = q.group(), q.end()
            i = _skip(text, i)
            if text[i : i + 1] in (",", "}") and text[q.start()] == '"':
                if name is not None:
                    raise LineError(f"second metric name {label!r} in the label set")
                name = label
            else:
                if text[i : i + 1] != "=":
                    raise LineError(f"expected '=' after label name {label!r} at column {i + 1}, found {_show(text, i)}")
                i = _skip(text, i + 1)
                if text[i : i + 1] != '"':
                    raise LineError(f"expected a quoted value for label {label!r} at column {i + 1}, found {_show(text, i)}")
                q = _QUOTED.match(text, i)
                if not q:
                    raise LineError(f"unterminated value of label {label!r} (a '\"' without its closing quote)")
                pairs.append((label, _unescape(q.group(1))))
                i = _skip(text, q.end())
            if text[i : i + 1] == ",":
                i += 1
            elif text[i : i + 1] != "}":
                raise LineError(f"expected ',' or '}}' after label {label!r} at column {i + 1}, found {_show(text, i)}")
        if name is None:
            raise LineError("no metric name")
    elif name is None:
        raise LineError("no metric name")
    rest = text[i:].split()
    if not rest:
        raise LineError(f"metric {name!r} has no value")
    if len(rest) > 2:
        raise LineError(f"unexpected text after the timestamp: {' '.join(rest[2:])[:40]!r}")
    return name, pairs, rest[0], rest[1] if len(rest) == 2 else None


def _columns(pairs: list[tuple[str, str]]) -> tuple:
    labels = dict(pairs)
    if len(labels) != len(pairs):
        dupes = sorted({k for k, _ in pairs if sum(1 for j, _ in pairs if j == k) > 1})
        raise LineError(f"duplicate label name {', '.join(dupes)}")
    picked = tuple(next((labels[s] for s in names if s in labels), None) for names in COLUMNS.values())
    return tuple(sorted(labels.items())), picked


def _unescape(value: str) -> str:
    if "\\" not in value:
        return value

    def one(m: re.Match) -> str:
        if m.group(1) not in _ESCAPES:
            raise LineError(f"invalid escape '\\{m.group(1)}' in a label value (only \\\\, \\\" and \\n)")
        return _ESCAPES[m.group(1)]

    return _ESCAPE.sub(one, value)


def _float(text: str) -> float:
    if _DECIMAL.fullmatch(text) or _SPECIAL.fullmatch(text):
        return float(text)
    if _HEX.fullmatch(text):
        return float.fromhex(text)
    raise LineError(f"value {text[:40]!r} is not a number")


def _int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise LineError(f"timestamp {text[:40]!r} is not an integer (milliseconds since the epoch)")
    return int(text)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _BLANK:
        i += 1
    return i


def _show(text: str, i: int) -> str:
    return repr(text[i : i + 20]) if i < len(text) else "the end of the line"


def _with_lines(rejects: pl.DataFrame, frame_lines: pl.Series, lines: list[bytes]) -> pl.DataFrame:
    """from_frame names a rejected sample `row K` (the K-th row of the frame it was given): name its
    source line instead, and make the payload that line."""
    if rejects.height == 0:
        return rejects
    k = rejects["row_ref"].str.strip_prefix("row ").cast(pl.Int64, strict=False).to_list()
    line = [None if x is None else frame_lines[x - 1] for x in k]
    text = [None if n is None else lines[n - 1].decode("utf-8", "replace").removesuffix("\r") for n in line]
    return rejects.with_columns(
        pl.coalesce(pl.Series([None if n is None else f"line {n}" for n in line], dtype=pl.String), "row_ref").alias("row_ref"),
        pl.coalesce(pl.Series([None if t is None else json.dumps({"line": t}) for t in text], dtype=pl.String), "payload").alias("payload"),
    )


def _line_rejects(bad: list, file: str, line_ms: dict[int, int], scraped_ms: int) -> pl.DataFrame:
    """Quarantine rows of lines that gave no sample, dated by the nearest plausible sample time before
    them (else after them, else the scrape time)."""
    known = [(n, ms) for n, ms in sorted(line_ms.items()) if MIN_MS <= ms < MAX_MS]
    at = [n for n, _ in known]
    days = []
    for n, _, _ in bad:
        k = bisect.bisect_left(at, n)
        ms = known[k - 1][1] if k > 0 else known[k][1] if k < len(known) else scraped_ms
        days.append(datetime.fromtimestamp(ms / 1000, timezone.utc).date())
    given = {
        "source": [SOURCE] * len(bad),
        "file": [file] * len(bad),
        "row_ref": [f"line {n}" for n, _, _ in bad],
        "reason": [reason for _, reason, _ in bad],
        "payload": [json.dumps({"line": text}) for _, _, text in bad],
        "day": days,
    }
    return pl.DataFrame(
        {c: given.get(c, [None] * len(bad)) for c in QUARANTINE_SCHEMA}, schema=QUARANTINE_SCHEMA
    )

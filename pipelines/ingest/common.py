"""What every landing parser shares: lenient casts that remember what failed, and the split of parsed
rows into staged and quarantined by the source's contract (models/contract.py). What a parser returns
is pipelines/landing/parsed.py's `Parsed`."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable

import duckdb
import polars as pl

from models.contract import Contract
from models.landing import TS
from pipelines.landing.parsed import QUARANTINE_SCHEMA, Parsed, empty_rejects


NULL_TOKENS = ["", "NULL", "null", "Null"]
# A landing line longer than this is refused, not parsed: no exporter writes one event or pod that big.
MAX_JSON_LINE_BYTES = 1 << 20
# What a quarantine row keeps of a refused line (the file keeps all of it).
MAX_PAYLOAD_CHARS = 4096
# Prefix for raw input columns whose names collide with a typed staging column of the same name.
RAW = "raw."
# A column `read_csv_leniently` adds to a block's records when some held bytes that are not UTF-8: per
# record, where they were (null for the records that were UTF-8), for the quarantine reason.
UNDECODABLE = "_undecodable"

def blank_to_null(col: str) -> pl.Expr:
    """A raw string column with whitespace trimmed and FOCUS/sacct null spellings turned into null."""
    return null_spellings_to_null(pl.col(col).cast(pl.String).str.strip_chars())


def null_spellings_to_null(text: pl.Expr) -> pl.Expr:
    """Text with its blank and null spellings (NULL_TOKENS) as null. `replace` evaluates `text`
    once; `when(text.is_in(…)).otherwise(text)` evaluated it twice, half the cost of a parse's cleaning."""
    return text.replace(NULL_TOKENS, None)


def to_float(col: str) -> pl.Expr:
    return blank_to_null(col).cast(pl.Float64, strict=False)


def to_int(col: str, dtype: pl.DataType = pl.Int64) -> pl.Expr:
    return blank_to_null(col).cast(pl.Float64, strict=False).cast(dtype, strict=False)


def by_distinct(expr: pl.Expr, parse: Callable[[pl.Expr], pl.Expr], dtype: pl.DataType) -> pl.Expr:
    """`parse` evaluated once per distinct value of `expr` and put back on every row (a null stays
    null). Landing columns repeat a few values over many rows (the hours of a bill, the scrape times
    of a fleet), so an expensive parse costs what its distinct values cost."""

    def apply(values: pl.Series) -> pl.Series:
        distinct = values.drop_nulls().unique()
        if distinct.len() == 0:
            return pl.repeat(None, len(values), dtype=dtype, eager=True).alias(values.name)
        return spread(values, distinct, distinct.to_frame("value").select(parse(pl.col("value")).cast(dtype)).to_series())

    return expr.map_batches(apply, return_dtype=dtype)


def spread(values: pl.Series, distinct: pl.Series, results: pl.Series) -> pl.Series:
    """`results[i]`, worked out for `distinct[i]`, on every row of `values` that holds that value (a
    null row stays null). `distinct` holds the non-null values of `values`, once each."""
    if values.dtype == pl.String:
        # each row's place among the distinct values, read off an Enum of them: a third of a join's work
        return results.gather(values.cast(pl.Enum(distinct)).to_physical()).alias(values.name)
    table = pl.DataFrame({"value": distinct, "result": results})
    return values.to_frame("value").join(table, on="value", how="left", maintain_order="left")["result"].alias(values.name)


def distinct_through_sql(con: duckdb.DuckDBPyConnection, values: pl.Series, table: str,
                         query: str) -> tuple[pl.Series, pl.DataFrame] | None:
    """The distinct non-null `values` and what `query` makes of them, registered as `table(value)`; None
    when every value is null. Run on a cursor of `con` of its own: its `table` is no other file's or
    thread's, and goes when the cursor closes. Called on the parsing thread, never inside a polars
    expression (which may run on a polars thread, and a connection is one thread's at a time)."""
    distinct = values.drop_nulls().unique()
    if distinct.len() == 0:
        return None
    with con.cursor() as own:
        own.register(table, distinct.to_frame("value"))
        return distinct, own.sql(query).pl()


def to_utc(col: str, zone: str = "UTC", ambiguous: str = "earliest") -> pl.Expr:
    """Parses ISO 8601 (`T` or space, optional fraction, optional `Z`/offset), a bare date, or epoch
    seconds, into naive UTC. Naive times are read in `zone`; a wall time that a DST fall-back repeats
    is read as its `ambiguous` ("earliest" or "latest") instant."""
    return by_distinct(blank_to_null(col), lambda text: utc(text, zone, ambiguous), TS)


def utc(text: pl.Expr, zone: str = "UTC", ambiguous: str = "earliest") -> pl.Expr:
    """`to_utc` of text already cleared of blanks and null spellings."""
    s = text.str.replace("T", " ", literal=True)
    epoch = pl.from_epoch(s.cast(pl.Int64, strict=False), time_unit="s")
    with_offset = (
        s.str.replace(r"Z$", "+00:00")
        .str.to_datetime("%Y-%m-%d %H:%M:%S%.f%:z", strict=False, time_unit="us")
        .dt.convert_time_zone("UTC")
        .dt.replace_time_zone(None)
    )
    naive = pl.coalesce(
        s.str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us"),
        s.str.to_datetime("%Y-%m-%d %H:%M", strict=False, time_unit="us"),
        s.str.to_datetime("%Y-%m-%d", strict=False, time_unit="us"),
    )
    if zone != "UTC":
        naive = (
            naive.dt.replace_time_zone(zone, ambiguous=ambiguous, non_existent="null")
            .dt.convert_time_zone("UTC")
            .dt.replace_time_zone(None)
        )
    return pl.coalesce(with_offset, naive, epoch.cast(pl.Datetime("us")))


# (the row fails, the reason): which rows fail is decided over the whole frame, the reason is worded
# only for those rows, from their own values
Check = tuple[pl.Expr, pl.Expr]


def cast_checks(df: pl.DataFrame, casts: dict[str, tuple[str, str]], clean: bool = False) -> list[Check]:
    """A check per raw value that was present but did not cast, reasoned `<column> '<value>' is not
    <what>`. `casts` maps typed column -> (raw column, what it should have been, e.g. "a number");
    `clean` says the raw text has no blanks or null spellings left to clear."""
    unread = unread_casts(df, casts, clean)
    return [
        (unread[typed], pl.format("{} '{}' is not {}", pl.lit(raw.removeprefix(RAW)), pl.col(raw).cast(pl.String),
                                  pl.lit(what)))
        for typed, (raw, what) in casts.items() if typed in unread
    ]


def unread_casts(df: pl.DataFrame, casts: dict[str, tuple[str, str]], clean: bool = False) -> dict[str, pl.Expr]:
    """Typed column -> the rows whose raw value was present but did not cast (`cast_checks` names them),
    for `split_by_contract`'s `unread`."""
    return {
        typed: (pl.col(raw) if clean else blank_to_null(raw)).is_not_null() & pl.col(typed).is_null()
        for typed, (raw, _) in casts.items()
        # only text can fail to cast; typed (Parquet) columns are checked by the contract instead
        if raw in df.columns and df.schema[raw] == pl.String
    }


def unread_record(contract: Contract, no_record: pl.Expr, unread: dict[str, pl.Expr]) -> dict[str, pl.Expr]:
    """`unread`, with every column of the contract unread where `no_record` (a line that is no record
    at all — not JSON, the wrong number of fields — has no value the contract could judge)."""
    columns = {*contract.columns, *unread, *(c for check in contract.row_checks for c in check.reads)}
    return {c: no_record.fill_null(False) | unread.get(c, pl.lit(False)) for c in columns}


def cast_failures(df: pl.DataFrame, casts: dict[str, tuple[str, str]]) -> pl.Expr:
    """A list[str] expression naming every raw value that was present but did not cast (see
    `cast_checks`)."""
    reasons = [pl.when(fails).then(reason) for fails, reason in cast_checks(df, casts)]
    if not reasons:
        return pl.lit([], dtype=pl.List(pl.String))
    return pl.concat_list(reasons).list.drop_nulls()


def split_by_contract(
    df: pl.DataFrame,
    contract: Contract,
    *,
    source: str,
    file: str | pl.Expr,
    staged_columns: list[str],
    raw_columns: list[str],
    row_ref: pl.Expr,
    reject_extras: dict[str, pl.Expr] | None = None,
    checks: list[Check] | None = None,
    unread: dict[str, pl.Expr] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Splits parsed rows into (staged, rejects); a reject's reason lists every check it fails, joined
    with "; ".

    `df` holds typed columns plus the raw ones and a `_errors` list of the parser's own failures, or,
    as `checks`, the parser's failures to look for (their reasons are then worded only for the rows
    that fail, which at a million rows is most of the cost saved). Every row is held to `contract`
    too, with one exception: a value the parser could not read is null in its typed column, and the
    parser's reason names it, so on a row the parser refused, the contract does not judge that column
    (it would call it empty) nor a row check that reads it. `unread` says which values those are:
    typed column -> the rows where its raw value was there but could not be read (`unread_casts`,
    `unread_record`). Without `unread`, a row the parser refused is not held to the contract at all.
    Which rows fail is one pass over the frame; the reasons are worded from the failing rows alone.
    `file` names the file, or is the column that does when the rows are of many files."""
    mismatches = contract.mismatches(df.schema)
    if mismatches:  # wrong column types: a parser bug, not bad input
        raise RuntimeError(f"{file}: parsed rows do not match {contract.name}: {'; '.join(mismatches)}")
    checks = checks or []
    contract_checks = contract.failures()
    fails = [f"_fails{i}" for i in range(len(checks))]
    breaks = [f"_breaks{j}" for j in range(len(contract_checks))]
    errors = pl.col("_errors").fill_null(pl.lit([], dtype=pl.List(pl.String))) if "_errors" in df.columns else None
    # a parser's checks are decided over the whole frame (one may compare rows); the contract's, row
    # by row, on the values the parser read
    flagged = df.with_columns(f.fill_null(False).alias(name) for name, (f, _) in zip(fails, checks))
    cast_failed = pl.any_horizontal(fails + ([errors.list.len() > 0] if errors is not None else []) or [pl.lit(False)])
    flagged = flagged.with_columns(cast_failed.alias("_cast_failed"))
    flagged = flagged.with_columns(
        (check.fails.fill_null(False) & ~(pl.col("_cast_failed") & _any_unread(unread, check.judges))).alias(name)
        for name, check in zip(breaks, contract_checks)
    )
    failing = flagged.select(pl.any_horizontal("_cast_failed", *breaks)).to_series()
    if not failing.any():  # the common case, and at telemetry volumes worth skipping the rest for
        return df.select(staged_columns), empty_rejects()
    reasons = [pl.when(pl.col(name)).then(r) for name, (_, r) in zip(fails, checks)]
    reasons += [pl.when(pl.col(name)).then(check.reason) for name, check in zip(breaks, contract_checks)]
    listed = pl.concat_list([*([errors] if errors is not None else []), *reasons])
    extras = reject_extras or {}
    rejects = flagged.filter(failing).select(
        pl.lit(source).alias("source"),
        (pl.lit(file) if isinstance(file, str) else file).alias("file"),
        row_ref.alias("row_ref"),
        # a check's reason worded from a NULL value is NULL and dropped: the row still says it failed
        pl.when(listed.list.drop_nulls().list.len() > 0)
        .then(listed.list.drop_nulls().list.unique(maintain_order=True).list.join("; "))
        .otherwise(pl.lit(f"fails the {contract.name} contract (no reason could be worded from its values)"))
        .alias("reason"),
        pl.struct([pl.col(c).alias(c.removeprefix(RAW)) for c in raw_columns if c in df.columns])
        .struct.json_encode()
        .alias("payload"),
        *[expr.alias(name) for name, expr in extras.items()],
    )
    return df.filter(~failing).select(staged_columns), rejects.select(
        [
            (pl.col(c) if c in rejects.columns else pl.lit(None)).cast(t).alias(c)
            for c, t in QUARANTINE_SCHEMA.items()
        ]
    )


def _any_unread(unread: dict[str, pl.Expr] | None, columns: tuple[str, ...]) -> pl.Expr:
    """Whether the parser could not read one of `columns` on a row (true on every row without `unread`:
    the parser cannot say, so a row it refused is spared the contract)."""
    if unread is None:
        return pl.lit(True)
    return pl.any_horizontal([unread[c].fill_null(False) for c in columns if c in unread] or [pl.lit(False)])


def read_csv_leniently(data: bytes) -> tuple[pl.DataFrame, list[tuple[int, str, str]]]:
    """Reads CSV text line by line when a strict reader has given up on it (a broken quote, bytes
    that are not UTF-8): every well-formed record becomes a row of strings (`_line` = its first line
    number), and every line that cannot be one is returned as (line number, text, reason).

    A quoted field may span lines; a record is taken to span lines only if joining them gives the
    header's number of fields. Otherwise the line alone is reported and reading resumes at the next
    line, so one broken quote costs one line, not the rest of the file."""
    text = data.decode("utf-8", errors="surrogateescape")
    lines = text.splitlines()
    if not lines:
        return pl.DataFrame(), []
    header = next(csv.reader([lines[0]]))
    width = len(header)
    records, broken = [], []
    i = 1
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        fields, used = _record_at(lines, i, width)
        if fields is None:
            reason = "not UTF-8" if _has_undecodable(line) else _shape_reason(line, width)
            broken.append((i + 1, line.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace"), reason))
            i += 1
            continue
        # a record with bytes that are not UTF-8 is still read (they become U+FFFD), so its amounts,
        # currency and dates reach the quarantine with it; `_undecodable` says where they were
        undecodable = "; ".join(undecodable_at(name, f) for name, f in zip(header, fields) if _has_undecodable(f))
        records.append([str(i + 1), *[replaced_text(f) for f in fields], undecodable or None])
        i += used
    columns = ["_line", *header, UNDECODABLE]
    frame = pl.DataFrame(records, schema={c: pl.String for c in columns}, orient="row") if records else pl.DataFrame(
        schema={c: pl.String for c in columns})
    if frame.select(pl.col(UNDECODABLE).is_null().all()).item():
        frame = frame.drop(UNDECODABLE)
    return frame.with_columns(pl.col("_line").cast(pl.Int64)), broken


def replaced_text(text: str) -> str:
    """Text decoded with surrogateescape, its undecodable bytes as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if _has_undecodable(text) else text


def undecodable_at(column: str, text: str) -> str:
    """`ResourceName is not UTF-8: byte 0xE9 at byte 3 of its value (read as U+FFFD)`."""
    at = next(i for i, ch in enumerate(text) if "\udc80" <= ch <= "\udcff")
    offset = len(text[:at].encode("utf-8", "surrogateescape"))
    return f"{column} is not UTF-8: byte 0x{ord(text[at]) - 0xDC00:02X} at byte {offset} of its value (read as U+FFFD)"


def _record_at(lines: list[str], i: int, width: int, max_span: int = 20) -> tuple[list[str] | None, int]:
    for span in range(1, min(max_span, len(lines) - i) + 1):
        try:
            rows = list(csv.reader(["\n".join(lines[i:i + span])], strict=True))
        except csv.Error:
            continue
        if len(rows) == 1 and len(rows[0]) == width:
            return rows[0], span
        if span == 1 and lines[i].count('"') % 2 == 0:
            break  # balanced quotes: the line is a whole record, of the wrong width
    return None, 1


def _shape_reason(line: str, width: int) -> str:
    if line.count('"') % 2:
        return "unbalanced quote"
    try:
        n = len(next(csv.reader([line])))
    except csv.Error as err:
        return f"not CSV: {err}"
    return f"{n} fields where the header has {width}"


def numbered_lines(data: bytes) -> tuple[list[tuple[int, str]], dict[int, int]]:
    """(line number, text) of every line of a landing file read as bytes, bytes that are not UTF-8 kept
    as surrogates (so they can be found by field and put back), and each line's byte offset in the
    file. Lines end at \\n, \\r\\n or \\r only: a Unicode line separator inside a value is text."""
    numbered, offsets, at = [], {}, 0
    for n, raw in enumerate(data.splitlines(keepends=True), start=1):
        offsets[n] = at
        at += len(raw)
        numbered.append((n, raw.rstrip(b"\r\n").decode("utf-8", errors="surrogateescape")))
    return numbered, offsets


def first_bad_byte(line: str) -> int:
    """The byte offset, within its line, of the line's first byte that is not UTF-8."""
    first = next(i for i, ch in enumerate(line) if "\udc80" <= ch <= "\udcff")
    return len(line[:first].encode("utf-8", errors="surrogateescape"))


def shown(text: str) -> str:
    """Text with its undecodable bytes as U+FFFD: what is staged, and what a quarantine payload shows."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def _has_undecodable(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def add_broken_lines(parsed: Parsed, source: str, file: str, broken: list[tuple[int, str, str]]) -> Parsed:
    """Adds the lines `read_csv_leniently` could not read to the rejects, by line number."""
    if broken:
        lines = pl.DataFrame(
            [{"source": source, "file": file, "row_ref": f"line {n}", "reason": f"unreadable CSV line: {why}",
              "payload": json.dumps({"line": text})} for n, text, why in broken],
        )
        parsed.rejects = pl.concat([parsed.rejects, lines], how="diagonal_relaxed").select(parsed.rejects.columns)
    return parsed


def json_line(line: str) -> object:
    """One JSON value from a landing line, or ValueError saying why not, in words a person can act on:
    too long, nested too deeply (Python's parser would otherwise die with RecursionError) or not JSON."""
    size = len(line.encode("utf-8", errors="surrogateescape"))
    if size > MAX_JSON_LINE_BYTES:
        raise ValueError(f"line of {size:,} bytes is longer than the {MAX_JSON_LINE_BYTES:,}-byte limit")
    try:
        return json.loads(line)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None
    except ValueError as err:
        raise ValueError(f"not JSON: {err}") from None


def clip(text: str) -> str:
    """A refused line as the quarantine payload keeps it: whole if short, else its start and its size."""
    if len(text) <= MAX_PAYLOAD_CHARS:
        return text
    return text[:MAX_PAYLOAD_CHARS] + f"… ({len(text):,} characters in all)"

"""Bill files read a slice of records at a time, as text, with only the columns a parser needs.

A month of CUR is hundreds of megabytes of CSV; reading it whole, every column, takes several times
its size in memory. A CSV (or CSV.gz) streams through polars' own reader, `CHUNK_ROWS` records at a
time; Parquet is read a batch of rows at a time. Every chunk numbers its records on from the last
(`_row`, 1-based, header excluded) and can give back the whole records of rows it was asked about
(every column), for the payload of quarantined rows.

Where polars refuses a CSV (a broken quote, bytes that are not UTF-8, a ragged line), the rest of
the file is cut here into blocks of whole records — a newline ends a record only outside quotes,
which an even count of `"` before it tells — each read by polars with the file's header in front of
it, so a block reads exactly as the same rows of the whole file would. A block polars still cannot
read is read line by line (`common.read_csv_leniently`): its bad lines are returned as (line number
in the file, text, reason) and its good records are numbered by their line (line − 1), as for a
whole file read so.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import polars as pl

from pipelines.ingest.common import UNDECODABLE, read_csv_leniently, replaced_text, undecodable_at

CHUNK_BYTES = 24 << 20  # about 30k rows of a legacy CUR; below glibc's 32 MB mmap ceiling, so blocks reuse memory
CHUNK_ROWS = 100_000  # records per chunk of a Parquet file or a streamed CSV
# Polars' streaming CSV reader buffers large slices of the file ahead of its consumer (about 500 MB of a
# 772 MB CUR, measured with polars 2.1); reading 4 MiB at a time, one ahead, it holds under 100 MB and
# reads as fast. These are polars' own settings (read when a scan starts); a user's value wins.
os.environ.setdefault("POLARS_CSV_CHUNK_SIZE", str(4 << 20))
os.environ.setdefault("POLARS_CSV_CHUNK_PREFETCH_LIMIT", "1")

Broken = tuple[int, str, str]  # a CSV line that is no record: (line number, text, reason)
Picker = Callable[[list[str]], list[str]]  # a file's header (names trimmed) -> the columns to read
Render = Callable[[pl.DataFrame], pl.DataFrame]  # Parquet columns -> text columns


def as_strings(df: pl.DataFrame) -> pl.DataFrame:
    return df.select(pl.all().cast(pl.String))


@dataclass
class Chunk:
    """Some records of a file: the picked columns as text with `_row`, and the lines of this part of
    the file that were no records."""

    frame: pl.DataFrame
    broken: list[Broken] = field(default_factory=list)
    whole: bool = True  # every column of the file is in `frame`
    records: Callable[[list[int]], pl.DataFrame] | None = None  # all columns of the given `_row`s

    def whole_records(self, rows: list[int]) -> pl.DataFrame:
        """Every column of the given rows as text, with `_row` (Int64)."""
        frame = self.frame if self.whole or self.records is None else self.records(rows)
        return frame.filter(pl.col("_row").is_in(rows)).with_columns(pl.col("_row").cast(pl.Int64))


def read_chunks(
    path: Path, pick: Picker | None = None, render: Render = as_strings, chunk_bytes: int | None = None
) -> Iterator[Chunk]:
    """The file's records, a chunk at a time (at least one chunk, possibly empty, so the header is
    always seen). Header names are trimmed of surrounding spaces."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    if path.name.lower().endswith(".parquet"):
        import pyarrow.parquet as pq

        _refuse_repeated_columns(pq.read_schema(path).names, pick)
        yield from _parquet_chunks(path, pick, render)
    else:  # a CSV, or a gzipped one: polars decompresses as it streams
        _refuse_repeated_columns(_csv_header(path), pick)
        yield from _streamed_csv(path, pick, chunk_bytes)


class RepeatedColumn(ValueError):
    """A header that names a column twice: which of the two holds the amounts cannot be known (polars
    would read the first and rename the second), so the file is refused whole, by name."""


def _refuse_repeated_columns(names: list[str], pick: Picker | None) -> None:
    """Raises RepeatedColumn for a column named twice in the header: exactly, or case-insensitively
    for a column the parser reads (`EffectiveCost` and `effectivecost`)."""
    names = [n.strip() for n in names]
    read = {n.lower() for n in (pick(names) if pick else names)}
    seen: dict[str, int] = {}
    for i, name in enumerate(names, start=1):
        key = name.lower() if name.lower() in read else name
        if key in seen:
            first = names[seen[key] - 1]
            also = "" if first == name else f" (as {first})"
            raise RepeatedColumn(f"column {name} appears twice{also} (columns {seen[key]} and {i}): "
                                 "which one holds the values cannot be known; re-export the file with each column once")
        seen[key] = i


def _csv_header(path: Path) -> list[str]:
    """The names in a CSV's (or CSV.gz's) header record, as written (no renaming of repeats)."""
    import csv

    with (gzip.open(path, "rb") if path.name.lower().endswith(".gz") else path.open("rb")) as fh:
        header, _ = _header(fh, 1 << 16)
    text = header.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return next(csv.reader([text.rstrip("\r\n")]), [])


def read_ahead(chunks: Iterator[Chunk]) -> Iterator[Chunk]:
    """The same chunks, the next one read (in a thread) while the caller works on this one: reading a
    block and parsing the last one both run mostly outside the GIL, so on two cores they overlap."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(next, chunks, None)
        while (chunk := pending.result()) is not None:
            pending = pool.submit(next, chunks, None)
            yield chunk


def _chosen(names: list[str], pick: Picker | None) -> list[str]:
    if pick is None:
        return names
    wanted = set(pick([n.strip() for n in names]))
    return [n for n in names if n.strip() in wanted] or names[:1]


def _trimmed(df: pl.DataFrame) -> pl.DataFrame:
    return df.rename({c: c.strip() for c in df.columns if c != c.strip()})


def _parquet_chunks(path: Path, pick: Picker | None, render: Render) -> Iterator[Chunk]:
    import pyarrow.parquet as pq  # here, not at the top: most landing files are CSV, and it takes 0.1 s

    file = pq.ParquetFile(path)
    names = file.schema_arrow.names
    chosen = _chosen(names, pick)
    whole = len(chosen) == len(names)

    def records(rows: list[int]) -> pl.DataFrame:
        # through pyarrow, batch by batch, so strings that are not UTF-8 are mended here too
        import pyarrow as pa

        wanted, parts, start = sorted(set(rows)), [], 1
        for batch in pq.ParquetFile(path).iter_batches(batch_size=CHUNK_ROWS):
            here = [r for r in wanted if start <= r < start + batch.num_rows]
            if here:
                found, _ = _valid_utf8(batch.take(pa.array([r - start for r in here])))
                parts.append(pl.concat([pl.DataFrame({"_row": here}, schema={"_row": pl.Int64}),
                                        render(pl.from_arrow(found))], how="horizontal"))
            start += batch.num_rows
        return _trimmed(pl.concat(parts)) if parts else _trimmed(
            pl.concat([pl.DataFrame(schema={"_row": pl.Int64}),
                       render(pl.from_arrow(file.schema_arrow.empty_table()))], how="horizontal"))

    offset = 1
    empty = True
    for batch in file.iter_batches(batch_size=CHUNK_ROWS, columns=chosen, use_threads=True):
        batch, marks = _valid_utf8(batch)
        frame = _numbered(_trimmed(render(pl.from_arrow(batch))), offset)
        if marks is not None:
            frame = frame.with_columns(pl.Series(UNDECODABLE, marks, dtype=pl.String))
        offset += frame.height
        empty = False
        yield Chunk(frame, whole=whole, records=records)
    if empty:
        schema = pl.read_parquet_schema(path)
        frame = render(pl.DataFrame(schema={c: schema[c] for c in chosen}))
        yield Chunk(_numbered(_trimmed(frame), 1), whole=whole, records=records)


def _valid_utf8(batch):
    """A Parquet batch with the bytes of its strings that are not UTF-8 (the format says they must
    be; a broken writer can still store them, and polars would crash on them) as U+FFFD, and per
    row where they were (None when every string was UTF-8)."""
    import pyarrow as pa

    marks: list[str | None] | None = None
    columns = list(batch.columns)
    for i, column in enumerate(columns):
        if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
            continue
        try:
            column.validate(full=True)
            continue
        except pa.ArrowInvalid:
            pass
        raw = column.cast(pa.large_binary()).to_pylist()
        texts = [None if b is None else b.decode("utf-8", "surrogateescape") for b in raw]
        marks = marks or [None] * len(texts)
        name = batch.schema.names[i].strip()
        for row, text in enumerate(texts):
            if text is not None and text != (fixed := replaced_text(text)):
                why = undecodable_at(name, text)
                marks[row] = why if marks[row] is None else f"{marks[row]}; {why}"
                texts[row] = fixed
        columns[i] = pa.array(texts, type=column.type)
    if marks is None:
        return batch, None
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema), marks


def _streamed_csv(path: Path, pick: Picker | None, chunk_bytes: int) -> Iterator[Chunk]:
    """A CSV (plain or gzipped) through polars' streaming reader, `CHUNK_ROWS` records at a time: it finds record
    ends and parses in its own threads, several times faster than cutting blocks here. Polars reads
    the file as `pl.read_csv` does (quotes, CRLF, BOM, short rows) and fails where it fails; from a
    failure on, the file is read block by block (`_csv_chunks`), its records already yielded left
    out, so a broken line costs only itself, as it does there."""
    yielded = 0
    try:
        scan = _scan(path)
        names = scan.collect_schema().names()
        chosen = _chosen(names, pick)
        whole = len(chosen) == len(names)
        batches = scan.select(chosen).collect_batches(chunk_size=CHUNK_ROWS)
        for batch in batches:
            frame = _numbered(_trimmed(batch), yielded + 1)
            yielded += frame.height
            yield Chunk(frame, whole=whole, records=partial(_records_of, path, yielded + 1 - frame.height,
                                                            frame.height))
        if yielded == 0:
            yield Chunk(_numbered(_trimmed(pl.DataFrame(schema={c: pl.String for c in chosen})), 1), whole=whole)
        return
    except Exception:  # anything polars refuses: from here on, block by block
        pass
    with (gzip.open(path, "rb") if path.name.lower().endswith(".gz") else path.open("rb")) as fh:
        yield from _skipping(_csv_chunks(fh, pick, chunk_bytes), yielded)


def _scan(path: Path) -> pl.LazyFrame:
    """The file as polars reads a CSV here: every value text, UTF-8, the path taken as it is (no glob)."""
    return pl.scan_csv(path, infer_schema=False, encoding="utf8", glob=False)


def _records_of(path: Path, first: int, count: int, rows: list[int]) -> pl.DataFrame:
    """Every column of the `count` records from row `first` on (polars finds them without parsing
    the records before them)."""
    return _numbered(_trimmed(_scan(path).slice(first - 1, count).collect()), first)


def _skipping(chunks: Iterator[Chunk], done: int) -> Iterator[Chunk]:
    """`chunks` without their first `done` records (and the broken lines among them): those the
    streaming reader yielded before it failed."""
    for chunk in chunks:
        take = min(done, chunk.frame.height)
        if take == 0:
            yield chunk
            continue
        # a block read line by line numbers a record by its line (line − 1)
        last_line = chunk.frame["_row"][take - 1] + 1
        broken = [b for b in chunk.broken if b[0] > last_line]
        done -= take
        if chunk.frame.height > take or broken:
            yield Chunk(chunk.frame.slice(take), broken=broken, whole=chunk.whole, records=chunk.records)


def _csv_chunks(fh, pick: Picker | None, chunk_bytes: int) -> Iterator[Chunk]:
    header, rest = _header(fh, chunk_bytes)
    try:
        names = pl.read_csv(header, n_rows=0, infer_schema=False, encoding="utf8").columns
    except Exception:  # a header polars cannot read: the whole file line by line, every column
        yield _lenient(header + rest + fh.read(), pick=None, first_line=1)
        return
    chosen = _chosen(names, pick)
    whole = len(chosen) == len(names)
    offset = 1
    yielded = False
    for data, start in _record_blocks(fh, header, rest, chunk_bytes):
        try:
            frame = _trimmed(pl.read_csv(data, columns=chosen, infer_schema=False, encoding="utf8"))
        except Exception:  # a broken quote, bytes that are not UTF-8: this block line by line
            chunk = _lenient(data, pick, _line_at(fh, start) - 1)
            offset += chunk.frame.height
            yielded = True
            yield chunk
            continue
        frame = _numbered(frame, offset)
        offset += frame.height

        def records(rows: list[int], data: bytes = data, start: int = offset - frame.height) -> pl.DataFrame:
            return _numbered(_trimmed(pl.read_csv(data, infer_schema=False, encoding="utf8")), start)

        yielded = True
        yield Chunk(frame, whole=whole, records=records)
        del data, frame  # let the block go before the next is read
    if not yielded:
        frame = _trimmed(pl.read_csv(header, columns=chosen, infer_schema=False, encoding="utf8"))
        yield Chunk(_numbered(frame, 1), whole=whole)


def _lenient(data: bytes, pick: Picker | None, first_line: int) -> Chunk:
    """A block (header first) read line by line; `first_line` is the file line of the block's header
    line (1 for the file's own header), so line numbers are the file's. Records that held bytes that
    are not UTF-8 are read with U+FFFD for them and say where in `UNDECODABLE`."""
    full, broken = read_csv_leniently(data)
    shift = first_line - 1
    full = _trimmed(full)
    if full.width:
        # the header is line 1, so a one-line record's data row is its line number − 1
        full = full.with_columns((pl.col("_line") + shift - 1).cast(pl.Int64).alias("_row")).drop("_line")
    names = [c for c in full.columns if c not in ("_row", UNDECODABLE)]
    kept = [UNDECODABLE] if UNDECODABLE in full.columns else []
    frame = full.select("_row", *_chosen(names, pick), *kept) if names else full
    return Chunk(frame, broken=[(line + shift, text, reason) for line, text, reason in broken],
                 whole=frame.width == full.width, records=lambda rows: full)


def _numbered(frame: pl.DataFrame, first: int) -> pl.DataFrame:
    """`_row` (Int64) first: the records' 1-based row numbers in the file, header excluded."""
    return frame.with_row_index("_row", offset=first).with_columns(pl.col("_row").cast(pl.Int64))


def _header(fh, chunk_bytes: int) -> tuple[bytes, bytes]:
    """(the header record with its newline, the bytes read after it)."""
    data = b""
    while True:
        block = fh.read(chunk_bytes)
        data += block
        end = _first_record_end(data)
        if end > 0 or not block:
            end = end if end > 0 else len(data)
            return data[:end], data[end:]


def _record_blocks(fh, header: bytes, rest: bytes, chunk_bytes: int) -> Iterator[tuple[bytes, int]]:
    """(the header followed by about `chunk_bytes` of whole records, the file offset of the first of
    those records). Each block is copied once: header, the records carried over from the last read,
    and this read up to its last record end."""
    start = len(header)  # file offset of the first record in `carry`
    carry = rest
    while True:
        block = fh.read(chunk_bytes)
        if not block:
            if carry.strip():
                yield header + carry, start
            return
        end = _last_record_end(block, carry.count(b'"') % 2)
        if end < 0:  # no record ends in it yet (a long quoted field): read on
            carry += block
            continue
        data = b"".join((header, carry, memoryview(block)[:end]))
        size = len(carry) + end
        carry = block[end:]
        del block
        yield data, start
        start += size


def _line_at(fh, offset: int) -> int:
    """The 1-based line of the file that the byte at `offset` starts, counting the newlines before it
    (asked only for a block that has to be read line by line, so line numbers are not counted for
    every block of every file)."""
    here = fh.tell()
    fh.seek(0)
    line, left = 1, offset
    while left > 0 and (part := fh.read(min(left, 1 << 24))):
        line += part.count(b"\n")
        left -= len(part)
    fh.seek(here)
    return line


def _first_record_end(data: bytes) -> int:
    """The index just after the first newline outside quotes, or -1."""
    start, quotes = 0, 0
    while True:
        newline = data.find(b"\n", start)
        if newline < 0:
            return -1
        quotes += data.count(b'"', start, newline)
        if quotes % 2 == 0:
            return newline + 1
        start = newline + 1


def _last_record_end(data: bytes, open_quotes: int = 0) -> int:
    """The index just after the last newline outside quotes, or -1; `open_quotes` is the parity of
    the quotes before `data` since the last record end."""
    total = data.count(b'"') + open_quotes
    end, after = len(data), 0
    while True:
        newline = data.rfind(b"\n", 0, end)
        if newline < 0:
            return -1
        after += data.count(b'"', newline, end)
        if (total - after) % 2 == 0:
            return newline + 1
        end = newline

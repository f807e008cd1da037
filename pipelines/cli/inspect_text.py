"""`gpuledger inspect`'s report for a person at an 80-column terminal, and `--strict`'s verdict.

Summary first: one line of counts, a table per source (files, rows, quarantined rows, files
unreadable), the bills' money per currency (to the cent: `--json` has the exact sums), a line or two
of totals and coverage per source; then what needs a look — quarantined rows by reason, each reason
on its own line, files refused whole among them. What is routine is counted, not listed: a month-to-date export repeats every
earlier delivery, so superseded deliveries and byte-identical copies are one line, and `--verbose`
lists them (and every reason, beyond the first few).
"""

from __future__ import annotations

import textwrap
from collections import Counter
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

from pipelines.cli.console import print_table
from pipelines.cli.inspect import MAX_REASONS
from pipelines.ingest.sources import ALL

WIDTH = 80
# reasons listed without --verbose (the JSON keeps MAX_REASONS per source)
SHOWN_REASONS = 5
# the JSON's keys that are no per-source entry
NOT_SOURCES = ("ignored_files", "costing")


def sources(report: dict) -> dict[str, dict]:
    """The report's per-source entries."""
    return {name: entry for name, entry in report.items() if name not in NOT_SOURCES}


def print_report(report: dict, landing: Path, verbose: bool = False) -> None:
    entries = sources(report)
    if not entries:
        print(f"no landing files found under {landing}")
        return
    print(_headline(landing, entries))
    print()
    print_table(_per_source(entries), width=WIDTH)
    money = _money(entries)
    if money.height:
        print("\nbill money, current deliveries, quarantined rows left out (--json: exact):")
        print_table(money, width=WIDTH)
    print()
    for name, entry in entries.items():
        for line in _facts(name, entry, verbose):
            print(line)
    _print_quarantine(entries, verbose)
    if "costing" in report:
        _print_costing(report["costing"])


def strict_problem(report: dict) -> str | None:
    """Why `inspect --strict` fails, in one sentence naming the first file, or None: any quarantined
    row, any file refused whole (unreadable, empty, not the format)."""
    entries = sources(report).values()
    rows = sum(e["quarantined"] for e in entries)
    unreadable = [f for e in entries for f in e.get("unreadable_files", [])]
    if not rows and not unreadable:
        return None
    if unreadable:
        first = unreadable[0]
    else:
        reason = next(r for e in entries for r in e["reasons"])
        first = f"{reason['file']} {reason['first_row']}"
    counts = [_count(rows, "row") + " quarantined"] + ([_count(len(unreadable), "file") + " unreadable"]
                                                        if unreadable else [])
    return f"inspect --strict: {' and '.join(counts)} (first: {first})"


def _headline(landing: Path, entries: dict[str, dict]) -> str:
    files = sum(e["files"] for e in entries.values())
    rows = sum(e["rows"] for e in entries.values())
    quarantined = sum(e["quarantined"] for e in entries.values())
    unreadable = sum(len(e.get("unreadable_files", [])) for e in entries.values())
    problems = " and ".join([f"{_count(quarantined, 'row')} quarantined"] * bool(quarantined)
                            + [f"{_count(unreadable, 'file')} unreadable"] * bool(unreadable)) or "nothing quarantined"
    return "\n".join(_wrap(f"{_count(files, 'file')}, {_count(rows, 'row')}; {problems}, in {landing}"))


def _per_source(entries: dict[str, dict]) -> pl.DataFrame:
    rows = [{"source": name, "files": entry["files"], "rows": entry["rows"], "quarantined": entry["quarantined"],
             "unreadable": len(entry.get("unreadable_files", []))} for name, entry in entries.items()]
    return pl.DataFrame(rows, schema={"source": pl.String, "files": pl.Int64, "rows": pl.Int64,
                                      "quarantined": pl.Int64, "unreadable": pl.Int64})


def _coverage(entry: dict) -> str | None:
    """The days a source covers (bills: their charge periods, whose end is exclusive)."""
    first, last = entry.get("first_charge") or entry.get("first_ts"), entry.get("last_charge") or entry.get("last_ts")
    if first is None or last is None:
        return None
    end = datetime.fromisoformat(last)
    if "last_charge" in entry:
        end -= timedelta(microseconds=1)
    what = "charges of" if "last_charge" in entry else "days"
    return f"{what} {first[:10]} to {end.date().isoformat()}"


def _money(entries: dict[str, dict]) -> pl.DataFrame:
    """Per bill source and currency, never added across currencies."""
    rows = []
    for name, entry in entries.items():
        if "currencies" not in entry:
            continue
        by_currency = entry.get("by_currency") or {c: entry for c in entry["currencies"]}
        for currency, money in by_currency.items():
            rows.append({"source": name, "currency": currency, "effective_cost": Decimal(money["effective_cost"]),
                         "billed_cost": Decimal(money["billed_cost"])})
    return pl.DataFrame(rows, schema={"source": pl.String, "currency": pl.String,
                                      "effective_cost": pl.Decimal(38, 18), "billed_cost": pl.Decimal(38, 18)})


def _facts(name: str, entry: dict, verbose: bool) -> list[str]:
    """A source's totals, and its deliveries: counted, listed only with --verbose."""
    source = next((s for s in ALL if s.name == name), None)
    said = [source.summary.says(entry)] if source and source.summary else []
    if (covers := _coverage(entry)) is not None:
        said.append(covers)
    if formats := entry.get("formats"):   # a source of several formats: how many files each
        counts = Counter(formats.values())
        said.append("read as: " + ", ".join(f"{what} {_count(counts[what], 'file')}" for what in sorted(counts)))
    for currency, rows in entry.get("default_currency_rows", {}).items():
        said.append(f"{_count(rows, 'row')} without a currency took default_currency {currency}")
    for what, n in entry.get("dropped", {}).items():
        said.append(f"{_count(n, 'row')} dropped: {what.replace('_', ' ')}")
    deliveries = entry.get("deliveries")
    if deliveries and (deliveries["manifests"] or deliveries["superseded"] or deliveries["duplicate"]):
        said.append(f"{_count(deliveries['current'], 'current delivery', 'current deliveries')}, "
                    f"{_count(deliveries['manifests'], 'manifest')}")
        routine = [(deliveries["superseded"], "superseded by later ones"),
                   (deliveries["duplicate"], "byte-identical copies of others, counted once")]
        for n, what in routine:
            if n:
                said.append(f"{_count(n, 'delivery', 'deliveries')} {what}" + ("" if verbose else " (--verbose lists them)"))
    for manifest, keys in entry.get("missing_from_manifests", {}).items():
        said.append(f"{_count(len(keys), 'file')} that {manifest} names not landed, e.g. {keys[0]}")
    lines = []
    for i, text in enumerate(said):
        lines += _wrap(text, first=f"{(name + ' ') if i == 0 else '':<11}", rest=" " * 13)  # a long name keeps a space
    if verbose:  # grouped by what set them aside: a manifest, a later file, the file copied (paths stay whole)
        groups: dict[tuple[str, str], list[str]] = {}
        for f in entry.get("set_aside", []):
            if f["status"] in ("superseded", "duplicate"):
                groups.setdefault((f["status"], f.get("by") or ""), []).append(f["file"])
        for (status, by), files in groups.items():
            lines.append(f"  {status} by {by}:" if by else f"  {status}:")
            lines += [f"    {file}" for file in files]
    return lines


def _print_quarantine(entries: dict[str, dict], verbose: bool) -> None:
    """Each reason group: its rows and first file and row, then every reason of it on a line."""
    groups = [(name, r) for name, entry in entries.items() for r in entry["reasons"]]
    if not groups:
        return
    print("\nquarantined, by reason (rows, the first file and row):")
    shown = groups if verbose else groups[:SHOWN_REASONS]
    for name, r in shown:
        where = r["file"] if r["first_row"] == "file" else f"{r['file']} {r['first_row']}"
        print("\n".join(_wrap(f"{name} {_count(r['rows'], 'row')}, first {where}", first="  ", rest="      ")))
        # a row's reasons are joined with "; ", one a line here; a file's one reason may hold "; " itself
        for reason in [r["reason"]] if r["first_row"] == "file" else r["reason"].split("; "):
            print("\n".join(_wrap(reason, first="    ", rest="      ")))
    if len(shown) < len(groups):
        print(f"  … {len(groups) - len(shown)} more (--verbose lists them)")
    capped = [name for name, entry in entries.items() if entry["quarantined"] > sum(r["rows"] for r in entry["reasons"])]
    if capped:
        print(f"  ({', '.join(capped)}: only the {MAX_REASONS} most common reasons are kept)")


def _print_costing(costing: dict) -> None:
    """Which source costs which node (bill, rate_card, contract, owned, none), per pool."""
    print()
    print("\n".join(_wrap(f"costing: which source costs each inventory node, as of {costing['as_of']} "
                          "(the bill wins)", rest="  ")))
    for pool, counts in costing["by_pool"].items():
        entries = sorted({n.get("entry", "") for n in costing["nodes"] if (n["pool"] or "(no pool)") == pool} - {""})
        line = f"{pool:<20} " + ", ".join(f"{n} {source}" for source, n in counts.items())
        print("\n".join(_wrap(line + (f"  ({', '.join(entries)})" if entries else ""), first="  ", rest=" " * 23)))


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    """Lines of at most WIDTH characters; a word longer than that (a path) stays whole on its own line."""
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]

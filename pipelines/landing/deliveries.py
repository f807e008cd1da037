"""The delivery rule: which of a bill source's landed files are the bill, and which an exporter has
since re-delivered. Sync, `inspect` and the restatement sensor all decide through `decide` here.

Per bill source, in order: byte-identical copies count once (`duplicate`); a manifest (`reportKeys` of
a legacy CUR, `dataFiles` of AWS Data Exports) governs its billing-period folder, its newest complete
delivery is current and every other file there is `superseded`; any other file is superseded by a file
that covers it (its billing accounts and periods, its span of charge starts, and its lines, known by a
sample of 256 line-key hashes); a file that cannot be read is `unreadable` and supersedes nothing. How
exporters re-deliver, and the rule in full: docs/landing.md#deliveries."""

from __future__ import annotations

import calendar
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import polars as pl

CURRENT, SUPERSEDED, DUPLICATE, UNREADABLE = "current", "superseded", "duplicate", "unreadable"


@dataclass(frozen=True)
class BillFile:
    """What the rule needs to know of one landed bill file."""

    rel: str                          # path relative to the landing root
    sha256: str
    modified: datetime                # modification time, naive UTC
    readable: bool
    scopes: frozenset[str] = frozenset()   # '<BillingAccountId>|<billing period start, ISO day>'
    first_charge: datetime | None = None   # first and last ChargePeriodStart of its lines
    last_charge: datetime | None = None
    sample: tuple[int, ...] = ()           # the smallest hashes of its line keys, ascending (at most 256)


@dataclass(frozen=True)
class Manifest:
    rel: str
    modified: datetime
    delivery_id: str                  # assemblyId (legacy CUR) or executionId (Data Exports)
    keys: tuple[str, ...]             # reportKeys / dataFiles as written
    period: tuple[date, date] | None  # billing period, [start, end)
    folder: str                       # the billing-period folder its location says it governs


@dataclass(frozen=True)
class Decision:
    status: str
    superseded_by: str | None = None  # the file or manifest that supersedes it; for a duplicate, its original
    reason: str = ""


@dataclass
class Resolution:
    decisions: dict[str, Decision]
    periods: dict[str, tuple[date, date]] = field(default_factory=dict)  # file -> period of the manifest naming it
    missing: dict[str, list[str]] = field(default_factory=dict)          # newest manifest -> keys naming no file
    groups: dict[str, str] = field(default_factory=dict)  # file or manifest -> the delivery group deciding it


# --- facts ---------------------------------------------------------------------------------------

def bill_file(rel: str, sha256: str, modified: datetime, rows: pl.DataFrame, readable: bool,
              sample: tuple[int, ...] = ()) -> BillFile:
    """The coverage of a parsed file's staged rows (FOCUS columns, as staged) and its line-key sample."""
    if not readable or rows.height == 0:
        return BillFile(rel, sha256, modified, readable)
    start = pl.col("charge_period_start")
    facts = rows.select(
        pl.concat_str(
            pl.col("billing_account_id").fill_null(""),
            pl.coalesce(pl.col("billing_period_start"), start.dt.truncate("1mo")).dt.date().cast(pl.String),
            separator="|",
        ).unique().alias("scopes").implode(),
        start.min().alias("first"),
        start.max().alias("last"),
    ).row(0, named=True)
    return BillFile(rel, sha256, modified, True, frozenset(facts["scopes"]), facts["first"], facts["last"], sample)


# --- manifests -----------------------------------------------------------------------------------

def find_manifests(root: Path, folder: str) -> tuple[list[Manifest], dict[str, str], list[str]]:
    """The delivery manifests under `root/folder`, those that could not be read (path -> why), and JSON
    files named like a manifest that are no delivery manifest (e.g. a Redshift manifest)."""
    manifests, unreadable, others = [], {}, []
    base = root / folder
    if not base.is_dir():
        return manifests, unreadable, others
    for path in sorted(base.rglob("*")):
        if not path.is_file() or not path.name.lower().endswith("manifest.json") or _hidden(path, root):
            continue
        rel = path.relative_to(root).as_posix()
        try:
            manifest = read_manifest(path, rel)
        except (ValueError, OSError, UnicodeDecodeError) as err:
            unreadable[rel] = f"unreadable manifest: {err}"
            continue
        if manifest is None:
            others.append(rel)
        else:
            manifests.append(manifest)
    return manifests, unreadable, others


def read_manifest(path: Path, rel: str) -> Manifest | None:
    """A legacy CUR or Data Exports manifest; None for JSON of another shape. Raises ValueError when the
    text is not a manifest that can be read."""
    body = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(body, dict):
        raise ValueError("not a JSON object")
    if "reportKeys" in body:
        keys, delivery_id = body["reportKeys"], body.get("assemblyId")
    elif "dataFiles" in body:
        keys, delivery_id = body["dataFiles"], body.get("executionId")
    else:
        return None
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ValueError("reportKeys / dataFiles is not a list of keys")
    delivery_id = str(delivery_id or "")
    here = rel.rsplit("/", 1)[0]
    return Manifest(rel, modified_time(path), delivery_id, tuple(keys), _exclusive(body.get("billingPeriod"), rel),
                    _governed_folder(here, delivery_id))


def _exclusive(raw, rel: str) -> tuple[date, date] | None:
    """The billing period as [start, end): the manifest's own, else the one its path names."""
    period = _period(raw)
    if period:
        return period
    days = days_from_name(rel)
    return (days[0], days[1] + timedelta(days=1)) if days else None


def _period(raw) -> tuple[date, date] | None:
    if isinstance(raw, dict):
        start, end = _day(raw.get("start")), _day(raw.get("end"))
        if start and end and end > start:
            return start, end
        return None
    if isinstance(raw, str) and re.fullmatch(r"\d{4}-\d{2}", raw.strip()):
        first = date(int(raw[:4]), int(raw[5:7]), 1)
        return first, _next_month(first)
    return None


def _day(text) -> date | None:
    """`20261101T000000.000Z`, ISO 8601 with or without time and zone, or `YYYYMMDD`."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})(?:T.*)?", text)
    try:
        if m:
            return date(int(m[1]), int(m[2]), int(m[3]))
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def _governed_folder(here: str, delivery_id: str) -> str:
    parts = here.split("/")
    if delivery_id and parts[-1] == delivery_id:
        return "/".join(parts[:-1])
    if "metadata" in parts:
        i = len(parts) - 1 - parts[::-1].index("metadata")
        return "/".join(parts[:i] + ["data"] + parts[i + 1:])
    return here


def names(key: str, rel_below_folder: str) -> bool:
    """Whether a manifest key (an S3 key, or an s3:// URI) names the file at this path below the source's
    folder: either ends with the other at a `/`."""
    key = key.strip().removeprefix("s3://").lstrip("/")
    return (key == rel_below_folder or key.endswith("/" + rel_below_folder)
            or rel_below_folder.endswith("/" + key))


# --- the decision --------------------------------------------------------------------------------

def decide(files: list[BillFile], manifests: list[Manifest], folder: str) -> Resolution:
    """Every file's status under the rule in this module's docstring. `folder` is the source's folder
    under the landing root (e.g. `bills/aws_cur`)."""
    by_rel = {f.rel: f for f in files}
    named_by_manifest, governed, periods, missing, groups = _apply_manifests(files, manifests, folder)

    decisions: dict[str, Decision] = {}
    candidates: list[BillFile] = []          # canonical files the coverage rule decides between
    delivery_of: dict[str, str] = {}         # manifest-current file -> its delivery, whose parts never compete
    contents: dict[str, list[BillFile]] = defaultdict(list)
    for f in files:
        contents[f.sha256].append(f)
    for members in contents.values():
        members.sort(key=lambda f: f.rel)
        named = [f for f in members if f.rel in named_by_manifest]
        canonical = named[0] if named else members[0]
        for f in members:
            if f is not canonical:
                decisions[f.rel] = Decision(DUPLICATE, canonical.rel, f"byte-identical to {canonical.rel}")
        if named:
            delivery_of[canonical.rel] = named_by_manifest[canonical.rel]
        else:
            ruling = next((governed[f.rel] for f in members if f.rel in governed), None)
            if ruling is not None:
                decisions[canonical.rel] = Decision(SUPERSEDED, ruling.rel, _not_named(ruling))
                continue
        if not canonical.readable:
            decisions[canonical.rel] = Decision(UNREADABLE)
        elif canonical.scopes:
            candidates.append(canonical)
        else:
            decisions[canonical.rel] = Decision(CURRENT)  # nothing in it could count twice

    decisions.update(_coverage(candidates, delivery_of))
    assert decisions.keys() == by_rel.keys()
    return Resolution(decisions, periods, missing, groups)


def _apply_manifests(files: list[BillFile], manifests: list[Manifest], folder: str):
    """(file -> the newest delivery naming it, file -> the newest manifest of a group governing it
    without naming it, file -> billing period of the manifest naming it, newest manifest -> keys naming
    no file, file or manifest -> its group)."""
    below = {f.rel: f.rel[len(folder) + 1:] if f.rel.startswith(folder + "/") else f.rel for f in files}
    by_name: dict[str, list[str]] = defaultdict(list)
    for rel, short in below.items():
        by_name[short.rsplit("/", 1)[-1]].append(rel)

    def named_files(m: Manifest) -> list[str]:
        out = []
        for key in m.keys:
            hits = [rel for rel in by_name.get(key.rsplit("/", 1)[-1], []) if names(key, below[rel])]
            out.extend(hits)
        return out

    def _gaps(m: Manifest) -> list[str]:
        return [k for k in m.keys if not any(names(k, below[rel]) for rel in by_name.get(k.rsplit("/", 1)[-1], []))]

    groups: dict[tuple[str, date | None], list[Manifest]] = defaultdict(list)
    for m in manifests:
        groups[(m.folder, m.period[0] if m.period else None)].append(m)

    named_current: dict[str, str] = {}
    governed: dict[str, Manifest] = {}
    periods: dict[str, tuple[date, date]] = {}
    missing: dict[str, list[str]] = {}
    group_of: dict[str, str] = {}
    for (place, start), members in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        token = f"{place}|{start}"
        group_of.update({m.rel: token for m in members})
        # The newest delivery all of whose files have landed wins; a newer one still arriving is reported.
        gaps = {m.rel: _gaps(m) for m in members}
        ordered = sorted(members, key=lambda m: (m.modified, m.rel), reverse=True)
        newest = next((m for m in ordered if not gaps[m.rel]), ordered[0])
        for m in ordered[: ordered.index(newest) + 1]:
            if gaps[m.rel]:
                missing[m.rel] = gaps[m.rel]
        current = [m for m in members if m.delivery_id == newest.delivery_id] if newest.delivery_id else [newest]
        folders = {place}
        in_group: set[str] = set()
        for m in members:
            hits = named_files(m)
            in_group.update(hits)
            for rel in hits:
                parent = rel.rsplit("/", 1)[0]
                folders.add(parent.rsplit("/", 1)[0] if m.delivery_id and parent.endswith("/" + m.delivery_id) else parent)
        current_hits = {rel for m in current for rel in named_files(m)}
        for f in files:
            if f.rel in current_hits:
                named_current[f.rel] = f"{token}|{newest.delivery_id}"
                group_of[f.rel] = token
                if newest.period:
                    periods[f.rel] = newest.period
            elif f.rel in in_group or (any(f.rel.startswith(d + "/") for d in folders) and _of_period(f, start)):
                governed.setdefault(f.rel, newest)
                group_of.setdefault(f.rel, token)
    for rel in named_current:
        governed.pop(rel, None)
    return named_current, governed, periods, missing, group_of


def _of_period(f: BillFile, start: date | None) -> bool:
    """A file under a governed folder belongs to the manifest's billing period unless its lines say otherwise."""
    if start is None or not f.readable or not f.scopes:
        return True
    return any(s.endswith("|" + start.isoformat()) for s in f.scopes)


def _not_named(m: Manifest) -> str:
    what = f" (delivery {m.delivery_id})" if m.delivery_id else ""
    return f"not named by the newest complete manifest {m.rel}{what}"


SAMPLE_SIZE = 256


def _covers(g: BillFile, f: BillFile) -> bool:
    return (g.scopes >= f.scopes and g.first_charge <= f.first_charge and g.last_charge >= f.last_charge
            and _repeats(g.sample, f.sample))


def _repeats(g: tuple[int, ...], f: tuple[int, ...]) -> bool:
    """Whether the file sampled by `g` holds every line of the one sampled by `f`, as far as the samples
    can tell: every hash of f's at or below g's largest (all of f's when g's sample is all of g) is g's."""
    if not f or not g:
        return False
    checked = f if len(g) < SAMPLE_SIZE else [h for h in f if h <= g[-1]]
    return bool(checked) and set(checked) <= set(g)


def _rank(f: BillFile) -> tuple:
    return (f.last_charge - f.first_charge, len(f.scopes), f.modified, f.rel)


def _coverage(candidates: list[BillFile], delivery_of: dict[str, str]) -> dict[str, Decision]:
    """Current, or superseded by the current file at the end of the chain of files covering it. Higher
    ranks are decided first, so whatever covers a file is decided before it."""
    holding: dict[str, list[BillFile]] = defaultdict(list)
    for g in candidates:
        for scope in g.scopes:
            holding[scope].append(g)
    out: dict[str, Decision] = {}
    for f in sorted(candidates, key=_rank, reverse=True):
        rank = _rank(f)
        over = [g for g in holding[min(f.scopes)]
                if _rank(g) > rank and not _same_delivery(g, f, delivery_of) and _covers(g, f)]
        if not over:
            out[f.rel] = Decision(CURRENT)
            continue
        g = max(over, key=_rank)
        top = out[g.rel].superseded_by or g.rel
        out[f.rel] = Decision(SUPERSEDED, top, (
            f"{g.rel} repeats its lines (billing accounts and periods, charges starting {_short(f.first_charge)} "
            f"to {_short(f.last_charge)})"))
    return out


def _same_delivery(g: BillFile, f: BillFile, delivery_of: dict[str, str]) -> bool:
    return g.rel in delivery_of and delivery_of.get(g.rel) == delivery_of.get(f.rel)


def _short(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M")


# --- days from a name ----------------------------------------------------------------------------

RANGE = re.compile(r"(?<![0-9A-Za-z])(\d{8})-(\d{8})(?![0-9A-Za-z])")
BILLING_PERIOD = re.compile(r"(?i)(?:^|/)BILLING_PERIOD=(\d{4})-(\d{2})(?:/|$)")
ISO_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
BASIC_DAY = re.compile(r"(?<![0-9A-Za-z])(\d{4})(\d{2})(\d{2})(?![0-9A-Za-z])")


def days_from_name(rel: str) -> tuple[date, date] | None:
    """First and last day a file's path says it covers: a CUR billing-period folder `YYYYMMDD-YYYYMMDD`
    (end exclusive), else a Data Exports `BILLING_PERIOD=YYYY-MM` folder, else the dates `YYYY-MM-DD`
    or `YYYYMMDD` in it (from the first to the last). None when it names none."""
    for m in RANGE.finditer(rel):
        a, b = _basic(m[1]), _basic(m[2])
        if a and b and b > a:
            return a, b - timedelta(days=1)
    m = BILLING_PERIOD.search(rel)
    if m and 1 <= int(m[2]) <= 12:
        first = date(int(m[1]), int(m[2]), 1)
        return first, _next_month(first) - timedelta(days=1)
    found = [d for d in (_iso(m) for m in ISO_DAY.finditer(rel)) if d]
    found += [d for d in (_basic(m[0]) for m in BASIC_DAY.finditer(rel)) if d]
    return (min(found), max(found)) if found else None


def _iso(m: re.Match) -> date | None:
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def _basic(text: str) -> date | None:
    try:
        return date(int(text[:4]), int(text[4:6]), int(text[6:8]))
    except ValueError:
        return None


def _next_month(first: date) -> date:
    return first + timedelta(days=calendar.monthrange(first.year, first.month)[1])


def modified_time(path: Path) -> datetime:
    """A file's modification time, naive UTC: deliveries are ordered by it."""
    return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).replace(tzinfo=None)


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)

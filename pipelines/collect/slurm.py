"""`gpuledger collect slurm`: sacct → `<landing>/scheduler/slurm/<cluster>/sacct-YYYY-MM-DD.psv`, one file
per UTC day, with a watermark per cluster (docs/collect.md).

Each collect asks sacct again for every day from (watermark − look-back) to now, and replaces each day's
file whole: a file always holds every job and step that was in any state during its day, as sacct
knows them at the collect. A re-collect is therefore a re-delivery of the same file (the landing sync
replaces what the file gave), and a job seen in several days' files is one job in the ledger, which
keeps its latest record (docs/ingest/slurm.md). The watermark moves only after every file of the
window is in place, so a collect killed half-way is simply done again.

sacct is run without a shell, its arguments bound: the configured `collect.slurm.sacct` words (a
launcher such as `ssh login-node`, then the sacct program), with `env TZ=UTC SLURM_TIME_FORMAT=%s`
put before the program so the window is read in UTC and times come back as epoch seconds, on
whichever host sacct runs.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import polars as pl

from pipelines.ingest.slurm import SENTINELS, read_sacct
from pipelines.lib.atomic import remove_stale_temps, replace_atomically
from pipelines.lib.config import ClusterConfig
from pipelines.lib.config.section import CLUSTER_NAME
from pipelines.lib.config.collect import CollectSlurmConfig

# Every column the ledger reads (docs/ingest/slurm.md), in the order the docs' example export has them.
FIELDS = ("JobIDRaw", "JobID", "JobName", "User", "Account", "Partition", "State", "ExitCode", "Submit",
          "Start", "End", "AllocTRES", "NodeList", "Comment", "Restarts", "QOS")
# asked for only when this sacct has them (`sacct --helpformat`): Restarts came with Slurm 23.02
OPTIONAL_FIELDS = frozenset({"Restarts"})
STATE_FILE = ".collect-state.json"
LOCK_FILE = ".collect.lock"
TIME_FIELDS = ("Submit", "Start", "End")


class CollectError(RuntimeError):
    """sacct failed or printed something the ledger could not read; nothing after it was written."""


@dataclass(frozen=True)
class DayFile:
    day: date
    name: str
    jobs: int
    steps: int
    written: bool          # False: the file already held exactly this


@dataclass
class CollectResult:
    cluster: str
    command: list[str]                 # the argv of the first day's call (the others differ in -S/-E)
    window_start: datetime
    window_end: datetime
    previous_watermark: datetime | None
    files: list[DayFile] = field(default_factory=list)
    jobs: int = 0                      # distinct allocations over the window (requeued instances apart)
    steps: int = 0
    seconds: float = 0.0


def cluster_folder(landing: Path, cluster: str) -> Path:
    return landing / "scheduler" / "slurm" / cluster


def sacct_fields(cfg: CollectSlurmConfig) -> tuple[str, ...]:
    """FIELDS, less the optional ones this sacct does not know."""
    *launcher, program = cfg.sacct
    known = set(_run([*launcher, program, "--helpformat"], cfg.timeout_seconds).split())
    return tuple(f for f in FIELDS if f in known or f not in OPTIONAL_FIELDS)


def sacct_argv(cfg: CollectSlurmConfig, cluster: str, start: datetime, end: datetime,
               fields: tuple[str, ...] = FIELDS) -> list[str]:
    """The launcher words, `env` fixing the time zone and time format, the sacct program, its arguments.

    No `--state`: with -S/-E alone sacct selects jobs in any state during the window (running, pending
    and ended alike). No `-X`: steps are kept (the ledger counts them). `--duplicates`: a requeued job's
    earlier instances too, each its own allocation in the ledger."""
    *launcher, program = cfg.sacct
    return [*launcher, "env", "TZ=UTC", "SLURM_TIME_FORMAT=%s", program,
            "--parsable2", "--allusers", "--duplicates", f"--clusters={cluster}",
            f"--starttime={start:%Y-%m-%dT%H:%M:%S}", f"--endtime={end:%Y-%m-%dT%H:%M:%S}",
            f"--format={','.join(fields)}"]


def read_watermark(folder: Path) -> datetime | None:
    path = folder / STATE_FILE
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        return datetime.fromisoformat(state["collected_until"]).replace(tzinfo=None)
    except (ValueError, KeyError, TypeError) as err:
        raise CollectError(f"{path}: unreadable collect state ({err}): delete it and collect with --since") from err


def collect(landing: Path, cluster: str, cfg: CollectSlurmConfig, since: date | None = None,
            until: datetime | None = None) -> CollectResult:
    """Collects `cluster`'s accounting from `since` (default: the watermark less the look-back, or the
    look-back before now on a first collect) up to `until` (default: now, UTC), one file per UTC day."""
    if not CLUSTER_NAME.match(cluster):
        raise CollectError(f"{cluster!r} is not a cluster name (letters, digits, '_', '-', '.')")
    folder = cluster_folder(landing, cluster)
    folder.mkdir(parents=True, exist_ok=True)
    with _only_collect(folder, cluster):
        return _collect(folder, cluster, cfg, since, until)


@contextmanager
def _only_collect(folder: Path, cluster: str) -> Iterator[None]:
    """One collect of a cluster at a time (cron and the Dagster schedule may overlap): an advisory lock
    the OS lets go when the process ends, however it ends."""
    with (folder / LOCK_FILE).open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CollectError(f"another collect of {cluster} is running (it holds {folder / LOCK_FILE})") from None
        yield


def _collect(folder: Path, cluster: str, cfg: CollectSlurmConfig, since: date | None,
             until: datetime | None) -> CollectResult:
    began = time.monotonic()
    remove_stale_temps(folder)   # what a killed collect left
    end = (until or datetime.now(timezone.utc)).replace(tzinfo=None, microsecond=0)
    watermark = read_watermark(folder)
    lookback = timedelta(hours=cfg.lookback_hours)
    if since is not None:
        start = datetime.combine(since, datetime.min.time())
    else:
        start = (watermark or end) - lookback
    start = min(start, end).replace(hour=0, minute=0, second=0)  # whole UTC days: each file is a whole day
    result = CollectResult(cluster, [], start, end, watermark)

    fields = sacct_fields(cfg)
    allocations, steps = [], []
    day = start.date()
    while datetime.combine(day, datetime.min.time()) < end or day == start.date():
        day_start = datetime.combine(day, datetime.min.time())
        day_end = min(day_start + timedelta(days=1), end)
        argv = sacct_argv(cfg, cluster, day_start, day_end, fields)
        result.command = result.command or argv
        text = _run(argv, cfg.timeout_seconds)
        done, ids = _write_day(folder, day, text, fields)
        result.files.append(done)
        allocations.append(ids.filter(~ids.str.contains(".", literal=True)))
        steps.append(ids.filter(ids.str.contains(".", literal=True)))
        day += timedelta(days=1)

    # a job running across midnight is in both days' files: counted once
    result.jobs = pl.concat(allocations).n_unique()
    result.steps = pl.concat(steps).n_unique()
    # only now, with every file of the window in place, may the next collect start later
    new_mark = max(end, watermark) if watermark else end
    state = json.dumps({
        "cluster": cluster, "collected_until": new_mark.isoformat(),
        "last_window": [start.isoformat(), end.isoformat()],
        "files": [f.name for f in result.files],
    }, indent=2) + "\n"
    replace_atomically(folder / STATE_FILE, lambda tmp: tmp.write_text(state, encoding="utf-8"))
    result.seconds = time.monotonic() - began
    return result


def _run(argv: list[str], timeout: int) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as err:
        raise CollectError(f"cannot run {argv[0]!r} ({err.strerror}): set collect.slurm.sacct in the config") from err
    except subprocess.TimeoutExpired as err:
        raise CollectError(f"sacct took over {timeout}s (collect.slurm.timeout_seconds): {_shown(argv)}") from err
    if proc.returncode != 0:
        raise CollectError(f"sacct failed (exit {proc.returncode}): {_shown(argv)}\n{proc.stderr.strip()}")
    return proc.stdout


def _write_day(folder: Path, day: date, text: str, fields: tuple[str, ...]) -> tuple[DayFile, pl.Series]:
    """Checks sacct's output, then puts it in place as the day's file; (the file, the ids of its jobs and
    steps: JobIDRaw@Start, as a requeued job's instances share JobIDRaw and differ by their start)."""
    name = f"sacct-{day.isoformat()}.psv"
    target = folder / name
    data = text.encode("utf-8")
    written = not (target.exists() and target.read_bytes() == data)
    checked: list[pl.DataFrame] = []

    def write_checked(tmp: Path) -> None:   # a check that fails leaves the day's file as it was
        tmp.write_bytes(data)
        checked.append(_checked(tmp, name, fields))

    if written:
        replace_atomically(target, write_checked)
        frame = checked[0]
    else:
        frame = _checked(target, name, fields)
    ids = frame.select(pl.concat_str(pl.col("JobIDRaw"), pl.col("Start").fill_null(""), separator="@")).to_series()
    steps = int(ids.str.contains(".", literal=True).sum())
    return DayFile(day, name, ids.len() - steps, steps, written), ids


def _checked(path: Path, name: str, fields: tuple[str, ...]) -> pl.DataFrame:
    """sacct's output as the ingest will read it; refuses output with another header or times that are no
    epoch seconds (SLURM_TIME_FORMAT did not reach sacct), naming the line."""
    if path.stat().st_size == 0:
        raise CollectError(f"{name}: sacct printed nothing, not even its header line")
    frame, _, _ = read_sacct(path, ClusterConfig())
    header = [c for c in frame.columns if not c.startswith("_")]
    if header != list(fields):
        raise CollectError(f"{name}: sacct printed the columns {'|'.join(header)}, not {'|'.join(fields)}")
    frame = frame.with_columns(pl.col(header).cast(pl.String))  # a day without jobs reads as nulls
    not_epoch = pl.any_horizontal([
        pl.col(c).is_not_null() & (pl.col(c) != "") & ~pl.col(c).is_in(SENTINELS) & ~pl.col(c).str.contains(r"^\d+$")
        for c in TIME_FIELDS])
    bad = frame.filter(pl.col("_shape_error").is_null() & not_epoch).head(1)
    if bad.height:
        row = bad.row(0, named=True)
        raise CollectError(f"{name} line {row['_line']}: times are not epoch seconds (Submit {row['Submit']!r}): "
                           "SLURM_TIME_FORMAT=%s did not reach sacct; check collect.slurm.sacct")
    return frame.filter(pl.col("_shape_error").is_null())


def _shown(argv: list[str]) -> str:
    return " ".join(argv)


def summary(result: CollectResult) -> list[str]:
    """What `gpuledger collect slurm` prints."""
    mark = (f"watermark {result.previous_watermark:%Y-%m-%dT%H:%M:%SZ}" if result.previous_watermark
            else "no watermark yet")
    lines = [
        f"collect slurm: cluster {result.cluster}, window {result.window_start:%Y-%m-%dT%H:%M:%SZ} .. "
        f"{result.window_end:%Y-%m-%dT%H:%M:%SZ} ({mark})",
        f"  ran: {_shown(result.command)}",
        f"       once per UTC day, -S/-E the day ({len(result.files)} calls)",
    ]
    for f in result.files:
        lines.append(f"  {f.name}: {f.jobs} jobs, {f.steps} steps, {'written' if f.written else 'unchanged'}")
    written = sum(f.written for f in result.files)
    lines.append(f"  {result.jobs} jobs and {result.steps} step records in {len(result.files)} files "
                 f"({written} written, {len(result.files) - written} unchanged) in {result.seconds:.1f}s; "
                 f"watermark now {max(result.window_end, result.previous_watermark or result.window_end):%Y-%m-%dT%H:%M:%SZ}")
    return lines

"""sacct exports (`-P` parsable2 with a header line, or `-p`/custom delimiter with a configured column
list) → staging.stg_scheduler__job_allocations rows, times converted from the cluster's zone to UTC.

A State outside sacct's codes is quarantined unless `slurm.state_map` maps it: the ledger's categories
depend on the state, so none is guessed. Columns, states, times and what is refused:
docs/ingest/slurm.md."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import polars as pl

from models.landing import SchedulerJobAllocation
from pipelines.ingest.common import _has_undecodable, blank_to_null, cast_failures, first_bad_byte, numbered_lines, shown, split_by_contract, to_utc, unread_casts, unread_record
from pipelines.landing.parsed import Parsed, file_reject
from models.mig_profiles import SHARE_UNITS_PER_GPU, fraction_units, profile_of, profile_units, replica_units
from pipelines.lib.config import SLURM_STATES, ClusterConfig

SOURCE = "slurm"
SENTINELS = ["Unknown", "None", "None assigned", "N/A", "(null)"]
STAGED = [
    "_file", "_row", "cluster", "job_key", "job_id", "parent_job_key", "is_step", "array_job_id",
    "array_task_id", "job_name", "user_name", "account", "partition", "qos", "state", "cancelled_by",
    "exit_code", "submit_ts", "start_ts", "end_ts", "alloc_tres", "gpus", "gpu_slices", "gpu_index",
    "node_count", "node_list", "hosts", "comment", "run_id", "restarts", "labels",
]


def parse(path: Path, file: str, cluster: str, cfg: ClusterConfig,
          state_map: dict[str, str] | None = None) -> Parsed:
    try:
        raw, skipped, replaced = read_sacct(path, cfg)
    except EmptyFile as err:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, str(err)))
    except Exception as err:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable sacct file: {err}"))
    if "JobID" not in raw.columns and "JobIDRaw" not in raw.columns:
        return Parsed(
            rows=pl.DataFrame(),
            rejects=file_reject(SOURCE, file, "no JobID or JobIDRaw column: give the header line, or the "
                                "cluster's `columns` in the config for a header-less export"),
            dropped=skipped,
        )
    parsed = from_sacct_frame(raw, file, cluster, cfg, state_map or {})
    parsed.dropped = skipped
    # kept, with the bytes shown as U+FFFD: counted as a value that took a stand-in
    parsed.defaulted = {column.lower(): {REPLACED_BYTES: n} for column, n in replaced.items()}
    return parsed


class EmptyFile(ValueError):
    """A sacct file with no header and no records."""


# Text no costing reads: a byte in them that is not UTF-8 is replaced (U+FFFD) and the job kept. A bad
# byte anywhere else (an id, a time, AllocTRES, NodeList, Account, ...) quarantines its line alone.
REPLACEABLE_TEXT = ("Comment", "JobName")
REPLACED_BYTES = "U+FFFD for bytes that are not UTF-8"


def read_sacct(path: Path, cfg: ClusterConfig) -> tuple[pl.DataFrame, dict[str, int], dict[str, int]]:
    """The records (splitting lines ourselves: sacct does not quote, so a CSV reader would trip on
    stray quotes), the count of blank and `#` comment lines skipped, and per column the count of
    records kept with bytes replaced. The file is read as bytes: a
    line with bytes that are not UTF-8 costs that line (or, in Comment and JobName, only those bytes),
    never the file."""
    numbered, offsets = numbered_lines(path.read_bytes())
    skipped = {"blank lines": sum(1 for _, line in numbered if not line.strip()),
               "comment lines": sum(1 for _, line in numbered if line.lstrip().startswith("#"))}
    numbered = [(n, line) for n, line in numbered if line.strip() and not line.lstrip().startswith("#")]
    skipped = {k: v for k, v in skipped.items() if v}
    delimiter = cfg.delimiter or "|"
    if not numbered and not cfg.columns:
        size = path.stat().st_size
        raise EmptyFile(f"empty sacct file ({size} bytes, no header line and no records): re-export it with "
                        "`sacct -P` (with a header), or delete it")
    if cfg.columns:
        header, body = list(cfg.columns), numbered
    else:
        (n0, first), body = numbered[0], numbered[1:]
        if _has_undecodable(first):
            raise ValueError(f"header line {n0} has a byte that is not UTF-8 at byte offset "
                             f"{offsets[n0] + first_bad_byte(first)} of the file")
        header = first.split(delimiter)
    # `-p` (and custom delimiters) end every line with the delimiter: one empty trailing field.
    if header and header[-1] == "":
        header = header[:-1]
    width = len(header)
    replaceable = {i for i, name in enumerate(header) if name in REPLACEABLE_TEXT}
    records, bad, replaced = [], [], {}
    for n, line in body:
        fields = line.split(delimiter)
        if len(fields) == width + 1 and fields[-1] == "":
            fields = fields[:-1]
        if len(fields) != width:
            bad.append((n, shown(line), f"{len(fields)} fields where the header has {width}"))
            continue
        broken = [i for i, f in enumerate(fields) if _has_undecodable(f)]
        if any(i not in replaceable for i in broken):
            i = next(i for i in broken if i not in replaceable)
            bad.append((n, shown(line), f"{header[i]} has a byte that is not UTF-8 at byte offset "
                                         f"{offsets[n] + first_bad_byte(line)} of the file"))
            continue
        for i in broken:
            replaced[header[i]] = replaced.get(header[i], 0) + 1
        records.append([n, *(shown(f) if i in broken else f for i, f in enumerate(fields))])
    df = pl.DataFrame(records, schema=["_line", *header], orient="row")
    return _attach_bad(df, bad), skipped, replaced


def _attach_bad(df: pl.DataFrame, bad: list[tuple[int, str, str]]) -> pl.DataFrame:
    """Lines that cannot be a record (the wrong number of fields, a byte that is not UTF-8 where costing
    reads) stay in the frame, marked with why, so they reach quarantine."""
    if not bad:
        return df.with_columns(pl.lit(None, dtype=pl.String).alias("_shape_error"))
    extra = pl.DataFrame(
        {
            "_line": [b[0] for b in bad],
            "_shape_error": [b[2] for b in bad],
            "_raw_line": [b[1] for b in bad],
        },
        schema={"_line": pl.Int64, "_shape_error": pl.String, "_raw_line": pl.String},
    )
    return pl.concat([df.with_columns(pl.lit(None, dtype=pl.String).alias("_shape_error")), extra],
                     how="diagonal_relaxed").sort("_line")


def from_sacct_frame(raw: pl.DataFrame, file: str, cluster: str, cfg: ClusterConfig,
                     state_map: dict[str, str] | None = None) -> Parsed:
    zone = cfg.timezone
    raw_columns = [c for c in raw.columns if not c.startswith("_")] + (["_raw_line"] if "_raw_line" in raw.columns else [])
    df = raw.with_columns([_sacct_null(c).alias(c) for c in raw.columns if not c.startswith("_")])
    col = lambda name: pl.col(name) if name in df.columns else pl.lit(None, dtype=pl.String)  # noqa: E731
    job_id = pl.coalesce(col("JobID"), col("JobIDRaw"))
    job_key = pl.coalesce(col("JobIDRaw"), col("JobID"))
    state_raw = col("State")
    df = df.with_columns(
        pl.lit(file).alias("_file"),
        pl.col("_line").alias("_row"),
        pl.lit(cluster).alias("cluster"),
        job_key.alias("job_key"),
        job_id.alias("job_id"),
        job_key.str.contains(".", literal=True).fill_null(False).alias("is_step"),
        pl.when(job_key.str.contains(".", literal=True)).then(job_key.str.split(".").list.first()).alias("parent_job_key"),
        job_id.str.extract(r"^(\d+)_").alias("array_job_id"),
        job_id.str.extract(r"^\d+_(\[?[\d\-,%]+\]?)").alias("array_task_id"),
        col("JobName").alias("job_name"),
        col("User").alias("user_name"),
        col("Account").alias("account"),
        col("Partition").alias("partition"),
        col("QOS").alias("qos"),
        _state(state_raw, state_map or {}).alias("state"),
        state_raw.str.extract(r"by (\S+)").alias("cancelled_by"),
        col("ExitCode").alias("exit_code"),
        _time(df, "Submit", zone).alias("submit_ts"),
        _time(df, "Start", zone).alias("start_ts"),
        _time(df, "End", zone).alias("end_ts"),
        col("AllocTRES").alias("alloc_tres"),
        col("AllocTRES").str.extract(r"(?:^|,)node=(\d+)").cast(pl.Int32, strict=False).alias("node_count"),
        col("NodeList").alias("node_list"),
        col("Comment").alias("comment"),
        col("Comment").str.extract(r"run_id=([^\s,;|]+)").alias("run_id"),
        col("Restarts").cast(pl.Int32, strict=False).alias("restarts"),
        pl.lit(None, dtype=pl.List(pl.String)).alias("labels"),  # pod labels: Kubernetes only
    )
    # A job that ended in the hour a DST fall-back repeats reads as ending before it started when the
    # earlier reading is taken; the later reading is then the true one.
    df = df.with_columns(
        pl.when(pl.col("end_ts") < pl.col("start_ts"))
        .then(_time(df, "End", zone, ambiguous="latest"))
        .otherwise(pl.col("end_ts"))
        .alias("end_ts")
    )
    hosts = {nl: expand_hostlist(nl) for nl in df["node_list"].drop_nulls().unique().to_list()}
    df = df.with_columns(
        pl.col("node_list").replace_strict(hosts, default=None, return_dtype=pl.List(pl.String)).alias("hosts"),
        *gpu_request_columns(pl.col("alloc_tres"), df["alloc_tres"], cfg),
    ).with_columns(pl.coalesce(pl.col("node_count"), pl.col("hosts").list.len().cast(pl.Int32)).alias("node_count"))
    casts = {"submit_ts": ("Submit", "a time"), "start_ts": ("Start", "a time"), "end_ts": ("End", "a time")}
    df = df.with_columns(
        pl.concat_list(
            cast_failures(df, {k: v for k, v in casts.items() if v[0] in df.columns}),
            pl.when(pl.col("_shape_error").is_not_null()).then(pl.col("_shape_error")),
            pl.when(state_raw.is_not_null() & pl.col("state").is_null())
            .then(pl.format("State '{}' is not a sacct state: map it to one in the config's slurm.state_map", state_raw)),
            pl.col("_gres_error"),
        ).list.drop_nulls().alias("_errors")
    )
    # what the reasons above name, which the contract does not judge again; a line that is no record
    # (the wrong number of fields) has no value to judge
    unread = unread_casts(df, {k: v for k, v in casts.items() if v[0] in df.columns})
    unread |= {"state": state_raw.is_not_null() & pl.col("state").is_null(), "gpus": pl.col("_gres_error").is_not_null()}
    staged, rejects = split_by_contract(
        df,
        SchedulerJobAllocation,
        source=SOURCE,
        file=file,
        staged_columns=STAGED,
        raw_columns=raw_columns,
        row_ref=pl.format("line {}", pl.col("_row")),
        unread=unread_record(SchedulerJobAllocation, pl.col("_shape_error").is_not_null(), unread),
        reject_extras={"day": pl.coalesce(pl.col("start_ts"), pl.col("submit_ts")).dt.date()},
    )
    return Parsed(rows=staged, rejects=rejects)


def _state(raw: pl.Expr, state_map: dict[str, str]) -> pl.Expr:
    """The sacct state code (`CANCELLED by 123` → CANCELLED), through the configured map; null when
    it is none of sacct's codes."""
    code = raw.str.strip_chars().str.extract(r"^([A-Za-z_]+)").str.to_uppercase()
    known = {s: s for s in SLURM_STATES} | state_map
    return code.replace_strict(known, default=None, return_dtype=pl.String)


def _sacct_null(name: str) -> pl.Expr:
    c = blank_to_null(name)
    return pl.when(c.is_in(SENTINELS)).then(None).otherwise(c)


def _time(df: pl.DataFrame, name: str, zone: str, ambiguous: str = "earliest") -> pl.Expr:
    if name not in df.columns:
        return pl.lit(None, dtype=pl.Datetime("us"))
    return to_utc(name, zone, ambiguous=ambiguous)


def gpu_request_columns(tres: pl.Expr, values: pl.Series, cfg: ClusterConfig | None = None) -> list[pl.Expr]:
    """`gpus`, `gpu_slices`, `gpu_index` and `_gres_error` from AllocTRES, read once per distinct value
    (as hostlists are): see `gpu_request`."""
    cfg = cfg or ClusterConfig()
    read = {t: gpu_request(t, cfg.gpu_shards, cfg.mps_per_gpu) for t in values.drop_nulls().unique().to_list()}
    pick = lambda i, dtype: tres.replace_strict({t: r[i] for t, r in read.items()}, default=None,  # noqa: E731
                                                return_dtype=dtype)
    return [pick(0, pl.Int32).alias("gpus"), pick(1, pl.List(pl.Int32)).alias("gpu_slices"),
            pl.lit(None, dtype=pl.Int32).alias("gpu_index"), pick(2, pl.String).alias("_gres_error")]


# the count is taken whole (`[^,]*`) and judged by `_gres_count`: `gres/gpu=-4` or `=1.5` is an error,
# never a job without GPUs (which the ledger would give the whole node)
_GRES_GPU = re.compile(r"(?:^|,)gres/gpu(?::([^=,]+))?=([^,]*)")
_GRES_SHARED = re.compile(r"(?:^|,)gres/(shard|mps)(?::[^=,]+)?=([^,]*)")
# No allocation holds more GPUs (or shards, or MPS units) than this; a larger count is a corrupt record.
# A count the job's nodes cannot hold is the ledger's to refuse (int_job_conflicts), which knows the nodes.
MAX_GRES_COUNT = 1_000_000
# the cluster config key that says what one unit of a sharing GRES is of a GPU
_SHARE_KEYS = {"shard": "gpu_shards", "mps": "mps_per_gpu"}


def gpu_request(tres: str, gpu_shards: int | None = None,
                mps_per_gpu: int | None = None) -> tuple[int | None, list[int] | None, str | None]:
    """(whole GPUs, share units of each slice of a GPU, error) of an AllocTRES text.

    The untyped `gres/gpu=N` counts every typed entry, MIG instances included, so whole GPUs are N less
    the MIG instances; without it, the sum of the typed entries that are not MIG profiles. A typed entry
    whose type ends in a MIG profile (`gres/gpu:3g.40gb=2`, `gres/gpu:a100_1g.10gb=1`) is that many
    slices of a GPU (models/mig_profiles.py); a profile the catalog does not know is an error. Slurm's
    sharing GRES are slices too: `gres/shard=k` is k shards of 1/`gpu_shards` of a GPU each, and
    `gres/mps=m` is m/`mps_per_gpu` of a GPU (a whole GPU per `mps_per_gpu` units); without the
    cluster's count they are an error, never whole GPUs. No GPU entry at all: (None, None, None)."""
    untyped, whole_typed, slices, shared, errors, any_gpu = None, 0, [], [], [], False
    per_gpu = {"shard": gpu_shards, "mps": mps_per_gpu}
    for kind, count in _GRES_SHARED.findall(tres):
        any_gpu, n, units = True, _gres_count(count), per_gpu[kind]
        if isinstance(n, str):
            errors.append(f"AllocTRES gres/{kind}={count}: {n}")
        elif units is None:
            errors.append(f"gres/{kind}={n}: the cluster's {_SHARE_KEYS[kind]} (its gres.conf count per GPU) is not "
                          "in the config, so its share of a GPU is unknown")
        elif kind == "shard":
            shared += [replica_units(units)] * n
        else:
            whole_gpus, rest = divmod(n, units)
            shared += [SHARE_UNITS_PER_GPU] * whole_gpus + ([fraction_units(str(Decimal(rest) / units))] if rest else [])
    for gres_type, count in _GRES_GPU.findall(tres):
        any_gpu, n = True, _gres_count(count)
        if isinstance(n, str):
            errors.append(f"AllocTRES gres/gpu{':' + gres_type if gres_type else ''}={count}: {n}")
            continue
        if not gres_type:
            untyped = n
            continue
        profile = profile_of(gres_type)
        if profile is None:
            whole_typed += n
        elif (units := profile_units(profile)) is None:
            errors.append(f"gres/gpu:{gres_type}: MIG profile '{profile}' is not in the catalog of MIG profiles "
                          "(models/mig_profiles.py)")
        else:
            slices += [units] * n
    if not any_gpu:
        return None, None, None
    if untyped is not None:
        whole = max(0, untyped - len(slices))
    else:
        whole = whole_typed if whole_typed or slices or shared else None
    if errors:  # a job whose GPUs are not known holds none: it is quarantined, with every reason
        return None, None, "; ".join(errors)
    return whole, (slices + shared) or None, None


def _gres_count(text: str) -> int | str:
    """A GRES count as a whole number of devices, or why it is none."""
    if not re.fullmatch(r"\d+", text.strip()):
        return "the count is not a whole number of devices"
    n = int(text)
    if n > MAX_GRES_COUNT:
        return f"the count is more than {MAX_GRES_COUNT:,}, more than any allocation holds"
    return n


_HOSTLIST_ITEM = re.compile(r"([^,\[]+(?:\[[^\]]*\][^,\[]*)*)")


def expand_hostlist(text: str) -> list[str]:
    """Expands a Slurm hostlist: `east-gpu-[001-003,007]`, `omni[1,10-12]`, `a1,b[2-3]`, keeping zero padding."""
    hosts: list[str] = []
    for item in _HOSTLIST_ITEM.findall(text.strip()):
        item = item.strip()
        if item:
            hosts.extend(_expand_item(item))
    return hosts


def _expand_item(item: str) -> list[str]:
    m = re.search(r"\[([^\]]*)\]", item)
    if not m:
        return [item]
    prefix, suffix = item[: m.start()], item[m.end():]
    out = []
    for part in m.group(1).split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            width = len(lo) if lo.startswith("0") else 0
            out.extend(f"{prefix}{str(i).zfill(width)}{suffix}" for i in range(int(lo), int(hi) + 1))
        else:
            out.append(f"{prefix}{part}{suffix}")
    return [h for o in out for h in _expand_item(o)]

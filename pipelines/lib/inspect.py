"""`gpuledger inspect`: every landing file parsed, nothing written. What a platform engineer runs
before wiring a new export in. The JSON shape is documented in the README and stable."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from pathlib import Path

import polars as pl

from pipelines.ingest.common import Parsed, file_reject
from pipelines.ingest.deliveries import CURRENT, UNREADABLE
from pipelines.ingest.sources import ALL
from pipelines.lib.bill_deliveries import delivery_state
from pipelines.lib.config import OrgConfig
from pipelines.lib.ignored import ignored_files
from pipelines.lib.landing import Source, discover

MAX_REASONS = 20
STATUSES = ("current", "superseded", "duplicate", "unreadable")


def inspect_landing(root: Path, cfg: OrgConfig) -> dict[str, dict | list]:
    report: dict[str, dict | list] = {}
    for source in ALL:
        entry = _bills(root, source, cfg) if source.delivered else _plain(root, source, cfg)
        if entry is not None:
            report[source.name] = entry
    ignored = ignored_files(root)
    if ignored:
        report["ignored_files"] = ignored
    return report


def _plain(root: Path, source: Source, cfg: OrgConfig) -> dict | None:
    files = discover(root, source)
    if not files:
        return None
    return _entry(source, len(files), (source.parse(path, rel, cfg) for path, rel in files))


def _bills(root: Path, source: Source, cfg: OrgConfig) -> dict | None:
    """A bill source counts its current deliveries only: what the warehouse would stage."""
    state = delivery_state(root, source, cfg, {}, keep_bytes=float("inf"))
    if not state.found:
        return None
    counted = []
    for rel, f in sorted(state.found.items()):
        status = state.decisions[rel].status
        if status == CURRENT:
            counted.append(f.parsed)
        elif status == UNREADABLE:
            rejects = f.parsed.rejects if f.parsed is not None else file_reject(source.name, rel, f.reason)
            counted.append(Parsed(rows=pl.DataFrame(), rejects=rejects))
    data_files = sum(1 for f in state.found.values() if f.facts is not None)
    entry = _entry(source, data_files, counted)
    statuses = Counter(d.status for d in state.decisions.values())
    entry["deliveries"] = {**{s: statuses.get(s, 0) for s in STATUSES}, "manifests": len(state.manifests)}
    if set_aside := state.set_aside():
        entry["set_aside"] = set_aside
    if state.resolution.missing:
        entry["missing_from_manifests"] = state.resolution.missing
    return entry


def _entry(source: Source, n_files: int, parsed_files) -> dict:
    rows, rejects, dropped, accepted = [], [], Counter(), 0
    for parsed in parsed_files:
        accepted += parsed.rows.height
        if parsed.rows.height:
            rows.append(_facts_frame(source, parsed.rows))
        rejects.append(parsed.rejects)
        dropped.update(parsed.dropped)
    staged = pl.concat(rows, how="diagonal_relaxed") if rows else pl.DataFrame()
    quarantined = pl.concat(rejects) if rejects else pl.DataFrame()
    entry = {
        "files": n_files,
        "rows": accepted + quarantined.height,
        "quarantined": quarantined.height,
        "reasons": _reasons(quarantined),
    }
    if dropped:
        entry["dropped"] = dict(dropped)
    entry.update(_totals(source, staged))
    return entry


def _facts_frame(source: Source, rows: pl.DataFrame) -> pl.DataFrame:
    """Keeps only what the totals need, so a fleet's telemetry is not held whole."""
    if source.name == "dcgm":
        return rows.select("timestamp", "hostname", "gpu", "gpu_instance").unique()
    return rows


def _reasons(quarantined: pl.DataFrame) -> list[dict]:
    if quarantined.height == 0:
        return []
    top = (
        quarantined.group_by("reason")
        .agg(pl.len().alias("rows"), pl.col("file").first(), pl.col("row_ref").first().alias("first_row"))
        .sort("rows", descending=True)
        .head(MAX_REASONS)
    )
    return top.to_dicts()


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def _totals(source: Source, staged: pl.DataFrame) -> dict:
    if source.name in ("focus", "aws_cur"):
        if staged.height == 0:
            return {"effective_cost": "0", "billed_cost": "0", "first_charge": None, "last_charge": None}
        return {
            "effective_cost": _exact_sum(staged["effective_cost"]),
            "billed_cost": _exact_sum(staged["billed_cost"]),
            "first_charge": _iso(staged["charge_period_start"].min()),
            "last_charge": _iso(staged["charge_period_end"].max()),
        }
    if source.name in ("slurm", "kubernetes"):
        if staged.height == 0:
            return {"jobs": 0, "steps": 0, "gpu_seconds": 0}
        # A job is in every daily export it overlapped: keep its latest record. Submit tells a requeued
        # instance (same JobIDRaw, new Submit) from the same job seen pending and then running.
        latest = (
            staged.with_columns(pl.coalesce("submit_ts", "start_ts").alias("_instance"))
            .sort(["end_ts", "_file", "_row"], nulls_last=False)
            .group_by(["cluster", "job_key", "_instance"], maintain_order=True)
            .last()
        )
        allocations = latest.filter(~pl.col("is_step"))
        ended = allocations.filter(pl.col("start_ts").is_not_null() & pl.col("end_ts").is_not_null())
        seconds = ended.select(
            ((pl.col("end_ts") - pl.col("start_ts")).dt.total_seconds() * pl.col("gpus").fill_null(0)).sum()
        ).item()
        return {"jobs": allocations.height, "steps": latest.filter(pl.col("is_step")).height,
                "gpu_seconds": int(seconds or 0)}
    if source.name == "dcgm":
        if staged.height == 0:
            return {"samples": 0, "hosts": 0, "gpus": 0, "first_ts": None, "last_ts": None}
        samples = staged.unique()
        return {
            "samples": samples.height,
            "hosts": samples["hostname"].n_unique(),
            "gpus": samples.select("hostname", "gpu").unique().height,
            "first_ts": _iso(samples["timestamp"].min()),
            "last_ts": _iso(samples["timestamp"].max()),
        }
    if source.name == "runs":
        if staged.height == 0:
            return {"runs": 0, "events": 0, "tokens": 0}
        return {"runs": staged["run_id"].n_unique(), "events": staged.height,
                "tokens": int(staged.filter(pl.col("event") == "step")["tokens"].sum() or 0)}
    if source.name == "inventory":
        return {"nodes": staged.height, "gpus": int(staged["gpu_count"].sum() or 0) if staged.height else 0}
    return {}


def _exact_sum(column: pl.Series) -> str:
    total = sum((Decimal(str(v)) for v in column.drop_nulls().to_list()), Decimal(0))
    return format(total.normalize(), "f") if total else "0"

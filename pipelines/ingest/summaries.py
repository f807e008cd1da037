"""What `gpuledger inspect` totals of each kind of source's staged rows, beside the files, rows and
quarantine every source reports (bills report their money: pipelines/cli/inspect.py). A source names
its kind on its declaration (`Source.summary`, pipelines/ingest/sources.py), so a new source of a known
kind is summarised without another line here."""

from __future__ import annotations

import polars as pl

from pipelines.landing.source import Summary


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def _jobs(staged: pl.DataFrame) -> dict:
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


def _samples(staged: pl.DataFrame) -> dict:
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


def _run_events(staged: pl.DataFrame) -> dict:
    if staged.height == 0:
        return {"runs": 0, "events": 0, "tokens": 0}
    return {"runs": staged["run_id"].n_unique(), "events": staged.height,
            "tokens": int(staged.filter(pl.col("event") == "step")["tokens"].sum() or 0)}


def _nodes(staged: pl.DataFrame) -> dict:
    return {"nodes": staged.height, "gpus": int(staged["gpu_count"].sum() or 0) if staged.height else 0}


JOBS = Summary(
    facts=("cluster", "job_key", "submit_ts", "start_ts", "end_ts", "is_step", "gpus", "_file", "_row"),
    totals=_jobs,
    says=lambda e: (f"{e['jobs']:,} jobs, {e['steps']:,} steps, "
                    f"{e['gpu_seconds'] / 3600:,.1f} GPU-hours of the jobs that ended"),
)
# a sample is one time, GPU and instance: its metrics are rows of their own
GPU_SAMPLES = Summary(
    facts=("timestamp", "hostname", "gpu", "gpu_instance"),
    totals=_samples,
    says=lambda e: f"{e['samples']:,} samples of {e['gpus']:,} GPUs on {e['hosts']:,} hosts",
    distinct=True,
)
RUN_EVENTS = Summary(
    facts=("run_id", "event", "tokens"),
    totals=_run_events,
    says=lambda e: f"{e['runs']:,} runs, {e['events']:,} events, {e['tokens']:,} tokens",
)
NODES = Summary(
    facts=("hostname", "cluster", "resource_id", "gpu_model", "gpu_count", "pool"),
    totals=_nodes,
    says=lambda e: f"{e['nodes']:,} nodes, {e['gpus']:,} GPUs",
)

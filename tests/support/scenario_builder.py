"""Builds small, hand-checkable landing zones for tests/e2e/test_ledger_scenarios.py.

Everything here only *writes* landing files in the formats of docs/landing.md; it imports nothing from the
pipeline, so the expected values in the scenarios stay independent of how the pipeline computes them.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.lib.config.strict_yaml import dump_yaml

UTC = timezone.utc
H100 = "NVIDIA H100 80GB HBM3"
SAMPLE_S = 30

FOCUS_COLUMNS = ["ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "ChargeClass", "PricingCategory",
                 "BilledCost", "EffectiveCost", "ResourceId", "ResourceType", "ServiceCategory", "ServiceName",
                 "CommitmentDiscountId", "CommitmentDiscountStatus", "Tags"]
DEFAULT_BILL = "bill.csv"


def bill_columns(rows: list[dict]) -> list[str]:
    """A bill file's header: FOCUS_COLUMNS, then the other FOCUS columns some row fills (`line(extra=…)`),
    then BillingCurrency when some row has one."""
    extra = dict.fromkeys(k for r in rows for k, v in r.items()
                          if k not in FOCUS_COLUMNS and k not in ("_file", "BillingCurrency") and v != "")
    return FOCUS_COLUMNS + list(extra) + (["BillingCurrency"] if any(r.get("BillingCurrency") for r in rows) else [])
SACCT_COLUMNS = ["JobIDRaw", "JobID", "JobName", "User", "Account", "Partition", "State", "ExitCode", "Submit",
                 "Start", "End", "AllocTRES", "NodeList", "Comment", "Restarts", "QOS"]
INVENTORY_COLUMNS = ["hostname", "cluster", "resource_id", "gpu_model", "gpu_count", "pool", "team"]
DCGM_SCHEMA = pa.schema([
    ("timestamp", pa.timestamp("us", tz="UTC")), ("hostname", pa.string()), ("gpu", pa.int32()),
    ("UUID", pa.string()), ("modelName", pa.string()), ("metric", pa.string()), ("value", pa.float64()),
    ("hpc_job", pa.string()),
])


def _file_part(name: str) -> str:
    """A file name for a host or run of any text (tests give them hostile names)."""
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,60}", name) and name not in (".", ".."):
        return name
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40] + "-" + hashlib.sha256(name.encode()).hexdigest()[:8]


def utc(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, s, tzinfo=UTC)


def iso_z(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def money(d: Decimal | str | int) -> str:
    return format(Decimal(d), "f")


@dataclass
class Activity:
    """What a host's GPUs did over [start, end) in UTC: held by `job` (None = unallocated), busy or not;
    busy at SM activity `sm` (GPU_UTIL 100), and using `fb_mib` MiB of memory when given (the host then
    reports DCGM_FI_DEV_FB_USED, 0 outside such activities)."""
    start: datetime
    end: datetime
    job: str | None
    busy: bool
    gpus: tuple[int, ...] = tuple(range(8))
    sm: float = 0.6
    fb_mib: float | None = None


@dataclass
class Series:
    """One DCGM series of a host over a UTC day, sampled every SAMPLE_S: GPU `gpu`, or its MIG instance
    `instance` (GPU_I_ID), labelled `job` (hpc_job; None = no label), busy within `busy` and idle outside."""
    gpu: int
    instance: str | None
    job: str | None
    busy: list[tuple[datetime, datetime]]


@dataclass
class Landing:
    root: Path
    bill_rows: list[dict] = field(default_factory=list)
    nodes: list[dict] = field(default_factory=list)
    sacct: dict[str, list[dict]] = field(default_factory=dict)          # cluster -> records
    activity: dict[str, list[Activity]] = field(default_factory=dict)   # host -> activities
    telemetry_days: dict[str, list[date]] = field(default_factory=dict)  # host -> UTC days with telemetry
    events: dict[str, list[dict]] = field(default_factory=dict)         # run_id -> trainer events
    plans: dict[str, str] = field(default_factory=dict)                 # file name under plans/ -> its YAML
    config: dict = field(default_factory=dict)
    series_of: dict[tuple[str, date], list[Series]] = field(default_factory=dict)  # (host, day) -> series
    pods: dict[str, list[dict]] = field(default_factory=dict)           # cluster -> pod objects
    power_w: dict[str, float] = field(default_factory=dict)             # host -> DCGM power of each GPU, W

    @property
    def landing(self) -> Path:
        return self.root / "landing"

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse.duckdb"

    @property
    def config_path(self) -> Path:
        return self.root / "gpuledger.yaml"

    # --- inventory -----------------------------------------------------------------------------
    def node(self, hostname: str, *, cluster: str = "c1", resource_id: str | None = None,
             gpu_model: str = H100, gpu_count: int = 8, pool: str = "", team: str = "") -> str:
        rid = resource_id or f"i-{hostname}"
        self.nodes.append({"hostname": hostname, "cluster": cluster, "resource_id": rid, "gpu_model": gpu_model,
                           "gpu_count": gpu_count, "pool": pool, "team": team})
        return rid

    # --- bills ---------------------------------------------------------------------------------
    def line(self, start: datetime, end: datetime, category: str, effective, billed=None, *,
             resource_id: str = "", resource_type: str = "", service: str = "", pricing: str = "",
             cd_id: str = "", cd_status: str = "", charge_class: str = "", tags: dict | None = None,
             currency: str | None = None, file: str = DEFAULT_BILL, extra: dict[str, str] | None = None) -> None:
        """A FOCUS row in bills/focus/<file>; `currency` fills BillingCurrency (the column is written only
        when some row of the file has one); `extra` fills other FOCUS columns (ListCost, PricingQuantity,
        BillingAccountName…), written when some row of the file has them."""
        self.bill_rows.append({
            "_file": file, "BillingCurrency": currency or "",
            "ChargePeriodStart": iso_z(start), "ChargePeriodEnd": iso_z(end), "ChargeCategory": category,
            "ChargeClass": charge_class, "PricingCategory": pricing,
            "BilledCost": money(effective if billed is None else billed), "EffectiveCost": money(effective),
            "ResourceId": resource_id, "ResourceType": resource_type, "ServiceCategory": service,
            "ServiceName": service and f"{service} service", "CommitmentDiscountId": cd_id,
            "CommitmentDiscountStatus": cd_status, "Tags": json.dumps(tags) if tags is not None else "{}",
            **(extra or {}),
        })

    def node_hours(self, hostname: str, first_hour: datetime, hours: int, effective, billed=None, *,
                   pricing: str = "Standard", cd_id: str = "", cd_status: str = "", currency: str | None = None,
                   file: str = DEFAULT_BILL, extra: dict[str, str] | None = None) -> None:
        """`hours` hourly instance lines of a GPU node (ChargeCategory Usage, ServiceCategory Compute,
        ResourceType instance, tagged with the node's hostname and cluster)."""
        node = next(n for n in self.nodes if n["hostname"] == hostname)
        for h in range(hours):
            a = first_hour + timedelta(hours=h)
            self.line(a, a + timedelta(hours=1), "Usage", effective, billed, resource_id=node["resource_id"],
                      resource_type="instance", service="Compute", pricing=pricing, cd_id=cd_id,
                      cd_status=cd_status, tags={"node": hostname, "cluster": node["cluster"]},
                      currency=currency, file=file, extra=extra)

    def take_bill_lines(self) -> list[dict]:
        """The bill lines added so far, removed from the default `bills/focus/bill.csv`, for `bill_file`."""
        rows, self.bill_rows = self.bill_rows, []
        return rows

    def bill_file(self, rel: str, rows: list[dict], *, mtime: datetime | None = None) -> Path:
        """Writes FOCUS rows to `landing/<rel>` (CSV, or CSV.gz when `rel` ends in .gz), with the given
        modification time: deliveries are ordered by it."""
        p = self.landing / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        columns = bill_columns(rows)
        with (gzip.open(p, "wt", newline="") if rel.endswith(".gz") else p.open("w", newline="")) as fh:
            w = csv.DictWriter(fh, columns, lineterminator="\n", extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        if mtime is not None:
            os.utime(p, (mtime.timestamp(), mtime.timestamp()))
        return p

    # --- scheduler -----------------------------------------------------------------------------
    def job(self, cluster: str, job_id: str, *, account: str, start: str, end: str, state: str, host: str,
            gpus: int = 8, comment: str = "", user: str = "alice", exit_code: str = "0:0",
            name: str = "train", tres: str | None = None, submit: str | None = None) -> None:
        """start/end are sacct local times of the cluster, `YYYY-MM-DDTHH:MM:SS`; `tres` replaces the
        AllocTRES `gres/gpu=<gpus>,node=1`; `submit` is the Submit time (else the job starts when submitted)."""
        self.sacct.setdefault(cluster, []).append({
            "JobIDRaw": job_id, "JobID": job_id, "JobName": name, "User": user, "Account": account,
            "Partition": "gpu", "State": state, "ExitCode": exit_code, "Submit": submit or start, "Start": start,
            "End": end, "AllocTRES": tres or f"gres/gpu={gpus},node=1", "NodeList": host, "Comment": comment,
            "Restarts": "0", "QOS": "normal"})

    def pod(self, cluster: str, namespace: str, name: str, *, node: str, start: datetime, end: datetime,
            resources: dict | None = None, annotations: dict | None = None, labels: dict | None = None) -> None:
        """A Succeeded pod (an item of `kubectl get pods -o json`) in scheduler/kubernetes/<cluster>/pods.jsonl,
        its container limited to `resources`."""
        self.pods.setdefault(cluster, []).append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                         "creationTimestamp": iso_z(start), "labels": labels or {}, "annotations": annotations or {}},
            "spec": {"nodeName": node, "containers": [{"name": "main", "resources": {"limits": resources or {}}}]},
            "status": {"phase": "Succeeded", "startTime": iso_z(start), "containerStatuses": [{
                "name": "main", "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "startedAt": iso_z(start), "finishedAt": iso_z(end)}}}]},
        })

    # --- telemetry -----------------------------------------------------------------------------
    def series(self, host: str, day: date, series: list[Series]) -> None:
        """DCGM series of `host` for the whole of `day`, written as given (GPU_I_ID set for MIG instances)."""
        self.series_of.setdefault((host, day), []).extend(series)

    def telemetry(self, host: str, days: list[date], activities: list[Activity], *,
                  power_w: float | None = None) -> None:
        """Full-day DCGM coverage for `days`; GPUs outside every activity are unallocated and idle.
        `power_w`: every GPU reports this DCGM_FI_DEV_POWER_USAGE at every sample."""
        self.telemetry_days.setdefault(host, []).extend(days)
        self.activity.setdefault(host, []).extend(activities)
        if power_w is not None:
            self.power_w[host] = power_w

    # --- runs ----------------------------------------------------------------------------------
    def event(self, run_id: str, event: str, ts: datetime, **fields) -> None:
        self.events.setdefault(run_id, []).append({"event": event, "run_id": run_id, **fields, "ts": iso_z(ts)})

    # --- plans ---------------------------------------------------------------------------------
    def plan(self, name: str, plan: dict | str) -> None:
        """A run plan `plans/<name>` (docs/ingest/plans.md): a mapping written as YAML, or the text itself."""
        self.plans[name] = plan if isinstance(plan, str) else dump_yaml(plan)

    # --- write ---------------------------------------------------------------------------------
    def write(self) -> None:
        land = self.landing
        for file in dict.fromkeys(r["_file"] for r in self.bill_rows):
            rows = [r for r in self.bill_rows if r["_file"] == file]
            columns = bill_columns(rows)
            p = land / "bills" / "focus" / file
            p.parent.mkdir(parents=True, exist_ok=True)
            with p.open("w", newline="") as fh:
                w = csv.DictWriter(fh, columns, lineterminator="\n", extrasaction="ignore")
                w.writeheader()
                w.writerows(rows)
        if self.nodes:
            p = land / "inventory" / "nodes.csv"
            p.parent.mkdir(parents=True, exist_ok=True)
            with p.open("w", newline="") as fh:
                w = csv.DictWriter(fh, INVENTORY_COLUMNS, lineterminator="\n")
                w.writeheader()
                w.writerows(self.nodes)
        for cluster, records in self.sacct.items():
            p = land / "scheduler" / "slurm" / cluster / "sacct.psv"
            p.parent.mkdir(parents=True, exist_ok=True)
            lines = ["|".join(SACCT_COLUMNS)] + ["|".join(r[c] for c in SACCT_COLUMNS) for r in records]
            p.write_text("\n".join(lines) + "\n")
        for host, days in self.telemetry_days.items():
            for d in sorted(set(days)):
                self._write_dcgm(host, d)
        for (host, d), series in self.series_of.items():
            self._write_series(host, d, series)
        for cluster, pods in self.pods.items():
            p = land / "scheduler" / "kubernetes" / cluster / "pods.jsonl"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(json.dumps(pod) + "\n" for pod in pods))
        for run_id, evs in self.events.items():
            p = land / "runs" / f"{_file_part(run_id)}.jsonl"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(json.dumps(e) + "\n" for e in evs))
        for name, text in self.plans.items():
            p = land / "plans" / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        self.config_path.write_text(dump_yaml(self.config))

    def _write_dcgm(self, host: str, day: date) -> None:
        day0 = datetime(day.year, day.month, day.day, tzinfo=UTC)
        n = 86400 // SAMPLE_S
        util = np.zeros((n, 8))
        sm = np.zeros((n, 8))
        fb = np.zeros((n, 8))
        jobs = np.full((n, 8), None, dtype=object)
        for a in self.activity.get(host, []):
            i0 = max(0, int((a.start - day0).total_seconds()) // SAMPLE_S)
            i1 = min(n, int((a.end - day0).total_seconds()) // SAMPLE_S)
            if i1 <= i0:
                continue
            g = list(a.gpus)
            util[i0:i1, g] = 100.0 if a.busy else 0.0
            sm[i0:i1, g] = a.sm if a.busy else 0.0
            fb[i0:i1, g] = a.fb_mib or 0.0
            jobs[i0:i1, g] = a.job
        ts = np.array([int(day0.timestamp()) * 1_000_000 + i * SAMPLE_S * 1_000_000 for i in range(n)], dtype=np.int64)
        # rows ordered by time, gpu, metric
        metrics = ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_SM_ACTIVE"]
        values = [util, sm]
        if any(a.fb_mib is not None for a in self.activity.get(host, [])):
            metrics.append("DCGM_FI_DEV_FB_USED")
            values.append(fb)
        if host in self.power_w:
            metrics.append("DCGM_FI_DEV_POWER_USAGE")
            values.append(np.full((n, 8), self.power_w[host]))
        m = len(metrics)
        t_col = np.repeat(ts, 8 * m)
        gpu_col = np.tile(np.repeat(np.arange(8, dtype=np.int32), m), n)
        metric_col = np.tile(np.array(metrics, dtype=object), n * 8)
        value_col = np.stack(values, axis=2).ravel()
        job_col = np.repeat(jobs.ravel(), m)
        uuids = np.array([f"GPU-{host}-{g}" for g in range(8)], dtype=object)
        table = pa.Table.from_arrays([
            pa.array(t_col, type=pa.timestamp("us", tz="UTC")),
            pa.array(np.full(len(t_col), host, dtype=object), type=pa.string()),
            pa.array(gpu_col, type=pa.int32()),
            pa.array(uuids[gpu_col], type=pa.string()),
            pa.array(np.full(len(t_col), H100, dtype=object), type=pa.string()),
            pa.array(metric_col, type=pa.string()),
            pa.array(value_col, type=pa.float64()),
            pa.array(job_col, type=pa.string()),
        ], schema=DCGM_SCHEMA)
        p = self.landing / "telemetry" / "dcgm" / f"day={day.isoformat()}" / f"{_file_part(host)}.parquet"
        p.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, p)

    def _write_series(self, host: str, day: date, series: list[Series]) -> None:
        day0 = datetime(day.year, day.month, day.day, tzinfo=UTC)
        ts = [day0 + timedelta(seconds=i * SAMPLE_S) for i in range(86400 // SAMPLE_S)]
        cols: dict[str, list] = {k: [] for k in ("timestamp", "hostname", "gpu", "UUID", "modelName", "metric",
                                                 "value", "hpc_job", "GPU_I_ID")}
        for sr in series:
            for t in ts:
                busy = any(a <= t < b for a, b in sr.busy)
                for metric, value in (("DCGM_FI_DEV_GPU_UTIL", 100.0), ("DCGM_FI_PROF_SM_ACTIVE", 0.6)):
                    for k, v in (("timestamp", t), ("hostname", host), ("gpu", sr.gpu),
                                 ("UUID", f"GPU-{host}-{sr.gpu}"), ("modelName", H100), ("metric", metric),
                                 ("value", value if busy else 0.0), ("hpc_job", sr.job), ("GPU_I_ID", sr.instance)):
                        cols[k].append(v)
        schema = DCGM_SCHEMA.append(pa.field("GPU_I_ID", pa.string()))
        table = pa.Table.from_pydict(cols, schema=schema)
        p = self.landing / "telemetry" / "dcgm" / f"day={day.isoformat()}" / f"{_file_part(host)}-series.parquet"
        p.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, p)

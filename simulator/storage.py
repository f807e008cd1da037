"""Storage the simulated runs fill, its daily inventories, the checkpoint bucket's bill line, and the truth of
what each run's checkpoints, logs and datasets cost per tier.

    out/landing/inventory/storage/<project>-lustre/<YYYY-MM-DD>.csv                  (a POSIX listing a day)
    out/landing/inventory/storage/<bucket>/daily/<YYYY-MM-DDT00-00Z>/manifest.json   (S3 Inventory, CSV)
    out/landing/inventory/storage/<bucket>/daily/data/<id>.csv.gz
    out/truth/storage.csv

Where things live, as an operator who never wrote a retention policy leaves them:
- a run's checkpoint (4 shards; 14 bytes a parameter: bf16 weights, fp32 master weights, Adam's two
  moments) is written to its project's Lustre file system at each `checkpoint_saved` event; 48 h later a sync
  job moves it to s3://gpuledger-checkpoints/runs/<run>/step_<step>/ (STANDARD). Nothing is ever pruned;
- every job of a run writes a log on its project's Lustre, growing while the job runs;
- each project's dataset shards sit in s3://gpuledger-shared-data/datasets/<project>/, written months before
  the window, and a tokenized working set on its Lustre, with access times: most read in the last day, one
  folder untouched for months.

A day's snapshot lists what exists at its 00:00 UTC, and the simulated storage meters once a day: what
the snapshot of day D lists is what day D's storage lines bill. So each storage line of a store that has an
inventory is split over the store's objects of that day by bytes: the FSx line of a project (its
provisioned capacity, tagged with the project) over its file system, the untagged shared-data line over the
datasets, and the checkpoint bucket's line (added here: STANDARD at 0.023 USD a GiB-month, untagged) over
the checkpoints. truth/storage.csv holds each (day, store, tier, project, run, kind)'s bytes and that share,
unrounded to 10 places: the ledger's exact split may differ from it by its rounding only.
"""
from __future__ import annotations

import calendar
import csv
import datetime as dt
import gzip
import hashlib
import io
import json
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote_plus

from .fleet import PROJECTS, hexdigest
from .runs import Run

CHECKPOINT_BUCKET = "gpuledger-checkpoints"
DATA_BUCKET = "gpuledger-shared-data"
LUSTRE_TIER = "lustre"
SHARDS = 4
BYTES_PER_PARAM = 14
MOVE_AFTER_S = 48 * 3600
LOG_BYTES_PER_S = 5_000
S3_STANDARD_GIB_MONTH = Decimal("0.023")
GIB = 2 ** 30
DAY_S = 86400
Q10 = Decimal("1e-10")


@dataclass(frozen=True)
class StoredObject:
    store: str
    key: str            # the S3 key, or the POSIX path
    size: int
    modified: int       # epoch seconds
    tier: str
    project: str
    run_id: str         # "" when no run's
    kind: str           # checkpoint, dataset, log
    accessed: int | None = None


def lustre(project: str) -> str:
    return f"{project}-lustre"


def fsx_resource_id(seed: int, project: str) -> str:
    """The ResourceId the FSx line of the project's file system carries (writers_focus.py)."""
    return "fs-0" + hexdigest(seed, "fsx", project, n=16)


def _int(seed: int, *parts: object, lo: int, hi: int) -> int:
    return lo + int(hexdigest(seed, "storage", *parts, n=12), 16) % (hi - lo)


def snapshot(runs: list[Run], seed: int, t0: int, at: int) -> list[StoredObject]:
    """Every object present at `at`, in a fixed order."""
    out: list[StoredObject] = []
    for p in PROJECTS:
        for i in range(_int(seed, "shards", p, lo=3, hi=8)):
            out.append(StoredObject(DATA_BUCKET, f"datasets/{p}/train-{i:05d}.tar",
                                    _int(seed, "shard", p, i, lo=20, hi=120) * GIB,
                                    t0 - _int(seed, "age", p, lo=30, hi=300) * DAY_S, "STANDARD", p, "", "dataset"))
        for i in range(4):
            stale = i == 3     # one folder nobody has read for months
            read = t0 - _int(seed, "atime", p, i, lo=120, hi=240) * DAY_S if stale else at - _int(
                seed, "read", p, i, at, lo=600, hi=DAY_S)
            out.append(StoredObject(lustre(p), f"/lustre/{p}/datasets/tokenized/part-{i:03d}.bin",
                                    _int(seed, "tok", p, i, lo=50, hi=400) * GIB, t0 - 200 * DAY_S,
                                    LUSTRE_TIER, p, "", "dataset", accessed=min(read, at)))
    for run in sorted(runs, key=lambda r: r.run_id):
        shard = run.model["params"] * BYTES_PER_PARAM // SHARDS
        saved = {}
        for ev in run.events:
            if ev.event == "checkpoint_saved" and ev.ts <= at:
                saved[ev.step] = ev.ts      # a step saved again (after a rollback) keeps its latest copy
        for step, ts in sorted(saved.items()):
            moved = ts + MOVE_AFTER_S
            for s in range(SHARDS):
                name = f"step_{step:07d}/shard-{s + 1}-of-{SHARDS}.safetensors"
                if at >= moved:
                    out.append(StoredObject(CHECKPOINT_BUCKET, f"runs/{run.run_id}/{name}", shard, moved,
                                            "STANDARD", run.project, run.run_id, "checkpoint"))
                else:
                    out.append(StoredObject(lustre(run.project), f"/lustre/{run.project}/checkpoints/"
                                            f"{run.run_id}/{name}", shard, ts, LUSTRE_TIER, run.project,
                                            run.run_id, "checkpoint"))
        for job in run.jobs:
            if job.start is None or job.start >= at:
                continue
            last = min(at, job.end if job.end is not None else at)
            out.append(StoredObject(lustre(run.project), f"/lustre/{run.project}/logs/{run.run_id}/"
                                    f"{job.job_id}.log", max(1, (last - job.start) * LOG_BYTES_PER_S), last,
                                    LUSTRE_TIER, run.project, run.run_id, "log"))
    return out


def checkpoint_bucket_line(fd, day: dt.date, objects: list[StoredObject]) -> None:
    """The day's STANDARD storage line of the checkpoint bucket on the AWS account (untagged: the bucket
    is everyone's), priced on the day's snapshot; no line while the bucket is empty."""
    size = sum(o.size for o in objects if o.store == CHECKPOINT_BUCKET)
    if not size:
        return
    d0 = dt.datetime(day.year, day.month, day.day)
    gib_month = (Decimal(size) / GIB / calendar.monthrange(day.year, day.month)[1]).quantize(Q10)
    cost = (gib_month * S3_STANDARD_GIB_MONTH).quantize(Q10)
    fd.add(d0, d0 + dt.timedelta(days=1), "Usage", "Storage", "Amazon Simple Storage Service", cost, cost,
           qty=gib_month, unit="GB-Month", description="$0.023 per GB-Month of storage used",
           resource_id=f"arn:aws:s3:::{CHECKPOINT_BUCKET}", resource_name=CHECKPOINT_BUCKET,
           resource_type="bucket", sku_id="TimedStorage-ByteHrs", tags={})


def _iso(t: int, ms: bool = False) -> str:
    stamp = dt.datetime.fromtimestamp(t, dt.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z" if ms else "%Y-%m-%dT%H:%M:%SZ")


def write_inventories(root: Path, seed: int, day: dt.date, at: int, objects: list[StoredObject]) -> dict:
    """The day's inventories of every store under `root` (landing/inventory/storage)."""
    by_store: dict[str, list[StoredObject]] = defaultdict(list)
    for o in objects:
        by_store[o.store].append(o)
    stats = {"files": 0, "objects": 0}
    for store, objs in sorted(by_store.items()):
        if store.endswith("-lustre"):
            path = root / store / f"{day.isoformat()}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh, lineterminator="\n")
                w.writerow(["path", "size_bytes", "mtime", "tier", "atime"])
                w.writerows([o.key, o.size, _iso(o.modified), o.tier,
                             "" if o.accessed is None else _iso(o.accessed)] for o in objs)
            stats["files"] += 1
        else:
            stats["files"] += _write_s3_inventory(root, seed, store, at, objs)
        stats["objects"] += len(objs)
    return stats


def _write_s3_inventory(root: Path, seed: int, bucket: str, at: int, objs: list[StoredObject]) -> int:
    """An S3 Inventory delivery as AWS writes it (no destination prefix): gzip CSV without a header,
    every field quoted, keys URL-encoded, and a manifest naming it."""
    name = hexdigest(seed, "inventory", bucket, at, n=32)
    text = io.StringIO()
    w = csv.writer(text, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerows([bucket, quote_plus(o.key, safe="/"), o.size, _iso(o.modified, ms=True), o.tier] for o in objs)
    data = gzip.compress(text.getvalue().encode(), mtime=0)
    rel = f"{bucket}/daily/data/{name}.csv.gz"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data)
    manifest = {"sourceBucket": bucket, "destinationBucket": "arn:aws:s3:::gpuledger-inventory",
                "version": "2016-11-30", "creationTimestamp": str(at * 1000), "fileFormat": "CSV",
                "fileSchema": "Bucket, Key, Size, LastModifiedDate, StorageClass",
                "files": [{"key": rel, "size": len(data), "MD5checksum": hashlib.md5(data).hexdigest()}]}
    folder = root / bucket / "daily" / dt.datetime.fromtimestamp(at, dt.timezone.utc).strftime("%Y-%m-%dT%H-%MZ")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 2


class StorageTruth:
    """Each storage line of an inventoried store, split over the store's objects of its day by bytes."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rows: dict[tuple, list] = {}

    def add_day(self, day: dt.date, fd_rows: list, objects: list[StoredObject]) -> None:
        resource_store = {f"arn:aws:s3:::{CHECKPOINT_BUCKET}": CHECKPOINT_BUCKET,
                          f"arn:aws:s3:::{DATA_BUCKET}": DATA_BUCKET,
                          **{fsx_resource_id(self.seed, p): lustre(p) for p in PROJECTS}}
        groups: dict[str, dict[tuple, int]] = defaultdict(lambda: defaultdict(int))
        for o in objects:
            groups[o.store][(o.tier, o.project, o.run_id, o.kind)] += o.size
        for r, _billed, effective, cps, _cpe in fd_rows:
            store = resource_store.get(r["ResourceId"])
            if store is None or r["ServiceCategory"] != "Storage" or cps.date() != day or not groups[store]:
                continue
            total = sum(groups[store].values())
            for (tier, project, run_id, kind), size in groups[store].items():
                key = (day.isoformat(), store, tier, project, run_id, kind, r["BillingCurrency"])
                row = self.rows.setdefault(key, [0, Decimal(0)])
                row[0] += size
                row[1] += effective * size / total

    def write(self, path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["day", "store", "tier", "project", "run_id", "kind", "billing_currency", "bytes",
                        "effective_cost"])
            for key in sorted(self.rows):
                size, cost = self.rows[key]
                w.writerow([*key, size, cost.quantize(Q10)])
        return len(self.rows)


def config_yaml(seed: int) -> str:
    """The config's storage: section for the simulated stores."""
    ids = "\n".join(f"    {lustre(p)}: {fsx_resource_id(seed, p)}" for p in PROJECTS)
    data = "\n".join(f"    - {{pattern: \"s3://{DATA_BUCKET}/datasets/{p}/\", kind: dataset, project: {p}}}"
                     for p in PROJECTS)
    return f"""\
storage:                     # inventoried stores: what each object is (first matching rule wins)
  rules:
    - {{pattern: "s3://{CHECKPOINT_BUCKET}/runs/{{run_id}}/step_{{step}}/", kind: checkpoint}}
    - {{pattern: "/lustre/*/checkpoints/{{run_id}}/step_{{step}}/", kind: checkpoint}}
    - {{pattern: "/lustre/*/logs/{{run_id}}/", kind: log}}
    - {{pattern: "/lustre/*/datasets/", kind: dataset}}
{data}
  resource_ids:              # the FSx file systems' bill ResourceIds
{ids}
  rate_card:                 # what a move to object storage would cost (what tier_down prices)
    - {{tier: STANDARD, price_per_gb_month: "0.023", currency: USD}}
    - {{tier: STANDARD, price_per_gb_month: "0.021", currency: EUR}}
  policy:                    # the lifecycle the guides prescribe: the latest checkpoints on Lustre for a
    checkpoint: {{hot_tiers: [lustre], max_hot_age_hours: 24, cold_tier: STANDARD, keep_last: 3}}
    log: {{hot_tiers: [lustre], max_hot_age_hours: 72, cold_tier: STANDARD}}
    dataset: {{stale_after_days: 90}}   # restart, older ones in the bucket, the last 3 of a finished run
"""

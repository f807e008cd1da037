"""Storage inventories as AWS S3 Inventory and POSIX listings deliver them (docs/ingest/storage.md), for
the tests: a manifest.json with its CSV (gzip, no header, keys URL-encoded), Parquet or ORC data files,
or a listing CSV."""

from __future__ import annotations

import csv
import gzip
import io
import json
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote_plus

SCHEMA = ["Bucket", "Key", "Size", "LastModifiedDate", "StorageClass"]


def s3_inventory(landing: Path, bucket: str, created: datetime, objects: list[tuple], *, fmt: str = "CSV",
                 config_id: str = "daily", data_name: str | None = None, extra_keys: tuple[str, ...] = (),
                 folder: str | None = None) -> Path:
    """Writes an inventory of `bucket` under landing/inventory/storage/<bucket>/<config_id>/: objects are
    (key, size, last_modified text, storage class) — size and time as text, so bad ones can be written.
    `extra_keys` are named by the manifest but not written (files still to land). Returns the manifest."""
    stamp = created.strftime("%Y-%m-%dT%H-%MZ")
    base = landing / "inventory" / "storage" / (folder or bucket) / config_id
    name = data_name or f"{stamp}-part0." + {"CSV": "csv.gz", "Parquet": "parquet", "ORC": "orc"}[fmt]
    data = base / "data" / name
    data.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "CSV":
        out = io.StringIO()
        w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for key, size, modified, tier in objects:
            w.writerow([bucket, quote_plus(key, safe="/"), size, modified, tier])
        data.write_bytes(gzip.compress(out.getvalue().encode()))
        schema = ", ".join(SCHEMA)
    else:
        import pyarrow as pa

        table = pa.table({
            "bucket": [bucket] * len(objects), "key": [o[0] for o in objects],
            "size": pa.array([int(o[1]) for o in objects], pa.int64()),
            "last_modified_date": pa.array([_ts(o[2]) for o in objects], pa.timestamp("ms", tz="UTC")),
            "storage_class": [o[3] for o in objects]})
        if fmt == "Parquet":
            import pyarrow.parquet as pq
            pq.write_table(table, data)
        else:
            import pyarrow.orc as orc
            orc.write_table(table, str(data))
        schema = "message s3.inventory { required binary bucket (UTF8); required binary key (UTF8); ... }"
    prefix = f"inventory-prefix/{bucket}/{config_id}"
    files = [{"key": f"{prefix}/data/{name}", "size": data.stat().st_size, "MD5checksum": "0" * 32}]
    files += [{"key": f"{prefix}/data/{k}", "size": 100, "MD5checksum": "0" * 32} for k in extra_keys]
    manifest = base / stamp / "manifest.json"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({
        "sourceBucket": bucket, "destinationBucket": "arn:aws:s3:::inventory-destination", "version": "2016-11-30",
        "creationTimestamp": str(int(created.timestamp() * 1000)), "fileFormat": fmt, "fileSchema": schema,
        "files": files}, indent=2))
    return manifest


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def posix_listing(landing: Path, fs: str, day: str, rows: list[tuple], *, atime: bool = False) -> Path:
    """landing/inventory/storage/<fs>/<day>.csv with path, size_bytes, mtime, tier (and atime)."""
    p = landing / "inventory" / "storage" / fs / f"{day}.csv"
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["path", "size_bytes", "mtime", "tier"] + (["atime"] if atime else []))
        w.writerows(rows)
    return p

"""Storage inventories into staging (pipelines/ingest/storage_sync.py, docs/ingest/storage.md): the formats
as AWS S3 Inventory and POSIX listings write them, the delivery rule (a store's day is its newest complete
delivery, replaced whole, never half loaded), and what is quarantined."""

from __future__ import annotations

import gzip
import json
import os
from datetime import date, datetime

import duckdb
import pytest

from pipelines.ingest.sources import STORAGE
from pipelines.landing.sync import sync
from pipelines.lib.config import ConfigError, OrgConfig, load_config
from pipelines.lib.config.storage import pattern_regex, rule_macros
from pipelines.lib.warehouse import bootstrap
from tests.support.scenario_builder import utc
from tests.support.storage_landing import posix_listing, s3_inventory
from tests.support.memory_db import memory_db

DAY = date(2026, 11, 2)
OBJECTS = [("runs/r1/step_100/model shard+1.pt", "1000", "2026-11-01T10:00:00.000Z", "STANDARD"),
           ("runs/r2/ünï/ckpt.pt", "2000", "2026-11-01T11:30:00.000Z", "STANDARD_IA")]


@pytest.fixture
def con():
    c = duckdb.connect()
    bootstrap(c)
    yield c
    c.close()


def objects(con, store=None):
    return con.execute("""SELECT store, store_kind, key, size_bytes, last_modified, tier, snapshot_day, source
                          FROM staging.stg_storage__objects WHERE $s IS NULL OR store = $s ORDER BY key""",
                       {"s": store}).fetchall()


@pytest.mark.parametrize("fmt", ["CSV", "Parquet", "ORC"])
def test_each_format_reads_its_objects(tmp_path, con, fmt):
    # CSV keys are URL-encoded (a space as +, a plus as %2B, UTF-8 as %XX); Parquet and ORC keys are plain
    s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2, 0, 5), OBJECTS, fmt=fmt)
    report = sync(con, tmp_path, STORAGE, OrgConfig())
    assert report.rows_staged == 2 and report.rows_quarantined == 0
    assert objects(con) == [
        ("ckpt", "s3", "runs/r1/step_100/model shard+1.pt", 1000, datetime(2026, 11, 1, 10), "STANDARD", DAY,
         "s3_inventory"),
        ("ckpt", "s3", "runs/r2/ünï/ckpt.pt", 2000, datetime(2026, 11, 1, 11, 30), "STANDARD_IA", DAY, "s3_inventory")]


def test_the_csv_is_gzip_without_a_header_in_file_schema_order(tmp_path, con):
    manifest = s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2), [], fmt="CSV")
    doc = json.loads(manifest.read_text())
    assert doc["fileSchema"] == "Bucket, Key, Size, LastModifiedDate, StorageClass"
    data = tmp_path / "inventory/storage/ckpt/daily/data/2026-11-02T00-00Z-part0.csv.gz"
    # the columns in another order, as a manifest's fileSchema may list them
    data.write_bytes(gzip.compress(b'"STANDARD","5","ckpt","a%2Fb%20c"\n'))
    doc["fileSchema"] = "StorageClass, Size, Bucket, Key"
    doc["files"][0]["size"] = data.stat().st_size
    manifest.write_text(json.dumps(doc))
    sync(con, tmp_path, STORAGE, OrgConfig())
    assert [(k, s, t) for _, _, k, s, _, t, _, _ in objects(con)] == [("a/b c", 5, "STANDARD")]


def test_a_manifest_delivered_twice_is_counted_once(tmp_path, con):
    manifest = s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2, 0, 5), OBJECTS)
    sync(con, tmp_path, STORAGE, OrgConfig())
    copy = tmp_path / "inventory/storage/again/2026-11-02T00-05Z/manifest.json"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(manifest.read_bytes())
    report = sync(con, tmp_path, STORAGE, OrgConfig())
    assert report.rows_staged == 0  # the copy is no new delivery: nothing read again
    assert len(objects(con)) == 2
    # a later delivery of the same day (a re-run of the inventory) replaces the day, never adds to it
    s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2, 6), OBJECTS[:1])
    sync(con, tmp_path, STORAGE, OrgConfig())
    assert [o[2] for o in objects(con)] == ["runs/r1/step_100/model shard+1.pt"]
    statuses = dict(con.execute("SELECT file, status FROM ops.landed_files WHERE file LIKE '%manifest.json'").fetchall())
    assert sorted(statuses.values()) == ["current", "superseded", "superseded"]


def test_a_manifest_naming_a_file_not_landed_leaves_the_previous_snapshot(tmp_path, con):
    s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2, 0, 5), OBJECTS)
    sync(con, tmp_path, STORAGE, OrgConfig())
    newer = s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2, 12), OBJECTS[:1], extra_keys=("part1.csv.gz",))
    report = sync(con, tmp_path, STORAGE, OrgConfig())
    assert len(objects(con)) == 2  # not half loaded: the earlier delivery stands
    rel = newer.relative_to(tmp_path).as_posix()
    assert report.missing_from_manifests == {rel: ["inventory-prefix/ckpt/daily/data/part1.csv.gz"]}
    (reason,), = con.execute("SELECT reason FROM ops.quarantine WHERE file = $f AND row_ref = 'file'",
                             {"f": rel}).fetchall()
    assert "part1.csv.gz" in reason and "stays the current snapshot" in reason
    # the missing file lands: the newer delivery is current, its rows replace the day's
    part = tmp_path / "inventory/storage/ckpt/daily/data/part1.csv.gz"
    part.write_bytes(gzip.compress(b'"ckpt","runs/r3/x.pt","3000","2026-11-02T01:00:00.000Z","STANDARD"\n'))
    doc = json.loads(newer.read_text())
    doc["files"][1]["size"] = part.stat().st_size
    newer.write_text(json.dumps(doc))
    sync(con, tmp_path, STORAGE, OrgConfig())
    assert [o[2] for o in objects(con)] == ["runs/r1/step_100/model shard+1.pt", "runs/r3/x.pt"]
    assert con.execute("SELECT count(*) FROM ops.quarantine WHERE file = $f", {"f": rel}).fetchall() == [(0,)]
    assert con.execute("SELECT DISTINCT delivery FROM staging.stg_storage__objects").fetchall() == [(rel,)]


def test_malformed_rows_are_quarantined_with_file_and_row(tmp_path, con):
    s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2), [
        ("good.pt", "10", "2026-11-01T00:00:00.000Z", "STANDARD"), ("bad-size.pt", "12.5", "2026-11-01T00:00:00.000Z", "STANDARD"),
        ("bad-date.pt", "30", "last tuesday", ""), ("neg.pt", "-4", "2026-11-01T00:00:00.000Z", "STANDARD")])
    posix_listing(tmp_path, "lustre1", "2026-11-02", [("/lustre/a", "", "1793500000", "hot", "1793500100")], atime=True)
    report = sync(con, tmp_path, STORAGE, OrgConfig())
    data = "inventory/storage/ckpt/daily/data/2026-11-02T00-00Z-part0.csv.gz"
    assert con.execute("SELECT file, row_ref, reason FROM ops.quarantine ORDER BY file, row_ref").fetchall() == [
        (data, "row 2", "size '12.5' is not an integer"),
        (data, "row 3", "last modified 'last tuesday' is not a time: staged without one"),
        (data, "row 4", "size -4 is negative"),
        ("inventory/storage/lustre1/2026-11-02.csv", "row 1", "size is empty")]
    # the row whose time is bad still counts (its bytes are known); tier defaults to STANDARD
    assert [(k, s, m, t) for _, _, k, s, m, t, _, _ in objects(con)] == [
        ("bad-date.pt", 30, None, "STANDARD"), ("good.pt", 10, datetime(2026, 11, 1), "STANDARD")]
    assert report.rows_quarantined == 4
    payload, = con.execute("SELECT payload FROM ops.quarantine WHERE row_ref = 'row 2'").fetchone()
    assert json.loads(payload)["size"] == "12.5"


def test_a_posix_listing_names_its_file_system_and_day(tmp_path, con):
    posix_listing(tmp_path, "lustre1", "2026-11-02",
                  [("/lustre/runs/r1/ckpt-100/x.pt", 7, "2026-11-01T00:00:00Z", "hot", "2026-11-01T12:00:00Z")],
                  atime=True)
    sync(con, tmp_path, STORAGE, OrgConfig())
    assert con.execute("SELECT store, store_kind, key, size_bytes, last_accessed, tier, snapshot_day "
                       "FROM staging.stg_storage__objects").fetchall() == [
        ("lustre1", "posix", "/lustre/runs/r1/ckpt-100/x.pt", 7, datetime(2026, 11, 1, 12), "hot", DAY)]


def test_a_delivery_removed_from_landing_takes_its_rows(tmp_path, con):
    listing = posix_listing(tmp_path, "lustre1", "2026-11-02", [("/a", 1, "1793500000", "hot")])
    s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2), OBJECTS)
    sync(con, tmp_path, STORAGE, OrgConfig())
    os.remove(listing)
    report = sync(con, tmp_path, STORAGE, OrgConfig())
    assert report.files_removed == ["inventory/storage/lustre1/2026-11-02.csv"]
    assert {o[0] for o in objects(con)} == {"ckpt"}


def test_rule_patterns_compile_to_prefix_regexes_with_their_captures():
    p = "s3://ckpt-bucket/runs/{run_id}/step_{step}/"
    assert pattern_regex(p) == r"^s3://ckpt\-bucket/runs/(?:[^/]+)/step_(?:[0-9]+)/()"
    assert pattern_regex(p, "run_id") == r"^s3://ckpt\-bucket/runs/([^/]+)/step_(?:[0-9]+)/"
    cfg = OrgConfig.model_validate({"storage": {"rules": [
        {"pattern": p, "kind": "checkpoint"}, {"pattern": "s3://*/logs/**.txt", "kind": "log", "project": "ops"},
        {"pattern": "/scratch/it's/", "store": "lustre1", "kind": "dataset"}]}})
    c = duckdb.connect()
    for statement in rule_macros(cfg.storage):
        c.execute(statement)
    got = c.execute("""SELECT url, storage_rule_no(store, url) AS r, storage_rule_run(url, r), storage_rule_step(url, r)
                       FROM (VALUES ('b', 's3://ckpt-bucket/runs/r-7/step_0042/shard.pt'),
                                    ('b', 's3://any/logs/a/b.txt'), ('lustre1', '/scratch/it''s/x'),
                                    ('other', '/scratch/it''s/x'), ('b', 's3://ckpt-bucket/runs/r-7/final.pt')) t(store, url)
                       ORDER BY url, r NULLS LAST""").fetchall()
    assert [row[1:] for row in got] == [(3, None, None), (None, None, None), (2, None, None), (None, None, None),
                                         (1, "r-7", 42)]


def test_config_errors_name_the_key(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("storage:\n  rules:\n    - {pattern: 's3://b/{run}/', kind: checkpoint}\n")
    with pytest.raises(ConfigError) as err:
        load_config(bad)
    assert "storage.rules.0.pattern" in str(err.value) and "only {run_id} and {step} are known" in str(err.value)
    bad.write_text("storage:\n  rate_card:\n    - {tier: STANDARD, price_per_gb_month: '0.023', curency: USD}\n")
    with pytest.raises(ConfigError) as err:
        load_config(bad)
    assert "curency" in str(err.value)


def test_parquet_times_are_utc_whatever_the_sessions_time_zone(tmp_path, con):
    con.execute("SET TimeZone = 'America/New_York'")
    s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2), OBJECTS, fmt="Parquet")
    sync(con, tmp_path, STORAGE, OrgConfig())
    assert [o[4] for o in objects(con)] == [datetime(2026, 11, 1, 10), datetime(2026, 11, 1, 11, 30)]


def test_rows_are_numbered_in_file_order_on_the_warehouses_settings(tmp_path):
    # the daily run's connection does not preserve insertion order and has two threads: the row a bad
    # value is quarantined under must still be its row in the file, deep in a file of many chunks
    c = duckdb.connect(config={"threads": 2, "preserve_insertion_order": False})
    bootstrap(c)
    rows = [(f"k/{i}", str(i), "2026-11-01T00:00:00.000Z", "STANDARD") for i in range(300_000)]
    for i in (7, 123_457, 299_999):
        rows[i] = (rows[i][0], "x", rows[i][2], rows[i][3])
    s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2), rows)
    sync(c, tmp_path, STORAGE, OrgConfig())
    assert c.execute("SELECT row_ref, payload::JSON->>'key' FROM ops.quarantine ORDER BY 1").fetchall() == [
        ("row 123458", "k/123457"), ("row 300000", "k/299999"), ("row 8", "k/7")]
    assert c.execute("SELECT count(*) FILTER (WHERE key <> 'k/' || (_row - 1)), count(*) "
                     "FROM staging.stg_storage__objects").fetchall() == [(0, 299_997)]


def test_inspect_reads_the_current_delivery_once_without_a_warehouse(tmp_path):
    manifest = s3_inventory(tmp_path, "ckpt", utc(2026, 11, 2), OBJECTS + [("bad", "x", "", "STANDARD")])
    copy = tmp_path / "inventory/storage/again/2026-11-02T00-00Z/manifest.json"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(manifest.read_bytes())
    parsed = [STORAGE.parse(memory_db(), p, p.relative_to(tmp_path).as_posix(), OrgConfig()) for p in (manifest, copy)]
    assert sorted(p.rows.height for p in parsed) == [0, 2]
    assert sorted(p.rejects.height for p in parsed) == [0, 1]


def test_a_checkpoint_saved_event_with_a_path_ties_its_objects_to_the_run_and_step():
    from tests.support.sql_steps import given, rows_of, warehouse

    c = warehouse()
    obj = {"_file": "f", "_row": 1, "source": "s3_inventory", "delivery": "m", "snapshot_day": DAY, "store": "b",
           "store_kind": "s3", "size_bytes": 10, "last_modified": datetime(2026, 11, 1), "last_accessed": None,
           "tier": "STANDARD"}
    given(c, "staging.stg_storage__objects", [
        {**obj, "key": "exp/final/model.safetensors"}, {**obj, "key": "exp/final/opt/state.pt"},
        {**obj, "key": "exp/finalist.txt"}, {**obj, "key": "runs/r1/step_5/a.pt"}])
    ev = {"_file": "e", "_row": 1, "job_id": None, "tokens": None, "project": None, "log_format": None}
    given(c, "staging.stg_runs__events", [
        {**ev, "run_id": "r2", "event": "run_config", "ts": datetime(2026, 11, 1), "step": None, "path": None,
         "project": "p-eval"},
        {**ev, "run_id": "r2", "event": "checkpoint_saved", "ts": datetime(2026, 11, 2, 3), "step": 999,
         "path": "s3://b/exp/final"},
        {**ev, "run_id": "r3", "event": "checkpoint_saved", "ts": datetime(2026, 11, 3), "step": 1,
         "path": "s3://b/runs/r1/"}])  # saved after the day: not yet
    cfg = OrgConfig.model_validate({"storage": {"rules": [
        {"pattern": "s3://b/runs/{run_id}/step_{step}/", "kind": "checkpoint"}]}})
    for statement in rule_macros(cfg.storage):
        c.execute(statement)
    got = rows_of(c, "intermediate/int_storage_objects", {"day": DAY, **cfg.sql_params()}, order_by="key")
    assert [(r["key"], r["kind"], r["run_id"], r["step"], r["project"]) for r in got] == [
        ("exp/final/model.safetensors", "checkpoint", "r2", 999, "p-eval"),
        ("exp/final/opt/state.pt", "checkpoint", "r2", 999, "p-eval"),
        ("exp/finalist.txt", "other", None, None, None),
        ("runs/r1/step_5/a.pt", "checkpoint", "r1", 5, None)]


@pytest.mark.parametrize("unit, gib_hours", [
    # as the real exports spell them (FOCUS from AWS, Azure and OCI; CUR's pricing/unit; GCP)
    ("GB-Months", 720), ("GB-Mo", 720), ("GB/Month", 720), ("1 GB/Month", 720), ("GB Months", 720),
    ("gibibyte month", 720), ("GB Hours", 1), ("GB-Hrs", 1), ("GB-Day", 24), ("TB-Mo", 720 * 1024),
    ("100 GB/Month", 72000), (" GB -  Mo ", 720),
    # not bytes kept over time: a request, a transfer, a throughput, no unit
    ("Requests", None), ("GB", None), ("GiB/Second-Months", None), ("MBps-Mo", None), ("IOPS-Mo", None),
    ("", None), (None, None)])
def test_storage_units_are_read_as_gib_hours(con, unit, gib_hours):
    # a November day: a month is 30 days of 24 hours
    got = con.execute("SELECT storage_unit_gib_hours(?, DATE '2026-11-02')", [unit]).fetchone()[0]
    assert got == gib_hours

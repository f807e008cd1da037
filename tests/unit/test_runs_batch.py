"""Trainer event files staged a batch at a time (pipelines/ingest/runs_batch.py) are the per-file
parser's result: the same staged events, quarantine rows and ops.landed_files entries."""

from __future__ import annotations

import dataclasses
import json
from datetime import date

import pytest

from pipelines.ingest.sources import RUNS
from pipelines.landing import sync as landing
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import bootstrap, connect
from tests.unit.test_runs_parser import TRICKY

DAY = date(2026, 11, 1)
PER_FILE = dataclasses.replace(RUNS, batch=None)


def _event(run, step, hour, **extra) -> str:
    return json.dumps({"event": "step", "run_id": run, "job_id": "812", "step": step, "tokens": 1024,
                       "ts": f"2026-11-01T{hour:02d}:00:00Z", **extra})


def _state(con) -> tuple:
    return (
        con.execute("SELECT * EXCLUDE (loaded_at) FROM ops.landed_files ORDER BY ALL").fetchall(),
        con.execute("SELECT * FROM staging.stg_runs__events ORDER BY ALL").fetchall(),
        con.execute("SELECT * FROM ops.quarantine ORDER BY ALL").fetchall(),
    )


@pytest.fixture
def both(tmp_path):
    root = tmp_path / "landing"
    (root / "runs" / "team").mkdir(parents=True)
    cons = {kind: connect(tmp_path / f"{kind}.duckdb") for kind in ("batch", "file")}
    for con in cons.values():
        bootstrap(con)

    def sync(cfg: OrgConfig = OrgConfig()) -> list:
        out = []
        for kind, source in (("batch", RUNS), ("file", PER_FILE)):
            r = landing.sync(cons[kind], root, source, cfg, DAY)
            out.append(((sorted(r.files_read), r.rows_staged, r.rows_quarantined), _state(cons[kind])))
        return out

    yield root, sync
    for con in cons.values():
        con.close()


def test_many_files_with_every_kind_of_line(both):
    root, sync = both
    (root / "runs" / "a.jsonl").write_text("\n".join(_event("a", i, i) for i in range(10)) + "\n")
    (root / "runs" / "tricky.jsonl").write_text("\n".join(TRICKY) + "\n")
    (root / "runs" / "team" / "b.jsonl").write_text("\n".join([_event("b", 1, 1), "", _event("b", 2, 2, tokens=-5),
                                                              _event("b", 3, 3)[:-1], _event("b", 4, 4)]))
    (root / "runs" / "old.jsonl").write_text("\n".join([_event("c", 1, 1)] * 5 + [_event("c", 2, 1).replace("2026", "1999")]))
    (root / "runs" / "empty.jsonl").write_bytes(b"")
    (root / "runs" / "latin1.jsonl").write_bytes(_event("d", 1, 1).replace('"d"', '"d\xe9"').encode("latin-1"))
    (batch, file) = sync()
    assert batch == file
    (files, staged, quarantined), (landed, events, quarantine) = batch
    assert len(files) == 6 and staged == len(events) and quarantined == len(quarantine)
    reasons = {(q[1].rsplit("/", 1)[1], q[2]): q[3] for q in quarantine}
    assert reasons[("b.jsonl", "line 3")] == "tokens -5 is negative"
    assert reasons[("b.jsonl", "line 4")].startswith("not JSON: ")
    assert reasons[("old.jsonl", "line 6")].startswith("ts 1999-11-01 01:00:00 is implausible: before 2000-01-01")
    assert reasons[("empty.jsonl", "file")].startswith("empty file (0 bytes)")
    assert reasons[("latin1.jsonl", "file")].startswith("unreadable file")


def test_a_redelivered_file_replaces_its_rows(both):
    root, sync = both
    (root / "runs" / "a.jsonl").write_text(_event("a", 1, 1) + "\n{broken\n")
    (root / "runs" / "b.jsonl").write_text(_event("b", 1, 1) + "\n")
    sync()
    (root / "runs" / "a.jsonl").write_text(_event("a", 1, 1) + "\n" + _event("a", 2, 2) + "\n")
    (root / "runs" / "c.jsonl").write_text(_event("c", 1, 1) + "\n")
    (batch, file) = sync()
    assert batch == file
    (files, _, _), (_, events, quarantine) = batch
    assert files == ["runs/a.jsonl", "runs/c.jsonl"]
    assert quarantine == [] and [(e[2], e[6]) for e in events if e[2] == "a"] == [("a", 1), ("a", 2)]


def test_a_crash_leaves_every_file_of_the_batch_as_it_was(tmp_path):
    root = tmp_path / "landing"
    (root / "runs").mkdir(parents=True)
    (root / "runs" / "a.jsonl").write_text(_event("a", 1, 1) + "\n")
    con = connect(tmp_path / "w.duckdb")
    bootstrap(con)
    landing.sync(con, root, RUNS, OrgConfig(), DAY)
    before = _state(con)
    (root / "runs" / "a.jsonl").write_text(_event("a", 1, 1) + "\n" + _event("a", 9, 9) + "\n")
    (root / "runs" / "b.jsonl").write_text(_event("b", 1, 1) + "\n")
    broken = dataclasses.replace(RUNS, table="staging/no_such_table")  # the writes fail inside the transaction
    with pytest.raises(Exception, match="no_such_table"):
        landing.sync(con, root, broken, OrgConfig(), DAY)
    assert _state(con) == before
    assert landing.sync(con, root, RUNS, OrgConfig(), DAY).files_read == ["runs/a.jsonl", "runs/b.jsonl"]
    con.close()

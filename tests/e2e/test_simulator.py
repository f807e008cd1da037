"""Tests of the fleet simulator (the pipeline's independent witness). Small fleets only: the whole file runs in
well under a minute. Scale runs (16 nodes x 7 days, 512 nodes x 1 day) are timed by hand, never here."""
from __future__ import annotations

import ast
import csv
import datetime as dt
import json
import re
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
import yaml

from simulator import Knobs, simulate
from simulator.offbill import OFF_BILL
from tests.support.bill_truth import current_bill_files

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = {"rerun_loss", "allocated_idle", "failed_job", "unmonitored", "productive", "idle_unallocated"}
# 2026-10-31 + 2 days crosses the 2026-11-01 fall-back in America/Los_Angeles
START = dt.date(2026, 10, 31)
DAYS = 2
NODES = 8
OFF_BILL_NODES = sum(c.nodes for c in OFF_BILL)   # on-prem and GPU-cloud nodes no bill covers
FORCE = Knobs(interrupt_rate_per_gpu_day=0.3, stall_rate_per_job_day=1.0)


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    return out, simulate(out, START, DAYS, nodes=NODES, seed=7, knobs=FORCE)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _sacct(out: Path, cluster: str) -> list[dict]:
    rows = []
    for p in sorted((out / "landing/scheduler/slurm" / cluster).glob("*.psv")):
        lines = p.read_text().splitlines()
        head = lines[0].split("|")
        for ln in lines[1:]:
            rows.append({**dict(zip(head, ln.split("|"))), "_file": p.name})
    return rows


def _events(out: Path) -> list[dict]:
    return [json.loads(ln) for p in sorted((out / "landing/runs").glob("*.jsonl")) for ln in p.read_text().splitlines()]


# ------------------------------------------------------------------------------------------------ basics

def test_no_pipeline_imports():
    for path in sorted((ROOT / "simulator").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                assert n.split(".")[0] not in ("pipelines", "models"), f"{path.name} imports {n}"


def test_deterministic_by_seed(sim, tmp_path):
    out, _ = sim
    again = tmp_path / "again"
    simulate(again, START, DAYS, nodes=NODES, seed=7, knobs=FORCE)
    a, b = _files(out), _files(again)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    other = tmp_path / "other"
    simulate(other, START, DAYS, nodes=NODES, seed=8, knobs=FORCE)
    c = _files(other)
    assert sum(1 for k in a if k in c and a[k] != c[k]) > len(a) // 2


def test_truth_adds_up(sim):
    out, manifest = sim
    per_day = defaultdict(int)
    with (out / "truth/gpu_seconds.csv").open() as f:
        for r in csv.DictReader(f):
            assert r["category"] in CATEGORIES
            assert int(r["gpu_seconds"]) > 0
            if r["category"] == "idle_unallocated":
                assert r["project"] == "_unallocated"
            per_day[r["day"]] += int(r["gpu_seconds"])
    days = [(START + dt.timedelta(days=i)).isoformat() for i in range(DAYS)]
    assert sorted(per_day) == days
    # every GPU-second of the billed fleet and of the nodes the config costs (simulator/offbill.py)
    assert all(v == 8 * 86400 * (NODES + OFF_BILL_NODES) for v in per_day.values())
    assert manifest["truth"]["billed_gpu_seconds_per_day"] == 8 * 86400 * NODES
    assert manifest["truth"]["config_costed_gpu_seconds_per_day"] == 8 * 86400 * OFF_BILL_NODES


def test_landing_matches_manifest(sim):
    out, m = sim
    land = out / "landing"
    deliveries = sorted((land / "bills/focus").rglob("*.csv"))
    focus = current_bill_files(land)  # what the newest manifest of each billing period names
    assert [p.relative_to(land).as_posix() for p in focus] == m["focus"]["current_files"]
    rows = [r for p in focus for r in csv.DictReader(p.open(newline=""))]
    # two billing accounts, each with two month-to-date deliveries a day; the window's days fall in two
    # months, one current file each per account
    assert m["focus"]["files"] == len(deliveries) == 2 * 2 * DAYS and len(focus) == 2 * 2
    assert m["focus"]["rows"] == len(rows)
    # money per currency, never added across: the manifest's totals are the files' own sums
    assert m["focus"]["currencies"] == sorted(m["focus"]["by_currency"]) == ["EUR", "USD"]
    for currency, totals in m["focus"]["by_currency"].items():
        mine = [r for r in rows if r["BillingCurrency"] == currency]
        eff = sum(Decimal(r["EffectiveCost"]) for r in mine)
        billed = sum(Decimal(r["BilledCost"]) for r in mine)
        assert totals["rows"] == len(mine) > 0
        assert Decimal(totals["effective_cost"]) == eff and Decimal(totals["billed_cost"]) == billed
        for col, total in (("effective_cost", eff), ("billed_cost", billed)):
            days = totals["days"].values()
            assert sum(Decimal(d[f"{col}_lr10"]) for d in days) == total
            assert abs(sum(Decimal(d[col]) for d in days) - total) < Decimal("1e-15")
    assert sum(t["rows"] for t in m["focus"]["by_currency"].values()) == len(rows)
    money = re.compile(r"^-?\d+(\.\d{1,10})?$")
    for r in rows:
        for col in ("ListCost", "ContractedCost", "BilledCost", "EffectiveCost"):
            assert money.match(r[col]), (col, r[col])
    assert len({r["x_LineItemId"] for r in rows}) == len(rows)

    psv = sorted((land / "scheduler/slurm").rglob("*.psv"))
    lines = [ln for p in psv for ln in p.read_text().splitlines()[1:]]
    steps = [ln for ln in lines if "." in ln.split("|")[1]]
    assert m["slurm"]["files"] == len(psv) and m["slurm"]["rows"] == len(lines)
    assert m["slurm"]["steps"] == len(steps) and m["slurm"]["allocations"] == len(lines) - len(steps)

    pq_files = sorted((land / "telemetry/dcgm").rglob("*.parquet"))
    assert m["dcgm"]["files"] == len(pq_files) == (NODES + OFF_BILL_NODES) * DAYS
    n_rows = sum(pq.ParquetFile(p).metadata.num_rows for p in pq_files)
    # five metrics per sample, and the owned nodes' energy counter on each of theirs (every sample present)
    owned_gpu_samples = sum(c.nodes for c in OFF_BILL if c.costing == "owned") * DAYS * 8 * 2880
    assert m["dcgm"]["rows"] == n_rows == 5 * m["dcgm"]["samples"] + owned_gpu_samples

    events = _events(out)
    assert m["runs"]["files"] == len(list((land / "runs").glob("*.jsonl")))
    assert m["runs"]["events"] == len(events)
    assert m["runs"]["tokens"] == sum(e["tokens"] for e in events if e["event"] == "step")
    inv = list(csv.DictReader((land / "inventory/nodes.csv").open()))
    assert m["inventory"]["rows"] == len(inv) == NODES + OFF_BILL_NODES
    assert json.loads((out / "truth/landing_manifest.json").read_text()) == m


def test_bills_are_redelivered_month_to_date(sim):
    """Each later delivery of a billing period repeats every line of the earlier ones (by x_LineItemId),
    the noon delivery's tax is restated by the next, and the newest manifest names the last delivery."""
    out, m = sim
    focus = out / "landing/bills/focus"
    for period in sorted({p.parent.parent for p in focus.rglob("Manifest.json")}):
        manifests = sorted(period.glob("*/Manifest.json"), key=lambda p: (p.stat().st_mtime, p))
        files = [p.parent / json.loads(p.read_text())["dataFiles"][0].rsplit("/", 1)[-1] for p in manifests]
        lines = [{r["x_LineItemId"]: r for r in csv.DictReader(f.open(newline=""))} for f in files]
        assert len(files) >= 2
        for earlier, later in zip(lines, lines[1:]):
            assert earlier.keys() <= later.keys() and len(later) > len(earlier)
        restated = [k for k, r in lines[0].items() if r["EffectiveCost"] != lines[-1][k]["EffectiveCost"]]
        assert restated and all(lines[0][k]["ChargeCategory"] == "Tax" for k in restated)
        assert (out / "landing" / m["focus"]["current_files"][0]).exists()
        assert files[-1].relative_to(out / "landing").as_posix() in m["focus"]["current_files"]


def test_two_bills_one_per_billing_account(sim):
    """West's lines (its nodes' hours, its commitment's Unused and Purchase rows, its tax, the storage and network
    of the projects on west) are billed by the GPU cloud in EUR; everything else by AWS in USD. Each account is
    its own export: its own folder, manifests and billing account, in one currency."""
    out, m = sim
    land = out / "landing"
    rows = [r for p in current_bill_files(land) for r in csv.DictReader(p.open(newline=""))]
    inv = {r["resource_id"]: r["cluster"] for r in csv.DictReader((land / "inventory/nodes.csv").open())
           if r["resource_id"]}     # the nodes no bill covers have no resource id
    west_projects = {"rlhf", "sft", "moe-exp", "long-context"}      # fleet.py: the projects whose storage is west's

    def of_west(r: dict) -> bool:
        tags = json.loads(r["Tags"] or "{}")
        project = tags.get("project") or tags.get("user:project")
        if r["ChargeCategory"] == "Tax":
            return "p4de.24xlarge" in r["ChargeDescription"]       # west's instance type
        if r["ResourceId"] in inv:
            return inv[r["ResourceId"]] == "west"
        if tags.get("pool"):
            return tags["pool"].startswith("west-")
        return project in west_projects and r["ServiceCategory"] in ("Storage", "Networking")

    west = [r for r in rows if of_west(r)]
    assert {r["ChargeCategory"] for r in west} == {"Usage", "Purchase", "Tax"}
    assert {(r["ChargeCategory"], r["CommitmentDiscountStatus"]) for r in west if r["ResourceType"] == "Savings Plan"} \
        == {("Usage", "Unused"), ("Purchase", "")}
    assert {json.loads(r["Tags"]).get("cluster") for r in west if r["ResourceType"] == "instance"} == {"west"}
    assert {r["BillingCurrency"] for r in west} == {"EUR"}
    assert {r["BillingCurrency"] for r in rows if not of_west(r)} == {"USD"}
    accounts = {(r["BillingCurrency"], r["BillingAccountId"], r["BillingAccountName"], r["ProviderName"],
                 r["PublisherName"], r["InvoiceIssuerName"]) for r in rows}
    assert {a[0] for a in accounts} == {"EUR", "USD"} and len(accounts) == 2
    eur, usd = sorted(accounts)
    assert eur[1] != usd[1] and eur[3] != "AWS" and usd[3:] == ("AWS", "AWS", "AWS")
    invoices = {(r["BillingCurrency"], r["BillingPeriodStart"]): r["InvoiceId"] for r in rows}
    assert len(set(invoices.values())) == len(invoices) == 4          # an invoice per account and month
    for r in rows:   # descriptions say the bill's own currency
        symbols = set(re.findall(r"[$€]", r["ChargeDescription"]))
        assert symbols <= ({"€"} if r["BillingCurrency"] == "EUR" else {"$"}), r["ChargeDescription"]
    assert any("€" in r["ChargeDescription"] for r in west)

    # one export per account: its own folder, all of its files (every delivery) of one account and currency
    exports: dict[str, set] = defaultdict(set)
    arns: dict[str, set] = defaultdict(set)
    for p in sorted((land / "bills/focus").rglob("*.csv")):
        export = p.relative_to(land / "bills/focus").parts[0]
        exports[export] |= {(r["BillingAccountId"], r["BillingCurrency"]) for r in csv.DictReader(p.open(newline=""))}
        arns[export].add(json.loads((p.parent / "Manifest.json").read_text())["exportArn"])
    assert {e: {c for _, c in v} for e, v in exports.items()} == {"gpuledger-focus": {"USD"}, "kestrel-focus": {"EUR"}}
    assert all(len(v) == 1 for v in exports.values()) and all(len(v) == 1 for v in arns.values())
    assert arns["gpuledger-focus"] != arns["kestrel-focus"]
    for export, facts in m["focus"]["exports"].items():
        ((account, currency),) = exports[export]
        assert (facts["billing_account_id"], facts["currency"]) == (account, currency)
        assert facts["deliveries"] == 2 * DAYS and len(facts["current_files"]) == 2
        assert all(f.startswith(f"bills/focus/{export}/") for f in facts["current_files"])


def test_formats(sim):
    out, _ = sim
    t = pq.read_table(next((out / "landing/telemetry/dcgm").rglob("*.parquet")))
    assert [(f.name, str(f.type)) for f in t.schema] == [
        ("timestamp", "timestamp[us, tz=UTC]"), ("hostname", "string"), ("gpu", "int32"), ("UUID", "string"),
        ("modelName", "string"), ("metric", "string"), ("value", "double"), ("hpc_job", "string")]
    ts = t.column("timestamp").to_numpy().astype("datetime64[s]").astype(np.int64)
    assert np.all(ts % 30 == 0)
    cfg = yaml.safe_load((out / "gpuledger.yaml").read_text())
    assert list(cfg) == ["teams", "slurm_accounts", "tag_keys", "clusters", "pools", "shared_cost_rule", "idle",
                         "mfu_target", "attention_flops", "ledger", "quarantine", "budgets", "fx", "costs",
                         "storage"]
    assert cfg["ledger"] == {"freshness_checks": False}   # the demo's days are past: no deadline in the UI
    assert cfg["budgets"]["long-context"] == {"amount": "25000", "currency": "EUR"}
    # EUR → USD for each month the window touches (2026-10-31 and 2026-11-01)
    assert cfg["fx"] == {"reporting_currency": "USD", "rates": [
        {"currency": "EUR", "month": m, "rate": "1.08", "source": "simulated"} for m in ("2026-10", "2026-11")]}
    assert cfg["clusters"]["west"]["timezone"] == "America/Los_Angeles"
    head = next((out / "landing/scheduler/slurm/east").glob("*.psv")).read_text().splitlines()[0]
    assert head == "JobIDRaw|JobID|JobName|User|Account|Partition|State|ExitCode|Submit|Start|End|AllocTRES|" \
                   "NodeList|Comment|Restarts|QOS"


# ------------------------------------------------------------------------------------------------ features

def test_interruptions_resume_from_checkpoints(sim):
    out, m = sim
    events = _events(out)
    loaded = [e for e in events if e["event"] == "checkpoint_loaded"]
    assert m["features"]["interruptions"] >= 1 and loaded
    allocs = {r["JobID"]: r for r in _sacct(out, "east") + _sacct(out, "west") if "." not in r["JobID"]}
    for e in loaded:
        saved = [s for s in events if s["event"] == "checkpoint_saved" and s["run_id"] == e["run_id"]
                 and s["ts"] < e["ts"]]
        assert saved and saved[-1]["step"] == e["step"] and saved[-1]["job_id"] != e["job_id"]
        assert allocs[saved[-1]["job_id"]]["State"] in ("NODE_FAIL", "FAILED")
    with (out / "truth/runs.csv").open() as f:
        runs = list(csv.DictReader(f))
    assert sum(int(r["lost_gpu_seconds"]) for r in runs) > 0
    assert sum(int(r["restart_gpu_seconds"]) for r in runs) > 0
    assert any(int(r["tokens_kept"]) < int(r["tokens"]) for r in runs)


def test_scheduler_features(sim):
    out, m = sim
    recs = [r for c in ("east", "west") for r in _sacct(out, c) if "." not in r["JobID"]]
    states = {r["State"].split(" ")[0] for r in recs}
    assert {"TIMEOUT", "REQUEUED", "OUT_OF_MEMORY", "FAILED", "COMPLETED", "RUNNING", "PENDING"} <= states
    assert any(re.fullmatch(r"CANCELLED by \d+", r["State"]) for r in recs)
    hung = [r for r in recs if r["JobName"].startswith("ablation") and r["State"] == "TIMEOUT"]
    assert hung
    requeued = [r for r in recs if r["State"] == "REQUEUED"]
    assert requeued
    again = [r for r in recs if r["JobIDRaw"] == requeued[0]["JobIDRaw"] and r["Restarts"] == "1"]
    assert again and again[0]["Submit"] == requeued[0]["End"]
    arr = {r["JobID"]: r["JobIDRaw"] for r in recs if "_" in r["JobID"]}
    assert len(arr) >= 2 and len(set(arr.values())) == len(arr)
    assert len({j.split("_")[0] for j in arr}) == 1
    # a west job running across local midnight
    crossing = [r for r in _sacct(out, "west") if "." not in r["JobID"] and r["Start"] != "Unknown"
                and r["Start"][:10] != (r["End"] if r["End"] != "Unknown" else r["_file"][6:16])[:10]]
    assert crossing
    # no west sacct time inside the repeated fall-back hour (sacct times carry no offset)
    tz = ZoneInfo("America/Los_Angeles")
    for r in _sacct(out, "west"):
        for col in ("Submit", "Start", "End"):
            if r[col] not in ("Unknown", ""):
                t = dt.datetime.fromisoformat(r[col])
                assert t.replace(tzinfo=tz, fold=0).utcoffset() == t.replace(tzinfo=tz, fold=1).utcoffset()


def test_idle_interactive_and_outage(sim):
    out, m = sim
    truth = list(csv.DictReader((out / "truth/gpu_seconds.csv").open()))
    by_cat = defaultdict(int)
    for r in truth:
        by_cat[r["category"]] += int(r["gpu_seconds"])
    assert by_cat.keys() == CATEGORIES
    # the interactive notebook sits at zero utilisation for at least an hour
    recs = [r for c in ("east", "west") for r in _sacct(out, c) if "." not in r["JobID"]]
    inter = {r["JobID"] for r in recs if r["Partition"] == "interactive"}
    df = pl.read_parquet(out / "landing/telemetry/dcgm/**/*.parquet")
    util = df.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL")
    zero = (util.filter(pl.col("hpc_job").is_in(list(inter)) & (pl.col("value") == 0))
            .group_by("hpc_job", "hostname", "gpu").len())
    assert zero["len"].max() >= 120
    # an outage: consecutive samples of a node more than 90 s apart
    assert m["features"]["outages"]
    o = m["features"]["outages"][0]
    ts = (util.filter((pl.col("hostname") == o["hostname"]) & (pl.col("gpu") == 0))
          .sort("timestamp")["timestamp"].dt.epoch("s").to_numpy())
    assert np.diff(ts).max() > 3600
    assert m["features"]["drained"]


# ------------------------------------------------------------------------------------------------ witness
# The truth must be reconstructible from the landing files alone, with the rules the simulator documents.
# This is a deliberately small, independent re-derivation (not the pipeline): if it agrees with truth/ to the
# GPU-second, the landing zone carries everything the pipeline needs and the witness is self-consistent.

FAILED = ("FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "TIMEOUT", "CANCELLED", "REQUEUED")


def _hosts(nodelist: str) -> list[str]:
    m = re.fullmatch(r"(.*)\[(.*)\]", nodelist)
    if not m:
        return [nodelist]
    out = []
    for part in m.group(2).split(","):
        a, _, b = part.partition("-")
        out += [f"{m.group(1)}{i:03d}" for i in range(int(a), int(b or a) + 1)]
    return out


def _epoch(s: str) -> int:
    return int(dt.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp())


def test_truth_reconstructible_from_landing(sim):
    out, _ = sim
    counts = reconstruct_gpu_seconds(out, START, DAYS)
    truth = {(r["day"], r["team"], r["project"], r["category"]): int(r["gpu_seconds"])
             for r in csv.DictReader((out / "truth/gpu_seconds.csv").open())}
    diff = {k: (counts.get(k, 0), truth.get(k, 0)) for k in set(counts) | set(truth)
            if counts.get(k, 0) != truth.get(k, 0)}
    assert diff == {}


def reconstruct_gpu_seconds(out: Path, start: dt.date, days: int) -> dict:
    """gpu_seconds per (day, team, project, category) from the landing files alone."""
    cfg = yaml.safe_load((out / "gpuledger.yaml").read_text())
    inv = {r["hostname"]: r for r in csv.DictReader((out / "landing/inventory/nodes.csv").open())}
    team_of = {p: t for t, v in cfg["teams"].items() for p in v["projects"]}
    t0 = int(dt.datetime(start.year, start.month, start.day, tzinfo=dt.timezone.utc).timestamp())
    t1 = t0 + days * 86400
    # latest record per (cluster, JobIDRaw, Submit)
    allocs = {}
    for c in ("east", "west", *(o.name for o in OFF_BILL)):     # the off-bill clusters' sacct times are UTC
        tz = ZoneInfo(cfg["clusters"].get(c, {}).get("timezone", "UTC"))

        def loc(s):
            return int(dt.datetime.fromisoformat(s).replace(tzinfo=tz).timestamp())
        for r in _sacct(out, c):
            if "." in r["JobID"] or r["Start"] == "Unknown":
                continue
            tres = dict(kv.split("=") for kv in r["AllocTRES"].split(","))
            allocs[(c, r["JobIDRaw"], r["Submit"])] = {
                "job_id": r["JobID"], "state": r["State"].split(" ")[0], "start": loc(r["Start"]),
                "end": t1 if r["End"] == "Unknown" else loc(r["End"]), "hosts": _hosts(r["NodeList"]),
                "per_node": int(tres["gres/gpu"]) // int(tres["node"]),
                "project": cfg["slurm_accounts"][r["Account"]], "resumed": False}
    by_id = defaultdict(list)
    for a in allocs.values():
        by_id[a["job_id"]].append(a)
    # runs: rerun windows and resumed jobs
    windows = []                                           # (job alloc, a, b)
    per_run = defaultdict(list)
    for e in _events(out):
        per_run[e["run_id"]].append(e)
    for evs in per_run.values():
        for i, e in enumerate(evs):
            if e["event"] != "checkpoint_loaded":
                continue
            new = by_id[e["job_id"]][0]
            first_step = next((_epoch(x["ts"]) for x in evs[i:] if x["event"] == "step"), t1)
            windows.append((new, new["start"], first_step))
            prev_jobs = [x["job_id"] for x in evs[:i] if x["job_id"] != e["job_id"]]
            old = by_id[prev_jobs[-1]][0]
            old["resumed"] = True
            last_save = max(_epoch(x["ts"]) for x in evs[:i] if x["event"] == "checkpoint_saved"
                            and _epoch(x["ts"]) <= old["end"])
            windows.append((old, max(last_save, old["start"]), old["end"]))
    counts = defaultdict(int)
    n = t1 - t0
    df = pl.read_parquet(out / "landing/telemetry/dcgm/**/*.parquet").filter(
        pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL")
    for host, node in sorted(inv.items()):
        d = df.filter(pl.col("hostname") == host)
        sec = (d["timestamp"].dt.epoch("s").to_numpy() - t0)
        gpu = d["gpu"].to_numpy()
        val = d["value"].to_numpy()
        job = d["hpc_job"].to_list()
        # sample at t covers [t, t+30); a gap of <= 90 s between samples is held, a longer one is unmonitored
        times = np.unique(sec)
        util = np.full((8, n), np.nan)          # NaN: not monitored, never idle
        mon = np.zeros(n, dtype=bool)
        grid = np.full((8, len(times)), np.nan)
        grid[gpu, np.searchsorted(times, sec)] = val
        for k, t in enumerate(times):
            nxt = times[k + 1] if k + 1 < len(times) else n
            b = nxt if nxt - t <= 90 else t + 30
            mon[t:b] = True
            util[:, t:b] = grid[:, k:k + 1]
        holder = np.full((8, n), -1)
        cat = np.zeros((8, n), dtype=np.uint8)      # 0 idle_unallocated, 1 prod, 2 unmon, 3 failed, 4 idle, 5 rerun
        mine = [a for a in allocs.values() if host in a["hosts"]]
        for i, a in enumerate(mine):
            if a["per_node"] == 8:
                gpus = list(range(8))
            else:
                gpus = sorted({g for g, j, s in zip(gpu, job, sec) if j == a["job_id"]
                               and a["start"] - 30 < s + t0 < a["end"]})
            a.setdefault("gpus", {})[host] = gpus
            x, y = a["start"] - t0, a["end"] - t0
            for g in gpus:
                holder[g, x:y] = i
                cat[g, x:y] = 1
        cat[(holder >= 0) & ~mon[None, :]] = 2
        for a in mine:
            if a["state"] in FAILED and not a["resumed"] and a["end"] < t1:
                for g in a["gpus"][host]:
                    cat[g, a["start"] - t0:a["end"] - t0] = 3
        for a in mine:
            x, y = a["start"] - t0, a["end"] - t0
            for g in a["gpus"][host]:
                z = np.concatenate([[0], (util[g, x:y] == 0).astype(np.int8), [0]])
                edges = np.flatnonzero(np.diff(z))
                for s0, s1 in zip(edges[::2], edges[1::2]):
                    if s1 - s0 >= 600:
                        cat[g, x + s0:x + s1] = 4
        for a, x, y in windows:
            if host in a["hosts"]:
                for g in a["gpus"][host]:
                    cat[g, x - t0:min(y, t1) - t0] = 5
        names = ("idle_unallocated", "productive", "unmonitored", "failed_job", "allocated_idle", "rerun_loss")
        for di in range(days):
            day = (start + dt.timedelta(days=di)).isoformat()
            sl = slice(di * 86400, (di + 1) * 86400)
            h, c = holder[:, sl].ravel(), cat[:, sl].ravel()
            for i in np.unique(h):
                sel = h == i
                if i < 0:
                    team, proj = (node["team"] or "_unallocated"), "_unallocated"
                else:
                    proj = mine[i]["project"]
                    team = team_of[proj]
                for ci, v in enumerate(np.bincount(c[sel], minlength=6)):
                    if v:
                        counts[(day, team, proj, names[ci])] += int(v)
    return dict(counts)


def reconstruct_runs(out: Path, start: dt.date, days: int) -> dict:
    """truth/runs.csv rows keyed by (run_id, day), from the landing files alone."""
    cfg = yaml.safe_load((out / "gpuledger.yaml").read_text())
    t0 = int(dt.datetime(start.year, start.month, start.day, tzinfo=dt.timezone.utc).timestamp())
    t1 = t0 + days * 86400
    jobs = {}
    for c in ("east", "west"):
        tz = ZoneInfo(cfg["clusters"][c]["timezone"])
        for r in _sacct(out, c):
            if "." in r["JobID"] or r["Start"] == "Unknown" or not r["Comment"].startswith("run_id="):
                continue
            loc = lambda s: int(dt.datetime.fromisoformat(s).replace(tzinfo=tz).timestamp())  # noqa: E731
            tres = dict(kv.split("=") for kv in r["AllocTRES"].split(","))
            jobs[r["JobID"]] = (loc(r["Start"]), t1 if r["End"] == "Unknown" else loc(r["End"]),
                                int(tres["gres/gpu"]), r["Comment"][7:])
    per_run = defaultdict(list)
    for e in _events(out):
        per_run[e["run_id"]].append(e)
    rows = {}

    def add(run, t, key, v):
        day = dt.datetime.fromtimestamp(t, dt.timezone.utc).date().isoformat()
        rows.setdefault((run, day), defaultdict(int))[key] += v

    def spread(run, a, b, gpus, key):
        for di in range(days):
            x, y = max(a, t0 + di * 86400), min(b, t0 + (di + 1) * 86400)
            if y > x:
                add(run, x, key, (y - x) * gpus)

    for run, evs in per_run.items():
        lost_steps = {}                     # job_id -> restored step (its later steps were rolled back)
        for i, e in enumerate(evs):
            if e["event"] == "checkpoint_loaded":
                old = [x["job_id"] for x in evs[:i] if x["job_id"] != e["job_id"]][-1]
                lost_steps[old] = e["step"]
                a, b, g, _ = jobs[old]
                last_save = max(_epoch(x["ts"]) for x in evs[:i] if x["event"] == "checkpoint_saved"
                                and x["job_id"] == old)
                spread(run, last_save, b, g, "lost")
                a2, _, g2, _ = jobs[e["job_id"]]
                first = next((_epoch(x["ts"]) for x in evs[i:] if x["event"] == "step"), t1)
                spread(run, a2, first, g2, "restart")
        for e in evs:
            if e["event"] == "step":
                add(run, _epoch(e["ts"]), "tokens", e["tokens"])
                lost = e["job_id"] in lost_steps and e["step"] > lost_steps[e["job_id"]]
                add(run, _epoch(e["ts"]), "kept", 0 if lost else e["tokens"])
    for jid, (a, b, g, run) in jobs.items():
        spread(run, a, b, 0, "held")
    return {k: (v["tokens"], v["kept"], v["lost"], v["restart"]) for k, v in rows.items()}


def test_runs_truth_reconstructible_from_landing(sim):
    out, _ = sim
    truth = {(r["run_id"], r["day"]): (int(r["tokens"]), int(r["tokens_kept"]), int(r["lost_gpu_seconds"]),
                                       int(r["restart_gpu_seconds"]))
             for r in csv.DictReader((out / "truth/runs.csv").open())}
    assert reconstruct_runs(out, START, DAYS) == truth

"""Kubernetes pod records (`kubectl get pods -o json` items, one a line) →
staging.stg_scheduler__job_allocations rows, one allocation row per GPU pod, beside Slurm records.

`job_id` is `namespace/name`, the DCGM exporter's job label; `account` is the pod's project (label,
namespace mapping, namespace), so the ledger's account → project lookup finds it. How each column is
read, how phases map to sacct states, and what is refused: docs/ingest/kubernetes.md. A pod's GPUs (its
requests and sharing annotations) are read by pipelines/ingest/kubernetes_gpus.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from models.landing import SchedulerJobAllocation
from models.mig_profiles import profile_units, replica_units
from pipelines.ingest.common import RAW, _has_undecodable, cast_failures, clip, first_bad_byte, json_line, numbered_lines, shown, split_by_contract, to_utc, unread_casts, unread_record
from pipelines.landing.parsed import Parsed, file_reject
from pipelines.ingest.slurm import STAGED
from pipelines.lib.config import OrgConfig
from pipelines.ingest.kubernetes_gpus import (FRACTION_ANNOTATION, GPU_INDEX_ANNOTATION, MIG_ANNOTATION, MIG_PREFIX,
                                              RESERVATION_NAMESPACE, SHARED_GPU_RESOURCE, as_dict, as_int, as_text,
                                              gpu_request, shared_gpu)

SOURCE = "kubernetes"
INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
USER_KEYS = ("gpuledger.dev/user", "user")
RUN_ID_LABELS = ("gpuledger.dev/run-id", "run_id")
PHASE_STATES = {"Succeeded": "COMPLETED", "Running": "RUNNING", "Pending": "PENDING", "Failed": "FAILED"}
PREEMPT_REASONS = {"Evicted", "Preempted", "Preempting"}
TIMEOUT_REASONS = {"DeadlineExceeded"}

# raw values kept for the quarantine payload (and as the inputs of the time casts)
RAW_FIELDS = ["namespace", "name", "uid", "phase", "creationTimestamp", "startTime", "finishedAt", "gpus", "line"]
RAW_COLUMNS = [RAW + f for f in RAW_FIELDS]

_SCHEMA: dict[str, pl.DataType] = {
    "_row": pl.Int64,
    "_item": pl.Int64,
    "_pre_errors": pl.List(pl.String),
    **{c: pl.String for c in RAW_COLUMNS},
    "job_key": pl.String,
    "job_id": pl.String,
    "job_name": pl.String,
    "user_name": pl.String,
    "account": pl.String,
    "partition": pl.String,
    "qos": pl.String,
    "state": pl.String,
    "exit_code": pl.String,
    "alloc_tres": pl.String,
    "gpus": pl.Int32,
    "gpu_slices": pl.List(pl.Int32),
    "gpu_index": pl.Int32,
    "node_list": pl.String,
    "hosts": pl.List(pl.String),
    "run_id": pl.String,
    "restarts": pl.Int32,
    "labels": pl.List(pl.String),
}


def parse(path: Path, file: str, cluster: str, cfg: OrgConfig) -> Parsed:
    try:
        data = path.read_bytes()
    except Exception as err:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable pod file: {err}"))
    records: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}
    try:
        objects = list(_objects(data))
    except UnreadableDocument as err:  # refused whole: recorded unreadable, its days incomplete
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable pod file: {err}"))
    for line_no, item_no, obj, error in objects:
        if error is not None:
            records.append({"_row": line_no, "_item": item_no, "_pre_errors": [error], RAW + "line": obj})
            continue
        row = _pod_row(obj, cfg)
        if isinstance(row, str):
            dropped[row] = dropped.get(row, 0) + 1
            continue
        records.append({"_row": line_no, "_item": item_no, **row})
    parsed = _stage(pl.DataFrame(records, schema=_SCHEMA), file, cluster)
    parsed.dropped.update(dropped)
    return parsed


class UnreadableDocument(ValueError):
    """A pod file that is one JSON document and cannot be read as one."""


def _objects(data: bytes):
    """Yields (line number, item number or None, pod object, None) or (line, item, raw text, reason). A
    line with a byte that is not UTF-8 is refused alone, naming the byte's offset in the file."""
    numbered, offsets = numbered_lines(data)
    lines = [line for _, line in numbered]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return
    try:
        json_line(lines[first])
    except ValueError:
        try:  # a pretty-printed document: the whole file is one record
            text = data.decode("utf-8")
            whole = json.loads(text)
        except UnicodeDecodeError as err:
            if _is_json(data.decode("utf-8", errors="replace")):  # one record, with a bad byte in it
                raise UnreadableDocument(f"a pretty-printed document (one record) with a byte that is not "
                                         f"UTF-8 at byte offset {err.start} of the file") from None
        except (ValueError, RecursionError):
            pass
        else:
            yield from _expand(first + 1, whole, text)
            return
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if _has_undecodable(line):
            yield n, None, clip(shown(line)), (f"a byte that is not UTF-8 at byte offset "
                                               f"{offsets[n] + first_bad_byte(line)} of the file")
            continue
        try:
            obj = json_line(line)
        except ValueError as err:
            yield n, None, clip(line), str(err)
            continue
        yield from _expand(n, obj, line)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _expand(n: int, obj: Any, raw: str):
    if isinstance(obj, dict) and isinstance(obj.get("items"), list) and "spec" not in obj:  # List / PodList
        for k, item in enumerate(obj["items"], start=1):
            if not isinstance(item, dict):
                yield n, k, clip(json.dumps(item)), "list item is not a pod object"
            elif (why := _not_a_pod(item, f"item {k}")) is not None:
                yield n, k, clip(json.dumps(item)), why
            else:
                yield n, k, item, None
    elif isinstance(obj, dict) and (why := _not_a_pod(obj, f"line {n}")) is not None:
        yield n, None, clip(raw), why
    elif isinstance(obj, dict):
        yield n, None, obj, None
    else:
        yield n, None, clip(raw), "not a pod object (a JSON object per line, or a List of pods)"


def _not_a_pod(obj: dict[str, Any], where: str) -> str | None:
    """Why an object is refused by its kind (a Node, a Deployment, ... landed among the pods), or None
    for a Pod; an item without `kind` (as `jq '.items[]'` of a pod list can give) is read as one. A Node
    read as a pod would be a job without GPUs on no node, silently."""
    kind = obj.get("kind")
    if kind is None or kind == "Pod":
        return None
    return f"{where} is a {as_text(kind) or repr(kind)}, not a Pod: only pods (one a line, or a List of pods) are read"


def _pod_row(pod: dict[str, Any], cfg: OrgConfig) -> dict[str, Any] | str:
    """A pod's staging values (times still raw text), or why it is skipped: `no_gpu` when it requests no
    GPU, `gpu_reservation_pod` for the pod that holds a shared GPU for others."""
    meta = as_dict(pod.get("metadata"))
    spec = as_dict(pod.get("spec"))
    status = as_dict(pod.get("status"))
    errors: list[str] = []
    name = as_text(meta.get("name"))
    namespace = as_text(meta.get("namespace")) or "default"
    labels = {str(k): as_text(v) for k, v in as_dict(meta.get("labels")).items()}
    annotations = {str(k): as_text(v) for k, v in as_dict(meta.get("annotations")).items()}

    gpus, mig, gpu_errors, has_gpu = gpu_request(spec)
    # a pod that requests its MIG instances as resources states them again in no annotation we count
    shared, shared_errors, mig_gpu_index = shared_gpu(annotations, mig_requested=bool(mig))
    if namespace == RESERVATION_NAMESPACE or labels.get("app") == RESERVATION_NAMESPACE:
        # it holds the physical GPU; the pods that share it are its consumers (docs/ledger.md#fractional-gpus)
        return "gpu_reservation_pod"
    if not (has_gpu or shared or shared_errors):
        return "no_gpu"
    errors += gpu_errors + shared_errors
    replicated = mig.pop(SHARED_GPU_RESOURCE, 0)
    slices = [units for resource, n in mig.items() for units in [profile_units(resource[len(MIG_PREFIX):])] * n
              if units is not None] + shared
    errors += [f"{resource}: MIG profile '{resource[len(MIG_PREFIX):]}' is not in the catalog of MIG profiles "
               "(models/mig_profiles.py)" for resource in mig if profile_units(resource[len(MIG_PREFIX):]) is None]
    node = as_text(spec.get("nodeName"))
    replicas = cfg.kubernetes.replicas_on(node)
    if replicas is not None and replicas > 1:
        # a GPU time-sliced (or shared by MPS) into replicas: each device the pod got is one replica of a GPU
        replicated += gpus or 0
        gpus = 0 if gpus is not None else None
    if replicated and replicas is None:
        errors.append(f"{SHARED_GPU_RESOURCE} '{replicated}' on node '{node}': kubernetes.gpu_replicas names no "
                      "replica count for the node, so its share of a GPU is unknown")
    elif replicated:
        slices += [replica_units(replicas)] * replicated
    gpu_index = as_int(annotations.get(GPU_INDEX_ANNOTATION))
    gpu_index = gpu_index if gpu_index is not None else mig_gpu_index

    if not name:
        errors.append("pod has no metadata.name")
    job_id = f"{namespace}/{name}" if name else None

    phase = as_text(status.get("phase"))
    state = _state(phase, status)
    if phase is None:
        errors.append("pod has no status.phase")
    elif state is None:
        errors.append(f"phase '{phase}' is not a pod phase gpuledger stages (Succeeded, Failed, Running, Pending)")

    containers = [as_dict(c) for c in status.get("containerStatuses") or [] if isinstance(c, dict)]
    terminated = [as_dict(as_dict(c.get("state")).get("terminated")) for c in containers]
    terminated = [t for t in terminated if t]
    finished = [f for t in terminated if (f := as_text(t.get("finishedAt")))]
    end_raw = None
    if phase in ("Succeeded", "Failed"):
        # the API server writes RFC 3339 UTC (`...Z`), which sorts as text; the parse proper (and its
        # quarantine on failure) happens in `_stage`
        transitions = [t for c in status.get("conditions") or [] if isinstance(c, dict)
                       if (t := as_text(c.get("lastTransitionTime")))]
        end_raw = max(finished, default=None) or max(transitions, default=None)

    owners = [as_dict(o) for o in meta.get("ownerReferences") or [] if isinstance(o, dict)]
    owner = next((o for o in owners if o.get("controller")), owners[0] if owners else {})
    selector = {str(k): as_text(v) for k, v in as_dict(spec.get("nodeSelector")).items()}
    project = (
        next((labels[k] for k in cfg.kubernetes.project_labels if labels.get(k)), None)
        or cfg.kubernetes.namespaces.get(namespace)
        or namespace
    )
    tres = [f"gres/gpu={gpus if gpus is not None else '?'}", *(f"{k}={v}" for k, v in mig.items()),
            *([f"{SHARED_GPU_RESOURCE}={replicated}", f"gpu-replicas={replicas}"] if replicated and replicas else []),
            *(f"{k}={annotations[k]}" for k in (FRACTION_ANNOTATION, MIG_ANNOTATION) if annotations.get(k)),
            *(f"{k}={v}" for k, v in annotations.items() if k.startswith(MIG_PREFIX) and not mig), "node=1"]
    return {
        "_pre_errors": errors,
        RAW + "namespace": namespace,
        RAW + "name": name,
        RAW + "uid": as_text(meta.get("uid")),
        RAW + "phase": phase,
        RAW + "creationTimestamp": as_text(meta.get("creationTimestamp")),
        RAW + "startTime": as_text(status.get("startTime")),
        RAW + "finishedAt": end_raw,
        RAW + "gpus": str(gpus) if gpus is not None else None,
        "job_key": as_text(meta.get("uid")) or job_id,
        "job_id": job_id,
        "job_name": as_text(owner.get("name")) or name,
        "user_name": next((v for k in USER_KEYS if (v := labels.get(k))), None)
        or next((v for k in USER_KEYS if (v := annotations.get(k))), None),
        "account": project,
        "partition": next((v for k in INSTANCE_TYPE_KEYS if (v := selector.get(k))), None),
        "qos": as_text(spec.get("priorityClassName")),
        "state": state,
        "exit_code": _exit_code(terminated),
        "alloc_tres": ",".join(tres),
        "gpus": gpus,
        "gpu_slices": slices or None,
        "gpu_index": gpu_index if gpu_index is not None and 0 <= gpu_index <= 255 else None,
        "node_list": node,
        "hosts": [node] if node else None,
        "run_id": next((v for k in RUN_ID_LABELS if (v := labels.get(k))), None),
        "restarts": sum(as_int(c.get("restartCount")) or 0 for c in containers),
        # `key=value`, sorted: what policies.interactive.pod_labels matches a notebook by
        "labels": sorted(f"{k}={v}" for k, v in labels.items() if v is not None) or None,
    }


def _state(phase: str | None, status: dict[str, Any]) -> str | None:
    if phase != "Failed":
        return PHASE_STATES.get(phase or "")
    reasons = {as_text(status.get("reason"))}
    containers = [as_dict(c) for c in status.get("containerStatuses") or [] if isinstance(c, dict)]
    container_reasons = {
        as_text(as_dict(as_dict(c.get(which)).get("terminated")).get("reason")) for c in containers for which in ("state", "lastState")
    }
    disruption = {
        as_text(c.get("reason"))
        for c in status.get("conditions") or []
        if isinstance(c, dict) and c.get("type") == "DisruptionTarget" and str(c.get("status")) == "True"
    }
    if (reasons | container_reasons) & TIMEOUT_REASONS:
        return "TIMEOUT"
    if "DeletionByTaintManager" in disruption:
        return "NODE_FAIL"
    if reasons & PREEMPT_REASONS or disruption:
        return "PREEMPTED"
    if "OOMKilled" in container_reasons:
        return "OUT_OF_MEMORY"
    return "FAILED"


def _exit_code(terminated: list[dict[str, Any]]) -> str | None:
    codes = [c for t in terminated if (c := as_int(t.get("exitCode"))) is not None]
    if not codes:
        return None
    return f"{next((c for c in codes if c != 0), codes[0])}:0"


def _stage(df: pl.DataFrame, file: str, cluster: str) -> Parsed:
    df = df.with_columns(
        pl.lit(file).alias("_file"),
        pl.lit(cluster).alias("cluster"),
        pl.lit(False).alias("is_step"),
        pl.lit(None, dtype=pl.String).alias("parent_job_key"),
        pl.lit(None, dtype=pl.String).alias("array_job_id"),
        pl.lit(None, dtype=pl.String).alias("array_task_id"),
        pl.lit(None, dtype=pl.String).alias("cancelled_by"),
        pl.lit(None, dtype=pl.String).alias("comment"),
        pl.lit(1, dtype=pl.Int32).alias("node_count"),
        to_utc(RAW + "creationTimestamp").alias("submit_ts"),
        to_utc(RAW + "startTime").alias("start_ts"),
        to_utc(RAW + "finishedAt").alias("end_ts"),
    )
    casts = {
        "submit_ts": (RAW + "creationTimestamp", "a time"),
        "start_ts": (RAW + "startTime", "a time"),
        "end_ts": (RAW + "finishedAt", "a time"),
    }
    df = df.with_columns(
        pl.concat_list(pl.col("_pre_errors").fill_null([]), cast_failures(df, casts)).list.drop_nulls().alias("_errors")
    )
    staged, rejects = split_by_contract(
        df,
        SchedulerJobAllocation,
        source=SOURCE,
        file=file,
        staged_columns=STAGED,
        raw_columns=RAW_COLUMNS,
        row_ref=pl.when(pl.col("_item").is_null())
        .then(pl.format("line {}", pl.col("_row")))
        .otherwise(pl.format("line {} item {}", pl.col("_row"), pl.col("_item"))),
        reject_extras={"day": pl.coalesce(pl.col("start_ts"), pl.col("submit_ts")).dt.date()},
        # a pod the reader refused (not JSON, no name, a GPU request it cannot count) is judged by
        # those reasons alone; of the others, the contract judges every time that did read
        unread=unread_record(SchedulerJobAllocation, pl.col("_pre_errors").list.len() > 0, unread_casts(df, casts)),
    )
    return Parsed(rows=staged, rejects=rejects)

"""Kubernetes pod records (`kubectl get pods -o json` items, one a line) →
staging.stg_scheduler__job_allocations rows, one allocation row per GPU pod, beside Slurm records.

`job_id` is `namespace/name`, the DCGM exporter's job label; `account` is the pod's project (label,
namespace mapping, namespace), so the ledger's account → project lookup finds it. How each column is
read, how phases map to sacct states, and what is refused: docs/ingest/kubernetes.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from models.landing import SchedulerJobAllocation
from models.mig_profiles import fraction_units, profile_units, replica_units
from pipelines.ingest.common import RAW, _has_undecodable, cast_failures, clip, first_bad_byte, json_line, numbered_lines, shown, split_by_contract, to_utc, unread_casts, unread_record
from pipelines.landing.parsed import Parsed, file_reject
from pipelines.ingest.slurm import STAGED
from pipelines.lib.config import OrgConfig

SOURCE = "kubernetes"
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
MIG_PREFIX = "nvidia.com/mig-"
# the NVIDIA device plugin's name for a time-sliced or MPS GPU replica when it renames them
# (`renameByDefault: true`); without renaming a replica is a plain `nvidia.com/gpu`
SHARED_GPU_RESOURCE = "nvidia.com/gpu.shared"
INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
USER_KEYS = ("gpuledger.dev/user", "user")
RUN_ID_LABELS = ("gpuledger.dev/run-id", "run_id")
PHASE_STATES = {"Succeeded": "COMPLETED", "Running": "RUNNING", "Pending": "PENDING", "Failed": "FAILED"}
PREEMPT_REASONS = {"Evicted", "Preempted", "Preempting"}
# Run:ai-style GPU sharing: a pod states its fraction of a GPU (and on how many GPUs), or a MIG profile, in
# annotations; the GPU it shares is held by a reservation pod, which is not a consumer.
FRACTION_ANNOTATION = "gpu-fraction"
FRACTION_DEVICES_ANNOTATION = "gpu-fraction-num-devices"
MIG_ANNOTATION = "mig-profile"
GPU_INDEX_ANNOTATION = "runai-gpu"
# Run:ai's MIG pods (its dynamic MIG) request no resource: the instance is stated in annotations, as
# `nvidia.com/mig-<profile>: "N"` and as the device the scheduler gave, `runai-mig-device` (JSON: its
# `name` is the MIG resource, `gpuindex` the physical GPU, `gpuamount` the profile's compute slices)
RUNAI_MIG_DEVICE_ANNOTATION = "runai-mig-device"
MEMORY_ANNOTATION = "gpu-memory"
RESERVATION_NAMESPACE = "runai-reservation"
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
    return f"{where} is a {_str(kind) or repr(kind)}, not a Pod: only pods (one a line, or a List of pods) are read"


def _pod_row(pod: dict[str, Any], cfg: OrgConfig) -> dict[str, Any] | str:
    """A pod's staging values (times still raw text), or why it is skipped: `no_gpu` when it requests no
    GPU, `gpu_reservation_pod` for the pod that holds a shared GPU for others."""
    meta = _dict(pod.get("metadata"))
    spec = _dict(pod.get("spec"))
    status = _dict(pod.get("status"))
    errors: list[str] = []
    name = _str(meta.get("name"))
    namespace = _str(meta.get("namespace")) or "default"
    labels = {str(k): _str(v) for k, v in _dict(meta.get("labels")).items()}
    annotations = {str(k): _str(v) for k, v in _dict(meta.get("annotations")).items()}

    gpus, mig, gpu_errors, has_gpu = _gpu_request(spec)
    # a pod that requests its MIG instances as resources states them again in no annotation we count
    shared, shared_errors, mig_gpu_index = _shared_gpu(annotations, mig_requested=bool(mig))
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
    node = _str(spec.get("nodeName"))
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
    gpu_index = _int(annotations.get(GPU_INDEX_ANNOTATION))
    gpu_index = gpu_index if gpu_index is not None else mig_gpu_index

    if not name:
        errors.append("pod has no metadata.name")
    job_id = f"{namespace}/{name}" if name else None

    phase = _str(status.get("phase"))
    state = _state(phase, status)
    if phase is None:
        errors.append("pod has no status.phase")
    elif state is None:
        errors.append(f"phase '{phase}' is not a pod phase gpuledger stages (Succeeded, Failed, Running, Pending)")

    containers = [_dict(c) for c in status.get("containerStatuses") or [] if isinstance(c, dict)]
    terminated = [_dict(_dict(c.get("state")).get("terminated")) for c in containers]
    terminated = [t for t in terminated if t]
    finished = [f for t in terminated if (f := _str(t.get("finishedAt")))]
    end_raw = None
    if phase in ("Succeeded", "Failed"):
        # the API server writes RFC 3339 UTC (`...Z`), which sorts as text; the parse proper (and its
        # quarantine on failure) happens in `_stage`
        transitions = [t for c in status.get("conditions") or [] if isinstance(c, dict)
                       if (t := _str(c.get("lastTransitionTime")))]
        end_raw = max(finished, default=None) or max(transitions, default=None)

    owners = [_dict(o) for o in meta.get("ownerReferences") or [] if isinstance(o, dict)]
    owner = next((o for o in owners if o.get("controller")), owners[0] if owners else {})
    selector = {str(k): _str(v) for k, v in _dict(spec.get("nodeSelector")).items()}
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
        RAW + "uid": _str(meta.get("uid")),
        RAW + "phase": phase,
        RAW + "creationTimestamp": _str(meta.get("creationTimestamp")),
        RAW + "startTime": _str(status.get("startTime")),
        RAW + "finishedAt": end_raw,
        RAW + "gpus": str(gpus) if gpus is not None else None,
        "job_key": _str(meta.get("uid")) or job_id,
        "job_id": job_id,
        "job_name": _str(owner.get("name")) or name,
        "user_name": next((v for k in USER_KEYS if (v := labels.get(k))), None)
        or next((v for k in USER_KEYS if (v := annotations.get(k))), None),
        "account": project,
        "partition": next((v for k in INSTANCE_TYPE_KEYS if (v := selector.get(k))), None),
        "qos": _str(spec.get("priorityClassName")),
        "state": state,
        "exit_code": _exit_code(terminated),
        "alloc_tres": ",".join(tres),
        "gpus": gpus,
        "gpu_slices": slices or None,
        "gpu_index": gpu_index if gpu_index is not None and 0 <= gpu_index <= 255 else None,
        "node_list": node,
        "hosts": [node] if node else None,
        "run_id": next((v for k in RUN_ID_LABELS if (v := labels.get(k))), None),
        "restarts": sum(_int(c.get("restartCount")) or 0 for c in containers),
        # `key=value`, sorted: what policies.interactive.pod_labels matches a notebook by
        "labels": sorted(f"{k}={v}" for k, v in labels.items() if v is not None) or None,
    }


def _gpu_request(spec: dict[str, Any]) -> tuple[int | None, dict[str, int], list[str], bool]:
    """(whole GPUs, MIG slices and GPU replicas by resource, errors, whether the pod asks for any GPU or
    slice)."""
    errors: list[str] = []
    mig: dict[str, int] = {}
    has_gpu = False

    def request(container: dict[str, Any]) -> int:
        nonlocal has_gpu
        res = _dict(container.get("resources"))
        limits, requests = _dict(res.get("limits")), _dict(res.get("requests"))
        whole = 0
        for key in {*limits, *requests}:
            is_gpu = key in GPU_RESOURCES
            is_mig = str(key).startswith(MIG_PREFIX) or key == SHARED_GPU_RESOURCE
            if not (is_gpu or is_mig):
                continue
            has_gpu = True
            raw = limits.get(key, requests.get(key))
            n = _int(raw)
            if n is None or n < 0:
                errors.append(f"{key} '{raw}' is not a whole number of devices")
                continue
            if is_gpu:
                whole += n
            else:  # a MIG slice (or a GPU replica) is a share of a GPU, not a whole one: in gpu_slices
                mig[key] = mig.get(key, 0) + n
        return whole

    main = sum(request(_dict(c)) for c in spec.get("containers") or [])
    init = max((request(_dict(c)) for c in spec.get("initContainers") or []), default=0)
    return (None if errors else max(main, init)), mig, errors, has_gpu


def _shared_gpu(annotations: dict[str, str | None],
                mig_requested: bool = False) -> tuple[list[int], list[str], int | None]:
    """Share units of the GPU slices a pod's annotations state (Run:ai style), errors, and the physical
    GPU they name: `gpu-fraction` (a fraction of each of `gpu-fraction-num-devices` GPUs, default 1),
    `mig-profile`, or Run:ai's MIG annotations (`_runai_mig`; ignored when the pod requests its MIG
    instances as resources, which are counted already). A `gpu-memory` request alone states no fraction
    gpuledger can weigh, so it is an error."""
    fraction, profile = annotations.get(FRACTION_ANNOTATION), annotations.get(MIG_ANNOTATION)
    if fraction is not None:
        units = fraction_units(fraction)
        devices = _int(annotations.get(FRACTION_DEVICES_ANNOTATION) or 1)
        if units is None:
            return [], [f"{FRACTION_ANNOTATION} '{fraction}' is not a fraction of a GPU in (0, 1]"], None
        if devices is None or devices < 1:
            return [], [f"{FRACTION_DEVICES_ANNOTATION} '{annotations.get(FRACTION_DEVICES_ANNOTATION)}' "
                        "is not a whole number of GPUs"], None
        return [units] * devices, [], None
    if profile is not None:
        units = profile_units(profile)
        if units is None:
            return [], [f"{MIG_ANNOTATION}: MIG profile '{profile}' is not in the catalog of MIG profiles "
                        "(models/mig_profiles.py)"], None
        return [units], [], None
    stated = {k: v for k, v in annotations.items() if k.startswith(MIG_PREFIX)}
    if not mig_requested and (stated or annotations.get(RUNAI_MIG_DEVICE_ANNOTATION) is not None):
        return _runai_mig(stated, annotations.get(RUNAI_MIG_DEVICE_ANNOTATION))
    if annotations.get(MEMORY_ANNOTATION) is not None:
        return [], [f"{MEMORY_ANNOTATION} '{annotations[MEMORY_ANNOTATION]}' states GPU memory, not a fraction of "
                    f"the GPU: annotate the pod with {FRACTION_ANNOTATION}"], None
    return [], [], None


def _runai_mig(stated: dict[str, str | None], device: str | None) -> tuple[list[int], list[str], int | None]:
    """A Run:ai MIG pod's slices: N instances of each `nvidia.com/mig-<profile>: "N"` annotation, else the
    one instance `runai-mig-device` names; the device's `gpuindex` is the physical GPU they are on."""
    errors: list[str] = []
    device_profile, gpu_index = None, None
    if device is not None:
        try:
            info = json.loads(device)
        except ValueError:
            info = None
        name = _str(info.get("name")) if isinstance(info, dict) else None
        if name is None or not name.startswith(MIG_PREFIX):
            errors.append(f"{RUNAI_MIG_DEVICE_ANNOTATION} '{clip(device)}' names no MIG device (JSON with a "
                          f"`name` such as {MIG_PREFIX}1g.5gb)")
        else:
            device_profile, gpu_index = name[len(MIG_PREFIX):], _int(info.get("gpuindex"))
    counts = {key[len(MIG_PREFIX):]: value for key, value in stated.items()}
    if not counts and device_profile is not None:
        counts = {device_profile: "1"}
    slices: list[int] = []
    for profile, value in counts.items():
        n, units = _int(value), profile_units(profile)
        if n is None or n < 0:
            errors.append(f"{MIG_PREFIX}{profile} '{value}' is not a whole number of MIG instances")
        elif units is None:
            errors.append(f"{MIG_PREFIX}{profile}: MIG profile '{profile}' is not in the catalog of MIG profiles "
                          "(models/mig_profiles.py)")
        else:
            slices += [units] * n
    return ([] if errors else slices), errors, gpu_index


def _state(phase: str | None, status: dict[str, Any]) -> str | None:
    if phase != "Failed":
        return PHASE_STATES.get(phase or "")
    reasons = {_str(status.get("reason"))}
    containers = [_dict(c) for c in status.get("containerStatuses") or [] if isinstance(c, dict)]
    container_reasons = {
        _str(_dict(_dict(c.get(which)).get("terminated")).get("reason")) for c in containers for which in ("state", "lastState")
    }
    disruption = {
        _str(c.get("reason"))
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
    codes = [c for t in terminated if (c := _int(t.get("exitCode"))) is not None]
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


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _int(value: Any) -> int | None:
    """A whole number from a JSON number or a Kubernetes quantity string without suffix ("8", 8, 8.0)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


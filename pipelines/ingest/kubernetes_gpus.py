"""A Kubernetes pod's GPUs, read from its JSON for pipelines/ingest/kubernetes.py: the whole GPUs, MIG
instances and GPU replicas its containers request, the shares of a GPU its Run:ai-style annotations
state (a fraction, a MIG profile, Run:ai's dynamic MIG), and the typed reading of the pod's values the
parser shares. What each is and what is refused: docs/ingest/kubernetes.md."""

from __future__ import annotations

import json
from typing import Any

from models.mig_profiles import fraction_units, profile_units
from pipelines.ingest.common import clip

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
MIG_PREFIX = "nvidia.com/mig-"
# the NVIDIA device plugin's name for a time-sliced or MPS GPU replica when it renames them
# (`renameByDefault: true`); without renaming a replica is a plain `nvidia.com/gpu`
SHARED_GPU_RESOURCE = "nvidia.com/gpu.shared"
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


def gpu_request(spec: dict[str, Any]) -> tuple[int | None, dict[str, int], list[str], bool]:
    """(whole GPUs, MIG slices and GPU replicas by resource, errors, whether the pod asks for any GPU or
    slice)."""
    errors: list[str] = []
    mig: dict[str, int] = {}
    has_gpu = False

    def request(container: dict[str, Any]) -> int:
        nonlocal has_gpu
        res = as_dict(container.get("resources"))
        limits, requests = as_dict(res.get("limits")), as_dict(res.get("requests"))
        whole = 0
        for key in {*limits, *requests}:
            is_gpu = key in GPU_RESOURCES
            is_mig = str(key).startswith(MIG_PREFIX) or key == SHARED_GPU_RESOURCE
            if not (is_gpu or is_mig):
                continue
            has_gpu = True
            raw = limits.get(key, requests.get(key))
            n = as_int(raw)
            if n is None or n < 0:
                errors.append(f"{key} '{raw}' is not a whole number of devices")
                continue
            if is_gpu:
                whole += n
            else:  # a MIG slice (or a GPU replica) is a share of a GPU, not a whole one: in gpu_slices
                mig[key] = mig.get(key, 0) + n
        return whole

    main = sum(request(as_dict(c)) for c in spec.get("containers") or [])
    init = max((request(as_dict(c)) for c in spec.get("initContainers") or []), default=0)
    return (None if errors else max(main, init)), mig, errors, has_gpu


def shared_gpu(annotations: dict[str, str | None],
                mig_requested: bool = False) -> tuple[list[int], list[str], int | None]:
    """Share units of the GPU slices a pod's annotations state (Run:ai style), errors, and the physical
    GPU they name: `gpu-fraction` (a fraction of each of `gpu-fraction-num-devices` GPUs, default 1),
    `mig-profile`, or Run:ai's MIG annotations (`_runai_mig`; ignored when the pod requests its MIG
    instances as resources, which are counted already). A `gpu-memory` request alone states no fraction
    gpuledger can weigh, so it is an error."""
    fraction, profile = annotations.get(FRACTION_ANNOTATION), annotations.get(MIG_ANNOTATION)
    if fraction is not None:
        units = fraction_units(fraction)
        devices = as_int(annotations.get(FRACTION_DEVICES_ANNOTATION) or 1)
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
        return runai_mig(stated, annotations.get(RUNAI_MIG_DEVICE_ANNOTATION))
    if annotations.get(MEMORY_ANNOTATION) is not None:
        return [], [f"{MEMORY_ANNOTATION} '{annotations[MEMORY_ANNOTATION]}' states GPU memory, not a fraction of "
                    f"the GPU: annotate the pod with {FRACTION_ANNOTATION}"], None
    return [], [], None


def runai_mig(stated: dict[str, str | None], device: str | None) -> tuple[list[int], list[str], int | None]:
    """A Run:ai MIG pod's slices: N instances of each `nvidia.com/mig-<profile>: "N"` annotation, else the
    one instance `runai-mig-device` names; the device's `gpuindex` is the physical GPU they are on."""
    errors: list[str] = []
    device_profile, gpu_index = None, None
    if device is not None:
        try:
            info = json.loads(device)
        except ValueError:
            info = None
        name = as_text(info.get("name")) if isinstance(info, dict) else None
        if name is None or not name.startswith(MIG_PREFIX):
            errors.append(f"{RUNAI_MIG_DEVICE_ANNOTATION} '{clip(device)}' names no MIG device (JSON with a "
                          f"`name` such as {MIG_PREFIX}1g.5gb)")
        else:
            device_profile, gpu_index = name[len(MIG_PREFIX):], as_int(info.get("gpuindex"))
    counts = {key[len(MIG_PREFIX):]: value for key, value in stated.items()}
    if not counts and device_profile is not None:
        counts = {device_profile: "1"}
    slices: list[int] = []
    for profile, value in counts.items():
        n, units = as_int(value), profile_units(profile)
        if n is None or n < 0:
            errors.append(f"{MIG_PREFIX}{profile} '{value}' is not a whole number of MIG instances")
        elif units is None:
            errors.append(f"{MIG_PREFIX}{profile}: MIG profile '{profile}' is not in the catalog of MIG profiles "
                          "(models/mig_profiles.py)")
        else:
            slices += [units] * n
    return ([] if errors else slices), errors, gpu_index


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def as_int(value: Any) -> int | None:
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

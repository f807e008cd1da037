"""Kubernetes pod exports: scheduler/kubernetes/<cluster>/pods_<YYYY-MM-DD>.jsonl, one file per UTC day.

Used for the one cluster `simulate(..., kubernetes_cluster=...)` names, in place of its sacct files. Each file
is what `kubectl get pods -A -o json` would list at the end of that UTC day (at the window's end for the
last day), one pod object a line: every pod whose pending or running time overlaps the day, in its state at
export time. Times are UTC (`...Z`).

Mapping of the simulator's jobs (the same jobs run; only their records change, so ground truth is unchanged):

- a job is a batch Job; it runs ONE POD PER NODE it holds, because a pod lives on exactly one node (a
  single-node job is one pod, a multi-node training job is one pod per rank, like a PyTorchJob's or a
  JobSet's pods). Each pod holds the job's GPUs of its node (`nvidia.com/gpu` = GPUs per node);
- namespace `team-<team>`; pod name `<job name>-<Slurm-style id>` lowercased to DNS-1123 (`_` of array
  tasks → `-`), `-r<N>` for the N-th requeue instance, `-<rank>` for the pods of a multi-node job. The
  job's id everywhere else in the landing zone (DCGM `hpc_job` on each node, trainer events) is
  `namespace/pod`; trainer events, logged by rank 0, carry rank 0's pod;
- labels `project`, `team`, `user`, `job-name`, and `run_id` for the pods of a training run; owner the
  Job `<pod name without rank>`; `spec.nodeSelector` the instance type; `priorityClassName` the job's QOS;
- state: PENDING → Pending (no nodeName, no containerStatuses: not scheduled yet); RUNNING at export time
  → Running; COMPLETED → Succeeded (Completed, 0); FAILED → Failed (Error, 1); OUT_OF_MEMORY → Failed
  (OOMKilled, 137); TIMEOUT → Failed with pod reason and container reason `DeadlineExceeded` (143,
  activeDeadlineSeconds); NODE_FAIL → Failed with a `DisruptionTarget` condition by
  `DeletionByTaintManager` (the node went NotReady and its pods were evicted; container
  `ContainerStatusUnknown`, 137); CANCELLED by <uid> → Failed (Error, 143: the user deleted the pod, SIGTERM;
  the canceller is an annotation `gpuledger.dev/cancelled-by`); REQUEUED → Failed with pod reason
  `Evicted` (preempted; the Job controller then creates the requeue instance as a new pod).
"""
from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from .fleet import CLUSTER_BY_NAME, PROJECT_TEAM, Fleet, uuid_like
from .jobs import Job

PHASE_OF = {"COMPLETED": "Succeeded", "RUNNING": "Running", "PENDING": "Pending"}
# job state -> (container terminated reason, exit code, pod-level status.reason)
TERMINATED = {
    "COMPLETED": ("Completed", 0, None), "FAILED": ("Error", 1, None), "OUT_OF_MEMORY": ("OOMKilled", 137, None),
    "TIMEOUT": ("DeadlineExceeded", 143, "DeadlineExceeded"), "NODE_FAIL": ("ContainerStatusUnknown", 137, None),
    "CANCELLED": ("Error", 143, None), "REQUEUED": ("Error", 143, "Evicted"),
}


def _iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def namespace(job: Job) -> str:
    return f"team-{PROJECT_TEAM[job.project]}"


def owner_name(job: Job) -> str:
    base = re.sub(r"[^a-z0-9-]+", "-", job.name.lower()).strip("-")[:40] or "job"
    name = f"{base}-{job.job_id.replace('_', '-')}"
    return f"{name}-r{job.restarts}" if job.restarts else name


def pod_ids(job: Job) -> list[str]:
    """`namespace/pod` of each of the job's pods, by rank (one per node; one for a single-node job)."""
    owner = owner_name(job)
    names = [owner] if job.n_nodes == 1 else [f"{owner}-{r}" for r in range(job.n_nodes)]
    return [f"{namespace(job)}/{n}" for n in names]


def assign_pod_ids(jobs: list[Job], cluster: str) -> dict[int, tuple[str, list[str]]]:
    """Rename the cluster's jobs to their rank-0 pod (`namespace/pod`), the id that telemetry and trainer
    events carry. Returns job key -> (owner Job name, pod ids by rank); call once, before any writer."""
    out = {}
    for j in jobs:
        if j.cluster == cluster:
            out[j.key] = (owner_name(j), pod_ids(j))
    for j in jobs:
        if j.key in out:
            j.job_id = out[j.key][1][0]
    return out


def write_pods(root: Path, fleet: Fleet, jobs: list[Job], pods: dict[int, tuple[str, list[str]]], cluster: str,
               t0: int, t1: int) -> dict:
    hosts = [n.hostname for n in fleet.nodes]
    spec = CLUSTER_BY_NAME[cluster]
    cjobs = sorted((j for j in jobs if j.cluster == cluster), key=lambda j: (j.submit, j.key))
    stats = {"files": 0, "rows": 0, "pods": 0}
    seen: set[str] = set()
    day0 = t0
    while day0 < t1:
        a, x = day0, min(day0 + 86400, t1)
        lines = []
        for j in cjobs:
            gone = j.end if (j.start is not None and j.end is not None) else None
            if j.submit < x and (gone is None or gone > a):
                owner, ids = pods[j.key]
                for rank, pid in enumerate(ids):
                    pod = _pod(j, rank, pid, owner, x, hosts, spec, fleet.seed)
                    lines.append(json.dumps(pod, separators=(",", ":")))
                    seen.add(pid)
        day = dt.datetime.fromtimestamp(day0, dt.timezone.utc).date()
        path = root / cluster / f"pods_{day.isoformat()}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
        stats["files"] += 1
        stats["rows"] += len(lines)
        day0 += 86400
    stats["pods"] = len(seen)
    return stats


def _pod(j: Job, rank: int, pid: str, owner: str, x: int, hosts: list[str], spec, seed: int) -> dict:
    ns, name = pid.split("/", 1)
    g = j.gpus_per_node
    labels = {"project": j.project, "team": PROJECT_TEAM[j.project], "user": j.user, "job-name": owner}
    if j.run_id:
        labels["run_id"] = j.run_id
    meta = {"name": name, "namespace": ns, "uid": uuid_like(seed, "pod", j.cluster, pid),
            "creationTimestamp": _iso(j.submit), "labels": labels,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": owner, "controller": True,
                                 "uid": uuid_like(seed, "job", j.cluster, ns, owner)}]}
    resources = {"nvidia.com/gpu": str(g), "cpu": str(g * spec.cpus_per_gpu), "memory": f"{g * spec.mem_gb_per_gpu}Gi"}
    pspec = {"restartPolicy": "Never", "priorityClassName": j.qos,
             "nodeSelector": {"node.kubernetes.io/instance-type": spec.instance_type},
             "containers": [{"name": "main", "image": "registry.example.com/ml/trainer:latest",
                             "resources": {"limits": dict(resources), "requests": dict(resources)}}]}
    if j.start is None or j.start >= x:
        status = {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "lastTransitionTime": _iso(j.submit)}]}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pspec, "status": status}
    pspec["nodeName"] = hosts[j.nodes[rank]]
    status: dict = {"startTime": _iso(j.start)}
    running = j.end is None or j.end > x
    if running:
        status["phase"] = "Running"
        cstate = {"running": {"startedAt": _iso(j.start)}}
    else:
        state = j.state.split(" ")[0]
        reason, code, pod_reason = TERMINATED[state]
        status["phase"] = PHASE_OF.get(state, "Failed")
        if pod_reason:
            status["reason"] = pod_reason
        if state == "NODE_FAIL":
            status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                                     "lastTransitionTime": _iso(j.end)}]
        if state == "CANCELLED" and j.cancel_uid is not None:
            meta["annotations"] = {"gpuledger.dev/cancelled-by": str(j.cancel_uid)}
        cstate = {"terminated": {"reason": reason, "exitCode": code, "startedAt": _iso(j.start),
                                 "finishedAt": _iso(j.end)}}
    status["containerStatuses"] = [{"name": "main", "ready": running, "restartCount": 0, "state": cstate}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pspec, "status": status}

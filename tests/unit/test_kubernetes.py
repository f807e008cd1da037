import json
from datetime import datetime

import pytest

from pipelines.ingest import kubernetes, slurm
from pipelines.lib.config import ClusterConfig, OrgConfig, load_config

FILE = "scheduler/kubernetes/k8s-east/pods-2024-05-01.jsonl"
CFG = OrgConfig(kubernetes={"namespaces": {"ml-research": "llm-7b", "vision": "vision-x"}})


def _pod(name, namespace="ml-research", *, phase="Succeeded", gpus="8", node="gpu-node-1", uid=None,
         labels=None, owner=None, created="2024-05-01T09:58:00Z", start="2024-05-01T10:00:00Z",
         finished="2024-05-01T12:00:00Z", exit_code=0, reason=None, pod_reason=None, restarts=0,
         resources=None, extra_status=None, spec_extra=None, annotations=None):
    terminated = None
    if finished is not None:
        terminated = {"exitCode": exit_code, "startedAt": start, "finishedAt": finished,
                      **({"reason": reason} if reason else {})}
    container_status = {"name": "main", "restartCount": restarts,
                        "state": {"terminated": terminated} if terminated else {"running": {"startedAt": start}}}
    limits = resources if resources is not None else ({"cpu": "16", "nvidia.com/gpu": gpus} if gpus else {"cpu": "4"})
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "namespace": namespace, "uid": uid or f"uid-{name}", "creationTimestamp": created,
            "labels": labels or {},
            **({"annotations": annotations} if annotations else {}),
            **({"ownerReferences": [{"kind": owner[0], "name": owner[1], "controller": True}]} if owner else {}),
        },
        "spec": {"nodeName": node, "containers": [{"name": "main", "resources": {"limits": limits}}], **(spec_extra or {})},
        "status": {"phase": phase, "startTime": start, "containerStatuses": [container_status], **(extra_status or {})},
    }
    if pod_reason:
        pod["status"]["reason"] = pod_reason
    if start is None:
        del pod["status"]["startTime"]
        pod["status"]["containerStatuses"] = []
        del pod["spec"]["nodeName"]
    return pod


def _lines():
    pt_labels = {"training.kubeflow.org/job-name": "llama-ft", "training.kubeflow.org/replica-type": "master"}
    master = _pod("llama-ft-master-0", labels={**pt_labels, "project": "llm-70b", "user": "alice"},
                  owner=("PyTorchJob", "llama-ft"), node="gpu-node-1",
                  spec_extra={"priorityClassName": "high", "nodeSelector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"}})
    worker = _pod("llama-ft-worker-0", labels={**pt_labels, "training.kubeflow.org/replica-type": "worker", "project": "llm-70b"},
                  owner=("PyTorchJob", "llama-ft"), node="gpu-node-2", finished="2024-05-01T12:00:05Z", restarts=2)
    kueue = _pod("eval-job-x7k2p", namespace="vision", owner=("Job", "eval-job"), gpus="4", node="gpu-node-3",
                 labels={"kueue.x-k8s.io/queue-name": "team-a", "gpuledger.dev/run-id": "run-42", "job-name": "eval-job"})
    oom = _pod("oom-pod", namespace="scratch", phase="Failed", exit_code=137, reason="OOMKilled", gpus="1",
               finished="2024-05-01T10:30:00Z")
    evicted = _pod("evicted-pod", phase="Failed", pod_reason="Evicted", gpus="2", finished=None,
                   extra_status={"conditions": [{"type": "Ready", "status": "False",
                                                 "lastTransitionTime": "2024-05-01T11:15:00Z"}]})
    pending = _pod("pending-pod", phase="Pending", start=None, finished=None)
    cpu_only = _pod("cpu-only", gpus=None)
    mig = _pod("mig-pod", resources={"nvidia.com/mig-1g.10gb": "1"}, node="gpu-node-4")
    amd_in_list = _pod("amd-pod", resources={"amd.com/gpu": 2}, node="mi300-1")
    cpu_in_list = _pod("cpu-in-list", gpus=None)
    pod_list = {"apiVersion": "v1", "kind": "List", "items": [amd_in_list, cpu_in_list], "metadata": {"resourceVersion": ""}}
    backwards = _pod("backwards", start="2024-05-01T12:00:00Z", finished="2024-05-01T11:00:00Z")
    bad_time = _pod("bad-time", start="yesterday-ish")
    nameless = _pod("x")
    del nameless["metadata"]["name"]
    unknown = _pod("lost-node", phase="Unknown", finished=None)
    deadline = _pod("too-slow", phase="Failed", pod_reason="DeadlineExceeded", exit_code=143)
    return [
        json.dumps(master),        # 1
        json.dumps(worker),        # 2
        json.dumps(kueue),         # 3
        json.dumps(oom),           # 4
        "",                        # 5: blank, skipped
        json.dumps(evicted),       # 6
        json.dumps(pending),       # 7
        json.dumps(cpu_only),      # 8: dropped
        json.dumps(mig),           # 9
        json.dumps(pod_list),      # 10: PodList, item 2 dropped
        '{"metadata": {"name": "truncated"',  # 11: broken
        json.dumps(backwards),     # 12
        json.dumps(bad_time),      # 13
        json.dumps(nameless),      # 14
        json.dumps(unknown),       # 15
        json.dumps(deadline),      # 16
        "[1, 2]",                  # 17: JSON but not a pod
    ]


@pytest.fixture
def parsed(tmp_path):
    path = tmp_path / "pods.jsonl"
    path.write_text("\n".join(_lines()) + "\n")
    return kubernetes.parse(path, FILE, "k8s-east", CFG)


def _by_id(rows):
    return {r["job_id"]: r for r in rows.iter_rows(named=True)}


def test_schema_matches_slurm_staging(parsed, tmp_path):
    sacct = tmp_path / "sacct.psv"
    sacct.write_text("JobIDRaw|JobID|State|Start|End|AllocTRES|NodeList\n"
                     "1|1|COMPLETED|2024-05-01T00:00:00|2024-05-01T01:00:00|gres/gpu=1,node=1|n1\n")
    reference = slurm.parse(sacct, "x.psv", "west", ClusterConfig())
    assert parsed.rows.columns == slurm.STAGED
    assert parsed.rows.schema == reference.rows.schema
    assert parsed.rejects.schema == reference.rejects.schema


def test_pytorchjob_pods(parsed):
    rows = _by_id(parsed.rows)
    master, worker = rows["ml-research/llama-ft-master-0"], rows["ml-research/llama-ft-worker-0"]
    assert master == {
        "_file": FILE, "_row": 1, "cluster": "k8s-east", "job_key": "uid-llama-ft-master-0",
        "job_id": "ml-research/llama-ft-master-0", "parent_job_key": None, "is_step": False,
        "array_job_id": None, "array_task_id": None, "job_name": "llama-ft", "user_name": "alice",
        "account": "llm-70b",  # the project label wins over the namespace mapping
        "partition": "p4d.24xlarge", "qos": "high", "state": "COMPLETED", "cancelled_by": None,
        "exit_code": "0:0", "submit_ts": datetime(2024, 5, 1, 9, 58), "start_ts": datetime(2024, 5, 1, 10),
        "end_ts": datetime(2024, 5, 1, 12), "alloc_tres": "gres/gpu=8,node=1", "gpus": 8, "gpu_slices": None, "gpu_index": None, "node_count": 1,
        "node_list": "gpu-node-1", "hosts": ["gpu-node-1"], "comment": None,
        "run_id": None,  # the PyTorchJob name is no run id: master and worker run side by side
        "restarts": 0,
        # every label, as `key=value`: what policies.interactive.pod_labels tells a notebook by
        "labels": ["project=llm-70b", "training.kubeflow.org/job-name=llama-ft",
                   "training.kubeflow.org/replica-type=master", "user=alice"],
    }
    assert worker["hosts"] == ["gpu-node-2"] and worker["gpus"] == 8 and worker["restarts"] == 2
    assert worker["end_ts"] == datetime(2024, 5, 1, 12, 0, 5) and worker["user_name"] is None
    assert worker["run_id"] is None and worker["partition"] is None and worker["qos"] is None


def test_kueue_job_pod_and_project_resolution(parsed):
    rows = _by_id(parsed.rows)
    kueue = rows["vision/eval-job-x7k2p"]
    assert (kueue["state"], kueue["gpus"], kueue["job_name"], kueue["run_id"]) == ("COMPLETED", 4, "eval-job", "run-42")
    assert kueue["account"] == "vision-x"  # namespace mapping
    assert rows["scratch/oom-pod"]["account"] == "scratch"  # unmapped namespace: the namespace itself
    assert rows["ml-research/evicted-pod"]["account"] == "llm-7b"
    assert rows["ml-research/evicted-pod"]["job_name"] == "evicted-pod"  # no owner: the pod name


def test_failure_states(parsed):
    rows = _by_id(parsed.rows)
    oom = rows["scratch/oom-pod"]
    assert (oom["state"], oom["exit_code"], oom["gpus"]) == ("OUT_OF_MEMORY", "137:0", 1)
    assert oom["end_ts"] == datetime(2024, 5, 1, 10, 30)
    evicted = rows["ml-research/evicted-pod"]
    assert evicted["state"] == "PREEMPTED" and evicted["exit_code"] is None
    # no container finished: the pod's last condition transition stands for its end
    assert evicted["end_ts"] == datetime(2024, 5, 1, 11, 15)
    slow = rows["ml-research/too-slow"]
    assert (slow["state"], slow["exit_code"]) == ("TIMEOUT", "143:0")


def test_pending_mig_and_list(parsed):
    rows = _by_id(parsed.rows)
    pending = rows["ml-research/pending-pod"]
    assert pending["state"] == "PENDING" and pending["start_ts"] is None and pending["end_ts"] is None
    assert pending["hosts"] is None and pending["node_list"] is None and pending["gpus"] == 8
    mig = rows["ml-research/mig-pod"]
    assert mig["gpus"] == 0 and mig["alloc_tres"] == "gres/gpu=0,nvidia.com/mig-1g.10gb=1,node=1"
    assert mig["gpu_slices"] == [1000]  # 1 of the GPU's 7 compute slices, in units of 1/7000 GPU
    amd = rows["ml-research/amd-pod"]
    assert (amd["gpus"], amd["_row"], amd["hosts"]) == (2, 10, ["mi300-1"])
    assert "ml-research/cpu-only" not in rows and "ml-research/cpu-in-list" not in rows
    assert parsed.dropped == {"no_gpu": 2}
    assert parsed.rows.height == 9


def test_quarantine(parsed):
    rejects = {r["row_ref"]: r for r in parsed.rejects.iter_rows(named=True)}
    assert set(rejects) == {"line 11", "line 12", "line 13", "line 14", "line 15", "line 17"}
    assert all(r["source"] == "kubernetes" and r["file"] == FILE for r in rejects.values())
    assert rejects["line 11"]["reason"].startswith("not JSON")
    assert json.loads(rejects["line 11"]["payload"])["line"] == '{"metadata": {"name": "truncated"'
    assert rejects["line 12"]["reason"] == "End must not be before Start"
    assert rejects["line 12"]["day"] is not None
    assert rejects["line 13"]["reason"] == "startTime 'yesterday-ish' is not a time"
    assert rejects["line 14"]["reason"] == "pod has no metadata.name"
    assert "phase 'Unknown'" in rejects["line 15"]["reason"]
    assert rejects["line 17"]["reason"].startswith("not a pod object")
    payload = json.loads(rejects["line 12"]["payload"])
    assert payload["name"] == "backwards" and payload["finishedAt"] == "2024-05-01T11:00:00Z"


def test_list_item_quarantine_ref_and_pretty_printed_file(tmp_path):
    broken = _pod("broken", start="nope")
    good = _pod("good")
    doc = {"apiVersion": "v1", "kind": "List", "items": [good, broken]}
    path = tmp_path / "pods.jsonl"
    path.write_text(json.dumps(doc, indent=2))  # plain `kubectl get pods -o json` output
    out = kubernetes.parse(path, FILE, "k8s-east", OrgConfig())
    assert out.rows["job_id"].to_list() == ["ml-research/good"]
    assert out.rejects["row_ref"].to_list() == ["line 1 item 2"]


def test_bad_gpu_quantity_and_empty_file(tmp_path):
    path = tmp_path / "pods.jsonl"
    path.write_text(json.dumps(_pod("half", resources={"nvidia.com/gpu": "500m"})) + "\n")
    out = kubernetes.parse(path, FILE, "k8s-east", OrgConfig())
    assert out.rows.height == 0
    assert out.rejects["reason"].to_list() == ["nvidia.com/gpu '500m' is not a whole number of devices"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    out = kubernetes.parse(empty, FILE, "k8s-east", OrgConfig())
    assert out.rows.height == 0 and out.rejects.height == 0 and out.rows.columns == slurm.STAGED


def test_config_loads_kubernetes_section(tmp_path):
    cfg_path = tmp_path / "org.yaml"
    cfg_path.write_text("kubernetes:\n  namespaces:\n    ml-research: llm-7b\n  project_labels: [team-project]\n")
    cfg = load_config(cfg_path)
    assert cfg.kubernetes.namespaces == {"ml-research": "llm-7b"}
    assert cfg.kubernetes.project_labels == ["team-project"]
    assert OrgConfig().kubernetes.project_labels == ["project", "gpuledger.dev/project"]
    path = tmp_path / "pods.jsonl"
    path.write_text(json.dumps(_pod("p", labels={"team-project": "special", "project": "ignored"})) + "\n")
    assert kubernetes.parse(path, FILE, "c", cfg).rows["account"].to_list() == ["special"]


def _parse_pods(tmp_path, pods):
    path = tmp_path / "pods.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in pods))
    return kubernetes.parse(path, FILE, "k8s-east", OrgConfig())


def test_mig_resources_are_slices_of_a_gpu(tmp_path):
    out = _parse_pods(tmp_path, [
        _pod("big", resources={"nvidia.com/mig-3g.40gb": "2"}),
        _pod("mixed", resources={"nvidia.com/gpu": "1", "nvidia.com/mig-1g.10gb+me": 1}),
        _pod("a30", resources={"nvidia.com/mig-2g.12gb": "1"}),
        _pod("unknown", resources={"nvidia.com/mig-5g.50gb": "1"}),
    ])
    rows = _by_id(out.rows)
    # 3/7 of a GPU is 3000 of its 7000 units; an A30 has 4 compute slices, so 2g.12gb is half of one
    assert (rows["ml-research/big"]["gpus"], rows["ml-research/big"]["gpu_slices"]) == (0, [3000, 3000])
    assert (rows["ml-research/mixed"]["gpus"], rows["ml-research/mixed"]["gpu_slices"]) == (1, [1000])
    assert rows["ml-research/a30"]["gpu_slices"] == [3500]
    assert out.rejects["reason"].to_list() == [
        "nvidia.com/mig-5g.50gb: MIG profile '5g.50gb' is not in the catalog of MIG profiles (models/mig_profiles.py)"]


def test_runai_fractions_and_the_reservation_pod(tmp_path):
    reservation = _pod("runai-reservation-gpu-node-1-x7", namespace="runai-reservation", gpus="1",
                       labels={"app": "runai-reservation", "runai-gpu-group": "g1"},
                       annotations={"run.ai/reserve_for_gpu_index": "GPU-8983c66a"})
    half = _pod("infer-a", gpus=None, annotations={"gpu-fraction": "0.5", "runai-gpu": "3"},
                labels={"runai-gpu-group": "g1"})
    third = _pod("infer-b", gpus=None, annotations={"gpu-fraction": "0.33", "gpu-fraction-num-devices": "2"})
    mig = _pod("infer-c", gpus=None, annotations={"mig-profile": "2g.20gb"})
    bad = _pod("infer-d", gpus=None, annotations={"gpu-fraction": "1.5"})
    memory = _pod("infer-e", gpus=None, annotations={"gpu-memory": "8000"})
    out = _parse_pods(tmp_path, [reservation, half, third, mig, bad, memory])
    rows = _by_id(out.rows)
    # the reservation pod holds the physical GPU for the sharing pods: it is no consumer of its own
    assert out.dropped == {"gpu_reservation_pod": 1}
    assert set(rows) == {"ml-research/infer-a", "ml-research/infer-b", "ml-research/infer-c"}
    a = rows["ml-research/infer-a"]
    assert (a["gpus"], a["gpu_slices"], a["gpu_index"]) == (0, [3500], 3)
    assert a["alloc_tres"] == "gres/gpu=0,gpu-fraction=0.5,node=1"
    assert rows["ml-research/infer-b"]["gpu_slices"] == [2310, 2310]   # 0.33 of each of 2 GPUs
    assert rows["ml-research/infer-c"]["gpu_slices"] == [2000]
    assert sorted(out.rejects["reason"].to_list()) == [
        "gpu-fraction '1.5' is not a fraction of a GPU in (0, 1]",
        "gpu-memory '8000' states GPU memory, not a fraction of the GPU: annotate the pod with gpu-fraction"]


def test_time_sliced_and_mps_gpus_are_replicas_of_a_gpu(tmp_path):
    """The NVIDIA device plugin shares a GPU into replicas (time-slicing or MPS): on a node the config
    names, each `nvidia.com/gpu` a pod got is one replica; the renamed `nvidia.com/gpu.shared` is one
    anywhere, and without a replica count for its node it is quarantined, never taken as a whole GPU."""
    cfg = OrgConfig(kubernetes={"gpu_replicas": {"infer-*": 4, "mps-node-1": 2, "whole-node": 1}})
    pods = [
        _pod("sliced", node="infer-7", gpus="1"),                                    # 1 of 4 replicas
        _pod("two-replicas", node="infer-7", resources={"nvidia.com/gpu.shared": "2"}),
        _pod("mps", node="mps-node-1", gpus="1"),
        _pod("plain", node="gpu-node-1", gpus="8"),                                  # no sharing here
        _pod("unshared", node="whole-node", gpus="2"),                               # 1 replica: whole GPUs
        _pod("unknown-share", node="gpu-node-1", resources={"nvidia.com/gpu.shared": "1"}),
    ]
    path = tmp_path / "pods.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in pods) + "\n")
    out = kubernetes.parse(path, FILE, "k8s-east", cfg)
    rows = _by_id(out.rows)
    assert (rows["ml-research/sliced"]["gpus"], rows["ml-research/sliced"]["gpu_slices"]) == (0, [1750])
    assert rows["ml-research/sliced"]["alloc_tres"] == "gres/gpu=0,nvidia.com/gpu.shared=1,gpu-replicas=4,node=1"
    assert rows["ml-research/two-replicas"]["gpu_slices"] == [1750, 1750]
    assert rows["ml-research/mps"]["gpu_slices"] == [3500]
    assert (rows["ml-research/plain"]["gpus"], rows["ml-research/plain"]["gpu_slices"]) == (8, None)
    assert (rows["ml-research/unshared"]["gpus"], rows["ml-research/unshared"]["gpu_slices"]) == (2, None)
    assert out.rejects["reason"].to_list() == [
        "nvidia.com/gpu.shared '1' on node 'gpu-node-1': kubernetes.gpu_replicas names no replica count for the "
        "node, so its share of a GPU is unknown"]


def test_gpu_replicas_must_be_a_whole_count(tmp_path):
    with pytest.raises(ValueError, match="a GPU is shared into 1 to 1000 replicas"):
        OrgConfig(kubernetes={"gpu_replicas": {"infer-*": 0}})

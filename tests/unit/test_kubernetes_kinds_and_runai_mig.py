"""Kubernetes objects that are no pods are refused by their kind, and Run:ai's MIG pods, which state
their instance in annotations rather than as a resource, are read as slices of a GPU."""

import json

from pipelines.ingest import kubernetes
from pipelines.lib.config import OrgConfig
from tests.unit.test_kubernetes import FILE, _pod


def _parse(tmp_path, text):
    path = tmp_path / "pods.json"
    path.write_text(text)
    return kubernetes.parse(path, FILE, "k8s-east", OrgConfig())


def _node(name="gpu-node-1"):
    """A `kubectl get node -o json` object, trimmed to the parts a parser could mistake for a pod."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": "7d1c0b1e-node", "creationTimestamp": "2024-04-01T08:00:00Z",
                     "labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge", "nvidia.com/gpu.count": "8"}},
        "spec": {"providerID": "aws:///us-east-1a/i-0abc", "podCIDR": "10.1.0.0/24"},
        "status": {"capacity": {"cpu": "96", "nvidia.com/gpu": "8"}, "allocatable": {"cpu": "95", "nvidia.com/gpu": "8"},
                   "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T00:00:00Z"}],
                   "nodeInfo": {"kubeletVersion": "v1.29.3"}},
    }


def test_a_node_object_is_refused_by_its_kind_not_read_as_a_gpu_less_pod(tmp_path):
    """Was: a Node landed among the pods was dropped as `no_gpu`, as if it were a pod without GPUs."""
    out = _parse(tmp_path, json.dumps(_node(), indent=2))  # plain `kubectl get node gpu-node-1 -o json`
    assert out.rows.height == 0 and out.dropped == {}
    assert out.rejects["reason"].to_list() == [
        "line 1 is a Node, not a Pod: only pods (one a line, or a List of pods) are read"]


def test_a_list_refuses_its_nodes_by_item_and_still_reads_its_pods(tmp_path):
    doc = {"apiVersion": "v1", "kind": "List", "items": [_pod("a"), _pod("b"), _node(), {**_pod("c"), "kind": None}]}
    out = _parse(tmp_path, json.dumps(doc))
    assert sorted(out.rows["job_id"].to_list()) == ["ml-research/a", "ml-research/b", "ml-research/c"]
    [reject] = out.rejects.to_dicts()
    assert (reject["file"], reject["row_ref"]) == (FILE, "line 1 item 3")
    assert reject["reason"] == "item 3 is a Node, not a Pod: only pods (one a line, or a List of pods) are read"


def _runai_mig_pod(name, annotations):
    """A Run:ai dynamic-MIG pod in its real shape: no GPU resource at all, the instance in annotations."""
    pod = _pod(name, namespace="runai-p1", resources={}, labels={"app": "runaijob", "project": "p1"},
               owner=("RunaiJob", name), node="mig-node-a100",
               annotations={"received-resource-type": "MigInstance", "runai-allocated-gpus": "0",
                            "runai-allocated-gpu-memory": "0", "runai-allocated-mig-gpus": "1", **annotations})
    pod["spec"]["containers"][0]["resources"] = {}
    return pod


def test_runai_mig_pods_in_both_annotation_shapes_are_slices_of_a_gpu(tmp_path):
    """Was: both pods dropped as `no_gpu` (only `mig-profile` was read)."""
    whole = _runai_mig_pod("job-7g-0-0", {
        "nvidia.com/mig-7g.40gb": "1",
        "runai-mig-device": json.dumps({"name": "nvidia.com/mig-7g.40gb", "position": 0, "gpuamount": 7,
                                        "deviceUUID": "MIG-6d9b", "gpuinstanceid": 0, "gpuindex": "1",
                                        "gputype": "A100-40GB"})})
    small = _runai_mig_pod("job-1g-0-0", {
        "runai-mig-device": json.dumps({"name": "nvidia.com/mig-1g.5gb", "position": 4, "gpuamount": 1,
                                        "gpuindex": 0, "gputype": "A100-40GB"})})
    broken = _runai_mig_pod("job-bad-0-0", {"runai-mig-device": "{not json"})
    reservation = _pod("runai-reservation-gpu-mig-node-a100-x", namespace="runai-reservation", gpus="1",
                       labels={"app": "runai-reservation"})
    out = _parse(tmp_path, "".join(json.dumps(p) + "\n" for p in [whole, small, broken, reservation]))
    rows = {r["job_id"]: r for r in out.rows.to_dicts()}
    # 7g.40gb is the whole A100-40GB (7 of 7 compute slices), 1g.5gb one of its 7: 1000 of 7000 units
    assert (rows["runai-p1/job-7g-0-0"]["gpus"], rows["runai-p1/job-7g-0-0"]["gpu_slices"],
            rows["runai-p1/job-7g-0-0"]["gpu_index"]) == (0, [7000], 1)
    assert (rows["runai-p1/job-1g-0-0"]["gpu_slices"], rows["runai-p1/job-1g-0-0"]["gpu_index"]) == ([1000], 0)
    assert rows["runai-p1/job-7g-0-0"]["alloc_tres"] == "gres/gpu=0,nvidia.com/mig-7g.40gb=1,node=1"
    assert out.dropped == {"gpu_reservation_pod": 1}  # as for fractions: the sharing pods are the consumers
    assert out.rejects["reason"].to_list() == [
        "runai-mig-device '{not json' names no MIG device (JSON with a `name` such as nvidia.com/mig-1g.5gb)"]


def test_a_mig_resource_and_its_annotation_count_once(tmp_path):
    pod = _pod("both", resources={"nvidia.com/mig-3g.40gb": "1"}, gpus=None,
               annotations={"nvidia.com/mig-3g.40gb": "1"})
    out = _parse(tmp_path, json.dumps(pod) + "\n")
    assert out.rows["gpu_slices"].to_list() == [[3000]]


def test_a_byte_that_is_not_utf8_costs_its_line_not_the_file(tmp_path):
    """Was: `unreadable pod file: 'utf-8' codec can't decode …`, every pod of the file refused."""
    good = json.dumps(_pod("good")).encode()
    bad = json.dumps(_pod("bad", labels={"user": "BADBYTE"})).encode().replace(b"BADBYTE", b"jos\xe9")
    path = tmp_path / "pods.jsonl"
    path.write_bytes(good + b"\n" + bad + b"\n")
    out = kubernetes.parse(path, FILE, "k8s-east", OrgConfig())
    assert out.rows["job_id"].to_list() == ["ml-research/good"]
    [reject] = out.rejects.to_dicts()
    offset = len(good) + 1 + bad.index(b"\xe9")
    assert (reject["row_ref"], reject["reason"]) == ("line 2", f"a byte that is not UTF-8 at byte offset {offset} of the file")


def test_a_pretty_printed_document_with_a_bad_byte_is_refused_whole_by_its_offset(tmp_path):
    """One document is one record: refused as a file (so ops.landed_files records it unreadable and its
    days are not complete), naming the byte; was `'utf-8' codec can't decode …`."""
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [_pod("a", labels={"user": "BADBYTE"})]}, indent=2)
    data = text.encode().replace(b"BADBYTE", b"jos\xe9")
    path = tmp_path / "pods.json"
    path.write_bytes(data)
    out = kubernetes.parse(path, FILE, "k8s-east", OrgConfig())
    offset = data.index(b"\xe9")
    assert out.rows.height == 0
    assert out.rejects[["row_ref", "reason"]].rows() == [
        ("file", "unreadable pod file: a pretty-printed document (one record) with a byte that is not UTF-8 at "
                 f"byte offset {offset} of the file")]

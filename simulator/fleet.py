"""The simulated organisation and its hardware: clusters, nodes, pools, teams, projects, users, prices.

Everything here is a pure function of (nodes, seed), so two simulations with the same arguments describe the
same fleet. Identifiers that look random (instance ids, GPU UUIDs, savings-plan ARNs) are hashes of the seed
and a name rather than draws from a generator, so adding a node never renames the others.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from decimal import Decimal

GPUS_PER_NODE = 8

# Peak dense bf16 tensor FLOP/s per GPU (reference/mfu-goodput-reliability.md §2).
GPU_SPECS = {
    "NVIDIA H100 80GB HBM3": {"short": "h100", "peak_bf16": 989e12, "idle_w": 70.0, "max_w": 700.0,
                              "fb_mib": 81559.0},
    "NVIDIA A100-SXM4-80GB": {"short": "a100", "peak_bf16": 312e12, "idle_w": 55.0, "max_w": 400.0,
                              "fb_mib": 81920.0},
}


@dataclass(frozen=True)
class BillingAccount:
    """Who invoices for a cluster: one billing account in one currency, delivering its own month-to-date FOCUS
    export (its own folder and manifests under bills/focus/)."""
    id: str
    name: str
    provider: str            # ProviderName, PublisherName and InvoiceIssuerName of its lines
    currency: str            # BillingCurrency, ISO 4217
    symbol: str              # how its descriptions write an amount
    invoice_prefix: str
    export: str              # the export's name: its folder under bills/focus/ and its data files' prefix
    export_arn: str          # what its manifests say produced them
    commitment_prefix: str   # a commitment's id is this + a hash of the seed and the cluster
    commitment_name: str     # "Savings Plan", as its descriptions call a commitment
    commitment_type: str     # CommitmentDiscountType
    compute_service: str     # ServiceName of instance hours and their tax
    commitment_service: str  # ServiceName of a commitment's Unused and Purchase rows
    storage_service: str     # ServiceName of the projects' file systems
    network_service: str     # ServiceName of the projects' data transfer


AWS = BillingAccount(
    id="481516234200", name="gpuledger-demo-payer", provider="AWS", currency="USD", symbol="$",
    invoice_prefix="INV", export="gpuledger-focus",
    export_arn="arn:aws:bcm-data-exports:us-east-1:481516234200:export/gpuledger-focus-5f0c2a7e",
    commitment_prefix="arn:aws:savingsplans::481516234200:savingsplan/", commitment_name="Savings Plan",
    commitment_type="Compute Savings Plan", compute_service="Amazon Elastic Compute Cloud",
    commitment_service="Savings Plans for AWS Compute usage", storage_service="Amazon FSx",
    network_service="AWS Data Transfer")
# The GPU cloud west's A100s are rented from: a provider of its own that invoices in euros. Its prices are
# the numbers AWS charges in dollars, read as euros.
KESTREL = BillingAccount(
    id="KGC-0042-7731", name="gpuledger-demo-eu", provider="Kestrel GPU Cloud", currency="EUR", symbol="€",
    invoice_prefix="KGC", export="kestrel-focus",
    export_arn="kgc:billing:eu-central:KGC-0042-7731:export/kestrel-focus-91d3",
    commitment_prefix="kgc:commitment:KGC-0042-7731:", commitment_name="Reserved Capacity",
    commitment_type="Reserved GPU Capacity", compute_service="Kestrel GPU Instances",
    commitment_service="Kestrel Reserved Capacity", storage_service="Kestrel Managed Lustre",
    network_service="Kestrel Data Transfer")
BILLING_ACCOUNTS = (AWS, KESTREL)
# Units of USD per unit of each other billing currency, every simulated month: the config's `fx:` rates.
SIMULATED_USD_RATE = {"EUR": Decimal("1.08")}


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    timezone: str
    region: str
    gpu_model: str
    instance_type: str
    on_demand_hourly: Decimal
    # Savings-plan rate for the reserved pool; ~44 % off on-demand is typical of a 3-year compute SP.
    committed_hourly: Decimal
    reserved_team: str
    sub_account_id: str
    sub_account_name: str
    job_id_base: int
    cpus_per_gpu: int
    mem_gb_per_gpu: int
    account: BillingAccount   # who bills the cluster's instances, commitment, tax, and its projects' storage


CLUSTERS = (
    ClusterSpec("east", "UTC", "us-east-1", "NVIDIA H100 80GB HBM3", "p5.48xlarge", Decimal("98.32"),
                Decimal("55.0592"), "pretrain", "210987654321", "ml-east", 812000, 8, 100, AWS),
    ClusterSpec("west", "America/Los_Angeles", "us-west-2", "NVIDIA A100-SXM4-80GB", "p4de.24xlarge",
                Decimal("40.96575"), Decimal("22.94082"), "research", "210987654322", "ml-west", 5000, 8, 100,
                KESTREL),
)
CLUSTER_BY_NAME = {c.name: c for c in CLUSTERS}

# team -> projects (order matters: it fixes iteration order everywhere downstream)
TEAMS = {
    "pretrain": ("llm-70b", "llm-7b"),
    "posttrain": ("rlhf", "sft"),
    "research": ("moe-exp", "long-context"),
    "inference": ("eval-harness", "distill"),
}
PROJECT_TEAM = {p: t for t, ps in TEAMS.items() for p in ps}
PROJECTS = tuple(p for ps in TEAMS.values() for p in ps)
ACCOUNTS = {
    "llm-70b": "acct-llm70b", "llm-7b": "acct-llm7b", "rlhf": "acct-rlhf", "sft": "acct-sft",
    "moe-exp": "acct-moeexp", "long-context": "acct-longctx", "eval-harness": "acct-evalharness",
    "distill": "acct-distill",
}
# user name -> uid; uids show up in `CANCELLED by <uid>`.
USERS = {
    "pretrain": (("achen", 12345), ("bkumar", 12346), ("cdiaz", 12347)),
    "posttrain": (("dlee", 12401), ("eokafor", 12402), ("fmuller", 12403)),
    "research": (("gsato", 12501), ("hnguyen", 12502), ("iross", 12503)),
    "inference": (("jsmith", 12601), ("kwang", 12602), ("lperez", 12603)),
}

# Transformer shapes for runs: params/active_params exclude embeddings (PaLM convention).
MODELS = {
    "llm-70b": {"params": 70_000_000_000, "active_params": 70_000_000_000, "layers": 80, "heads": 64,
                "head_dim": 128, "seq_len": 4096},
    "llm-7b": {"params": 6_700_000_000, "active_params": 6_700_000_000, "layers": 32, "heads": 32,
               "head_dim": 128, "seq_len": 4096},
    "moe-exp": {"params": 47_000_000_000, "active_params": 13_000_000_000, "layers": 32, "heads": 32,
                "head_dim": 128, "seq_len": 4096},
    "long-context": {"params": 8_000_000_000, "active_params": 8_000_000_000, "layers": 32, "heads": 32,
                     "head_dim": 128, "seq_len": 32768},
    "sft": {"params": 8_000_000_000, "active_params": 8_000_000_000, "layers": 32, "heads": 32,
            "head_dim": 128, "seq_len": 8192},
}
# Which projects train multi-node runs on which cluster (east is H100, west A100).
RUN_PROJECTS = {"east": ("llm-70b", "llm-7b"), "west": ("moe-exp", "long-context", "sft")}


def flops_per_token(model: dict) -> float:
    """PaLM App. B: 6·N_active + 12·L·H·Q·T."""
    return 6.0 * model["active_params"] + 12.0 * model["layers"] * model["heads"] * model["head_dim"] * \
        model["seq_len"]


def hexdigest(seed: int, *parts: object, n: int = 32) -> str:
    h = hashlib.sha256("|".join([str(seed), *map(str, parts)]).encode()).hexdigest()
    return h[:n]


def uuid_like(seed: int, *parts: object) -> str:
    h = hexdigest(seed, *parts, n=32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


@dataclass(frozen=True)
class Node:
    index: int          # global position; east nodes first
    cluster: str
    number: int         # 1-based within its cluster
    hostname: str
    pool: str
    owner_team: str     # "" for shared pools
    resource_id: str
    gpu_model: str
    uuids: tuple[str, ...]


@dataclass(frozen=True)
class Fleet:
    seed: int
    nodes: tuple[Node, ...]

    def cluster_nodes(self, cluster: str) -> list[Node]:
        return [n for n in self.nodes if n.cluster == cluster]

    def commitment_id(self, cluster: str) -> str:
        return CLUSTER_BY_NAME[cluster].account.commitment_prefix + uuid_like(self.seed, "sp", cluster)

    @property
    def pools(self) -> dict[str, str]:
        """Owned pools only: pool -> team."""
        out: dict[str, str] = {}
        for n in self.nodes:
            if n.owner_team:
                out[n.pool] = n.owner_team
        return out


def split_nodes(total: int) -> dict[str, int]:
    east = (total + 1) // 2
    return {"east": east, "west": total - east}


def reserved_count(cluster_nodes: int) -> int:
    return max(1, round(cluster_nodes / 4)) if cluster_nodes >= 2 else 0


def build_fleet(nodes: int, seed: int) -> Fleet:
    if nodes < 2:
        raise ValueError("the fleet needs at least 2 nodes (one per cluster)")
    out: list[Node] = []
    for spec in CLUSTERS:
        n_c = split_nodes(nodes)[spec.name]
        n_res = reserved_count(n_c)
        for i in range(1, n_c + 1):
            host = f"{spec.name}-gpu-{i:03d}"
            reserved = i <= n_res
            out.append(Node(
                index=len(out), cluster=spec.name, number=i, hostname=host,
                pool=f"{spec.name}-{'reserved' if reserved else 'shared'}",
                owner_team=spec.reserved_team if reserved else "",
                resource_id="i-0" + hexdigest(seed, "instance", host, n=16),
                gpu_model=spec.gpu_model,
                uuids=tuple("GPU-" + uuid_like(seed, "gpu", host, g) for g in range(GPUS_PER_NODE)),
            ))
    return Fleet(seed=seed, nodes=tuple(out))

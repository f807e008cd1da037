"""`gpuledger simulate`: a simulated fleet's landing zone, its config and its ground truth (simulator/)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.cli.preflight import positive
from pipelines.lib.dates import day_argument


def add_parser(sub: argparse._SubParsersAction) -> None:
    sim = sub.add_parser("simulate", help="write a simulated fleet's landing zone and its ground truth")
    sim.add_argument("--out", required=True, type=Path, metavar="DIR",
                     help="folder to write: DIR/landing (the landing zone), DIR/gpuledger.yaml (its config) "
                          "and DIR/truth (what really happened)")
    sim.add_argument("--start", required=True, type=day_argument, help="first UTC day, YYYY-MM-DD")
    sim.add_argument("--days", required=True, type=positive(int), help="how many days to simulate")
    sim.add_argument("--nodes", type=positive(int), default=16, help="GPU nodes in the fleet (default: 16)")
    sim.add_argument("--seed", type=int, default=7,
                     help="random seed: the same seed writes the same files (default: 7)")
    sim.add_argument("--kubernetes-cluster", metavar="CLUSTER",
                     help="write this cluster's jobs as Kubernetes pods instead of sacct (default: none, every "
                          "cluster's as sacct)")
    sim.add_argument("--mig-node", action="store_true",
                     help="add east-mig-001, whose GPUs are split into MIG instances for inference and debugging jobs")


def run(args: argparse.Namespace) -> int:
    from simulator import Knobs, simulate

    manifest = simulate(args.out, args.start, args.days, nodes=args.nodes, seed=args.seed,
                        kubernetes_cluster=args.kubernetes_cluster, knobs=Knobs(mig_node=args.mig_node))
    print(f"simulated {args.days} day(s) from {args.start} on {args.nodes} nodes (seed {args.seed}) into {args.out}")
    for source, facts in manifest.items():
        if isinstance(facts, dict) and source != "simulator":
            shown = ", ".join(f"{k} {v}" for k, v in facts.items() if not isinstance(v, (dict, list)) and k != "day_share_rounding")
            print(f"  {source:<10} {shown}")
            for currency, money in facts.get("by_currency", {}).items():   # bills: money per currency, never added
                print(f"  {'':<10} {currency} effective_cost {money['effective_cost']}, "
                      f"billed_cost {money['billed_cost']}, rows {money['rows']}")
    return 0

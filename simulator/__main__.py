"""python -m simulator --out DIR --start YYYY-MM-DD --days N [--nodes N] [--seed S]"""
from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

from .simulate import simulate


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m simulator", description=__doc__)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--start", required=True, type=dt.date.fromisoformat)
    p.add_argument("--days", required=True, type=int)
    p.add_argument("--nodes", type=int, default=16)
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args(argv)
    m = simulate(a.out, a.start, a.days, nodes=a.nodes, seed=a.seed)
    print(json.dumps({k: m[k] for k in ("simulator", "features")}, indent=2))


if __name__ == "__main__":
    main()

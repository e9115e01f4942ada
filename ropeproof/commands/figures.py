"""``ropeproof figures [--out DIR] [--quick] [--only NAME ...]``: regenerate the paper figures."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ropeproof.paper_figures import figure_names, make_all


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("figures", help="regenerate the paper figures (PNG, PDF, CSV data, caption)")
    p.add_argument("--out", type=Path, default=Path("ropeproof-report/figures"), help="output directory")
    p.add_argument("--quick", action="store_true", help="shorter sweeps (seconds instead of a minute)")
    p.add_argument("--only", nargs="+", metavar="NAME", help=f"a subset of: {', '.join(figure_names())}")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    made = make_all(args.out, args.quick, args.only)
    for name, paths in made.items():
        print(f"{name}: {', '.join(p.name for p in paths)}")
    print(f"{len(made)} figures in {args.out} ({time.perf_counter() - start:.1f} s)")
    return 0

"""``ropeproof figures [--out DIR] [--quick] [--only NAME ...] [--formats png,pdf]``: regenerate the
paper figures."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ropeproof.commands.arguments import add_command, add_formats, add_output
from ropeproof.paper_figures import figure_names, make_all
from ropeproof.theory.atomic_output import atomic_directory


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "figures",
        help="regenerate the paper figures (PNG, PDF, CSV data, caption)",
        example="ropeproof figures --quick --only a_theory_bounds e_geometry --out figures",
    )
    add_output(p, Path("ropeproof-report/figures"), "output directory")
    p.add_argument("--quick", action="store_true", help="shorter sweeps (seconds instead of a minute)")
    p.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        choices=figure_names(),
        help=f"draw only these figures, a subset of: {', '.join(figure_names())}",
    )
    add_formats(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    with atomic_directory(args.out, args.force) as staging:
        made = make_all(staging, args.quick, args.only, formats=args.formats)
    for name, paths in made.items():
        print(f"{name}: {', '.join(p.name for p in paths)}")
    print(f"{len(made)} figures in {args.out} ({time.perf_counter() - start:.1f} s)")
    return 0

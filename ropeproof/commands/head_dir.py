"""``--head DIR`` for ``ropeproof sweep`` and ``ropeproof ps-score``: any head directory that
``ropeproof compile``, ``ropeproof import`` or ``CompiledHead.save`` wrote (not a subcommand)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ropeproof.constructions.head import CompiledHead, load_head
from ropeproof.theory.errors import RopeproofError
from ropeproof.verify.display import format_cell
from ropeproof.verify.exact.head_sweep import sweep_head
from ropeproof.verify.exact.sweep import parse_lengths
from ropeproof.verify.runtime.devices import resolve_device


def add_head_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--head",
        dest="head_dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="a head directory (head.json + weights.safetensors) instead of a built-in construction",
    )


def read_head(path: Path) -> CompiledHead:
    """The head in ``path`` (errors are :class:`~ropeproof.theory.errors.InputError` naming the file)."""
    return load_head(path)


def run_sweep(args: argparse.Namespace) -> int:
    """``ropeproof sweep --head DIR [--lengths A:B[:STEP]] [--dtype] [--json]``."""
    try:
        start, stop, step = parse_lengths(args.lengths)
        head = read_head(args.head_dir)
        table = sweep_head(head, stop, dtype=args.dtype, device=resolve_device(args.device))
    except RopeproofError as exc:
        print(f"ropeproof sweep: error: {exc}", file=sys.stderr)
        return 2
    table = table.select(start, stop, step)
    rows = table.rows()
    meaning = (
        "margin_inf: worst target margin"
        if table.family.name != "tokens"
        else "no target: margin_inf is the query's own logit minus the best earlier one"
    )
    if args.json:
        out = {"head": head.name, "family": table.family.name, "dtype": table.dtype, "rows": rows}
        print(json.dumps(out))
        return 0
    print(f"# {table.title()}; {table.family.description}; {meaning}")
    cols = list(rows[0]) if rows else []
    print("  ".join(f"{c:>13s}" for c in cols))
    for r in rows:
        print("  ".join(f"{format_cell(r[c]):>13s}" for c in cols))
    return 0

"""``--head DIR`` for ``ropeproof sweep`` and ``ropeproof ps-score``: any head directory that
``ropeproof compile``, ``ropeproof import`` or ``CompiledHead.save`` wrote (not a subcommand)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ropeproof.constructions.head import CompiledHead, load_head
from ropeproof.verify.kernel.devices import resolve_device
from ropeproof.verify.measure.display import format_cell
from ropeproof.verify.measure.exact.head_sweep import sweep_head
from ropeproof.verify.measure.exact.sweep import parse_lengths


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
    start, stop, step = parse_lengths(args.lengths)  # already checked by the --lengths argument type
    head = read_head(args.head_dir)
    table = sweep_head(head, stop, dtype=args.dtype, device=resolve_device(args.device))
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

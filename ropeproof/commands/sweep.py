"""``ropeproof sweep index|retrieval ...``: exact discrepancy vs length, with the reported bound."""

from __future__ import annotations

import argparse
import json
import math

from ropeproof.commands import head_dir
from ropeproof.commands.arguments import add_command, add_device, add_dtype, add_json, finite_float, int_in
from ropeproof.theory.errors import InputError, RopeproofError
from ropeproof.verify.exact.sweep import parse_lengths, sweep_index, sweep_retrieval


def lengths(text: str) -> tuple[int, int, int]:
    """``--lengths A:B[:STEP]`` parsed and checked (:func:`parse_lengths`)."""
    try:
        return parse_lengths(text)
    except RopeproofError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "sweep",
        help="exact gap_sup / gap_inf / margin_inf vs length, with Theorem 3.2's bound",
        example="ropeproof sweep retrieval --theta 0.0027 --alphabet 8 --lengths 2:200:2 --json",
    )
    p.add_argument(
        "construction",
        nargs="?",
        choices=["index", "retrieval"],
        help="index (T_Index) or retrieval (T_Retrieval), with --theta; or give --head DIR instead",
    )
    head_dir.add_head_option(p)
    p.add_argument(
        "--theta", type=finite_float, default=None, help="RoPE angle of the plane (index, retrieval)"
    )
    p.add_argument("--alphabet", type=int_in(2), default=8, help="|ALPH| (retrieval)")
    p.add_argument(
        "--lengths", type=lengths, default="2:100", metavar="A:B[:STEP]", help="lengths n, 2 <= A <= B"
    )
    add_dtype(p, "dtype of the measured logits (exact columns are float64)")
    add_device(p)
    add_json(p, "the table (a 'rows' list)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if (args.head_dir is None) == (args.construction is None) or (args.construction and args.theta is None):
        raise InputError("give index|retrieval with --theta, or --head DIR")
    if args.head_dir is not None:
        return head_dir.run_sweep(args)
    start, stop, step = args.lengths
    device = args.device
    if args.construction == "index":
        table = sweep_index(args.theta, stop, args.dtype, device)
    else:
        table = sweep_retrieval(args.alphabet, args.theta, stop, args.dtype, device)
    table = table.select(start, stop, step)
    rows = table.rows()
    if args.json:
        print(
            json.dumps(
                {
                    "construction": table.construction,
                    "params": table.params,
                    "dtype": table.dtype,
                    "bound": table.bound.statement,
                    "rows": rows,
                }
            )
        )
        return 0
    print(f"# {table.construction} {table.params}, dtype {table.dtype}; bound: {table.bound.statement}")
    cols = [
        "n",
        "gap_sup",
        "gap_inf",
        "margin_inf",
        "bound",
        "bound_holds",
        "bound_holds_gap_inf",
        "bound_holds_margin_inf",
        "resolvable",
    ]
    print("  ".join(f"{c:>13s}" for c in cols))
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            cells.append(f"{v:>13.6g}" if isinstance(v, float) and not math.isnan(v) else f"{v!s:>13s}")
        print("  ".join(cells))
    return 0

"""``ropeproof sweep index|retrieval ...``: exact discrepancy vs length, with the reported bound."""

from __future__ import annotations

import argparse
import json
import math
import sys

from ropeproof.commands import head_dir
from ropeproof.verify.exact.sweep import parse_lengths, sweep_index, sweep_retrieval
from ropeproof.verify.runtime.devices import resolve_device


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep", help="exact gap_sup / gap_inf / margin_inf vs length, with Theorem 3.2's bound"
    )
    p.add_argument("construction", nargs="?", choices=["index", "retrieval"])
    head_dir.add_head_option(p)
    p.add_argument("--theta", type=float, default=None, help="RoPE angle of the plane (index, retrieval)")
    p.add_argument("--alphabet", type=int, default=8, help="|ALPH| (retrieval)")
    p.add_argument("--lengths", default="2:100", help="A:B[:STEP], 2 <= A <= B")
    p.add_argument("--dtype", default="float64", help="dtype of the measured logits")
    p.add_argument("--device", default="auto")
    p.add_argument("--json", action="store_true", help="print one JSON object with a 'rows' list")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if (args.head_dir is None) == (args.construction is None) or (args.construction and args.theta is None):
        print("ropeproof sweep: error: give index|retrieval with --theta, or --head DIR", file=sys.stderr)
        return 2
    if args.head_dir is not None:
        return head_dir.run_sweep(args)
    start, stop, step = parse_lengths(args.lengths)
    device = resolve_device(args.device)
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

"""``ropeproof errata [--json] [--out DIR] [--quick] [--strict]``: the corrected statements.

Computes every registered correction (:func:`ropeproof.claims.registered_corrections`): for each statement
of [A] or [B] that a pinned claim refutes, what is true instead, its status, proof steps, witness and rows
(docs/theory.md section 9). ``--out DIR`` writes ``errata.md`` (an erratum a paper could cite) and
``errata.json`` atomically; ``--json`` prints the JSON object; otherwise one line per correction.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ropeproof.commands._arguments import add_command, add_json
from ropeproof.machinery._atomic_output import atomic_directory, check_output_target

if TYPE_CHECKING:
    from ropeproof.claims._corrections import Correction


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "errata",
        example="ropeproof errata --out errata",
        description=(
            "Compute the corrected statement of every statement of [A] or [B] that a pinned claim\n"
            "refutes: statement and LaTeX, status (machine-checked, proved, certified or conjectured),\n"
            "range, proof steps (naming the argued ones), witness and rows [n, corrected_value,\n"
            "exact_value]. --out DIR writes DIR/errata.md and DIR/errata.json (complete or not at all);\n"
            "--json prints the same object as errata.json."
        ),
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write errata.md and errata.json into DIR; it must be absent or empty unless --force",
    )
    p.add_argument("--force", action="store_true", help="replace --out if it is a non-empty directory")
    add_json(p, "the corrections (the content of errata.json)")
    p.add_argument("--quick", action="store_true", help="the smaller sizes of ropeproof check --quick")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a correction's established status or a pinned value changed, or it raised",
    )
    p.set_defaults(run=run)


def registered_corrections() -> list[Correction]:
    """:func:`ropeproof.claims.registered_corrections`, imported when called (the claims import torch);
    what ``run`` computes (tests put other corrections here)."""
    from ropeproof.claims import registered_corrections as corrections

    return corrections()


def run(args: argparse.Namespace) -> int:
    import torch

    from ropeproof._errata_report import errata_dict, render_errata_markdown
    from ropeproof.claims import CheckContext, registered_claims, registered_no_corrections
    from ropeproof.claims._corrections import run_correction

    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=args.quick)
    if args.out is not None:
        check_output_target(args.out, args.force)  # refuse a bad --out before computing anything
    results = [run_correction(c, ctx) for c in registered_corrections()]
    errata = errata_dict(results, registered_no_corrections(), args.quick)
    if args.out is not None:
        reported = {c.id: (c.reference, c.statement_for(args.quick)) for c in registered_claims()}
        with atomic_directory(args.out, args.force) as staging:
            (staging / "errata.json").write_text(json.dumps(errata, indent=2) + "\n")
            (staging / "errata.md").write_text(render_errata_markdown(errata, reported))
    if args.json:
        print(json.dumps(errata))
    else:
        for e in errata["corrections"]:
            flag = f" REGRESSION: {e['regression']}" if e["regression"] else ""
            argued = f" (argued: {', '.join(e['argued_steps'])})" if e.get("argued_steps") else ""
            print(f"{e['id']:32s} {e['status']:10s} corrects {', '.join(e['corrects'])}{argued}{flag}")
        for m in errata["no_correction"]:
            print(f"{m['claim']:32s} no correction yet: {m['reason']}")
        if args.out is not None:
            print(f"errata in {args.out}/errata.md and {args.out}/errata.json")
    return 1 if args.strict and errata["regressions"] else 0

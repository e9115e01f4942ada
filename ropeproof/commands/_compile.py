"""``ropeproof compile index|retrieval|reflexive [params] --out DIR``: write a compiled head."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from ropeproof.commands._arguments import add_command, add_json, add_output, finite_float, int_in
from ropeproof.commands._choices import CONSTRUCTION_DEFAULTS, CONSTRUCTION_NAMES
from ropeproof.machinery._atomic_output import atomic_directory

if TYPE_CHECKING:
    from ropeproof.theory._construction import Construction

CONSTRUCTION_HELP = "index (T_Index), retrieval (T_Retrieval) or reflexive; [A] Theorem 3.1"


def _defaults(parameter: str) -> str:
    """``"index 0.866, retrieval 0.0, ..."``: each construction's default for ``parameter``
    (:data:`~ropeproof.commands._choices.CONSTRUCTION_DEFAULTS`)."""
    return CONSTRUCTION_DEFAULTS[parameter]


def add_construction_params(p: argparse.ArgumentParser) -> None:
    """The construction positional and the parameters shared by commands that build one."""
    p.add_argument("construction", choices=CONSTRUCTION_NAMES, help=CONSTRUCTION_HELP)
    p.add_argument(
        "--theta",
        type=finite_float,
        default=None,
        help=f"RoPE angle of the main plane (default: {_defaults('theta')})",
    )
    p.add_argument(
        "--max-int",
        type=int_in(0),
        default=None,
        help=f"largest integer token (default: {_defaults('max_int')})",
    )
    p.add_argument(
        "--letters", type=int_in(1), default=None, help=f"number of letters (default: {_defaults('letters')})"
    )
    p.add_argument(
        "--alphabet-size",
        "--alphabet",
        dest="alphabet_size",
        type=int_in(2),
        default=None,
        help=f"|ALPH| (default: {_defaults('alphabet_size')})",
    )
    p.add_argument("--layout", choices=["interleaved", "half"], default="interleaved", help="RoPE layout")


def construction_kwargs(args: argparse.Namespace) -> dict[str, float | int]:
    """The keyword arguments of the construction function that the parameters ask for."""
    kwargs: dict[str, float | int] = {}
    if args.theta is not None:
        kwargs["theta"] = args.theta
    if args.max_int is not None:
        kwargs["max_int"] = args.max_int
    if args.letters is not None and args.construction != "retrieval":
        kwargs["letters"] = args.letters
    if args.alphabet_size is not None and args.construction == "retrieval":
        kwargs["alphabet_size"] = args.alphabet_size
    return kwargs


def construction_from_args(args: argparse.Namespace) -> Construction:
    """The construction named by ``args.construction`` with the parameters that were given."""
    from ropeproof.constructions._paper import CONSTRUCTIONS

    return CONSTRUCTIONS[args.construction](**construction_kwargs(args))


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "compile",
        example="ropeproof compile index --letters 8 --max-int 16 --out heads/index",
    )
    add_construction_params(p)
    add_output(p, None, "output directory of the head")
    add_json(p, "what was written")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ropeproof.constructions._compile import compile_construction

    with atomic_directory(args.out, args.force) as staging:  # refuses a bad --out before compiling
        head = compile_construction(construction_from_args(args), layout=args.layout)
        # how it was built, so that sweep/ps-score --head can rebuild the construction's input family
        head.metadata["construction_args"] = construction_kwargs(args)
        head.save(staging)
    if args.json:
        doc = {
            "path": str(args.out),
            "name": head.name,
            "vocab_size": head.vocab_size,
            "head_dim": head.spec.head_dim,
            "freqs": [float(f) for f in head.spec.rotating_freqs],
            "layout": head.spec.layout,
            "parameters": head.metadata.get("parameters", {}),
        }
        print(json.dumps(doc))
        return 0
    print(f"wrote {head.name} ({head.vocab_size} tokens, head_dim {head.spec.head_dim}) to {args.out}")
    return 0

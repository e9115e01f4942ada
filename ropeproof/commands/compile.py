"""``ropeproof compile index|retrieval|reflexive [params] --out PATH``: write a compiled head."""

from __future__ import annotations

import argparse
from pathlib import Path

from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.paper import CONSTRUCTIONS


def add_construction_params(p: argparse.ArgumentParser) -> None:
    """The parameters shared by commands that build one of the paper's constructions."""
    p.add_argument("--theta", type=float, default=None, help="RoPE angle of the main plane")
    p.add_argument("--max-int", type=int, default=None, help="largest integer token")
    p.add_argument("--letters", type=int, default=None, help="number of letters (index, reflexive)")
    p.add_argument("--alphabet", type=int, default=None, help="|ALPH| (retrieval)")
    p.add_argument("--layout", choices=["interleaved", "half"], default="interleaved")


def construction_kwargs(args: argparse.Namespace) -> dict[str, float | int]:
    """The keyword arguments of the construction function that the parameters ask for."""
    kwargs: dict[str, float | int] = {}
    if args.theta is not None:
        kwargs["theta"] = args.theta
    if args.max_int is not None:
        kwargs["max_int"] = args.max_int
    if args.letters is not None and args.construction != "retrieval":
        kwargs["letters"] = args.letters
    if args.alphabet is not None and args.construction == "retrieval":
        kwargs["alphabet_size"] = args.alphabet
    return kwargs


def construction_from_args(args: argparse.Namespace):
    return CONSTRUCTIONS[args.construction](**construction_kwargs(args))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compile", help="compile a construction to explicit weights (head.json + weights.safetensors)"
    )
    p.add_argument("construction", choices=sorted(CONSTRUCTIONS))
    add_construction_params(p)
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    head = compile_construction(construction_from_args(args), layout=args.layout)
    # how it was built, so that sweep/ps-score --head can rebuild the construction's input family
    head.metadata["construction_args"] = construction_kwargs(args)
    head.save(args.out)
    print(f"wrote {head.name} ({head.vocab_size} tokens, head_dim {head.spec.head_dim}) to {args.out}")
    return 0

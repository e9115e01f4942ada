"""``ropeproof export gptj|llama CONSTRUCTION [params] --out DIR``: a ``from_pretrained`` directory.

Compiles the construction, places its planes exactly on the architecture's RoPE spectrum (see
:mod:`ropeproof.verify.interop.hf`) and saves a one-layer causal LM plus ``ropeproof_export.json``. Needs the
optional ``hf`` extra (``transformers``).
"""

from __future__ import annotations

import argparse
import json

from ropeproof.atomic_output import atomic_directory
from ropeproof.commands.arguments import (
    add_command,
    add_dtype,
    add_json,
    add_output,
    int_in,
    positive_float,
)
from ropeproof.commands.compile import add_construction_params, construction_from_args
from ropeproof.constructions.compile import compile_construction

ARCHS = ("gptj", "llama")


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "export",
        help="export a construction as a one-layer HF transformers GPT-J / LLaMA model (needs the hf extra)",
        example="ropeproof export gptj index --theta 0.8659643233600653 --logit-scale 100 --out models/index",
        description=(
            "Write a directory that GPTJForCausalLM / LlamaForCausalLM.from_pretrained loads. Frequencies\n"
            "are placed exactly or the command fails with the reason (e.g. GPT-J's base is fixed at 10000:\n"
            "use --theta 0.8659643233600653 = 10000**(-2/128) for index)."
        ),
    )
    p.add_argument("arch", choices=ARCHS, help="target architecture: gptj (GPTJForCausalLM) or llama")
    add_construction_params(p)
    add_output(p, None, "output directory of the model")
    add_dtype(p, "model dtype", choices=("float32", "float64"))
    p.add_argument(
        "--logit-scale", type=positive_float, default=1.0, help="multiplies the logits (sharpens the softmax)"
    )
    p.add_argument(
        "--rotary-dim",
        type=int_in(2, even=True),
        default=None,
        help="GPT-J rotary_dim (default: smallest exact)",
    )
    p.add_argument(
        "--head-dim", type=int_in(2, even=True), default=None, help="head_dim (default: smallest that fits)"
    )
    p.add_argument(
        "--rope-theta", type=positive_float, default=None, help="LLaMA rope_theta (default: chosen)"
    )
    p.add_argument("--max-positions", type=int_in(1), default=2048, help="longest supported sequence")
    add_json(p, "the placement")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ropeproof.verify.interop.hf import export_head

    with atomic_directory(args.out, args.force) as staging:  # refuses a bad --out before any work
        head = compile_construction(construction_from_args(args), layout=args.layout)
        exported = export_head(
            head,
            args.arch,
            rotary_dim=args.rotary_dim,
            head_dim=args.head_dim,
            rope_theta=args.rope_theta,
            logit_scale=args.logit_scale,
            dtype=args.dtype,
            max_positions=args.max_positions,
        )
        exported.save_pretrained(staging)
    pl = exported.info.placement
    if args.json:
        doc = {
            "path": str(args.out),
            "construction": head.name,
            "arch": args.arch,
            "hidden_size": pl.hidden_size,
            "head_dim": pl.head_dim,
            "rotary_dim": pl.rotary_dim,
            "rope_theta": pl.rope_theta,
            "planes": [list(p_) for p_ in pl.planes],
            "placement": pl.describe(head.spec),
        }
        print(json.dumps(doc))
        return 0
    print(
        f"wrote {head.name} as {args.arch} (hidden_size {pl.hidden_size}, head_dim {pl.head_dim}, "
        f"rotary_dim {pl.rotary_dim}, rope_theta {pl.rope_theta}) to {args.out}"
    )
    print(pl.describe(head.spec))
    return 0

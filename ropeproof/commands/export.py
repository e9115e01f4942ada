"""``ropeproof export gptj|llama CONSTRUCTION [params] --out DIR``: a ``from_pretrained`` directory.

Compiles the construction, places its planes exactly on the architecture's RoPE spectrum (see
:mod:`ropeproof.verify.interop.hf`) and saves a one-layer causal LM plus ``ropeproof_export.json``. Needs the
optional ``hf`` extra (``transformers``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ropeproof.commands.compile import add_construction_params, construction_from_args
from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.paper import CONSTRUCTIONS
from ropeproof.theory.errors import RopeproofError
from ropeproof.verify.interop.hf.architectures import ExportError

ARCHS = ("gptj", "llama", "tl")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="export a construction as a one-layer HF GPT-J / LLaMA model (hf extra) or a TransformerLens "
        "HookedTransformer (tl extra)",
        description=(
            "Write a directory that GPTJForCausalLM / LlamaForCausalLM.from_pretrained loads. Frequencies "
            "are placed exactly or the command fails with the reason (e.g. GPT-J's base is fixed at 10000: "
            "use --theta 0.8659643233600653 = 10000**(-2/128) for index)."
        ),
    )
    p.add_argument("arch", choices=ARCHS, help="target architecture")
    p.add_argument("construction", choices=sorted(CONSTRUCTIONS))
    add_construction_params(p)
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32", help="model dtype")
    p.add_argument(
        "--logit-scale", type=float, default=1.0, help="multiplies the logits (sharpens the softmax)"
    )
    p.add_argument(
        "--rotary-dim", type=int, default=None, help="GPT-J / tl rotary_dim (default: smallest exact)"
    )
    p.add_argument("--head-dim", type=int, default=None, help="head_dim (default: smallest that fits)")
    p.add_argument(
        "--rope-theta", type=float, default=None, help="LLaMA rope_theta / tl rotary_base (default: chosen)"
    )
    p.add_argument("--max-positions", type=int, default=2048, help="longest supported sequence")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.arch == "tl":
        return _run_tl(args)
    try:
        from ropeproof.verify.interop.hf import export_head

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
        exported.save_pretrained(args.out)
    except RopeproofError as exc:
        print(f"ropeproof export: error: {exc}", file=sys.stderr)
        return 2
    pl = exported.info.placement
    print(
        f"wrote {head.name} as {args.arch} (hidden_size {pl.hidden_size}, head_dim {pl.head_dim}, "
        f"rotary_dim {pl.rotary_dim}, rope_theta {pl.rope_theta}) to {args.out}"
    )
    print(pl.describe(head.spec))
    return 0


def _run_tl(args: argparse.Namespace) -> int:
    """``ropeproof export tl CONSTRUCTION --out DIR``: an attention-only rotary HookedTransformer
    (``tl_config.json`` + ``model.safetensors`` + ``ropeproof_export.json``; the ``tl`` extra)."""
    try:
        from ropeproof.verify.interop.tl.export import export_hooked_transformer

        head = compile_construction(construction_from_args(args), layout=args.layout)
        if args.rope_theta is not None and args.rope_theta <= 0:
            raise ExportError(f"--rope-theta={args.rope_theta} must be > 0")
        exported = export_hooked_transformer(
            head,
            layout=args.layout,
            rotary_dim=args.rotary_dim,
            d_head=args.head_dim,
            rotary_base=args.rope_theta,
            logit_scale=args.logit_scale,
            dtype=args.dtype,
            n_ctx=args.max_positions,
        )
        exported.save(args.out)
    except RopeproofError as exc:
        print(f"ropeproof export: error: {exc}", file=sys.stderr)
        return 2
    pl = exported.info.placement
    print(
        f"wrote {head.name} as an attention-only HookedTransformer (d_model {pl.hidden_size}, d_head "
        f"{pl.head_dim}, rotary_dim {pl.rotary_dim}, rotary_base {pl.rope_theta}, {args.layout}) "
        f"to {args.out}"
    )
    print(pl.describe(head.spec))
    return 0

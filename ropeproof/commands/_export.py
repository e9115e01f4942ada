"""``ropeproof export gptj|llama|tl CONSTRUCTION [params] --out DIR``: a loadable model directory.

``gptj``/``llama``: compiles the construction, places its planes exactly on the architecture's RoPE
spectrum (see :mod:`ropeproof.verify.interop.hf`) and saves a one-layer causal LM plus
``ropeproof_export.json`` (the optional ``hf`` extra). ``tl``: an attention-only rotary
``HookedTransformer`` (``tl_config.json`` + ``model.safetensors`` + ``ropeproof_export.json``; the
``tl`` extra). Both write ``tokenizer.json`` (``AutoTokenizer.from_pretrained`` loads it; word ``tokens[i]``
is id ``i``). ``from_pretrained`` loads with SDPA, which returns no attention weights: pass
``attn_implementation="eager"`` for them (``docs/guides/exports.md``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ropeproof.commands._arguments import (
    add_command,
    add_dtype,
    add_json,
    add_output,
    architecture,
    int_in,
    positive_float,
)
from ropeproof.commands._choices import ARCHITECTURE_NAMES
from ropeproof.commands._compile import add_construction_params, construction_from_args
from ropeproof.machinery._atomic_output import atomic_directory

TL = "tl"
"""The target that is a TransformerLens ``HookedTransformer`` rather than an HF architecture."""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "export",
        example="ropeproof export gptj index --theta 0.8659643233600653 --logit-scale 100 --out models/index",
        description=(
            "Write a directory that GPTJForCausalLM / LlamaForCausalLM.from_pretrained (or TransformerLens)\n"
            "loads, with a tokenizer AutoTokenizer.from_pretrained loads (word i = the head's token i).\n"
            "Frequencies are placed on the architecture's RoPE spectrum, whose formula in float64 gives\n"
            "each to a relative 1e-12 (LLaMA derives rope_theta so; the library then evaluates it in\n"
            "float32, checked to hold every frequency), or the command fails with the reason (e.g. GPT-J's\n"
            "base is fixed at 10000: use --theta 0.8659643233600653 = 10000**(-2/128) for index). Attention\n"
            "weights need from_pretrained(..., attn_implementation='eager'); the default, sdpa, has none."
        ),
    )
    p.add_argument(
        "arch",
        type=architecture(TL),
        metavar="{" + ",".join([*ARCHITECTURE_NAMES, TL]) + ",...}",
        help="target: gptj (GPTJForCausalLM), llama (LlamaForCausalLM) or tl (HookedTransformer)",
    )
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
        help="GPT-J / tl rotary_dim (default: smallest exact)",
    )
    p.add_argument(
        "--head-dim", type=int_in(2, even=True), default=None, help="head_dim (default: smallest that fits)"
    )
    p.add_argument(
        "--rope-theta",
        type=positive_float,
        default=None,
        help="LLaMA rope_theta / tl rotary_base (default: chosen)",
    )
    p.add_argument("--max-positions", type=int_in(1), default=2048, help="longest supported sequence")
    add_json(p, "the placement")
    p.set_defaults(run=run)


def _export(args: argparse.Namespace, staging: Any) -> tuple[Any, Any]:
    """Compile, export and save into ``staging``; return ``(head, exported)``."""
    from ropeproof.constructions._compile import compile_construction

    head = compile_construction(construction_from_args(args), layout=args.layout)
    if args.arch == TL:
        from ropeproof.verify.interop.tl._export import export_hooked_transformer

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
        exported.save(staging)
        return head, exported
    from ropeproof.verify.interop.hf import export_head

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
    return head, exported


def run(args: argparse.Namespace) -> int:
    with atomic_directory(args.out, args.force) as staging:  # refuses a bad --out before any work
        head, exported = _export(args, staging)
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
    if args.arch == TL:
        print(
            f"wrote {head.name} as an attention-only HookedTransformer (d_model {pl.hidden_size}, d_head "
            f"{pl.head_dim}, rotary_dim {pl.rotary_dim}, rotary_base {pl.rope_theta}, {args.layout}) "
            f"to {args.out}"
        )
    else:
        print(
            f"wrote {head.name} as {args.arch} (hidden_size {pl.hidden_size}, head_dim {pl.head_dim}, "
            f"rotary_dim {pl.rotary_dim}, rope_theta {pl.rope_theta}) to {args.out}"
        )
    print(pl.describe(head.spec))
    return 0

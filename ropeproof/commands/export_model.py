"""``ropeproof export-model gptj|llama number|letter --hops H --layers L --out DIR``: a compiled multi-hop
model as a checkpoint directory that ``from_pretrained`` loads, with its tokenizer.

Compiles ``Index^H Reflexive^(L-H)`` (number task) or ``Retrieval^H Reflexive^(L-H)`` (letter task) in
[A]'s GPT-J shape with the smallest width
(:func:`ropeproof.constructions.multihop_programs.checkpoint_program`), exports it
(:mod:`ropeproof.verify.interop.hf.model_export`) and prints the layout and the certified horizon
(:mod:`ropeproof.verify.exact.multihop_certified`). Needs the optional ``hf`` extra.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ropeproof.constructions.multihop_compile import compile_program
from ropeproof.constructions.multihop_programs import LOGIT_SCALE, TASKS, checkpoint_program
from ropeproof.theory.errors import RopeproofError

ARCHS = ("gptj", "llama")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export-model",
        help="export a compiled multi-hop model as a GPT-J / LLaMA checkpoint with a tokenizer (hf extra)",
        description=(
            "Write a directory that AutoModelForCausalLM and AutoTokenizer.from_pretrained load; greedy "
            "decoding of one token answers the task (prompts as in [A]: 'a z b y c x d w 5', pairs 'c2 fc')."
        ),
    )
    p.add_argument("arch", choices=ARCHS, help="target architecture")
    p.add_argument("task", choices=TASKS, help="number (Index layers) or letter (Retrieval layers)")
    p.add_argument("--hops", type=int, default=4, help="hop layers: solves chains of up to this many hops")
    p.add_argument("--layers", type=int, default=12, help="total layers (the rest are Reflexive)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--reflexive", choices=["positional", "symbolic"], default="positional")
    p.add_argument("--channel-code", choices=["cyclic", "onehot"], default="cyclic", help="answer code")
    p.add_argument("--logit-scale", type=float, default=LOGIT_SCALE, help="multiplies every layer's logits")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32", help="checkpoint dtype")
    p.add_argument("--max-positions", type=int, default=2048, help="longest supported prompt")
    p.add_argument("--certify-up-to", type=int, default=4096, help="largest length the certificate tries")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        from ropeproof.verify.exact.multihop_certified import certified_horizon
        from ropeproof.verify.interop.hf.model_export import export_model

        program = checkpoint_program(
            args.task, args.hops, args.layers, args.reflexive, args.channel_code, args.logit_scale
        )
        model = compile_program(program)
        exported = export_model(model, args.arch, dtype=args.dtype, max_positions=args.max_positions)
        exported.save_pretrained(args.out)
        cert = certified_horizon(model, args.hops, max_n=max(3, args.certify_up_to))
    except RopeproofError as exc:
        print(f"ropeproof export-model: error: {exc}", file=sys.stderr)
        return 2
    info = exported.info
    print(
        f"wrote {model.name} as {info.arch} ({model.n_layers} layers, hidden_size {info.hidden_size}, "
        f"head_dim {info.head_dim}, rotary_dim {info.rotary_dim}, rope_theta {info.rope_theta}) to {args.out}"
    )
    print("residual: " + ", ".join(f"{i}:{lab}" for i, lab in enumerate(info.residual_labels)))
    horizon = f"every n <= {cert.horizon}" + (" (the whole range tried)" if cert.complete else "")
    print(f"certified correct on every {args.task}-task input with <= {args.hops} hops for {horizon}")
    return 0

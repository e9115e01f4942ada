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
import json

from ropeproof.atomic_output import atomic_directory
from ropeproof.commands.arguments import add_command, add_dtype, add_json, add_output, int_in, positive_float
from ropeproof.constructions.multihop_compile import compile_program
from ropeproof.constructions.multihop_programs import LOGIT_SCALE, TASKS, checkpoint_program

ARCHS = ("gptj", "llama")


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "export-model",
        help="export a compiled multi-hop model as a GPT-J / LLaMA checkpoint with a tokenizer (hf extra)",
        example="ropeproof export-model gptj number --hops 2 --layers 3 --out models/number-2hop",
        description=(
            "Write a directory that AutoModelForCausalLM and AutoTokenizer.from_pretrained load; greedy\n"
            "decoding of one token answers the task (prompts as in [A]: 'a z b y c x d w 5', pairs 'c2 fc')."
        ),
    )
    p.add_argument("arch", choices=ARCHS, help="target architecture")
    p.add_argument("task", choices=TASKS, help="number (Index layers) or letter (Retrieval layers)")
    p.add_argument(
        "--hops", type=int_in(1), default=4, help="hop layers: solves chains of up to this many hops"
    )
    p.add_argument("--layers", type=int_in(1), default=12, help="total layers (the rest are Reflexive)")
    add_output(p, None, "output directory of the checkpoint")
    p.add_argument("--reflexive", choices=["positional", "symbolic"], default="positional")
    p.add_argument("--channel-code", choices=["cyclic", "onehot"], default="cyclic", help="answer code")
    p.add_argument(
        "--logit-scale", type=positive_float, default=LOGIT_SCALE, help="multiplies every layer's logits"
    )
    add_dtype(p, "checkpoint dtype", choices=("float32", "float64"))
    p.add_argument("--max-positions", type=int_in(3), default=2048, help="longest supported prompt")
    p.add_argument(
        "--certify-up-to", type=int_in(3), default=4096, help="largest length the certificate tries"
    )
    add_json(p, "the layout and the certified horizon")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ropeproof.verify.exact.multihop_certified import certified_horizon
    from ropeproof.verify.interop.hf.model_export import export_model

    with atomic_directory(args.out, args.force) as staging:  # refuses a bad --out before any work
        program = checkpoint_program(
            args.task, args.hops, args.layers, args.reflexive, args.channel_code, args.logit_scale
        )
        model = compile_program(program)
        exported = export_model(model, args.arch, dtype=args.dtype, max_positions=args.max_positions)
        exported.save_pretrained(staging)
        cert = certified_horizon(model, args.hops, max_n=args.certify_up_to)
    info = exported.info
    if args.json:
        doc = {
            "path": str(args.out),
            "model": model.name,
            "arch": info.arch,
            "layers": model.n_layers,
            "hidden_size": info.hidden_size,
            "head_dim": info.head_dim,
            "rotary_dim": info.rotary_dim,
            "rope_theta": info.rope_theta,
            "residual": list(info.residual_labels),
            "certified_horizon": cert.horizon,
            "certificate_complete": cert.complete,
        }
        print(json.dumps(doc))
        return 0
    print(
        f"wrote {model.name} as {info.arch} ({model.n_layers} layers, hidden_size {info.hidden_size}, "
        f"head_dim {info.head_dim}, rotary_dim {info.rotary_dim}, rope_theta {info.rope_theta}) to {args.out}"
    )
    print("residual: " + ", ".join(f"{i}:{lab}" for i, lab in enumerate(info.residual_labels)))
    horizon = f"every n <= {cert.horizon}" + (" (the whole range tried)" if cert.complete else "")
    print(f"certified correct on every {args.task}-task input with <= {args.hops} hops for {horizon}")
    return 0

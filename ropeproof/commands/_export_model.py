"""``ropeproof export-model gptj|llama number|letter --out DIR``: a compiled multi-hop model as a checkpoint
directory that ``from_pretrained`` loads, with its tokenizer.

Builds ``Index^H Reflexive^(L-H)`` (number task) or ``Retrieval^H Reflexive^(L-H)`` (letter task) with the
chosen solver on the checkpoint's own spectrum
(:func:`ropeproof.verify.studies.beyond._checkpoint_solvers.checkpoint_spec`: ``best``, ``paper`` or
``smallest``;
width 128 by default, built for prompts up to ``--max-length`` tokens), compiles it, certifies it and
exports it (:mod:`ropeproof.verify.interop.hf._model_export`); the config records the certified horizon.
Needs the optional ``hf`` extra.
"""

from __future__ import annotations

import argparse
import json

from ropeproof.commands._arguments import (
    add_command,
    add_dtype,
    add_json,
    add_output,
    architecture,
    int_in,
    positive_float,
)
from ropeproof.commands._choices import ARCHITECTURE_NAMES, LOGIT_SCALE, TASKS
from ropeproof.machinery._atomic_output import atomic_directory

SOLVERS = ("best", "paper", "smallest")
MAX_LENGTH_LIMIT = 1 << 20


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "export-model",
        example="ropeproof export-model gptj number --hops 4 --layers 12 --out models/number",
        description=(
            "Write a directory that AutoModelForCausalLM and AutoTokenizer.from_pretrained load; greedy\n"
            "decoding of one token answers the task (prompts as in [A]: 'a z b y c x d w 5', 'c2 fc').\n"
            "The config records certified_horizon: every input of the task family with up to --hops hops\n"
            "and at most that many tokens is proved correct for the float64 model in exact arithmetic. It\n"
            "is never more than --max-positions (the longest prompt the checkpoint can run). The saved\n"
            "checkpoint itself (its dtype's weights, transformers' float32 RoPE table, floating-point\n"
            "arithmetic) is not covered by the proof: it is sampled with transformers alone up to the\n"
            "horizon (unless --no-sample), and the config's ropeproof_certificate.label says which is which."
        ),
    )
    p.add_argument(
        "arch",
        type=architecture(),
        metavar="{" + ",".join(ARCHITECTURE_NAMES) + ",...}",
        help="target architecture",
    )
    p.add_argument("task", choices=TASKS, help="number (Index layers) or letter (Retrieval layers)")
    p.add_argument(
        "--solver",
        choices=SOLVERS,
        default="best",
        help="best: the best heads on the checkpoint's spectrum (orthogonal letter codes at theta = 0 on "
        "GPT-J's unrotated dims); paper: [A]'s one-plane Index/Retrieval; smallest: the width-6/8 program",
    )
    p.add_argument(
        "--width",
        type=int_in(4, even=True),
        default=128,
        help="n_embd = head_dim (one head per layer), [A]'s 128; '--solver smallest --width 6' (number) or "
        "'--width 8' (letter) is the smallest checkpoint",
    )
    p.add_argument(
        "--max-length",
        type=int_in(3, MAX_LENGTH_LIMIT),
        default=10_000,
        help="the longest prompt the checkpoint is built for: the number task's integers 1..N-1, the "
        "best solver's design length, the position table (unless --max-positions) and the certificate",
    )
    p.add_argument(
        "--max-positions",
        type=int_in(1),
        default=None,
        help="the position table (GPT-J n_positions, LLaMA max_position_embeddings); default --max-length. "
        "The stated horizon is at most this (reported smaller, not refused)",
    )
    p.add_argument(
        "--hops", type=int_in(1), default=4, help="hop layers: solves chains of up to this many hops"
    )
    p.add_argument("--layers", type=int_in(1), default=12, help="total layers (the rest are Reflexive)")
    add_output(p, None, "output directory of the checkpoint")
    p.add_argument(
        "--reflexive",
        choices=["positional", "symbolic"],
        default="positional",
        help="Reflexive layers (symbolic only with --solver smallest)",
    )
    p.add_argument("--channel-code", choices=["cyclic", "onehot"], default="cyclic", help="answer code")
    p.add_argument(
        "--logit-scale",
        type=positive_float,
        default=LOGIT_SCALE,
        help="multiplies every layer's logits; refused if the exported weights or scores would overflow "
        "float32 (the error gives the accepted range)",
    )
    add_dtype(p, "checkpoint dtype", choices=("float32", "float64"))
    p.add_argument(
        "--no-sample",
        action="store_true",
        help="skip sampling the saved checkpoint with transformers (the label then says 'not sampled'); the "
        "sample reaches the stated horizon (about 30 s at 10^4 tokens)",
    )
    add_json(p, "the layout and the certified horizon")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ropeproof.constructions._multihop_compile import compile_program
    from ropeproof.machinery._size_limits import check_size
    from ropeproof.verify.interop.hf._model_export import export_model
    from ropeproof.verify.studies.beyond._checkpoint_solvers import checkpoint_spec

    check_size(f"export-model --layers {args.layers}", args.layers, "export-model layers")  # before any work
    with atomic_directory(args.out, args.force) as staging:  # refuses a bad --out before any work
        spec = checkpoint_spec(
            args.task,
            args.solver,
            args.arch,
            args.width,
            args.max_length,
            args.hops,
            args.layers,
            args.reflexive,
            args.channel_code,
            args.logit_scale,
        )
        model = compile_program(spec.program)
        options = spec.export_options()
        if args.max_positions is not None:
            options["max_positions"] = args.max_positions
        exported = export_model(model, args.arch, dtype=args.dtype, notes=spec.notes, **options)
        exported.save_pretrained(staging)
        if not args.no_sample:  # the checkpoint as saved, loaded by transformers alone
            exported.sample_saved(staging)
    info = exported.info
    record = info.metadata["certificate"]
    if args.json:
        doc = {
            "path": str(args.out),
            "model": model.name,
            "solver": spec.solver,
            "arch": info.arch,
            "layers": model.n_layers,
            "hidden_size": info.hidden_size,
            "head_dim": info.head_dim,
            "rotary_dim": info.rotary_dim,
            "rope_theta": info.rope_theta,
            "vocab_size": model.vocab_size + 1,
            "max_positions": options["max_positions"],
            "residual": list(info.residual_labels),
            "certified_horizon": record["certified_horizon"],
            "label": record["label"],
            "certificate": record,
            "notes": list(spec.notes),
        }
        print(json.dumps(doc))
        return 0
    print(
        f"wrote {model.name} ({spec.solver} solver) as {info.arch} ({model.n_layers} layers, hidden_size "
        f"{info.hidden_size}, head_dim {info.head_dim}, rotary_dim {info.rotary_dim}, rope_theta "
        f"{info.rope_theta:g}, {model.vocab_size + 1} tokens, {options['max_positions']} positions) to "
        f"{args.out}"
    )
    for note in spec.notes:
        print(f"note: {note}")
    used = [f"{i}:{lab}" for i, lab in enumerate(info.residual_labels) if not lab.startswith("unused")]
    spare = len(info.residual_labels) - len(used)
    print(
        "residual: "
        + ", ".join(used)
        + (f" (dims {len(used)}..{len(used) + spare - 1} unused)" if spare else "")
    )
    horizon = f"every n <= {record['certified_horizon']}"
    if record["limited_by"] == "max_positions":
        horizon += (
            f" (the longest prompt the checkpoint runs; the proof reaches {record['certificate_horizon']}"
        )
        horizon += " or beyond)" if record["certificate_complete"] else ")"
    print(
        f"proved correct on every {args.task}-task input with <= {args.hops} hops for {horizon}, for the "
        "float64 model in exact arithmetic"
    )
    table = record["checkpoint"]["rope_table"]
    print(
        f"transformers' float32 RoPE table is off by up to {table['max_angle_error_rad']:.2g} rad below "
        f"position {table['positions']}; the saved checkpoint is not proved, only sampled"
    )
    print(f"label: {record['label']}")
    return 0

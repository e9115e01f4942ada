"""``ropeproof import hf|tl MODEL_DIR --layer L --head H --out DIR [--tokens IDS]``: write one head of
a local checkpoint as a head directory.

``hf``: a ``save_pretrained`` directory of a GPT-J or LLaMA causal LM (the ``hf`` extra).
``tl``: a ``HookedTransformer`` directory written by ``save_hooked_transformer`` or ``ropeproof export
tl`` (the ``tl`` extra). Nothing is downloaded. The output is an ordinary head directory
(``head.json`` + ``weights.safetensors``, format ``ropeproof-head`` version 2) whose vocabulary is the
chosen token ids and whose ``metadata["imported"]`` says where it came from (see
:mod:`ropeproof.verify.interop._imported`); ``sweep --head`` and ``ps-score --head`` run on it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ropeproof.commands._arguments import add_command, add_output, int_in
from ropeproof.machinery._atomic_output import atomic_directory
from ropeproof.machinery._errors import InputError, RopeproofError

LIBRARIES = ("hf", "tl")


def parse_token_ids(text: str | None) -> list[int] | None:
    """``"A:B"`` -> ``range(A, B)``; ``"3,5,9"`` -> those ids; ``None`` -> ``None`` (all)."""
    if text is None:
        return None
    try:
        if ":" in text:
            a, b = (int(part) for part in text.split(":"))
            if not 0 <= a < b:
                raise ValueError
            return list(range(a, b))
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise InputError(f"--tokens={text!r} must be A:B (ids A..B-1, 0 <= A < B) or a list 3,5,9") from None


def token_ids(text: str) -> list[int]:
    """``--tokens`` parsed and checked (:func:`parse_token_ids`)."""
    try:
        return parse_token_ids(text)  # type: ignore[return-value]
    except RopeproofError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "import",
        example="ropeproof import hf models/index --layer 0 --head 0 --out heads/imported",
    )
    p.add_argument(
        "library",
        choices=LIBRARIES,
        help="hf: a save_pretrained directory; tl: a save_hooked_transformer one",
    )
    p.add_argument("model_dir", type=Path, help="the local checkpoint directory (nothing is downloaded)")
    p.add_argument("--layer", type=int_in(0), required=True, help="layer index (from 0)")
    p.add_argument("--head", type=int_in(0), required=True, help="query head index (from 0)")
    add_output(p, None, "output head directory")
    p.add_argument(
        "--tokens",
        type=token_ids,
        default=None,
        help="token ids of the head's vocabulary: A:B or 3,5,9 (default: all, <= 4096)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    ids = args.tokens
    with atomic_directory(args.out, args.force) as staging:  # refuses a bad --out before loading the model
        if args.library == "hf":
            from ropeproof.verify.interop.hf._model_head import compiled_from_hf_model, load_hf_model

            head = compiled_from_hf_model(
                load_hf_model(args.model_dir), args.layer, args.head, ids, source=str(args.model_dir)
            )
        else:
            from ropeproof.verify.interop.tl._checkpoint import load_hooked_transformer
            from ropeproof.verify.interop.tl._model_head import compiled_from_hooked_transformer

            model = load_hooked_transformer(args.model_dir)
            head = compiled_from_hooked_transformer(
                model, args.layer, args.head, ids, source=str(args.model_dir)
            )
        head.save(staging)
    spec = head.spec
    print(
        f"wrote {head.name} ({head.vocab_size} tokens, d_model {head.d_model}, head_dim {spec.head_dim}, "
        f"rotary_dim {spec.rotary_dim}, {spec.layout}) to {args.out}"
    )
    return 0

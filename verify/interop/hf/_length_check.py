"""Answer long prompts with ``transformers`` alone: an exported checkpoint directory is loaded with
``AutoTokenizer`` and ``AutoModelForCausalLM.from_pretrained`` (no ropeproof code in the loop) and greedily
decodes one token for sampled and decoy prompts at given lengths, in each dtype.

The prompts come from [A]'s task generators (:func:`~ropeproof.verify.measure._task_lengths.long_task`) and
their decoy versions (:func:`~ropeproof.verify.measure._task_lengths.with_decoys`, which needs the compiled
model
that was exported), written as text (:func:`~ropeproof.verify.measure._tokenizer.prompt_text`); from there on
it is
the user's loop: tokenizer, model, ``generate(max_new_tokens=1, do_sample=False)``. Every prompt must
encode without ``[UNK]`` (the checkpoint's vocabulary holds it) and to exactly one id per token.
Accuracies carry 95% Wilson intervals; the first wrong answer of each row is kept as a witness.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.machinery._errors import InputError
from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers
from ropeproof.verify.measure._statistics import proportion_interval
from ropeproof.verify.measure._task_lengths import long_task, with_decoys
from ropeproof.verify.measure._tokenizer import UNK, prompt_text

DTYPES: tuple[str, ...] = ("float32", "float64")


def transformers_answers(lm: Any, tok: Any, prompts: Sequence[str], batch: int = 4) -> list[str]:
    """Greedy one-token answers (decoded words) of ``prompts`` of equal token length, ``batch`` at a time."""
    out: list[str] = []
    unk = tok.convert_tokens_to_ids(UNK)
    for start in range(0, len(prompts), batch):
        enc = tok(list(prompts[start : start + batch]), return_tensors="pt")
        if (enc["input_ids"] == unk).any():
            raise InputError("a prompt holds a word outside the checkpoint's vocabulary ([UNK])")
        with torch.inference_mode():
            gen = lm.generate(**enc, max_new_tokens=1, do_sample=False)
        out.extend(tok.batch_decode(gen[:, -1:]))
    return out


def transformers_length_check(
    path: str | Path,
    model: CompiledModel,
    lengths: Sequence[int],
    count: Callable[[int], int],
    dtypes: Sequence[str] = DTYPES,
    build: str = "distractors",
    seed: int = 0,
    attn_implementation: str = "sdpa",
    hops: tuple[int, ...] = (1, 2, 3, 4),
) -> list[dict[str, Any]]:
    """One row per dtype, length and kind (``sampled``, ``decoy``): inputs, correct answers, accuracy with
    its 95% interval and the first wrong answer (module docstring). ``model`` is the compiled model that
    was exported to ``path`` (it makes the decoys); the answers come from the directory alone. ``hops``: the
    hop counts the prompts are drawn with (balanced; at most the model's hop layers)."""
    tf = require_transformers()
    bad = sorted(set(dtypes) - set(DTYPES))
    if bad or not dtypes:
        raise InputError(f"dtypes {bad or list(dtypes)} unknown or empty; accepted: {list(DTYPES)}")
    tok = tf.AutoTokenizer.from_pretrained(path)
    rows: list[dict[str, Any]] = []
    for dtype in dtypes:
        with quiet_progress():
            lm = tf.AutoModelForCausalLM.from_pretrained(
                path, dtype=getattr(torch, dtype), attn_implementation=attn_implementation
            ).eval()
        for n in lengths:
            insts = long_task(model.task, count(n), int(n), hops, build, seed + int(n))
            batch = 4 if n <= 1024 else 1
            for kind, probe in (("sampled", insts), ("decoy", [with_decoys(model, i) for i in insts])):
                prompts = [prompt_text(i.tokens) for i in probe]
                lengths_ok = {len(tok(p)["input_ids"]) for p in prompts[:1]} == {int(n)}
                if not lengths_ok:
                    raise InputError(f"a {n}-token prompt does not encode to {n} ids")
                got = transformers_answers(lm, tok, prompts, batch)
                right = [g == i.answer.lower() for g, i in zip(got, probe, strict=True)]
                wrong = next((j for j, r in enumerate(right) if not r), None)
                rows.append(
                    {
                        "arch": lm.config.model_type,
                        "task": model.task,
                        "dtype": dtype,
                        "build": build,
                        "n": int(n),
                        "kind": kind,
                        "inputs": len(probe),
                        "correct": sum(right),
                        "accuracy": sum(right) / len(probe),
                        "accuracy_ci": list(proportion_interval(sum(right), len(probe)).bounds),
                        "first_wrong": None
                        if wrong is None
                        else {
                            "tokens": list(probe[wrong].tokens),
                            "expected": probe[wrong].answer,
                            "given": got[wrong],
                        },
                    }
                )
        del lm
    return rows

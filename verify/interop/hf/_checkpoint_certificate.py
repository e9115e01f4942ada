"""What an exported multi-hop checkpoint states about its correctness, no stronger than the evidence.

The certificate (:mod:`ropeproof.verify.measure.exact._multihop_certified`) proves the *compiled model*
correct in exact real arithmetic: its float64 weights, exact RoPE angles ``p theta``. It does not cover the
checkpoint as shipped:

- the weights are rounded to the checkpoint's dtype;
- transformers builds the rotation in float32 whatever the model's dtype (``inv_freq``, ``p * inv_freq``,
  ``sin``/``cos``), so the angles are off: :func:`rope_table_record` measures the library's own table
  (:meth:`~ropeproof.verify.interop.hf._converter.HFConverter.rope_cos_sin`) against ``p theta`` at every
  position the stated horizon covers (the width-128 GPT-J table is off by up to ``7.8e-4`` rad below
  position ``10^4``);
- the forward pass runs in floating point (GPT-J's eager ``q . k`` in float32 even in a float64 model).

No bound on that arithmetic is derived here, so the checkpoint is *sampled*, not certified:
:func:`sample_saved_checkpoint` asks the saved directory, loaded by ``transformers`` alone, sampled and
decoy prompts at lengths up to the stated horizon (:func:`~ropeproof.verify.interop.hf._length_check.
transformers_length_check`). The config says which is which in one line (:func:`certificate_label`)::

    certified for the float64 model (exact arithmetic) to 10000 tokens; float32 checkpoint sampled to
    10000 tokens (14 prompts at lengths 17, 412, 10000: all answered correctly)

and keeps the evidence in ``ropeproof_certificate`` (:func:`horizon_record`): the certificate's horizon
and steps, and under ``checkpoint`` the dtype, ``certified: false``, the RoPE table's error and the sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.constructions._paper import TASK_LENGTH
from ropeproof.verify.interop.hf._converter import HFConverter
from ropeproof.verify.interop.hf._length_check import transformers_length_check
from ropeproof.verify.interop.hf._placement import Placement
from ropeproof.verify.measure.exact._multihop_certified import MultiHopCertificate

CERTIFY_LIMIT = 10**6
"""Longest length the export certifies (the certificate's own limit)."""

CERTIFIED_FOR = "the float64 model (exact arithmetic)"
"""What the certificate covers: the compiled model, float64 weights, exact arithmetic."""


def horizon_record(
    model: CompiledModel, cert: MultiHopCertificate, max_positions: int, checkpoint: Mapping[str, Any]
) -> dict[str, Any]:
    """What a checkpoint states about its certificate: ``certified_horizon`` is the largest ``N`` such that
    every input of the family up to ``N`` tokens is proved correct for :data:`CERTIFIED_FOR` *and* runs in
    the checkpoint, so it is at most ``max_positions`` (a longer prompt does not fit the position table).
    ``checkpoint``: the checkpoint's own entry (``dtype``, ``rope_table``, ``sample``; module docstring)."""
    stated = min(cert.horizon, int(max_positions))
    record = {
        "certified_horizon": stated,
        "certified_for": CERTIFIED_FOR,
        "task": model.task,
        "hops": cert.hops,
        "certificate_horizon": cert.horizon,
        "certificate_complete": cert.complete,
        "certified_up_to": int(cert.n[-1]),
        "max_positions": int(max_positions),
        "limited_by": "max_positions" if stated < cert.horizon or cert.complete else "certificate",
        "steps": cert.detail.get("steps", {}),
        "checkpoint": {"certified": False, **checkpoint},
    }
    return relabel(record)


def relabel(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its ``label`` and ``statement`` made from its fields (:func:`certificate_label`)."""
    stated, task, hops = record["certified_horizon"], record["task"], record["hops"]
    dtype = record["checkpoint"]["dtype"]
    record["label"] = certificate_label(record)
    record["statement"] = (
        f"every {task}-task input with 1..{hops} hops and at most {stated} tokens is answered correctly by "
        f"{CERTIFIED_FOR} (proved, interval-checked; docs/theory.md section 6). This {dtype} checkpoint is "
        f"not covered by the proof (its {dtype} weights, the RoPE table transformers builds in float32, "
        "floating-point arithmetic): " + _sample_text(record["checkpoint"])
    )
    return record


def certificate_label(record: Mapping[str, Any]) -> str:
    """One line: what is certified, for which model, and what was sampled (module docstring)."""
    checkpoint = record["checkpoint"]
    return (
        f"certified for {CERTIFIED_FOR} to {record['certified_horizon']} tokens; {checkpoint['dtype']} "
        f"checkpoint {_sample_text(checkpoint)}"
    )


def _sample_text(checkpoint: Mapping[str, Any]) -> str:
    sample = checkpoint.get("sample")
    if not sample:
        return "not sampled"
    if "skipped" in sample:
        return f"not sampled ({sample['skipped']})"
    lengths = ", ".join(str(n) for n in sample["lengths"])
    head = f"sampled to {sample['sampled_to']} tokens ({sample['prompts']} prompts at lengths {lengths}: "
    if sample["correct"] == sample["prompts"]:
        return head + "all answered correctly)"
    return (
        head
        + f"{sample['prompts'] - sample['correct']} answered wrong, first at n={sample['first_wrong']['n']})"
    )


def rope_table_record(
    conv: HFConverter, lm_model: Any, model: CompiledModel, placements: Sequence[Placement], n: int
) -> dict[str, Any]:
    """How far the rotation the exported model builds is from the exact one, at positions ``0 .. n - 1``:
    for every rotating plane a layer places, the angle of the library's ``(cos, sin)``
    (``atan2(sin, cos)``, :meth:`HFConverter.rope_cos_sin`; float32 values, exact in float64) against
    ``p theta`` with ``theta`` the compiled layer's frequency (float64), wrapped to ``(-pi, pi]``. Returns
    the largest error and where it is."""
    cos, sin = conv.rope_cos_sin(lm_model, n)
    p = np.arange(n, dtype=np.float64)
    worst: dict[str, Any] = {"max_angle_error_rad": 0.0, "at": None}
    seen: set[tuple[int, float]] = set()
    for layer, (head, pl) in enumerate(zip(model.layers, placements, strict=True)):
        for source, target, _swapped in pl.planes:
            theta = abs(float(head.spec.plane_freqs[source]))
            if theta == 0 or target >= cos.shape[1] or (target, theta) in seen:
                continue  # pass-through dims do not rotate
            seen.add((target, theta))
            error = np.arctan2(sin[:, target], cos[:, target]) - p * theta
            error = np.abs((error + math.pi) % (2 * math.pi) - math.pi)
            at = int(error.argmax())
            if error[at] > worst["max_angle_error_rad"]:
                where = {"layer": layer, "plane": target, "theta": theta, "position": at}
                worst = {"max_angle_error_rad": float(error[at]), "at": where}
    return {"positions": int(n), **worst, "measured": "the library's own sin/cos against p * theta (float64)"}


SAMPLE_COUNTS: tuple[int, int, int] = (4, 2, 1)
"""Prompts (each also asked with decoys) at the task length, a middle length and the horizon."""


def sample_lengths(horizon: int) -> dict[int, int]:
    """``{length: prompts}`` of the default sample: [A]'s task length (17), the geometric middle between it
    and ``horizon``, and ``horizon`` (:data:`SAMPLE_COUNTS`); empty when ``horizon`` is below 17."""
    if horizon < TASK_LENGTH:
        return {}
    middle = round(math.sqrt(TASK_LENGTH * horizon))
    out: dict[int, int] = {}
    for n, count in zip((TASK_LENGTH, middle, horizon), SAMPLE_COUNTS, strict=True):
        out[n] = max(out.get(n, 0), count)
    return out


def sample_saved_checkpoint(
    path: str | Path,
    model: CompiledModel,
    record: dict[str, Any],
    counts: Mapping[int, int] | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Sample the checkpoint saved at ``path`` (the export of ``model``, its certificate ``record``) with
    transformers alone in its own dtype (sdpa, ``from_pretrained``'s default) at ``counts``
    (``{length: prompts}``, default :func:`sample_lengths` of the stated horizon; each prompt also asked
    with decoys); return ``record`` relabelled with the sample under ``checkpoint``."""
    checkpoint = record["checkpoint"]
    horizon = int(record["certified_horizon"])
    todo = dict(sample_lengths(horizon) if counts is None else counts)
    if not todo:
        checkpoint["sample"] = {
            "skipped": f"the stated horizon {horizon} is below the task length {TASK_LENGTH}"
        }
        return relabel(record)
    hops = tuple(range(1, int(record["hops"]) + 1))
    rows = transformers_length_check(
        path, model, sorted(todo), todo.__getitem__, (checkpoint["dtype"],), seed=seed, hops=hops
    )
    wrong = [r for r in rows if r["correct"] < r["inputs"]]
    checkpoint["sample"] = {
        "lengths": sorted(todo),
        "sampled_to": max(todo),
        "prompts": sum(r["inputs"] for r in rows),
        "correct": sum(r["correct"] for r in rows),
        "kinds": sorted({r["kind"] for r in rows}),
        "build": rows[0]["build"],
        "hops": list(hops),
        "attn_implementation": "sdpa",
        "rows": [{k: r[k] for k in ("n", "kind", "inputs", "correct", "accuracy_ci")} for r in rows],
        "first_wrong": None if not wrong else {"n": wrong[0]["n"], **wrong[0]["first_wrong"]},
    }
    return relabel(record)

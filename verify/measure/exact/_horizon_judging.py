"""Judging [A] Theorem 3.1: T_Index and T_Retrieval compute their function up to their horizon.

Each function judges one construction two ways, by its exact worst-case margin over every input of its
family (:func:`~ropeproof.verify.measure.exact._discrepancy.exact_sweep`) and by its answers on sampled
1-hop tasks (:func:`~ropeproof.verify.kernel._compiled.answer`), both in the ``dtype`` asked for. A margin
at or below the dtype's resolution (:func:`~ropeproof.verify.kernel._resolution.gap_resolution`, one plane)
cannot be told from rounding, so the verdict is then ``unresolvable``. The claims in
:mod:`ropeproof.claims._thm31` state what is judged and call these.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.verify.kernel._compiled import answer
from ropeproof.verify.kernel._resolution import gap_resolution
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.measure._tasks import letter_task, number_task
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep
from ropeproof.verify.measure.exact._families import family_for
from ropeproof.verify.measure.exact._index_sweep import index_sweep

LONG_INDEX_LENGTH = 10**5
"""How far :func:`index_horizon_outcome` follows T_Index's exact margin past its vocabulary."""


def index_horizon_outcome(
    theta: float,
    letters: int,
    max_int: int,
    max_len: int,
    tasks: int,
    softmax_scale: float,
    dtype: torch.dtype,
) -> Outcome:
    """T_Index at ``theta`` (``letters`` letters, integers ``1 .. max_int``): ``holds`` when its exact worst
    margin over every input of length ``2 .. max_len`` is positive and it answers ``tasks`` 1-hop number
    tasks (seed 0) correctly both with the argmax readout and with softmax at logit scale
    ``softmax_scale``; ``unresolvable`` when that margin is at or below ``dtype``'s resolution.

    Figures: the least margin ``min_margin_inf_2..17`` (named for the claim's lengths), both accuracies,
    and the first length up to :data:`LONG_INDEX_LENGTH` where the exact one-plane margin (float64) sinks
    to the resolution (``None``: none). The counterexample is the witness input of the least margin."""
    c = index_construction(theta, max_int=max_int, letters=letters)
    head = compile_construction(c)
    sweep = exact_sweep(build_tables(head, family_for(c), max_len, dtype), max_len)
    res = gap_resolution(dtype, head_dim=2)
    sampled = number_task(tasks, hops=(1,), seed=0)
    seqs = [t.tokens for t in sampled]
    hard = answer(head, seqs, dtype=dtype)
    soft = answer(head, seqs, mode="softmax", softmax_scale=float(softmax_scale), dtype=dtype)
    acc_hard = float(np.mean([a == t.answer for a, t in zip(hard, sampled, strict=True)]))
    acc_soft = float(np.mean([a == t.answer for a, t in zip(soft, sampled, strict=True)]))
    m = float(sweep.margin_inf.min())
    # beyond the vocabulary: the exact margin stays positive but sinks below the dtype's resolution
    long = index_sweep([theta], [1.0], LONG_INDEX_LENGTH)
    unresolvable = np.nonzero(long.margin_inf <= res)[0]
    figures = {
        "min_margin_inf_2..17": m,
        "accuracy_argmax": acc_hard,
        "accuracy_softmax": acc_soft,
        "first_n_margin_below_dtype_resolution": int(long.n[unresolvable[0]]) if unresolvable.size else None,
    }
    ok = m > 0 and acc_hard == 1.0 and acc_soft == 1.0
    cex = None if ok else sweep.witness(int(sweep.n[np.argmin(sweep.margin_inf)]), "margin_inf")
    return Outcome.judge(ok, figures, "min_margin_inf_2..17", cex, resolvable=m > res)


def retrieval_horizon_outcome(
    alphabet_size: int, theta: float, max_n: int, tasks: int, dtype: torch.dtype
) -> Outcome:
    """T_Retrieval (``alphabet_size`` letters, ``omega = 2 pi / alphabet_size``) at ``theta``, against
    [A]'s horizon: every length ``n0`` with ``theta < omega / (2 n0)``, i.e. up to ``ceil(omega / (2
    theta)) - 1`` (``claimed_horizon``).

    ``holds`` when the exact worst margin is positive at every length ``2 .. claimed_horizon`` and the
    head answers ``tasks`` 1-hop letter tasks (seed 0) correctly; ``unresolvable`` when the least margin
    there is at or below ``dtype``'s resolution. Figures: ``claimed_horizon``; with ``n0`` read as the
    largest offset (lengths up to ``claimed_horizon + 1``, ``offset_horizon_length``), whether the margin
    is positive there too (``offset_convention``); the first length up to ``max_n`` whose exact margin is
    ``<= 0`` (``None``: none); the least margin within the horizon; the task accuracy. The counterexample
    is the witness input of the least margin within the horizon."""
    c = retrieval_construction(alphabet_size, theta, max_int=8)
    head = compile_construction(c)
    big = max_n
    sweep = exact_sweep(build_tables(head, family_for(c), big, dtype), big)
    omega = 2 * math.pi / alphabet_size
    horizon_claimed = math.ceil(omega / (2 * theta)) - 1
    bad = np.nonzero(sweep.margin_inf <= 0)[0]
    first_failure = int(sweep.n[bad[0]]) if bad.size else None
    sampled = letter_task(tasks, hops=(1,), seed=0)
    answers = answer(head, [t.tokens for t in sampled], dtype=dtype)
    acc = float(np.mean([a == t.answer for a, t in zip(answers, sampled, strict=True)]))
    within = sweep.margin_inf[: horizon_claimed - 1]
    ok = bool((within > 0).all()) and acc == 1.0
    # n0 read as the largest offset: the horizon covers lengths up to n0 + 1
    offset_within = sweep.margin_inf[:horizon_claimed]
    figures = {
        "claimed_horizon": horizon_claimed,
        "offset_horizon_length": horizon_claimed + 1,
        "offset_convention": "holds" if bool((offset_within > 0).all()) else "violated",
        "exact_first_failure_n": first_failure,
        "min_margin_within_horizon": float(within.min()),
        "task_accuracy": acc,
    }
    cex = None
    if not ok:
        n0 = int(sweep.n[np.argmin(within)])
        cex = dataclasses.asdict(sweep.witness(n0, "margin_inf"))
    res = gap_resolution(dtype, head_dim=2)
    return Outcome.judge(ok, figures, "exact_first_failure_n", cex, resolvable=float(within.min()) > res)

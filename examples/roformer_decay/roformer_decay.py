"""RoFormer's long-term decay (Su et al., *RoFormer: Enhanced Transformer with Rotary Position Embedding*),
checked with ropeproof's spectrum API.

What the paper says (second-hand, as recalled in ropeproof's issue 43; not read from the paper here): with
theta_k = 10000^(-2k/d), Abel summation bounds the RoPE inner product by
max_k |h_{k+1} - h_k| * sum_j |S_j(m)|, S_j(m) = sum_{k<j} e^{i m theta_k}, and the "relative upper bound"
(1/(d/2)) sum_j |S_j(m)| decays as the relative distance m grows (a figure for d = 128 over m up to a few
hundred), which it calls long-term decay.

What is computed here: ``partial_sum_decay(Spectrum.from_base(10000, 128), max_m)`` gives that bound f(m)
at every m with error bounds and its first rise (certified); the dyadic windows [2^(a-1), 2^a] and their
maxima say whether the decay is long-term.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ropeproof import PartialSumDecay, Spectrum, partial_sum_decay

DIM = 128
BASE = 10000.0


def roformer_spectrum() -> Spectrum:
    """theta_k = 10000^(-2k/128), k = 0 .. 63, unit amplitudes."""
    return Spectrum.from_base(BASE, DIM)


def decay(max_m: int) -> PartialSumDecay:
    """The relative upper bound f(m) = (1/64) sum_j |S_j(m)| for m = 0 .. max_m, with its first rise."""
    return partial_sum_decay(roformer_spectrum(), max_m)


def window_maxima(result: PartialSumDecay) -> list[dict[str, Any]]:
    """For each dyadic window [2^(a-1), 2^a] inside 1 .. max_m: its largest f, where, and that value's error
    bound (so two windows' maxima are compared with both bounds)."""
    out = []
    a = 1
    while 2**a <= result.max_m:
        lo, hi = 2 ** (a - 1), 2**a
        window = result.values[lo : hi + 1]
        at = lo + int(np.argmax(window))
        out.append(
            {"window": [lo, hi], "max": float(result.values[at]), "at": at, "error": float(result.errors[at])}
        )
        a += 1
    return out


def first_window_rise(maxima: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first window whose maximum exceeds the previous window's by more than both error bounds (None if
    none does); a difference within the bounds is reported as undecided (``{"undecided": window}``)."""
    for before, after in itertools.pairwise(maxima):
        gap = after["max"] - before["max"]
        if abs(gap) <= after["error"] + before["error"]:
            return {"undecided": after["window"]}
        if gap > 0:
            return after
    return None

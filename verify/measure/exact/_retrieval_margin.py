"""T_Retrieval's worst-case margin from an explicit finite formula, valid at every length.

With the notation of :mod:`ropeproof.theory._retrieval_margin` (target at distance ``t`` scores
``cos(t theta)``, a competitor with letter offset ``c`` in ``1 .. |ALPH|-1`` at distance ``d`` scores
``cos(c omega - d theta)``, ``d = 0`` being the query itself):

    margin_inf(n) = min_{1 <= t <= n-1} [ cos(t theta)
                                          - max_{0 <= d <= n-1, d != t} max_c cos(c omega - d theta) ].

Every input of the Retrieval family (docs/theory.md section 4) realises any choice of ``t``, ``d`` and
``c``, so this is exact; it costs ``O(n |ALPH|)`` per length. Each difference of cosines is taken in the
stable product form ``cos a - cos b = 2 sin((b - a)/2) sin((a + b)/2)``; the angles ``d theta`` are
reduced mod ``2 pi`` by :func:`~ropeproof.verify.kernel._angles.offset_angles`.
"""

from __future__ import annotations

import math

import numpy as np

from ropeproof.machinery._validate import integer, real
from ropeproof.verify.kernel._angles import offset_angles


def retrieval_margin_explicit(max_n: int, theta: float, alphabet_size: int) -> np.ndarray:
    """``margin_inf(n)`` for every ``n = 2 .. max_n`` (index ``n - 2``), float64."""
    max_n, alphabet_size = integer(max_n, "max_n", low=2), integer(alphabet_size, "alphabet_size", low=2)
    theta = real(theta, "theta")
    omega = 2 * math.pi / alphabet_size
    d = np.arange(max_n, dtype=np.float64)
    d_theta = offset_angles(d, theta)  # d theta reduced mod 2 pi (the toolkit's one angle formation)
    c = np.arange(1, alphabet_size, dtype=np.float64)
    # the competitor angle closest to alignment at each distance d: max_c cos(c omega - d theta)
    comp_angle = c[None, :] * omega - d_theta[:, None]  # [max_n, |ALPH|-1]
    best_c = np.argmax(np.cos(comp_angle), axis=1)
    comp = comp_angle[np.arange(max_n), best_c]  # angle b with the largest cos(b), per distance
    out = np.empty(max_n - 1)
    for n in range(2, max_n + 1):
        a = d_theta[1:n]  # target angles t theta, t = 1 .. n - 1
        b = comp[:n]
        order = np.argsort(-np.cos(b), kind="stable")
        best, second = order[0], order[1] if n > 1 else order[0]
        # the strongest competitor unless it sits at the target's own distance
        b_for_t = np.where(np.arange(1, n) == best, b[second], b[best])
        diff = 2 * np.sin((b_for_t - a) / 2) * np.sin((a + b_for_t) / 2)  # cos a - cos b, stable
        out[n - 2] = diff.min()
    return out

"""Theorem D's counting steps, checked by certified arithmetic over a range of lengths.

Theorem D (:mod:`ropeproof.theory._dirichlet`) rests on two steps that sympy cannot state:

- *pigeonhole*: the ``Q^K + 1`` points ``(u theta_k mod 2 pi)_k``, ``u = 0 .. Q^K``, fall into the
  ``Q^K`` half-open boxes of side ``2 pi / Q``, so two of them, ``u_1 < u_2``, share a box;
- *box width*: two points of one box differ by less than ``2 pi / Q`` in every coordinate, so
  ``d = u_2 - u_1`` (``1 <= d <= Q^K``) has ``|d theta_k mod 2 pi| < 2 pi / Q`` for every ``k``.

For given frequencies and every ``Q`` that a length ``n <= max_n`` uses (``Q = Q_K(M)`` with
``M = n - 1`` or ``ceil((n - 1) / 2)``, ``Q >= 2``), :func:`dirichlet_witnesses` exhibits a colliding
pair (found in float64) and certifies its conclusion with ball arithmetic (Arb, ``flint.arb``): the
reduced angle ``r_k = d theta_k - 2 pi j_k`` (``j_k`` the nearest integer to ``d theta_k / 2 pi`` in
float64; any integer is valid) is enclosed in a ball and ``|r_k| < 2 pi / Q`` is decided by Arb's
comparison of balls, which is true only when it holds for every point of both. Since ``Q^K <= M``, the
witness ``d`` lies in ``1 .. M``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from flint import arb

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._dirichlet import dirichlet_q
from ropeproof.verify.measure.exact._angles import reduced_angles
from ropeproof.verify.measure.exact._certified import arb_ends, arb_precision

MAX_POINTS = 1 << 22
"""Largest ``Q^K + 1`` point set searched for a collision."""


@dataclass(frozen=True)
class BoxWitness:
    """For one ``Q``: the colliding pair ``u_1 < u_2`` and whether the box-width conclusion for
    ``d = u_2 - u_1`` is certified (``max_abs_reduced`` is the largest upper end of
    ``|d theta_k mod 2 pi|`` over ``k``; it is below ``2 pi / Q`` when certified)."""

    q: int
    u1: int
    u2: int
    certified: bool
    max_abs_reduced: float

    @property
    def d(self) -> int:
        return self.u2 - self.u1


def q_values(planes: int, max_n: int) -> list[int]:
    """Every ``Q = Q_K(M) >= 2`` used by Theorem D at some ``n <= max_n`` (``M = n-1`` or
    ``ceil((n-1)/2)``)."""
    qs = {dirichlet_q(m, planes) for m in range(1, max_n)}
    return sorted(q for q in qs if q >= 2)


def _collisions(freqs: np.ndarray, q: int) -> list[tuple[int, int]]:
    """Pairs of points ``u`` in one box, at most a few, from the float64 box indices."""
    count = q**freqs.size + 1
    u = np.arange(count)
    two_pi = 2 * math.pi
    idx = np.zeros(count, dtype=np.int64)
    for th in freqs:
        frac = np.mod(reduced_angles(u, float(th)), two_pi) / two_pi  # in [0, 1)
        idx = idx * q + np.minimum(np.floor(frac * q).astype(np.int64), q - 1)
    order = np.argsort(idx, kind="stable")
    same = np.nonzero(idx[order][1:] == idx[order][:-1])[0]
    pairs = [(int(min(order[i], order[i + 1])), int(max(order[i], order[i + 1]))) for i in same[:8]]
    return sorted(pairs, key=lambda p: p[1] - p[0])


def _certify(freqs: Sequence[float], d: int, q: int, prec: int) -> tuple[bool, float]:
    """Whether ``|d theta_k mod 2 pi| < 2 pi / q`` for every ``k`` (certified), and the largest upper end
    (float64, rounded up) of ``|r_k|`` over the planes looked at."""
    with arb_precision(prec):
        two_pi = 2 * arb.pi()
        width = two_pi / q
        worst = 0.0
        for th in freqs:
            x = d * arb(float(th))  # exact: d < 2^22, 53-bit theta
            k = round(float(x.mid()) / (2 * math.pi))
            r = x - k * two_pi
            lo, hi = arb_ends(r)
            worst = max(worst, -lo, hi)
            if not abs(r) < width:  # arb: every point of |r| below every point of width
                return False, worst
        return True, worst


def dirichlet_witnesses(freqs: Sequence[float], max_n: int, prec: int = 80) -> list[BoxWitness]:
    """One certified pigeonhole witness per ``Q`` of :func:`q_values` (see the module docstring)."""
    f = np.asarray(freqs, dtype=np.float64).reshape(-1)
    if f.size == 0 or not np.all(np.isfinite(f)):
        raise InputError("freqs must be a non-empty list of finite frequencies")
    max_n = integer(max_n, "max_n", low=2)
    out = []
    for q in q_values(f.size, max_n):
        if q**f.size + 1 > MAX_POINTS:
            raise InputError(f"Q^K + 1 = {q**f.size + 1} points exceed the limit {MAX_POINTS}")
        best: BoxWitness | None = None
        for u1, u2 in _collisions(f, q):
            ok, top = _certify(f, u2 - u1, q, prec)
            best = BoxWitness(q, u1, u2, ok, top)
            if ok:
                break
        if best is None:  # impossible by the pigeonhole principle: a bug in the box indices
            raise AssertionError(f"no two of the Q^K + 1 points share a box at Q = {q}")
        out.append(best)
    return out

"""The best one-plane T_Index margin over every angle, found without the one-plane lemma
(docs/theory.md section 9.1): the ``exact`` column of the best-angle correction.

``F_M(theta) = min_{1 <= m <= M} (1 - cos(m theta))`` is even and ``2 pi``-periodic, so its maximum over
every angle is its maximum over ``[0, pi]``. Two independent searches:

- :func:`candidate_maximum`, exact, every ``M``. ``F_M`` is continuous; at a maximiser in ``(0, pi)``
  either two distinct active terms ``a, b`` tie (``cos(a theta) = cos(b theta)``, so ``(a - b) theta`` or
  ``(a + b) theta`` is in ``2 pi Z``) or one active term ``m`` has a local maximum (``m theta`` in
  ``pi Z``); so every maximiser is ``pi j / q`` with ``1 <= q <= 2M`` and ``0 <= j <= q``. (This
  reduction is argued, not machine-checked.) At ``theta = pi j / q`` every term is
  ``1 - cos(pi delta_m / q)`` with ``delta_m`` the distance of ``m j`` to ``2 q Z`` (integers), and
  ``1 - cos(pi x)`` increases in ``x`` on ``[0, 1]``, so the maximum is ``1 - cos(pi x*)`` with ``x*`` the
  largest of the rationals ``min_m delta_m / q``, compared exactly.
- :func:`certified_maximum`, interval branch-and-bound over ``theta = pi t``, ``t`` in ``[0, 1]``, with
  python-flint's ball arithmetic (``arb``): each box's upper bound is the least over ``m`` of the upper end
  of ``1 - cos(pi m t)`` on the box, every box midpoint's value is a rigorous lower bound, and a box is
  dropped once its upper bound is within ``tol`` of the best lower bound. No reduction, no lemma; it
  costs about ``M^2 / F_M^*`` evaluations, so it runs for small ``M``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import arb

from ropeproof.machinery._validate import integer, real
from ropeproof.verify.measure.exact._certified import arb_precision


@dataclass(frozen=True)
class CandidateMaximum:
    """:func:`candidate_maximum`'s answer: ``x`` with ``max_theta F_M = 1 - cos(pi x)`` (exact), that value
    in float64 (stable form ``2 sin(pi x / 2)^2``), and every maximiser in ``[0, pi]`` as ``theta / pi``."""

    big_m: int
    x: Fraction
    value: float
    maximisers: tuple[Fraction, ...]
    candidates: int


def candidate_maximum(big_m: int) -> CandidateMaximum:
    """``max_theta min_{1 <= m <= M} (1 - cos(m theta))`` over the candidate angles ``pi j / q``,
    ``1 <= q <= 2M`` (module docstring), in exact integer and rational arithmetic."""
    big_m = integer(big_m, "big_m", low=1, high=2000)
    m = np.arange(1, big_m + 1, dtype=np.int64)[:, None]
    best: Fraction = Fraction(-1)
    winners: list[Fraction] = []
    count = 0
    for q in range(1, 2 * big_m + 1):
        j = np.array(
            [k for k in range(q + 1) if math.gcd(k, q) == 1], dtype=np.int64
        )  # theta/pi = j/q, reduced
        count += j.size
        r = (m * j[None, :]) % (2 * q)
        delta = np.minimum(r, 2 * q - r).min(axis=0)  # [j]: min over m of the distance of m j to 2 q Z
        top = int(delta.max())
        x = Fraction(top, q)
        if x > best:
            best, winners = x, []
        if x == best:
            winners += [Fraction(int(k), q) for k in j[delta == top]]
    value = 2.0 * math.sin(math.pi * float(best) / 2) ** 2
    return CandidateMaximum(big_m, best, value, tuple(sorted(set(winners))), count)


@dataclass(frozen=True)
class CertifiedMaximum:
    """:func:`certified_maximum`'s answer: ``low <= max_theta F_M <= high`` (rigorous, rounded outwards to
    float64) and the boxes examined."""

    big_m: int
    low: float
    high: float
    boxes: int


def _upper(big_m: int, lo: float, hi: float) -> arb:
    """A rigorous upper bound of ``F_M(pi t)`` over ``t`` in ``[lo, hi]`` (an exact ball midpoint)."""
    mid, rad = (lo + hi) / 2, (hi - lo) / 2
    t = arb(mid, rad)
    bound = None
    for m in range(1, big_m + 1):
        u = (1 - (m * t).cos_pi()).upper()
        bound = u if bound is None or u < bound else bound
    return bound


def _lower(big_m: int, t: float) -> arb:
    """A rigorous lower bound of ``F_M(pi t)`` at the point ``t``."""
    point = arb(t)
    bound = None
    for m in range(1, big_m + 1):
        v = (1 - (m * point).cos_pi()).lower()
        bound = v if bound is None or v < bound else bound
    return bound


def certified_maximum(big_m: int, tol: float = 1e-10, max_boxes: int = 2_000_000) -> CertifiedMaximum:
    """Enclose ``max_theta F_M(theta)`` to within ``tol`` by interval branch-and-bound (module docstring).
    Box ends are dyadic, so every ball is exact; precision 80 bits."""
    big_m = integer(big_m, "big_m", low=1, high=200)
    tol = real(tol, "tol", low=1e-14, high=1.0)
    with arb_precision(80):
        grid = np.linspace(0.0, 1.0, 8 * big_m + 1)
        low = max((_lower(big_m, float(t)) for t in grid), key=lambda b: float(b.mid()))
        queue = [(0.0, 1.0)]
        boxes, open_high = 0, None
        while queue:
            lo, hi = queue.pop()
            boxes += 1
            if boxes > max_boxes:
                raise RuntimeError(f"certified_maximum(M={big_m}): more than {max_boxes} boxes")
            up = _upper(big_m, lo, hi)
            if up <= low + tol:
                continue
            mid = (lo + hi) / 2
            value = _lower(big_m, mid)
            if value > low:
                low = value
            if hi - lo < 1e-15:  # no finer dyadic split is useful in float64 ends
                open_high = up if open_high is None or up > open_high else open_high
                continue
            queue += [(lo, mid), (mid, hi)]
        high = low + tol if open_high is None or open_high < low + tol else open_high
        down = math.nextafter(float(low.lower().mid()), -math.inf)  # float() rounds to nearest: step outwards
        up_f = math.nextafter(float(high.upper().mid()), math.inf)
        return CertifiedMaximum(big_m, down, up_f, boxes)

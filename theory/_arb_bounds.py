"""Rigorous signs of a real function over a whole compact interval: interval branch-and-bound in Arb
(python-flint's ``arb`` balls), for proof steps whose inequality sympy cannot decide.

- :func:`below_on`: ``True`` when ``f(x) < bound`` at every ``x`` of ``[low, high]``, decided by enclosing
  ``f`` over pieces of the interval (``f`` maps an ``arb`` ball to a ball that holds every value of the
  function on it) and bisecting every piece whose enclosure does not lie wholly below ``bound``;
  ``False`` when some piece stays undecided at :data:`MAX_PIECES` pieces (never a pass on a sample).
- :func:`sinc_slope_factor`: an enclosure of ``g(x) = (x cos x - sin x) / x^3`` (``g(0) = -1/3``, a
  removable singularity), the factor of ``d/dx (sin x / x) = x g(x)``. On ``|x| <= 1`` it uses the Taylor
  series ``g(x) = sum_{k >= 1} (-1)^k 2k x^(2k - 2) / (2k + 1)!``: its terms decrease in size (the ratio of
  consecutive terms is ``x^2 / (2k (2k + 3)) <= 1/10``), so by Leibniz's bound for alternating series
  ``-1/3 <= g(x) <= -1/3 + x^2 / 30`` there; elsewhere the formula itself in ball arithmetic.
- :func:`sinc_decreasing_on`: ``sin x / x`` strictly decreases on ``(0, high]``: ``g < 0`` on
  ``[0, high]`` by :func:`below_on`, so the derivative ``x g(x)`` is negative on ``(0, high]``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from flint import arb

from ropeproof.machinery._errors import InputError

MAX_PIECES = 200_000
"""The most pieces :func:`below_on` examines before it answers ``False`` (undecided)."""


def below_on(f: Callable[[arb], arb], low: arb | int, high: arb | int, bound: arb | int = 0) -> bool:
    """``True`` when ``f(x) < bound`` for every ``x`` in ``[low, high]`` (module docstring): every piece's
    enclosure ``f(ball)`` lies wholly below ``bound``; ``False`` when a piece's enclosure lies wholly at or
    above it (a counterexample) or :data:`MAX_PIECES` pieces leave one undecided."""
    low, high, bound = arb(low), arb(high), arb(bound)
    if not low <= high:
        raise InputError(f"below_on: low={low} must be at most high={high}")
    stack = [(low, high)]
    pieces = 0
    while stack:
        a, b = stack.pop()
        pieces += 1
        if pieces > MAX_PIECES:
            return False
        value = f(a.union(b))
        if value < bound:
            continue
        if value >= bound:
            return False
        mid = (a + b) / 2
        stack += [(a, mid), (mid, b)]
    return True


def sinc_slope_factor(x: arb) -> arb:
    """An enclosure of ``g(x) = (x cos x - sin x) / x^3`` over the ball ``x`` (module docstring: the Taylor
    enclosure ``[-1/3, -1/3 + x^2/30]`` where ``|x| <= 1``, the formula elsewhere)."""
    size = x.abs_upper()
    if size <= 1:
        third = -arb(1) / 3
        return third.union(third + arb(size) ** 2 / 30)
    return (x * x.cos() - x.sin()) / (x * x * x)


@cache
def sinc_decreasing_on(high_over_pi: tuple[int, int] = (1, 2)) -> bool:
    """``sin x / x`` strictly decreases on ``(0, pi * p / q]`` (``high_over_pi = (p, q)``, at most ``pi``):
    :func:`sinc_slope_factor` is below 0 on all of ``[0, pi p / q]`` (:func:`below_on`)."""
    p, q = high_over_pi
    if not (0 < p <= q):
        raise InputError(f"high_over_pi={high_over_pi!r} must be (p, q) with 0 < p <= q (up to pi)")
    return below_on(sinc_slope_factor, 0, arb.pi() * p / q)

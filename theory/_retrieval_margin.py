"""The worst-case margin of T_Retrieval in closed form, derived and proved with sympy.

T_Retrieval's logit for a query asking for letter ``Y`` against a pair with left letter ``L`` at
distance ``d`` back is ``cos(c omega - d theta)`` with ``c = phi(L) - phi(Y)`` and
``omega = 2 pi / |ALPH|`` (docs/theory.md section 4). The target (``c = 0``) at distance ``t`` scores
``cos(t theta)``; a competitor has ``c != 0`` at any other distance ``d`` in ``0 .. n-1`` (``d = 0`` is
the query itself, whose left letter differs from ``Y``). While ``(n - 1) theta <= omega`` the
competitor logit ``cos(omega - d theta)`` grows with ``d``, so the worst input puts the target and its
strongest competitor at the two largest distances, ``n - 1`` and ``n - 2``, in one order or the other:

    f_far(n)  = cos((n-1) theta) - cos(omega - (n-2) theta)    (target farthest)
              = 2 sin((omega + theta)/2) sin((omega - (2n-3) theta)/2),
    f_near(n) = cos((n-2) theta) - cos(omega - (n-1) theta)    (competitor farthest, n >= 3)
              = 2 sin((omega - theta)/2) sin((omega - (2n-3) theta)/2).

Both share the factor ``sin((omega - (2n-3) theta)/2)``, and ``f_far - f_near = 4 sin(theta/2)
cos(omega/2) sin((omega - (2n-3) theta)/2)`` (:func:`difference_identity`). So for
``0 < theta < omega`` and ``(n - 1) theta <= omega``:

    margin_inf(n) = f_near(n)  if 3 <= n < n*,      f_far(n)  if n = 2 or n >= n*,
    n* = (omega / theta + 3) / 2                     (:func:`switch_length`, where f_far = f_near),

positive exactly for ``n < n*``: the first failing length is ``ceil(n*)`` (when ``n*`` is not an
integer). At ``theta = 0`` both pieces equal ``1 - cos(omega)``.
"""

from __future__ import annotations

import math

import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._trig_identity import vanishes_identically

N = sp.Symbol("n", positive=True)
THETA = sp.Symbol("theta", positive=True)
OMEGA = sp.Symbol("omega", positive=True)

F_FAR_RAW = sp.cos((N - 1) * THETA) - sp.cos(OMEGA - (N - 2) * THETA)
F_NEAR_RAW = sp.cos((N - 2) * THETA) - sp.cos(OMEGA - (N - 1) * THETA)
SHARED = sp.sin((OMEGA - (2 * N - 3) * THETA) / 2)
F_FAR = 2 * sp.sin((OMEGA + THETA) / 2) * SHARED
F_NEAR = 2 * sp.sin((OMEGA - THETA) / 2) * SHARED


def product_forms_hold() -> bool:
    """Prove ``F_FAR == F_FAR_RAW`` and ``F_NEAR == F_NEAR_RAW`` (sum-to-product)."""
    return vanishes_identically(F_FAR - F_FAR_RAW) and vanishes_identically(F_NEAR - F_NEAR_RAW)


def difference_identity() -> bool:
    """Prove ``f_far - f_near = 4 sin(theta/2) cos(omega/2) sin((omega - (2n-3) theta)/2)``."""
    claimed = 4 * sp.sin(THETA / 2) * sp.cos(OMEGA / 2) * SHARED
    return vanishes_identically(F_FAR - F_NEAR - claimed)


def switch_length() -> sp.Expr:
    """``n*`` solving ``f_far(n) = f_near(n)`` on the branch ``0 < (2n-3) theta < 2 omega``: the zero of
    the shared factor, ``(omega / theta + 3) / 2``."""
    solutions = sp.solve(sp.Eq((OMEGA - (2 * N - 3) * THETA) / 2, 0), N)
    if len(solutions) != 1:
        raise AssertionError(f"expected one switch point, sympy found {solutions}")
    return sp.simplify(solutions[0])


def retrieval_margin_closed_form(n: int, theta: float, alphabet_size: int) -> float:
    """``margin_inf(n)`` of T_Retrieval from the closed form (float64, stable product form).

    Valid for ``n >= 2``, ``0 <= theta`` and ``(n - 1) theta <= omega``; raises :class:`InputError`
    outside that domain (past it, a competitor can align with the query exactly and the margin is
    given by the explicit formula of :mod:`ropeproof.verify.measure.exact._retrieval_margin`).
    """
    n, alphabet_size = integer(n, "n", low=2), integer(alphabet_size, "alphabet_size", low=2)
    theta = real(theta, "theta", low=0)
    omega = 2 * math.pi / alphabet_size
    if (n - 1) * theta > omega:
        raise InputError(
            f"theta={theta}, n={n}: the closed form needs 0 <= theta and (n - 1) theta <= omega = {omega}"
        )
    shared = math.sin((omega - (2 * n - 3) * theta) / 2)
    if theta == 0:
        return 2 * math.sin(omega / 2) ** 2
    if n == 2 or (2 * n - 3) * theta >= omega:
        return 2 * math.sin((omega + theta) / 2) * shared
    return 2 * math.sin((omega - theta) / 2) * shared

"""The lemmas behind the letter-code corrections (docs/theory.md sections 9.2, 9.3 and 9.5), each a check
that sympy proves for every value of its symbols.

Notation of :mod:`ropeproof.theory._letter_code_bounds`: a query asking for ``Y`` scores a pair with left
letter ``L`` at distance ``d`` with ``cos(c omega - d theta)``, ``c = phi(L) - phi(Y) mod |ALPH|``,
``omega = 2 pi / |ALPH|``; the target (``c = 0``) scores ``T(d) = cos(d theta)``.

How the checks are built: an identity is proved by
:func:`~ropeproof.theory._trig_identity.vanishes_identically`; a sign of ``sin`` or ``cos`` on an interval
with numeric ends by its exact range there (:func:`~ropeproof.theory._proof_checks.sign_on`); that an
angle lies in such an interval by linear real arithmetic (:func:`~ropeproof.theory._order_facts.implies`),
or, where integers multiply angles, by writing every integer constraint with a non-negative slack
(``c = 1 + b``, ``|ALPH| = 2 + a``) and letting sympy's assumptions prove the difference non-negative
(:func:`~ropeproof.theory._order_facts.nonnegative`).
Each function's comment says which facts it checks; docs/theory.md says how they combine.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from ropeproof.theory._order_facts import implies, nonnegative
from ropeproof.theory._proof_checks import monotone_on, sign_on
from ropeproof.theory._retrieval_margin import difference_identity
from ropeproof.theory._trig_identity import vanishes_identically

_X = sp.Symbol("x", real=True)
_SLACK_A = sp.Symbol("a", integer=True, nonnegative=True)
ALPH = _SLACK_A + 2
"""``|ALPH| >= 2``, written with a non-negative slack."""
OMEGA_OF_ALPH = 2 * sp.pi / ALPH
_B, _E, _K, _J = sp.symbols("b e k j", integer=True, nonnegative=True)
_XN, _YN, _TH = sp.symbols("x y theta", nonnegative=True)  # an angle d theta >= 0, a slack, theta >= 0


@cache
def cos_decreasing() -> bool:
    """``cos`` does not increase on ``[0, pi]``."""
    return monotone_on(sp.cos(_X), _X, 0, sp.pi, increasing=False)


@cache
def omega_at_most_pi() -> bool:
    """``omega = 2 pi/|ALPH| <= pi`` for ``|ALPH| >= 2``."""
    return nonnegative(sp.pi - OMEGA_OF_ALPH)


@cache
def far_from_zero() -> bool:
    """For ``0 <= alpha <= pi`` and ``alpha <= phi <= 2 pi - alpha``: ``cos(phi) <= cos(alpha)``.
    ``cos(phi) - cos(alpha) = -2 sin((phi + alpha)/2) sin((phi - alpha)/2)``, both arguments lie in
    ``[0, pi]`` (linear), and ``sin >= 0`` there."""
    phi, alpha = sp.symbols("phi alpha", real=True)
    identity = vanishes_identically(
        sp.cos(phi) - sp.cos(alpha) + 2 * sp.sin((phi + alpha) / 2) * sp.sin((phi - alpha) / 2)
    )
    hyps = [sp.Ge(alpha, 0), sp.Le(alpha, sp.pi), sp.Ge(phi, alpha), sp.Le(phi, 2 * sp.pi - alpha)]
    inside = implies(
        hyps,
        [
            sp.Ge((phi + alpha) / 2, 0),
            sp.Le((phi + alpha) / 2, sp.pi),
            sp.Ge((phi - alpha) / 2, 0),
            sp.Le((phi - alpha) / 2, sp.pi),
        ],
    )
    return identity and inside and sign_on(sp.sin(_X), _X, 0, sp.pi)


@cache
def competitor_lemma() -> bool:
    """For ``1 <= c <= |ALPH| - 1`` and ``0 <= x <= omega`` (``x = d theta``):
    ``cos(c omega - x) <= cos(omega - x)``. :func:`far_from_zero` with ``alpha = omega - x`` and
    ``phi = c omega - x``: ``0 <= alpha <= pi`` (``x <= omega``; ``omega <= pi`` as ``|ALPH| >= 2``),
    ``phi - alpha = (c - 1) omega >= 0`` (``c = 1 + b``) and ``2 pi - alpha - phi = e omega + 2 x >= 0``
    (``c = |ALPH| - 1 - e``, ``|ALPH| omega = 2 pi``)."""
    omega, x, y = OMEGA_OF_ALPH, _XN, _YN  # y = omega - x >= 0 where that is the hypothesis
    alpha_low = nonnegative(y)
    alpha_high = nonnegative(sp.pi - (omega - x))
    phi_above = nonnegative(((1 + _B) * omega - x) - (omega - x))
    phi_below = nonnegative(2 * sp.pi - (omega - x) - ((ALPH - 1 - _E) * omega - x))
    return far_from_zero() and alpha_low and alpha_high and phi_above and phi_below


@cache
def worst_input() -> bool:
    """R1's reduction to two inputs, for ``theta >= 0`` and ``(n - 1) theta <= omega``:

    - the farthest distance other than the target's ``d_t`` (``1 <= d_t <= n - 1``) is ``D = n - 1`` for
      ``d_t <= n - 2`` (it differs from ``d_t``) and ``D = n - 2 >= 0`` for ``d_t = n - 1``;
    - ``cos(omega - d theta)`` does not decrease in ``d`` on ``0 <= d <= D``: ``0 <= omega - D theta <=
      omega - d theta <= omega <= pi`` (``D = d + k``) and ``cos`` decreases on ``[0, pi]``;
    - ``T(d_t) >= T(n - 2)`` for ``1 <= d_t <= n - 2``: ``0 <= d_t theta <= (n - 2) theta <= pi``."""
    n, dt = sp.symbols("n d_t", real=True)
    farthest = implies([sp.Ge(dt, 1), sp.Le(dt, n - 2)], sp.Ge(n - 1, dt + 1)) and implies(
        [sp.Ge(n, 2)], sp.Ge(n - 2, 0)
    )
    d, th, omega = _XN, _TH, OMEGA_OF_ALPH  # d >= 0 here a real number of positions
    grows = nonnegative((omega - d * th) - (omega - (d + _K) * th)) and nonnegative(d * th)
    target = nonnegative((_J + 1 + _K) * th - (_J + 1) * th)  # d_t = j + 1 <= n - 2 = d_t + k
    # the angle ranges, from the hypotheses: with P = (n - 1) theta <= omega <= pi, D theta = P - J and
    # d theta = D theta - K for J = (n - 1 - D) theta >= 0 and K = (D - d) theta >= 0 (products of
    # non-negatives), 0 <= omega - D theta <= omega - d theta <= omega <= pi; and the target's angles
    # 0 <= d_t theta <= (n - 2) theta = P - theta <= pi
    p, om, jt, kt = sp.symbols("P omega J K", real=True)
    slacks = nonnegative(_J * th) and nonnegative(_K * th)
    ranges = implies(
        [sp.Le(p, om), sp.Le(om, sp.pi), sp.Ge(jt, 0), sp.Ge(kt, 0), sp.Ge(p - jt - kt, 0)],
        [
            sp.Ge(om - (p - jt), 0),
            sp.Le(om - (p - jt), om - (p - jt - kt)),
            sp.Le(om - (p - jt - kt), om),
        ],
    ) and implies([sp.Ge(th, 0), sp.Le(p, om), sp.Le(om, sp.pi)], sp.Le(p - th, sp.pi))
    shift = sp.expand((n - 2) * th - ((n - 1) * th - th)) == 0
    return (
        farthest
        and grows
        and target
        and slacks
        and ranges
        and shift
        and omega_at_most_pi()
        and cos_decreasing()
    )


@cache
def switch_sign() -> bool:
    """``f_far - f_near = 4 sin(theta/2) cos(omega/2) sin((omega - (2n - 3) theta)/2)``, and for
    ``0 <= theta <= (n - 1) theta <= omega <= pi`` its sign is that of ``omega - (2n - 3) theta``:
    ``sin(theta/2), cos(omega/2) >= 0`` (arguments in ``[0, pi/2]``) and
    ``omega - (2n - 3) theta = omega - 2 P + theta`` (``P = (n - 1) theta``) lies in ``[-pi, pi]``, where
    ``sin(y/2)`` has the sign of ``y``."""
    th, p, om = sp.symbols("theta P omega", real=True)
    hyps = [sp.Ge(th, 0), sp.Le(th, p), sp.Le(p, om), sp.Le(om, sp.pi)]
    inside = implies(
        hyps,
        [
            sp.Ge(om - 2 * p + th, -sp.pi),
            sp.Le(om - 2 * p + th, sp.pi),
            sp.Le(th / 2, sp.pi / 2),
            sp.Ge(om / 2, 0),
            sp.Le(om / 2, sp.pi / 2),
        ],
    )
    signs = (
        sign_on(sp.sin(_X), _X, 0, sp.pi / 2)
        and sign_on(sp.cos(_X), _X, 0, sp.pi / 2)
        and sign_on(sp.sin(_X), _X, -sp.pi / 2, 0, nonnegative=False)
    )
    return difference_identity() and inside and signs and switch_strict()


@cache
def switch_strict() -> bool:
    """The sign of ``f_far - f_near`` is exactly that of ``omega - (2n - 3) theta`` (zero only where it
    is zero) for ``theta > 0`` and ``|ALPH| >= 3``: ``sin`` increases strictly on ``[0, pi/2]`` with
    ``sin 0 = 0`` and is odd, so ``sin(theta/2) > 0`` (``0 < theta/2 <= pi/2``) and ``sin(y/2)`` is zero
    only at ``y = 0`` on ``[-pi, pi]``; ``cos`` decreases strictly on ``[0, pi/2]`` to ``cos(pi/2) = 0``, and
    ``omega/2 = pi/|ALPH| <= pi/3 < pi/2``, so ``cos(omega/2) > 0``. (At ``|ALPH| = 2``, ``cos(omega/2) =
    0``: the two terms are equal at every length.)"""
    # strictly monotone on the open interval (sympy), so on its closure (continuity); sin is odd
    sin_strict = bool(sp.is_strictly_increasing(sp.sin(_X), sp.Interval.open(0, sp.pi / 2)))
    sin_strict = sin_strict and vanishes_identically(sp.sin(-_X) + sp.sin(_X))
    cos_strict = bool(sp.is_strictly_decreasing(sp.cos(_X), sp.Interval.open(0, sp.pi / 2)))
    ends = sp.sin(0) == 0 and sp.cos(sp.pi / 2) == 0
    third = nonnegative(sp.pi / 3 - sp.pi / (3 + _SLACK_A)) and bool((sp.pi / 2 - sp.pi / 3).is_positive)
    two = sp.cos(sp.pi / 2) == 0  # |ALPH| = 2: omega/2 = pi/2
    return sin_strict and cos_strict and ends and third and two


@cache
def least_competitor() -> bool:
    """For even ``|ALPH| = 2h >= 4``, ``omega = pi/h``, ``c`` in ``1 .. 2h - 1`` other than ``h`` and
    ``0 <= x <= omega/2``: ``cos(c omega - x) >= -cos(x)``. ``cos(c omega - x) + cos(x) =
    2 cos(c omega/2) cos(c omega/2 - x)``; for ``c <= h - 1`` both arguments lie in ``[0, pi/2]`` (both
    cosines ``>= 0``), for ``c >= h + 1`` both in ``[pi/2, pi]`` (both ``<= 0``)."""
    c, om, x = sp.symbols("c omega x", real=True)
    identity = vanishes_identically(
        sp.cos(c * om - x) + sp.cos(x) - 2 * sp.cos(c * om / 2) * sp.cos(c * om / 2 - x)
    )
    h = 2 + _SLACK_A
    omega = sp.pi / h
    x0 = omega / 2 - _YN  # 0 <= x <= omega/2: x = omega/2 - y, y >= 0, and x >= 0 below
    low = (1 + _B, h - 1 - _E)  # c <= h - 1, written from below and from above
    high = (h + 1 + _B, 2 * h - 1 - _E)  # c >= h + 1
    below = (
        nonnegative(low[0] * omega / 2)
        and nonnegative(sp.pi / 2 - low[1] * omega / 2)
        and nonnegative(low[0] * omega / 2 - x0)
        and nonnegative(sp.pi / 2 - low[1] * omega / 2 + _XN)
    )
    above = (
        nonnegative(high[0] * omega / 2 - sp.pi / 2)
        and nonnegative(sp.pi - high[1] * omega / 2)
        and nonnegative(high[0] * omega / 2 - x0 - sp.pi / 2)
        and nonnegative(sp.pi - high[1] * omega / 2 + _XN)
    )
    signs = sign_on(sp.cos(_X), _X, 0, sp.pi / 2) and sign_on(
        sp.cos(_X), _X, sp.pi / 2, sp.pi, nonnegative=False
    )
    return identity and below and above and signs


@cache
def target_on_top() -> bool:
    """For ``0 <= d_t theta, d theta <= omega/2`` (``(n - 1) theta <= omega/2``): ``T(d_t) >= cos(omega/2)
    >= cos(omega - d theta) >=`` every competitor logit at ``d``: ``d_t theta <= omega/2 <= omega - d theta
    <= omega <= pi`` (linear), ``cos`` decreases on ``[0, pi]``, and the competitor lemma."""
    xt, xd, om = sp.symbols("x_t x_d omega", real=True)
    hyps = [sp.Ge(xt, 0), sp.Le(xt, om / 2), sp.Ge(xd, 0), sp.Le(xd, om / 2), sp.Le(om, sp.pi)]
    chain = implies(
        hyps, [sp.Le(xt, om / 2), sp.Le(om / 2, om - xd), sp.Le(om - xd, sp.pi), sp.Ge(om / 2, 0)]
    )
    return chain and cos_decreasing() and omega_at_most_pi() and competitor_lemma()


@cache
def nearest_target() -> bool:
    """R2's largest input, for ``0 <= (n - 1) theta <= omega/2 <= pi``: ``T(d_t) <= T(1)`` for
    ``d_t = 1 + k``; at ``d_t = n - 1`` (``n = 3 + k``) ``cos((n - 2) theta) <= cos(theta)``; and the
    opposite letter at every ``d <= n - 1`` scores ``-cos(d theta) <= -cos((n - 1) theta)`` (``n - 1 = d +
    k``): each angle difference is a non-negative multiple of ``theta``, every angle lies in ``[0, pi]``,
    and ``cos`` decreases there."""
    th, d = _TH, _XN
    first = nonnegative((1 + _K) * th - th)
    last = nonnegative(((3 + _K) - 2) * th - th)
    farthest = nonnegative((d + _K) * th - d * th)
    return first and last and farthest and cos_decreasing() and omega_at_most_pi()


@cache
def earlier_y() -> bool:
    """Partial induction, for ``theta >= 0`` and ``(2n - 3) theta <= omega``: ``(n - 1) theta <= omega``
    (``(2n - 3) - (n - 1) = n - 2 >= 0``), so R1's bounds apply; an earlier ``Y`` at ``d = d_t + 1 + k``
    scores ``cos(d theta) <= cos((d_t + 1) theta)`` (angles in ``[0, omega] c [0, pi]``, ``cos``
    decreasing)."""
    th = _TH
    n = 2 + _J
    within = nonnegative((2 * n - 3) * th - (n - 1) * th)
    dt = 1 + _B
    later = nonnegative((dt + 1 + _K) * th - (dt + 1) * th)
    return within and later and cos_decreasing() and omega_at_most_pi()


@cache
def recency_least_at_1() -> bool:
    """For ``1 <= d <= n - 2`` and ``(2n - 3) theta <= omega <= pi``: ``3 theta/2 <= (2d + 1) theta/2 <=
    (2n - 3) theta/2 <= pi/2`` (``d = 1 + k``, ``n = d + 2 + j``), ``sin`` increases on ``[0, pi/2]`` and
    ``sin(theta/2) >= 0``, so ``2 sin((2d + 1) theta/2) sin(theta/2)`` is least at ``d = 1``."""
    th = _TH
    d = 1 + _K
    n = d + 2 + _J
    order = nonnegative((2 * d + 1) * th / 2 - 3 * th / 2) and nonnegative(
        (2 * n - 3) * th / 2 - (2 * d + 1) * th / 2
    )
    return (
        order
        and omega_at_most_pi()
        and monotone_on(sp.sin(_X), _X, 0, sp.pi / 2)
        and sign_on(sp.sin(_X), _X, 0, sp.pi / 2)
    )


@cache
def target_below_one() -> bool:
    """``cos(theta) <= 1``: ``1 - cos(theta) = 2 sin(theta/2)^2 >= 0``."""
    th = sp.Symbol("theta", real=True)
    return vanishes_identically(1 - sp.cos(th) - 2 * sp.sin(th / 2) ** 2) and bool(
        (2 * sp.sin(th / 2) ** 2).is_nonnegative
    )


@cache
def sin_positive_inside() -> bool:
    """``sin > 0`` on the open interval ``(0, pi)``: sympy solves ``sin x <= 0`` there to the empty set."""
    return sp.solveset(sp.sin(_X) <= 0, _X, sp.Interval.open(0, sp.pi)) is sp.S.EmptySet


@cache
def positive_below_horizon() -> bool:
    """P's two terms are positive while ``0 < theta`` and ``(2n - 3) theta < omega <= pi``: with
    ``z = (2n - 3) theta``, ``z >= theta`` (``n >= 2``) puts ``(omega - theta)/2``, ``(omega + theta)/2`` and
    ``(omega - z)/2`` in ``(0, pi)``, and ``z >= 3 theta`` (``n >= 3``) puts ``theta/2`` and ``3 theta/2``
    there (linear); ``sin > 0`` on ``(0, pi)``, and ``f_near``, ``f_far`` are products of such sines."""
    th, z, om = sp.symbols("theta z omega", real=True)
    base = [sp.Gt(th, 0), sp.Lt(z, om), sp.Le(om, sp.pi)]

    def inside(*angles: sp.Expr) -> list[sp.Basic]:
        return [r for a in angles for r in (sp.Gt(a, 0), sp.Lt(a, sp.pi))]

    content = implies([*base, sp.Ge(z, th)], inside((om - th) / 2, (om + th) / 2, (om - z) / 2))
    recency = implies([*base, sp.Ge(z, 3 * th)], inside(th / 2, 3 * th / 2))
    return content and recency and sin_positive_inside()


@cache
def fails_at_next_length() -> bool:
    """At the first length past the horizon, ``omega <= z = (2n - 3) theta < omega + 2 theta`` (the length
    before it had ``z - 2 theta < omega``), with ``0 < theta <= omega <= pi``: ``(omega - z)/2`` lies in
    ``[-pi, 0]`` and ``(omega + theta)/2`` in ``[0, pi]`` (linear), so ``f_far = 2 sin((omega + theta)/2)
    sin((omega - z)/2) <= 0``: the input with the target farthest fails."""
    th, z, om = sp.symbols("theta z omega", real=True)
    hyps = [sp.Gt(th, 0), sp.Le(th, om), sp.Le(om, sp.pi), sp.Ge(z, om), sp.Lt(z, om + 2 * th)]
    inside = implies(
        hyps,
        [
            sp.Ge((om - z) / 2, -sp.pi),
            sp.Le((om - z) / 2, 0),
            sp.Ge((om + th) / 2, 0),
            sp.Le((om + th) / 2, sp.pi),
        ],
    )
    signs = sign_on(sp.sin(_X), _X, -sp.pi, 0, nonnegative=False) and sign_on(sp.sin(_X), _X, 0, sp.pi)
    return inside and signs

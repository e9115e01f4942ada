"""The best one-plane T_Index at each length, over every angle: the statement that replaces
``pi^2 / (2 n^2)`` in [A]'s Theorem 3.2 (docs/theory.md section 9).

One plane at angle ``theta``: the key ``m`` positions off the target scores ``1 - g(m)`` below it, with
``g(m) = 1 - cos(m theta) = 2 sin(m theta / 2)^2`` (docs/theory.md section 5). Every reading of Delta is a
prefix minimum ``G_M(theta) = min_{1 <= m <= M} g(m)``: ``M = n - 1`` for the worst-case margin and the
smallest gap (``margin_inf = gap_inf``), ``M = ceil((n - 1) / 2)`` for the largest gap (``gap_sup``),
with ``n`` the sequence length. With ``n`` read as the largest offset (the sequence length minus 1)
these become ``M = n`` and ``M = ceil(n / 2)``.

**Lemma (one-plane optimum).** For every integer ``M >= 1``,

    max_theta G_M(theta) = 1 - cos(2 pi / (M + 1)) = 2 sin(pi / (M + 1))^2,

attained exactly at ``theta = 2 pi k / (M + 1)`` (mod ``2 pi``) with ``gcd(k, M + 1) = 1``.

*Upper bound.* The ``M + 1`` points ``x_m = m theta mod 2 pi`` (``m = 0 .. M``) cut the circle into
``M + 1`` arcs (some possibly empty) whose lengths sum to ``2 pi`` (they telescope). If every arc
were longer than ``2 pi / (M + 1)`` they would sum to more than ``2 pi``, so some arc between
neighbouring points ``x_a, x_b`` (``a < b``) is at most ``2 pi / (M + 1) <= pi`` long. Its length
``delta`` is the distance of ``(b - a) theta`` to ``2 pi Z``, and ``g`` depends on ``m theta`` only
through that distance (``cos`` is even and ``2 pi``-periodic), so ``g(b - a) = 1 - cos(delta) <=
1 - cos(2 pi / (M + 1))`` because ``1 - cos`` increases on ``[0, pi]``; and ``1 <= b - a <= M``.

*Attained.* At ``theta = 2 pi / (M + 1)``, ``g(m) = 2 sin(pi m / (M + 1))^2``, which is symmetric under
``m -> M + 1 - m`` and increasing for ``m <= (M + 1) / 2`` (``sin`` increases on ``[0, pi/2]``), so its
minimum over ``1 .. M`` is at ``m = 1``. More generally at ``theta = 2 pi k / (M + 1)`` with
``gcd(k, M + 1) = 1`` the residues ``m k mod (M + 1)``, ``m = 1 .. M``, are ``1 .. M`` again (Euclid's
lemma). Equality in the upper bound forces every arc to be exactly ``2 pi / (M + 1)``: the points are
the regular ``(M + 1)``-gon, so ``theta`` is one of those angles and no other angle attains.

**Consequences** (:func:`best_value`): the best worst-case margin at length ``n`` is
``2 sin(pi / n)^2`` (``n`` the length) or ``2 sin(pi / (n + 1))^2`` (``n`` the largest offset); the best
largest gap is ``2 sin(pi / (ceil((n - 1) / 2) + 1))^2`` (resp. ``ceil(n / 2)``). Against [A]'s term
``pi^2 / (2 n^2)`` the margin ratio tends to 4 under both conventions and the largest-gap ratio to 16;
with the length convention the margin ratio ``4 (sin(pi/n) / (pi/n))^2`` increases with ``n`` from
``16 / pi^2 > 1`` at ``n = 2``, so the term fails at every length for the best angle.

:func:`optimum_proof` lists the steps, each checked by sympy, restating a definition, or (for the side
statement that no other angle attains) checked exhaustively over a stated range.
"""

from __future__ import annotations

import math
from functools import cache

import sympy as sp

from ropeproof.theory.dirichlet import ProofStep
from ropeproof.theory.errors import InputError
from ropeproof.theory.proof_checks import DEFINITION, monotone_on
from ropeproof.theory.trig_identity import vanishes_identically
from ropeproof.theory.validate import integer

M_SYM = sp.Symbol("M", positive=True, integer=True)
"""Number of competing offsets ``1 .. M``."""
THETA = sp.Symbol("theta", real=True)
_X = sp.Symbol("x", real=True)
_XP = sp.Symbol("x", positive=True)  # sympy 1.14's limit is wrong for integer symbols (sin(pi/n)^2 n^2 -> 0)

BEST_VALUE = 2 * sp.sin(sp.pi / (M_SYM + 1)) ** 2
"""``max_theta min_{1 <= m <= M} (1 - cos(m theta))``, stable form."""
BEST_VALUE_RAW = 1 - sp.cos(2 * sp.pi / (M_SYM + 1))

READINGS = ("margin_inf", "gap_inf", "gap_sup")
CONVENTIONS = ("length", "offset")
EUCLID_RANGE = 64
"""The exhaustive check of which angles attain covers ``M + 1 <= EUCLID_RANGE``."""


def competing_offsets(n: int, reading: str = "margin_inf", convention: str = "length") -> int:
    """``M``: how many offsets ``1 .. M`` the reading of Delta minimises over at ``n`` (module docstring).

    ``convention="length"``: ``n >= 2`` is the sequence length; ``"offset"``: ``n >= 1`` is the largest
    key offset (the length minus 1)."""
    if reading not in READINGS:
        raise InputError(f"reading={reading!r}; accepted: {READINGS}")
    if convention not in CONVENTIONS:
        raise InputError(f"convention={convention!r}; accepted: {CONVENTIONS}")
    n = integer(n, "n", low=2 if convention == "length" else 1, note=f"{convention} convention")
    largest = n - 1 if convention == "length" else n
    return largest if reading != "gap_sup" else -(-largest // 2)


def best_value(n: int, reading: str = "margin_inf", convention: str = "length") -> float:
    """``max_theta Delta(n)`` for one plane (float64, stable form): ``2 sin(pi / (M + 1))^2`` with
    ``M`` from :func:`competing_offsets`."""
    m = competing_offsets(n, reading, convention)
    return 2.0 * math.sin(math.pi / (m + 1)) ** 2


def attaining_angles(n: int, reading: str = "margin_inf", convention: str = "length") -> list[sp.Expr]:
    """Every angle in ``(0, 2 pi)`` that attains :func:`best_value`: ``2 pi k / (M + 1)`` with
    ``gcd(k, M + 1) = 1`` (exact sympy numbers)."""
    q = competing_offsets(n, reading, convention) + 1
    return [2 * sp.pi * k / q for k in range(1, q) if math.gcd(k, q) == 1]


def reported_term(n: int) -> float:
    """[A]'s term ``pi^2 / (2 n^2)`` at ``n`` (float64)."""
    return math.pi**2 / (2.0 * n * n)


# ------------------------------------------------------------------------------------------- proof


@cache
def _stable_form() -> bool:
    m = sp.Symbol("m", positive=True, integer=True)
    return vanishes_identically((1 - sp.cos(m * THETA)) - 2 * sp.sin(m * THETA / 2) ** 2)


@cache
def _even_periodic() -> bool:
    k = sp.Symbol("k", integer=True)
    return vanishes_identically(sp.cos(_X + 2 * sp.pi * k) - sp.cos(_X)) and vanishes_identically(
        sp.cos(-_X) - sp.cos(_X)
    )


@cache
def _arcs_telescope() -> bool:
    i = sp.Symbol("i", integer=True, nonnegative=True)
    x = sp.Function("x")
    arcs = sp.Sum(x(i + 1) - x(i), (i, 0, M_SYM - 1)).doit() + (2 * sp.pi + x(0) - x(M_SYM))
    return sp.simplify(arcs - 2 * sp.pi) == 0


@cache
def _averaging() -> bool:
    eps = sp.Symbol("epsilon", positive=True)
    excess = sp.cancel((M_SYM + 1) * (2 * sp.pi / (M_SYM + 1) + eps) - 2 * sp.pi)  # (M + 1) epsilon
    return bool(excess.is_positive)


@cache
def _one_minus_cos_increasing() -> bool:
    within = sp.factor(sp.pi - 2 * sp.pi / (M_SYM + 1)).is_nonnegative  # 2 pi / (M + 1) <= pi
    return bool(within) and bool(monotone_on(1 - sp.cos(_X), _X, 0, sp.pi))


@cache
def _attained_at_first_angle() -> bool:
    m = sp.Symbol("m", positive=True, integer=True)
    mirrored = sp.cancel(sp.pi * (M_SYM + 1 - m) / (M_SYM + 1) - (sp.pi - sp.pi * m / (M_SYM + 1))) == 0
    symmetric = mirrored and vanishes_identically(sp.sin(sp.pi - _X) - sp.sin(_X))
    return symmetric and bool(monotone_on(sp.sin(_X), _X, 0, sp.pi / 2))


@cache
def euclid_lemma_holds(limit: int = EUCLID_RANGE) -> bool:
    """Exhaustive: for every ``2 <= q <= limit`` and ``1 <= k < q``, the smallest distance of
    ``m k mod q`` (``m = 1 .. q - 1``) to ``{0, q}`` is 1 exactly when ``gcd(k, q) = 1`` (so
    ``2 pi k / q`` attains the optimum exactly then)."""
    for q in range(2, limit + 1):
        for k in range(1, q):
            closest = min(min(m * k % q, q - m * k % q) for m in range(1, q))
            if (closest == 1) != (math.gcd(k, q) == 1):
                return False
    return True


@cache
def _ratio_limits() -> bool:
    term = sp.pi**2 / (2 * _XP**2)
    margin = [2 * sp.sin(sp.pi / _XP) ** 2, 2 * sp.sin(sp.pi / (_XP + 1)) ** 2]  # length, offset
    gap = [2 * sp.sin(2 * sp.pi / (_XP + 1)) ** 2, 2 * sp.sin(2 * sp.pi / (_XP + 2)) ** 2]  # ceil's two cases
    return all(sp.limit(v / term, _XP, sp.oo) == 4 for v in margin) and all(
        sp.limit(v / term, _XP, sp.oo) == 16 for v in gap
    )


@cache
def _sinc_decreasing() -> bool:
    # sin is concave on [0, pi/2] (its derivative decreases) and sin 0 = 0, so the chord slope
    # sin(x)/x from the origin decreases on (0, pi/2]; the length-convention ratio is 4 (sin(x)/x)^2
    # at x = pi/n
    concave = bool(monotone_on(sp.diff(sp.sin(_X), _X), _X, 0, sp.pi / 2, increasing=False))
    start = sp.Rational(16) / sp.pi**2 - 1  # the ratio at n = 2, minus 1
    return concave and sp.sin(0) == 0 and bool(start.is_positive)


def optimum_proof() -> list[ProofStep]:
    """The steps of the lemma and its consequences (module docstring), checks attached (run them with
    :func:`ropeproof.theory.proof_checks.proof_status`)."""
    return [
        ProofStep("stable-form", "1 - cos(m theta) = 2 sin(m theta / 2)^2", "sympy", _stable_form),
        ProofStep(
            "even-periodic",
            "cos(x + 2 pi k) = cos(x) for integer k and cos(-x) = cos(x): g(m) depends on m theta only "
            "through its distance to 2 pi Z",
            "sympy",
            _even_periodic,
        ),
        ProofStep(
            "arcs-telescope",
            "the M + 1 arcs between the sorted points x_0 <= ... <= x_M of the circle sum to 2 pi",
            "sympy",
            _arcs_telescope,
        ),
        ProofStep(
            "averaging",
            "M + 1 arcs each longer than 2 pi / (M + 1) (by epsilon > 0) would sum to 2 pi + (M + 1) "
            "epsilon > 2 pi, so some arc is at most 2 pi / (M + 1)",
            "sympy",
            _averaging,
        ),
        ProofStep(
            "arc-is-an-offset",
            "the arc between neighbouring points x_a, x_b (a < b) has length the distance of (b - a) theta "
            "to 2 pi Z, and 1 <= b - a <= M",
            DEFINITION,
        ),
        ProofStep(
            "monotone",
            "1 - cos x increases on [0, pi], and 2 pi / (M + 1) <= pi for M >= 1",
            "sympy",
            _one_minus_cos_increasing,
        ),
        ProofStep(
            "attained",
            "at theta = 2 pi / (M + 1): sin(pi (M + 1 - m) / (M + 1)) = sin(pi m / (M + 1)) and sin "
            "increases "
            "on [0, pi/2], so min_m g(m) = g(1) = 2 sin(pi / (M + 1))^2",
            "sympy",
            _attained_at_first_angle,
        ),
        ProofStep(
            "equality-case",
            "equality forces every arc to be exactly 2 pi / (M + 1) (a sum of non-negative excesses that is "
            "0), so the points form the regular (M + 1)-gon and theta = 2 pi k / (M + 1)",
            DEFINITION,
        ),
        ProofStep(
            "attaining-angles",
            f"2 pi k / q attains exactly when gcd(k, q) = 1 (Euclid's lemma; exhaustive for q <= "
            f"{EUCLID_RANGE})",
            "exhaustive",
            euclid_lemma_holds,
        ),
        ProofStep(
            "ratio-limits",
            "against pi^2 / (2 n^2): the best margin tends to 4 times the term (n the length or the largest "
            "offset), the best largest gap to 16 times",
            "sympy",
            _ratio_limits,
        ),
        ProofStep(
            "ratio-increasing",
            "4 (sin(pi/n) / (pi/n))^2 increases with n (sin concave on [0, pi/2], sin 0 = 0) from 16/pi^2 > "
            "1 "
            "at n = 2: with n the length the term fails at every n for the best angle",
            "sympy",
            _sinc_decreasing,
        ),
    ]

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

**Readings** (:func:`readings_steps`). The target is on top of every input (``g >= 0``), so the gap is
the margin; the keys other than the target at position ``t`` sit at offsets ``1 .. max(t, n - 1 - t)``,
and the least over ``t`` (``t = 0``) gives ``M = n - 1``, the largest (``t = floor((n - 1)/2)``)
``M = ceil((n - 1)/2)``.

:func:`readings_steps` and :func:`optimum_proof` list the steps of the readings and of the value, every
one machine-checked (sympy, interval branch-and-bound over a whole interval for ``ratio-increasing``, or a
definition restated and checked). :func:`attaining_angles_proof` lists
those of "attained exactly at ...": that only the multiples ``2 pi k/(M + 1)`` with ``gcd(k, M + 1) = 1``
can attain is machine-checked; that every such multiple does is Euclid's lemma, argued, and checked
exhaustively for ``M + 1 <= EUCLID_RANGE``.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._arb_bounds import sinc_decreasing_on
from ropeproof.theory._counting_induction import sum_beyond_count_times_bound
from ropeproof.theory._order_facts import implies, nonnegative
from ropeproof.theory._proof_checks import ProofStep, definition_step, monotone_on
from ropeproof.theory._trig_identity import vanishes_identically

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
EUCLID_RANGE = 256
"""The exhaustive check that every ``2 pi k/(M + 1)`` with ``gcd(k, M + 1) = 1`` attains covers
``M + 1 <= EUCLID_RANGE`` (beyond it the step is Euclid's lemma, argued)."""


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
# Every check below proves the content of its step for every value of its symbols; docs/theory.md section
# 9.1 writes out how the steps combine. Integers enter as case splits stated in the step (j != t means
# j <= t - 1 or j >= t + 1), the linear facts are decided by sympy's linear real arithmetic.

_N, _T, _J, _MM, _A, _B = sp.symbols("n t j m a b", real=True)


@cache
def _target_on_top() -> bool:
    return bool((2 * sp.sin(_X / 2) ** 2).is_nonnegative)


@cache
def _offsets_fill_prefixes() -> bool:
    before = implies([sp.Ge(_J, 0), sp.Le(_J, _T - 1)], [sp.Ge(_T - _J, 1), sp.Le(_T - _J, _T)]) and implies(
        [sp.Ge(_MM, 1), sp.Le(_MM, _T)], [sp.Ge(_T - _MM, 0), sp.Le(_T - _MM, _T - 1)]
    )
    after = implies(
        [sp.Ge(_J, _T + 1), sp.Le(_J, _N - 1)], [sp.Ge(_J - _T, 1), sp.Le(_J - _T, _N - 1 - _T)]
    ) and implies(
        [sp.Ge(_MM, 1), sp.Le(_MM, _N - 1 - _T)], [sp.Ge(_T + _MM, _T + 1), sp.Le(_T + _MM, _N - 1)]
    )
    union = implies([sp.Ge(_MM, 1), sp.Le(_MM, _A), sp.Le(_A, _B)], sp.Le(_MM, _B))
    return before and after and union


@cache
def _worst_target() -> bool:
    # M(t) = max(t, n - 1 - t) <= n - 1 for 0 <= t <= n - 1, and t = 0 (s = n - 1) gives n - 1
    bounded = implies([sp.Ge(_T, 0), sp.Le(_T, _N - 1)], [sp.Le(_T, _N - 1), sp.Le(_N - 1 - _T, _N - 1)])
    at_zero = implies([sp.Ge(_N, 2)], sp.Ge(_N - 1, 0))  # M(0) = max(0, n - 1) = n - 1
    return bounded and at_zero


@cache
def _middle_target() -> bool:
    # min over 0 <= t <= n - 2 of max(t, n - 1 - t) is ceil((n - 1)/2): n = 2k + 1 (k >= 1) or 2k + 2 (k >= 0)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    ok = True
    for n, low in ((2 * k + 1, k), (2 * k + 2, k + 1)):
        ok &= sp.ceiling((n - 1) / sp.Integer(2)) == low
        left = implies([sp.Le(_T, low - 1)], sp.Ge(n - 1 - _T, low))  # t <= low - 1: the far side
        right = implies([sp.Ge(_T, low)], sp.Ge(_T, low))  # t >= low: the near side
        attained = sp.Max(k, n - 1 - k) == low  # t = k
        inside = implies([sp.Ge(k, 1 if n == 2 * k + 1 else 0)], [sp.Ge(k, 0), sp.Le(k, n - 2)])
        ok &= left and right and attained and inside
    return bool(ok)


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
    # M + 1 arcs each above c = 2 pi/(M + 1), by any excesses, would sum to more than (M + 1) c = 2 pi
    # (sum_beyond_count_times_bound: by induction on the number of arcs), against their sum 2 pi
    whole = sp.cancel((M_SYM + 1) * (2 * sp.pi / (M_SYM + 1)) - 2 * sp.pi) == 0
    total = sp.Symbol("S", real=True)
    no_more = implies([sp.Eq(total, 2 * sp.pi)], sp.Le(total, 2 * sp.pi))
    return whole and no_more and sum_beyond_count_times_bound()


@cache
def _arc_is_an_offset() -> bool:
    # x_m = m theta - 2 pi k_m: an arc between x_a and x_b (or the arc that wraps past 0) has the cosine
    # of (b - a) theta, and 0 <= a < b <= M gives 1 <= b - a <= M (a > b: swap the names)
    a, b = sp.symbols("a b", integer=True, nonnegative=True)
    ka, kb = sp.symbols("k_a k_b", integer=True)
    y = sp.Symbol("y", real=True)
    inner = vanishes_identically(
        sp.cos((b * THETA - 2 * sp.pi * kb) - (a * THETA - 2 * sp.pi * ka)) - sp.cos((b - a) * THETA)
    )
    wrap = vanishes_identically(sp.cos(2 * sp.pi - y) - sp.cos(y))
    m_real = sp.Symbol("M", real=True)
    offset = implies(
        [sp.Ge(_A, 0), sp.Le(_A, _B - 1), sp.Le(_B, m_real)], [sp.Ge(_B - _A, 1), sp.Le(_B - _A, m_real)]
    )
    return inner and wrap and offset


@cache
def _one_minus_cos_increasing() -> bool:
    within = sp.factor(sp.pi - 2 * sp.pi / (M_SYM + 1)).is_nonnegative  # 2 pi / (M + 1) <= pi
    return bool(within) and bool(monotone_on(1 - sp.cos(_X), _X, 0, sp.pi))


@cache
def _attained_at_first_angle() -> bool:
    m = sp.Symbol("m", positive=True, integer=True)
    mirrored = sp.cancel(sp.pi * (M_SYM + 1 - m) / (M_SYM + 1) - (sp.pi - sp.pi * m / (M_SYM + 1))) == 0
    symmetric = mirrored and vanishes_identically(sp.sin(sp.pi - _X) - sp.sin(_X))
    # 1 <= m <= (M + 1)/2 puts pi m/(M + 1) in [0, pi/2]: r = m/(M + 1) = 1/2 - v with r, v >= 0
    r, v = sp.symbols("r v", nonnegative=True)
    inside = nonnegative(sp.pi * r) and nonnegative(sp.pi / 2 - sp.pi * (sp.Rational(1, 2) - v))
    return symmetric and inside and bool(monotone_on(sp.sin(_X), _X, 0, sp.pi / 2))


@cache
def _equality_case() -> bool:
    # (1) 1 - cos increases strictly on [0, pi] (strictly on the open interval, continuous at the ends),
    # so an arc shorter than 2 pi/(M + 1) <= pi would give a smaller gap;
    # (2) excesses e >= 0 (one arc) and r >= 0 (the others) with e + r = 0 (the arcs telescope) give e = 0;
    # (3) M + 1 arcs of 2 pi/(M + 1) from x_0 = 0 put x_i at 2 pi i/(M + 1)
    strict = bool(sp.is_strictly_increasing(1 - sp.cos(_X), sp.Interval.open(0, sp.pi)))
    e, rest = sp.symbols("e r", real=True)
    zero = implies([sp.Ge(e, 0), sp.Ge(rest, 0), sp.Le(e + rest, 0)], [sp.Le(e, 0), sp.Ge(e, 0)])
    i = sp.Symbol("i", integer=True, nonnegative=True)
    ell = sp.Symbol("l", integer=True, nonnegative=True)
    spaced = (
        sp.simplify(sp.Sum(2 * sp.pi / (M_SYM + 1), (ell, 0, i - 1)).doit() - 2 * sp.pi * i / (M_SYM + 1))
        == 0
    )
    return strict and zero and spaced


@cache
def _common_factor_repeats() -> bool:
    # theta = 2 pi k/(M + 1) with k = d k', M + 1 = d q', d >= 2: the offset m = q' lies in 1 .. M and
    # m theta = 2 pi k', a multiple of 2 pi, so g(q') = 0
    u, v = sp.symbols("u v", integer=True, nonnegative=True)
    kp = sp.Symbol("kp", integer=True)
    d, q = 2 + u, 1 + v
    big_m = d * q - 1
    multiple = sp.cancel(q * (2 * sp.pi * d * kp) / (d * q) - 2 * sp.pi * kp) == 0
    in_range = nonnegative(big_m - q) and nonnegative(q - 1)
    return multiple and in_range and sp.cos(2 * sp.pi * kp) == 1


def euclid_lemma_range(limit: int = EUCLID_RANGE) -> bool:
    """Exhaustive, integers only: for every ``2 <= q <= limit`` and ``1 <= k < q``, no ``m`` in ``1 .. q - 1``
    has ``q | m k`` when ``gcd(k, q) = 1`` (Euclid's lemma), and the residues ``m k mod q`` come
    within 1 of ``{0, q}``, so ``2 pi k/q`` attains the optimum. Vectorised over ``m`` and ``k``."""
    limit = integer(limit, "limit", low=2, high=4096)
    for q in range(2, limit + 1):
        k = np.arange(1, q)[:, None]
        residues = (np.arange(1, q)[None, :] * k) % q
        closest = np.minimum(residues, q - residues).min(axis=1)
        units = np.gcd(np.arange(1, q), q) == 1
        if not np.array_equal(closest[units], np.ones(int(units.sum()), dtype=closest.dtype)):
            return False
    return True


@cache
def euclid_lemma_holds(limit: int = EUCLID_RANGE) -> bool:
    """:func:`euclid_lemma_range` (computed once per ``limit``)."""
    return euclid_lemma_range(limit)


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
    # (1) d/dx (sin x / x) = x g(x) with g(x) = (x cos x - sin x)/x^3 (sympy), and g < 0 on all of
    # [0, pi/2] (Arb branch-and-bound, Taylor enclosure at the removable singularity 0): sin x / x strictly
    # decreases on (0, pi/2], where it is at least its value 2/pi > 0 at pi/2;
    # (2) for n >= 2, x = pi/n lies in (0, pi/2] and strictly decreases in n (derivative -pi/n^2 < 0);
    # (3) the best margin over the term is 2 sin(pi/n)^2 / (pi^2/(2 n^2)) = 4 (sin(x)/x)^2 at x = pi/n,
    # so it strictly increases with n, from 16/pi^2 > 1 at n = 2
    g = (_X * sp.cos(_X) - sp.sin(_X)) / _X**3
    slope = sp.simplify(sp.diff(sp.sin(_X) / _X, _X) - _X * g) == 0
    decreasing = slope and sinc_decreasing_on((1, 2))
    at_end = bool((sp.sin(sp.pi / 2) / (sp.pi / 2) - 2 / sp.pi) == 0) and bool((2 / sp.pi).is_positive)
    n = 2 + sp.Symbol("j", nonnegative=True)
    inside = nonnegative(sp.factor(sp.pi / 2 - sp.pi / n)) and bool((sp.pi / n).is_positive)
    falling = bool(sp.diff(sp.pi / _XP, _XP).is_negative)
    ratio = (
        sp.simplify(
            2 * sp.sin(sp.pi / _XP) ** 2 / (sp.pi**2 / (2 * _XP**2))
            - 4 * (sp.sin(sp.pi / _XP) / (sp.pi / _XP)) ** 2
        )
        == 0
    )
    start = bool((sp.Rational(16) / sp.pi**2 - 1).is_positive)  # the ratio at n = 2, minus 1
    return decreasing and at_end and inside and falling and ratio and start


def readings_steps() -> list[ProofStep]:
    """How each reading of Delta becomes a prefix minimum ``G_M``, for any angle (module docstring): the
    target is on top of every input, the keys other than the target at position ``t`` sit at offsets
    ``1 .. max(t, n - 1 - t)``, and the least (resp. largest) over ``t`` takes ``M = n - 1`` (resp.
    ``ceil((n - 1)/2)``). Every key is the same vector: the verify layer checks that against the
    construction."""
    return [
        ProofStep(
            "target-on-top",
            "every other key scores g(m) = 2 sin(m theta/2)^2 >= 0 below the target, so the target is on top "
            "of every input",
            "sympy",
            _target_on_top,
        ),
        definition_step(
            "gap-is-margin",
            "with the target on top, the gap (largest minus second largest) is the target margin, so "
            "gap_inf = margin_inf",
            "gap-is-margin-on-top",
        ),
        ProofStep(
            "offsets",
            "for the target at 0 <= t <= n - 1 the other positions j (j <= t - 1 or j >= t + 1) sit at "
            "offsets exactly 1 .. t and 1 .. n - 1 - t, so 1 .. max(t, n - 1 - t): the input's margin is "
            "G_M(t), M(t) = max(t, n - 1 - t)",
            "sympy",
            _offsets_fill_prefixes,
        ),
        definition_step(
            "prefix-minimum",
            "a least value over more offsets is at most the least over fewer: G_M does not increase with M",
            "worst-over-more-is-smaller",
        ),
        definition_step(
            "least-over-inputs",
            "margin_inf, a least value over inputs, is at most the margin of any one input",
            "worst-at-most-one-input",
        ),
        definition_step(
            "least-above-a-bound",
            "a least value over inputs that are all at least B is at least B",
            "worst-above-a-common-bound",
        ),
        ProofStep(
            "worst-target",
            "M(t) <= n - 1 for every target position, with n - 1 at t = 0 (query s = n - 1): margin_inf(n) = "
            "G_{n-1}",
            "sympy",
            _worst_target,
        ),
        definition_step(
            "largest-over-inputs",
            "gap_sup, a largest value over inputs, is at least the gap of any one input",
            "best-at-least-one",
        ),
        definition_step(
            "largest-below-a-bound",
            "a largest value over inputs that are all at most B is at most B",
            "best-below-a-common-bound",
        ),
        ProofStep(
            "middle-target",
            "the least M(t) over 0 <= t <= n - 2 is ceil((n - 1)/2), attained at t = floor((n - 1)/2) (n odd "
            "and n even checked apart): gap_sup(n) = G_{ceil((n-1)/2)}",
            "sympy",
            _middle_target,
        ),
    ]


def optimum_proof() -> list[ProofStep]:
    """The value of the lemma, ``max_theta G_M(theta) = 2 sin(pi/(M + 1))^2`` with ``theta = 2 pi/(M + 1)``
    attaining it, and its consequences (module docstring): every step machine-checked (run them with
    :func:`ropeproof.theory._proof_checks.proof_level`)."""
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
            "M + 1 arcs each longer than 2 pi / (M + 1), by any excesses, would sum to more than 2 pi (k "
            "terms each above c sum to more than k c, by induction on k), so some arc is at most "
            "2 pi / (M + 1)",
            "sympy",
            _averaging,
        ),
        ProofStep(
            "arc-is-an-offset",
            "with x_m = m theta - 2 pi k_m, the arc between neighbouring points x_a, x_b (or the arc across "
            "0) has the cosine of (b - a) theta, and 0 <= a < b <= M gives 1 <= b - a <= M",
            "sympy",
            _arc_is_an_offset,
        ),
        ProofStep(
            "monotone",
            "1 - cos x increases on [0, pi], and 2 pi / (M + 1) <= pi for M >= 1",
            "sympy",
            _one_minus_cos_increasing,
        ),
        ProofStep(
            "attained",
            "at theta = 2 pi / (M + 1): sin(pi (M + 1 - m) / (M + 1)) = sin(pi m / (M + 1)), 1 <= m <= "
            "(M + 1)/2 puts pi m/(M + 1) in [0, pi/2] where sin increases, so min_m g(m) = g(1) = "
            "2 sin(pi / (M + 1))^2",
            "sympy",
            _attained_at_first_angle,
        ),
        definition_step(
            "first-term",
            "G_M(theta), a least value over offsets, is at most g(1) = 1 - cos theta",
            "worst-at-most-one-input",
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
            "the best margin over pi^2/(2 n^2) is 4 (sin(pi/n) / (pi/n))^2, which increases strictly with n "
            "from 16/pi^2 > 1 at n = 2: sin x / x strictly decreases on (0, pi/2] (its derivative is x g(x), "
            "g(x) = (x cos x - sin x)/x^3 < 0 on all of [0, pi/2] by interval branch-and-bound in Arb, with "
            "the Taylor enclosure -1/3 <= g <= -1/3 + x^2/30 near 0) and x = pi/n decreases in n; with n the "
            "length the term fails at every n for the best angle",
            "interval",
            _sinc_decreasing,
        ),
    ]


def attaining_angles_proof(limit: int = EUCLID_RANGE) -> list[ProofStep]:
    """Which angles attain the optimum (module docstring): only multiples ``2 pi k/(M + 1)`` with
    ``gcd(k, M + 1) = 1`` can (machine-checked); that every such angle does is Euclid's lemma, argued, and
    checked exhaustively for ``M + 1 <= limit``."""
    return [
        ProofStep(
            "equality-case",
            "an angle that attains the optimum has every arc at least 2 pi/(M + 1) (1 - cos increases "
            "strictly on [0, pi]); non-negative excesses summing to 0 all vanish, so the points form the "
            "regular (M + 1)-gon from x_0 = 0 and theta = x_1 = 2 pi k/(M + 1)",
            "sympy",
            _equality_case,
        ),
        ProofStep(
            "common-factor-repeats",
            "if d = gcd(k, M + 1) >= 2, the offset m = (M + 1)/d lies in 1 .. M and m theta is a multiple of "
            "2 pi, so g(m) = 0: no such angle attains",
            "sympy",
            _common_factor_repeats,
        ),
        ProofStep(
            "attaining-angles",
            "if gcd(k, M + 1) = 1, M + 1 divides no m k with 1 <= m <= M (Euclid's lemma), so the points "
            "m theta are the regular (M + 1)-gon again and 2 pi k/(M + 1) attains",
            "argument",
            lambda: euclid_lemma_holds(limit),
            evidence=f"exhaustive for M + 1 <= {limit}",
        ),
    ]

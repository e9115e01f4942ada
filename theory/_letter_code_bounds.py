"""Corrected statements about [A]'s one-plane letter code: T_Retrieval's worst margin against [A]'s bound,
its largest gap (the literal reading of Delta), and the same head on [B]'s partial induction
(docs/theory.md section 9).

The letter code scores a query asking for letter ``Y`` against a pair with left letter ``L`` at distance
``d`` back with ``cos(c omega - d theta)``, ``c = phi(L) - phi(Y) mod |ALPH|``, ``omega = 2 pi / |ALPH|``
(docs/theory.md section 4). The target (``c = 0``) scores ``T(d) = cos(d theta)``; the query's own key
(``d = 0``, its left letter is not ``Y``) and every other pair are competitors.

**Competitor lemma.** For ``0 <= d theta <= omega`` and ``c = 1 .. |ALPH| - 1``,
``cos(c omega - d theta) <= cos(omega - d theta)``: the angle lies in ``[(c - 1) omega, c omega]``, which
for ``c >= 2`` is inside ``[omega, 2 pi - omega]``, at distance ``>= omega >= omega - d theta`` from
``2 pi Z``; and ``cos`` decreases on ``[0, pi]``.

**R1 (worst margin, exact, and the bound of [A]'s shape).** For ``theta >= 0`` and ``(n - 1) theta <=
omega`` the lemma and ``T`` decreasing give, for every input, ``margin >= T(d_t) - cos(omega - D theta)``
with ``D`` the largest distance other than ``d_t``; the least of these is at ``d_t`` in ``{n - 2, n - 1}``,
and those inputs attain it, so ``margin_inf(n) = min(f_near(n), f_far(n))``
(:mod:`ropeproof.theory._retrieval_margin`; ``f_far(2) = cos theta - cos omega``). Whatever ``theta``, the
input with the target at distance ``n - 2`` and letter ``phi(Y) + 1`` at ``n - 1`` has margin at most

    cos((n - 2) theta) - cos(omega - (n - 1) theta)
        = [1 - cos(omega - (n - 1) theta)] - 2 sin((n - 2) theta / 2)^2,

so **for every theta and every length n >= 3, margin_inf(n) <= 1 - cos(omega - (n - 1) theta)**, and
``margin_inf(2) = cos theta - cos omega <= 1 - cos omega``. With ``n`` the largest offset this is [A]'s bound
``1 - cos(omega - n theta)`` itself, for ``n >= 2``; at ``n = 1`` the only competitor is the query's own key.
The bound is attained at ``theta = 0`` and exceeds ``f_near`` by exactly ``2 sin((n - 2) theta / 2)^2`` for
``3 <= n < n*``. Where ``margin_inf > 0`` every input has its target on top, so ``gap_inf = margin_inf``
there (docs/theory.md section 5) and the same bound holds for the smallest gap.

**R2 (largest gap, the literal Delta).** For even ``|ALPH| >= 4``, ``theta >= 0`` and ``(n - 1) theta <=
omega / 2``:

    gap_sup(n) = cos(theta) + cos((n - 1) theta) = 2 cos(n theta / 2) cos((n - 2) theta / 2)   (n >= 3),
    gap_sup(2) = 1 + cos(theta),

so ``gap_sup = 2`` at every length when ``theta = 0``. The opposite letter ``c = |ALPH| / 2`` scores
``cos(pi - d theta) = -cos(d theta)``, the least a competitor can score (any other ``c`` puts the angle at
least ``omega - d theta >= d theta`` from ``pi``), and the target scores at least ``cos(omega / 2)``, above
every competitor, so the largest gap puts the target at distance 1 and opposite letters everywhere else.
It is at least ``2 cos(omega / 2) >= sqrt 2``, while [A]'s bound is at most ``1 - cos(omega) <= 1``: the
literal reading measures the range of the logits (a query whose own key points the other way), not how
well the head separates the target, and no bound of [A]'s shape holds for it.

**P (one plane on partial induction).** [B]'s partial induction asks for the *last* earlier pair with left
letter ``Y`` (docs/theory.md section 4). On the letter code at ``theta > 0`` with ``(2n - 3) theta <= omega``,
a later occurrence of ``Y`` at ``d_t + 1`` is the strongest earlier ``Y``, and
``cos(d theta) - cos((d + 1) theta) = 2 sin((2d + 1) theta / 2) sin(theta / 2)`` is least at ``d = 1``, so

    margin_inf(n) = min(2 sin(theta / 2) sin(3 theta / 2), margin_inf^Retrieval(n))    (n >= 3),

positive exactly while ``(2n - 3) theta < omega``: one plane solves partial induction at every length up to
the largest such ``n`` (:func:`code_horizon`), and at any fixed length with a small enough ``theta``.

The ``*_proof`` functions list the steps with their checks.
"""

from __future__ import annotations

import math
from functools import cache

import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.theory import _letter_code_lemmas as L
from ropeproof.theory._order_facts import implies, nonnegative
from ropeproof.theory._proof_checks import ProofStep, composition_step, definition_step, monotone_on, sign_on
from ropeproof.theory._retrieval_margin import (
    product_forms_hold,
    retrieval_margin_closed_form,
)
from ropeproof.theory._trig_identity import vanishes_identically

N = sp.Symbol("n", positive=True, integer=True)
THETA = sp.Symbol("theta", real=True)
OMEGA = sp.Symbol("omega", positive=True)
_X = sp.Symbol("x", real=True)
CONVENTIONS = ("length", "offset")


def _omega(alphabet: int, even: bool = False) -> float:
    """``omega = 2 pi / |ALPH|`` of a valid alphabet size (an integer >= 2; even and >= 4 when ``even``)."""
    return 2 * math.pi / integer(alphabet, "alphabet", low=4 if even else 2, even=even)


# ------------------------------------------------------------------------------------- R1: margin


def retrieval_corrected_bound(n: int, theta: float, alphabet: int, convention: str = "length") -> float:
    """R1's bound of [A]'s shape at ``n`` (float64, stable form): ``1 - cos(omega - (L - 1) theta)`` for
    sequence length ``L >= 3`` and ``1 - cos(omega)`` at ``L = 2``; ``convention="offset"`` reads ``n`` as
    the largest offset (``L = n + 1``), where it is ``1 - cos(omega - n theta)`` for ``n >= 2``."""
    omega, theta = _omega(alphabet), real(theta, "theta", low=0)
    if convention not in CONVENTIONS:
        raise InputError(f"convention={convention!r}; accepted: {CONVENTIONS}")
    n = integer(n, "n", low=2 if convention == "length" else 1, note=f"{convention} convention")
    length = n if convention == "length" else n + 1
    shift = 0 if length == 2 else (length - 1) * theta
    return 2 * math.sin((omega - shift) / 2) ** 2


def retrieval_witness_margin(n: int, theta: float, alphabet: int) -> float:
    """The margin of R1's witness input at length ``n >= 3`` (target at distance ``n - 2``, letter
    ``phi(Y) + 1`` at ``n - 1``, every other position the opposite letter):
    ``cos((n - 2) theta) - cos(omega - (n - 1) theta)``, stable form, valid while ``(n - 1) theta <= omega``
    (then no other competitor is stronger)."""
    omega, theta = _omega(alphabet), real(theta, "theta", low=0)
    n = integer(n, "n", low=3)
    a, b = (n - 2) * theta, omega - (n - 1) * theta
    return -2 * math.sin((a + b) / 2) * math.sin((a - b) / 2)


@cache
def _witness_identity() -> bool:
    lhs = sp.cos((N - 2) * THETA) - sp.cos(OMEGA - (N - 1) * THETA)
    rhs = (1 - sp.cos(OMEGA - (N - 1) * THETA)) - 2 * sp.sin((N - 2) * THETA / 2) ** 2
    return vanishes_identically(lhs - rhs)


@cache
def _square_nonnegative() -> bool:
    return bool((2 * sp.sin((N - 2) * THETA / 2) ** 2).is_nonnegative)


def competitor_steps() -> list[ProofStep]:
    """The competitor lemma (module docstring) and the monotonicity it rests on."""
    return [
        ProofStep(
            "cos-decreasing",
            "cos decreases on [0, pi], and omega = 2 pi/|ALPH| <= pi for |ALPH| >= 2",
            "sympy",
            lambda: L.cos_decreasing() and L.omega_at_most_pi(),
        ),
        ProofStep(
            "competitor-lemma",
            "for 0 <= d theta <= omega and 1 <= c <= |ALPH| - 1, cos(c omega - d theta) <= cos(omega - d "
            "theta), with equality at c = 1: alpha = omega - d theta and phi = c omega - d theta satisfy 0 "
            "<= alpha <= pi and alpha <= phi <= 2 pi - alpha, where cos(phi) <= cos(alpha)",
            "sympy",
            L.competitor_lemma,
        ),
    ]


def _order_steps(prefix: str = "") -> list[ProofStep]:
    """The definitions that combine the lemmas: a margin is at most the target minus any one competitor,
    the best competitor is at most a bound that every competitor obeys, and the least margin over inputs
    is at most any one input's and at least a bound that every input obeys."""
    return [
        definition_step(
            f"{prefix}margin-below-one-competitor",
            "an input's margin (the target minus the best competitor) is at most the target minus any one "
            "competitor",
            "margin-at-most-one-competitor",
        ),
        definition_step(
            f"{prefix}best-competitor-below-a-bound",
            "if every competitor logit is at most B, the best competitor is at most B",
            "best-below-a-common-bound",
        ),
        definition_step(
            f"{prefix}least-over-inputs",
            "margin_inf, the least margin over inputs, is at most the margin of any one input",
            "worst-at-most-one-input",
        ),
        definition_step(
            f"{prefix}least-above-a-bound",
            "if every input's margin is at least B, margin_inf is at least B",
            "worst-above-a-common-bound",
        ),
    ]


def retrieval_exact_steps() -> list[ProofStep]:
    """R1's exact worst margin on ``(n - 1) theta <= omega``: the competitor lemma, the worst input and the
    product forms of :mod:`ropeproof.theory._retrieval_margin`, every step machine-checked."""
    return [
        *competitor_steps(),
        ProofStep(
            "worst-input",
            "for a target at distance d_t the farthest other distance D is n - 1 (d_t <= n - 2) or n - 2 "
            "(d_t = n - 1); cos(omega - d theta) does not decrease in d while d theta <= omega, so every "
            "competitor scores at most cos(omega - D theta), which the letter phi(Y) + 1 at D attains; and "
            "T(d_t) >= T(n - 2) for d_t <= n - 2: margin_inf = min(f_near, f_far) (every angle range, 0 <= "
            "omega - D theta <= omega - d theta <= omega <= pi and 0 <= d_t theta <= (n - 2) theta <= pi, "
            "checked from (n - 1) theta <= omega)",
            "sympy",
            L.worst_input,
        ),
        *_order_steps(),
        ProofStep(
            "product-forms",
            "f_far, f_near in product form (sum-to-product)",
            "sympy",
            product_forms_hold,
        ),
        ProofStep(
            "switch",
            "f_far - f_near = 4 sin(theta/2) cos(omega/2) sin((omega - (2n - 3) theta)/2), with the sign of "
            "omega - (2n - 3) theta while (n - 1) theta <= omega: f_near is the smaller exactly for n <= n* "
            "(strictly: for theta > 0 and |ALPH| >= 3 the difference is 0 only where (2n - 3) theta = omega; "
            "at |ALPH| = 2 the two are equal)",
            "sympy",
            L.switch_sign,
        ),
    ]


def retrieval_bound_proof() -> list[ProofStep]:
    """R1: the exact worst margin (:func:`retrieval_exact_steps`) and the bound of [A]'s shape for every
    ``theta`` and every length, and their composition (argued)."""
    return [
        *retrieval_exact_steps(),
        ProofStep(
            "witness-identity",
            "the witness (target at n - 2, letter phi(Y) + 1 at n - 1) has target minus that competitor "
            "cos((n - 2) theta) - cos(omega - (n - 1) theta) = [1 - cos(omega - (n - 1) theta)] - "
            "2 sin((n - 2) theta / 2)^2",
            "sympy",
            _witness_identity,
        ),
        ProofStep("square", "2 sin((n - 2) theta / 2)^2 >= 0", "sympy", _square_nonnegative),
        ProofStep(
            "two-keys",
            "at n = 2 the only competitor is the query's own key at d = 0, scoring cos(c omega) <= "
            "cos(omega) (the competitor lemma at d = 0, equality at c = 1), so margin_inf(2) = cos theta - "
            "cos omega; and cos theta <= 1",
            "sympy",
            lambda: L.competitor_lemma() and L.target_below_one(),
        ),
        definition_step(
            "gap-is-margin",
            "where margin_inf > 0 every input has its target strictly on top, so its gap is its margin and "
            "gap_inf = margin_inf",
            "gap-is-margin-on-top",
        ),
        composition_step("9.2"),
    ]


# -------------------------------------------------------------------------------- R2: largest gap


def largest_gap_closed_form(n: int, theta: float, alphabet: int) -> float:
    """R2: T_Retrieval's ``gap_sup(n)`` (float64), valid for even ``|ALPH| >= 4``, ``theta >= 0`` and
    ``(n - 1) theta <= omega / 2``."""
    omega, theta = _omega(alphabet, even=True), real(theta, "theta", low=0)
    n = integer(n, "n", low=2)
    if (n - 1) * theta > omega / 2:
        raise InputError(
            f"n={n}, theta={theta}: the closed form needs (n - 1) theta <= omega / 2 = {omega / 2}"
        )
    if n == 2:
        return 1.0 + math.cos(theta)
    return 2 * math.cos(n * theta / 2) * math.cos((n - 2) * theta / 2)


@cache
def _opposite_letter() -> bool:
    a = sp.Symbol("A", positive=True, integer=True)
    return sp.simplify((a / 2) * (2 * sp.pi / a) - sp.pi) == 0 and vanishes_identically(
        sp.cos(sp.pi - _X) + sp.cos(_X)
    )


@cache
def _gap_product() -> bool:
    return vanishes_identically(
        sp.cos(THETA) + sp.cos((N - 1) * THETA) - 2 * sp.cos(N * THETA / 2) * sp.cos((N - 2) * THETA / 2)
    )


@cache
def _range_exceeds_bound() -> bool:
    # on the range (n - 1) theta <= omega/2, n >= 2, theta >= 0, |ALPH| >= 4 (omega <= pi/2), with
    # u = theta, v = (n - 1) theta (v - u = (n - 2) theta >= 0) and w = n theta = u + v:
    # (1) 0 <= u <= v <= omega/2 <= pi/4 <= pi, cos decreases on [0, pi]: the gap cos u + cos v is at
    #     least 2 cos(omega/2), which is at least 2 cos(pi/4) = sqrt 2 > 1;
    # (2) 0 <= omega - w <= omega <= pi/2 (w <= omega) and cos >= 0 on [0, pi/2]: 1 - cos(omega - w) <= 1
    u, v, om = sp.symbols("u v omega", real=True)
    big = 4 + sp.Symbol("a", integer=True, nonnegative=True)
    quarter = nonnegative(sp.factor(sp.pi / 2 - 2 * sp.pi / big))  # omega = 2 pi/|ALPH| <= pi/2
    j, t = sp.Symbol("j", integer=True, nonnegative=True), sp.Symbol("t", nonnegative=True)
    slack = nonnegative(j * t)  # v - u = (n - 2) theta, n = 2 + j
    split = sp.expand(N * THETA - (THETA + (N - 1) * THETA)) == 0
    hyps = [sp.Ge(u, 0), sp.Ge(v, u), sp.Le(v, om / 2), sp.Le(om, sp.pi / 2)]
    ranges = implies(
        hyps,
        [
            sp.Le(u, om / 2),
            sp.Le(om / 2, sp.pi / 4),
            sp.Le(om / 2, sp.pi),
            sp.Ge(om - (u + v), 0),
            sp.Le(om - (u + v), om),
            sp.Le(om, sp.pi / 2),
        ],
    )
    decreasing = bool(monotone_on(sp.cos(_X), _X, 0, sp.pi, increasing=False))
    root_two = sp.simplify(2 * sp.cos(sp.pi / 4) - sp.sqrt(2)) == 0 and bool((sp.sqrt(2) - 1).is_positive)
    below_one = sign_on(sp.cos(_X), _X, 0, sp.pi / 2)
    return quarter and slack and split and ranges and decreasing and root_two and below_one


def largest_gap_proof() -> list[ProofStep]:
    """R2's steps (module docstring) and their composition (argued)."""
    return [
        *competitor_steps(),
        ProofStep(
            "opposite-letter",
            "c = |ALPH|/2 gives c omega = pi and cos(pi - x) = -cos(x)",
            "sympy",
            _opposite_letter,
        ),
        ProofStep(
            "least-competitor",
            "for even |ALPH| >= 4, 0 <= d theta <= omega/2 and c != 0, |ALPH|/2: cos(c omega - d theta) >= "
            "-cos(d theta) (cos(c omega - x) + cos x = 2 cos(c omega/2) cos(c omega/2 - x), both factors of "
            "one sign), so the least competitor logit at distance d is -cos(d theta)",
            "sympy",
            L.least_competitor,
        ),
        ProofStep(
            "target-on-top",
            "T(d_t) >= cos(omega/2) >= cos(omega - d theta) >= every competitor logit while (n - 1) theta <= "
            "omega/2, so the target is on top of every input",
            "sympy",
            L.target_on_top,
        ),
        definition_step(
            "gap-is-margin",
            "with the target on top, an input's gap is its margin: the target minus the best competitor",
            "gap-is-margin-on-top",
        ),
        definition_step(
            "best-above-one-competitor",
            "the best competitor is at least the competitor at the farthest other distance D",
            "best-at-least-one",
        ),
        ProofStep(
            "nearest-target",
            "so an input's gap is at most T(d_t) + cos(D theta), largest at d_t = 1, D = n - 1 (T(d_t) <= "
            "T(1); at d_t = n - 1, cos((n - 2) theta) <= cos theta); with the opposite letter everywhere the "
            "best competitor is -cos((n - 1) theta), the farthest",
            "sympy",
            L.nearest_target,
        ),
        definition_step(
            "largest-below-a-bound",
            "if every input's gap is at most B, gap_sup is at most B",
            "best-below-a-common-bound",
        ),
        definition_step(
            "largest-over-inputs",
            "gap_sup, the largest gap over inputs, is at least the gap of any one input",
            "best-at-least-one",
        ),
        definition_step(
            "best-competitor-below-a-bound",
            "if every competitor logit is at most B, the best competitor is at most B",
            "best-below-a-common-bound",
        ),
        ProofStep(
            "gap-product",
            "cos(theta) + cos((n - 1) theta) = 2 cos(n theta / 2) cos((n - 2) theta / 2)",
            "sympy",
            _gap_product,
        ),
        ProofStep(
            "above-the-bound",
            "for |ALPH| >= 4, n >= 2, theta >= 0 and (n - 1) theta <= omega/2 the gap is >= 2 cos(omega/2) "
            ">= sqrt 2 > 1 >= 1 - cos(omega - n theta): theta and (n - 1) theta lie in [0, omega/2], omega/2 "
            "<= pi/4, cos decreases on [0, pi], and omega - n theta lies in [0, pi/2] where cos >= 0 (every "
            "range by linear arithmetic)",
            "sympy",
            _range_exceeds_bound,
        ),
        composition_step("9.3"),
    ]


# ------------------------------------------------------------------------ P: partial induction


def code_partial_induction_margin(n: int, theta: float, alphabet: int) -> float:
    """P: the letter code's ``margin_inf(n)`` on partial induction (float64), valid for ``theta > 0`` and
    ``(2n - 3) theta <= omega``."""
    omega, theta = _omega(alphabet), real(theta, "theta", low=0)
    n = integer(n, "n", low=2)
    if not theta > 0 or (2 * n - 3) * theta > omega:
        raise InputError(f"n={n}, theta={theta}: the closed form needs theta > 0 and (2n - 3) theta <= omega")
    content = retrieval_margin_closed_form(n, float(theta), alphabet)
    if n == 2:
        return content
    return min(2 * math.sin(theta / 2) * math.sin(1.5 * theta), content)


def code_horizon(theta: float, alphabet: int) -> int:
    """The largest ``n`` with ``(2n - 3) theta < omega``: the letter code's horizon on partial induction
    (and on Retrieval) at rotation ``theta > 0``, in exact integer steps around the estimate."""
    omega = _omega(alphabet)
    theta = real(theta, "theta", low=0, low_open=True, note="at theta = 0 two occurrences of Y tie")
    n = max(1, math.ceil((omega / theta + 3) / 2) - 1)
    while (2 * (n + 1) - 3) * theta < omega:
        n += 1
    while n > 1 and (2 * n - 3) * theta >= omega:
        n -= 1
    return n


@cache
def _recency_identity() -> bool:
    d = sp.Symbol("d", positive=True, integer=True)
    return vanishes_identically(
        sp.cos(d * THETA) - sp.cos((d + 1) * THETA) - 2 * sp.sin((2 * d + 1) * THETA / 2) * sp.sin(THETA / 2)
    )


def partial_induction_proof() -> list[ProofStep]:
    """P's steps (module docstring) and their composition (argued)."""
    return [
        *retrieval_exact_steps(),
        ProofStep(
            "independent-positions",
            "with (2n - 3) theta <= omega (so (n - 1) theta <= omega), a letter other than Y is bounded as "
            "for Retrieval, and an earlier Y at d >= d_t + 1 scores cos(d theta) <= cos((d_t + 1) theta), "
            "which a Y at d_t + 1 attains (d_t <= n - 2): the worst input with the target at d_t has margin "
            "min(T(d_t) - T(d_t + 1), T(d_t) - cos(omega - D theta))",
            "argument",
            L.earlier_y,
            evidence="the angle ranges and the monotonicity of cos on [0, pi]; that independent positions "
            "reduce the worst input to the least of the two competitors is argued",
        ),
        ProofStep(
            "recency-identity",
            "cos(d theta) - cos((d + 1) theta) = 2 sin((2d + 1) theta / 2) sin(theta / 2)",
            "sympy",
            _recency_identity,
        ),
        ProofStep(
            "recency-least-at-1",
            "for 1 <= d <= n - 2, 3 theta/2 <= (2d + 1) theta/2 <= (2n - 3) theta/2 <= omega/2 <= pi/2, sin "
            "increases on [0, pi/2] and sin(theta/2) >= 0, so the recency term is least at d = 1",
            "sympy",
            L.recency_least_at_1,
        ),
        ProofStep(
            "positive-below-horizon",
            "while 0 < theta and (2n - 3) theta < omega both terms are positive: every sine in them has its "
            "argument in (0, pi)",
            "sympy",
            L.positive_below_horizon,
        ),
        ProofStep(
            "fails-next",
            "at the first length with (2n - 3) theta >= omega, the input with the target at n - 1 and phi(Y) "
            "+ 1 at n - 2 has target minus that competitor f_far(n) <= 0 (its sines have arguments in "
            "[0, pi] and [-pi, 0])",
            "sympy",
            lambda: product_forms_hold() and L.fails_at_next_length(),
        ),
        composition_step("9.5"),
    ]

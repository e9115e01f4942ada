"""Many-plane T_Index: the Dirichlet upper bound and the mixed-radix lower bound, stated in sympy.

Setting (docs/theory.md sections 4-5; :mod:`ropeproof.verify.measure.exact._index_sweep`). T_Index over
planes ``k = 1 .. K`` with frequencies ``theta_k`` and amplitudes ``a_k >= 0``, ``A = sum_k a_k``.
The target logit is ``A`` and the key ``m`` positions off the target scores ``A - g(m)``, with the stable gap

    g(m) = sum_k a_k (1 - cos(m theta_k)) = sum_k 2 a_k sin(m theta_k / 2)^2.

``margin_inf(n) = min_{1 <= m <= n-1} g(m)`` and ``gap_sup(n) = min_{1 <= m <= ceil((n-1)/2)} g(m)``.
Normalised quantities divide by ``A``.

**Theorem D (Dirichlet upper bound).** For an integer ``M >= 1`` let ``Q = Q_K(M)`` be the largest
integer with ``Q^K <= M``. Whatever the frequencies, some ``1 <= u <= M`` has ``u theta_k`` within
*less than* ``2 pi / Q`` of a multiple of ``2 pi`` in every plane, so for ``Q >= 2``

    min_{1 <= u <= M} g(u) < A (1 - cos(2 pi / Q)) = 2 A sin(pi / Q)^2.

*Proof.* Cut ``[0, 2 pi)^K`` into ``Q^K`` half-open boxes of side ``2 pi / Q``; they partition the
torus, so no point sits on two boxes. The ``M + 1 > Q^K`` points ``(u theta_k mod 2 pi)_k``,
``u = 0 .. M``, put two, ``u_1 < u_2``, in one box; in each coordinate their difference lies in
``(-2 pi / Q, 2 pi / Q)``, and it is ``(u_2 - u_1) theta_k`` mod ``2 pi``. With ``u = u_2 - u_1``
in ``1 .. M`` and ``1 - cos`` even, ``2 pi``-periodic and increasing on ``[0, pi]`` (sympy, below),
``2 pi / Q <= pi`` gives ``1 - cos(u theta_k) < 1 - cos(2 pi / Q)`` in every plane. For ``Q = 1``
(``M < 2^K``) only the trivial ``g <= 2 A`` holds, which is the ``Q = 2`` value; hence

    margin_inf(n) <= D_K(n) := 2 A sin(pi / max(2, Q_K(n - 1)))^2        (M = n - 1),
    gap_sup(n)    <= 2 A sin(pi / max(2, Q_K(ceil((n - 1) / 2))))^2       (M = ceil((n-1)/2)),

and ``D_K(n) <= 2 pi^2 A / ((n-1)^(1/K) - 1)^2``: a decay like ``n^(-2/K)``.

**Theorem R (mixed radix).** Frequencies ``theta_k = 2 pi / b^k`` (``k = 1 .. K``, integer ``b >= 2``):
for ``1 <= m < b^K``, ``g(m) >= 2 min_k a_k sin(pi / b)^2``; with equal amplitudes ``a``, equality is
attained at ``m = b^(K-1)``. So ``margin_inf(n) >= 2 a sin(pi/b)^2`` for ``n <= b^K``.

*Proof.* Let ``j`` be the least ``k`` with ``b^k`` not dividing ``m`` (``j <= K`` since
``1 <= m < b^K``). Then ``b^(j-1) | m`` and ``m mod b^j = b^(j-1) r`` with ``r`` in ``1 .. b-1``, so
``m theta_j / 2 = pi r / b`` mod ``pi`` and ``sin(pi r / b)^2 >= sin(pi / b)^2`` (symmetry ``r <-> b - r``
and ``sin`` increasing on ``[0, pi/2]``, sympy). Every other term is ``>= 0``. At ``m = b^(K-1)`` the
planes ``k < K`` give ``sin(integer * pi) = 0`` and plane ``K`` gives ``sin(pi / b)^2``.

**Corollary (rate).** With ``b = ceil(n^(1/K))`` (so ``n <= b^K``), Jordan's inequality
``sin x >= 2 x / pi`` on ``[0, pi/2]`` gives, for the best normalised margin ``mu*_K(n)`` over all
``K``-plane T_Index heads,

    8 / (K (n^(1/K) + 1)^2) <= (2/K) sin(pi / b)^2 <= mu*_K(n)
                            <= 2 sin(pi / Q)^2 <= 2 pi^2 / ((n-1)^(1/K) - 1)^2,

so ``mu*_K(n) = Theta(n^(-2/K))`` with constants between ``2 pi^2 / K`` and ``2 pi^2`` asymptotically.
:func:`dirichlet_proof` and :func:`mixed_radix_proof` list the steps and machine-check the analytic ones
with sympy; the integer step of Theorem R is checked exhaustively by :func:`residue_lemma_holds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._proof_checks import ProofStep
from ropeproof.theory._trig_identity import vanishes_identically

N = sp.Symbol("n", positive=True, integer=True)
"""Sequence length."""
M_SYM = sp.Symbol("M", positive=True, integer=True)
"""Number of competing offsets ``1 .. M``."""
Q_SYM = sp.Symbol("Q", positive=True, integer=True)
"""Box count per axis, ``Q = floor(M^(1/K))``."""
K_SYM = sp.Symbol("K", positive=True, integer=True)
"""Number of planes."""
B_SYM = sp.Symbol("b", positive=True, integer=True)
"""Mixed-radix base."""
A_SYM = sp.Symbol("A", positive=True)
"""Sum of the amplitudes, ``h(0) = sum_k a_k``."""
_X = sp.Symbol("x", real=True)


def integer_root(m: int, k: int) -> int:
    """The largest integer ``q >= 0`` with ``q^k <= m`` (exact integer arithmetic)."""
    m, k = integer(m, "m", low=0), integer(k, "k", low=1)
    if m < 2:
        return m
    q = round(m ** (1.0 / k))
    while q**k > m:
        q -= 1
    while (q + 1) ** k <= m:
        q += 1
    return q


def dirichlet_q(m: int, k: int) -> int:
    """``Q_K(M)``: the box count per axis of Theorem D, the largest integer with ``Q^K <= M``."""
    return integer_root(m, k)


@dataclass(frozen=True)
class DirichletBound:
    """Theorem D for ``K`` planes, in symbolic form.

    ``raw`` is ``A (1 - cos(2 pi / Q))`` and ``stable`` ``2 A sin(pi / Q)^2`` with ``Q`` a symbol;
    :meth:`value` substitutes ``Q = max(2, Q_K(M))`` computed in integers.
    """

    planes: int
    raw: sp.Expr
    stable: sp.Expr
    asymptotic: sp.Expr

    def q_of(self, m: int) -> int:
        """``max(2, Q_K(M))``: ``Q`` used at ``M`` offsets (``Q = 1`` gives only the trivial bound)."""
        return max(2, dirichlet_q(m, self.planes))

    def value(self, m: int, total_amplitude: float = 1.0) -> float:
        """The bound ``2 A sin(pi / Q)^2`` on ``min_{1<=u<=M} g(u)`` in float64 (``M = m``)."""
        return 2.0 * total_amplitude * math.sin(math.pi / self.q_of(m)) ** 2

    def margin_bound(self, n: int, total_amplitude: float = 1.0) -> float:
        """Bound on ``margin_inf(n)`` (``M = n - 1``)."""
        return self.value(n - 1, total_amplitude)

    def gap_sup_bound(self, n: int, total_amplitude: float = 1.0) -> float:
        """Bound on ``gap_sup(n)`` (``M = ceil((n - 1) / 2)``)."""
        return self.value(-(-(n - 1) // 2), total_amplitude)

    def latex(self) -> str:
        return (
            rf"\min_{{1\le u\le M}} g(u) \le {sp.latex(self.stable)},\quad Q=\lfloor M^{{1/{self.planes}}}"
            r"\rfloor \ge 2"
        )


def dirichlet_bound(planes: int) -> DirichletBound:
    """Theorem D for ``planes`` planes, with its asymptotic form ``2 pi^2 A M^(-2/K)``."""
    planes = integer(planes, "planes", low=1)
    raw = A_SYM * (1 - sp.cos(2 * sp.pi / Q_SYM))
    stable = 2 * A_SYM * sp.sin(sp.pi / Q_SYM) ** 2
    asymptotic = 2 * sp.pi**2 * A_SYM * M_SYM ** sp.Rational(-2, planes)
    return DirichletBound(planes, raw, stable, asymptotic)


def mixed_radix_base(length: int, planes: int) -> int:
    """The smallest integer ``b >= 2`` with ``b^K >= length`` (so offsets ``1 .. length-1 < b^K``)."""
    length = integer(length, "length", low=2)
    b = max(2, integer_root(length, planes))
    while b**planes < length:
        b += 1
    return b


def mixed_radix_margin_expr() -> sp.Expr:
    """``2 a sin(pi / b)^2``: the mixed-radix margin of Theorem R with equal amplitudes ``a = A / K``,
    normalised by ``A`` (so ``(2 / K) sin(pi / b)^2``)."""
    return 2 * sp.sin(sp.pi / B_SYM) ** 2 / K_SYM


def rate_bounds_expr() -> tuple[sp.Expr, sp.Expr]:
    """``(lower, upper)`` explicit rate bounds on ``mu*_K(n)`` of the Corollary:
    ``8 / (K (n^(1/K) + 1)^2)`` and ``2 pi^2 / ((n - 1)^(1/K) - 1)^2``."""
    lower = 8 / (K_SYM * (N ** (1 / K_SYM) + 1) ** 2)
    upper = 2 * sp.pi**2 / ((N - 1) ** (1 / K_SYM) - 1) ** 2
    return lower, upper


def residue_lemma_holds(base: int, planes: int) -> bool:
    """Exhaustive integer check of Theorem R's step: every ``1 <= m < b^K`` has a level ``k <= K`` with
    ``b^(k-1) <= m mod b^k <= b^k - b^(k-1)`` (so ``m theta_k / 2`` is ``pi r / b`` with
    ``1 <= r <= b - 1``, modulo ``pi``)."""
    base, planes = integer(base, "base", low=2), integer(planes, "planes", low=1)
    top = base**planes
    if top > 10**7:
        raise InputError(f"base^planes={top} is too large to check exhaustively (limit 10^7)")
    for m in range(1, top):
        if not any(base ** (k - 1) <= m % base**k <= base**k - base ** (k - 1) for k in range(1, planes + 1)):
            return False
    return True


def _one_minus_cos_increasing() -> bool:
    return bool(sp.is_increasing(1 - sp.cos(_X), sp.Interval(0, sp.pi)))


def _stable_equals_raw() -> bool:
    return vanishes_identically((1 - sp.cos(2 * sp.pi / Q_SYM)) - 2 * sp.sin(sp.pi / Q_SYM) ** 2)


def _sin_increasing_quarter() -> bool:
    return bool(sp.is_increasing(sp.sin(_X), sp.Interval(0, sp.pi / 2)))


def _sin_symmetric() -> bool:
    r = sp.Symbol("r", positive=True)
    return vanishes_identically(sp.sin(sp.pi * (B_SYM - r) / B_SYM) - sp.sin(sp.pi * r / B_SYM))


def _jordan() -> bool:
    # sin is concave on [0, pi/2] (its derivative cos decreases) and meets 2x/pi at both ends
    concave = bool(sp.is_decreasing(sp.diff(sp.sin(_X), _X), sp.Interval(0, sp.pi / 2)))
    ends = sp.sin(0) == 0 and sp.sin(sp.pi / 2) == 2 * (sp.pi / 2) / sp.pi
    return concave and bool(ends)


def _sin_below_identity() -> bool:
    return bool(sp.is_increasing(_X - sp.sin(_X), sp.Interval(0, sp.oo)))


def _asymptotic_constant() -> bool:
    return sp.limit(2 * sp.sin(sp.pi / _X) ** 2 * _X**2, _X, sp.oo) == 2 * sp.pi**2


def _mixed_radix_constant() -> bool:
    b = sp.Symbol("b", positive=True)
    return sp.limit(2 * sp.sin(sp.pi / b) ** 2 * b**2, b, sp.oo) == 2 * sp.pi**2


def dirichlet_proof(planes: int = 2) -> list[ProofStep]:
    """The steps of Theorem D, the analytic ones checked by sympy (run them with ``step.run()``)."""
    return [
        ProofStep(
            "pigeonhole",
            f"M + 1 points in Q^K <= M half-open boxes of side 2 pi / Q (K = {planes}): two share a box",
            "argument",
        ),
        ProofStep(
            "box-width",
            "two points of one half-open box differ by less than 2 pi / Q in every coordinate",
            "argument",
        ),
        ProofStep(
            "1-cos-increasing", "1 - cos x is increasing on [0, pi]", "sympy", _one_minus_cos_increasing
        ),
        ProofStep("stable-form", "1 - cos(2 pi / Q) = 2 sin(pi / Q)^2", "sympy", _stable_equals_raw),
        ProofStep(
            "sin-below-x", "sin x <= x for x >= 0 (so D <= 2 pi^2 A / Q^2)", "sympy", _sin_below_identity
        ),
        ProofStep("asymptotic", "Q^2 * 2 sin(pi/Q)^2 -> 2 pi^2 as Q -> oo", "sympy", _asymptotic_constant),
    ]


def mixed_radix_proof(base: int = 3, planes: int = 3) -> list[ProofStep]:
    """The steps of Theorem R and the Corollary; the residue lemma is checked exhaustively for
    ``(base, planes)``."""
    return [
        ProofStep(
            "residue-lemma",
            f"every 1 <= m < b^K has a level k with m mod b^k = b^(k-1) r, 1 <= r <= b - 1 "
            f"(exhaustive for b = {base}, K = {planes}; proved in general in the module docstring)",
            "exhaustive",
            lambda: residue_lemma_holds(base, planes),
        ),
        ProofStep("sin-symmetry", "sin(pi (b - r) / b) = sin(pi r / b)", "sympy", _sin_symmetric),
        ProofStep("sin-increasing", "sin is increasing on [0, pi/2]", "sympy", _sin_increasing_quarter),
        ProofStep("jordan", "sin x >= 2 x / pi on [0, pi/2] (concave, equal at both ends)", "sympy", _jordan),
        ProofStep("asymptotic", "b^2 * 2 sin(pi/b)^2 -> 2 pi^2 as b -> oo", "sympy", _mixed_radix_constant),
    ]


def run_proof(steps: list[ProofStep]) -> dict[str, bool | None]:
    """Run every step; ``{name: passed}`` (``None`` for steps stated in words)."""
    return {s.name: s.run() for s in steps}


def proof_verdict(steps: list[ProofStep]) -> tuple[bool, str]:
    """``(every step checked and passed, "k/m checked")`` for steps already run. A step argued in
    words counts as unchecked, so a proof passes only when every step has a check that passed."""
    checked = sum(s.passed is True for s in steps)
    return checked == len(steps), f"{checked}/{len(steps)} checked"

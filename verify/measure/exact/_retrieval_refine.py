"""High-precision re-enclosure of one-plane T_Retrieval's ``margin_inf(n)`` and of [A]'s bound
``1 - cos(omega - n theta)``, for the rows a float64 sweep cannot separate.

With the notation of :mod:`ropeproof.verify.measure.exact._retrieval_sweep` (``T(d) = cos(d theta)``,
``H(d) = max_{c = 1 .. A-1} cos(c omega - d theta)``, ``S = max_c cos(c omega)``, ``omega = 2 pi / A``):

    margin_inf(n) = min_{1 <= d_t <= n-1} [ T(d_t) - max(S, max_{1 <= d <= n-1, d != d_t} H(d)) ].

:class:`RetrievalRefiner` encloses ``T(d)`` and ``H(d)`` in ``flint.arb`` balls, distance by distance, at
a precision set locally (:class:`~ropeproof.verify.measure.exact._certified.arb_precision`,
:func:`refine_bits`), and keeps the ends as exact fractions. ``H(d)`` is the largest of the codes next to
``x = d theta / omega`` (``cos(c omega - d theta) = cos(omega (c - x))`` decreases with the circular
distance of ``c`` from ``x``, so the best code other than 0 is one of ``floor(x) - 1 .. floor(x) + 2``),
or of every code when ``A <= 8``. For each ``d_t`` the margin's lower end uses ``T``'s lower and ``H``'s
upper ends (and its upper end the other two), and the minimum over ``d_t`` comes from the running top
two of ``H`` and bottom two of ``T`` (the same recipe as the float64 sweep), so each row costs ``O(1)``
once the distances below it are folded. Rows past :data:`MAX_FOLDED` distances are not folded (the
caller keeps its float64 lower end and re-encloses only the attaining input: :meth:`witness_upper`).
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from ropeproof.machinery._validate import integer, real
from ropeproof.verify.measure.exact._certified import ExactEnd, arb_exact_ends, arb_precision

REFINE_BITS = 200
"""Working bits of a refinement (plus the bits ``|theta|`` lies below 1)."""
MAX_FOLDED = 1 << 14
"""Rows up to ``n = MAX_FOLDED + 1`` are re-enclosed in full; later rows only through their witness."""
ALL_CODES = 8
"""Alphabets up to this size take every code for ``H(d)``, larger ones the four next to ``x``."""


def refine_bits(theta: float) -> int:
    """:data:`REFINE_BITS` plus ``|binary exponent of theta|`` plus 26: the bits ``theta`` lies below 1
    (the margin's distance to the bound can be of order ``theta``), or above it, plus a distance's 26
    bits (so ``d theta`` and its reduction keep :data:`REFINE_BITS` bits after the point)."""
    theta = real(theta, "theta")
    return REFINE_BITS + 26 + (abs(math.frexp(theta)[1]) if theta != 0 else 0)


class _Top2:
    """The two best ``(value, index, payload)`` seen so far (first occurrence wins ties); values are exact
    ``flint.arb`` numbers (radius 0), whose comparisons are exact."""

    def __init__(self, largest: bool) -> None:
        self.largest = largest
        self.items: list[tuple[arb, int, arb | None]] = []

    def feed(self, value: arb, index: int, payload: arb | None = None) -> None:
        def better(a: arb, b: arb) -> bool:
            return bool(a > b) if self.largest else bool(a < b)

        if not self.items or better(value, self.items[0][0]):
            self.items.insert(0, (value, index, payload))
        elif len(self.items) < 2 or better(value, self.items[1][0]):
            self.items[1:] = [(value, index, payload)]
        del self.items[2:]


def _larger(a: arb, b: arb) -> arb:
    return a if a > b else b


class RetrievalRefiner:
    """Exact enclosures of ``margin_inf(n)`` (:meth:`margin`) and of the bound (:meth:`bound`) of one-plane
    T_Retrieval with ``|ALPH| = alphabet`` at ``theta`` (module docstring). Rows may be asked in any
    order; distances are folded once, in order, up to the largest row asked."""

    def __init__(self, alphabet_size: int, theta: float) -> None:
        self.alphabet_size = integer(alphabet_size, "alphabet_size", low=2)
        self.theta = real(theta, "theta")
        self.prec = refine_bits(self.theta)
        with arb_precision(self.prec):
            self._th = arb(self.theta)  # exact
            self._omega = 2 * arb.pi() / self.alphabet_size
            s = [(c * self._omega).cos() for c in (1, self.alphabet_size - 1)]  # S: the codes next to 0
            self._s_lo = _larger(s[0].lower(), s[1].lower())
            self._s_hi = _larger(s[0].upper(), s[1].upper())
        self._h_hi = _Top2(largest=True)  # H's upper ends, payload T's lower end there
        self._h_lo = _Top2(largest=True)  # H's lower ends, payload T's upper end there
        self._t_lo = _Top2(largest=False)  # T's lower ends
        self._t_hi = _Top2(largest=False)  # T's upper ends
        self._rows: list[tuple[arb, arb]] = []  # exact margin ends of n = 2, 3, ...

    def _codes(self, x: arb) -> list[int]:
        a = self.alphabet_size
        if a <= ALL_CODES:
            return list(range(1, a))
        man, exp = (int(v) for v in x.mid().man_exp())
        k = man << exp if exp >= 0 else man >> -exp  # floor(x), exactly, however large
        return sorted({c % a for c in range(k - 1, k + 3)} - {0})

    def _fold(self, d: int) -> None:
        """Enclose ``T(d)`` and ``H(d)`` and append the margin's ends at ``n = d + 1``."""
        with arb_precision(self.prec):
            angle = d * self._th  # exact at this precision (d < 2^26, a 53-bit theta)
            t = angle.cos()
            t_lo, t_hi = t.lower(), t.upper()
            h_lo = h_hi = None
            for c in self._codes(angle / self._omega):
                v = (c * self._omega - angle).cos()
                lo, hi = v.lower(), v.upper()
                h_lo = lo if h_lo is None else _larger(h_lo, lo)
                h_hi = hi if h_hi is None else _larger(h_hi, hi)
            assert h_lo is not None and h_hi is not None
            self._h_hi.feed(h_hi, d, t_lo)
            self._h_lo.feed(h_lo, d, t_hi)
            self._t_lo.feed(t_lo, d)
            self._t_hi.feed(t_hi, d)
            lo = self._end(self._h_hi, self._t_lo, self._s_hi, upper=False)
            self._rows.append((lo, self._end(self._h_lo, self._t_hi, self._s_lo, upper=True)))

    @staticmethod
    def _end(h: _Top2, t: _Top2, s: arb, upper: bool) -> arb:
        """``min_{d_t} [T(d_t) - max(s, max_{d != d_t} H(d))]`` over the folded distances, from ``H``'s top
        two (``i1`` its first) and ``T``'s bottom two: ``d_t != i1`` meets ``H(i1)``, ``d_t = i1`` the
        second. Each difference is rounded outward (``upper``: up, else down), exactly representable."""
        h1, i1, t_at_i1 = h.items[0]
        assert t_at_i1 is not None
        second = _larger(s, h.items[1][0]) if len(h.items) > 1 else s
        terms = [t_at_i1 - second]
        away = [v for v, j, _ in t.items if j != i1][:1]
        if away:
            terms.append(away[0] - _larger(s, h1))
        ends = [x.upper() if upper else x.lower() for x in terms]
        return ends[0] if len(ends) == 1 or ends[0] < ends[1] else ends[1]

    def margin(self, n: int) -> tuple[ExactEnd, ExactEnd] | None:
        """Exact ``(lo, hi)`` enclosing ``margin_inf(n)``, or ``None`` past ``n = MAX_FOLDED + 1``."""
        n = integer(n, "n", low=2)
        if n - 1 > MAX_FOLDED:
            return None
        while len(self._rows) < n - 1:
            self._fold(len(self._rows) + 1)
        lo, hi = self._rows[n - 2]
        return arb_exact_ends(lo)[0], arb_exact_ends(hi)[1]

    def bound(self, n: int) -> tuple[ExactEnd, ExactEnd]:
        """Exact ``(lo, hi)`` enclosing ``1 - cos(omega - n theta) = 2 sin((omega - n theta) / 2)^2``."""
        n = integer(n, "n", low=2)
        with arb_precision(self.prec):
            s = ((self._omega - n * self._th) / 2).sin()
            lo, hi = arb_exact_ends(2 * (s * s))
        return max(lo, Fraction(0)), hi

    def witness_upper(self, d_t: int, d_c: int, c_c: int) -> ExactEnd:
        """Upper end of the margin of one input: target at distance ``d_t``, strongest competitor the
        query (``d_c = 0``) or code ``c_c`` at distance ``d_c``; an upper end of ``margin_inf`` at any
        length the input fits."""
        with arb_precision(self.prec):
            comp = self._s_lo
            if d_c > 0:
                comp = _larger(comp, (c_c * self._omega - d_c * self._th).cos().lower())
            return arb_exact_ends((d_t * self._th).cos() - comp)[1]

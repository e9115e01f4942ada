"""T_Retrieval's letter codes: their angles ``c omega``, and the O(1) codes that attain each extreme.

For ``|ALPH| = A`` and ``omega = 2 pi / A``, a non-matching pair with left letter ``Y + c``
(``c = 1 .. A-1``) at distance ``d`` scores ``f_d(c) = cos(c omega - d theta)``
(docs/theory.md section 4). Write ``x = d theta / omega`` (a real number, taken mod ``A``) and
``delta(c)`` for the distance from ``c`` to ``x`` on the circle ``R / A Z`` (in code units, so
``0 <= delta <= A/2``). Then ``c omega - d theta = omega (c - x)``, and cosine is even and
``2 pi``-periodic, so

    f_d(c) = cos(omega * delta(c)),   strictly decreasing in delta on [0, A/2].

**Proposition (candidates).** Let ``k = round(x_hat)`` for any ``x_hat`` with ``|x_hat - x| < 1/2``.
The largest ``H(d) = max_{c != 0} f_d(c)`` is attained only at codes ``c = k + j mod A`` with
``|j| <= 2``, and so is the smallest ``L(d) = min_{c != 0} f_d(c)`` with ``k`` rounded from
``x_hat + A/2``.

*Proof.* ``H``: ``f_d`` decreases in ``delta``, so the maximisers are the non-zero codes nearest to
``x``. An integer ``c0`` nearest to ``x`` has ``delta(c0) <= 1/2``. If ``c0`` is not the excluded code
``0`` (mod ``A``), every maximiser has ``delta <= 1/2``. If it is, its neighbour ``c0 +- 1`` on the side
of ``x`` lies at ``1 - delta(c0) <= 1`` and is not ``0`` (for ``A >= 2``), so every maximiser has
``delta <= 1``. Either way a maximiser has a representative with ``|c - x| <= 1``, and then
``|c - k| <= |c - x| + |x - x_hat| + |x_hat - k| < 2``, so ``|c - k| <= 1``. ``L``: the same around the
antipode ``x + A/2``, since ``delta(c) = A/2 - delta'(c)`` with ``delta'`` the circular distance from
``c`` to ``x + A/2``, and ``f_d`` increases in ``delta'``. For ``A <= 5`` the window holds every code.
QED

The window is ``+-2`` rather than ``+-1`` so that the float64 argmax equals the one of a scan over all
codes: every code outside it has ``delta >= 5/2 - |x_hat - x|`` while a maximiser has ``delta <= 1``,
so its exact value is lower by at least ``cos(omega) - cos(2.4 omega) = 2 sin(1.7 omega) sin(0.7 omega)``
(``~2.4 omega^2``), and its computed value is lower whenever that exceeds twice the per-value error
bound (``~4e-15``): for every ``A`` up to ``10^7``. Within the window the values are computed by the
same expression as the full scan, and ties go to the smallest code, as ``argmax`` did. So for those
alphabets the extremes and their codes are bit for bit those of the full scan (tested).

Angles: for ``A - 1 <= TABLE_CODES`` every ``c omega`` is taken from mpmath once, as before
(:func:`code_angles`: ``hi`` the float64 nearest to a 200-bit value of ``c omega`` reduced into
``(-pi, pi]``, ``lo`` the float64 nearest to the rest). Larger alphabets use two small tables:
``s = q B + t`` (``s`` the signed code, ``B = 2^ceil(bits(A)/2)``, ``0 <= t < B``) and ``s omega = (q B)
omega + t omega``, each term a double-double from mpmath, summed with exact two-sums; the error of the
sum is bounded in :attr:`CodeAngles.error`. Memory and setup are ``O(sqrt(A))``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import mpmath
import numpy as np

from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._validate import integer
from ropeproof.machinery._values import LIMITS
from ropeproof.verify.measure.exact._angles import UNIT_ROUNDOFF
from ropeproof.verify.measure.exact._index_sweep import SIN_ULPS

TABLE_CODES = 1 << 14
"""Alphabets with at most this many non-zero codes keep one mpmath table of every ``c omega``."""
MAX_ALPHABET = int(LIMITS["alphabet_size"].high)  # type: ignore[arg-type]
"""Largest ``|ALPH|``: the code position ``x = d theta / omega`` must keep an absolute error far below
``1/2`` (it is about ``A * 1e-16``), and the two angle tables take ``2^17`` mpmath values (~2 s)."""
WINDOW = 2
"""Codes ``k - WINDOW .. k + WINDOW`` around the rounded position are the candidates."""


def check_alphabet(alphabet_size: object) -> int:
    """``alphabet`` as an int in ``2 .. MAX_ALPHABET``, or :class:`InputError`."""
    return integer(alphabet_size, "alphabet_size", low=2, high=MAX_ALPHABET, note="at most 2^32")


def _double_double(numerators: list[int], alphabet_size: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``2 pi s / A`` for each ``s`` as ``(hi, lo)`` float64 pairs and a bound on ``|exact - hi - lo|``."""
    with mpmath.workprec(200):
        exact = [2 * mpmath.pi * s / alphabet_size for s in numerators]
        hi = [float(x) for x in exact]
        lo = [float(x - h) for x, h in zip(exact, hi, strict=True)]
        err = max([float(abs(x - h - low)) for x, h, low in zip(exact, hi, lo, strict=True)] + [0.0])
    return np.array(hi), np.array(lo), 2 * err + 2.0**-190


@lru_cache(maxsize=64)
def code_angles(alphabet_size: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``(hi, lo, err)``: ``c omega = hi[c-1] + lo[c-1]`` (mod ``2 pi``, taken in ``(-pi, pi]``) for
    ``c = 1 .. A-1`` up to ``err`` (every code: memory and time ``O(A)``)."""
    check_allocation(f"the code angles of |ALPH| = {alphabet_size}", 200 * alphabet_size)
    signed = [c if 2 * c <= alphabet_size else c - alphabet_size for c in range(1, alphabet_size)]
    return _double_double(signed, alphabet_size)


class CodeAngles:
    """``c omega`` (mod ``2 pi``, in ``(-pi, pi]``) as ``hi + lo`` for any array of codes.

    ``error`` bounds ``|c omega - hi - lo|`` for every code and ``lo_max`` bounds ``|lo|``.
    """

    def __init__(self, alphabet_size: int) -> None:
        self.alphabet_size = a = check_alphabet(alphabet_size)
        if a - 1 <= TABLE_CODES:
            self.table: tuple[np.ndarray, np.ndarray] | None = code_angles(a)[:2]
            self.error = code_angles(a)[2]
            self.lo_max = float(np.abs(self.table[1]).max(initial=0.0))
            return
        self.table = None
        self.block = 1 << -(-a.bit_length() // 2)
        self.q_min = (-(a // 2)) // self.block
        q_max = (a // 2) // self.block
        check_allocation(
            f"the code angle tables of |ALPH| = {a}", 250 * (q_max - self.q_min + 1 + self.block)
        )
        qs = [q * self.block for q in range(self.q_min, q_max + 1)]
        self.q_hi, self.q_lo, e_q = _double_double(qs, a)
        self.t_hi, self.t_lo, e_t = _double_double(list(range(self.block)), a)
        u = UNIT_ROUNDOFF
        lo_tables = float(np.abs(self.q_lo).max() + np.abs(self.t_lo).max())
        # exact = Qh + Ql + Th + Tl + (<= e_q + e_t); Qh + Th = s + e exactly (|e| <= u |s| <= 4u);
        # low = fl(e + fl(Ql + Tl)) errs by <= u (|Ql| + |Tl|) + u |low|; hi + lo = s + low exactly
        self.error = 2 * (e_q + e_t + u * (2 * lo_tables + 8 * u)) + 2.0**-190
        self.lo_max = 2.0**-52  # |lo| <= ulp(hi) / 2 with |hi| < 4

    def signed(self, codes: np.ndarray) -> np.ndarray:
        """The representative of each code in ``(-A/2, A/2]``.

        Shapes: codes [...] (any shape); return [...] (the shape of codes)
        """
        c = np.asarray(codes, dtype=np.int64)
        return np.where(2 * c <= self.alphabet_size, c, c - self.alphabet_size)

    def angles(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(hi, lo)`` of ``codes`` (integers ``1 .. A-1``).

        Shapes: codes [...] (any shape); return.0 [...]; return.1 [...] (the shape of codes)
        """
        c = np.asarray(codes, dtype=np.int64)
        if self.table is not None:
            idx = np.clip(c - 1, 0, self.alphabet_size - 2)
            return self.table[0][idx], self.table[1][idx]
        s = self.signed(c)
        t = s % self.block
        q = (s - t) // self.block - self.q_min
        a, b = self.q_hi[q], self.t_hi[t]
        total = a + b
        bb = total - a
        e = (a - (total - bb)) + (b - bb)  # two-sum: a + b = total + e exactly
        low = e + (self.q_lo[q] + self.t_lo[t])
        hi = total + low
        z = hi - total
        lo = (total - (hi - z)) + (low - z)  # two-sum: total + low = hi + lo exactly
        return hi, lo


@lru_cache(maxsize=64)
def code_table(alphabet_size: int) -> CodeAngles:
    """The (cached) :class:`CodeAngles` of ``alphabet``."""
    return CodeAngles(alphabet_size)


def code_values(angles: CodeAngles, r: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``cos((hi_c - r) + lo_c)``: the logit of code ``c`` at reduced angle ``r`` (the expression of a
    scan over every code, so the same float64 bits).

    Shapes: r [D]; codes [k, D]; return [k, D]
    """
    hi, lo = angles.angles(codes)
    return np.cos((hi - r[None, :]) + lo)


def window(alphabet_size: int, position: np.ndarray) -> np.ndarray:
    """Codes ``round(position) + j mod A`` for ``|j| <= WINDOW``.

    Shapes: position [D]; return [2 WINDOW + 1, D]
    """
    k = np.rint(np.asarray(position, dtype=np.float64)).astype(np.int64)
    return (k[None, :] + np.arange(-WINDOW, WINDOW + 1)[:, None]) % alphabet_size


def code_position(alphabet_size: int, r: np.ndarray) -> np.ndarray:
    """``x = r / omega``: where the angle ``r`` falls among the codes (absolute error ~``A * 1e-16``).

    Shapes: r [D]; return [D]
    """
    return np.asarray(r, dtype=np.float64) * (alphabet_size / (2 * math.pi))


def pick(values: np.ndarray, codes: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the largest (or smallest) of ``values`` over non-zero codes and the smallest code
    attaining it (``argmax``'s first occurrence over codes in increasing order).

    Shapes: values [k, D]; codes [k, D]; return [D] (value, code)
    """
    fill = -math.inf if largest else math.inf
    v = np.where(codes == 0, fill, values)
    best = v.max(0) if largest else v.min(0)
    code = np.where(v == best[None, :], codes, np.iinfo(np.int64).max).min(0)
    return best, code


def clear_margin(angles: CodeAngles, r: np.ndarray) -> float:
    """``tau`` of :func:`extremes`' shortcut at reduced angles ``r``: a row whose computed code position
    (``x``, or ``x + A/2`` for ``L``) lies within ``1/2 - tau`` of an integer ``k`` that is not ``0 mod A``
    has its extreme at code ``k`` alone, bit for bit. ``inf`` (no row is clear) where the proof below
    needs ``tau >= 1/4`` (at ``|r| <= pi``: from ``|ALPH|`` between ``2 10^7`` and ``3 10^7``, tested) or
    ``r`` is not finite.

    *Proof.* Write ``g(c) = cos(c omega - r)`` (``r`` the float64 angle, exact) and ``v_c`` for the
    computed ``cos((hi_c - r) + lo_c)``. As in :func:`ropeproof.verify.measure.exact._retrieval_sweep.
    retrieval_distance_logits`, ``|v_c - g(c)| <= E = w_err + u (2 (pi + max |r|) + max |lo|) + 2 SIN_ULPS
    u`` (the code angle's error, the two rounded sums, cosine's ulps). The position ``x_hat =
    fl(r fl(A / fl(2 pi)))`` is ``x = r / omega`` times ``1 + eta``, ``|eta| <= 3.01 u``, and ``x_hat + A/2``
    adds one rounding, so both are within ``X = 8 u (max |x_hat| + A)`` of their exact positions. With
    ``|pos - k| <= 1/2 - tau`` the exact position is within ``1/2 - s`` of ``k``, ``s = tau - X``, and every
    other code is at circular distance ``>= 1/2 + s`` from it. ``g(c) = cos(omega delta(c))`` decreases
    in ``delta in [0, A/2]`` (module docstring), so for ``H`` and every code ``c != k``, ``g(k) - g(c)
    >= cos(omega (1/2 - s)) - cos(omega (1/2 + s)) = 2 sin(omega/2) sin(omega s) >= 16 s / A^2`` (``sin z
    >= 2 z / pi`` on ``[0, pi/2]``; ``omega/2 = pi/A`` and ``omega s < omega/2``). ``L`` is the same at
    the antipode (``g = -cos(omega delta')``, ``delta'`` the distance to ``x + A/2``). The computed ``tau``
    is at least ``2 (X + E A^2 / 8)`` (its factor ``1 + 16 u`` covers its own roundings), so ``s >= X + E
    A^2 / 4 > E A^2 / 8`` and ``16 s / A^2 > 2 E``: ``v_k``
    is strictly the largest (``H``; smallest for ``L``) computed value over every code, so the window's
    :func:`pick` returns ``v_k`` and ``k`` (no tie), as does a scan over every code. The difference
    ``pos - rint(pos)`` is exact (Sterbenz), so the test itself is exact. QED

    Shapes: r [D]
    """
    a = angles.alphabet_size
    u = UNIT_ROUNDOFF
    r = np.asarray(r, dtype=np.float64)
    if r.size == 0:
        return math.inf
    r_max = float(np.abs(r).max())
    if not math.isfinite(r_max):
        return math.inf
    e = (angles.error + u * (2 * (math.pi + r_max) + angles.lo_max) + 2 * SIN_ULPS * u + 2.0**-1070) * (
        1 + 16 * u
    )
    x_max = float(abs(code_position(a, np.array([r_max]))[0]))
    tau = 2 * (8 * u * (x_max + a) + e * a * a / 8) * (1 + 16 * u)
    return tau if tau < 0.25 else math.inf


def _extreme(
    angles: CodeAngles, r: np.ndarray, position: np.ndarray, largest: bool, tau: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pick` over :func:`window` ``(position)``, evaluated at the nearest code alone on the rows
    that :func:`clear_margin`'s ``tau`` proves (the same value and code), the window elsewhere."""
    a = angles.alphabet_size
    k = np.rint(position)
    code = k.astype(np.int64) % a
    clear = (np.abs(position - k) <= 0.5 - tau) & (code != 0)
    hi, lo = angles.angles(code)
    hi -= r  # code_values' expression, (hi - r) + lo, on one code per row
    hi += lo
    value = np.cos(hi, out=hi)
    rest = np.flatnonzero(~clear)
    if rest.size:
        near = window(a, position[rest])
        value[rest], code[rest] = pick(code_values(angles, r[rest], near), near, largest)
    return value, code


def window_extremes(
    angles: CodeAngles, r: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`extremes` without its shortcut: every row picks over its whole window (``tests`` compare
    the two).

    Shapes: r [D]; return [D] (each)
    """
    a = angles.alphabet_size
    x = code_position(a, r)
    near = window(a, x)
    far = window(a, x + a / 2)
    h, h_code = pick(code_values(angles, r, near), near, True)
    low, low_code = pick(code_values(angles, r, far), far, False)
    return h, h_code, low, low_code


def extremes(angles: CodeAngles, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(H, H's code, L, L's code)`` at reduced angles ``r`` (``d theta`` mod ``2 pi``) from the
    ``2 (2 WINDOW + 1)`` candidates of the proposition in the module docstring: on the rows
    :func:`clear_margin` proves, the nearest candidate alone (its value strictly beats every other
    code's), elsewhere the whole window; the result is :func:`window_extremes`', bit for bit.

    Shapes: r [D]; return [D] (each)
    """
    a = angles.alphabet_size
    if a - 1 <= 2 * (2 * WINDOW + 1):  # fewer codes than candidates: score them all (the same result)
        assert angles.table is not None
        hi, lo = angles.table
        v = np.cos((hi[:, None] - np.asarray(r, dtype=np.float64)[None, :]) + lo[:, None])  # code_values' sum
        return v.max(0), v.argmax(0) + 1, v.min(0), v.argmin(0) + 1  # first occurrence: smallest code
    r = np.asarray(r, dtype=np.float64)
    tau = clear_margin(angles, r)
    if not math.isfinite(tau):
        return window_extremes(angles, r)
    x = code_position(a, r)
    h, h_code = _extreme(angles, r, x, True, tau)
    low, low_code = _extreme(angles, r, x + a / 2, False, tau)
    return h, h_code, low, low_code

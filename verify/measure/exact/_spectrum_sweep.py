"""A spectrum's sum ``B(m) = sum_k a_k cos(m theta_k)`` at every offset ``m = 0 .. max_m``, with error
bounds, certified where a row is too close to call, stopping at the first violation when asked.

**Float pass (cos addition).** Offsets are taken in chunks ``m = m0 + j``, ``0 <= j < C``. A table of
``cos(j theta_k)``, ``sin(j theta_k)`` (``C x K``) is made once; per chunk the ``K`` values
``a_k cos(m0 theta_k)``, ``a_k sin(m0 theta_k)`` are formed, and

    B(m0 + j) = sum_k cos(j theta_k) [a_k cos(m0 theta_k)] - sin(j theta_k) [a_k sin(m0 theta_k)]

is two matrix-vector products (the table itself is made the same way from two tables of about ``sqrt(C)``
offsets each, :func:`_table`). Every angle is reduced by
:func:`~ropeproof.verify.kernel._angles.offset_angles_with_error`, which bounds its error; with ``e_t``
the largest error of a table entry and ``e_0`` that of the chunk's start values (each angle error
plus ``2 SIN_ULPS u`` for the cosine/sine), ``A = sum_k |a_k|``, ``u = 2^-53`` and ``gamma_n = n u / (1
- n u)``, every row of the chunk has

    |B_float - B| <= A [2 (e_t + e_0 + e_t e_0) + 2 u (1 + e_0)] + gamma_(2K+3) 2 A (1 + e_t)(1 + e_0)^2
                     + A m_max delta,

where ``delta`` bounds ``|theta_k - theta_k exact|`` for sympy-exact frequencies (half an ulp of each
float; 0 for float spectra) and ``m_max`` is the chunk's last offset; the bound is enlarged by
``16 u`` relative for its own rounding. The bound holds for any summation order of the products
(BLAS's), fused multiply-adds included.

**Rows too close to call.** A row ``B(m) R t`` (``R`` one of ``>=``, ``>``, ``<=``, ``<``; ``t`` a float
threshold, its exact binary value) is decided by the float pass when ``|B_float - t|`` exceeds the
bound; otherwise ``B(m)`` is enclosed in a ``flint.arb`` ball (frequencies as the exact values of their
floats, or as balls of their sympy expressions, :func:`~ropeproof.verify.measure.exact._arb_expr.arb_of`)
at ``prec`` bits plus the bits of ``m theta_max``, then at ``refine_prec`` bits if still undecided. A
row that neither decides is ``undecided``: never counted as holding.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flint import arb

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._spectrum import Spectrum
from ropeproof.verify.kernel._angles import UNIT_ROUNDOFF, offset_angles_with_error
from ropeproof.verify.measure.exact._arb_expr import arb_of
from ropeproof.verify.measure.exact._certified import arb_ends, arb_precision
from ropeproof.verify.measure.exact._index_sweep import SIN_ULPS

RELATIONS: tuple[str, ...] = (">=", ">", "<=", "<")
"""The relations a row ``B(m) R threshold`` may be checked for."""
TABLE_ENTRIES = 1 << 22
"""At most this many entries (32 MiB of float64) in each of the cos and sin tables: a spectrum with more
frequencies takes shorter chunks."""
MAX_OFFSET = 2**40
"""The largest ``max_m`` a sweep accepts (offsets stay exact in float64 and the angle reductions)."""


@dataclass(frozen=True)
class SpectrumSweep:
    """The result of :func:`sweep_spectrum`: every offset ``0 .. checked_to`` decided.

    ``first_violation`` is the least offset whose row is violated (``None`` if none up to
    ``checked_to``), ``witness`` the float64 enclosure ``(lo, hi)`` of ``B`` there; ``undecided`` the
    offsets no enclosure decided (at most ``max_listed`` listed, ``n_undecided`` counts them all);
    ``enclosed`` how many rows took a ball; ``exact_first`` is true when no undecided row precedes the
    first violation (so it is *the* first). ``values``/``errors`` (when kept) are the float ``B`` and
    its bound for offsets ``0 .. checked_to``; ``minimum`` is ``(offset, B_float)`` of the least float
    value seen. ``start``: the first checked offset (rows below it are not checked).

    Shapes: values [checked_to + 1]; errors [checked_to + 1]
    """

    spectrum: Spectrum
    max_m: int
    relation: str
    threshold: float
    checked_to: int
    first_violation: int | None
    witness: tuple[float, float] | None
    undecided: tuple[int, ...]
    n_undecided: int
    enclosed: int
    minimum: tuple[int, float]
    certified: bool
    values: np.ndarray | None = field(default=None, repr=False, compare=False)
    errors: np.ndarray | None = field(default=None, repr=False, compare=False)
    start: int = 0

    @property
    def exact_first(self) -> bool:
        """No undecided row before :attr:`first_violation` (all rows when there is none)."""
        if self.first_violation is None:
            return self.n_undecided == 0
        return not self.undecided or self.undecided[0] > self.first_violation

    @property
    def holds(self) -> bool:
        """Every row ``start .. max_m`` holds (certified when :attr:`certified`)."""
        return self.first_violation is None and self.n_undecided == 0 and self.checked_to == self.max_m

    def verdict(self) -> str:
        """``"holds"``, ``"violated"`` (a violated row exists) or ``"undecided"``."""
        if self.first_violation is not None:
            return "violated"
        return "holds" if self.holds else "undecided"

    def summary(self) -> dict[str, Any]:
        """JSON-ready: the relation, the verdict, the first violation with its enclosure, the counts."""
        return {
            "relation": f"B(m) {self.relation} {self.threshold!r}",
            "start": self.start,
            "max_m": self.max_m,
            "checked_to": self.checked_to,
            "verdict": self.verdict(),
            "certified": self.certified,
            "first_violation": self.first_violation,
            "witness": None if self.witness is None else list(self.witness),
            "exact_first": self.exact_first,
            "undecided": list(self.undecided),
            "n_undecided": self.n_undecided,
            "enclosed": self.enclosed,
            "minimum": {"m": self.minimum[0], "value": self.minimum[1]},
        }


def _gamma(n: int) -> float:
    return n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF)


def freq_slack(spectrum: Spectrum) -> float:  # also partial_sums.py
    """``max_k |theta_k - exact_k|``: half an ulp of the largest frequency when exact expressions are given
    (the floats are them rounded to nearest), else 0."""
    if spectrum.exact_freqs is None:
        return 0.0
    return max(math.ulp(abs(t)) for t in spectrum.freqs) / 2 if any(spectrum.freqs) else 0.0


def spectrum_values(spectrum: Spectrum, max_m: int, chunk: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """``(B, err)`` for ``m = 0 .. max_m``: the float pass of the module docstring and its bound.

    Shapes: return.0 [max_m + 1]; return.1 [max_m + 1]
    """
    values, errors = np.empty(max_m + 1), np.empty(max_m + 1)
    for start, b, e in _chunks(spectrum, max_m, chunk):
        values[start : start + b.size], errors[start : start + b.size] = b, e
    return values, errors


def _chunks(spectrum: Spectrum, max_m: int, chunk: int):
    """Yield ``(m0, B_float, err)`` per chunk of offsets ``m0 .. m0 + C - 1`` (the last one shorter)."""
    theta = list(spectrum.freqs)
    amps = np.asarray(spectrum.amps)
    total = float(np.abs(amps).sum())
    k = len(theta)
    size = min(chunk, max_m + 1, max(64, TABLE_ENTRIES // k))
    cos_t, sin_t, e_t = _table(theta, size)
    slack = freq_slack(spectrum)
    gamma = _gamma(2 * k + 3)
    u = UNIT_ROUNDOFF
    for m0 in range(0, max_m + 1, size):
        n = min(size, max_m + 1 - m0)
        r0, e0 = offset_angles_with_error(np.array([m0], dtype=np.int64), theta)
        c0, s0 = amps * np.cos(r0[0]), amps * np.sin(r0[0])
        e_0 = float(e0.max()) + 2 * SIN_ULPS * u
        b = cos_t[:n] @ c0 - sin_t[:n] @ s0
        err = total * (2 * (e_t + e_0 + e_t * e_0) + 2 * u * (1 + e_0))
        err += gamma * 2 * total * (1 + e_t) * (1 + e_0) ** 2 + total * (m0 + n - 1) * slack
        yield m0, b, np.full(n, err * (1 + 16 * u))


def _table(theta: list[float], size: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``(cos(j theta_k), sin(j theta_k), e_t)`` for ``j < size`` with ``e_t`` bounding every entry's error.

    With ``j = a w + b`` (``w = ceil(sqrt(size))``, ``0 <= b < w``), both factors' values come from
    :func:`~ropeproof.verify.kernel._angles.offset_angles_with_error` (errors ``e_a``, ``e_b``, each plus
    ``2 SIN_ULPS u`` for the cosine/sine) and the entry by the addition formula, so ``e_t = 2 ((1 + e_a) e_b +
    e_a) + 4 u (1 + e_a)(1 + e_b)``: ``2 w`` reductions per frequency instead of ``size``."""
    u = UNIT_ROUNDOFF
    w = max(1, math.isqrt(size - 1) + 1)
    rb, eb = offset_angles_with_error(np.arange(w, dtype=np.int64), theta)
    ra, ea = offset_angles_with_error(np.arange(0, size + w, w, dtype=np.int64), theta)
    e_b, e_a = float(eb.max()) + 2 * SIN_ULPS * u, float(ea.max()) + 2 * SIN_ULPS * u
    ca, sa, cb, sb = np.cos(ra)[:, None], np.sin(ra)[:, None], np.cos(rb)[None], np.sin(rb)[None]
    cos_t = (ca * cb - sa * sb).reshape(-1, len(theta))[:size]
    sin_t = (sa * cb + ca * sb).reshape(-1, len(theta))[:size]
    e_t = 2 * ((1 + e_a) * e_b + e_a) + 4 * u * (1 + e_a) * (1 + e_b)
    return cos_t, sin_t, e_t * (1 + 8 * u)


@contextlib.contextmanager
def arb_frequencies(spectrum: Spectrum, m: int, prec: int) -> Iterator[list[arb]]:
    """The spectrum's frequencies as Arb balls (exact from their sympy expressions when the spectrum has
    them), at a local precision of ``prec`` bits (53..4096) plus the bits of ``|m| max |theta_k|``, so
    that every angle ``m theta_k`` keeps ``prec`` bits; the precision holds inside the block."""
    big = max(abs(t) for t in spectrum.freqs)
    extra = max(0, math.frexp(big * abs(int(m)) + 1)[1]) + 8
    with arb_precision(integer(prec, "prec", low=53, high=4096) + extra):
        exact = spectrum.exact_freqs
        yield [arb_of(x) for x in exact] if exact is not None else [arb(t) for t in spectrum.freqs]


def enclose_spectrum(spectrum: Spectrum, m: int, prec: int = 80) -> tuple[float, float]:
    """Float64 ``(lo, hi)`` enclosing ``B(m)`` exactly (an Arb ball at ``prec`` bits plus the bits of
    ``|m| max |theta_k|``; frequencies as their sympy expressions when the spectrum has them)."""
    m = int(m)
    with arb_frequencies(spectrum, m, prec) as thetas:
        total = arb(0)
        for t, a in zip(thetas, spectrum.amps, strict=True):  # type: ignore[arg-type]
            total += arb(a) * (t * m).cos()
        return arb_ends(total)


def _decide(lo: float, hi: float, relation: str, t: float) -> str:
    """``holds``/``violated``/``undecided`` for an enclosure ``[lo, hi]`` of ``B`` against ``B R t``."""
    if relation == ">=":
        return "holds" if lo >= t else "violated" if hi < t else "undecided"
    if relation == ">":
        return "holds" if lo > t else "violated" if hi <= t else "undecided"
    if relation == "<=":
        return "holds" if hi <= t else "violated" if lo > t else "undecided"
    return "holds" if hi < t else "violated" if lo >= t else "undecided"


def sweep_spectrum(
    spectrum: Spectrum,
    max_m: int,
    relation: str = ">=",
    threshold: float = 0.0,
    *,
    certified: bool = True,
    stop_at_first: bool = True,
    keep_values: bool = False,
    start: int = 0,
    prec: int = 80,
    refine_prec: int = 320,
    chunk: int = 4096,
    max_listed: int = 100,
) -> SpectrumSweep:
    """Check ``B(m) relation threshold`` for every offset ``m = 0 .. max_m`` (``B(m) = sum_k a_k cos(m
    theta_k)``; module docstring for the arithmetic).

    With ``certified=True`` every row is decided rigorously: by the float pass's error bound, or by an
    Arb enclosure for the rows within it; with ``certified=False`` rows within the bound are
    ``undecided`` (none is enclosed). ``stop_at_first`` ends the sweep at the end of the chunk holding
    the first violated row (``checked_to`` is that row). ``keep_values`` keeps the float values and
    bounds of the checked rows. ``start``: only the rows ``m = start .. max_m`` are checked (``0 <= start
    <= max_m``; a logit reading whose offset 0 is the target itself starts at 1); ``first_violation``,
    ``undecided`` and ``minimum`` are then over those rows, while kept values still begin at offset 0.
    """
    if not isinstance(spectrum, Spectrum):
        raise InputError(f"spectrum must be a Spectrum, got {type(spectrum).__name__}")
    max_m = integer(max_m, "max_m", low=0, high=MAX_OFFSET)
    if relation not in RELATIONS:
        raise InputError(f"relation={relation!r} is unknown; accepted: {list(RELATIONS)}")
    t = real(threshold, "threshold")
    chunk = integer(chunk, "chunk", low=1, high=1 << 20)
    start = integer(start, "start", low=0, high=max_m, note="start <= max_m")
    integer(prec, "prec", low=53, high=4096)
    integer(refine_prec, "refine_prec", low=53, high=4096)
    undecided: list[int] = []
    n_undecided = enclosed = 0
    first: int | None = None
    witness = None
    minimum = (0, math.inf)
    kept_v, kept_e = [], []
    checked_to = max_m
    for m0, b, err in _chunks(spectrum, max_m, chunk):
        skip = min(max(start - m0, 0), b.size)  # rows of this chunk below start
        if skip < b.size:
            i = skip + int(np.argmin(b[skip:]))
            if b[i] < minimum[1]:
                minimum = (m0 + i, float(b[i]))
        gap = b - t
        close = np.abs(gap) <= err * (1 + 1e-9) + 1e-300
        bad = ~close & (gap < 0) if relation in (">=", ">") else ~close & (gap > 0)
        close[:skip] = bad[:skip] = False
        candidates = np.nonzero(close | bad)[0]
        stop = False
        for j in candidates.tolist():
            m = m0 + j
            if bad[j]:
                status, ends = "violated", (float(b[j] - err[j]), float(b[j] + err[j]))
                ends = (math.nextafter(ends[0], -math.inf), math.nextafter(ends[1], math.inf))
            elif not certified:
                status, ends = "undecided", (math.nan, math.nan)
            else:
                enclosed += 1
                ends = enclose_spectrum(spectrum, m, prec)
                status = _decide(*ends, relation, t)
                if status == "undecided":
                    ends = enclose_spectrum(spectrum, m, refine_prec)
                    status = _decide(*ends, relation, t)
            if status == "undecided":
                n_undecided += 1
                if len(undecided) < max_listed:
                    undecided.append(m)
            elif status == "violated" and first is None:
                first, witness = m, ends
                if stop_at_first:
                    stop = True
                    break
        if keep_values:
            end = (first - m0 + 1) if stop and first is not None else b.size
            kept_v.append(b[:end])
            kept_e.append(err[:end])
        if stop:
            checked_to = first  # type: ignore[assignment]
            break
    values = np.concatenate(kept_v) if keep_values else None
    errors = np.concatenate(kept_e) if keep_values else None
    return SpectrumSweep(
        spectrum,
        max_m,
        relation,
        t,
        checked_to,
        first,
        witness,
        tuple(undecided),
        n_undecided,
        enclosed,
        minimum,
        certified,
        values,
        errors,
        start,
    )

"""Many-plane T_Index: normalised exact sweeps, frequency families, streaming records and slope fits.

T_Index over planes ``k`` with frequencies ``theta_k`` and amplitudes ``a_k >= 0`` (docs/theory.md section
4, with ``extra_planes``): the query of integer ``s`` is rotated by ``-s theta_k`` in every plane and
the logit at offset ``u`` from the target is ``h(u) = sum_k a_k cos(u theta_k)``. With
``g(m) = h(0) - h(m) = sum_k 2 a_k sin(m theta_k / 2)^2``
(:mod:`ropeproof.verify.measure.exact._index_sweep`):

    margin_inf(n) = gap_inf(n) = min_{1 <= m <= n-1} g(m),   gap_sup(n) = min_{1 <= m <= ceil((n-1)/2)} g(m).

Everything is also reported normalised by ``A = h(0) = sum_k a_k`` (so a normalised margin lies in
``[0, 2]``). Frequency families:

- :func:`standard_frequencies`: ``theta_k = base^(-2k / head_dim)``, ``k = 0 .. head_dim/2 - 1``;
- :func:`mixed_radix_frequencies`: ``theta_k = 2 pi / (b_1 ... b_k)`` (uniform: ``2 pi / b^k``), the
  construction of :mod:`ropeproof.theory._dirichlet` Theorem R.

:func:`margin_records` streams ``margin_inf`` to ``n = 2^26 - 1`` keeping only its record-setting
offsets, pruning each offset as soon as a partial sum of ``g`` reaches the running minimum (terms are
``>= 0`` and float addition of non-negatives is monotone, so the pruning is exact).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._dirichlet import dirichlet_bound, mixed_radix_base
from ropeproof.verify.measure.exact._angles import reduced_angles
from ropeproof.verify.measure.exact._index_sweep import IndexSweep, check_planes, index_sweep

MAX_LENGTH = 2**26 - 1
"""Longest supported sequence (exact angle reduction needs offsets below ``2^26``)."""


def standard_frequencies(head_dim: int, base: float = 10000.0) -> np.ndarray:
    """``theta_k = base^(-2k / head_dim)`` for ``k = 0 .. head_dim/2 - 1`` (docs/theory.md section 1)."""
    head_dim = integer(head_dim, "head_dim", low=2, even=True)
    base = real(base, "base", low=1, low_open=True)
    return base ** (-2.0 * np.arange(head_dim // 2) / head_dim)


def mixed_radix_frequencies(radices: Sequence[int]) -> np.ndarray:
    """``theta_k = 2 pi / (b_1 b_2 ... b_k)`` for ``k = 1 .. K`` (each ``b_k >= 2``)."""
    r = [int(b) for b in radices]
    if not r or any(b < 2 for b in r):
        raise InputError(f"radices={list(radices)!r} must be a non-empty list of integers >= 2")
    return 2 * math.pi / np.cumprod(np.array(r, dtype=np.float64))


def mixed_radix_for_length(length: int, planes: int) -> tuple[int, np.ndarray]:
    """``(b, theta)``: the uniform mixed radix ``theta_k = 2 pi / b^k`` with the least ``b`` such that
    ``b^K >= length`` (Theorem R then gives ``margin_inf(n) >= 2 sin(pi / b)^2 a`` for ``n <= length``)."""
    length = integer(length, "length", low=2, high=MAX_LENGTH)
    planes = integer(planes, "planes", low=1)
    b = mixed_radix_base(length, planes)
    return b, mixed_radix_frequencies([b] * planes)


def mixed_radix_margin(length: int, planes: int) -> float:
    """Theorem R's normalised margin of :func:`mixed_radix_for_length` at ``n = length``:
    ``(2 / K) sin(pi / b)^2`` (exact when ``length - 1 >= b^(K-1)``, a lower bound otherwise)."""
    b = mixed_radix_base(integer(length, "length", low=2, high=MAX_LENGTH), integer(planes, "planes", low=1))
    return 2.0 * math.sin(math.pi / b) ** 2 / planes


def dirichlet_normalised(n: np.ndarray | int, planes: int, reading: str = "margin_inf") -> np.ndarray:
    """Theorem D's normalised bound ``2 sin(pi / max(2, Q_K(M)))^2`` for every ``n``
    (``M = n - 1`` for ``margin_inf``/``gap_inf``, ``ceil((n - 1)/2)`` for ``gap_sup``)."""
    if reading not in ("margin_inf", "gap_inf", "gap_sup"):
        raise InputError(f"reading={reading!r}; accepted: 'margin_inf', 'gap_inf', 'gap_sup'")
    bound = dirichlet_bound(planes)
    arr = np.atleast_1d(np.asarray(n, dtype=np.int64))
    m = arr - 1 if reading != "gap_sup" else (arr - 1 + 1) // 2
    cache: dict[int, float] = {}
    out = np.empty(arr.shape)
    for i, mm in enumerate(m.tolist()):
        if mm < 1:
            raise InputError(f"n={int(arr[i])} must be >= 2")
        q = bound.q_of(mm)
        if q not in cache:
            cache[q] = 2.0 * math.sin(math.pi / q) ** 2
        out[i] = cache[q]
    return out


@dataclass
class ManyPlaneSweep:
    """Exact extremes of a many-plane T_Index for ``n = 2 .. N`` (arrays indexed by ``n - 2``), raw
    and normalised by ``A = sum_k a_k``, with Theorem D's bounds."""

    freqs: np.ndarray
    amps: np.ndarray
    exact: IndexSweep

    @property
    def n(self) -> np.ndarray:
        return self.exact.n

    @property
    def total_amplitude(self) -> float:
        return float(self.amps.sum())

    def normalised(self, quantity: str = "margin_inf") -> np.ndarray:
        """``quantity(n) / A`` for ``gap_sup``, ``gap_inf`` or ``margin_inf``."""
        if quantity not in ("gap_sup", "gap_inf", "margin_inf"):
            raise InputError(f"quantity={quantity!r}; accepted: 'gap_sup', 'gap_inf', 'margin_inf'")
        return getattr(self.exact, quantity) / self.total_amplitude

    def dirichlet(self, quantity: str = "margin_inf") -> np.ndarray:
        """Theorem D's normalised bound on ``quantity`` at every ``n``."""
        return dirichlet_normalised(self.n, self.freqs.size, quantity)

    def columns(self) -> dict[str, np.ndarray]:
        """Raw and normalised extremes, the attaining offset and the Dirichlet bounds, per ``n``."""
        cols = {"n": self.n}
        for q in ("gap_sup", "gap_inf", "margin_inf"):
            cols[q] = getattr(self.exact, q)
            cols[f"{q}_normalised"] = self.normalised(q)
        cols["closest"] = self.exact.closest
        cols["dirichlet_margin_inf"] = self.dirichlet("margin_inf")
        cols["dirichlet_gap_sup"] = self.dirichlet("gap_sup")
        return cols


def many_plane_sweep(
    freqs: Sequence[float], amps: Sequence[float] | None = None, max_n: int = 1000, chunk: int = 1 << 20
) -> ManyPlaneSweep:
    """Exact, normalised T_Index extremes over planes ``(freqs, amps)`` for ``n = 2 .. max_n``."""
    f, a = check_planes(freqs, amps, some_weight=True)
    max_n = integer(max_n, "max_n", low=2, high=MAX_LENGTH)
    return ManyPlaneSweep(f, a, index_sweep(f, a, max_n, chunk))


@dataclass
class MarginRecords:
    """The record-setting offsets of ``G(M) = min_{1<=m<=M} g(m)`` for ``M <= max_n - 1``.

    ``offsets[i]`` is the ``i``-th offset where ``g`` drops strictly below every earlier value and
    ``gaps[i]`` that value, so ``margin_inf(n) = gaps[i]`` for the last ``offsets[i] <= n - 1``.
    ``evaluated`` counts the plane terms computed (``K (max_n - 1)`` without pruning).
    """

    max_n: int
    offsets: np.ndarray
    gaps: np.ndarray
    total_amplitude: float
    evaluated: int
    seconds: float

    def margin_inf(self, n: np.ndarray | int) -> np.ndarray:
        """``margin_inf(n)`` (raw) for every ``n`` in ``2 .. max_n``."""
        arr = np.atleast_1d(np.asarray(n, dtype=np.int64))
        lowest = int(self.offsets[0]) + 1 if self.offsets.size else self.max_n + 1
        if arr.size and (arr.min() < lowest or arr.max() > self.max_n):
            raise InputError(f"n must lie in {lowest} .. {self.max_n}")
        return self.gaps[np.searchsorted(self.offsets, arr - 1, side="right") - 1]

    def normalised(self, n: np.ndarray | int) -> np.ndarray:
        """``margin_inf(n) / A``."""
        return self.margin_inf(n) / self.total_amplitude

    def decay_onset(self) -> int | None:
        """The least ``n`` with ``margin_inf(n) < margin_inf(2) = g(1)`` (``None``: none up to ``max_n``)."""
        return int(self.offsets[1]) + 1 if self.offsets.size > 1 else None

    def to_json(self) -> dict[str, Any]:
        """The records as JSON data (:meth:`from_json` reads them back exactly)."""
        return {
            "max_n": self.max_n,
            "offsets": self.offsets.tolist(),
            "gaps": self.gaps.tolist(),
            "total_amplitude": self.total_amplitude,
            "evaluated": self.evaluated,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MarginRecords:
        """The records :meth:`to_json` wrote."""
        return cls(
            int(data["max_n"]),
            np.array(data["offsets"], dtype=np.int64),
            np.array(data["gaps"], dtype=np.float64),
            float(data["total_amplitude"]),
            int(data["evaluated"]),
            float(data["seconds"]),
        )


def margin_records(
    freqs: Sequence[float],
    amps: Sequence[float] | None = None,
    max_n: int = 10**6,
    chunk: int = 1 << 20,
    first_offset: int = 1,
) -> MarginRecords:
    """Stream ``margin_inf(n)`` for ``n = 2 .. max_n`` as records of the prefix minimum of ``g``.

    Planes are summed in the given order (as :func:`ropeproof.verify.measure.exact._index_sweep.stable_gaps`
    does);
    an offset is
    dropped once its partial sum reaches the minimum over all earlier chunks. Memory ``O(chunk)``.
    ``first_offset > 1`` starts the minimum there instead (``min_{first_offset <= m <= n-1} g(m)``;
    e.g. ``2`` gives the runner-up to the adjacent key).
    """
    f, a = check_planes(freqs, amps, some_weight=True)
    max_n = integer(max_n, "max_n", low=2, high=MAX_LENGTH)
    first_offset = integer(first_offset, "first_offset", low=1, high=max_n - 1)
    chunk = integer(chunk, "chunk", low=1)
    start_time = time.perf_counter()
    best = math.inf
    offsets: list[int] = []
    gaps: list[float] = []
    evaluated = 0
    start, size = first_offset, min(chunk, 4096)
    while start < max_n:
        m = np.arange(start, min(start + size, max_n), dtype=np.float64)
        alive = np.arange(m.size)
        partial = np.zeros(m.size)
        for theta, amp in zip(f, a, strict=True):
            if alive.size == 0:
                break
            term = 2.0 * amp * np.sin(reduced_angles(m[alive], float(theta)) / 2) ** 2
            evaluated += alive.size
            partial[alive] += term
            alive = alive[partial[alive] < best]
        if alive.size:
            g = partial[alive]
            run = np.minimum.accumulate(g)
            is_record = np.concatenate([[True], run[1:] < run[:-1]]) & (run < best)
            for i in np.nonzero(is_record)[0]:
                offsets.append(int(m[alive[i]]))
                gaps.append(float(g[i]))
            best = min(best, float(run[-1]))
        start += m.size
        size = chunk
    return MarginRecords(
        max_n,
        np.array(offsets, dtype=np.int64),
        np.array(gaps),
        float(a.sum()),
        evaluated,
        time.perf_counter() - start_time,
    )


@data_product("beyond.standard-margin-records")
def STANDARD_MARGIN_RECORDS(
    store: ResultStore, head_dim: int, max_n: int, first_offset: int = 1
) -> dict[str, Any]:
    """:func:`margin_records` of the standard spectrum (:func:`standard_frequencies` of ``head_dim``, equal
    amplitudes) as :meth:`MarginRecords.to_json` data: the many-plane claims and figure stream the same
    records."""
    return margin_records(standard_frequencies(head_dim), None, max_n, first_offset=first_offset).to_json()


@dataclass(frozen=True)
class SlopeFit:
    """Least-squares fit ``log y = slope log n + intercept`` over ``n`` in ``[n_min, n_max]``."""

    slope: float
    intercept: float
    n_min: int
    n_max: int
    points: int


def fit_slope(
    n: np.ndarray, values: np.ndarray, n_min: int | None = None, n_max: int | None = None
) -> SlopeFit:
    """Fit the log-log slope of ``values`` against ``n`` (only positive values in the range are used)."""
    n = np.asarray(n, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if n.shape != v.shape:
        raise InputError(f"n and values must have the same shape; got {n.shape} and {v.shape}")
    lo = n.min() if n_min is None else n_min
    hi = n.max() if n_max is None else n_max
    keep = (n >= lo) & (n <= hi) & (v > 0) & np.isfinite(v)
    if keep.sum() < 2:
        raise InputError(f"need at least 2 positive points with n in [{lo}, {hi}]; got {int(keep.sum())}")
    slope, intercept = np.polyfit(np.log(n[keep]), np.log(v[keep]), 1)
    return SlopeFit(float(slope), float(intercept), int(lo), int(hi), int(keep.sum()))


def log_lengths(n_min: int, n_max: int, per_decade: int = 12) -> np.ndarray:
    """Distinct integers spaced evenly in ``log n`` from ``n_min`` to ``n_max`` (both included)."""
    n_min = integer(n_min, "n_min", low=2, high=MAX_LENGTH)
    n_max = integer(n_max, "n_max", low=n_min, high=MAX_LENGTH)
    count = max(2, round(per_decade * math.log10(n_max / n_min)) + 1)
    return np.unique(np.round(np.geomspace(n_min, n_max, count)).astype(np.int64))


def mixed_radix_curve(lengths: Sequence[int], planes: int) -> np.ndarray:
    """Normalised ``margin_inf(n)`` of the mixed radix designed for each ``n`` (closed form of Theorem R,
    which :func:`many_plane_sweep` confirms)."""
    return np.array([mixed_radix_margin(int(n), planes) for n in lengths])


@dataclass
class StandardSpectrum:
    """The standard RoPE spectrum's T_Index margin (equal amplitudes), streamed to ``max_n``."""

    head_dim: int
    base: float
    records: MarginRecords

    @property
    def planes(self) -> int:
        return self.head_dim // 2

    def normalised_at(self, lengths: Sequence[int]) -> dict[int, float]:
        return {
            int(n): float(v)
            for n, v in zip(lengths, self.records.normalised(np.asarray(lengths)), strict=True)
        }

    def dirichlet_at(self, lengths: Sequence[int]) -> dict[int, float]:
        return {int(n): float(dirichlet_normalised(int(n), self.planes)[0]) for n in lengths}


def standard_spectrum(head_dim: int = 64, base: float = 10000.0, max_n: int = 10**6) -> StandardSpectrum:
    """Stream the standard spectrum's ``margin_inf`` to ``max_n`` (:func:`margin_records`)."""
    f = standard_frequencies(head_dim, base)
    return StandardSpectrum(head_dim, base, margin_records(f, None, max_n))


@dataclass(frozen=True)
class DecayGuarantee:
    """Theorem D forces ``margin_inf(n) < g(1)`` once ``n - 1 >= Q^K`` with ``2 A sin(pi/Q)^2 < g(1)``."""

    q: int
    planes: int
    plateau: float

    @property
    def length(self) -> int:
        """``Q^K + 1``: by this length the margin is strictly below its ``n = 2`` value ``g(1)``."""
        return self.q**self.planes + 1

    @property
    def log10_length(self) -> float:
        return self.planes * math.log10(self.q)


def dirichlet_decay_guarantee(freqs: Sequence[float], amps: Sequence[float] | None = None) -> DecayGuarantee:
    """The least ``Q >= 2`` with ``2 A sin(pi / Q)^2 < g(1)`` (``A = sum a_k``): Theorem D then gives
    ``margin_inf(Q^K + 1) < g(1) = margin_inf(2)``, an upper bound on where decay must start."""
    f, a = check_planes(freqs, amps, some_weight=True)
    g1 = float((2 * a * np.sin(f / 2) ** 2).sum())
    if g1 <= 0:
        raise InputError("g(1) = 0: the margin is 0 from n = 2 on")
    total = float(a.sum())
    q = max(2, math.floor(math.pi / math.asin(min(1.0, math.sqrt(g1 / (2 * total))))))
    while 2 * total * math.sin(math.pi / q) ** 2 >= g1:
        q += 1
    return DecayGuarantee(q, int(f.size), g1 / total)


def grid_margins(planes: int, max_n: int, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """Exhaustive search over frequency grids: ``(best, theta_best)`` where ``best[n - 2]`` is the largest
    normalised ``margin_inf(n)`` (equal amplitudes) over every ``theta`` in ``{2 pi j / grid}^K`` with
    ``theta_1 <= .. <= theta_K`` (order does not matter), ``n = 2 .. max_n``."""
    planes, grid = integer(planes, "planes", low=1, high=4), integer(grid, "grid", low=2)
    if grid**planes > 4 * 10**6:
        raise InputError(f"grid^planes={grid}^{planes} must be at most 4e6")
    max_n = integer(max_n, "max_n", low=2, high=4096)
    axis = 2 * math.pi * np.arange(grid) / grid
    mesh = np.stack(np.meshgrid(*[axis] * planes, indexing="ij"), -1).reshape(-1, planes)
    mesh = mesh[np.all(np.diff(mesh, axis=1) >= 0, axis=1)] if planes > 1 else mesh
    best = np.full(max_n - 1, -np.inf)
    arg = np.zeros((max_n - 1, planes))
    for s in range(0, mesh.shape[0], 4096):
        th = mesh[s : s + 4096]
        m = np.arange(1, max_n, dtype=np.float64)
        g = (2 * np.sin(m[None, :, None] * th[:, None, :] / 2) ** 2).mean(-1)
        pref = np.minimum.accumulate(g, axis=1)
        i = pref.argmax(0)
        v = pref[i, np.arange(max_n - 1)]
        take = v > best
        best[take], arg[take] = v[take], th[i[take]]
    return best, arg

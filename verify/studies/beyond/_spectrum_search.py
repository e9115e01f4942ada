"""The best T_Index (and positional Reflexive) head whose planes sit on a fixed RoPE spectrum.

A checkpoint cannot choose its frequencies: GPT-J rotates plane ``k`` of its ``rotary_dim`` dims at
``10000^(-2k / rotary_dim)`` (base fixed), LLaMA at ``rope_theta^(-2k / head_dim)``
(:func:`spectrum_frequencies`, the formula as HF writes it). What remains of the many-plane search
(:mod:`ropeproof.verify.studies.beyond._index_search`) is the choice of amplitudes, and for fixed frequencies
that is a linear program: maximise ``t`` over ``a >= 0``, ``sum_k a_k = 1``, subject to

    sum_k a_k g_k(m) >= t   for every m = 1 .. N - 1,     g_k(m) = 2 sin(m theta_k / 2)^2,

whose optimum is ``mu*(N)``, the best normalised worst-case margin ``min_{m <= N-1} g(m)`` of any head on
the spectrum at length ``N`` (``docs/theory.md`` sections 4 and 5;
:mod:`ropeproof.verify.studies.beyond._many_plane`
states the margin). :func:`best_on_spectrum` solves it with HiGHS (``scipy.optimize.linprog``), the global
optimum over amplitudes, not a local search. Amplitudes below :data:`DROP_BELOW` of the largest are set to
zero (a plane the head does not use), the rest renormalised; when a width budget allows fewer planes than
the optimum uses, the program is solved again on the ``max_planes`` planes with the largest amplitudes.
The result is re-scored exactly (:func:`~ropeproof.verify.measure.exact._index_sweep.index_sweep`): ``margin``
is the
margin of the amplitudes returned, ``lp_value`` the solver's optimum (a bound the re-scored margin may
fall short of by the dropped amplitudes and the solver's tolerance; tests check how little).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.verify.studies.beyond._index_search import exact_margin

DROP_BELOW = 1e-9
"""Amplitudes below this fraction of the largest are dropped (the planes a head does not use)."""
MAX_LENGTH = 1 << 20
"""Longest design length accepted (the program has ``N - 1`` constraints)."""


def spectrum_frequencies(base: float, dim: int) -> np.ndarray:
    """``1 / base^(2k / dim)`` for ``k = 0 .. dim/2 - 1``, as HF writes GPT-J's and LLaMA's spectra."""
    dim, base = integer(dim, "dim", low=2, even=True), real(base, "base", low=1, low_open=True)
    return np.array([1.0 / (base ** (2 * k / dim)) for k in range(dim // 2)])


@dataclass(frozen=True)
class SpectrumSolution:
    """The best head found on a spectrum: the plane indices ``ks`` it uses, their frequencies and
    amplitudes (summing to 1), the exact normalised ``margin`` at ``length`` and the solver's optimum."""

    base: float
    dim: int
    length: int
    ks: tuple[int, ...]
    freqs: tuple[float, ...]
    amps: tuple[float, ...]
    margin: float
    lp_value: float

    @property
    def planes(self) -> tuple[tuple[float, float], ...]:
        """``(theta_k, a_k)`` pairs, as multi-hop programs take them."""
        return tuple(zip(self.freqs, self.amps, strict=True))

    def as_dict(self) -> dict[str, object]:
        return {
            "base": self.base,
            "dim": self.dim,
            "length": self.length,
            "ks": list(self.ks),
            "freqs": list(self.freqs),
            "amps": list(self.amps),
            "margin": self.margin,
            "lp_value": self.lp_value,
        }


def _solve(freqs: np.ndarray, length: int) -> tuple[np.ndarray, float]:
    """``(a, t)``: the linear program of the module docstring on ``freqs`` (HiGHS)."""
    from scipy.optimize import linprog

    m = np.arange(1, length, dtype=np.float64)
    gaps = 2 * np.sin(np.outer(m, freqs) / 2) ** 2  # [N - 1, K]
    k = freqs.size
    cost = np.zeros(k + 1)
    cost[-1] = -1.0  # maximise t
    a_ub = np.hstack([-gaps, np.ones((gaps.shape[0], 1))])  # t - sum_k a_k g_k(m) <= 0
    a_eq = np.concatenate([np.ones(k), [0.0]])[None, :]
    res = linprog(
        cost,
        A_ub=a_ub,
        b_ub=np.zeros(gaps.shape[0]),
        A_eq=a_eq,
        b_eq=[1.0],
        bounds=[(0, None)] * k + [(None, None)],
        method="highs",
    )
    if res.status != 0:  # pragma: no cover - a feasible, bounded program; kept for a clear message
        raise InputError(f"the amplitude program did not solve: {res.message}")
    return np.clip(res.x[:k], 0.0, None), float(-res.fun)


@functools.cache
def _best(base: float, dim: int, length: int, allowed: tuple[int, ...], max_planes: int) -> SpectrumSolution:
    spectrum = spectrum_frequencies(base, dim)
    ks = np.array(allowed)
    amps, value = _solve(spectrum[ks], length)
    keep = amps >= DROP_BELOW * amps.max()
    if keep.sum() > max_planes:  # the width allows fewer planes: solve again on the largest
        top = np.sort(np.argsort(amps)[::-1][:max_planes])
        ks = ks[top]
        amps, value = _solve(spectrum[ks], length)
        keep = amps >= DROP_BELOW * amps.max()
    ks, amps = ks[keep], amps[keep] / amps[keep].sum()
    freqs = spectrum[ks]
    return SpectrumSolution(
        float(base),
        int(dim),
        int(length),
        tuple(int(k) for k in ks),
        tuple(float(f) for f in freqs),
        tuple(float(a) for a in amps),
        exact_margin(freqs, amps, length),
        value,
    )


def best_on_spectrum(
    base: float,
    dim: int,
    length: int,
    allowed: Sequence[int] | None = None,
    max_planes: int | None = None,
) -> SpectrumSolution:
    """The best head on planes ``allowed`` (default: all ``dim / 2``) of the spectrum ``(base, dim)`` at
    ``length``, with at most ``max_planes`` planes (module docstring; cached per process)."""
    spectrum = spectrum_frequencies(base, dim)
    length = integer(length, "length", low=3, high=MAX_LENGTH)
    chosen = tuple(range(spectrum.size)) if allowed is None else tuple(sorted({int(k) for k in allowed}))
    if not chosen or chosen[0] < 0 or chosen[-1] >= spectrum.size:
        raise InputError(
            f"allowed planes {list(chosen)} must be a non-empty subset of 0 .. {spectrum.size - 1}"
        )
    limit = len(chosen) if max_planes is None else integer(max_planes, "max_planes", low=1, note="or None")
    return _best(float(base), int(dim), int(length), chosen, limit)


def nearest_plane(base: float, dim: int, theta: float) -> int:
    """The plane ``k`` of the spectrum whose frequency is nearest ``theta`` in log scale (how [A]'s rounded
    frequencies, ``0.8660`` and ``0.0027``, are placed on a checkpoint's spectrum)."""
    theta = real(theta, "theta", low=0, low_open=True)
    spectrum = spectrum_frequencies(base, dim)
    return int(np.argmin(np.abs(np.log(spectrum) - math.log(theta))))

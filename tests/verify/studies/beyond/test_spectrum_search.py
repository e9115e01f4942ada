"""The best head on a fixed RoPE spectrum: the linear program's optimum against a brute-force grid and
against its own dual bound, exact re-scoring, the plane budget and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.beyond._index_search import exact_margin
from ropeproof.verify.studies.beyond._spectrum_search import (
    best_on_spectrum,
    nearest_plane,
    spectrum_frequencies,
)


def _gaps(freqs: np.ndarray, length: int) -> np.ndarray:
    m = np.arange(1, length)
    return 2 * np.sin(np.outer(m, freqs) / 2) ** 2


def test_spectrum_is_the_hf_formula() -> None:
    f = spectrum_frequencies(10000.0, 128)
    assert f.size == 64 and f[0] == 1.0 and f[1] == 1.0 / 10000.0 ** (2 / 128)
    assert nearest_plane(10000.0, 128, 0.8660) == 1  # [A]'s Index angle: frequency id 1 (0.86596)
    assert nearest_plane(10000.0, 128, 0.0027) == 41  # [A]'s Retrieval angle: 0.00274


def test_optimum_beats_every_point_of_a_grid() -> None:
    """Three planes of a width-6 spectrum at length 17: no amplitude vector on a 1/60 simplex grid does
    better than the program's optimum, and the grid comes within 2% of it."""
    sol = best_on_spectrum(10000.0, 6, 17)
    freqs = spectrum_frequencies(10000.0, 6)
    gaps = _gaps(freqs, 17)
    best_grid = 0.0
    for i, j in itertools.product(range(61), repeat=2):
        if i + j <= 60:
            a = np.array([i, j, 60 - i - j]) / 60
            best_grid = max(best_grid, float((gaps @ a).min()))
    assert best_grid <= sol.margin + 1e-12
    assert best_grid >= 0.98 * sol.margin


def test_optimum_meets_its_dual_bound() -> None:
    """Optimality without trusting the solver's primal: for any weights y >= 0 on the lengths with
    sum y = 1, every amplitude vector has min_m g(m) <= max_k sum_m y_m g_k(m). The dual weights found by
    a second solve give an upper bound that the re-scored margin meets to 1e-9."""
    from scipy.optimize import linprog

    length = 300
    sol = best_on_spectrum(10000.0, 32, length)
    gaps = _gaps(spectrum_frequencies(10000.0, 32), length)
    # the dual: minimise u subject to G^T y <= u, y >= 0, sum y = 1
    k = gaps.shape[1]
    res = linprog(
        np.concatenate([np.zeros(length - 1), [1.0]]),
        A_ub=np.hstack([gaps.T, -np.ones((k, 1))]),
        b_ub=np.zeros(k),
        A_eq=np.concatenate([np.ones(length - 1), [0.0]])[None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * (length - 1) + [(None, None)],
        method="highs",
    )
    y = np.clip(res.x[:-1], 0, None)
    y /= y.sum()
    upper = float((gaps.T @ y).max())
    assert sol.margin <= upper + 1e-12
    assert sol.margin >= upper - 1e-9
    assert abs(sol.margin - sol.lp_value) <= 1e-9


def test_solution_is_rescored_and_respects_the_plane_budget() -> None:
    sol = best_on_spectrum(10000.0, 128, 1000, max_planes=6)
    assert len(sol.ks) <= 6 and list(sol.ks) == sorted(set(sol.ks))
    assert abs(sum(sol.amps) - 1) < 1e-12 and min(sol.amps) > 0
    assert sol.margin == exact_margin(sol.freqs, sol.amps, 1000)
    free = best_on_spectrum(10000.0, 128, 1000)
    assert len(free.ks) > 6 and free.margin > sol.margin  # fewer planes, smaller optimum
    only = best_on_spectrum(1e8, 128, 1000, allowed=range(60))
    assert max(only.ks) < 60
    assert best_on_spectrum(10000.0, 128, 1000) is free  # cached per process
    assert sol.as_dict()["ks"] == list(sol.ks) and sol.planes[0] == (sol.freqs[0], sol.amps[0])


def test_errors() -> None:
    with pytest.raises(InputError, match="dim=7 is out of range; accepted: an even integer >= 2"):
        spectrum_frequencies(10000.0, 7)
    with pytest.raises(InputError, match="base"):
        spectrum_frequencies(1.0, 8)
    with pytest.raises(InputError, match="length=2"):
        best_on_spectrum(10000.0, 8, 2)
    with pytest.raises(InputError, match="allowed planes"):
        best_on_spectrum(10000.0, 8, 10, allowed=[9])
    with pytest.raises(InputError, match="max_planes"):
        best_on_spectrum(10000.0, 8, 10, max_planes=0)
    with pytest.raises(InputError, match="theta"):
        nearest_plane(10000.0, 8, 0.0)

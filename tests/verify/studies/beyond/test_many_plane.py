"""Many-plane T_Index: sweeps against direct computation, Theorem D against exhaustive search,
Theorem R's mixed radix, the standard spectrum, slope fits and the construction search."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import to_json_data
from ropeproof.theory._dirichlet import (
    dirichlet_bound,
    dirichlet_proof,
    integer_root,
    mixed_radix_base,
    mixed_radix_proof,
    residue_lemma_holds,
    run_proof,
)
from ropeproof.verify.measure.exact._index_sweep import direct_index_extremes, index_sweep
from ropeproof.verify.studies.beyond._index_search import (
    batch_margins,
    best_known,
    best_known_table,
    exact_margin,
    search_best_index,
)
from ropeproof.verify.studies.beyond._many_plane import (
    MarginRecords,
    dirichlet_decay_guarantee,
    dirichlet_normalised,
    fit_slope,
    grid_margins,
    many_plane_sweep,
    margin_records,
    mixed_radix_for_length,
    mixed_radix_frequencies,
    mixed_radix_margin,
    standard_frequencies,
)


@settings(max_examples=15)
@given(
    freqs=st.lists(st.floats(0.0, 7.0), min_size=1, max_size=5),
    amp_seed=st.integers(0, 2**16),
    n=st.integers(2, 24),
)
def test_many_plane_sweep_equals_direct_enumeration(freqs, amp_seed, n) -> None:
    amps = np.random.default_rng(amp_seed).uniform(0.05, 1.0, len(freqs))
    sw = many_plane_sweep(freqs, amps, n)
    want = direct_index_extremes(np.array(freqs), amps, n, dps=30)
    got = (sw.exact.gap_sup[-1], sw.exact.gap_inf[-1], sw.exact.margin_inf[-1])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14 * amps.sum())
    np.testing.assert_allclose(sw.normalised("margin_inf")[-1], want[2] / amps.sum(), rtol=1e-12, atol=1e-14)


@settings(max_examples=20)
@given(
    freqs=st.lists(st.floats(0.0, 3.2), min_size=1, max_size=6),
    max_n=st.integers(2, 3000),
    chunk=st.integers(1, 500),
    first=st.integers(1, 3),
)
def test_margin_records_equal_the_full_sweep_exactly(freqs, max_n, chunk, first) -> None:
    first = min(first, max_n - 1)
    rec = margin_records(freqs, None, max_n, chunk=chunk, first_offset=first)
    m = np.arange(first, max_n, dtype=np.float64)
    from ropeproof.verify.measure.exact._index_sweep import stable_gaps

    want = np.minimum.accumulate(stable_gaps(freqs, np.ones(len(freqs)), m))
    got = rec.margin_inf(np.arange(first + 1, max_n + 1))
    np.testing.assert_array_equal(got, want)
    if first == 1:
        np.testing.assert_array_equal(got, index_sweep(freqs, None, max_n).margin_inf)
    # the JSON form (the run's store keeps the standard spectrum's records so) reads back exactly
    again = MarginRecords.from_json(to_json_data(rec.to_json()))
    np.testing.assert_array_equal(again.margin_inf(np.arange(first + 1, max_n + 1)), got)
    assert again.offsets.dtype == rec.offsets.dtype and again.decay_onset() == rec.decay_onset()


def test_pruning_does_little_work_on_the_standard_spectrum() -> None:
    f = standard_frequencies(64)
    rec = margin_records(f, None, 200_000)
    assert rec.evaluated < 0.2 * 32 * 200_000
    assert rec.offsets.tolist() == [1] and rec.decay_onset() is None


def test_standard_spectrum_margin_is_the_adjacent_gap() -> None:
    """Independent: g(1) = sum_k (1 - cos theta_k) in mpmath; margin_inf is that up to n = 10^5."""
    for hd, want in ((64, 0.03384901), (128, 0.02978619)):
        f = standard_frequencies(hd)
        with mpmath.workdps(30):
            g1 = float(sum(1 - mpmath.cos(mpmath.mpf(float(t))) for t in f))
        rec = margin_records(f, None, 100_000)
        assert rec.margin_inf(100_000)[0] == pytest.approx(g1, rel=1e-14)
        assert rec.normalised(2)[0] == pytest.approx(want, abs=1e-8)
        guarantee = dirichlet_decay_guarantee(f)
        assert (
            2 * math.sin(math.pi / guarantee.q) ** 2
            < g1 / (hd // 2)
            <= 2 * math.sin(math.pi / (guarantee.q - 1)) ** 2
        )


def test_standard_frequencies_match_the_theory_brief() -> None:
    f = standard_frequencies(128)
    assert f.size == 64 and f[0] == 1.0
    assert f[42] == pytest.approx(10000 ** (-84 / 128), rel=1e-15)
    with pytest.raises(InputError):
        standard_frequencies(7)


# ------------------------------------------------------------------------------------------ Dirichlet


@given(m=st.integers(0, 10**12), k=st.integers(1, 40))
def test_integer_root_is_exact(m, k) -> None:
    q = integer_root(m, k)
    assert q**k <= m < (q + 1) ** k


def brute_grid_best(planes: int, n: int, grid: int) -> float:
    """Largest normalised margin_inf(n) over every theta in {2 pi j / grid}^K, by direct enumeration."""
    axis = [2 * math.pi * j / grid for j in range(grid)]
    best = 0.0
    for th in itertools.combinations_with_replacement(axis, planes):
        g = min(sum(1 - math.cos(m * t) for t in th) / planes for m in range(1, n))
        best = max(best, g)
    return best


@pytest.mark.parametrize(("planes", "n", "grid"), [(1, 9, 90), (2, 10, 40), (2, 17, 30), (3, 12, 16)])
def test_dirichlet_bound_against_exhaustive_search(planes, n, grid) -> None:
    best = brute_grid_best(planes, n, grid)
    bound = dirichlet_bound(planes).margin_bound(n)
    assert best <= bound * (1 + 1e-12)
    vectorised, _ = grid_margins(planes, n, grid)
    assert vectorised[-1] == pytest.approx(best, rel=1e-12)
    np.testing.assert_array_less(vectorised, dirichlet_normalised(np.arange(2, n + 1), planes) * (1 + 1e-12))


@settings(max_examples=40)
@given(
    freqs=st.lists(st.floats(0.0, 2 * math.pi), min_size=1, max_size=4),
    m=st.integers(1, 3000),
)
def test_pigeonhole_offset_exists(freqs, m) -> None:
    """Theorem D's core: some 1 <= u <= M has every u theta_k strictly within 2 pi / Q of 2 pi Z."""
    q = integer_root(m, len(freqs))
    if q < 2:
        return
    u = np.arange(1, m + 1, dtype=np.float64)
    dist = np.stack([np.abs(np.remainder(u * t + math.pi, 2 * math.pi) - math.pi) for t in freqs])
    assert (dist.max(0) < 2 * math.pi / q + 1e-9).any()


@settings(max_examples=15)
@given(
    freqs=st.lists(st.floats(0.0, 3.2), min_size=1, max_size=4),
    amp_seed=st.integers(0, 2**16),
    n=st.integers(2, 400),
)
def test_dirichlet_bound_holds_for_random_heads(freqs, amp_seed, n) -> None:
    amps = np.random.default_rng(amp_seed).uniform(0, 1, len(freqs)) + 1e-3
    sw = index_sweep(freqs, amps, n)
    b = dirichlet_bound(len(freqs))
    assert sw.margin_inf[-1] <= b.margin_bound(n, amps.sum()) * (1 + 1e-12)
    assert sw.gap_sup[-1] <= b.gap_sup_bound(n, amps.sum()) * (1 + 1e-12)


def test_proof_steps_pass() -> None:
    for steps in (dirichlet_proof(2), mixed_radix_proof(3, 4)):
        results = run_proof(steps)
        assert all(v is not False for v in results.values())
        assert any(v is True for v in results.values())
    for b, k in ((2, 1), (2, 6), (3, 4), (10, 3)):
        assert residue_lemma_holds(b, k)


# -------------------------------------------------------------------------------------- mixed radix


@pytest.mark.parametrize(("planes", "length"), [(1, 50), (2, 300), (3, 1000), (4, 5000), (8, 3000)])
def test_mixed_radix_margin_matches_theorem_r(planes, length) -> None:
    b, f = mixed_radix_for_length(length, planes)
    assert b == mixed_radix_base(length, planes) and b**planes >= length > (b - 1) ** planes
    norm = many_plane_sweep(f, None, length).normalised("margin_inf")
    want = 2 * math.sin(math.pi / b) ** 2 / planes
    assert norm.min() >= want * (1 - 16 * b * 2.3e-16)
    if b ** (planes - 1) < length:
        np.testing.assert_allclose(norm[b ** (planes - 1) - 1 :], want, rtol=16 * b * 2.3e-16)
    assert mixed_radix_margin(length, planes) == pytest.approx(want, rel=1e-15)


@settings(max_examples=10)
@given(base=st.integers(2, 6), planes=st.integers(1, 4), amp_seed=st.integers(0, 2**16))
def test_mixed_radix_lower_bound_with_unequal_amplitudes_in_mpmath(base, planes, amp_seed) -> None:
    """Theorem R with exact frequencies 2 pi / b^k: g(m) >= 2 min_k a_k sin(pi/b)^2 for m < b^K."""
    amps = np.random.default_rng(amp_seed).uniform(0.1, 1.0, planes)
    with mpmath.workdps(30):
        bound = 2 * min(amps) * mpmath.sin(mpmath.pi / base) ** 2
        for m in range(1, base**planes):
            g = sum(2 * a * mpmath.sin(mpmath.pi * m / base ** (k + 1)) ** 2 for k, a in enumerate(amps))
            assert g >= bound - mpmath.mpf(10) ** -25


def test_mixed_radix_frequencies_validation() -> None:
    np.testing.assert_allclose(mixed_radix_frequencies([4, 2]), [math.pi / 2, math.pi / 4])
    with pytest.raises(InputError):
        mixed_radix_frequencies([1, 3])
    with pytest.raises(InputError):
        many_plane_sweep([1.0], [-1.0], 10)


def test_fit_slope_recovers_a_power_law() -> None:
    n = np.geomspace(10, 10**6, 30)
    fit = fit_slope(n, 3.0 * n**-0.75)
    assert fit.slope == pytest.approx(-0.75, abs=1e-12)
    with pytest.raises(InputError):
        fit_slope(n, -n)


def test_normalised_dirichlet_matches_the_symbolic_form() -> None:
    import sympy as sp

    from ropeproof.theory._dirichlet import A_SYM, Q_SYM

    d = dirichlet_bound(3)
    assert sp.simplify(d.raw - d.stable) == 0
    q = d.q_of(999)
    assert q == 9 and float(d.stable.subs({A_SYM: 1, Q_SYM: q})) == pytest.approx(d.value(999), rel=1e-15)
    assert dirichlet_normalised(1000, 3)[0] == pytest.approx(2 * math.sin(math.pi / 9) ** 2, rel=1e-15)
    assert dirichlet_normalised(5, 3)[0] == 2.0  # Q = 1: only the trivial bound


# ------------------------------------------------------------------------------------------- search


def test_batch_margins_agree_with_the_exact_sweep() -> None:
    import torch

    rng = np.random.default_rng(0)
    f = rng.uniform(0, math.pi, (5, 3))
    a = rng.uniform(0.1, 1, (5, 3))
    got = batch_margins(torch.as_tensor(f), torch.as_tensor(a), 200).numpy()
    want = [exact_margin(f[i], a[i], 200) for i in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_one_plane_search_finds_the_optimum() -> None:
    """K = 1: min_{m < n0} ||m theta|| <= 2 pi / n0 (n0 points on the circle), attained at 2 pi / n0."""
    r = search_best_index(1, 40, candidates=64, refine=1, steps=20)
    assert r.margin == pytest.approx(2 * math.sin(math.pi / 40) ** 2, rel=1e-12)
    assert r.bracketed


def test_searched_constructions_are_bracketed() -> None:
    r = search_best_index(3, 100, candidates=64, refine=2, steps=40, seed=3)
    assert r.mixed_radix <= r.margin * (1 + 1e-12) <= r.dirichlet * (1 + 1e-12)
    for key in best_known_table():
        stored = best_known(*key)
        assert stored.bracketed, key
    with pytest.raises(InputError):
        best_known(3, 17)

"""T_Index streaming prefix minima and their enclosures, against mpmath and against each other."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._index_sweep import (
    MAX_KEPT_PLANES,
    GapPrefix,
    gap_error_cap,
    index_sweep,
    iter_index_blocks,
    stable_gaps,
    stable_gaps_with_error,
)


@settings(max_examples=25)
@given(
    freqs=st.lists(st.floats(-1e9, 1e9, allow_nan=False), min_size=1, max_size=3),
    amps=st.lists(st.floats(0.0, 2.0), min_size=3, max_size=3),
    m=st.lists(st.integers(1, 2**26 - 1), min_size=1, max_size=5),
)
def test_gap_enclosure_contains_the_exact_gap(freqs, amps, m) -> None:
    """|g - g_exact| <= err for g(m) = sum_k 2 a_k sin(m theta_k / 2)^2 (exact g in mpmath, 80 digits)."""
    a = amps[: len(freqs)]
    ms = np.array(m, dtype=np.float64)
    g, err = stable_gaps_with_error(freqs, a, ms)
    assert np.array_equal(g, stable_gaps(freqs, a, ms))
    with mpmath.workdps(80):
        for mi, gi, ei in zip(m, g.tolist(), err.tolist(), strict=True):
            exact = sum(
                2 * mpmath.mpf(ak) * mpmath.sin(mi * mpmath.mpf(t) / 2) ** 2
                for t, ak in zip(freqs, a, strict=True)
            )
            assert abs(mpmath.mpf(gi) - exact) <= ei


@pytest.mark.parametrize("theta", [0.866, 1e-6, 2.0944, 1e12])
def test_blocks_do_not_depend_on_how_the_range_is_cut(theta: float) -> None:
    whole = next(iter_index_blocks([theta], None, 2, 5000, 10**6, with_error=True))
    for block, start in ((97, 2), (1000, 2), (333, 1234)):
        parts = list(iter_index_blocks([theta], None, start, 5000, block, with_error=True))
        sl = slice(start - 2, None)
        for name in ("gap_sup", "margin_inf", "closest", "closest_sup", "margin_lo", "margin_hi", "sup_lo"):
            got = np.concatenate([getattr(p, name) for p in parts])
            assert np.array_equal(got, getattr(whole, name)[sl]), name
    sweep = index_sweep([theta], [1.0], 5000)
    assert np.array_equal(sweep.margin_inf, whole.margin_inf) and np.array_equal(sweep.gap_sup, whole.gap_sup)


def test_prefix_enclosure_brackets_the_value_and_the_argmin_attains_it() -> None:
    blk = next(iter_index_blocks([0.3, 0.0271], [1.0, 0.5], 2, 3000, 10**6, with_error=True))
    assert np.all(blk.margin_lo <= blk.margin_inf) and np.all(blk.margin_inf <= blk.margin_hi)
    np.testing.assert_array_equal(
        stable_gaps([0.3, 0.0271], [1.0, 0.5], blk.closest.astype(float)), blk.margin_inf
    )
    assert np.all(blk.closest <= blk.n - 1) and np.all(blk.closest_sup <= (blk.n - 1 + 1) // 2)


def test_gap_prefix_refuses_to_go_back() -> None:
    p = GapPrefix(np.array([0.5]), np.array([1.0]))
    p.values(1, 10)
    p.values(10, 12)  # repeating the last offset is allowed
    with pytest.raises(InputError, match="goes back"):
        p.values(5, 20)
    with pytest.raises(InputError, match="2 <= start"):
        next(iter_index_blocks([0.5], None, 1, 10))


def test_amplitudes_whose_gap_overflows_are_refused() -> None:
    """Issue 32: index_sweep([0.866], [1e308]) raised IndexError (2 * 1e308 overflowed to inf). The gap
    g(m) <= 2 sum(amps) must be a finite float64: a one-line InputError names amps and the range; the
    largest accepted sum still sweeps, against mpmath."""
    from ropeproof.machinery._errors import InputError
    from ropeproof.verify.measure.exact._index_sweep import AMPS_SUM_LIMIT

    for amps in ([1e308], [8e307, 8e307], [float("inf")], ["a"], [[1.0, 2.0], [3.0]], [None]):
        with pytest.raises(InputError, match=r"amps") as err:
            index_sweep([0.866], amps, 10)
        assert "\n" not in str(err.value)
    with pytest.raises(InputError, match=r"^freqs and amps must be sequences of real numbers"):
        index_sweep(["x"], None, 10)
    sweep = index_sweep([0.866], [AMPS_SUM_LIMIT], 6)
    with mpmath.workdps(40):
        want = min(
            2 * mpmath.mpf(AMPS_SUM_LIMIT) * mpmath.sin(m * mpmath.mpf(0.866) / 2) ** 2 for m in range(1, 6)
        )
    assert float(sweep.margin_inf[-1]) == pytest.approx(float(want), rel=1e-14)


def every_offset_fold(
    freqs: list[float], amps: list[float], last: int, with_error: bool
) -> tuple[np.ndarray, ...]:
    """The prefix minimum, its first argmin and its enclosure for M = 1 .. last, folding the error bound
    of every offset (what GapPrefix computed before it bounded only the candidates)."""
    m = np.arange(1, last + 1, dtype=np.float64)
    g, e = stable_gaps_with_error(freqs, amps, m) if with_error else (stable_gaps(freqs, amps, m), 0.0 * m)
    vals = np.minimum.accumulate(g)
    args, best, arg = np.zeros(g.size, dtype=np.int64), np.inf, 0
    for i, gi in enumerate(g.tolist()):  # the first offset attaining the running minimum
        if gi < best:
            best, arg = gi, i + 1
        args[i] = arg
    lo = np.minimum.accumulate(np.maximum(np.nextafter(g - e, -np.inf), 0.0))
    hi = np.minimum.accumulate(np.nextafter(g + e, np.inf))
    return vals, args, lo, hi


THETAS = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, width=64),
    st.sampled_from([0.0, 1e-9, 1e-13, 2 * np.pi, 2 * np.pi / 3, np.pi, 0.866, 2.399963229728653]),
)


@settings(max_examples=40, deadline=None)
@given(
    freqs=st.lists(THETAS, min_size=1, max_size=MAX_KEPT_PLANES + 1),
    amps=st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=MAX_KEPT_PLANES + 1),
    last=st.integers(1, 3000),
    cuts=st.lists(st.integers(1, 3000), max_size=4),
    chunk=st.integers(1, 1200),
    with_error=st.booleans(),
)
def test_the_candidates_fold_equals_folding_every_offset(freqs, amps, last, cuts, chunk, with_error) -> None:
    """GapPrefix evaluates the error bound only at offsets near the running minimum (the rest provably
    change nothing); its values, argmins, enclosures and records equal folding every offset's bound,
    bit for bit, however the range and the chunks are cut (and with more planes than it keeps sines
    for, where it bounds every offset)."""
    a = amps[: len(freqs)]
    want = every_offset_fold(freqs, a, last, with_error)
    prefix = GapPrefix(np.array(freqs), np.array(a), with_error, chunk=chunk)
    got, lo = [], 1
    for hi in sorted({c for c in cuts if c < last} | {last}):  # each call after the first repeats an offset
        got.append(prefix.values(lo, hi) if lo == 1 else [x[1:] for x in prefix.values(lo - 1, hi)])
        lo = hi + 1
    for name, w, parts in zip(("G", "argmin", "G_lo", "G_hi"), want, zip(*got, strict=True), strict=True):
        assert np.array_equal(np.concatenate(parts), w), name
    everywhere = np.arange(1, last + 1)
    for name, w, g in zip(("G", "argmin", "G_lo", "G_hi"), want, prefix.earlier(everywhere), strict=True):
        assert np.array_equal(g, w), name
    backwards = prefix.earlier(everywhere[::-1])  # any order of offsets (no run structure)
    assert all(np.array_equal(g, w[::-1]) for g, w in zip(backwards, want, strict=True))
    g_, lo_, hi_ = want[0], want[2], want[3]
    err = np.maximum(g_ - lo_, hi_ - g_)  # the judge's rounded ends, elementwise
    for increasing, m in ((True, everywhere), (False, everywhere[::-1])):
        low_end, high_end = prefix.earlier(m, increasing=increasing, ends=True)[4:]
        assert np.array_equal(low_end, (g_ - err)[m - 1], equal_nan=True)
        assert np.array_equal(high_end, (g_ + err)[m - 1], equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(freqs=st.lists(THETAS, min_size=1, max_size=3), last=st.integers(1, 2**26 - 1))
def test_the_gap_error_cap_covers_the_reported_bounds(freqs: list[float], last: int) -> None:
    """gap_error_cap >= stable_gaps_with_error's bound at the offsets up to ``last`` (its last 2^12 and
    2^12 spread below): the bound the candidates' threshold uses."""
    amps = [1.0, 0.25, 2.0][: len(freqs)]
    m = np.unique(np.r_[np.linspace(1, last, 2**12).round(), np.arange(max(1, last - 2**12), last + 1)])
    _, err = stable_gaps_with_error(freqs, amps, m)
    assert float(err.max()) <= gap_error_cap(freqs, amps, last)
    assert gap_error_cap(freqs, amps, 2**26) == np.inf


def fold_of(g: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, ...]:
    """Prefix minimum, first argmin (offset from 1) and enclosure of gaps ``g`` with errors ``e``."""
    args, best, arg = np.zeros(g.size, dtype=np.int64), np.inf, 0
    for i, gi in enumerate(g.tolist()):
        if gi < best:
            best, arg = gi, i + 1
        args[i] = arg
    lo = np.minimum.accumulate(np.maximum(np.nextafter(g - e, -np.inf), 0.0))
    hi = np.minimum.accumulate(np.nextafter(g + e, np.inf))
    return np.minimum.accumulate(g), args, lo, hi


@settings(max_examples=200, deadline=None)
@given(
    levels=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
    picks=st.lists(
        st.tuples(st.integers(0, 5), st.integers(-8, 8), st.floats(0.0, 1.0)), min_size=1, max_size=300
    ),
    cap=st.sampled_from([0.0, 5e-324, 1e-17, 1e-15, 1e-3]),
    chunk=st.integers(1, 64),
)
def test_offsets_away_from_the_running_minimum_change_nothing(levels, picks, cap, chunk) -> None:
    """The candidates' rule itself, on gaps built to tie: a few levels, each offset at one of them moved
    by a multiple of ``cap / 4`` (near ties inside and outside the error band) with an error up to
    ``cap``; folding only the candidates' errors equals folding every offset's, bit for bit."""
    g = np.array([max(0.0, levels[i % len(levels)] + k * cap / 4) for i, k, _ in picks])
    e = np.array([f * cap for _, _, f in picks])
    prefix = GapPrefix(np.array([0.5]), np.array([1.0]), True)
    parts = []
    for start in range(0, g.size, chunk):
        piece = g[start : start + chunk]

        def error_at(at: np.ndarray, start: int = start) -> np.ndarray:
            return e[at + start]

        parts.append(prefix._fold_gaps(start + 1, piece, cap, error_at)[:4])
    for name, want, got in zip(
        ("G", "argmin", "G_lo", "G_hi"), fold_of(g, e), zip(*parts, strict=True), strict=True
    ):
        assert np.array_equal(np.concatenate(got), want), name


def test_only_offsets_near_the_running_minimum_have_their_error_bound_evaluated() -> None:
    """What makes the fold cheap: gaps that rise past the error band are never candidates, and one
    that comes back within the band of the minimum is."""
    asked: list[np.ndarray] = []
    g = np.r_[np.arange(1.0, 1001.0), 1.0 + 1e-16, 1.5]
    prefix = GapPrefix(np.array([0.5]), np.array([1.0]), True)
    prefix._fold_gaps(1, g, 1e-15, lambda at: asked.append(at) or np.zeros(at.size))
    assert asked[0].tolist() == [0, 1000]

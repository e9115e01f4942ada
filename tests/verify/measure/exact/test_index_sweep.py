"""T_Index streaming prefix minima and their enclosures, against mpmath and against each other."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._index_sweep import (
    GapPrefix,
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

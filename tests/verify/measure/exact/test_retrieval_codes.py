"""O(1) candidate codes of T_Retrieval against scans over every code (issue 28, item 3)."""

from __future__ import annotations

import math
import time

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError, MemoryBudgetError
from ropeproof.machinery._memory_budget import ENV_VAR
from ropeproof.verify.measure.exact._angles import reduced_angles_with_error
from ropeproof.verify.measure.exact._discrepancy import _gap_inf_config
from ropeproof.verify.measure.exact._retrieval_codes import (
    MAX_ALPHABET,
    TABLE_CODES,
    WINDOW,
    CodeAngles,
    clear_margin,
    code_position,
    code_table,
    code_values,
    extremes,
    window,
    window_extremes,
)
from ropeproof.verify.measure.exact._retrieval_gap_inf import gap_inf_enumerated, gap_inf_values, min_top_gap
from ropeproof.verify.measure.exact._retrieval_sweep import (
    query_logits,
    retrieval_distance_logits,
    retrieval_sweep,
)


def full_scan(alphabet: int, theta: float, d: np.ndarray):
    """Every code's value at every distance: the extremes and their first (smallest) codes."""
    r, _ = reduced_angles_with_error(np.asarray(d, dtype=np.float64), theta)
    codes = np.broadcast_to(np.arange(1, alphabet)[:, None], (alphabet - 1, r.size))
    table = code_values(code_table(alphabet), r, codes)
    return table.max(0), table.argmax(0) + 1, table.min(0), table.argmin(0) + 1, table


def special_thetas(alphabet: int) -> list[float]:
    """Angles where codes tie: d theta / omega at integers and half-integers, and the antipode."""
    w = 2 * math.pi / alphabet
    return [0.0, w, w / 2, w / 3, math.pi, math.pi / 2, 2 * math.pi, -w, 3 * w / 2, 1e-17, 1e17]


@settings(max_examples=60, deadline=None)
@given(
    alphabet=st.integers(2, 400),
    theta=st.one_of(st.floats(-10, 10, allow_nan=False), st.floats(-1e18, 1e18, allow_nan=False)),
    first=st.integers(1, 10**6),
)
@example(alphabet=8, theta=0.0, first=1)
@example(alphabet=7, theta=0.0, first=1)
@example(alphabet=2, theta=0.3, first=1)
def test_candidates_equal_the_full_scan(alphabet: int, theta: float, first: int) -> None:
    """H, L and their codes (ties to the smallest code) are bit for bit those of a scan over every
    code, at distances near ``first`` and at the edge distances 1 and 2^26 - 1."""
    d = np.concatenate([np.arange(first, first + 40), [1, 2, 2**26 - 1]])
    lg = retrieval_distance_logits(alphabet, theta, d)
    h, hc, low, lc, _ = full_scan(alphabet, theta, d)
    assert np.array_equal(lg.h, h) and np.array_equal(lg.h_code, hc)
    assert np.array_equal(lg.low, low) and np.array_equal(lg.low_code, lc)


@pytest.mark.parametrize("alphabet", [2, 3, 4, 5, 6, 8, 9, 30, 1000])
def test_ties_and_special_angles(alphabet: int) -> None:
    """Exact ties (theta = 0: codes 1 and A - 1; the antipode of an odd alphabet) go to the smallest
    code, as argmax over every code did, and the query's extremes match the scan."""
    d = np.arange(1, 200)
    for theta in special_thetas(alphabet):
        lg = retrieval_distance_logits(alphabet, theta, d)
        h, hc, low, lc, _ = full_scan(alphabet, theta, d)
        assert np.array_equal(lg.h_code, hc) and np.array_equal(lg.low_code, lc), theta
        assert np.array_equal(lg.h, h) and np.array_equal(lg.low, low), theta
    lg = retrieval_distance_logits(alphabet, 0.0, np.array([1]))
    if alphabet > 2:
        assert int(lg.h_code[0]) == 1  # tied with A - 1
    s_hi, c_hi, s_lo, c_lo, *_ = query_logits(alphabet)
    v = np.cos(np.sum(code_table(alphabet).angles(np.arange(1, alphabet)), axis=0))
    assert (s_hi, c_hi, s_lo, c_lo) == (v.max(), v.argmax() + 1, v.min(), v.argmin() + 1)


@pytest.mark.parametrize(("alphabet", "theta"), [(5, 0.7), (8, 0.0027), (1000, 1e-4), (20011, 0.3)])
def test_extremes_contain_the_mpmath_values(alphabet: int, theta: float) -> None:
    """Against mpmath at 40 digits over every code: |value - exact| <= err (H and L)."""
    d = np.array([1, 2, 17, 999, 123457])
    lg = retrieval_distance_logits(alphabet, theta, d)
    with mpmath.workdps(40):
        w, t = 2 * mpmath.pi / alphabet, mpmath.mpf(theta)
        for i, dd in enumerate(d.tolist()):
            # the extremes over every code sit next to x = d theta / omega and its antipode (checked
            # in float by the tests above); mpmath scores a wide band there, and all codes for small A
            x = int(mpmath.nint(dd * t / w))
            band = range(1, alphabet) if alphabet <= 1000 else [x + j for j in range(-50, 51)]
            band_far = (
                range(1, alphabet) if alphabet <= 1000 else [x + alphabet // 2 + j for j in range(-50, 51)]
            )
            hx = max(mpmath.cos(c * w - dd * t) for c in band if c % alphabet)
            lx = min(mpmath.cos(c * w - dd * t) for c in band_far if c % alphabet)
            assert abs(lg.h[i] - hx) <= lg.err[i] and abs(lg.low[i] - lx) <= lg.err[i], dd


@pytest.mark.parametrize(
    "alphabet", [TABLE_CODES + 2, 10**6 + 3, 10**8, pytest.param(MAX_ALPHABET, marks=pytest.mark.slow)]
)
def test_two_level_angles_are_within_their_bound(alphabet: int) -> None:
    angles = CodeAngles(alphabet)
    assert angles.table is None and angles.error < 1e-28
    rng = np.random.default_rng(alphabet % 1000)
    codes = np.concatenate(
        [[1, 2, alphabet // 2, alphabet // 2 + 1, alphabet - 1], rng.integers(1, alphabet, 200)]
    )
    hi, lo = angles.angles(codes)
    assert np.all(np.abs(lo) <= angles.lo_max)
    with mpmath.workprec(300):
        for c, h, low in zip(codes.tolist(), hi.tolist(), lo.tolist(), strict=True):
            s = c if 2 * c <= alphabet else c - alphabet
            exact = 2 * mpmath.pi * s / alphabet
            assert abs(exact - mpmath.mpf(h) - mpmath.mpf(low)) <= angles.error


def test_two_level_candidates_equal_the_full_scan() -> None:
    """Past the table (two-level angles) the candidates still pick the scan's extremes and codes."""
    alphabet = TABLE_CODES + 2011
    for theta in (0.3, 1e-5, 2 * math.pi / alphabet, 0.0):
        d = np.array([1, 2, 3, 1000, 77777])
        lg = retrieval_distance_logits(alphabet, theta, d)
        h, hc, low, lc, _ = full_scan(alphabet, theta, d)
        assert np.array_equal(lg.h, h) and np.array_equal(lg.h_code, hc)
        assert np.array_equal(lg.low, low) and np.array_equal(lg.low_code, lc)


@settings(max_examples=80, deadline=None)
@given(
    alphabet=st.sampled_from([12, 13, 30, 257, 1000, 1001, TABLE_CODES + 2011, 10**6 + 3, 10**8]),
    theta=st.one_of(
        st.floats(-10, 10, allow_nan=False),
        st.floats(-1e18, 1e18, allow_nan=False),
        st.tuples(st.integers(-7, 7), st.sampled_from([1, 2, 3, 4])),
    ),
    first=st.integers(1, 2**26 - 3000),
)
@example(alphabet=1000, theta=(1, 2), first=1)  # d theta / omega = d / 2: every odd d is a tie
@example(alphabet=12, theta=(1, 2), first=1)
@example(alphabet=13, theta=(13, 2), first=1)  # theta = pi: the antipode on codes and half-codes
@example(alphabet=1000, theta=0.0, first=1)  # the nearest code is the excluded 0
def test_nearest_code_shortcut_is_the_window(
    alphabet: int, theta: float | tuple[int, int], first: int
) -> None:
    """extremes (one code per clear row) equals window_extremes (the whole window on every row) bit for
    bit, values and codes, on random angles and on angles built to tie (``theta = k omega / q``, so
    positions at integers, half-integers and thirds, the excluded code 0, the antipode). On every clear
    row the nearest code's computed value is strictly above (H; below for L) each other window code's:
    the proposition of clear_margin, checked as stated."""
    if isinstance(theta, tuple):
        theta = theta[0] * 2 * math.pi / alphabet / theta[1]
    d = np.concatenate([np.arange(first, first + 2000), [1, 2, 2**26 - 1]]).astype(np.float64)
    r, _ = reduced_angles_with_error(d, theta)
    angles = code_table(alphabet)
    fast, slow = extremes(angles, r), window_extremes(angles, r)
    for a, b in zip(fast, slow, strict=True):
        assert np.array_equal(a, b)
    tau = clear_margin(angles, r)
    assert math.isinf(tau) == (alphabet >= 10**8)
    x = code_position(alphabet, r)
    for position, sign in ((x, 1.0), (x + alphabet / 2, -1.0)):
        k = np.rint(position)
        clear = (np.abs(position - k) <= 0.5 - tau) & (k.astype(np.int64) % alphabet != 0)
        near = window(alphabet, position)
        values = np.where(near == 0, -math.inf, sign * code_values(angles, r, near))  # 0 is no code
        centre = values[WINDOW]
        others = np.delete(values, WINDOW, axis=0)
        assert np.all(centre[clear][None, :] > others[:, clear])


def test_nearest_code_shortcut_engages_and_leaves_ties_to_the_window() -> None:
    """At |ALPH| = 1000 the shortcut clears almost every row (tau ~ 5e-10); rows built to tie (the
    position on a half-integer) are not clear and go to the window, whose pick keeps the smallest code,
    as a scan over every code does."""
    alphabet = 1000
    angles = code_table(alphabet)
    tau = clear_margin(angles, np.array([math.pi]))
    assert 0 < tau < 1e-9
    top = np.array([math.pi])  # the docstring's range: finite up to 2 10^7, none from 3 10^7
    assert clear_margin(code_table(2 * 10**7), top) < 0.25 and math.isinf(
        clear_margin(code_table(3 * 10**7), top)
    )
    d = np.arange(1, 4001, dtype=np.float64)
    r, _ = reduced_angles_with_error(d, 2 * math.pi / alphabet / 2)  # x = d / 2
    x = code_position(alphabet, r)
    clear = np.abs(x - np.rint(x)) <= 0.5 - tau
    assert clear[1::2].all() and not clear[::2].any()  # even d: x an integer; odd d: a half-integer
    h, hc, low, lc, _ = full_scan(alphabet, 2 * math.pi / alphabet / 2, d)
    got = extremes(angles, r)
    assert np.array_equal(got[0], h) and np.array_equal(got[1], hc)
    assert np.array_equal(got[2], low) and np.array_equal(got[3], lc)


def enumerated_over_every_code(alphabet: int, theta: float, n: int):
    """gap_inf by the enumeration over every code (the former implementation)."""
    d = np.arange(1, n, dtype=np.float64)
    r, _ = reduced_angles_with_error(d, theta)
    angles = code_table(alphabet)
    codes = np.arange(1, alphabet)
    table = code_values(angles, r, np.broadcast_to(codes[:, None], (codes.size, r.size))).T
    s = code_values(angles, np.zeros(1), codes[:, None])[:, 0]
    t = np.cos(r)
    best = (math.inf, (), 0)
    for d_t in range(1, n):
        sets = [s if dist == 0 else np.array([t[d_t - 1]]) if dist == d_t else table[dist - 1]
                for dist in range(n - 1, -1, -1)]  # fmt: skip
        value, pa, ga, pb, gb = _gap_inf_config(sets)
        if value < best[0]:
            out = [int(np.argmin(x)) + 1 for x in sets]
            out[pa], out[pb] = ga + 1, gb + 1
            out[n - 1 - d_t] = -1
            best = (float(value), tuple(out), d_t)
    return best


GAP_CASES = [
    (8, 0.0027, 40),
    (4, 0.9, 12),
    (4, 2.9, 12),  # the target's low is not the largest for some d_t: every code enumerated
    (3, 0.1, 25),
    (1000, 1e-3, 12),
    (2000, 0.05, 10),  # arcs of ~290 codes: scan 1 reads many values per key
    (30, 0.05, 30),
    (8, 0.0, 20),
    (6, math.pi / 3, 15),  # exact ties: gap 0
    (2, 0.05, 30),
    (7, 2 * math.pi / 7, 20),
    (64, math.pi, 12),
    (1000, 0.01, 12),
]


@pytest.mark.parametrize(("alphabet", "theta", "n"), GAP_CASES)
def test_gap_inf_equals_the_enumeration_over_every_code(alphabet: int, theta: float, n: int) -> None:
    assert gap_inf_enumerated(alphabet, theta, n) == enumerated_over_every_code(alphabet, theta, n)


@settings(max_examples=80, deadline=None)
@given(
    sets=st.lists(
        st.lists(st.integers(-6, 6).map(lambda k: k / 4), min_size=1, max_size=6), min_size=2, max_size=6
    )
)
def test_min_top_gap_is_the_enumerations_scan(sets: list[list[float]]) -> None:
    """The vectorised scans equal ``_gap_inf_config`` on arbitrary sets, ties included (values on a
    coarse grid, so equal values across and within positions are common)."""
    arrays = [np.array(s) for s in sets]
    v = np.concatenate(arrays)
    p = np.concatenate([np.full(len(s), i) for i, s in enumerate(sets)])
    g = np.concatenate([np.arange(len(s)) for s in sets])
    lows = np.array([min(s) for s in sets])
    assert min_top_gap(v, p, g, lows) == _gap_inf_config(arrays)


def test_alphabet_of_a_hundred_million_is_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22's ``--alphabet 100000000 --lengths 2:5`` grew past 6.7 GB; now the per-distance work
    and the gap_inf candidates are O(1) and O(n d theta |ALPH|) with an estimate before allocating."""
    start = time.perf_counter()
    ex = retrieval_sweep(10**8, 0.0027, 4)
    assert time.perf_counter() - start < 20
    assert np.all(ex.margin_inf < 0) and np.all(ex.gap_inf_exact)
    monkeypatch.setenv(ENV_VAR, "1MB")
    with pytest.raises(MemoryBudgetError, match=r"gap_inf at n = 4 with \|ALPH\| = 100000000"):
        gap_inf_enumerated(10**8, 0.0027, 4)


def test_alphabet_limits() -> None:
    with pytest.raises(InputError, match="at most 2\\^32"):
        retrieval_sweep(MAX_ALPHABET + 1, 0.1, 10)
    with pytest.raises(InputError, match="alphabet_size"):
        retrieval_sweep(1, 0.1, 10)


@settings(max_examples=60, deadline=None)
@given(
    alphabet=st.sampled_from([2, 3, 4, 5, 6, 8, 12, 33, 100, 257, 1000]),
    theta=st.one_of(
        st.floats(-4, 4, allow_nan=False),
        st.sampled_from([0.0, math.pi, math.pi / 3, 1e-17, 1e17, 2 * math.pi / 5]),
    ),
    n=st.integers(2, 24),
)
def test_gap_inf_sorted_once_is_the_per_distance_scan(alphabet: int, theta: float, n: int) -> None:
    """Issue 35: with the target on top, every code is sorted once per length and each target distance
    answered from that order (runs and a sparse table); the result is the per-distance scan's, bit for
    bit, ties and codes included."""
    import ropeproof.verify.measure.exact._retrieval_gap_inf as module

    fast = gap_inf_enumerated(alphabet, theta, n)
    saved = module.SORTED_ENTRIES
    try:
        module.SORTED_ENTRIES = 0
        slow = gap_inf_enumerated(alphabet, theta, n)
    finally:
        module.SORTED_ENTRIES = saved
    assert fast == slow or (math.isnan(fast[0]) and math.isnan(slow[0]))


@pytest.mark.parametrize(("alphabet", "theta", "n"), GAP_CASES)
def test_grown_gap_inf_is_the_enumeration_over_every_code(alphabet: int, theta: float, n: int) -> None:
    """Issue 35: gap_inf grown one distance at a time (every length up to ``n``) is the enumeration's
    value at each length, bit for bit."""
    lengths = list(range(2, n + 1))
    assert gap_inf_values(alphabet, theta, lengths) == [
        enumerated_over_every_code(alphabet, theta, m)[0] for m in lengths
    ]


@settings(max_examples=60, deadline=None)
@given(
    alphabet=st.sampled_from([2, 3, 4, 5, 6, 8, 12, 33, 100, 257, 1000]),
    theta=st.one_of(
        st.floats(-4, 4, allow_nan=False),
        st.sampled_from([0.0, math.pi, math.pi / 3, 1e-17, 1e17, 2 * math.pi / 5, 2 * math.pi / 12]),
    ),
    lengths=st.lists(st.integers(2, 30), min_size=1, max_size=8),
    limit=st.sampled_from([None, 0, 40]),
)
def test_grown_gap_inf_is_the_per_length_enumeration(
    alphabet: int, theta: float, lengths: list[int], limit: int | None
) -> None:
    """Issue 35: the incremental gap_inf (a sorted list grown by one distance per length, scan 1 kept
    per target distance) equals gap_inf_enumerated at each asked length, in any order and with
    repeats, including lengths past SORTED_ENTRIES (enumerated instead)."""
    import ropeproof.verify.measure.exact._retrieval_gap_inf as module

    saved = module.SORTED_ENTRIES
    try:
        if limit is not None:
            module.SORTED_ENTRIES = limit * (alphabet - 1)
        fast = gap_inf_values(alphabet, theta, lengths)
    finally:
        module.SORTED_ENTRIES = saved
    assert fast == [gap_inf_enumerated(alphabet, theta, m)[0] for m in lengths]

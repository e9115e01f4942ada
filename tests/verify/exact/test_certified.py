"""Certified bound checks: enclosures contain mpmath ground truth, statuses agree with the float
checks where those decide, ties are resolved by identity only, and nothing undecided passes."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.theory.errors import InputError
from ropeproof.verify.exact.certified import (
    certified_dirichlet,
    certified_index,
    certified_retrieval,
    enclose_index_gaps,
    enclose_retrieval_terms,
    judge,
    prefix_top2,
    retrieval_margin_interval,
)
from ropeproof.verify.exact.sweep import sweep_index, sweep_retrieval


@settings(max_examples=10)
@given(
    freqs=st.lists(st.floats(0.0, 7.0), min_size=1, max_size=3),
    amp_seed=st.integers(0, 2**16),
)
def test_index_gap_enclosures_contain_mpmath_values(freqs, amp_seed) -> None:
    amps = np.random.default_rng(amp_seed).uniform(0, 2, len(freqs))
    lo, hi = enclose_index_gaps(freqs, amps, 60)
    assert np.all(lo <= hi) and np.all((hi - lo) <= 1e-15 * np.maximum(1.0, np.abs(hi)))
    with mpmath.workdps(50):
        for m in (1, 2, 17, 60):
            g = sum(
                2 * mpmath.mpf(float(a)) * mpmath.sin(m * mpmath.mpf(float(t)) / 2) ** 2
                for t, a in zip(freqs, amps, strict=True)
            )
            assert mpmath.mpf(lo[m - 1]) <= g <= mpmath.mpf(hi[m - 1])


@pytest.mark.parametrize(("alphabet", "theta"), [(8, 0.0027), (5, 0.31), (3, 2.0), (8, 0.0)])
def test_retrieval_term_enclosures_contain_mpmath_values(alphabet, theta) -> None:
    (t_lo, t_hi), (o_lo, o_hi), s = enclose_retrieval_terms(alphabet, theta, 40)
    with mpmath.workdps(50):
        th, om = mpmath.mpf(theta), 2 * mpmath.pi / alphabet
        assert mpmath.mpf(s[0]) <= max(mpmath.cos(c * om) for c in range(1, alphabet)) <= mpmath.mpf(s[1])
        for d in (1, 7, 40):
            t = mpmath.cos(d * th)
            o = max(mpmath.cos(c * om - d * th) for c in range(1, alphabet))
            assert mpmath.mpf(t_lo[d - 1]) <= t <= mpmath.mpf(t_hi[d - 1])
            assert mpmath.mpf(o_lo[d - 1]) <= o <= mpmath.mpf(o_hi[d - 1])


def brute_retrieval_margin(alphabet: int, theta: float, n: int) -> mpmath.mpf:
    """margin_inf(n) by enumerating every input of the Retrieval family (left letters only matter)."""
    with mpmath.workdps(40):
        th, om = mpmath.mpf(theta), 2 * mpmath.pi / alphabet
        worst = None
        for y, x in itertools.permutations(range(alphabet), 2):
            for d_t in range(1, n):
                others = [c for c in range(alphabet) if c != y]
                for letters in itertools.product(others, repeat=n - 2):
                    comp = [mpmath.cos((x - y) * om)]  # the query's own key, distance 0
                    dist = [d for d in range(1, n) if d != d_t]
                    comp += [mpmath.cos((c - y) * om - d * th) for c, d in zip(letters, dist, strict=True)]
                    m = mpmath.cos(d_t * th) - max(comp)
                    worst = m if worst is None or m < worst else worst
        return worst


@pytest.mark.parametrize(("alphabet", "theta", "n"), [(3, 0.4, 5), (4, 0.05, 5), (3, 1.7, 5)])
def test_retrieval_margin_interval_contains_brute_force(alphabet, theta, n) -> None:
    t, o, s = enclose_retrieval_terms(alphabet, theta, n - 1)
    lo, hi, _ = retrieval_margin_interval(t, o, s)
    truth = brute_retrieval_margin(alphabet, theta, n)
    assert mpmath.mpf(lo[-1]) <= truth <= mpmath.mpf(hi[-1])


@pytest.mark.parametrize(("alphabet", "theta"), [(8, 0.0027), (4, 0.3), (6, 1.3)])
def test_retrieval_margin_interval_matches_the_family_engine(alphabet, theta) -> None:
    chk = certified_retrieval(alphabet, theta, 300)
    cmp = chk.comparisons["margin_inf"]
    engine = sweep_retrieval(alphabet, theta, 300, gap_inf_limit=2).columns["margin_inf"]
    # the engine is float64 (a few ulps); the enclosure is rigorous and a few ulps wide
    tol = 1e-15 * np.maximum(1.0, np.abs(engine))
    assert np.all(cmp.measured_lo - tol <= engine) and np.all(engine <= cmp.measured_hi + tol)
    assert np.all(cmp.measured_hi - cmp.measured_lo <= 2e-15)


def test_index_statuses_agree_with_the_float_checks() -> None:
    chk = certified_index(0.866, 1500)
    table = sweep_index(0.866, 1500)
    for q, col in (("margin_inf", "bound_holds_margin_inf"), ("gap_sup", "bound_holds")):
        st_ = chk.comparisons[q].status
        assert "undecided" not in set(st_)
        certified_ok = np.isin(st_, ["holds", "holds-equal"])
        assert certified_ok.tolist() == [x is True for x in table.columns[col]]
    # n = 2, 3: margin = g(1) = 1 - cos(theta) = the bound, proved by identity, not by intervals
    assert chk.comparisons["margin_inf"].status[:2].tolist() == ["holds-equal", "holds-equal"]
    assert int(chk.comparisons["margin_inf"].violated_n[0]) == 4


def test_retrieval_theta_zero_is_equal_by_identity_and_theta_positive_violates() -> None:
    zero = certified_retrieval(8, 0.0, 500).comparisons["margin_inf"]
    assert set(zero.status) == {"holds-equal"} and zero.verdict() == "holds"
    pos = certified_retrieval(8, 0.0027, 500).comparisons["margin_inf"]
    table = sweep_retrieval(8, 0.0027, 500)
    assert np.isin(pos.status, ["holds"]).tolist() == [
        x is True for x in table.columns["bound_holds_margin_inf"]
    ]
    assert pos.verdict() == "violated" and int(pos.violated_n[0]) == 2


def test_judge_never_passes_an_undecided_row() -> None:
    n = np.array([2, 3, 4, 5])
    meas = (np.array([0.0, 1.0, 2.0, 1.0]), np.array([0.5, 1.5, 2.5, 1.0]))
    bound = (np.array([1.0, 1.2, 1.0, 1.0]), np.array([1.1, 1.3, 1.5, 1.0]))
    cmp = judge("t", "r", n, meas, bound)
    assert cmp.status.tolist() == ["holds", "undecided", "violated", "holds"]
    assert cmp.verdict() == "violated"
    cmp = judge("t", "r", n[:2], (meas[0][:2], meas[1][:2]), (bound[0][:2], bound[1][:2]))
    assert cmp.verdict() == "unresolvable"
    cmp = judge(
        "t", "r", n[:2], (meas[0][:2], meas[1][:2]), (bound[0][:2], bound[1][:2]), identity=lambda n_: n_ == 3
    )
    assert cmp.status.tolist() == ["holds", "holds-equal"] and cmp.verdict() == "holds"
    refine = lambda n_: ((1.0, 1.05), (1.1, 1.2))  # noqa: E731
    cmp = judge("t", "r", n[:2], (meas[0][:2], meas[1][:2]), (bound[0][:2], bound[1][:2]), refine=refine)
    assert cmp.status.tolist() == ["holds", "holds"]


@settings(max_examples=8)
@given(freqs=st.lists(st.floats(0.0, 3.2), min_size=1, max_size=3), seed=st.integers(0, 999))
def test_certified_dirichlet_holds_for_random_heads(freqs, seed) -> None:
    amps = np.random.default_rng(seed).uniform(0.1, 1.0, len(freqs))
    chk = certified_dirichlet(freqs, amps, 300)
    assert all(v == "holds" for v in chk.verdicts().values())


@settings(max_examples=30)
@given(values=st.lists(st.floats(-3, 3), min_size=1, max_size=60), largest=st.booleans())
def test_prefix_top2_against_sorting(values, largest) -> None:
    top, idx = prefix_top2(np.array(values), largest)
    for r in range(len(values)):
        pref = sorted(values[: r + 1], reverse=largest)
        assert top[r, 0] == pref[0] and values[idx[r, 0]] == pref[0]
        if r:
            assert top[r, 1] == pref[1] and values[idx[r, 1]] == pref[1] and idx[r, 1] != idx[r, 0]
        else:
            assert idx[r, 1] == -1


def test_bad_inputs_raise() -> None:
    with pytest.raises(InputError):
        certified_index(0.5, 1)
    with pytest.raises(InputError):
        certified_index(0.5, 10, readings=("nope",))
    with pytest.raises(InputError):
        certified_retrieval(1, 0.1, 10)
    with pytest.raises(InputError):
        enclose_index_gaps([0.1], [1.0], 5, prec=10)
    assert math.isfinite(certified_index(0.5, 10).comparisons["gap_sup"].max_width())


def test_enclosures_of_values_below_the_float64_range_stay_outward() -> None:
    """Regression (found by hypothesis): g(m) ~ 1e-377 must not be enclosed by [0, 0]."""
    lo, hi = enclose_index_gaps([4.144373387410067e-189], [0.5], 2)
    assert (lo == 0.0).all() and (hi > 0.0).all()
    with mpmath.workdps(50):
        g = mpmath.mpf(1.0) * mpmath.sin(mpmath.mpf(4.144373387410067e-189) / 2) ** 2
        assert mpmath.mpf(lo[0]) <= g <= mpmath.mpf(hi[0])

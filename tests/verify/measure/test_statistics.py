"""Confidence intervals of sampled numbers against independent references, and threshold decisions."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._statistics import (
    Estimate,
    accuracy_estimate,
    decide,
    mean_interval,
    proportion_interval,
)


def _wilson(k: int, n: int, level: float) -> tuple[float, float]:
    """The Wilson score interval from its closed form, in mpmath."""
    with mpmath.workdps(40):
        z = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(level))
        p = mpmath.mpf(k) / n
        centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z * mpmath.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
        return float(centre - half), float(centre + half)


def _binom_tail(k: int, n: int, p: mpmath.mpf, upper: bool) -> mpmath.mpf:
    ks = range(k, n + 1) if upper else range(k + 1)
    return mpmath.fsum(mpmath.binomial(n, j) * p**j * (1 - p) ** (n - j) for j in ks)


@given(n=st.integers(1, 400), data=st.data(), level=st.sampled_from([0.9, 0.95, 0.99]))
def test_wilson_matches_its_closed_form(n: int, data: st.DataObject, level: float) -> None:
    k = data.draw(st.integers(0, n))
    got = proportion_interval(k, n, level)
    low, high = _wilson(k, n, level)
    assert got.low == pytest.approx(low, abs=1e-12) and got.high == pytest.approx(high, abs=1e-12)
    assert got.value == k / n and got.n == n and got.method == "Wilson"


@given(n=st.integers(1, 60), data=st.data())
def test_clopper_pearson_ends_have_tail_probability_alpha_over_two(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, n))
    got = proportion_interval(k, n, 0.95, method="exact")
    with mpmath.workdps(30):
        if k > 0:  # P(X >= k | p = low) = 0.025
            assert float(_binom_tail(k, n, mpmath.mpf(got.low), upper=True)) == pytest.approx(0.025, abs=1e-9)
        else:
            assert got.low == 0.0
        if k < n:  # P(X <= k | p = high) = 0.025
            assert float(_binom_tail(k, n, mpmath.mpf(got.high), upper=False)) == pytest.approx(
                0.025, abs=1e-9
            )
        else:
            assert got.high == 1.0


def test_the_unresolved_length_study_row() -> None:
    """0.875 measured on 64 prompts (56 right): the 95% interval straddles 0.9, so 'at or above 0.9' is
    not decided there; on 2400 prompts the same fraction is decided below."""
    small = accuracy_estimate([True] * 56 + [False] * 8)
    assert (round(small.low, 4), round(small.high, 4)) == (0.7723, 0.9353)
    assert decide(small, 0.9) == "undecided"
    assert proportion_interval(2100, 2400).decide(0.9) == "below"
    assert proportion_interval(64, 64).decide(0.9) == "above"  # Wilson low end 0.9434 for 64/64


def test_bootstrap_interval_of_a_mean() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(0.3, 0.1, 400)
    est = mean_interval(x)
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert est.low < x.mean() < est.high
    assert est.high - est.low == pytest.approx(2 * 1.96 * se, rel=0.15)  # close to the normal interval
    assert mean_interval(x) == est  # seeded: reproducible
    assert mean_interval([0.7, 0.7]) == Estimate(0.7, 0.7, 0.7, 2, 0.95, "bootstrap (constant sample)")


def test_bad_input() -> None:
    with pytest.raises(InputError, match="successes=5 is out of range"):
        proportion_interval(5, 4)
    with pytest.raises(InputError, match="trials=0 is out of range"):
        proportion_interval(0, 0)
    with pytest.raises(InputError, match="correct is empty"):
        accuracy_estimate([])
    with pytest.raises(InputError, match="finite"):
        mean_interval([1.0, float("nan")])
    with pytest.raises(InputError, match="method="):
        proportion_interval(1, 2, method="wald")  # type: ignore[arg-type]


def test_samples_grow_by_doubling_until_decided_or_capped() -> None:
    from ropeproof.verify.measure._statistics import grow_until_decided

    seen: list[tuple[int, int]] = []
    sample: list[bool] = []

    def measure(done: int, count: int) -> None:
        seen.append((done, count))
        sample.extend([True] * (count - done))  # every answer right

    final = grow_until_decided(10, 200, measure, lambda: decide(accuracy_estimate(sample), 0.95) == "above")
    # 10/10, 20/20, 40/40 have Wilson low ends 0.722, 0.839, 0.912; 80/80 gives 0.954 >= 0.95
    assert seen == [(0, 10), (10, 20), (20, 40), (40, 80)] and final == 80 and len(sample) == 80
    seen.clear()
    assert grow_until_decided(10, 30, lambda d, c: seen.append((d, c)), lambda: False) == 30
    assert seen == [(0, 10), (10, 20), (20, 30)]  # the cap, not a power of two
    with pytest.raises(InputError, match="cap=5 is out of range"):
        grow_until_decided(10, 5, lambda d, c: None, lambda: True)


# --- the anytime-valid confidence sequence (Robbins' beta-binomial mixture) ---


def _mixture_martingale(k: int, n: int, p: float, prior: tuple[float, float] = (0.5, 0.5)) -> mpmath.mpf:
    """``M_n(p)``: the likelihood ratio of ``q`` against ``p`` averaged over ``q ~ Beta(a, b)``, by
    numerical integration in mpmath (independent of the closed form the module uses)."""
    a, b = (mpmath.mpf(x) for x in prior)
    with mpmath.workdps(25):
        p = mpmath.mpf(p)
        ratio = lambda q: (q / p) ** k * ((1 - q) / (1 - p)) ** (n - k)  # noqa: E731
        density = lambda q: q ** (a - 1) * (1 - q) ** (b - 1) / mpmath.beta(a, b)  # noqa: E731
        return mpmath.quad(lambda q: ratio(q) * density(q), [0, mpmath.mpf(k) / n if 0 < k < n else 0.5, 1])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 300), data=st.data(), level=st.sampled_from([0.9, 0.95]))
def test_confidence_sequence_ends_are_where_the_mixture_reaches_one_over_alpha(
    n: int, data: st.DataObject, level: float
) -> None:
    from ropeproof.verify.measure._statistics import confidence_sequence

    k = data.draw(st.integers(0, n))
    est = confidence_sequence(k, n, level)
    assert est.low <= k / n <= est.high and est.n == n and est.method == "beta-binomial confidence sequence"
    bar = 1 / (1 - level)
    for end, inside in ((est.low, est.low + 1e-6), (est.high, est.high - 1e-6)):
        if 0.0 < end < 1.0:  # an end at 0 or 1 is where the set meets the edge of [0, 1]
            assert float(_mixture_martingale(k, n, end)) == pytest.approx(bar, rel=1e-6)
            assert float(_mixture_martingale(k, n, inside)) < bar
    wilson = proportion_interval(k, n, level)  # the anytime-valid interval is the wider one
    assert est.low <= wilson.low + 1e-12 and est.high >= wilson.high - 1e-12


def test_confidence_sequence_covers_at_every_look_while_peeking_wilson_does_not() -> None:
    """Anytime coverage by simulation: for p in (0.3, 0.9), 400 i.i.d. Bernoulli sequences looked at after
    every 10 draws up to 400. The confidence sequence excludes p at some look in at most 5% of sequences
    (plus three Monte Carlo standard errors); the Wilson interval, looked at the same way, misses far more
    often (optional stopping breaks a fixed-sample interval)."""
    from ropeproof.verify.measure._statistics import confidence_sequence

    rng = np.random.default_rng(0)
    looks = np.arange(10, 401, 10)
    z = 1.959963984540054
    for p in (0.3, 0.9):
        sums = (rng.random((400, 400)) < p).cumsum(axis=1)[:, looks - 1]  # [sequence, look]
        cs_out = np.zeros(sums.shape, dtype=bool)
        for j, t in enumerate(looks):
            for k in np.unique(sums[:, j]):  # one interval per distinct count
                cs = confidence_sequence(int(k), int(t))
                cs_out[sums[:, j] == k, j] = not cs.low <= p <= cs.high
        phat = sums / looks  # Wilson's closed form, vectorised (checked against mpmath above)
        centre = (phat + z**2 / (2 * looks)) / (1 + z**2 / looks)
        half = z * np.sqrt(phat * (1 - phat) / looks + z**2 / (4 * looks**2)) / (1 + z**2 / looks)
        wilson_out = np.abs(centre - p) > half
        slack = 3 * (0.05 * 0.95 / 400) ** 0.5
        assert cs_out.any(axis=1).mean() <= 0.05 + slack
        assert wilson_out.any(axis=1).mean() > 0.05 + slack


def test_sequential_proportion_keeps_the_running_intersection() -> None:
    from ropeproof.verify.measure._statistics import SequentialProportion, confidence_sequence

    seq = SequentialProportion()
    assert seq.decide(0.5) == "undecided"
    with pytest.raises(InputError, match="no draws"):
        seq.estimate()
    seq.add([True] * 10)
    seq.add([])
    first = seq.estimate()
    assert first.bounds == confidence_sequence(10, 10).bounds and first.n == 10
    seq.add([False] * 10)
    second = seq.estimate()
    fresh = confidence_sequence(10, 20)
    assert second.low == max(first.low, fresh.low) and second.high == min(first.high, fresh.high)
    assert second.value == 0.5 and second.n == 20


def test_far_rows_decide_in_one_small_batch_and_near_rows_grow() -> None:
    """0.28 against 0.9 (the trained letter models at 850 tokens) is decided by the first 16 draws; a
    proportion at the threshold never is, and sampling stops at the cap."""
    from ropeproof.verify.measure._statistics import SequentialProportion, look_sizes, sample_until_decided

    assert look_sizes(16, 200) == [16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 200]
    assert look_sizes(16, 16) == [16] and look_sizes(5, 15) == [5, 10, 15]
    # the looks are made one at a time: a row that decides at once never lists a cap's worth of sizes
    assert sample_until_decided(1, 10**12, lambda done, count: None, lambda: True) == 1
    with pytest.raises(InputError, match="cap=5 is out of range"):
        look_sizes(10, 5)
    for rate, threshold, want_n, want_side in ((0.28, 0.9, 16, "below"), (0.9, 0.9, 200, "undecided")):
        seq = SequentialProportion()
        pattern = np.random.default_rng(1).random(200) < rate

        def measure(done: int, count: int, seq=seq, pattern=pattern) -> None:
            seq.add(pattern[done:count])

        used = sample_until_decided(
            16, 200, measure, lambda seq=seq, t=threshold: seq.decide(t) != "undecided"
        )
        assert used == want_n == seq.trials and seq.decide(threshold) == want_side


def _mixture_excludes(successes: int, trials: int, p: float) -> bool:
    """Whether the Beta(1/2, 1/2) mixture martingale at ``p`` reaches 1 / 0.05 (p left out of the 95%
    confidence sequence), in 40-digit arithmetic: the definition, not the root finding."""
    with mpmath.workdps(40):
        k, f = successes, trials - successes
        mix = mpmath.beta(0.5 + k, 0.5 + f) / mpmath.beta(0.5, 0.5)
        return mix / (mpmath.mpf(p) ** k * (1 - mpmath.mpf(p)) ** f) >= 20


def test_the_first_decided_draw_is_where_the_mixture_first_excludes_the_threshold() -> None:
    """``first_decided`` of all-correct draws against 0.9 and 0.95 is the first count at which the
    mixture martingale (evaluated directly) leaves the threshold out; a rate of 0.2 against 0.9 decides
    within a few draws; a proportion at the threshold never decides."""
    from ropeproof.verify.measure._statistics import first_decided

    for threshold in (0.9, 0.95):
        want = next(t for t in range(1, 400) if _mixture_excludes(t, t, threshold))
        assert first_decided([True] * 400, threshold) == want
    low = np.random.default_rng(2).random(64) < 0.2
    k = first_decided(low, 0.9)
    assert k is not None and k <= 8
    assert _mixture_excludes(int(low[:k].sum()), k, 0.9)
    assert not _mixture_excludes(int(low[: k - 1].sum()), k - 1, 0.9)
    assert first_decided([True, False] * 50, 0.5) is None


@settings(deadline=None, max_examples=25)
@given(
    rate=st.sampled_from([0.0, 0.15, 0.4, 0.97, 1.0]),
    threshold=st.sampled_from([0.5, 0.9, 0.95]),
    step=st.integers(1, 64),
    seed=st.integers(0, 10**6),
)
def test_a_test_that_looks_every_batch_stops_at_the_first_batch_that_decides(
    rate: float, threshold: float, step: int, seed: int
) -> None:
    """Looking after every batch of ``step`` draws, a sequential test stops after the first batch at whose
    end its running interval decides: never before the first draw at which the confidence sequence
    decides, and, where the draws keep it decided (far from the threshold), at that draw rounded up to
    the batch."""
    from ropeproof.verify.measure._statistics import SequentialProportion, first_decided, sample_until_decided

    draws = np.random.default_rng(seed).random(600) < rate
    seq = SequentialProportion()

    def measure(done: int, count: int) -> None:
        seq.add(draws[done:count])

    used = sample_until_decided(step, 600, measure, lambda: seq.decide(threshold) != "undecided", step)
    k = first_decided(draws, threshold)
    if k is None:
        assert seq.decide(threshold) == "undecided" and used == 600
        return
    assert used >= k  # the running interval holds the threshold while every look's interval does
    if abs(rate - threshold) >= 0.3:  # far: once decided, later draws keep it decided
        assert used == min(600, -(-k // step) * step)


def test_looks_after_the_first_come_every_step() -> None:
    from ropeproof.verify.measure._statistics import look_sizes

    assert look_sizes(100, 800, 240) == [100, 340, 580, 800]
    assert look_sizes(240, 2400, 240) == list(range(240, 2401, 240))
    assert look_sizes(16, 40) == [16, 32, 40]
    with pytest.raises(InputError, match="step=0 is out of range"):
        look_sizes(16, 40, 0)

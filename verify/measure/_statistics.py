"""Uncertainty of sampled numbers, and thresholds decided only outside it.

Every accuracy measured on a sample of prompts and every score averaged over sampled prompts is an
estimate. This module gives each one a confidence interval and decides a threshold only when the whole
interval lies on one side of it:

- :func:`proportion_interval`: a binomial proportion ``k / n`` (an accuracy) with its interval, Wilson
  (default) or Clopper-Pearson (``method="exact"``), both from :func:`scipy.stats.binomtest`;
- :func:`mean_interval`: the mean of per-prompt values (a score) with a percentile bootstrap interval
  over prompts (:func:`scipy.stats.bootstrap`, seeded, so a report is reproducible);
- :func:`decide`: ``"above"`` when the interval's lower end is at least the threshold, ``"below"`` when
  its upper end is below it, else ``"undecided"``;
- :func:`confidence_sequence` and :class:`SequentialProportion`: an *anytime-valid* interval for a
  proportion (the beta-binomial mixture confidence sequence of Robbins, 1970), which may be looked at
  after every batch of a sample that grows until it decides; :func:`sample_until_decided` grows samples so.

A fixed-sample interval (Wilson) is valid only for a sample size fixed in advance: growing a sample until
its Wilson interval excludes a threshold and stopping then decides wrongly more often than 5%. The
confidence sequence holds at every sample size at once, so a sampled verdict can stop as soon as it is
decided.

Levels are 95% unless stated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real

LEVEL = 0.95
"""The confidence level used unless a caller says otherwise."""
Side = Literal["above", "below", "undecided"]


@dataclass(frozen=True)
class Estimate:
    """A sampled number: the point ``value``, its interval ``[low, high]`` at ``level``, the sample size
    ``n`` and how the interval was made (``method``)."""

    value: float
    low: float
    high: float
    n: int
    level: float
    method: str

    @property
    def bounds(self) -> tuple[float, float]:
        """``(low, high)``."""
        return self.low, self.high

    def decide(self, threshold: float) -> Side:
        """:func:`decide` on this estimate."""
        return decide(self, threshold)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci_low": self.low,
            "ci_high": self.high,
            "n": self.n,
            "level": self.level,
            "method": self.method,
        }

    def __str__(self) -> str:
        return f"{self.value:.4g} [{self.low:.4g}, {self.high:.4g}] (n = {self.n})"


def proportion_interval(
    successes: int, trials: int, level: float = LEVEL, method: Literal["wilson", "exact"] = "wilson"
) -> Estimate:
    """``successes / trials`` with its ``level`` interval: Wilson score (``"wilson"``) or Clopper-Pearson
    (``"exact"``)."""
    from scipy.stats import binomtest

    n = integer(trials, "trials", low=1)
    k = integer(successes, "successes", low=0, high=n)
    level = real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    if method not in ("wilson", "exact"):
        raise InputError(f"method={method!r} is unknown; accepted: 'wilson', 'exact'")
    ci = binomtest(k, n).proportion_ci(confidence_level=level, method=method)
    name = "Wilson" if method == "wilson" else "Clopper-Pearson"
    return Estimate(k / n, float(ci.low), float(ci.high), n, level, name)


def accuracy_estimate(correct: Sequence[bool] | np.ndarray, level: float = LEVEL) -> Estimate:
    """The accuracy of a sample of right/wrong answers, with its Wilson interval."""
    right = np.asarray(correct, dtype=bool).reshape(-1)
    if right.size == 0:
        raise InputError("correct is empty; an accuracy needs at least one answer")
    return proportion_interval(int(right.sum()), int(right.size), level)


def mean_interval(
    values: Sequence[float] | np.ndarray, level: float = LEVEL, resamples: int = 2000, seed: int = 0
) -> Estimate:
    """The mean of ``values`` with a percentile bootstrap interval over them (``resamples`` resamples,
    seeded by ``seed``). One value gives the degenerate interval at that value."""
    from scipy.stats import bootstrap

    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if x.size == 0 or not np.all(np.isfinite(x)):
        raise InputError("values must be a non-empty sequence of finite numbers")
    level = real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    mean = float(x.mean())
    if x.size == 1 or np.ptp(x) == 0.0:
        return Estimate(mean, mean, mean, int(x.size), level, "bootstrap (constant sample)")
    res = bootstrap(
        (x,),
        np.mean,
        confidence_level=level,
        n_resamples=integer(resamples, "resamples", low=100),
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return Estimate(
        mean, float(res.confidence_interval.low), float(res.confidence_interval.high), int(x.size), level,
        "bootstrap percentile",
    )  # fmt: skip


def decide(estimate: Estimate, threshold: float) -> Side:
    """``"above"`` when ``estimate.low >= threshold``, ``"below"`` when ``estimate.high < threshold``,
    else ``"undecided"`` (the interval straddles the threshold)."""
    t = real(threshold, "threshold")
    if estimate.low >= t:
        return "above"
    if estimate.high < t:
        return "below"
    return "undecided"


BETA_PRIOR = (0.5, 0.5)
"""The mixing distribution of :func:`confidence_sequence`: Beta(1/2, 1/2) (the Krichevsky-Trofimov
mixture; it keeps the interval near Wilson's width from tens to thousands of draws)."""
CS_METHOD = "beta-binomial confidence sequence"


def confidence_sequence(
    successes: int, trials: int, level: float = LEVEL, prior: tuple[float, float] = BETA_PRIOR
) -> Estimate:
    """The beta-binomial mixture confidence sequence for a Bernoulli mean ``p`` at ``trials`` draws.

    For i.i.d. draws with mean ``p``, ``M_t(p) = B(a + S_t, b + t - S_t) / (B(a, b) p^S_t (1 - p)^(t -
    S_t))`` (the likelihood ratio of ``q`` against ``p`` averaged over ``q ~ Beta(a, b)``, ``(a, b) =
    prior``) is a nonnegative martingale with ``M_0 = 1``, so by Ville's inequality ``P(M_t(p) >= 1 /
    alpha`` for some ``t) <= alpha`` with ``alpha = 1 - level``. The set ``{p : M_t(p) < 1 / alpha}``
    therefore covers ``p`` at every ``t`` simultaneously with probability ``>= level``; it is an interval
    (``p^S (1 - p)^F`` is log-concave) containing ``S / t``, and its ends are found here by bracketed root
    finding (:func:`scipy.optimize.brentq`, to 1e-12, then widened by that tolerance).

    References: H. Robbins, "Statistical methods related to the law of the iterated logarithm", Ann.
    Math. Statist. 41(5), 1970 (mixtures of likelihood ratios); S. R. Howard, A. Ramdas, J. McAuliffe,
    J. Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2),
    2021, section 3 (conjugate mixtures, the beta-binomial boundary).
    """
    from scipy.optimize import brentq
    from scipy.special import betaln

    n = integer(trials, "trials", low=1)
    k = integer(successes, "successes", low=0, high=n)
    level = real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    a, b = (real(x, "prior", low=0.0, low_open=True) for x in prior)
    f = n - k
    log_mix = float(betaln(a + k, b + f) - betaln(a, b))
    bar = math.log(1.0 / (1.0 - level))

    def h(p: float) -> float:  # > 0 exactly on the interval
        return (k * math.log(p) if k else 0.0) + (f * math.log1p(-p) if f else 0.0) - log_mix + bar

    tol = 1e-12
    mle = k / n
    edge_low, edge_high = 1e-300, 1.0 - 1e-16
    low = 0.0
    if k > 0 and h(edge_low) < 0:
        low = max(0.0, brentq(h, edge_low, mle, xtol=tol) - tol)
    high = 1.0
    if f > 0 and h(edge_high) < 0:
        high = min(1.0, brentq(h, mle, edge_high, xtol=tol) + tol)
    return Estimate(mle, low, high, n, level, CS_METHOD)


class SequentialProportion:
    """A proportion sampled in batches and looked at after each one: the running intersection of
    :func:`confidence_sequence` over the looks (the intersection of a confidence sequence over any
    times is one too), so the interval only narrows and is valid whenever the sampling stops."""

    def __init__(self, level: float = LEVEL, prior: tuple[float, float] = BETA_PRIOR) -> None:
        self.level, self.prior = level, prior
        self.successes = 0
        self.trials = 0
        self.low, self.high = 0.0, 1.0

    def add(self, right: Sequence[bool] | np.ndarray) -> None:
        """Add a batch of right/wrong draws and look (an empty batch changes nothing)."""
        got = np.asarray(right, dtype=bool).reshape(-1)
        if got.size == 0:
            return
        self.successes += int(got.sum())
        self.trials += int(got.size)
        est = confidence_sequence(self.successes, self.trials, self.level, self.prior)
        self.low, self.high = max(self.low, est.low), min(self.high, est.high)

    def estimate(self) -> Estimate:
        """The proportion so far with its running interval (:class:`InputError` before any draw)."""
        if self.trials == 0:
            raise InputError("no draws yet; an estimate needs at least one")
        return Estimate(
            self.successes / self.trials,
            self.low,
            self.high,
            self.trials,
            self.level,
            CS_METHOD + " (running)",
        )

    def decide(self, threshold: float) -> Side:
        """:func:`decide` on the running interval (``"undecided"`` before any draw)."""
        return "undecided" if self.trials == 0 else decide(self.estimate(), threshold)

    def record(self, threshold: float) -> dict[str, object]:
        """The sample as a report row: ``count``, ``correct``, ``accuracy`` (the estimate), ``ci_low``,
        ``ci_high``, ``interval`` (the method) and ``side`` (:meth:`decide` against ``threshold``)."""
        est = self.estimate()
        return {
            "count": est.n,
            "correct": self.successes,
            "accuracy": est.value,
            "ci_low": est.low,
            "ci_high": est.high,
            "interval": est.method,
            "side": self.decide(threshold),
        }


def look_sizes(first: int, cap: int, step: int | None = None) -> list[int]:
    """The sample sizes at which :func:`sample_until_decided` looks: ``first``, ``first + step``, ``first
    + 2 step``, ... ending at ``cap`` (``step`` defaults to ``first``): a look after every batch. Callers
    that draw through a model make a batch one forward batch, so a row stops after the first forward
    whose draws decide it. The running interval is valid at every size, so looking often costs no
    coverage, and a row that decides draws at most one batch it did not need (a schedule whose batches
    grow with the sample draws up to half of it)."""
    return list(_looks(first, cap, step))


def _looks(first: int, cap: int, step: int | None = None) -> Iterator[int]:
    """:func:`look_sizes` one at a time (a row that decides early never lists the rest)."""
    first = integer(first, "first", low=1)
    cap = integer(cap, "cap", low=first)
    step = first if step is None else integer(step, "step", low=1)
    yield from range(first, cap, step)
    yield cap


def sample_until_decided(
    first: int,
    cap: int,
    measure: Callable[[int, int], None],
    decided: Callable[[], bool],
    step: int | None = None,
) -> int:
    """Grow a sample batch by batch until it decides: ``measure(done, count)`` adds items ``done .. count
    - 1`` to the caller's sample (at the sizes of :func:`look_sizes` of ``first``, ``cap``, ``step``); stop
    as soon as ``decided()`` or at ``cap``. Returns the final size. Pair it with
    :class:`SequentialProportion`, whose interval stays valid under this optional stopping (a fixed-sample
    interval does not)."""
    done = 0
    for count in _looks(first, cap, step):
        measure(done, count)
        done = count
        if decided():
            break
    return done


def first_decided(
    outcomes: Sequence[bool] | np.ndarray, threshold: float, level: float = LEVEL
) -> int | None:
    """The smallest number ``t`` of the draws ``outcomes`` (in order) at which
    :func:`confidence_sequence` of the first ``t`` decides ``threshold`` (``None`` if none does): what a
    sequential test that looked after every single draw would draw (the yardstick of a test that looks
    after every batch)."""
    right = np.asarray(outcomes, dtype=bool).reshape(-1)
    t = real(threshold, "threshold")
    successes = np.cumsum(right)
    for i in range(right.size):
        if decide(confidence_sequence(int(successes[i]), i + 1, level), t) != "undecided":
            return i + 1
    return None


def grow_until_decided(
    start: int, cap: int, measure: Callable[[int, int], None], decided: Callable[[], bool]
) -> int:
    """Grow a sample until it decides: ``measure(done, count)`` adds items ``done .. count - 1`` to the
    caller's sample, first ``count = start``, then twice as many each round up to ``cap``; stop as soon
    as ``decided()`` or at ``cap``. Returns the final size."""
    start = integer(start, "start", low=1)
    cap = integer(cap, "cap", low=start)
    done, count = 0, start
    while True:
        measure(done, count)
        if decided() or count >= cap:
            return count
        done, count = count, min(cap, 2 * count)

"""Uncertainty of sampled numbers, and thresholds decided only outside it.

Every accuracy measured on a sample of prompts and every score averaged over sampled prompts is an
estimate. This module gives each one a confidence interval and decides a threshold only when the whole
interval lies on one side of it:

- :func:`proportion_interval`: a binomial proportion ``k / n`` (an accuracy) with its interval, Wilson
  (default) or Clopper-Pearson (``method="exact"``), both from :func:`scipy.stats.binomtest`;
- :func:`mean_interval`: the mean of per-prompt values (a score) with a percentile bootstrap interval
  over prompts (:func:`scipy.stats.bootstrap`, seeded, so a report is reproducible);
- :func:`decide`: ``"above"`` when the interval's lower end is at least the threshold, ``"below"`` when
  its upper end is below it, else ``"undecided"``.

Levels are 95% unless stated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ropeproof.theory.errors import InputError
from ropeproof.theory.validate import integer, real

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

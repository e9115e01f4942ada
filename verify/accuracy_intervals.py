"""Confidence intervals for sampled accuracies, and thresholds decided only when the interval is clear.

A sampled accuracy ``k / n`` is an estimate; :func:`wilson_interval` gives the 95% Wilson score interval
of the underlying rate (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``), which stays
inside ``[0, 1]`` and is not degenerate at ``k = 0`` or ``k = n``. :func:`compare_to_level` says on which
side of a level the rate lies, and ``"undecided"`` when the interval contains it: a threshold is decided
only when the interval lies on one side.
"""

from __future__ import annotations

from ropeproof.theory.errors import InputError

CONFIDENCE = 0.95
"""Confidence level of every interval this module returns by default."""


def wilson_interval(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of the rate behind ``successes`` out of ``trials``."""
    from scipy.stats import binomtest

    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise InputError(f"trials={trials!r} must be an integer >= 1")
    if isinstance(successes, bool) or not isinstance(successes, int) or not 0 <= successes <= trials:
        raise InputError(f"successes={successes!r} must be an integer in 0..trials={trials}")
    if not 0 < confidence < 1:
        raise InputError(f"confidence={confidence!r} must be in (0, 1)")
    ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def compare_to_level(successes: int, trials: int, level: float, confidence: float = CONFIDENCE) -> str:
    """``"below"`` if the interval lies below ``level`` (its upper end ``< level``), ``"above"`` if it lies
    above (its lower end ``> level``), else ``"undecided"``."""
    lo, hi = wilson_interval(successes, trials, confidence)
    if hi < level:
        return "below"
    if lo > level:
        return "above"
    return "undecided"

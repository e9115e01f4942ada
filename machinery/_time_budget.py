"""The time limit, and the up-front check that refuses a computation that cannot finish in it.

Commands whose running time grows with their arguments (``train --steps``, ``--eval-prompts``) estimate
their duration *before* starting, from what they measure on this machine, and call
:func:`check_duration`, which raises :class:`~ropeproof.machinery._errors.TimeBudgetError` giving the
estimate and the limit. The limit is, in order of precedence:

1. the ``limit`` argument of :func:`check_duration` (seconds);
2. the environment variable ``ROPEPROOF_TIME_LIMIT``: a duration with an optional unit, e.g. ``"90m"``,
   ``"12h"``, ``"60d"``, ``"3600"`` (seconds);
3. :data:`DEFAULT_LIMIT`, 30 days.

The job of an estimate is to turn a run of centuries into a one-line error, not to budget to the
second; the limit is generous so that no run a machine can finish is refused by default.
"""

from __future__ import annotations

import math
import os
import re

from ropeproof.machinery._errors import InputError, TimeBudgetError

ENV_VAR = "ROPEPROOF_TIME_LIMIT"
"""Environment variable that sets the time limit (see the module docstring for the syntax)."""
DEFAULT_LIMIT = 30 * 86400.0
"""The limit when :data:`ENV_VAR` is unset: 30 days, in seconds."""

_UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """``"90m"`` -> ``5400.0``; ``"12h"`` -> ``43200.0``; ``"60d"`` -> ``5184000.0``; ``"3600"`` ->
    ``3600.0`` (seconds, finite and > 0). Units (case-insensitive): ``s``, ``m``/``min``, ``h``, ``d``."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if match is None or match.group(2).lower() not in _UNITS:
        raise InputError(
            f"{ENV_VAR}={text!r} is not a duration; accepted: a positive number of seconds with an optional "
            "unit (s, m, min, h, d), e.g. '12h'"
        )
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{ENV_VAR}={text!r} must be a finite duration above 0 seconds")
    return value


def time_limit() -> float:
    """The limit in seconds: ``$ROPEPROOF_TIME_LIMIT`` if set, else :data:`DEFAULT_LIMIT`."""
    text = os.environ.get(ENV_VAR)
    return parse_duration(text) if text else DEFAULT_LIMIT


def format_duration(seconds: float) -> str:
    """``seconds`` in the largest unit that keeps it at least 1, three significant digits:
    ``3.2e10`` -> ``"1.01e+03 years"``, ``5400`` -> ``"1.5 h"``, ``0.25`` -> ``"0.25 s"``."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def check_duration(what: str, seconds: float, limit: float | None = None, how: str = "") -> None:
    """Raise :class:`TimeBudgetError` if ``seconds`` (an estimate for ``what``) exceeds the limit.

    ``limit`` (seconds) overrides :func:`time_limit`; ``how`` says how the estimate was made (it goes
    into the message, with both numbers and how to change the limit)."""
    budget = time_limit() if limit is None else float(limit)
    if not seconds <= budget:  # NaN is refused too
        basis = f" ({how})" if how else ""
        raise TimeBudgetError(
            f"{what} would take about {format_duration(seconds)}{basis}, more than the time limit of "
            f"{format_duration(budget)} (set {ENV_VAR}, e.g. {ENV_VAR}=60d, to change the limit)"
        )

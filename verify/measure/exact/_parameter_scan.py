"""A parameter scan: for each value of a parameter (a base, a scale, an angle) the first violation of
``B(m) R threshold`` over ``m = 0 .. max_m``, and the set of good values as it really is.

A value is **good** when its spectrum's sweep (:func:`~ropeproof.verify.measure.exact._spectrum_sweep.
sweep_spectrum`) holds at every offset, **bad** when a row is violated, **undecided** otherwise; with
``certified=True`` (the default) every verdict is certified. The values are a grid: given, or made from
an interval at a stated resolution (``lo + k r`` for ``spacing="linear"``, ``lo (1 + r)^k`` for
``"log"``, and ``hi`` itself). The good set is reported as the maximal runs of consecutive good grid
values (:class:`GoodInterval`), each end bracketed by its neighbour grid value and that neighbour's
verdict: the true boundary lies between them, one grid step apart. What the grid cannot see (pockets
narrower than a step) is not claimed either way.

Two thresholds are reported separately, never one where the set is not an interval:

- the **smallest good value** at this resolution: the first good grid value, bracketed by the value
  below it;
- the **supremum of the bad values**: the last bad grid value, and the good value above it, from which
  every grid value up to ``hi`` is good.

``scope="thresholds"`` finds just these two, with the same values a full scan gives: it sweeps upward from
``lo`` to the first good value and downward from ``hi`` to the first bad one, and marks the values in
between ``unscanned`` (the intervals and :attr:`ParameterScan.is_interval` are then not known);
``scope="smallest"`` does only the upward part (the smallest good value).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._spectrum import Spectrum
from ropeproof.verify.measure.exact._spectrum_sweep import sweep_spectrum

SPACINGS: tuple[str, ...] = ("linear", "log")
"""How an interval becomes a grid: steps of ``r`` (``linear``) or ratios ``1 + r`` (``log``)."""
SCOPES: tuple[str, ...] = ("all", "thresholds", "smallest")
"""What a scan sweeps: every value, what the two thresholds need, or what the smallest good value needs."""
MAX_GRID = 1_000_000
"""The most grid values one scan evaluates."""


@dataclass(frozen=True)
class GoodInterval:
    """A maximal run of good grid values ``lo .. hi``; ``below``/``above`` are the neighbour grid values
    (``None`` at the ends of the grid) and ``below_verdict``/``above_verdict`` their verdicts (``bad`` or
    ``undecided``)."""

    lo: float
    hi: float
    below: float | None
    above: float | None
    below_verdict: str | None
    above_verdict: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "lo": self.lo,
            "hi": self.hi,
            "below": self.below,
            "below_verdict": self.below_verdict,
            "above": self.above,
            "above_verdict": self.above_verdict,
        }


@dataclass(frozen=True)
class ParameterScan:
    """The result of :func:`scan_parameter` (module docstring): per grid value its verdict and first
    violation, the good intervals and the two thresholds; ``start`` is the first offset checked (the
    sweeps' ``start=``)."""

    values: tuple[float, ...]
    verdicts: tuple[str, ...]
    first_violations: tuple[int | None, ...]
    max_m: int
    relation: str
    threshold: float
    resolution: str
    certified: bool
    start: int = 0

    @property
    def intervals(self) -> tuple[GoodInterval, ...]:
        """The maximal runs of good grid values, in order."""
        out, v, s = [], self.values, self.verdicts
        i = 0
        while i < len(v):
            if s[i] != "good":
                i += 1
                continue
            j = i
            while j + 1 < len(v) and s[j + 1] == "good":
                j += 1
            below = (v[i - 1], s[i - 1]) if i > 0 else (None, None)
            above = (v[j + 1], s[j + 1]) if j + 1 < len(v) else (None, None)
            out.append(GoodInterval(v[i], v[j], below[0], above[0], below[1], above[1]))
            i = j + 1
        return tuple(out)

    @property
    def is_interval(self) -> bool | None:
        """At most one run of good values (the good set is an interval at this resolution); ``None``
        when some values were not scanned."""
        if "unscanned" in self.verdicts:
            return None
        return len(self.intervals) <= 1

    @property
    def smallest_good(self) -> tuple[float | None, float] | None:
        """``(value below, first good value)``, or ``None`` when no grid value is good."""
        for i, s in enumerate(self.verdicts):
            if s == "good":
                return (self.values[i - 1] if i else None, self.values[i])
        return None

    @property
    def sup_bad(self) -> tuple[float, float | None] | None:
        """``(last bad value, the good value above it or None)``, or ``None`` when no value is bad."""
        for i in range(len(self.values) - 1, -1, -1):
            if self.verdicts[i] == "bad":
                nxt = self.values[i + 1] if i + 1 < len(self.values) else None
                return (self.values[i], nxt)
        return None

    def counts(self) -> dict[str, int]:
        """How many grid values are good, bad and undecided."""
        return {k: self.verdicts.count(k) for k in ("good", "bad", "undecided", "unscanned")}

    def summary(self) -> dict[str, Any]:
        """JSON-ready: the grid's size and resolution, the counts, the intervals and both thresholds."""
        return {
            "relation": f"B(m) {self.relation} {self.threshold!r} for {self.start} <= m <= {self.max_m}",
            "resolution": self.resolution,
            "grid": len(self.values),
            "counts": self.counts(),
            "certified": self.certified,
            "is_interval": self.is_interval,
            "intervals": [iv.to_dict() for iv in self.intervals],
            "smallest_good": None if self.smallest_good is None else list(self.smallest_good),
            "sup_bad": None if self.sup_bad is None else list(self.sup_bad),
        }


def parameter_grid(lo: float, hi: float, resolution: float, spacing: str = "log") -> list[float]:
    """The grid of an interval ``[lo, hi]``: ``lo + k r`` (``linear``) or ``lo (1 + r)^k`` (``log``, ``lo >
    0``) below ``hi``, then ``hi``."""
    if spacing not in SPACINGS:
        raise InputError(f"spacing={spacing!r} is unknown; accepted: {list(SPACINGS)}")
    lo = real(lo, "lo", low=0, low_open=True) if spacing == "log" else real(lo, "lo")
    hi = real(hi, "hi", low=lo, note="hi >= lo")
    r = real(resolution, "resolution", low=0, low_open=True)
    count = (hi - lo) / r if spacing == "linear" else math.log(hi / lo) / math.log1p(r)
    if count + 1 > MAX_GRID:
        raise InputError(
            f"resolution={r!r} gives {math.ceil(count) + 1} grid values; accepted: at most {MAX_GRID}"
        )
    n = math.floor(count)
    grid = [lo + k * r if spacing == "linear" else lo * (1 + r) ** k for k in range(n + 1)]
    grid = [x for x in grid if x < hi]
    return [*grid, hi]


def scan_parameter(
    build: Callable[[float], Spectrum],
    max_m: int,
    values: Sequence[float] | None = None,
    *,
    interval: tuple[float, float] | None = None,
    resolution: float | None = None,
    spacing: str = "log",
    relation: str = ">=",
    threshold: float = 0.0,
    certified: bool = True,
    scope: str = "all",
    **sweep_options: Any,
) -> ParameterScan:
    """For each parameter value ``x`` (``values``, increasing; or the grid of ``interval`` at ``resolution``,
    :func:`parameter_grid`), sweep ``build(x)`` for ``B(m) relation threshold`` over ``m = 0 .. max_m``
    (stopping at the first violation) and record its verdict and first violation; ``scope="thresholds"``
    sweeps only what the two thresholds need (module docstring).
    """
    if (values is None) == (interval is None):
        raise InputError("give exactly one of values= (a grid) and interval=(lo, hi) with resolution=")
    if interval is not None:
        if resolution is None:
            raise InputError(
                "interval= needs resolution= (the grid step: absolute, or relative for spacing='log')"
            )
        grid = parameter_grid(interval[0], interval[1], resolution, spacing)
        stated = f"{spacing} steps of {resolution!r}" + (" (ratio 1 + r)" if spacing == "log" else "")
    else:
        grid = [real(v, "values[]") for v in values]  # type: ignore[union-attr]
        if not grid or any(b <= a for a, b in itertools.pairwise(grid)):
            raise InputError("values must be one or more increasing numbers")
        stated = "the given grid"
    max_m = integer(max_m, "max_m", low=0)
    if scope not in SCOPES:
        raise InputError(f"scope={scope!r} is unknown; accepted: {list(SCOPES)}")
    verdicts: list[str] = ["unscanned"] * len(grid)
    firsts: list[int | None] = [None] * len(grid)

    def visit(i: int) -> str:
        spectrum = build(grid[i])
        if not isinstance(spectrum, Spectrum):
            raise InputError(f"build({grid[i]!r}) returned {type(spectrum).__name__}; accepted: a Spectrum")
        sweep = sweep_spectrum(spectrum, max_m, relation, threshold, certified=certified, **sweep_options)
        verdicts[i] = {"holds": "good", "violated": "bad"}.get(sweep.verdict(), "undecided")
        firsts[i] = sweep.first_violation
        return verdicts[i]

    if scope == "all":
        for i in range(len(grid)):
            visit(i)
    else:
        up = next((i for i in range(len(grid)) if visit(i) == "good"), len(grid))
        for i in range(len(grid) - 1, up if scope == "thresholds" else len(grid) - 1, -1):
            if visit(i) == "bad":
                break
    return ParameterScan(
        tuple(grid),
        tuple(verdicts),
        tuple(firsts),
        max_m,
        relation,
        float(threshold),
        stated,
        certified,
        int(sweep_options.get("start", 0)),
    )

"""Accuracy per task and length, its spread over draws, its 95% interval, and the two readings
against [A]: the ordering letter > number, and [A]'s reported thresholds.

- ``accuracy_mean`` and ``accuracy_std``: the mean and the sample standard deviation (``ddof = 1``)
  over draws of each draw's accuracy, as [A] reports mean ± std over 5 dataset draws; ``None`` for the
  standard deviation of a single draw.
- ``ci_low``, ``ci_high``: the **Clopper-Pearson** ("exact") 95% interval of the pooled accuracy
  (all answered prompts of every draw as independent Bernoulli trials with one success probability).
  Chosen over Wilson's interval because its coverage is at least 95% for every true accuracy, which a
  verdict built on it needs; it is the wider of the two. Bounds: ``P(X >= k | p_low) = 0.025`` and
  ``P(X <= k | p_high) = 0.025`` for ``k`` correct of ``n`` (``scipy.stats.binomtest`` through
  :mod:`ropeproof.verify.measure._statistics`); ``p_low = 0`` when ``k = 0`` and ``p_high = 1`` when ``k =
  n``.
- **Ordering** (:func:`ordering`): at each length measured in both tasks, the letter accuracy is
  ``above`` the number accuracy when the two intervals are disjoint with letter higher, ``below`` when
  disjoint with number higher, else ``unresolved``. The model shows [A]'s ordering (``shown``) when
  it is above at every length, does not (``not shown``) when below at some length, and otherwise the
  reading is ``unresolved``.
- **Thresholds** (:func:`threshold_checks`): each of [A]'s levels
  (:data:`~ropeproof.verify.studies.llm_eval._protocol.REPORTED_THRESHOLDS`) at a measured length is ``met``
  when the whole interval is on [A]'s side, ``missed`` when the whole interval is on the other side,
  else ``unresolved``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ropeproof.constructions._paper import TASKS
from ropeproof.verify.measure._statistics import proportion_interval
from ropeproof.verify.studies.llm_eval._parsing import is_correct
from ropeproof.verify.studies.llm_eval._plan import Prompt
from ropeproof.verify.studies.llm_eval._protocol import REPORTED_THRESHOLDS, Threshold

LEVEL = 0.95


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Clopper-Pearson interval of ``k`` successes in ``n`` trials at confidence ``level``
    (:func:`ropeproof.verify.measure._statistics.proportion_interval` with ``method="exact"``)."""
    est = proportion_interval(k, n, level, method="exact")
    return est.low, est.high


@dataclass(frozen=True)
class LengthResult:
    """One task at one length (module docstring); ``n_prompts`` counts the answered prompts pooled over
    draws. Accuracy fields are ``None`` when no prompt has a reply."""

    task: str
    length: int
    accuracy_mean: float | None
    accuracy_std: float | None
    n_prompts: int
    ci_low: float | None
    ci_high: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DrawResult:
    """One draw of one task and length: ``correct`` of ``answered`` (of ``planned``) prompts."""

    task: str
    length: int
    draw: int
    correct: int
    answered: int
    planned: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def tally_draws(plan: Sequence[Prompt], replies: dict[str, dict[str, Any]]) -> list[DrawResult]:
    """Per-draw counts of the prompts in ``plan``, reading each logged reply with the current parser."""
    counts: dict[tuple[str, int, int], list[int]] = {}
    for p in plan:
        c = counts.setdefault((p.task, p.length, p.draw), [0, 0, 0])
        c[2] += 1
        record = replies.get(p.key)
        if record is not None:
            c[1] += 1
            c[0] += int(is_correct(record["reply"], p.answer))
    return [DrawResult(t, n, d, *c) for (t, n, d), c in counts.items()]


def summarise(draws: Iterable[DrawResult]) -> list[LengthResult]:
    """One :class:`LengthResult` per (task, length) of ``draws``, in first-seen order."""
    groups: dict[tuple[str, int], list[DrawResult]] = {}
    for d in draws:
        groups.setdefault((d.task, d.length), []).append(d)
    out = []
    for (task, length), group in groups.items():
        answered = [d for d in group if d.answered]
        n = sum(d.answered for d in answered)
        if not n:
            out.append(LengthResult(task, length, None, None, 0, None, None))
            continue
        acc = np.array([d.correct / d.answered for d in answered], dtype=np.float64)
        std = float(acc.std(ddof=1)) if acc.size > 1 else None
        low, high = clopper_pearson(sum(d.correct for d in answered), n)
        out.append(LengthResult(task, length, float(acc.mean()), std, n, low, high))
    return out


def _compare(low: float, high: float, other_low: float, other_high: float) -> str:
    if low > other_high:
        return "above"
    if high < other_low:
        return "below"
    return "unresolved"


@dataclass(frozen=True)
class Ordering:
    """The ordering reading (module docstring): ``verdict`` and ``per_length`` ``{length: relation}``."""

    verdict: str
    per_length: dict[int, str]

    def line(self) -> str:
        """One sentence: does the model show [A]'s ordering?"""
        if self.verdict == "not measured":
            return "ordering letter > number: not measured (needs both tasks at a common length)"
        where = {
            r: [n for n, v in self.per_length.items() if v == r] for r in ("above", "below", "unresolved")
        }
        if self.verdict == "shown":
            return "shows [A]'s ordering: letter above number at every length (95% intervals disjoint)"
        if self.verdict == "not shown":
            return f"does not show [A]'s ordering: letter below number at length {_lengths(where['below'])}"
        above = f"letter above number at length {_lengths(where['above'])}; " if where["above"] else ""
        return (
            f"ordering unresolved: {above}the 95% intervals overlap at length {_lengths(where['unresolved'])}"
        )


def _lengths(values: list[int]) -> str:
    return ", ".join(str(v) for v in values)


def ordering(results: Sequence[LengthResult]) -> Ordering:
    """Whether letter accuracy is above number accuracy at every common length (module docstring)."""
    by = {(r.task, r.length): r for r in results if r.n_prompts}
    common = sorted({n for t, n in by if t == "letter"} & {n for t, n in by if t == "number"})
    per_length = {}
    for n in common:
        a, b = by[("letter", n)], by[("number", n)]
        per_length[n] = _compare(a.ci_low, a.ci_high, b.ci_low, b.ci_high)  # type: ignore[arg-type]
    if not per_length:
        return Ordering("not measured", {})
    values = set(per_length.values())
    verdict = "shown" if values == {"above"} else "not shown" if "below" in values else "unresolved"
    return Ordering(verdict, per_length)


def threshold_checks(
    results: Sequence[LengthResult], thresholds: Sequence[Threshold] = REPORTED_THRESHOLDS
) -> list[dict[str, Any]]:
    """Each threshold at a measured length: ``met``, ``missed`` or ``unresolved`` (module docstring)."""
    by = {(r.task, r.length): r for r in results if r.n_prompts}
    out = []
    for th in thresholds:
        r = by.get((th.task, th.length))
        if r is None:
            continue
        assert r.ci_low is not None and r.ci_high is not None
        if th.relation == ">":
            verdict = "met" if r.ci_low > th.value else "missed" if r.ci_high < th.value else "unresolved"
        else:
            verdict = "met" if r.ci_high < th.value else "missed" if r.ci_low > th.value else "unresolved"
        out.append(
            {
                "task": th.task,
                "length": th.length,
                "reported": f"{th.relation} {th.value}",
                "accuracy_mean": r.accuracy_mean,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "verdict": verdict,
            }
        )
    return out


def tasks_in(results: Sequence[LengthResult]) -> list[str]:
    """The tasks present, in :data:`TASKS` order."""
    present = {r.task for r in results}
    return [t for t in TASKS if t in present]

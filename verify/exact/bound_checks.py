"""Compare measured extremes with a bound, row by row, deciding every row that can be decided.

A row ``measured <= bound`` gets one status:

- ``holds`` / ``violated``: the floating-point enclosures ``measured +- m_err`` and ``bound +- b_err``
  are disjoint (``m_hi <= b_lo``, resp. ``m_lo > b_hi``), or an identity proves ``measured <= bound``;
- ``holds-equal``: an identity proves ``measured == bound`` (docs/theory.md section 5; e.g. for
  T_Index the competitor one step from the target scores ``g(1) = 2 sin(theta/2)^2``, which the
  symbolic layer proves equal to ``1 - cos(theta)``). Equality is never inferred from digits;
- ``tight-holds`` / ``tight-violated``: the enclosures overlap, and ``refine`` (a high-precision
  re-enclosure of the row) separates them;
- ``tight-equal``: only from a *point* refinement (legacy callers that return two mpmath numbers): the
  two agree to 30 digits relative to ``max(1, |measured|, |bound|)``. Identities are preferred;
- ``undecided``: none of the above. Never counted as a pass; the reason is counted in
  ``detail["undecided_reasons"]``.

All decisions are vectorised over the rows; only overlapping rows without an identity reach ``refine``.
:func:`min_of_terms` combines per-term comparisons into one for ``bound = min(terms)``: a row holds
when it holds for every term, is violated when it is violated for some term, and holds with equality
when it also equals one of the terms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Refine = Callable[[int], tuple[Any, Any]]
"""``refine(n) -> (measured, bound)`` at high precision for an overlapping row: either two
``(lo, hi)`` enclosures (decided by separation) or two mpmath numbers (legacy point refinement)."""

HOLDS = ("holds", "holds-equal", "tight-holds", "tight-equal")
"""Statuses that count as the bound holding at that row."""
VIOLATED = ("violated", "tight-violated")
"""Statuses that count as the bound failing at that row."""
POINT_TIE = 1e-30
"""Point refinements closer than this (relative to ``max(1, |measured|, |bound|)``) are a tie."""


@dataclass
class RowIdentity:
    """What an identity proves per row: ``at_most`` (``measured <= bound``), ``equal`` (``==``)."""

    at_most: np.ndarray
    equal: np.ndarray
    statement: str


@dataclass
class BoundComparison:
    """Outcome of ``measured(n) <= bound(n)`` over a sweep."""

    term: str
    reading: str
    n: np.ndarray
    status: np.ndarray  # one of HOLDS, VIOLATED or "undecided" per row
    ratio: np.ndarray  # measured / bound
    detail: dict[str, Any] = field(default_factory=dict)
    reasons: np.ndarray | None = None  # per row: why it is undecided ("" otherwise)

    @property
    def violated_n(self) -> np.ndarray:
        return self.n[np.isin(self.status, VIOLATED)]

    @property
    def undecided_n(self) -> np.ndarray:
        return self.n[self.status == "undecided"]

    @property
    def holds(self) -> bool:
        """True when no row is violated and none is undecided."""
        return self.violated_n.size == 0 and self.undecided_n.size == 0

    @property
    def first_violation(self) -> int | None:
        v = self.violated_n
        return int(v[0]) if v.size else None

    def verdict(self) -> str:
        if self.violated_n.size:
            return "violated"
        if self.undecided_n.size:
            return "unresolvable"
        return "holds"

    def counts(self) -> dict[str, int]:
        """Rows per status."""
        values, counts = np.unique(self.status, return_counts=True)
        return {str(s): int(c) for s, c in zip(values, counts, strict=True)}

    def summary(self) -> dict[str, Any]:
        finite = np.isfinite(self.ratio)
        return {
            "term": self.term,
            "reading": self.reading,
            "verdict": self.verdict(),
            "rows": self.counts(),
            "first_violation_n": self.first_violation,
            "max_ratio": float(self.ratio[finite].max()) if finite.any() else None,
            **self.detail,
        }


def _decide_refined(measured: Any, bound: Any) -> tuple[str, str]:
    """Status and reason of one refined row (intervals: separation; points: the legacy tie rule)."""
    if isinstance(measured, tuple) and isinstance(bound, tuple):
        (m_lo, m_hi), (b_lo, b_hi) = measured, bound
        if m_hi <= b_lo:
            return "tight-holds", ""
        if m_lo > b_hi:
            return "tight-violated", ""
        return "undecided", "enclosures overlap at the refinement's precision and no identity applies"
    d = measured - bound
    scale = max(1.0, abs(float(measured)), abs(float(bound)))
    if abs(d) <= POINT_TIE * scale:
        return "tight-equal", ""
    return ("tight-violated" if d > 0 else "tight-holds"), ""


def judge_rows(
    term: str,
    reading: str,
    n: np.ndarray,
    measured: np.ndarray,
    m_err: np.ndarray | float,
    bound: np.ndarray,
    b_err: np.ndarray | float,
    identity: RowIdentity | None = None,
    refine: Refine | None = None,
    max_refine: int | None = None,
) -> BoundComparison:
    """Status of ``measured <= bound`` for every row (see the module docstring).

    ``m_err``, ``b_err`` bound the floating-point errors of ``measured`` and ``bound``; NaN measurements
    are ``undecided``. ``max_refine`` caps the refined rows (``None``: no cap); rows past the cap stay
    undecided and say so.
    """
    n = np.asarray(n)
    measured = np.asarray(measured, dtype=np.float64)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), measured.shape)
    m_err = np.broadcast_to(np.asarray(m_err, dtype=np.float64), measured.shape)
    b_err = np.broadcast_to(np.asarray(b_err, dtype=np.float64), measured.shape)
    m_lo, m_hi = measured - m_err, measured + m_err
    b_lo, b_hi = bound - b_err, bound + b_err
    status = np.full(measured.shape, "undecided", dtype=object)
    reasons = np.full(measured.shape, "", dtype=object)
    status[m_hi <= b_lo] = "holds"
    status[m_lo > b_hi] = "violated"
    contradictions = 0
    if identity is not None:
        at_most = np.broadcast_to(np.asarray(identity.at_most, dtype=bool), measured.shape)
        equal = np.broadcast_to(np.asarray(identity.equal, dtype=bool), measured.shape) & at_most
        # a proof that contradicts the enclosures means an error bound is wrong: count it, trust the proof
        contradictions = int(((status == "violated") & at_most).sum() + ((status == "holds") & equal).sum())
        status[at_most & (status != "holds")] = "holds"
        status[equal] = "holds-equal"
    nan = np.isnan(measured) | np.isnan(bound)
    status[nan] = "undecided"
    reasons[nan] = "no value (NaN)"
    refined = 0
    open_rows = np.nonzero((status == "undecided") & ~nan)[0]
    for r in open_rows:
        if refine is None:
            reasons[r] = "floating-point enclosures overlap and no identity applies"
            continue
        if max_refine is not None and refined >= max_refine:
            reasons[r] = f"refinement cap reached (max_refine={max_refine})"
            continue
        status[r], reasons[r] = _decide_refined(*refine(int(n[r])))
        refined += 1
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = measured / bound
    undecided = status == "undecided"
    why, count = np.unique(reasons[undecided].astype(str), return_counts=True)
    detail = {
        "refined_rows": refined,
        "identity_rows": int(identity.at_most.sum()) if identity is not None else 0,
        "undecided_reasons": {str(w): int(c) for w, c in zip(why, count, strict=True)},
    }
    if identity is not None:
        detail["identity"] = identity.statement
        detail["enclosure_contradictions"] = contradictions
    return BoundComparison(term, reading, n, status.astype(str), ratio, detail, reasons.astype(str))


def compare(
    term: str,
    reading: str,
    n: np.ndarray,
    measured: np.ndarray,
    bound: np.ndarray,
    tol: np.ndarray | float,
    refine: Refine | None = None,
    max_refine: int | None = 512,
    identity: RowIdentity | None = None,
) -> BoundComparison:
    """Judge ``measured <= bound`` with one symmetric tolerance ``tol`` on the difference (the sum of
    both sides' rounding bounds): :func:`judge_rows` with ``m_err = tol``, ``b_err = 0``."""
    return judge_rows(term, reading, n, measured, tol, bound, 0.0, identity, refine, max_refine)


def min_of_terms(
    term: str, parts: Sequence[BoundComparison], measured: np.ndarray, bound: np.ndarray
) -> BoundComparison:
    """Combine the comparisons of ``measured`` with each term into ``measured <= bound = min(terms)``."""
    if not parts:
        raise ValueError("min_of_terms needs at least one comparison")
    first = parts[0]
    statuses = np.stack([p.status for p in parts])
    violated = np.isin(statuses, VIOLATED)
    holds = np.isin(statuses, HOLDS)
    status = np.full(first.status.shape, "undecided", dtype=object)
    reasons = np.full(first.status.shape, "", dtype=object)
    all_hold = holds.all(0)
    status[all_hold] = np.where((statuses == "tight-holds").any(0), "tight-holds", "holds")[all_hold]
    equal = all_hold & np.isin(statuses, ("holds-equal", "tight-equal")).any(0)
    status[equal] = np.where((statuses == "holds-equal").any(0), "holds-equal", "tight-equal")[equal]
    any_violated = violated.any(0)
    tight_violation = (statuses == "tight-violated").any(0) & ~(statuses == "violated").any(0)
    status[any_violated] = np.where(tight_violation, "tight-violated", "violated")[any_violated]
    open_rows = np.nonzero(status == "undecided")[0]
    for r in open_rows:
        reasons[r] = "; ".join(
            f"{p.term}: {p.reasons[r] if p.reasons is not None else 'undecided'}"
            for p in parts
            if p.status[r] == "undecided"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.asarray(measured, dtype=np.float64) / np.asarray(bound, dtype=np.float64)
    undecided = status == "undecided"
    why, count = np.unique(reasons[undecided].astype(str), return_counts=True)
    detail = {
        "terms": [p.term for p in parts],
        "refined_rows": int(sum(p.detail.get("refined_rows", 0) for p in parts)),
        "identity_rows": int(max(p.detail.get("identity_rows", 0) for p in parts)),
        "undecided_reasons": {str(w): int(c) for w, c in zip(why, count, strict=True)},
        "enclosure_contradictions": int(sum(p.detail.get("enclosure_contradictions", 0) for p in parts)),
    }
    return BoundComparison(term, first.reading, first.n, status.astype(str), ratio, detail, reasons.astype(str))

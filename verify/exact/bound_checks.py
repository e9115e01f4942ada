"""Compare measured extremes with a bound, row by row, judging each row against rounding.

A row ``measured <= bound`` is

- ``holds`` when ``measured <= bound - tol``;
- ``violated`` when ``measured > bound + tol``;
- ``tight`` when ``|measured - bound| <= tol``: float64 cannot decide. Tight rows are re-decided
  by ``refine`` (an mpmath evaluation of both sides at 40 digits) when one is given, and otherwise
  stay undecided; they are never counted as a pass.

``tol`` is the rounding bound of the dtype that produced ``measured`` plus that of the bound's
float64 evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Refine = Callable[[int], tuple[float, float]]
"""``refine(n) -> (measured, bound)`` at high precision, for a tight row."""


@dataclass
class BoundComparison:
    """Outcome of ``measured(n) <= bound(n)`` over a sweep.

    Shapes: n [rows]; status [rows]; ratio [rows]
    """

    term: str
    reading: str
    n: np.ndarray
    status: (
        np.ndarray
    )  # "holds" / "violated" / "tight-holds" / "tight-equal" / "tight-violated" / "undecided"
    ratio: np.ndarray  # measured / bound
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def violated_n(self) -> np.ndarray:
        return self.n[np.isin(self.status, ("violated", "tight-violated"))]

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

    def summary(self) -> dict[str, Any]:
        counts = {s: int((self.status == s).sum()) for s in np.unique(self.status)}
        finite = np.isfinite(self.ratio)
        return {
            "term": self.term,
            "reading": self.reading,
            "verdict": self.verdict(),
            "rows": counts,
            "first_violation_n": self.first_violation,
            "max_ratio": float(self.ratio[finite].max()) if finite.any() else None,
            **self.detail,
        }


def compare(
    term: str,
    reading: str,
    n: np.ndarray,
    measured: np.ndarray,
    bound: np.ndarray,
    tol: np.ndarray | float,
    refine: Refine | None = None,
    max_refine: int = 512,
) -> BoundComparison:
    """Judge ``measured <= bound`` for every row (NaN measurements are ``undecided``).

    Shapes: n [rows]; measured [rows]; bound [rows]; tol [rows] (or a float)
    """
    n = np.asarray(n)
    measured, bound = np.asarray(measured, dtype=np.float64), np.asarray(bound, dtype=np.float64)
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), measured.shape)
    diff = measured - bound
    status = np.where(diff > tol, "violated", np.where(diff < -tol, "holds", "tight")).astype(object)
    status[np.isnan(measured)] = "undecided"
    refined = 0
    for r in np.nonzero(status == "tight")[0]:
        if refine is None or refined >= max_refine:
            status[r] = "undecided"
            continue
        m_hi, b_hi = refine(int(n[r]))
        refined += 1
        d = m_hi - b_hi
        scale = max(abs(m_hi), abs(b_hi), 1e-300)
        status[r] = (
            "tight-equal" if abs(d) <= 1e-30 * scale else ("tight-violated" if d > 0 else "tight-holds")
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = measured / bound
    return BoundComparison(term, reading, n, status.astype(str), ratio, {"refined_rows": refined})

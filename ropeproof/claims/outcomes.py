"""Outcomes built from the library's verdict objects, shared by the topic modules.

:func:`certified_outcome` turns interval-certified comparisons
(:class:`~ropeproof.verify.exact.certified.CertifiedComparison`) into one :class:`Outcome`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ropeproof.claims.registry import Outcome
from ropeproof.verify.exact.certified import CertifiedComparison


def certified_outcome(
    comparisons: Mapping[str, CertifiedComparison],
    witness: Callable[[str, int], Any] | None = None,
    detail: str = "",
) -> Outcome:
    """One outcome for several certified comparisons, keyed by label.

    The verdict is ``violated`` if any row of any comparison is certified violated, else
    ``unresolvable`` if any row is undecided, else ``holds``. Figures: each comparison's summary,
    the total ``violated_rows`` and the smallest ``first_violation_n``. The counterexample is the
    first violated row of the first violated comparison: its ``n``, both enclosures, and
    ``witness(label, n)`` (the attaining input) when given.
    """
    figures: dict[str, Any] = {label: cmp.summary() for label, cmp in comparisons.items()}
    verdicts = [cmp.verdict() for cmp in comparisons.values()]
    cex = None
    firsts = []
    for label, cmp in comparisons.items():
        if cmp.violated_n.size:
            n = int(cmp.violated_n[0])
            firsts.append(n)
            if cex is None:
                r = int(n - cmp.n[0])
                cex = {
                    "check": label,
                    "n": n,
                    "measured": [float(cmp.measured_lo[r]), float(cmp.measured_hi[r])],
                    "bound": [float(cmp.bound_lo[r]), float(cmp.bound_hi[r])],
                }
                if witness is not None:
                    cex["input"] = witness(label, n)
    figures["violated_rows"] = sum(int(cmp.violated_n.size) for cmp in comparisons.values())
    figures["first_violation_n"] = min(firsts) if firsts else None
    figures["seconds"] = round(sum(cmp.seconds for cmp in comparisons.values()), 3)
    violated = "violated" in verdicts
    undecided = "unresolvable" in verdicts
    return Outcome.judge(
        ok=not violated,
        figures=figures,
        key_figure="first_violation_n" if violated else "violated_rows",
        counterexample=cex,
        resolvable=violated or not undecided,
        detail=detail,
        certified=True,
    )

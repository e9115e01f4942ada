"""What a check finds: a verdict with the figures behind it (:class:`Outcome`).

The judging functions of :mod:`ropeproof.verify` return these, and the claims of :mod:`ropeproof.claims`
state a claim and call one of them, so the judging (tolerances, refinements, conventions) lives with the
checks and is testable without the claim registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["holds", "violated", "unresolvable", "error"]
VERDICTS: tuple[str, ...] = ("holds", "violated", "unresolvable", "error")


@dataclass
class Outcome:
    """A check's result: a verdict, the figures measured, and for a violation a counterexample.

    ``key_figure`` names the entry of ``figures`` shown in the report table. ``certified`` is true
    when every number behind the verdict came from exact or interval arithmetic.
    """

    verdict: Verdict
    figures: dict[str, Any] = field(default_factory=dict)
    key_figure: str | None = None
    counterexample: Any = None
    detail: str = ""
    certified: bool = False

    @classmethod
    def judge(
        cls,
        ok: bool,
        figures: dict[str, Any],
        key_figure: str | None = None,
        counterexample: Any = None,
        resolvable: bool = True,
        detail: str = "",
        certified: bool = False,
    ) -> Outcome:
        """``holds``/``violated`` from ``ok``, or ``unresolvable`` when the dtype cannot decide."""
        verdict: Verdict = ("holds" if ok else "violated") if resolvable else "unresolvable"
        return cls(verdict, figures, key_figure, None if ok else counterexample, detail, certified)

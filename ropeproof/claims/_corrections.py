"""Corrected statements, kept as data next to the claims they correct (docs/theory.md section 9).

A pinned ``violated`` claim about a statement of [A] or [B] says where the statement fails; a
:class:`Correction` says what is true instead: the claims it corrects, the reading of Delta and the
length convention it is stated under, one sentence and its LaTeX (and the same with ``n`` read as the
largest offset), its status (one of :data:`STATUSES`), its range, how tight it is, and a function of
the verify layer that computes the exact quantity, the reported and corrected statements per length, a
witness and the proof steps (:class:`~ropeproof.verify.studies.errata._correction_data.CorrectionData`).
A topic module adds its corrections to its own :class:`~ropeproof.claims._registry.ClaimSet` with
``CLAIMS.add_correction(...)``; a pinned ``violated`` claim that has none yet gets
``CLAIMS.no_correction(claim_id, reason)``.

A correction is pinned like a claim: :func:`run_correction` computes it, and the result is a regression
(``ropeproof check --strict`` and ``ropeproof errata --strict`` fail) when the status that the
computation establishes differs from the declared one, or a pinned figure changed, or it raised.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ropeproof.claims._registry import Approx, CheckContext, Claim, NoCorrection, Quick, pin_matches
from ropeproof.verify.kernel._threads import thread_policy
from ropeproof.verify.studies.errata._correction_data import CorrectionData

Status = Literal["machine-checked", "proved", "certified", "conjectured"]
STATUSES: tuple[str, ...] = ("machine-checked", "proved", "certified", "conjectured")
"""The status levels, strongest first (docs/theory.md section 9): ``machine-checked`` (every proof step a
checked identity, inequality, exhaustive computation or restated definition, none argued), ``proved`` (a
complete written proof in docs/theory.md with some steps argued, named in the status basis),
``certified`` (interval arithmetic for every ``n`` of a stated range), ``conjectured`` (evidence over a
stated range)."""
REFERENCE = "docs/theory.md section 9"
__all__ = [
    "STATUSES",
    "Correction",
    "CorrectionResult",
    "NoCorrection",
    "corrections_for",
    "is_paper_finding",
    "run_correction",
    "uncorrected_findings",
]


@dataclass(frozen=True)
class Correction:
    """A corrected statement (module docstring). ``statement``, ``offset_statement``, ``tightness`` and
    ``range`` may hold ``{name}`` fields, filled from the parameters that ran and the pins (floats to
    6 significant digits), so every number in them is one that runs or is pinned."""

    id: str
    corrects: tuple[str, ...]
    reading: str
    statement: str
    latex: str
    offset_statement: str
    status: Status
    range: str
    tightness: str
    sketch: str
    compute: Callable[[CheckContext], CorrectionData]
    params: dict[str, Any] = field(default_factory=dict)
    pins: dict[str, Any] = field(default_factory=dict)
    reference: str = REFERENCE

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"correction {self.id!r}: status={self.status!r}; accepted: {STATUSES}")
        if not self.corrects:
            raise ValueError(f"correction {self.id!r} corrects no claim")
        for quick in (False, True):
            self.text(self.statement, quick)
            self.text(self.offset_statement, quick)
            self.text(self.tightness, quick)
            self.text(self.range, quick)

    @property
    def claim(self) -> str:
        """The first claim it corrects (the JSON field ``claim``)."""
        return self.corrects[0]

    def params_for(self, quick: bool) -> dict[str, Any]:
        """The parameters that run: every :class:`Quick` resolved."""
        return {k: v.resolve(quick) if isinstance(v, Quick) else v for k, v in self.params.items()}

    def text(self, template: str, quick: bool) -> str:
        """``template`` with ``{name}`` fields filled from :meth:`params_for` and the pins."""
        values = {k: f"{v.value:.6g}" if isinstance(v, Approx) else v for k, v in self.pins.items()}
        try:
            return template.format(**{**self.params_for(quick), **values})
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"correction {self.id!r}: field {exc} has no parameter or pin") from exc


@dataclass
class CorrectionResult:
    """A correction with what :func:`run_correction` computed: the data (``None`` when it raised), the
    figures (the data's summary, the status it establishes and why), the seconds it took."""

    correction: Correction
    data: CorrectionData | None
    figures: dict[str, Any]
    seconds: float
    quick: bool = False
    error: str | None = None

    @property
    def established(self) -> str:
        """The status the computation establishes (``error`` when it raised)."""
        return "error" if self.error is not None else str(self.figures.get("established"))

    @property
    def pin_mismatches(self) -> dict[str, tuple[Any, Any]]:
        """``{figure: (pinned, got)}`` for every pin the figures do not match."""
        return {
            k: (v, self.figures.get(k, "<missing>"))
            for k, v in self.correction.pins.items()
            if not pin_matches(v, self.figures.get(k))
        }

    @property
    def regression(self) -> str | None:
        """Why this result fails ``--strict``: an error, a status that the computation no longer
        establishes, or a pinned figure that changed; ``None`` when none."""
        if self.error is not None:
            return "the correction raised an error"
        if self.established != self.correction.status:
            why = self.figures.get("status_basis", "")
            return f"declared {self.correction.status}, established {self.established} ({why})"
        mismatched = self.pin_mismatches
        if mismatched:
            return "; ".join(f"{k} pinned at {v[0]}, got {v[1]}" for k, v in mismatched.items())
        return None


@thread_policy()
def run_correction(c: Correction, ctx: CheckContext) -> CorrectionResult:
    """Compute ``c`` with its resolved parameters; an exception becomes a result with ``error`` set."""
    start = time.perf_counter()
    run_ctx = dataclasses.replace(ctx, params=c.params_for(ctx.quick))
    try:
        data = c.compute(run_ctx)
        established, why = data.established()
        figures = {**data.summary_figures(), "established": established, "status_basis": why}
        return CorrectionResult(c, data, figures, time.perf_counter() - start, ctx.quick)
    except Exception as exc:  # a failing correction is reported, never fatal to the run
        detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
        return CorrectionResult(c, None, {}, time.perf_counter() - start, ctx.quick, error=detail)


def is_paper_finding(claim: Claim) -> bool:
    """Whether ``claim`` is a pinned ``violated`` finding about a statement of [A] or [B] (its reference
    names the paper), the kind of claim that needs a correction or an explicit "no correction yet"."""
    return claim.expected == "violated" and ("[A]" in claim.reference or "[B]" in claim.reference)


def uncorrected_findings(
    claims: list[Claim], corrections: list[Correction], no_corrections: list[NoCorrection]
) -> list[str]:
    """Ids of the paper findings among ``claims`` (:func:`is_paper_finding`) that have neither a
    correction nor an explicit "no correction yet" (an empty list when every finding is answered)."""
    answered = {cid for c in corrections for cid in c.corrects} | {nc.claim for nc in no_corrections}
    return [c.id for c in claims if is_paper_finding(c) and c.id not in answered]


def corrections_for(
    corrections: list[Correction], claim_ids: Mapping[str, Any] | set[str]
) -> list[Correction]:
    """The corrections of ``corrections`` that correct at least one of ``claim_ids`` (in order)."""
    ids = set(claim_ids)
    return [c for c in corrections if ids.intersection(c.corrects)]

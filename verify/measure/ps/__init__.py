"""Positional and symbolic heads: [B]'s exact deviations and the exclusion principle
(:func:`exact_exclusion`), [A]'s practical scores S_pos and S_sym (:func:`ps_scores`, on the rows of
:func:`last_row_fn` or :func:`logit_row_fn`) and per-frequency profiles (:func:`per_frequency_scores`),
and a compiled head with inputs to score (:func:`head_subject`). The modules are private."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "PSScores": "ropeproof.verify.measure.ps._scores",
    "ps_scores": "ropeproof.verify.measure.ps._scores",
    "last_row_fn": "ropeproof.verify.measure.ps._scores",
    "ExclusionReport": "ropeproof.verify.measure.ps._exact",
    "exact_exclusion": "ropeproof.verify.measure.ps._exact",
    "logit_row_fn": "ropeproof.verify.measure.ps._exact",
    "per_frequency_scores": "ropeproof.verify.measure.ps._per_frequency",
    "head_subject": "ropeproof.verify.measure.ps._head_subject",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.measure.ps._exact import ExclusionReport, exact_exclusion, logit_row_fn
    from ropeproof.verify.measure.ps._head_subject import head_subject
    from ropeproof.verify.measure.ps._per_frequency import per_frequency_scores
    from ropeproof.verify.measure.ps._scores import PSScores, last_row_fn, ps_scores

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

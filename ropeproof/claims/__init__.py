"""The claim registry and the claims ``ropeproof check`` verifies.

- :mod:`ropeproof.claims._registry`: what a claim is (:class:`Claim`, :class:`CheckContext`; the
  :class:`Outcome` a check returns comes from :mod:`ropeproof.verify.measure._outcome`), :class:`ClaimSet`,
  and
  running claims;
- :mod:`ropeproof.claims._containment`: a check cannot end or move the run around it;
- :mod:`ropeproof.claims._corrections`: corrected statements of the claims that refute a paper's
  statement, kept next to those claims (:func:`registered_corrections`);
- one module per topic, each with its own ``CLAIMS`` set, loaded from :data:`BUILTIN_TOPICS` in
  report order: a claim states what is checked and calls the judging functions of
  :mod:`ropeproof.verify` (tolerances, refinements and conventions live there).

Your own claims use the module-level :func:`claim` decorator (they land in
:data:`~ropeproof.claims._registry.USER_CLAIMS` and run after the built-in ones) or a
:class:`ClaimSet` of your own; either way they are listed under :data:`USER_SECTION` and read as
expected against got (:attr:`Claim.builtin`). :mod:`ropeproof.claims._loading` loads them from files,
modules and the ``ropeproof.claims`` entry-point group, and selects claims by id;
``ropeproof check`` loads and runs them in a process of their own, under a time limit
(:mod:`ropeproof.claims._claims_process`), and every claim runs with the process-wide settings it
changes put back afterwards (:mod:`ropeproof.claims._global_state`).
"""

from __future__ import annotations

import importlib

from ropeproof.claims._loading import (
    ENTRY_POINT_GROUP,
    ClaimLoadError,
    claim_source,
    declared_entry_points,
    entry_point_claims,
    gather_claims,
    load_claims,
    merge_claims,
    select_claims,
)
from ropeproof.claims._registry import (
    USER_CLAIMS,
    USER_SECTION,
    Approx,
    CheckContext,
    Claim,
    ClaimResult,
    ClaimSet,
    NoCorrection,
    Outcome,
    Quick,
    claim,
    run_claim,
    run_claims,
)

BUILTIN_TOPICS: tuple[str, ...] = (
    "ropeproof.claims._rope",
    "ropeproof.claims._thm31",
    "ropeproof.claims._thm32",
    "ropeproof.claims._remark31",
    "ropeproof.claims._ps",
    "ropeproof.claims._many_plane",
    "ropeproof.claims._letter_codes",
    "ropeproof.claims._partial_induction",
    "ropeproof.claims._multihop",
    "ropeproof.claims._training",
    "ropeproof.claims._llm_eval",
)
"""The topic modules of the built-in claims, in report order."""


def builtin_claim_sets() -> list[ClaimSet]:
    """The ``CLAIMS`` set of every module in :data:`BUILTIN_TOPICS`, in order."""
    return [importlib.import_module(name).CLAIMS for name in BUILTIN_TOPICS]


def registered_claims() -> list[Claim]:
    """Every claim: the built-in topics in order, then :data:`USER_CLAIMS`. Ids are unique."""
    out: list[Claim] = []
    seen: set[str] = set()
    for claim_set in [*builtin_claim_sets(), USER_CLAIMS]:
        for c in claim_set:
            if c.id in seen:
                raise ValueError(f"claim id {c.id!r} is registered twice")
            seen.add(c.id)
            out.append(c)
    return out


def registered_corrections() -> list:
    """Every correction (:class:`ropeproof.claims._corrections.Correction`) of the built-in topics, then of
    :data:`USER_CLAIMS`, in order. Ids are unique."""
    out = []
    seen: set[str] = set()
    for claim_set in [*builtin_claim_sets(), USER_CLAIMS]:
        for c in claim_set.corrections:
            if c.id in seen:
                raise ValueError(f"correction id {c.id!r} is registered twice")
            seen.add(c.id)
            out.append(c)
    return out


def registered_no_corrections() -> list[NoCorrection]:
    """Every explicit "no correction yet" of the built-in topics and of :data:`USER_CLAIMS`."""
    return [nc for claim_set in [*builtin_claim_sets(), USER_CLAIMS] for nc in claim_set.no_corrections]


__all__ = [
    "BUILTIN_TOPICS",
    "ENTRY_POINT_GROUP",
    "USER_CLAIMS",
    "USER_SECTION",
    "Approx",
    "CheckContext",
    "Claim",
    "ClaimLoadError",
    "ClaimResult",
    "ClaimSet",
    "NoCorrection",
    "Outcome",
    "Quick",
    "builtin_claim_sets",
    "claim",
    "claim_source",
    "declared_entry_points",
    "entry_point_claims",
    "gather_claims",
    "load_claims",
    "merge_claims",
    "registered_claims",
    "registered_corrections",
    "registered_no_corrections",
    "run_claim",
    "run_claims",
    "select_claims",
]

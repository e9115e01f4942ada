"""The claim registry and the claims ``ropeproof check`` verifies.

- :mod:`ropeproof.claims.registry`: what a claim is (:class:`Claim`, :class:`Outcome`,
  :class:`CheckContext`), :class:`ClaimSet`, and running claims;
- :mod:`ropeproof.claims.outcomes`: outcomes built from the library's verdict objects;
- one module per topic, each with its own ``CLAIMS`` set, loaded from :data:`BUILTIN_TOPICS` in
  report order.

Your own claims use the module-level :func:`claim` decorator (they land in
:data:`~ropeproof.claims.registry.USER_CLAIMS` and run after the built-in ones).
"""

from __future__ import annotations

import importlib

from ropeproof.claims.registry import (
    USER_CLAIMS,
    CheckContext,
    Claim,
    ClaimResult,
    ClaimSet,
    Outcome,
    claim,
    run_claim,
    run_claims,
)

BUILTIN_TOPICS: tuple[str, ...] = (
    "ropeproof.claims.rope",
    "ropeproof.claims.thm31",
    "ropeproof.claims.thm32",
    "ropeproof.claims.remark31",
    "ropeproof.claims.ps",
    "ropeproof.claims.many_plane",
    "ropeproof.claims.letter_codes",
    "ropeproof.claims.partial_induction",
    "ropeproof.claims.multihop",
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


__all__ = [
    "BUILTIN_TOPICS",
    "USER_CLAIMS",
    "CheckContext",
    "Claim",
    "ClaimResult",
    "ClaimSet",
    "Outcome",
    "builtin_claim_sets",
    "claim",
    "registered_claims",
    "run_claim",
    "run_claims",
]

"""Input families for exact discrepancy: the family of a construction, and inputs drawn from a family.

:class:`Family` and :class:`FamilyCase` (data, :mod:`ropeproof.theory._family`) say which tokens may
stand where for a query at ``n - 1``; a construction carries its family and :func:`family_for` reads
it. The paper's families are built from a construction's tokens by :func:`index_family`,
:func:`retrieval_family` and :func:`reflexive_family` (:mod:`ropeproof.constructions._paper`), and
:func:`token_family` is every input over a vocabulary.

For a single-layer head the logit of the query against the key at distance ``d`` depends only on the
token there and ``d`` (RoPE is relative), which is what makes exact extremes computable.
"""

from __future__ import annotations

import numpy as np

from ropeproof.constructions import _paper as paper
from ropeproof.machinery._errors import InputError
from ropeproof.theory._construction import Construction
from ropeproof.theory._family import Family, FamilyCase, token_family


def index_family(construction: Construction) -> Family:
    """[A]'s Index family over ``construction``'s letter and integer tokens
    (:func:`ropeproof.constructions._paper.index_family`)."""
    return paper.index_family(construction.tokens)


def retrieval_family(construction: Construction) -> Family:
    """[A]'s Retrieval family over ``construction``'s pair tokens
    (:func:`ropeproof.constructions._paper.retrieval_family`)."""
    return paper.retrieval_family(construction.tokens)


def reflexive_family(construction: Construction) -> Family:
    """The Reflexive family over ``construction``'s tokens
    (:func:`ropeproof.constructions._paper.reflexive_family`)."""
    return paper.reflexive_family(construction.tokens)


def family_for(construction: Construction) -> Family:
    """The input family ``construction`` carries (its ``family``; the paper's constructions carry
    theirs). :class:`InputError` when it carries none: state one with ``Construction(...,
    family=...)`` or ``construction.with_family(family)``."""
    if not isinstance(construction, Construction):
        raise InputError(f"construction must be a Construction, got {type(construction).__name__}")
    if construction.family is None:
        raise InputError(
            f"construction {construction.name!r} carries no input family; give it one with "
            "Construction(..., family=Family(...)) or construction.with_family(family)"
        )
    return construction.family


def family_input(
    family: Family, n: int, case_index: int, target_distance: int, picks: list[int]
) -> tuple[tuple[str, ...], int]:
    """A concrete input of length ``n``: ``picks[p]`` indexes the allowed tokens of position ``p``.

    Returns ``(tokens, target_position)``. ``picks`` has length ``n`` (taken modulo each set's size).
    """
    case = family.cases[case_index]
    if not case.fits(n):
        raise InputError(f"case {case.label} has no input of length n={n}")
    d_t = case.target_distance if case.target_distance is not None else target_distance
    if not (d_t == 0 or 1 <= d_t <= n - 1):
        raise InputError(f"target_distance={d_t} must be in 1..n-1={n - 1}")
    tokens = []
    for p in range(n):
        d = n - 1 - p
        allowed = case.query_tokens if d == 0 else case.target_tokens if d == d_t else case.other_tokens
        tokens.append(allowed[picks[p] % len(allowed)])
    return tuple(tokens), n - 1 - d_t


def sample_family_inputs(
    family: Family, n: int, count: int, seed: int = 0
) -> list[tuple[tuple[str, ...], int]]:
    """``count`` uniform random inputs of length ``n`` from the family (case, target, tokens)."""
    rng = np.random.default_rng(seed)
    cases = family.cases_at(n)
    if not cases:
        raise InputError(f"the {family.name} family has no input of length n={n}")
    out = []
    for _ in range(count):
        ci = int(rng.choice(cases))
        d_t = int(rng.integers(1, n)) if family.cases[ci].target_distance is None else 0
        out.append(family_input(family, n, ci, d_t, rng.integers(0, 1 << 30, size=n).tolist()))
    return out


__all__ = [
    "Family",
    "FamilyCase",
    "family_for",
    "family_input",
    "index_family",
    "reflexive_family",
    "retrieval_family",
    "sample_family_inputs",
    "token_family",
]

"""Input families for exact discrepancy: which tokens may stand where, for a query at ``n - 1``.

A family is a list of :class:`FamilyCase` s. In a case the query position holds one of
``query_tokens`` (all with the same query vector), the target position holds one of
``target_tokens`` and every other position holds one of ``other_tokens``. The target sits
``target_distance`` positions back from the query: a fixed ``s >= 1`` (T_Index), ``0`` (the query
itself, Reflexive), or ``None`` for any of ``1 .. n - 1`` (T_Retrieval). The family at length ``n``
is every such input, over every case that fits in ``n``.

For a single-layer head the logit of the query against the key at distance ``d`` depends only on the
token there and ``d`` (RoPE is relative), which is what makes exact extremes computable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ropeproof.theory.construction import Construction
from ropeproof.theory.errors import ConstructionError, InputError


@dataclass(frozen=True)
class FamilyCase:
    """One query configuration of a family (see the module docstring)."""

    label: str
    query_tokens: tuple[str, ...]
    target_tokens: tuple[str, ...]
    other_tokens: tuple[str, ...]
    target_distance: int | None

    def fits(self, n: int) -> bool:
        """Whether an input of length ``n`` exists in this case."""
        if n < 2:
            return False
        return self.target_distance is None or self.target_distance <= n - 1


@dataclass(frozen=True)
class Family:
    """A named task family: its cases and a one-line description."""

    name: str
    cases: tuple[FamilyCase, ...]
    description: str

    def cases_at(self, n: int) -> list[int]:
        """Indices of the cases with an input of length ``n``."""
        return [i for i, c in enumerate(self.cases) if c.fits(n)]

    def max_length(self) -> int | None:
        """Largest ``n`` for which every length ``2..n`` is fully covered (``None``: unbounded)."""
        fixed = [c.target_distance for c in self.cases if c.target_distance not in (None, 0)]
        return None if not fixed else max(fixed) + 1  # type: ignore[operator]


def _require(construction: Construction, name: str) -> None:
    if construction.name != name:
        raise ConstructionError(f"the {name} family needs the {name} construction, got {construction.name!r}")


def index_family(construction: Construction) -> Family:
    """*Index at length n*: integer ``s`` at ``n - 1`` for every ``s`` in ``1 .. n-1``; a letter at
    ``n - 1 - s``; any token elsewhere. Lengths up to ``max_int + 1`` are covered."""
    _require(construction, "index")
    letters = tuple(t.name for t in construction.tokens if t.kind == "letter")
    everything = tuple(construction.token_names)
    cases = tuple(
        FamilyCase(f"s={t.params['s']}", (t.name,), letters, everything, int(t.params["s"]))
        for t in construction.tokens
        if t.kind == "integer"
    )
    return Family("index", cases, "query integer s at n-1, letter at n-1-s, any token elsewhere")


def retrieval_family(construction: Construction) -> Family:
    """*Retrieval at length n*: ``(X, Y)`` with ``X != Y`` at ``n - 1``; exactly one earlier pair with
    left letter ``Y``; every other position any pair whose left letter is not ``Y``."""
    _require(construction, "retrieval")
    pairs = [t for t in construction.tokens if t.kind == "pair"]
    codes = sorted({int(t.params["phi_left"]) for t in pairs})
    cases = []
    for y in codes:
        queries = tuple(
            t.name
            for t in pairs
            if t.rule == "pair_ll" and int(t.params["phi_right"]) == y and int(t.params["phi_left"]) != y
        )
        targets = tuple(t.name for t in pairs if int(t.params["phi_left"]) == y)
        others = tuple(t.name for t in pairs if int(t.params["phi_left"]) != y)
        cases.append(FamilyCase(f"Y=phi{y}", queries, targets, others, None))
    return Family(
        "retrieval", tuple(cases), "query (X, Y), X != Y; one earlier pair (Y, *); others (L != Y, *)"
    )


def reflexive_family(construction: Construction) -> Family:
    """*Reflexive at length n*: any token at ``n - 1`` is its own target; any token elsewhere."""
    _require(construction, "reflexive")
    everything = tuple(construction.token_names)
    cases = tuple(FamilyCase(f"self={t}", (t,), (t,), everything, 0) for t in everything)
    return Family("reflexive", cases, "any token at n-1 is the target; any token elsewhere")


FAMILIES = {"index": index_family, "retrieval": retrieval_family, "reflexive": reflexive_family}


def family_for(construction: Construction) -> Family:
    """The standard family of one of the paper's constructions."""
    if construction.name not in FAMILIES:
        raise InputError(
            f"no standard family for construction {construction.name!r}; accepted: {sorted(FAMILIES)}"
        )
    return FAMILIES[construction.name](construction)


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


def token_family(tokens: Sequence[str], query_tokens: Sequence[str] | None = None) -> Family:
    """*Any input over a vocabulary*: a token of ``query_tokens`` (default: every token) at ``n - 1``
    and any of ``tokens`` at every other position; no target.

    One case per query token, with the query position as its own target (``target_distance = 0``)
    so the family is well defined for any head. Its ``gap_sup`` is [A]'s discrepancy ``Delta(n)``
    (the largest top-1 minus top-2 gap of the query row over the family) and ``gap_inf`` the
    smallest; its ``margin_inf`` is the query's own logit minus the best earlier one, which means
    something only for heads that should attend to themselves.
    """
    names = tuple(str(t) for t in tokens)
    if not names:
        raise InputError("tokens must be a non-empty list of token names")
    queries = names if query_tokens is None else tuple(str(t) for t in query_tokens)
    unknown = sorted(set(queries) - set(names))
    if unknown or not queries:
        raise InputError(f"query_tokens must be a non-empty subset of tokens; unknown: {unknown[:5]}")
    cases = tuple(FamilyCase(f"query={q}", (q,), (q,), names, 0) for q in queries)
    return Family("tokens", cases, "any query token at n-1, any token elsewhere (no target)")

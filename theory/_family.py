"""Input families as data: which tokens may stand where, for a query at position ``n - 1``.

A :class:`Family` is a list of :class:`FamilyCase` s. In a case the query position holds one of
``query_tokens`` (all with the same query vector), the target position holds one of ``target_tokens``
and every other position holds one of ``other_tokens``. The target sits ``target_distance`` positions
back from the query:

- a fixed ``d >= 1`` (a previous-token head: ``d = 1``; T_Index's integer ``s``: ``d = s``);
- ``0``: the query is its own target (Reflexive; the family of all token sequences);
- ``None``: any of ``1 .. n - 1`` (T_Retrieval: the one matching pair may stand anywhere).

The family at length ``n`` is every such input, over every case that fits in ``n`` (a case with a
fixed ``d`` fits from ``n = d + 1`` on). A family whose definition asks for a target at *every*
offset ``1 .. n - 1`` at length ``n`` (T_Index: the query may be any integer ``s < n``) says so with
``every_offset=True``; it is then complete only while a case exists for each of those offsets
(:meth:`Family.max_length`). Every other family is complete at every length from
:meth:`Family.min_length` on.

A construction carries its family (``Construction(..., family=...)`` or
``construction.with_family(family)``); a compiled head and its saved directory record it
(``head.json``'s ``"family"``, :meth:`Family.to_dict`). Token names are the only link to a
vocabulary, so a family is plain data: :meth:`Family.to_dict` / :meth:`Family.from_dict` round-trip
it through JSON.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ropeproof.machinery._errors import InputError

FAMILY_FORMAT = "ropeproof-family"
"""The ``"format"`` tag of a family written by :meth:`Family.to_dict`."""
MAX_DISTANCE = 2**31 - 1
"""The largest fixed target distance a case may state (lengths are int32-indexed past it)."""


def _names(value: object, what: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InputError(f"{what}={value!r} must be a non-empty list of token names")
    out = tuple(value)
    if not out or not all(isinstance(t, str) and t for t in out):
        raise InputError(f"{what}={list(out)[:5]!r} must be a non-empty list of non-empty token names")
    return out


@dataclass(frozen=True)
class FamilyCase:
    """One query configuration of a family (see the module docstring).

    ``target_distance``: ``d >= 1`` (the target ``d`` positions back), ``0`` (the query itself) or
    ``None`` (any of ``1 .. n - 1``).
    """

    label: str
    query_tokens: tuple[str, ...]
    target_tokens: tuple[str, ...]
    other_tokens: tuple[str, ...]
    target_distance: int | None

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise InputError(f"label={self.label!r} must be a non-empty string")
        for what in ("query_tokens", "target_tokens", "other_tokens"):
            object.__setattr__(self, what, _names(getattr(self, what), f"case {self.label!r}: {what}"))
        d = self.target_distance
        if d is not None:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral) or not 0 <= int(d) <= MAX_DISTANCE:
                raise InputError(
                    f"case {self.label!r}: target_distance={d!r}; accepted: an integer 0 .. {MAX_DISTANCE} "
                    "(0: the query is its own target) or None (any distance 1 .. n - 1)"
                )
            object.__setattr__(self, "target_distance", int(d))

    def fits(self, n: int) -> bool:
        """Whether an input of length ``n`` exists in this case (``n >= 2``, and ``n >= d + 1`` for a
        fixed distance ``d``)."""
        if n < 2:
            return False
        return self.target_distance is None or self.target_distance <= n - 1

    @property
    def min_length(self) -> int:
        """The shortest length with an input: ``max(2, d + 1)`` for a fixed ``d``, else 2."""
        d = self.target_distance
        return 2 if d is None else max(2, d + 1)

    def tokens(self) -> set[str]:
        """Every token name the case uses."""
        return {*self.query_tokens, *self.target_tokens, *self.other_tokens}

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "query_tokens": list(self.query_tokens),
            "target_tokens": list(self.target_tokens),
            "other_tokens": list(self.other_tokens),
            "target_distance": self.target_distance,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FamilyCase:
        if not isinstance(data, Mapping):
            raise InputError(f"a family case must be a JSON object, got {type(data).__name__}")
        try:
            return cls(
                data["label"],
                data["query_tokens"],
                data["target_tokens"],
                data["other_tokens"],
                data["target_distance"],
            )
        except KeyError as exc:
            raise InputError(f"a family case lacks the key {exc}") from None


@dataclass(frozen=True)
class Family:
    """A named input family: its cases, a one-line description, and whether its definition asks for
    a target at every offset (``every_offset``, see the module docstring)."""

    name: str
    cases: tuple[FamilyCase, ...]
    description: str
    every_offset: bool = False
    _tokens: frozenset[str] = field(init=False, repr=False, compare=False, default=frozenset())

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError(f"family name={self.name!r} must be a non-empty string")
        if isinstance(self.cases, FamilyCase | str) or not isinstance(self.cases, Iterable):
            raise InputError(f"family {self.name!r}: cases must be a list of FamilyCase")
        cases = tuple(self.cases)
        if not cases or not all(isinstance(c, FamilyCase) for c in cases):
            raise InputError(f"family {self.name!r}: cases must be a non-empty list of FamilyCase")
        labels = [c.label for c in cases]
        if len(set(labels)) != len(labels):
            dup = sorted({x for x in labels if labels.count(x) > 1})
            raise InputError(f"family {self.name!r}: duplicate case labels {dup[:5]}")
        if not isinstance(self.every_offset, bool):
            raise InputError(
                f"family {self.name!r}: every_offset={self.every_offset!r} must be True or False"
            )
        object.__setattr__(self, "cases", cases)
        object.__setattr__(self, "description", str(self.description))
        object.__setattr__(self, "_tokens", frozenset().union(*(c.tokens() for c in cases)))

    @property
    def tokens(self) -> frozenset[str]:
        """Every token name the family uses."""
        return self._tokens

    def cases_at(self, n: int) -> list[int]:
        """Indices of the cases with an input of length ``n``."""
        return [i for i, c in enumerate(self.cases) if c.fits(n)]

    def min_length(self) -> int:
        """The shortest length ``n`` with an input (a case with a fixed distance ``d`` starts at
        ``d + 1``)."""
        return min(c.min_length for c in self.cases)

    def max_length(self) -> int | None:
        """Largest ``n`` up to which every length ``min_length() .. n`` is complete (``None``: every
        length).

        A family is complete at length ``n`` when it holds every input its definition asks for.
        Without ``every_offset`` that is every length (a previous-token family, one fixed offset
        ``d = 1``, is complete at every ``n >= 2``; distance ``0`` and any-distance cases likewise).
        With ``every_offset`` the definition asks for a target at each offset ``1 .. n - 1``, so ``n``
        is complete while each of them has a case (a case with ``target_distance=None`` covers all).
        """
        if not self.every_offset or any(c.target_distance is None for c in self.cases):
            return None
        fixed = {c.target_distance for c in self.cases}
        n = 1
        while n in fixed:
            n += 1
        return max(n, self.min_length())  # offsets 1 .. n - 1 all have a case

    def check_tokens(self, vocabulary: Iterable[str], owner: str) -> None:
        """Raise :class:`InputError` naming ``owner`` when a case uses a token not in ``vocabulary``."""
        missing = sorted(self.tokens - set(vocabulary))
        if missing:
            raise InputError(
                f"family {self.name!r} uses tokens that {owner} lacks: {missing[:5]}"
                + (f" (and {len(missing) - 5} more)" if len(missing) > 5 else "")
            )

    def to_dict(self) -> dict[str, Any]:
        """The family as JSON-ready data (read back by :meth:`from_dict`)."""
        return {
            "format": FAMILY_FORMAT,
            "name": self.name,
            "description": self.description,
            "every_offset": self.every_offset,
            "cases": [c.to_dict() for c in self.cases],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Family:
        """The family :meth:`to_dict` wrote (:class:`InputError` naming what is wrong otherwise)."""
        if not isinstance(data, Mapping) or data.get("format", FAMILY_FORMAT) != FAMILY_FORMAT:
            raise InputError(f"a family must be a JSON object with format {FAMILY_FORMAT!r}")
        try:
            cases = data["cases"]
            if not isinstance(cases, list):
                raise InputError("a family's 'cases' must be a list")
            return cls(
                data["name"],
                tuple(FamilyCase.from_dict(c) for c in cases),
                data.get("description", ""),
                data.get("every_offset", False),
            )
        except KeyError as exc:
            raise InputError(f"a family lacks the key {exc}") from None

    def save(self, path: str | Path) -> Path:
        """Write :meth:`to_dict` as JSON to the file ``path`` (atomically); return the path."""
        from ropeproof.machinery._atomic_output import write_text_atomic

        out = Path(path)
        write_text_atomic(out, json.dumps(self.to_dict(), indent=1) + "\n", option="family file")
        return out

    @classmethod
    def load(cls, path: str | Path) -> Family:
        """The family in the JSON file ``path`` (written by :meth:`save`)."""
        from ropeproof.machinery._input_files import read_json

        src = Path(path)
        data = read_json(src, "family file")  # a regular file of at most JSON_LIMIT bytes
        try:
            return cls.from_dict(data)
        except InputError as exc:
            raise InputError(f"family file {str(src)!r}: {exc}") from None
        except RecursionError:
            raise InputError(f"family file {str(src)!r} nests too deeply") from None


def token_family(tokens: Iterable[str], query_tokens: Iterable[str] | None = None) -> Family:
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

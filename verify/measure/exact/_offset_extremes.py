"""The logit reading: the least and greatest logit over a family's query-key pairs at each offset.

For an offset ``m >= 0`` (the key ``m`` positions before the query) the family's *pairs at offset m*
are every (query token, key token) that stand ``m`` apart in some input of the family, case by case
(:class:`~ropeproof.theory._family.FamilyCase`):

- ``m = 0``: the query against its own key (each of ``query_tokens``);
- ``m >= 1``: a target token where the target may stand ``m`` back (``target_distance`` ``m`` or
  ``None``), an other token where another position may (``target_distance`` not ``m``; ``None``
  and ``0`` allow both at every ``m >= 1``).

``logit_inf(m)`` / ``logit_sup(m)`` are the least / greatest logit over those pairs; rows are
offsets ``m = 0 .. N - 1`` (every offset an input of length at most ``N`` reaches), not lengths.
They are read from the same per-case logit tables as the length extremes
(:func:`~ropeproof.verify.measure.exact._discrepancy.build_tables`: float64 logits with error bounds,
or interval tables whose minima read one end and maxima the other), so nothing is sampled: every
pair at every offset is a table entry. :meth:`OffsetExtremes.witness` names the attaining pair, with
a shortest input of the family that holds it; :meth:`OffsetExtremes.pairs` lists every pair at one
offset (what a bound check refines or proves by identity one by one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._discrepancy import CaseTable

LOGIT_READINGS = ("logit_inf", "logit_sup")
"""The offset readings: least / greatest logit over the family's pairs at offset ``m``."""
ROLES = ("query", "target", "other")
"""Which position set a pair's key comes from: the query itself (``m = 0``), the target, another."""


def _allowed(t: CaseTable, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(target, other)`` masks over offsets ``0 .. size - 1``: where the case lets a target / another
    token stand that far back (never at offset 0, the query's own place)."""
    m = np.arange(size)
    d = t.case.target_distance
    if d is None:
        target = m >= 1
        other = m >= 1
    else:
        target = m == d if d >= 1 else np.zeros(size, dtype=bool)
        other = (m >= 1) & (m != d)
    return target, other


@dataclass(frozen=True)
class LogitWitness:
    """The pair attaining a logit reading at ``offset``: its case, query and key tokens, the key's role
    (:data:`ROLES`), the value (float64, or an enclosure end), and ``tokens``: a shortest input of the
    family with that key ``offset`` positions before the query (query last)."""

    reading: str
    offset: int
    value: float
    case: str
    query_token: str
    key_token: str
    role: str
    tokens: tuple[str, ...]

    @property
    def key_position(self) -> int:
        return len(self.tokens) - 1 - self.offset

    def describe(self) -> str:
        return (
            f"{self.reading}({self.offset}) = {self.value:.10g} ({self.case}): query {self.query_token!r} "
            f"against {self.role} {self.key_token!r} {self.offset} back"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: offset, value, case, both tokens, role, the input's length and
        :meth:`describe` (the input itself is :attr:`tokens`)."""
        return {
            "offset": self.offset,
            "value": self.value,
            "case": self.case,
            "query_token": self.query_token,
            "key_token": self.key_token,
            "role": self.role,
            "n": len(self.tokens),
            "key_position": self.key_position,
            "description": self.describe(),
        }


def shortest_input(t: CaseTable, offset: int, role: str, key: str) -> tuple[str, ...]:
    """A shortest input of ``t``'s case with ``key`` ``offset`` back from the query as ``role``: the
    first query token last, the first target token at the target's place, other tokens elsewhere."""
    case, d = t.case, t.case.target_distance
    query = case.query_tokens[0]
    if role == "query":
        n = max(case.min_length, 2)
        d_t = d if d is not None and d >= 1 else (None if d == 0 else 1)
    elif role == "target":
        n, d_t = offset + 1, offset
    else:  # another position: the target elsewhere (any-distance cases: 1 back, or 2 when offset is 1)
        d_t = (1 if offset >= 2 else 2) if d is None else (d if d >= 1 else None)
        n = max(offset, d_t or 0) + 1
    tokens = [case.other_tokens[0]] * n
    if d_t is not None:
        tokens[n - 1 - d_t] = case.target_tokens[0]
    if role != "query":
        tokens[n - 1 - offset] = key
    tokens[-1] = query if role != "query" else key
    return tuple(tokens)


@dataclass
class OffsetExtremes:
    """``logit_inf`` and ``logit_sup`` for offsets ``m = 0 .. N - 1`` (module docstring), with the
    attaining pair per row (table, role, group) and the tables they come from; ``plans[reading]`` holds
    each row's ``(table, role, group)``.

    Shapes: m [N]; logit_inf [N]; logit_sup [N]; errors [N]; plans [N, 3]
    """

    m: np.ndarray
    logit_inf: np.ndarray
    logit_sup: np.ndarray
    tables: list[CaseTable] = field(repr=False)
    plans: dict[str, np.ndarray] = field(repr=False, default_factory=dict)
    errors: np.ndarray | None = None

    def column(self, reading: str) -> np.ndarray:
        if reading not in LOGIT_READINGS:
            raise InputError(f"reading={reading!r}; accepted: {list(LOGIT_READINGS)}")
        return self.logit_inf if reading == "logit_inf" else self.logit_sup

    def _check(self, offset: int) -> int:
        if isinstance(offset, bool) or not 0 <= int(offset) < self.m.size:
            raise InputError(f"offset={offset!r} is outside this sweep (0..{self.m.size - 1})")
        return int(offset)

    def witness(self, offset: int, reading: str) -> LogitWitness:
        """The pair attaining ``reading`` at ``offset`` (see :class:`LogitWitness`)."""
        values = self.column(reading)
        m = self._check(offset)
        table, role, group = (int(x) for x in self.plans[reading][m])
        t = self.tables[table]
        key = _groups(t, ROLES[role])[group][0]
        tokens = shortest_input(t, m, ROLES[role], key)
        return LogitWitness(
            reading, m, float(values[m]), t.case.label, tokens[-1] if role else key, key, ROLES[role], tokens
        )

    def pairs(self, offset: int) -> list[tuple[str, str, str, str, float, float]]:
        """Every pair at ``offset``, one per (table, key group): ``(case, query token, key token, role,
        value read by minima, value read by maxima)`` (equal for float64 tables)."""
        m = self._check(offset)
        out = []
        for t in self.tables:
            target, other = _allowed(t, self.m.size)
            hi_t, hi_o, hi_s = t.highs()
            q = t.case.query_tokens[0]
            if m == 0:
                for g, members in enumerate(t.self_groups):
                    pair = _pair(t.self_logits, hi_s, g)
                    out.append((t.case.label, members[0], members[0], "query", *pair))
                continue
            for ok, role, groups, lo, hi in (
                (target[m], "target", t.target_groups, t.target_logits[:, m], hi_t[:, m]),
                (other[m], "other", t.other_groups, t.other_logits[:, m], hi_o[:, m]),
            ):
                if ok:
                    for g, members in enumerate(groups):
                        out.append((t.case.label, q, members[0], role, *_pair(lo, hi, g)))
        return out


def _pair(lo: np.ndarray, hi: np.ndarray, g: int) -> tuple[float, float]:
    return float(lo[g]), float(hi[g])


def _groups(t: CaseTable, role: str) -> list[list[str]]:
    return {"query": t.self_groups, "target": t.target_groups, "other": t.other_groups}[role]


def offset_extremes(tables: Sequence[CaseTable], size: int) -> OffsetExtremes:
    """``logit_inf`` / ``logit_sup`` for offsets ``0 .. size - 1`` from per-case tables (minima read
    ``*_logits``, maxima :meth:`CaseTable.highs`), with the attaining pair per row and, for float64
    tables, per row a bound on the reading's error (the largest per-logit bound at that offset: a
    minimum or maximum of values each within ``e`` of its exact value is within ``e`` of the exact one).

    Shapes: return arrays [size]
    """
    if not tables:
        raise InputError("the family has no case (no table)")
    if any(t.target_logits.shape[1] < size for t in tables):
        raise InputError(f"size={size} exceeds the tables' offsets ({tables[0].target_logits.shape[1]})")
    low, high = np.full(size, np.inf), np.full(size, -np.inf)
    plan_lo, plan_hi = np.full((size, 3), -1), np.full((size, 3), -1)
    errors: np.ndarray | None = np.zeros(size)
    for i, t in enumerate(tables):
        target, other = _allowed(t, size)
        hi_t, hi_o, hi_s = t.highs()
        candidates = [
            (1, target, t.target_logits[:, :size], hi_t[:, :size]),
            (2, other, t.other_logits[:, :size], hi_o[:, :size]),
        ]
        self_lo = np.full((len(t.self_groups), size), np.inf)
        self_hi = np.full((len(t.self_groups), size), -np.inf)
        self_lo[:, 0], self_hi[:, 0] = t.self_logits, hi_s
        candidates.append((0, np.arange(size) == 0, self_lo, self_hi))
        for role, allowed, lo, hi in candidates:
            if not allowed.any() or lo.shape[0] == 0:
                continue
            g_lo, g_hi = lo.argmin(0), hi.argmax(0)
            v_lo = np.where(allowed, lo[g_lo, np.arange(size)], np.inf)
            v_hi = np.where(allowed, hi[g_hi, np.arange(size)], -np.inf)
            take = v_lo < low
            low[take] = v_lo[take]
            plan_lo[take] = np.stack([np.full(size, i), np.full(size, role), g_lo], 1)[take]
            take = v_hi > high
            high[take] = v_hi[take]
            plan_hi[take] = np.stack([np.full(size, i), np.full(size, role), g_hi], 1)[take]
        if errors is not None:
            errors = None if t.errors is None else np.maximum(errors, t.errors[:size])
    return OffsetExtremes(
        np.arange(size), low, high, list(tables), {"logit_inf": plan_lo, "logit_sup": plan_hi}, errors
    )


__all__ = ["LOGIT_READINGS", "LogitWitness", "OffsetExtremes", "offset_extremes", "shortest_input"]

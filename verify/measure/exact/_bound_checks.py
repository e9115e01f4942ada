"""Compare measured extremes with a bound, row by row, deciding every row that can be decided.

A row ``measured <= bound`` gets one status:

- ``holds`` / ``violated``: the floating-point enclosures ``measured +- m_err`` and ``bound +- b_err``
  are disjoint (``m_hi < b_lo``, resp. ``m_lo > b_hi``, compared strictly after rounding, which proves
  the exact comparison), or an identity proves ``measured <= bound``;
- ``holds-equal``: an identity proves ``measured == bound`` (docs/theory.md section 5; e.g. for
  T_Index the competitor one step from the target scores ``g(1) = 2 sin(theta/2)^2``, which the
  symbolic layer proves equal to ``1 - cos(theta)``). Equality is never inferred from digits here;
- ``tight-holds`` / ``tight-violated``: the enclosures overlap, and ``refine`` (a high-precision
  re-enclosure of the row) separates them;
- ``tight-equal``: only from a *point* refinement (legacy callers that return two mpmath numbers): the
  two agree to 30 digits relative to ``max(1, |measured|, |bound|)``. Identities are preferred;
- ``undecided``: none of the above. Never counted as a pass; the reason is counted in
  ``detail["undecided_reasons"]``.

All decisions are vectorised (statuses are small integer codes, :data:`STATUSES`); only overlapping
rows without an identity reach ``refine``. :func:`judge_intervals` decides the same statuses from interval
enclosures of both sides (certified checks). :func:`min_of_terms` combines per-term comparisons into one
for ``bound = min(terms)``: a row holds when it holds for every term, is violated when it is violated
for some term, and holds with equality when it also equals one of the terms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Refine = Callable[[int], tuple[Any, Any]]
"""``refine(n) -> (measured, bound)`` at high precision for an overlapping row: either two
``(lo, hi)`` enclosures (decided by separation) or two mpmath numbers (legacy point refinement)."""

STATUSES = ("holds", "holds-equal", "tight-holds", "tight-equal", "violated", "tight-violated", "undecided")
"""Status names; a comparison stores the index into this tuple per row."""
HOLDS = STATUSES[:4]
"""Statuses that count as the bound holding at that row."""
VIOLATED = STATUSES[4:6]
"""Statuses that count as the bound failing at that row."""
CODE = {name: i for i, name in enumerate(STATUSES)}
_NAMES = np.array(STATUSES)
IDENTITY, REFINED, CONTRADICTION = 1, 2, 4
"""Bits of :attr:`BoundComparison.flags`: decided by an identity, refined, proof contradicts enclosures."""
POINT_TIE = 1e-30
"""Point refinements closer than this (relative to ``max(1, |measured|, |bound|)``) are a tie."""


@dataclass
class RowIdentity:
    """What an identity proves per row: ``at_most`` (``measured <= bound``), ``equal`` (``==``).

    Shapes: at_most [rows] (boolean); equal [rows] (boolean)
    """

    at_most: np.ndarray
    equal: np.ndarray
    statement: str


@dataclass
class BoundComparison:
    """Outcome of ``measured(n) <= bound(n)`` over a sweep: per row a status code (index into
    :data:`STATUSES`) and, for undecided rows, a reason code (index into ``reason_table``).

    Shapes: n [rows]; codes [rows]; ratio [rows]; reason_codes [rows]; flags [rows]
    """

    term: str
    reading: str
    n: np.ndarray
    codes: np.ndarray
    ratio: np.ndarray  # measured / bound
    detail: dict[str, Any] = field(default_factory=dict)
    reason_codes: np.ndarray | None = None
    reason_table: list[str] = field(default_factory=lambda: [""])
    flags: np.ndarray | None = None  # per row: IDENTITY | REFINED | CONTRADICTION bits

    def __post_init__(self) -> None:
        if self.flags is not None:
            self.detail["identity_rows"] = int(np.count_nonzero(self.flags & IDENTITY))
            self.detail["refined_rows"] = int(np.count_nonzero(self.flags & REFINED))
            if "enclosure_contradictions" in self.detail:
                self.detail["enclosure_contradictions"] = int(np.count_nonzero(self.flags & CONTRADICTION))

    @property
    def status(self) -> np.ndarray:
        """Status names per row."""
        return _NAMES[self.codes]

    @property
    def reasons(self) -> np.ndarray:
        """Why each row is undecided (``""`` for decided rows)."""
        table = np.array(self.reason_table, dtype=object)
        if self.reason_codes is None:
            return np.full(self.n.size, "", dtype=object)
        return table[self.reason_codes]

    def holds_mask(self) -> np.ndarray:
        return self.codes < 4

    def violated_mask(self) -> np.ndarray:
        return (self.codes == 4) | (self.codes == 5)

    @property
    def violated_n(self) -> np.ndarray:
        return self.n[self.violated_mask()]

    @property
    def undecided_n(self) -> np.ndarray:
        return self.n[self.codes == CODE["undecided"]]

    @property
    def holds(self) -> bool:
        """True when no row is violated and none is undecided."""
        return bool(self.holds_mask().all())

    @property
    def first_violation(self) -> int | None:
        v = self.violated_n
        return int(v[0]) if v.size else None

    def verdict(self) -> str:
        if self.violated_mask().any():
            return "violated"
        if (self.codes == CODE["undecided"]).any():
            return "unresolvable"
        return "holds"

    def counts(self) -> dict[str, int]:
        """Rows per status (statuses with no row left out)."""
        c = np.bincount(self.codes, minlength=len(STATUSES))
        return {name: int(c[i]) for i, name in enumerate(STATUSES) if c[i]}

    def undecided_reasons(self) -> dict[str, int]:
        """Undecided rows per reason."""
        if self.reason_codes is None:
            return {}
        rc = self.reason_codes[self.codes == CODE["undecided"]]
        c = np.bincount(rc, minlength=len(self.reason_table))
        return {self.reason_table[i]: int(c[i]) for i in range(len(self.reason_table)) if c[i]}

    def summary(self) -> dict[str, Any]:
        finite = np.isfinite(self.ratio)
        return {
            "term": self.term,
            "reading": self.reading,
            "verdict": self.verdict(),
            "rows": self.counts(),
            "first_violation_n": self.first_violation,
            "max_ratio": float(self.ratio[finite].max()) if finite.any() else None,
            **self.detail,
            "undecided_reasons": self.undecided_reasons(),
        }

    def take(self, mask: np.ndarray) -> BoundComparison:
        """The rows where ``mask`` holds.

        Shapes: mask [rows] (boolean)
        """
        rc = self.reason_codes[mask] if self.reason_codes is not None else None
        flags = self.flags[mask] if self.flags is not None else None
        return BoundComparison(
            self.term,
            self.reading,
            self.n[mask],
            self.codes[mask],
            self.ratio[mask],
            dict(self.detail),
            rc,
            self.reason_table,
            flags,
        )


def _decide_refined(measured: Any, bound: Any, strict: bool = False) -> tuple[str, str]:
    """Status and reason of one refined row (intervals: separation; points: the legacy tie rule).
    ``strict``: the relation is ``measured < bound``, so touching enclosures do not prove it."""
    if measured is None or bound is None:
        return "undecided", "enclosures overlap; no refinement applies to this reading"
    if isinstance(measured, tuple) and isinstance(bound, tuple):
        (m_lo, m_hi), (b_lo, b_hi) = measured, bound
        if m_hi < b_lo or (m_hi == b_lo and not strict):
            return "tight-holds", ""
        if m_lo > b_hi:
            return "tight-violated", ""
        return "undecided", "enclosures overlap at the refinement's precision and no identity applies"
    d = measured - bound
    scale = max(1.0, abs(float(measured)), abs(float(bound)))
    if abs(d) <= POINT_TIE * scale:
        return ("tight-violated" if strict else "tight-equal"), ""
    return ("tight-violated" if d > 0 else "tight-holds"), ""


def judge_rows(
    term: str,
    reading: str,
    n: np.ndarray,
    measured: np.ndarray,
    m_err: np.ndarray | float | None,
    bound: np.ndarray,
    b_err: np.ndarray | float | None,
    identity: RowIdentity | None = None,
    refine: Refine | None = None,
    max_refine: int | None = None,
    nan_reason: str = "no value (NaN)",
    strict: bool = False,
    *,
    ends: tuple[np.ndarray, np.ndarray] | None = None,
    bound_ends: tuple[np.ndarray, np.ndarray] | None = None,
    with_ratio: bool = True,
) -> BoundComparison:
    """Status of ``measured <= bound`` (``strict``: ``measured < bound``) for every row (see the module
    docstring; the float64 decisions compare strictly either way, so they prove both).

    ``m_err``, ``b_err`` bound the floating-point errors of ``measured`` and ``bound``; NaN measurements
    are ``undecided`` (reason ``nan_reason``). ``max_refine`` caps the refined rows (``None``: no
    cap); rows past the cap stay undecided and say so. A caller that judges the same rows against
    several terms passes the rounded ends it computed once: ``ends`` = ``(measured - m_err, measured +
    m_err)``, ``bound_ends`` = ``(bound - b_err, bound + b_err)`` (each exactly that float64 expression;
    ``m_err``, ``b_err`` are then not read and may be ``None``);
    ``with_ratio=False`` leaves ``ratio`` NaN (for a comparison only :func:`min_of_terms` reads).

    Shapes: n [rows]; measured [rows]; m_err [rows] (or a float); bound [rows]; b_err [rows] (or a float);
        ends [rows] (a pair: lower, upper); bound_ends [rows] (a pair: lower, upper)
    """
    n = np.asarray(n)
    measured = np.asarray(measured, dtype=np.float64)
    shape = measured.shape
    # a scalar bound or error stays one (the same bits as broadcast; no array of copies is built)
    bound = _of_shape(np.asarray(bound, dtype=np.float64), shape)
    if (ends is None and m_err is None) or (bound_ends is None and b_err is None):
        raise ValueError("judge_rows needs m_err (or ends) and b_err (or bound_ends)")
    if ends is None:
        m_err = _of_shape(np.asarray(m_err, dtype=np.float64), shape)
        ends = (measured - m_err, measured + m_err)
    if bound_ends is None:
        b_err = _of_shape(np.asarray(b_err, dtype=np.float64), shape)
        bound_ends = (bound - b_err, bound + b_err)
    codes = np.full(shape, CODE["undecided"], dtype=np.int8)
    # strict comparisons of the rounded ends: rounding to nearest is monotone, so fl(a) < fl(b) proves
    # a < b for the exact sums (fl(a) <= fl(b) would not: 1 + 2^-60 and 1 - 2^-60 both round to 1)
    with np.errstate(invalid="ignore"):
        np.copyto(codes, CODE["holds"], where=ends[1] < bound_ends[0])
        np.copyto(codes, CODE["violated"], where=ends[0] > bound_ends[1])
    table = [""]
    reason_codes = np.zeros(measured.shape, dtype=np.int16)

    def reason(text: str) -> int:
        if text not in table:
            table.append(text)
        return table.index(text)

    flags = np.zeros(measured.shape, dtype=np.int8)
    if identity is not None:
        at_most = np.broadcast_to(np.asarray(identity.at_most, dtype=bool), shape)
        equal = np.broadcast_to(np.asarray(identity.equal, dtype=bool), shape) & at_most
        # a proof that contradicts the enclosures means an error bound is wrong: count it, trust the proof
        everywhere = bool(at_most.all())  # (then the masks below are the whole array)
        contradicted = codes == CODE["violated"]
        if not everywhere:
            contradicted &= at_most
        contradicted |= (codes == CODE["holds"]) & equal
        if everywhere:
            flags |= np.int8(IDENTITY)
        else:
            np.bitwise_or(flags, np.int8(IDENTITY), out=flags, where=at_most)
        np.bitwise_or(flags, np.int8(CONTRADICTION), out=flags, where=contradicted)
        if everywhere:
            codes.fill(CODE["holds"])
        else:
            np.copyto(codes, CODE["holds"], where=at_most)
        np.copyto(codes, CODE["holds-equal"], where=equal)
    nan = np.isnan(measured)
    if bound.ndim or np.isnan(bound):
        nan |= np.isnan(bound)
    overlap = "floating-point enclosures overlap and no identity applies"
    _refine_rows(n, codes, reason_codes, flags, reason, nan, nan_reason, refine, max_refine, overlap, strict)
    if with_ratio:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = measured / bound
    else:
        ratio = np.broadcast_to(np.nan, shape)
    detail: dict[str, Any] = {}
    if identity is not None:
        detail["identity"] = identity.statement
        detail["enclosure_contradictions"] = 0  # counted from the flags
    return BoundComparison(term, reading, n, codes, ratio, detail, reason_codes, table, flags)


def _of_shape(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` itself when it is a scalar, else ``x`` broadcast to ``shape`` (a view)."""
    return x if x.ndim == 0 else np.broadcast_to(x, shape)


def _refine_rows(
    n: np.ndarray,
    codes: np.ndarray,
    reason_codes: np.ndarray,
    flags: np.ndarray,
    reason: Callable[[str], int],
    nan: np.ndarray,
    nan_reason: str,
    refine: Refine | None,
    max_refine: int | None,
    overlap_reason: str = "floating-point enclosures overlap and no identity applies",
    strict: bool = False,
) -> None:
    """NaN rows undecided with ``nan_reason``; every other undecided row refined (in place)."""
    open_rows = codes == CODE["undecided"]
    if nan.any():
        codes[nan] = CODE["undecided"]
        reason_codes[nan] = reason(nan_reason)
        open_rows &= ~nan
    refined = 0
    for r in np.flatnonzero(open_rows):
        if refine is None:
            reason_codes[r] = reason(overlap_reason)
            continue
        if max_refine is not None and refined >= max_refine:
            reason_codes[r] = reason(f"refinement cap reached (max_refine={max_refine})")
            continue
        name, why = _decide_refined(*refine(int(n[r])), strict=strict)
        codes[r] = CODE[name]
        reason_codes[r] = reason(why) if why else 0
        flags[r] |= REFINED
        refined += 1


def judge_intervals(
    term: str,
    reading: str,
    n: np.ndarray,
    measured: tuple[np.ndarray, np.ndarray],
    bound: tuple[np.ndarray, np.ndarray],
    refine: Refine | None = None,
    max_refine: int | None = None,
    nan_reason: str = "no enclosure (NaN)",
    strict: bool = False,
) -> BoundComparison:
    """Status of ``measured <= bound`` for every row from enclosures ``[lo, hi]`` of both sides
    (interval arithmetic, rounded outward): ``holds`` where ``m_hi <= b_lo`` (``strict``, for
    ``measured < bound``: ``m_hi < b_lo``), ``violated`` where ``m_lo > b_hi``; overlapping rows are
    refined as in :func:`judge_rows` (``refine`` returns two enclosures), NaN ends are ``undecided``.
    ``ratio`` is the ratio of the midpoints.

    Shapes: n [rows]; measured [rows] (lo, hi); bound [rows] (lo, hi)
    """
    n = np.asarray(n)
    m_lo, m_hi = (np.asarray(x, dtype=np.float64) for x in measured)
    b_lo, b_hi = (np.broadcast_to(np.asarray(x, dtype=np.float64), m_lo.shape) for x in bound)
    codes = np.full(m_lo.shape, CODE["undecided"], dtype=np.int8)
    with np.errstate(invalid="ignore"):
        codes[(m_hi < b_lo) if strict else (m_hi <= b_lo)] = CODE["holds"]
        codes[m_lo > b_hi] = CODE["violated"]
    table = [""]
    reason_codes = np.zeros(m_lo.shape, dtype=np.int16)

    def reason(text: str) -> int:
        if text not in table:
            table.append(text)
        return table.index(text)

    flags = np.zeros(m_lo.shape, dtype=np.int8)
    nan = np.isnan(m_lo) | np.isnan(m_hi) | np.isnan(b_lo) | np.isnan(b_hi)
    overlap = "interval enclosures overlap and no identity applies"
    _refine_rows(n, codes, reason_codes, flags, reason, nan, nan_reason, refine, max_refine, overlap, strict)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (m_lo / 2 + m_hi / 2) / (b_lo / 2 + b_hi / 2)
    return BoundComparison(term, reading, n, codes, ratio, {}, reason_codes, table, flags)


def compare(
    term: str,
    reading: str,
    n: np.ndarray,
    measured: np.ndarray,
    bound: np.ndarray,
    tol: np.ndarray | float,
    refine: Refine | None = None,
    max_refine: int | None = 512,
    identity: RowIdentity | None = None,
) -> BoundComparison:
    """Judge ``measured <= bound`` with one symmetric tolerance ``tol`` on the difference (the sum of
    both sides' rounding bounds): :func:`judge_rows` with ``m_err = tol``, ``b_err = 0``.

    Shapes: n [rows]; measured [rows]; bound [rows]; tol [rows] (or a float)
    """
    return judge_rows(term, reading, n, measured, tol, bound, 0.0, identity, refine, max_refine)


def min_of_terms(
    term: str, parts: Sequence[BoundComparison], measured: np.ndarray, bound: np.ndarray
) -> BoundComparison:
    """Combine the comparisons of ``measured`` with each term into ``measured <= bound = min(terms)``.

    An undecided row keeps the reason of its first undecided term, prefixed by that term's name.

    Shapes: measured [rows]; bound [rows] (the minimum over the terms)
    """
    if not parts:
        raise ValueError("min_of_terms needs at least one comparison")
    size = parts[0].codes.shape[0]
    if any(p.codes.shape != (size,) for p in parts):
        raise ValueError("min_of_terms needs comparisons of the same rows")

    def in_some_part(name: str) -> np.ndarray:
        where = parts[0].codes == CODE[name]
        for p in parts[1:]:
            where |= p.codes == CODE[name]
        return where

    out = np.full(size, CODE["holds"], dtype=np.int8)
    for name in ("tight-holds", "tight-equal", "holds-equal", "undecided", "tight-violated", "violated"):
        np.copyto(out, CODE[name], where=in_some_part(name))  # later names win
    table = [""]
    reason_codes = np.zeros(size, dtype=np.int16)
    still = out == CODE["undecided"]
    for p in parts:
        rows = still & (p.codes == CODE["undecided"])
        if rows.any() and p.reason_codes is not None:
            offset = len(table) - 1
            table.extend(f"{p.term}: {r}" for r in p.reason_table[1:])
            reason_codes[rows] = np.where(p.reason_codes[rows] > 0, p.reason_codes[rows] + offset, 0)
        still &= ~rows
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.asarray(measured, dtype=np.float64) / np.asarray(bound, dtype=np.float64)
    detail: dict[str, Any] = {"terms": [p.term for p in parts], "enclosure_contradictions": 0}
    identities = [p.detail["identity"] for p in parts if "identity" in p.detail]
    if identities:
        detail["identity"] = "; ".join(identities)
    flags = np.zeros(out.shape, dtype=np.int8)
    for p in parts:
        if p.flags is not None:
            flags |= p.flags
    return BoundComparison(term, parts[0].reading, parts[0].n, out, ratio, detail, reason_codes, table, flags)

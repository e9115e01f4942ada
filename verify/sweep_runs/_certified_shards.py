"""The certified T_Index check in shards: enclose ``g(m)`` over ranges of offsets, merge, judge exactly.

:func:`ropeproof.verify.measure.exact._certified.certified_index` needs, for every ``n <= N``, enclosures of
``G(M) = min_{m <= M} g(m)`` (``M = n - 1`` or ``ceil((n-1)/2)``, docs/theory.md section 5). An
enclosure of a prefix minimum is ``[min_m lo(m), min_m hi(m)]``, and both running minima change only at
their *records* (offsets where they drop). So one shard encloses ``g(m)`` for its own range of
``m`` with Arb balls (:func:`enclose_gap_records`, the same enclosures as the unsharded check) and
keeps only the records of its local running minima: a few numbers whatever the range. Merging the
shards (:func:`merge_gap_records`) keeps each record that beats every earlier shard's minimum, which is
exactly the record list of the whole range. :func:`judge_records` then decides every row ``n`` without
materialising the rows: between records the measured enclosure is constant and the bound enclosure is
non-increasing in ``n``, so ``holds`` / ``violated`` / ``holds-equal`` (the identity of
:func:`~ropeproof.verify.measure.exact._certified.certified_index`) / ``undecided`` are runs of ``n`` found by
binary search. The statuses equal those of the unsharded check before its refinement step (which
re-encloses a few undecided rows at higher precision; :attr:`CertifiedRecordCheck.undecided_n` lists
the rows it would see).

Every records file names the whole check it is a shard of (``m_last``, the last offset of the
unsharded range) and carries the SHA-256 of its content: a merge refuses a set of shards that does not
cover ``1 .. m_last`` (a shard left out at either end, not only a gap between two), and a file whose
digest is missing or differs. Files of format version 1 (no ``m_last``, digest optional) are refused.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact import _index_sweep
from ropeproof.verify.measure.exact._certified import (
    INDEX_TERMS,
    MAX_OFFSET,
    STATUSES,
    _index_term,
    enclose_index_gaps,
)

FORMAT = "ropeproof-gap-records"
FORMAT_VERSION = 2
READINGS = ("margin_inf", "gap_sup")


def _records(values: np.ndarray, first_m: int, carry: float = math.inf) -> tuple[list[int], list[float]]:
    """Offsets and values where the running minimum of ``values`` (after ``carry``) strictly drops."""
    run = np.minimum.accumulate(values)
    before = np.concatenate([[carry], np.minimum(run[:-1], carry)])
    drop = np.nonzero(values < before)[0]
    return (drop + first_m).tolist(), values[drop].tolist()


@dataclass
class GapRecords:
    """Records of the running minima of ``lo(g(m))`` and ``hi(g(m))`` over ``m = m_start .. m_stop``, a
    shard of the check over ``m = 1 .. m_last`` (``None``: ``m_stop``, an unsharded range)."""

    freqs: list[float]
    amps: list[float]
    prec: int
    m_start: int
    m_stop: int
    lo_m: list[int]
    lo_v: list[float]
    hi_m: list[int]
    hi_v: list[float]
    seconds: float = 0.0
    m_last: int | None = None

    def __post_init__(self) -> None:
        if self.m_last is None:
            self.m_last = self.m_stop

    def _payload(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "freqs": [x.hex() for x in self.freqs],
            "amps": [x.hex() for x in self.amps],
            "prec": self.prec,
            "m_start": self.m_start,
            "m_stop": self.m_stop,
            "m_last": self.m_last,
            "lo_m": self.lo_m,
            "lo_v": [x.hex() for x in self.lo_v],
            "hi_m": self.hi_m,
            "hi_v": [x.hex() for x in self.hi_v],
        }

    def to_json(self) -> str:
        """Exact JSON (floats as hexadecimal strings) with the SHA-256 of its content."""
        d = self._payload()
        d["seconds"] = round(self.seconds, 3)
        d["sha256"] = hashlib.sha256(json.dumps(self._payload()).encode()).hexdigest()
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> GapRecords:
        """Parse and :meth:`validate`; the ``sha256`` must be there and match the content."""
        d = json.loads(text)
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise InputError(f"not a {FORMAT} document")
        if d.get("version") != FORMAT_VERSION:
            raise InputError(
                f"{FORMAT} version {d.get('version')!r}; this version reads {FORMAT_VERSION} only (version 1 "
                "did not name the whole check, so a missing shard went unnoticed): enclose the shards again"
            )
        h = float.fromhex
        out = cls(
            [h(x) for x in d["freqs"]],
            [h(x) for x in d["amps"]],
            int(d["prec"]),
            int(d["m_start"]),
            int(d["m_stop"]),
            [int(x) for x in d["lo_m"]],
            [h(x) for x in d["lo_v"]],
            [int(x) for x in d["hi_m"]],
            [h(x) for x in d["hi_v"]],
            float(d.get("seconds", 0.0)),
            int(d["m_last"]),
        )
        out.validate()
        if "sha256" not in d:
            raise InputError(
                f"records of m = {out.m_start}..{out.m_stop}: no sha256 of the content (every records file "
                "is written with one; without it an altered file cannot be told from a true one)"
            )
        if hashlib.sha256(json.dumps(out._payload()).encode()).hexdigest() != d["sha256"]:
            raise InputError(
                f"records of m = {out.m_start}..{out.m_stop}: the content's SHA-256 differs from the one "
                "recorded (the file was altered)"
            )
        return out

    def validate(self) -> None:
        """Raise :class:`InputError` unless these are records of running minima of enclosures: offsets
        strictly increasing within ``m_start .. m_stop`` and starting at ``m_start``, values finite,
        ``>= 0`` and strictly decreasing, and the lower ends never above the upper ends; ``m_stop <=
        m_last``."""
        where = f"records of m = {self.m_start}..{self.m_stop}"
        if not 1 <= self.m_start <= self.m_stop:
            raise InputError(f"{where}: the offsets must satisfy 1 <= m_start <= m_stop")
        if self.m_last is None or not self.m_stop <= self.m_last <= MAX_OFFSET:
            raise InputError(f"{where}: m_last = {self.m_last} must satisfy m_stop <= m_last <= 2^53 - 2")
        for name, ms, vs in (("lower", self.lo_m, self.lo_v), ("upper", self.hi_m, self.hi_v)):
            if len(ms) != len(vs) or not ms:
                raise InputError(f"{where}: the {name} ends need one value per offset, at least one")
            if (
                ms[0] != self.m_start
                or ms[-1] > self.m_stop
                or any(b <= a for a, b in itertools.pairwise(ms))
            ):
                raise InputError(
                    f"{where}: the {name} ends' offsets must start at m_start and increase within the range"
                )
            if not all(math.isfinite(v) and v >= 0 for v in vs):
                raise InputError(f"{where}: the {name} ends must be finite and >= 0 (got {vs[:5]}...)")
            if any(b >= a for a, b in itertools.pairwise(vs)):
                raise InputError(f"{where}: the {name} ends must strictly decrease (records of a minimum)")
        for m in sorted(set(self.lo_m) | set(self.hi_m)):
            lo, hi = _value_at(self.lo_m, self.lo_v, m), _value_at(self.hi_m, self.hi_v, m)
            if lo > hi:
                raise InputError(f"{where}: at m = {m} the lower end {lo!r} is above the upper end {hi!r}")


def enclose_gap_records(
    freqs: Sequence[float],
    amps: Sequence[float] | None,
    m_start: int,
    m_stop: int,
    prec: int = 80,
    chunk: int = 1 << 14,
    m_last: int | None = None,
) -> GapRecords:
    """One shard: enclose ``g(m)`` for ``m = m_start .. m_stop`` (Arb balls, as the unsharded check)
    and keep the records of the running minima. Memory ``O(chunk)``. ``m_last``: the last offset of the
    whole check this is a shard of (``None``: ``m_stop``)."""
    f = [float(x) for x in freqs]
    a = [1.0] * len(f) if amps is None else [float(x) for x in amps]
    if not 1 <= m_start <= m_stop <= MAX_OFFSET:
        raise InputError(f"offsets {m_start}..{m_stop} must satisfy 1 <= start <= stop <= 2^53 - 2")
    if m_last is not None and not m_stop <= m_last <= MAX_OFFSET:
        raise InputError(f"m_last = {m_last} must satisfy m_stop = {m_stop} <= m_last <= 2^53 - 2")
    t0 = time.perf_counter()
    lo_m: list[int] = []
    lo_v: list[float] = []
    hi_m: list[int] = []
    hi_v: list[float] = []
    lo_best = hi_best = math.inf
    for first in range(m_start, m_stop + 1, chunk):
        last = min(m_stop, first + chunk - 1)
        lo, hi = enclose_index_gaps(f, a, last, prec, first_m=first)
        m, v = _records(lo, first, lo_best)
        lo_m += m
        lo_v += v
        m, v = _records(hi, first, hi_best)
        hi_m += m
        hi_v += v
        lo_best, hi_best = min(lo_best, float(lo.min())), min(hi_best, float(hi.min()))
    return GapRecords(f, a, prec, m_start, m_stop, lo_m, lo_v, hi_m, hi_v, time.perf_counter() - t0, m_last)


def merge_gap_records(parts: Sequence[GapRecords]) -> GapRecords:
    """The records of the union of contiguous shards (any order), exactly those of one unsharded run.
    Refused unless the shards tile ``1 .. m_last`` of one check (none missing, none twice)."""
    if not parts:
        raise InputError("merge needs at least one records file")
    for p in parts:
        p.validate()
    order = sorted(parts, key=lambda p: p.m_start)
    first = order[0]
    for p in order:
        if (p.freqs, p.amps, p.prec) != (first.freqs, first.amps, first.prec):
            raise InputError("the records belong to different checks (frequencies, amplitudes or precision)")
    nxt = first.m_start
    for p in order:
        if p.m_start != nxt:
            raise InputError(
                f"the shards do not tile the offsets: expected one starting at m={nxt}, got {p.m_start}"
            )
        nxt = p.m_stop + 1
    ends = sorted({p.m_last for p in order})  # type: ignore[type-var]
    if len(ends) != 1:
        raise InputError(f"the records are shards of checks of different lengths (last offsets {ends})")
    if first.m_start != 1 or nxt - 1 != first.m_last:
        raise InputError(
            f"the shards cover m = {first.m_start}..{nxt - 1} of the check's 1..{first.m_last}: "
            "a shard is missing"
        )
    lo_m: list[int] = []
    lo_v: list[float] = []
    hi_m: list[int] = []
    hi_v: list[float] = []
    for p in order:
        for ms, vs, out_m, out_v in ((p.lo_m, p.lo_v, lo_m, lo_v), (p.hi_m, p.hi_v, hi_m, hi_v)):
            best = out_v[-1] if out_v else math.inf
            for m, v in zip(ms, vs, strict=True):
                if v < best:
                    out_m.append(m)
                    out_v.append(v)
                    best = v
    return GapRecords(first.freqs, first.amps, first.prec, first.m_start, nxt - 1, lo_m, lo_v, hi_m, hi_v,
                      sum(p.seconds for p in parts))  # fmt: skip


@dataclass
class RecordVerdicts:
    """Rows ``n = 2 .. max_n`` of one reading, by status: counts, the first violation, undecided rows."""

    reading: str
    counts: dict[str, int] = field(default_factory=dict)
    first_violation_n: int | None = None
    undecided_n: list[int] = field(default_factory=list)
    undecided_rows: int = 0

    def verdict(self) -> str:
        if self.counts.get("violated"):
            return "violated"
        return "unresolvable" if self.counts.get("undecided") else "holds"

    def to_dict(self) -> dict[str, Any]:
        return {
            "reading": self.reading,
            "verdict": self.verdict(),
            "rows": {s: self.counts.get(s, 0) for s in STATUSES},
            "first_violation_n": self.first_violation_n,
            "undecided_n": self.undecided_n[:20],
        }


@dataclass
class CertifiedRecordCheck:
    """Theorem 3.2 (Index) certified from merged records, per reading. The timings are attributes
    only, so :meth:`to_dict` is the same for every way of computing the records."""

    theta: float
    max_n: int
    term: str
    prec: int
    readings: dict[str, RecordVerdicts]
    shard_seconds: float
    judge_seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "construction": "index",
            "check": "certified Delta_Index(n) <= Theorem 3.2 bound",
            "theta": self.theta,
            "max_n": self.max_n,
            "term": self.term,
            "prec": self.prec,
            "readings": {q: r.to_dict() for q, r in self.readings.items()},
        }


def _last_true(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest ``n`` in ``[lo, hi]`` with ``pred(n)`` for a predicate true then false (``lo - 1`` if
    none)."""
    if lo > hi or not pred(lo):
        return lo - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _value_at(ms: list[int], vs: list[float], m: int) -> float:
    i = int(np.searchsorted(np.asarray(ms), m, side="right")) - 1
    return vs[i] if i >= 0 else math.inf


def judge_records(
    records: GapRecords, max_n: int, term: str = "min", readings: Sequence[str] = READINGS
) -> CertifiedRecordCheck:
    """Decide ``Delta(n) <= bound(n)`` for ``n = 2 .. max_n`` from merged one-plane records (see the module
    docstring); ``term`` as in :data:`ropeproof.verify.measure.exact._certified.INDEX_TERMS`."""
    t0 = time.perf_counter()
    if len(records.freqs) != 1 or records.amps != [1.0]:
        raise InputError("Theorem 3.2 is checked for one-plane T_Index (one frequency, amplitude 1)")
    if term not in INDEX_TERMS:
        raise InputError(f"term={term!r}; accepted: {INDEX_TERMS}")
    if records.m_start != 1 or records.m_stop < max_n - 1:
        raise InputError(f"the records cover m = {records.m_start}..{records.m_stop}; need 1..{max_n - 1}")
    theta, prec = records.freqs[0], records.prec

    def bound(n: int) -> tuple[float, float]:
        lo, hi, _ = _index_term(theta, np.array([n]), prec, term)
        return float(lo[0]), float(hi[0])

    _lo, _hi, (t1, _t2) = _index_term(theta, np.array([2]), prec, "min")
    # g(1) = 2 sin(theta/2)^2 = 1 - cos(theta), the first term (sympy's proof, stored: INDEX_TERM_IDENTITY)
    proved = term != "pi2-over-2n2" and _index_sweep.INDEX_TERM_IDENTITY.proved

    def identity(n: int) -> bool:
        if not proved:
            return False
        if term == "one-minus-cos":
            return True
        t2_lo = float(_index_term(theta, np.array([n]), prec, "pi2-over-2n2")[0][0])
        return t2_lo >= t1[1]

    breaks = sorted(set(records.lo_m) | set(records.hi_m))
    out = {}
    for q in readings:
        if q not in READINGS:
            raise InputError(f"reading={q!r}; accepted: {READINGS}")
        res = RecordVerdicts(q)

        def n_range(m_a: int, m_b: int, q: str = q) -> tuple[int, int]:
            if q == "margin_inf":
                return m_a + 1, m_b + 1
            return max(2, 2 * m_a), 2 * m_b + 1  # ceil((n - 1)/2) = M for n in {2M, 2M + 1}

        edges = [*breaks, records.m_stop + 1]
        for a, b in itertools.pairwise(edges):
            na, nb = n_range(a, b - 1)
            na, nb = max(na, 2), min(nb, max_n)
            if na > nb:
                continue
            m_lo, m_hi = _value_at(records.lo_m, records.lo_v, a), _value_at(records.hi_m, records.hi_v, a)
            holds_to = _last_true(lambda n, m_hi=m_hi: m_hi <= bound(n)[0], na, nb)
            viol_from = _last_true(lambda n, m_lo=m_lo: not m_lo > bound(n)[1], na, nb) + 1
            ident_to = _last_true(identity, holds_to + 1, viol_from - 1)
            counts = {
                "holds": holds_to - na + 1,
                "holds-equal": ident_to - holds_to,
                "undecided": viol_from - 1 - ident_to,
                "violated": nb - viol_from + 1,
            }
            for s, c in counts.items():
                res.counts[s] = res.counts.get(s, 0) + c
            if counts["violated"] and res.first_violation_n is None:
                res.first_violation_n = viol_from
            if counts["undecided"] and len(res.undecided_n) < 20:
                res.undecided_n += list(range(ident_to + 1, min(viol_from, ident_to + 21)))
        res.undecided_rows = res.counts.get("undecided", 0)
        out[q] = res
    return CertifiedRecordCheck(theta, max_n, term, prec, out, records.seconds, time.perf_counter() - t0)


def offsets_for(max_n: int, shard: tuple[int, int] | None) -> tuple[int, int]:
    """The offsets ``m`` a shard of the certified check over ``n <= max_n`` encloses (``1 .. max_n - 1``
    cut into ``N`` near-equal contiguous slices; ``None``: all of them)."""
    total = max_n - 1
    if shard is None:
        return 1, total
    k, count = shard
    if count > total:
        raise InputError(f"shard {k}/{count}: only {total} offsets to split")
    return 1 + (k - 1) * total // count, k * total // count

"""Length sweeps of the paper's constructions: exact extremes, the reported bound, and a verdict per row.

:func:`sweep_index` and :func:`sweep_retrieval` return :class:`SweepTable` s;
:func:`iter_index_sweep` and :func:`iter_retrieval_sweep` stream the same rows in blocks (memory
``O(block)``, used by ``ropeproof sweep``). Each row holds

- ``n``; ``gap_sup``, ``gap_inf``, ``margin_inf`` (exact, float64; docs/theory.md section 5);
- ``bound``: [A]'s Theorem 3.2 bound at ``n``;
- per reading of ``Delta`` (``gap_sup``: the literal one, the gap maximised over inputs; ``gap_inf``,
  ``margin_inf``), a status (``bound_status*``, :mod:`ropeproof.verify.measure.exact._bound_checks`) and its
  boolean (``bound_holds*``: ``True``/``False``, ``None`` when undecided). The floating-point values
  carry error bounds (:func:`ropeproof.verify.measure.exact._angles.reduced_angles_with_error`, ``SIN_ULPS``),
  so a row is decided wherever the enclosures separate; ties are decided by identities:

  - Index, term ``1 - cos(theta)``: the competitor next to the target scores ``g(1) = 2 sin(theta/2)^2``,
    which sympy proves equal to ``1 - cos(theta)`` from the construction's closed form (proved once and
    stored, :data:`~ropeproof.verify.measure.exact._index_sweep.INDEX_TERM_IDENTITY`, which a test proves
    again). Every reading
    is a minimum of ``g(m)`` over ``m <= M`` (``M = n - 1``, or ``ceil((n-1)/2)`` for ``gap_sup``) with
    ``m = 1`` included, so it is at most the term at every row, and equal to it wherever
    ``(M + 1) |theta mod 2 pi| <= 2 pi`` (then ``m theta`` stays in ``[theta, 2 pi - theta]``);
  - Retrieval at ``theta = 0``: every target scores 1 and the best competitor ``cos(omega)``, so
    ``margin_inf = gap_inf = 1 - cos(omega)``, the bound at ``theta = 0``, at every ``n``.

  Rows that still overlap are refined in ``mpmath.iv`` (the attaining input's value against the bound);
  what stays open is ``undecided`` with its reason counted;
- with ``dtype`` other than float64: ``measured_*`` (the same extremes from logits computed in that
  dtype) and ``resolvable`` (whether the measured ``margin_inf`` exceeds the dtype's resolution); for
  float64 ``resolvable`` says the same of the exact value.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
from mpmath import iv

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._result_store import ResultStore, object_product
from ropeproof.machinery._validate import integer
from ropeproof.machinery._values import AlphabetSize, Angle, Length, Lengths
from ropeproof.verify.kernel._devices import dtype_name, resolve_dtype
from ropeproof.verify.kernel._resolution import gap_resolution
from ropeproof.verify.measure._display import TableDisplay
from ropeproof.verify.measure.exact import _index_sweep
from ropeproof.verify.measure.exact._angles import UNIT_ROUNDOFF, reduce_frequency, reduced_angles_with_error
from ropeproof.verify.measure.exact._bound_checks import (
    BoundComparison,
    RowIdentity,
    judge_rows,
    min_of_terms,
)
from ropeproof.verify.measure.exact._index_sweep import (
    SIN_ULPS,
    IndexBlock,
    iter_index_blocks,
    stable_gaps_with_error,
)
from ropeproof.verify.measure.exact._retrieval_codes import code_table
from ropeproof.verify.measure.exact._retrieval_gap_inf import gap_inf_values
from ropeproof.verify.measure.exact._retrieval_sweep import (
    MAX_LENGTH,
    RetrievalBlock,
    RetrievalRows,
    retrieval_sweep,
)

if TYPE_CHECKING:
    import torch

    from ropeproof.theory._bounds import ReportedBound
    from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike
    from ropeproof.verify.measure.exact._retrieval_refine import RetrievalRefiner

QUANTITIES = ("gap_sup", "gap_inf", "margin_inf")
_JUDGE_ORDER = ("gap_sup", "margin_inf", "gap_inf")
BLOCK = 1 << 17
"""Rows per streamed block."""
REFINE_BITS = 200
"""Working precision of the ``mpmath.iv`` refinement of overlapping rows."""
TABLE_BYTES_PER_LENGTH = 1024
"""Peak bytes per length of a collected float64 table (:func:`sweep_index`, :func:`sweep_retrieval`),
rounded up from tracemalloc: ~185 B (T_Index) and ~730 B (T_Retrieval, |ALPH| = 8 and 30) at
n = 2 x 10^4. The streamed iterators need no estimate: they hold one block at a time."""
ROW_BYTES = 1024
"""Bytes of one row of :meth:`SweepTable.rows` (a dict of Python scalars; measured ~600)."""


def parse_lengths(text: str | Lengths) -> tuple[int, int, int]:
    """``"A:B[:STEP]"`` -> ``(A, B, STEP)`` with ``2 <= A <= B`` and ``STEP >= 1``
    (:meth:`~ropeproof.machinery._values.Lengths.parse`, the one parser; parsed lengths pass as they
    are)."""
    start, stop, step = Lengths.of(text)
    return start, stop, step


READING_COLUMNS = {
    "gap_sup": "bound_holds",
    "gap_inf": "bound_holds_gap_inf",
    "margin_inf": "bound_holds_margin_inf",
}
"""Which column judges which reading of Delta: ``bound_holds`` is the literal one (gap maximised over
inputs, docs/theory.md section 5); the other two read Delta as the worst-case gap or margin."""
STATUS_COLUMNS = {
    "gap_sup": "bound_status",
    "gap_inf": "bound_status_gap_inf",
    "margin_inf": "bound_status_margin_inf",
}
"""The status column of each reading (``holds``, ``holds-equal``, ``violated``, ``undecided``, ...)."""


@dataclass
class SweepBlock:
    """Consecutive rows of a sweep: numeric ``columns`` (``n``, the extremes, ``bound``, ``measured_*``,
    ``resolvable``), per-reading comparisons (the verdict columns derive from them), and ``extras`` (the
    attaining inputs' recipes, not printed).

    Shapes: columns [rows] (each column); extras [rows] (each entry)
    """

    columns: dict[str, np.ndarray]
    comparisons: dict[str, BoundComparison]
    extras: dict[str, np.ndarray] = field(default_factory=dict)

    def select(self, mask: np.ndarray) -> SweepBlock:
        """The rows where ``mask`` holds.

        Shapes: mask [rows] (boolean)
        """
        return SweepBlock(
            {k: v[mask] for k, v in self.columns.items()},
            {q: _take(c, mask) for q, c in self.comparisons.items()},
            {k: v[mask] for k, v in self.extras.items()},
        )


def _take(c: BoundComparison, mask: np.ndarray) -> BoundComparison:
    return c.take(mask)


def concat_comparisons(
    parts: Sequence[BoundComparison], joined: dict[tuple[int, ...], Any] | None = None
) -> BoundComparison:
    """One comparison over the rows of ``parts`` (in order); counts in ``detail`` are summed. One part
    gives a comparison of its own arrays (not copies). ``joined`` remembers concatenations by the
    identities of their pieces, so pieces shared by several comparisons (the rows ``n``, the arrays of a
    reading judged once for two) are joined once and shared."""
    memo = {} if joined is None else joined

    def join(arrays: list[np.ndarray]) -> np.ndarray:
        key = tuple(id(a) for a in arrays)
        if key not in memo:  # the pieces are kept with the result: no id is reused while memo lives
            memo[key] = (arrays, _joined(arrays))
        return memo[key][1]

    first = parts[0]
    table = [""]
    codes = []
    for p in parts:
        remap = np.zeros(len(p.reason_table), dtype=np.int16)
        for i, text in enumerate(p.reason_table[1:], start=1):
            if text not in table:
                table.append(text)
            remap[i] = table.index(text)
        rc = p.reason_codes if p.reason_codes is not None else np.zeros(p.n.size, dtype=np.int16)
        identity = bool(np.array_equal(remap, np.arange(remap.size)))
        codes.append(rc if identity and rc.dtype == np.int16 else remap[rc])
    detail = dict(first.detail)
    flags = None
    if all(p.flags is not None for p in parts):
        flags = join([p.flags for p in parts])  # type: ignore[misc]
    return BoundComparison(
        first.term,
        first.reading,
        join([p.n for p in parts]),
        join([p.codes for p in parts]),
        join([p.ratio for p in parts]),
        detail,
        join(codes),
        table,
        flags,
    )


def _joined(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """``np.concatenate(arrays)``, or the one array itself."""
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _as_bool(c: BoundComparison) -> np.ndarray:
    out = np.full(c.n.shape, None, dtype=object)
    out[c.holds_mask()] = True
    out[c.violated_mask()] = False
    return out


class _Deferred:
    """A column not built yet: ``make()`` builds it."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], np.ndarray]) -> None:
        self.make = make


class SweepColumns(dict):
    """A sweep table's columns: a ``dict`` of numpy arrays whose verdict columns (``bound_holds*``:
    ``True``/``False``/``None``; ``bound_status*``: status names, one Python object per row) are built
    from the comparisons' status codes when first read, then kept. A sweep computes and judges its rows
    without them; reading one (``columns["bound_status"]``, ``items()``, ``dict(columns)``,
    :meth:`SweepTable.rows`) gives the same array as building it at once would."""

    def __getitem__(self, key: str) -> np.ndarray:
        value = dict.__getitem__(self, key)
        if isinstance(value, _Deferred):
            value = value.make()
            dict.__setitem__(self, key, value)
        return value

    def __iter__(self) -> Iterator[str]:  # defined, so dict(columns) and {**columns} read through []
        return dict.__iter__(self)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 (self.get is this method)

    def values(self) -> list[np.ndarray]:  # type: ignore[override]
        return [self[k] for k in self]

    def items(self) -> list[tuple[str, np.ndarray]]:  # type: ignore[override]
        return [(k, self[k]) for k in self]

    def copy(self) -> SweepColumns:
        return SweepColumns((k, dict.__getitem__(self, k)) for k in self)

    def numeric(self) -> dict[str, np.ndarray]:
        """The columns that are not verdict columns (none of them deferred)."""
        verdicts = set(READING_COLUMNS.values()) | set(STATUS_COLUMNS.values())
        return {k: self[k] for k in self if k not in verdicts}


def _table_columns(
    raw: dict[str, np.ndarray], comparisons: dict[str, BoundComparison], judge: bool
) -> SweepColumns:
    """The columns of a table in the documented order: ``n``, the extremes, ``bound``, the verdict
    columns (deferred: :class:`SweepColumns`), then the rest of ``raw``."""
    cols = SweepColumns((k, raw[k]) for k in ("n", "gap_sup", "gap_inf", "margin_inf", "bound"))
    size = raw["n"].shape
    for q in QUANTITIES:
        if judge:
            c = comparisons[q]
            cols[READING_COLUMNS[q]] = _Deferred(functools.partial(_as_bool, c))
            cols[STATUS_COLUMNS[q]] = _Deferred(lambda c=c: c.status.astype(object))
        else:
            cols[READING_COLUMNS[q]] = _Deferred(functools.partial(np.full, size, None, dtype=object))
            cols[STATUS_COLUMNS[q]] = _Deferred(functools.partial(np.full, size, None, dtype=object))
    cols.update({k: v for k, v in raw.items() if k not in cols})
    return cols


def _sin2_with_error(alpha: np.ndarray, e_alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``2 sin(alpha/2)^2`` and its error bound when ``alpha`` errs by ``e_alpha`` (as in
    :func:`ropeproof.verify.measure.exact._index_sweep.stable_gaps_with_error`)."""
    u = UNIT_ROUNDOFF
    s = np.sin(alpha / 2)
    ds = e_alpha / 2 + 2 * SIN_ULPS * u * np.abs(s)
    value = 2.0 * s**2
    return value, (2.0 * ds * (2 * np.abs(s) + ds) + 3 * u * value) * (1 + 8 * u) + 5e-324


_PI2_HALF_EXACT = mpmath.mpf(0)
with mpmath.workprec(200):
    _PI2_HALF_EXACT = mpmath.pi**2 / 2
PI2_HALF = float(_PI2_HALF_EXACT)
"""``pi^2 / 2`` rounded to float64; :data:`PI2_HALF_ERROR` bounds the rounding."""
PI2_HALF_ERROR = float(abs(_PI2_HALF_EXACT - PI2_HALF)) * 2


def _pi2_term(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pi^2 / (2 n^2)`` and its error bound (``n^2`` is exact below ``2^26``; one division)."""
    n2 = np.array(n, dtype=np.float64)
    n2 *= n2  # n^2, as n ** 2 computes it
    value = PI2_HALF / n2
    err = UNIT_ROUNDOFF * value  # (u value + PI2_HALF_ERROR / n2)(1 + 8u) + 5e-324, in place
    err += np.divide(PI2_HALF_ERROR, n2, out=n2)
    err *= 1 + 8 * UNIT_ROUNDOFF
    err += 5e-324
    return value, err


@functools.cache
def index_term_identity() -> bool:
    """Whether sympy proves that T_Index's gap at the adjacent offset, ``g(1)`` (derived from the
    construction's closed form, :func:`~ropeproof.verify.measure.exact._index_sweep.index_gap_expression`),
    equals Theorem 3.2's ``1 - cos(theta)``: by the exponential form of the difference
    (:func:`~ropeproof.theory._trig_identity.exponential_form_vanishes`), else by ``simplify``. The
    sweeps read the stored outcome,
    :data:`~ropeproof.verify.measure.exact._index_sweep.INDEX_TERM_IDENTITY`; this proves it again (sympy)."""
    import sympy as sp

    from ropeproof.theory._trig_identity import exponential_form_vanishes

    lhs, rhs = index_term_sides()
    difference = lhs - rhs
    return exponential_form_vanishes(difference) or bool(sp.simplify(difference) == 0)


def index_term_sides() -> tuple[Any, Any]:
    """``(g(1), 1 - cos(theta))`` as sympy expressions: the gap at the adjacent offset derived from T_Index's
    closed form, and Theorem 3.2's first term (the two sides of
    :data:`~ropeproof.verify.measure.exact._index_sweep.INDEX_TERM_IDENTITY`)."""
    from ropeproof.constructions._paper import index_construction
    from ropeproof.theory._bounds import index_bound
    from ropeproof.verify.measure.exact._index_sweep import index_gap_expression

    gap = index_gap_expression(index_construction(theta=0.5, max_int=1, letters=1))
    m = next(s for s in gap.free_symbols if s.name == "m")
    return gap.subs(m, 1), index_bound().terms[0].raw


@functools.cache
def retrieval_theta_zero_identity(alphabet_size: int) -> bool:
    """Whether sympy proves ``T(d) - cos(omega - d*0) = 1 - cos(omega - n * 0)``: the margin of every
    input at ``theta = 0`` (target ``cos 0``, best competitor ``cos omega``) equals the bound."""
    import sympy as sp

    from ropeproof.theory._bounds import OMEGA, THETA, N, retrieval_bound
    from ropeproof.theory._trig_identity import exponential_form_vanishes

    omega = 2 * sp.pi / alphabet_size
    raw = retrieval_bound().terms[0].raw.subs({THETA: 0, OMEGA: omega})
    witness = sp.cos(0 * N) - sp.cos(omega - N * 0)
    return exponential_form_vanishes(witness - raw) or bool(sp.simplify(witness - raw) == 0)


# ---------------------------------------------------------------------------------------- T_Index


class _IndexDtypeRows:
    """T_Index extremes from logits computed in ``dtype`` (the module's arithmetic), streamed: two
    running maxima of ``h(m)``, the logit ``m`` positions off the target (``m <= n - 1`` and
    ``m <= ceil((n-1)/2)``)."""

    def __init__(self, theta: float, dtype: torch.dtype, device: DeviceLike) -> None:
        from ropeproof.theory._rope_spec import RopeSpec

        self.args = (
            np.array([1.0, 0.0]),
            np.array([[1.0, 0.0]]),
            RopeSpec(2, freqs=[theta]),
            1.0,
            dtype,
            device,
        )
        self.h0 = float(self._h(np.array([0.0]))[0])
        self.state = {"margin": [1, -math.inf], "sup": [1, -math.inf]}  # next m, running max

    def _h(self, m: np.ndarray) -> np.ndarray:
        from ropeproof.verify.measure.exact._offset_logits import distance_logits

        q, k, spec, scale, dtype, device = self.args
        return distance_logits(q, k, spec, m, scale, dtype, device)[0]

    def _running(self, name: str, lo: int, hi: int) -> np.ndarray:
        nxt, best = self.state[name]
        out = []
        if lo == nxt - 1:
            out.append(np.array([best]))
        if nxt < lo:
            best = max(best, float(self._h(np.arange(nxt, lo, dtype=np.float64)).max()))
            nxt = lo
        if nxt <= hi:
            run = np.maximum(np.maximum.accumulate(self._h(np.arange(nxt, hi + 1, dtype=np.float64))), best)
            out.append(run)
            best, nxt = float(run[-1]), hi + 1
        self.state[name] = [nxt, best]
        return np.concatenate(out)

    def block(self, n: np.ndarray) -> dict[str, np.ndarray]:
        top = self._running("margin", int(n[0]) - 1, int(n[-1]) - 1)
        half = (n - 1 + 1) // 2
        sup = self._running("sup", int(half[0]), int(half[-1]))[half - half[0]]
        margin = self.h0 - top
        return {"gap_sup": self.h0 - sup, "gap_inf": margin, "margin_inf": margin}


def _index_comparisons(theta: float, blk: IndexBlock) -> tuple[np.ndarray, dict[str, BoundComparison]]:
    """The bound and the per-reading comparisons of a block of T_Index rows (with enclosures). Each
    reading's rounded ends ``measured -+ m_err`` and the second term's ``t2 -+ t2_err`` are computed
    once and compared with both terms; the terms' own ratios, which no verdict reads, are not formed."""
    n = blk.n
    t1, t1_err = stable_gaps_with_error([theta], [1.0], np.array([1.0]))
    t1_ends = (t1[0] - t1_err[0], t1[0] + t1_err[0])
    t2, t2_err = _pi2_term(n)
    t2_ends = (t2 - t2_err, t2 + t2_err)
    bound = np.minimum(t1[0], t2)
    red = reduce_frequency(theta)
    tp = abs(red.value) * (1 + 4 * UNIT_ROUNDOFF) + red.error
    identity_ok = _index_sweep.INDEX_TERM_IDENTITY.proved  # read at each call (tests withdraw it)
    statement = (
        "g(1) = 2 sin(theta/2)^2 = 1 - cos(theta) (sympy, from the construction's closed form); every "
        "reading is a minimum over m <= M of g(m) with m = 1 included, equal to g(1) where "
        "(M + 1)|theta mod 2pi| <= 2pi"
    )
    two_pi_lo = 2 * math.pi * (1 - 4 * UNIT_ROUNDOFF)
    comparisons: dict[str, BoundComparison] = {}
    for q in _JUDGE_ORDER:
        if q == "gap_inf":  # gap_inf = margin_inf for T_Index: the same rows, judged once
            c = comparisons["margin_inf"]
            comparisons[q] = BoundComparison(
                c.term, q, c.n, c.codes, c.ratio, dict(c.detail), c.reason_codes, c.reason_table, c.flags
            )
            continue
        if q == "gap_sup":
            meas, lo, hi, arg, ends = blk.gap_sup, blk.sup_lo, blk.sup_hi, blk.closest_sup, blk.sup_ends
            half = True  # M = ceil((n - 1) / 2)
        else:
            meas, lo, hi, arg, ends = (
                blk.margin_inf,
                blk.margin_lo,
                blk.margin_hi,
                blk.closest,
                blk.margin_ends,
            )
            half = False  # M = n - 1
        assert lo is not None and hi is not None
        if ends is None:  # measured -+ m_err, m_err = max(measured - lo, hi - measured)
            m_err = meas - lo
            np.maximum(m_err, hi - meas, out=m_err)
            ends = (meas - m_err, np.add(meas, m_err, out=m_err))
        everywhere = np.full(n.shape, identity_ok)
        equal = np.zeros(n.shape, dtype=bool)
        equal[: _equal_rows(n, half, tp, two_pi_lo)] = True
        equal &= everywhere
        first = judge_rows(
            "1-cos(theta)",
            q,
            n,
            meas,
            None,
            t1[0],
            None,
            RowIdentity(everywhere, equal, statement),
            ends=ends,
            bound_ends=t1_ends,
            with_ratio=False,
        )

        def refine(n_: int, arg=arg, lo=lo) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
            # measured <= g(m*) for the attaining offset m*; the lower end stays the float enclosure's.
            # Ends are exact fractions (mpmath.iv at a local precision), never re-rounded through mpmath.mp
            from ropeproof.verify.measure.exact._certified import iv_exact_ends, iv_precision

            r = int(np.searchsorted(n, n_))
            with iv_precision(REFINE_BITS):
                g = 2 * iv.sin(int(arg[r]) * iv.mpf(theta) / 2) ** 2
                b = iv.pi**2 / (2 * iv.mpf(n_) ** 2)
                return (Fraction(float(lo[r])), iv_exact_ends(g)[1]), iv_exact_ends(b)

        second = judge_rows(
            "pi^2/(2n^2)",
            q,
            n,
            meas,
            None,
            t2,
            None,
            None,
            refine,
            ends=ends,
            bound_ends=t2_ends,
            with_ratio=False,
        )
        comparisons[q] = min_of_terms("min(terms)", [first, second], meas, bound)
    return bound, {q: comparisons[q] for q in QUANTITIES}


def _equal_rows(n: np.ndarray, half: bool, tp: float, two_pi_lo: float) -> int:
    """How many leading rows of ``n`` (increasing) have ``(M + 1) tp <= two_pi_lo`` in float64, ``M = n -
    1`` (``ceil((n - 1) / 2)`` with ``half``): the product of a positive float with an increasing
    integer does not decrease, so those rows are a prefix, found by bisection with the same float64
    product per row as the elementwise comparison."""

    def fails(i: int) -> bool:
        big_m = (int(n[i]) - 1 + 1) // 2 if half else int(n[i]) - 1
        return not float(big_m + 1) * tp <= two_pi_lo

    return bisect.bisect_left(range(int(n.size)), True, key=fails)


def _beyond(x: np.ndarray, res: float) -> np.ndarray:
    """``|x| > res`` elementwise, as two comparisons (no array of ``|x|``; NaN is never beyond)."""
    out = x > res
    out |= x < -res
    return out


def _sweep_dtype(dtype: DtypeLike) -> DtypeLike:
    """``dtype`` checked: ``"float64"`` when it is float64 (by name or torch dtype; the exact sweep is numpy
    alone, so torch is not imported), else its torch dtype (:func:`~ropeproof.verify.kernel._devices.
    resolve_dtype`)."""
    name = dtype_name(dtype)
    return name if name == "float64" else resolve_dtype(name)


def _check_sweep_args(start: int, stop: int, block: int) -> None:
    if not (isinstance(start, Length) and isinstance(stop, Length) and start <= stop):  # else parsed once
        start = integer(start, "start", low=2, high=MAX_LENGTH)
        integer(stop, "stop", low=start, high=MAX_LENGTH, note=f"start={start}")
    integer(block, "block", low=1)


def iter_index_sweep(
    theta: float,
    start: int,
    stop: int,
    dtype: DtypeLike = "float64",
    device: DeviceLike = "cpu",
    judge: bool = True,
    block: int = BLOCK,
) -> Iterator[SweepBlock]:
    """The rows ``n = start .. stop`` of :func:`sweep_index`, ``block`` at a time."""
    _check_sweep_args(start, stop, block)
    theta = Angle.of(theta)  # checked here unless parsed already (the command line's --theta)
    dt = _sweep_dtype(dtype)
    res = gap_resolution(dt, head_dim=2, magnitude=1.0)
    measured = _IndexDtypeRows(theta, dt, device) if dt != "float64" else None
    for blk in iter_index_blocks([theta], [1.0], start, stop, block, with_error=True):
        bound, comparisons = _index_comparisons(theta, blk)
        cols: dict[str, np.ndarray] = {
            "n": blk.n,
            "gap_sup": blk.gap_sup,
            "gap_inf": blk.margin_inf,
            "margin_inf": blk.margin_inf,
            "bound": bound,
        }
        if measured is None:
            cols["resolvable"] = _beyond(blk.margin_inf, res)
        else:
            meas = measured.block(blk.n)
            for q in QUANTITIES:
                cols[f"measured_{q}"] = meas[q]
            cols["resolvable"] = np.abs(meas["margin_inf"]) > res
        extras = {"closest": blk.closest, "closest_sup": blk.closest_sup}
        yield SweepBlock(cols, comparisons if judge else {}, extras)


# -------------------------------------------------------------------------------------- T_Retrieval


def _retrieval_bound(alphabet_size: int, theta: float, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``2 sin((omega - n theta)/2)^2`` with ``n theta`` reduced accurately, and its error bound."""
    angles = code_table(alphabet_size)
    hi, lo = angles.angles(np.array([1]))
    r, e = reduced_angles_with_error(n.astype(np.float64), theta)
    diff = hi[0] - r
    alpha = diff + lo[0]
    e_alpha = e + angles.error + UNIT_ROUNDOFF * (np.abs(diff) + np.abs(alpha))
    return _sin2_with_error(alpha, e_alpha * (1 + 4 * UNIT_ROUNDOFF))


def _retrieval_comparisons(
    alphabet_size: int, theta: float, blk: RetrievalBlock, gap_inf: np.ndarray, refiner: RetrievalRefiner
) -> tuple[np.ndarray, dict[str, BoundComparison]]:
    n = blk.n
    bound, b_err = _retrieval_bound(alphabet_size, theta, n)
    zero = theta == 0.0 and retrieval_theta_zero_identity(alphabet_size)
    statement = (
        "theta = 0: every target scores 1 and the best competitor cos(omega), so margin = 1 - cos(omega)"
    )

    def refine(n_: int) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
        # the whole row re-enclosed in Arb at a local precision, ends kept exact (RetrievalRefiner); past
        # its reach, margin_inf's float enclosure below (rounded outward) and the attaining input above
        bound_ends = refiner.bound(n_)
        ends = refiner.margin(n_)
        if ends is None:
            r = int(np.searchsorted(n, n_))
            d_t, d_c, c_c = int(blk.margin_dt[r]), int(blk.margin_dc[r]), int(blk.margin_cc[r])
            lo = float(np.nextafter(blk.margin_inf[r] - blk.err[r], -np.inf))
            ends = (Fraction(lo), refiner.witness_upper(d_t, d_c, c_c))
        return ends, bound_ends

    comparisons = {}
    for q in QUANTITIES:
        if q == "gap_sup":
            meas, err, ref = blk.gap_sup, blk.sup_err, None
        else:
            meas, err, ref = (blk.margin_inf if q == "margin_inf" else gap_inf), blk.err, refine
        identity = (
            RowIdentity(np.full(n.shape, zero), np.full(n.shape, zero), statement) if q != "gap_sup" else None
        )
        if q == "gap_inf":
            ref = None if not np.array_equal(gap_inf, blk.margin_inf) else refine
        why = "gap_inf not computed: margin_inf <= 0 and n above gap_inf_limit (enumeration only below)"
        comparisons[q] = judge_rows(
            "1-cos(omega-n*theta)", q, n, meas, err, bound, b_err, identity, ref, nan_reason=why
        )
    return bound, comparisons


def iter_retrieval_sweep(
    alphabet_size: int,
    theta: float,
    start: int,
    stop: int,
    dtype: DtypeLike = "float64",
    device: DeviceLike = "cpu",
    judge: bool = True,
    block: int = BLOCK,
    gap_inf_limit: int = 96,
) -> Iterator[SweepBlock]:
    """The rows ``n = start .. stop`` of :func:`sweep_retrieval`, ``block`` at a time (float64: memory
    ``O(block |ALPH|)``; other dtypes compute the measured logits for all of ``2 .. stop`` at once)."""
    _check_sweep_args(start, stop, block)
    alphabet_size, theta = AlphabetSize.of(alphabet_size), Angle.of(theta)  # once, unless parsed already
    dt = _sweep_dtype(dtype)
    res = gap_resolution(dt, head_dim=2, magnitude=1.0)
    from ropeproof.verify.measure.exact._retrieval_refine import RetrievalRefiner

    rows = RetrievalRows(alphabet_size, theta)
    refiner = RetrievalRefiner(alphabet_size, theta)  # rows too close for float64, re-enclosed in order
    measured = None
    if dt != "float64":
        from ropeproof.constructions._compile import compile_construction, compiled_head_bytes
        from ropeproof.constructions._paper import retrieval_construction
        from ropeproof.verify.measure.exact._families import retrieval_family

        vocab = alphabet_size * (alphabet_size + 1)  # (letter, letter) pairs and (letter, 1)
        check_allocation(  # before the construction's vocab^2 tokens are even built
            f"measured logits of a retrieval sweep with |ALPH| = {alphabet_size} ({vocab} tokens)",
            compiled_head_bytes(vocab, vocab),
        )
        from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep

        c = retrieval_construction(alphabet_size, theta, max_int=1)
        meas = exact_sweep(
            build_tables(compile_construction(c), retrieval_family(c), stop, dt, device), stop, gap_inf_limit
        )
        measured = {q: getattr(meas, q) for q in QUANTITIES}
    last = 1
    while last < stop:
        nxt = min(stop, last + block)
        blk = rows.advance(nxt - 1)
        last = nxt
        if blk.n[-1] < start:
            continue
        gap_inf = np.where(blk.margin_inf > 0, blk.margin_inf, np.nan)
        enumerate_rows = np.nonzero(~(blk.margin_inf > 0) & (blk.n <= gap_inf_limit) & (blk.n >= start))[0]
        if enumerate_rows.size:
            lengths = [int(n_) for n_ in blk.n[enumerate_rows]]
            gap_inf[enumerate_rows] = gap_inf_values(alphabet_size, theta, lengths)
        bound, comparisons = _retrieval_comparisons(alphabet_size, theta, blk, gap_inf, refiner)
        cols: dict[str, np.ndarray] = {
            "n": blk.n,
            "gap_sup": blk.gap_sup,
            "gap_inf": gap_inf,
            "margin_inf": blk.margin_inf,
            "bound": bound,
        }
        if measured is None:
            cols["resolvable"] = _beyond(blk.margin_inf, res)
        else:
            for q in QUANTITIES:
                cols[f"measured_{q}"] = measured[q][blk.n - 2]
            cols["resolvable"] = np.abs(cols["measured_margin_inf"]) > res
        extras = {f: getattr(blk, f) for f in ("margin_dt", "sup_kind", "sup_dt", "sup_da")}
        out = SweepBlock(cols, comparisons if judge else {}, extras)
        yield out.select(blk.n >= start) if blk.n[0] < start else out


# ------------------------------------------------------------------------------------------ tables


@dataclass
class SweepTable(TableDisplay):
    """Rows of a sweep, columns as numpy arrays, plus what produced them.

    In a notebook it renders as a markdown or HTML table, and ``to_pandas()`` gives a
    ``DataFrame`` of :meth:`rows` (pandas optional; see :mod:`ropeproof.verify.measure._display`).

    Shapes: columns [rows] (each array)
    """

    construction: str
    params: dict[str, Any]
    dtype: str
    columns: dict[str, np.ndarray]
    bound: ReportedBound
    comparisons: dict[str, BoundComparison] = field(default_factory=dict)
    witness_fn: Callable[[int, str], Any] | None = field(default=None, repr=False)
    mp_measured_fn: Callable[[int, str], Any] | None = field(default=None, repr=False)

    def witness(self, n: int, quantity: str) -> Any:
        """The input attaining ``quantity`` at length ``n`` (tokens or, for Index, a description)."""
        if self.witness_fn is None:
            raise InputError("this table has no witnesses")
        return self.witness_fn(n, quantity)

    def mp_measured(self, n: int, quantity: str) -> Any:
        """``quantity`` of the attaining input at length ``n``, recomputed in mpmath at 40 digits from
        the construction's closed form (ground truth for near-tied rows)."""
        if self.mp_measured_fn is None:
            raise InputError("this table has no mpmath reference")
        return self.mp_measured_fn(n, quantity)

    def select(self, start: int, stop: int, step: int) -> SweepTable:
        mask = (
            (self.columns["n"] >= start)
            & (self.columns["n"] <= stop)
            & (((self.columns["n"] - start) % step == 0) | (self.columns["n"] == stop))
        )
        comparisons = {q: _take(c, mask) for q, c in self.comparisons.items()}
        if isinstance(self.columns, SweepColumns):
            numeric = {k: v[mask] for k, v in self.columns.numeric().items()}
            cols: dict[str, np.ndarray] = _table_columns(numeric, comparisons, bool(comparisons))
        else:
            cols = {k: v[mask] for k, v in self.columns.items()}
        return SweepTable(
            self.construction,
            self.params,
            self.dtype,
            cols,
            self.bound,
            comparisons,
            self.witness_fn,
            self.mp_measured_fn,
        )

    def title(self) -> str:
        """``construction {params}, dtype; bound: statement``."""
        return f"{self.construction} {self.params}, {self.dtype}; bound: {self.bound.statement}"

    def rows(self) -> list[dict[str, Any]]:
        """One dict per row, JSON-ready (NaN -> None); refuses (before building them) when
        ``ROW_BYTES`` per row exceeds the memory limit."""
        keys = list(self.columns)
        check_allocation(f"{self.columns['n'].size} sweep rows", self.columns["n"].size * ROW_BYTES)
        out = []
        for i in range(self.columns["n"].size):
            row: dict[str, Any] = {}
            for k in keys:
                v = self.columns[k][i]
                if isinstance(v, np.bool_ | bool):
                    row[k] = bool(v)
                elif isinstance(v, np.integer):
                    row[k] = int(v)
                elif v is None or isinstance(v, str):
                    row[k] = v
                else:
                    fv = float(v)
                    row[k] = None if math.isnan(fv) else fv
            out.append(row)
        return out


def _collect(
    blocks: Sequence[SweepBlock], extras: bool = True
) -> tuple[SweepColumns, dict[str, BoundComparison], dict]:
    """Concatenate blocks into table columns (in the documented order), comparisons and (``extras``)
    the attaining inputs' recipes."""
    raw = {k: _joined([b.columns[k] for b in blocks]) for k in blocks[0].columns}
    if len(blocks) == 1:  # a block's columns may share an array (T_Index's gap_inf is its margin_inf)
        seen: set[int] = set()
        for k, v in raw.items():
            raw[k] = v.copy() if id(v) in seen else v
            seen.add(id(v))
    pieces = [b.columns["n"] for b in blocks]
    joined: dict[tuple[int, ...], Any] = {tuple(id(a) for a in pieces): (pieces, raw["n"])}
    comparisons = {
        q: concat_comparisons([b.comparisons[q] for b in blocks], joined) for q in blocks[0].comparisons
    }
    kept = {k: _joined([b.extras[k] for b in blocks]) for k in blocks[0].extras} if extras else {}
    return _table_columns(raw, comparisons, bool(comparisons)), comparisons, kept


def sweep_index(
    theta: float, max_n: int, dtype: DtypeLike = "float64", device: DeviceLike = "cpu", judge: bool = True
) -> SweepTable:
    """T_Index at ``theta``, every ``n`` in ``2 .. max_n`` (exact:
    :func:`ropeproof.verify.measure.exact._index_sweep.iter_index_blocks`)."""
    from ropeproof.theory._bounds import index_bound
    from ropeproof.verify.measure.exact._explain import index_explanation, index_input_tokens

    max_n = integer(max_n, "max_n", low=2, high=MAX_LENGTH)
    dt = _sweep_dtype(dtype)
    check_allocation(f"an index sweep table to n = {max_n}", TABLE_BYTES_PER_LENGTH * max_n)
    # one block: the rows need no concatenation (a table holds them all anyway)
    blocks = list(iter_index_sweep(theta, 2, max_n, dt, device, judge, block=max_n - 1))
    cols, comparisons, extras = _collect(blocks)

    def witness(n_: int, q: str) -> dict[str, Any]:
        r = n_ - 2
        if not 0 <= r < cols["n"].size:
            raise InputError(f"n={n_} is outside this sweep (2..{max_n})")
        if q == "gap_sup":
            s = (n_ - 1 + 1) // 2
            m, value = int(extras["closest_sup"][r]), float(cols["gap_sup"][r])
        else:
            s, m, value = n_ - 1, int(extras["closest"][r]), float(cols[q][r])
        tokens = index_input_tokens(n_, s, m)
        target = n_ - 1 - s
        competitor = target - m if target - m >= 0 else target + m  # where index_input_tokens puts B
        explanation = index_explanation(q, [theta], [1.0], tokens, target, competitor)
        return {
            "theta": theta,
            "n": n_,
            "s": s,
            "target_position": target,
            "competitor_offset": m,
            "value": value,
            "tokens": tokens,
            "explanation": explanation.to_dict(),
        }

    def mp_measured(n_: int, q: str) -> Any:
        with mpmath.workdps(40):
            return 2 * mpmath.sin(witness(n_, q)["competitor_offset"] * mpmath.mpf(theta) / 2) ** 2

    return SweepTable(
        "index", {"theta": theta}, dtype_name(dt), cols, index_bound(), comparisons, witness, mp_measured
    )


def retrieval_witness_tokens(alphabet_size: int, codes: Sequence[int]) -> list[str]:
    """Token names of an input given per-position left-letter code offsets from ``Y = phi 0`` (the
    last entry is the query ``(c, Y)``; ``0`` marks the target, a pair with left letter ``Y``)."""
    from ropeproof.constructions._paper import retrieval_construction

    c = retrieval_construction(alphabet_size, 0.0, max_int=1)
    by_left: dict[int, str] = {}
    query: dict[int, str] = {}
    for t in c.tokens:
        left = int(t.params["phi_left"])
        by_left.setdefault(left, t.name)
        if t.rule == "pair_ll" and int(t.params["phi_right"]) == 0:
            query.setdefault(left, t.name)
    return [by_left[int(x)] for x in codes[:-1]] + [query[int(codes[-1])]]


class Computed:
    """``make()`` computed on the first call and kept (a ``functools.cache`` of no arguments that, unlike
    one, pickles: a table's witnesses travel with it between the processes of a run)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make, self.value, self.done = make, None, False

    def __call__(self) -> Any:
        if not self.done:
            self.value, self.done = self.make(), True
        return self.value


def sweep_retrieval(
    alphabet_size: int,
    theta: float,
    max_n: int,
    dtype: DtypeLike = "float64",
    device: DeviceLike = "cpu",
    gap_inf_limit: int = 96,
    judge: bool = True,
) -> SweepTable:
    """T_Retrieval (``|ALPH| = alphabet_size``) at ``theta``, every ``n`` in ``2 .. max_n`` (exact:
    :func:`ropeproof.verify.measure.exact._retrieval_sweep.retrieval_sweep`)."""
    from ropeproof.constructions._compile import compile_construction
    from ropeproof.constructions._paper import retrieval_construction
    from ropeproof.theory._bounds import retrieval_bound
    from ropeproof.verify.measure.exact._explain import explain_input
    from ropeproof.verify.measure.exact._mp_reference import MpLogits

    max_n = integer(max_n, "max_n", low=2, high=MAX_LENGTH)
    dt = _sweep_dtype(dtype)
    check_allocation(
        f"a retrieval sweep table with |ALPH| = {alphabet_size} to n = {max_n}",
        TABLE_BYTES_PER_LENGTH * max_n,
    )
    blocks = list(
        iter_retrieval_sweep(alphabet_size, theta, 2, max_n, dt, device, judge, gap_inf_limit=gap_inf_limit)
    )
    cols, comparisons, _ = _collect(blocks, extras=False)  # its witnesses come from retrieval_sweep
    ex = Computed(lambda: retrieval_sweep(alphabet_size, theta, max_n, gap_inf_limit))
    mp = Computed(lambda: MpLogits(retrieval_construction(alphabet_size, theta, max_int=1)))
    head = Computed(lambda: compile_construction(retrieval_construction(alphabet_size, theta, max_int=1)))

    def witness(n_: int, q: str) -> dict[str, Any]:
        codes, target = ex().codes(n_, q)
        tokens = retrieval_witness_tokens(alphabet_size, codes)
        return {
            "theta": theta,
            "tokens": tokens,
            "target_position": target,
            "explanation": explain_input(head(), tokens, target, q).to_dict(),
        }

    def mp_measured(n_: int, q: str) -> Any:
        w = witness(n_, q)
        gap, margin = mp().gap_and_margin(w["tokens"], w["target_position"])
        return margin if q == "margin_inf" else gap

    omega = 2 * math.pi / alphabet_size
    params = {"alphabet_size": alphabet_size, "theta": theta, "omega": omega}
    return SweepTable(
        "retrieval", params, dtype_name(dt), cols, retrieval_bound(), comparisons, witness, mp_measured
    )


@object_product("exact.index-sweep-table")
def INDEX_TABLE(
    store: ResultStore, theta: float, max_n: int, dtype: str = "float64", device: str = "cpu"
) -> SweepTable:
    """:func:`sweep_index` as a product of the run's store (the Theorem 3.2 claims and the theory figure
    read the same table; read-only)."""
    return sweep_index(theta, max_n, dtype, device)


@object_product("exact.retrieval-sweep-table")
def RETRIEVAL_TABLE(
    store: ResultStore,
    alphabet_size: int,
    theta: float,
    max_n: int,
    dtype: str = "float64",
    device: str = "cpu",
) -> SweepTable:
    """:func:`sweep_retrieval` as a product of the run's store (read-only)."""
    return sweep_retrieval(alphabet_size, theta, max_n, dtype, device)

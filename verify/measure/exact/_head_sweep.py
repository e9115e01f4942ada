"""Exact sweeps of any head directory: the family a head is swept over, and the sweep itself.

The family comes from, in order:

1. the head itself: a head records its input family (``CompiledHead.family``, ``head.json``'s
   ``"family"``; a compiled construction that carries a family records it);
2. for heads written by older versions of ``ropeproof compile``, which recorded only how the head
   was built (``metadata["construction"]`` and ``metadata["construction_args"]``): the paper
   construction rebuilt from those, with its family;
3. otherwise :func:`~ropeproof.theory._family.token_family`, every input over the head's vocabulary,
   where ``gap_sup`` is [A]'s discrepancy ``Delta(n)`` and ``margin_inf`` is only the query's own
   margin. :data:`NO_FAMILY` is the sentence every output prints then.

A family given to :func:`sweep_head` replaces all three.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead, load_head
from ropeproof.constructions._paper import CONSTRUCTIONS
from ropeproof.machinery._errors import InputError, RopeproofError
from ropeproof.theory._family import Family, token_family
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, dtype_name, resolve_dtype
from ropeproof.verify.measure._display import TableDisplay
from ropeproof.verify.measure.exact._discrepancy import QUANTITIES, SweepResult, build_tables, exact_sweep
from ropeproof.verify.measure.exact._offset_extremes import LOGIT_READINGS, OffsetExtremes, offset_extremes

NO_FAMILY = (
    "the head records no input family, so it is swept over ALL token sequences (no target: margin_inf "
    "is the query's own logit minus the best earlier one); give the head a family to sweep what it "
    "must answer"
)
"""What every output says when a head is swept over all token sequences for want of a family."""

FAMILY_SOURCES = ("given", "recorded", "rebuilt", "all-sequences")
"""Where a sweep's family came from: passed in, recorded by the head, rebuilt from a legacy head's
construction arguments, or (no family anywhere) every token sequence."""


def _rebuilt_family(head: CompiledHead) -> Family | None:
    name = head.metadata.get("construction")
    kwargs = head.metadata.get("construction_args")
    if name not in CONSTRUCTIONS or not isinstance(kwargs, dict):
        return None
    try:
        family = CONSTRUCTIONS[str(name)](**kwargs).family
    except (RopeproofError, TypeError) as exc:
        raise InputError(
            f"head {head.name!r}: metadata construction_args={kwargs} are invalid: {exc}"
        ) from exc
    if family is not None and family.tokens <= set(head.tokens):
        return family
    return None


def resolve_head_family(head: CompiledHead, family: Family | None = None) -> tuple[Family, str]:
    """``(family, source)``: the family a sweep of ``head`` uses and where it came from (one of
    :data:`FAMILY_SOURCES`; see the module docstring)."""
    if family is not None:
        if not isinstance(family, Family):
            raise InputError(f"family must be a Family, got {type(family).__name__}")
        family.check_tokens(head.tokens, f"head {head.name!r}")
        return family, "given"
    if head.family is not None:
        return head.family, "recorded"
    rebuilt = _rebuilt_family(head)
    if rebuilt is not None:
        return rebuilt, "rebuilt"
    return token_family(head.tokens), "all-sequences"


def head_family(head: CompiledHead) -> Family:
    """The family :func:`sweep_head` uses for ``head`` by default (see the module docstring)."""
    return resolve_head_family(head)[0]


@dataclass
class HeadSweep(TableDisplay):
    """Exact ``gap_sup``, ``gap_inf``, ``margin_inf`` of a head for ``n = 2 .. N`` (``columns``:
    numpy arrays indexed by ``n - 2``), over ``family``, with logits computed in ``dtype``; the logit
    reading ``logit_inf`` / ``logit_sup`` by offset ``m = 0 .. N - 1`` from :meth:`logits`.

    Shapes: columns [N - 1] (each array)
    """

    head: str
    family: Family
    dtype: str
    columns: dict[str, np.ndarray]
    result: SweepResult
    family_source: str = "given"
    offsets: OffsetExtremes | None = field(default=None, repr=False)

    def select(self, start: int, stop: int, step: int = 1) -> HeadSweep:
        """The rows with ``start <= n <= stop`` and ``n - start`` a multiple of ``step``, and the row
        ``n = stop`` always (``--lengths A:B:STEP`` ends at ``B``)."""
        n = self.columns["n"]
        mask = (n >= start) & (n <= stop) & (((n - start) % step == 0) | (n == stop))
        cols = {k: v[mask] for k, v in self.columns.items()}
        return HeadSweep(
            self.head, self.family, self.dtype, cols, self.result, self.family_source, self.offsets
        )

    def rows(self) -> list[dict[str, Any]]:
        """One dict per row: ``n`` (int) and the three extremes (float, ``None`` where not computed)."""
        out = []
        for i in range(self.columns["n"].size):
            row: dict[str, Any] = {"n": int(self.columns["n"][i])}
            for q in QUANTITIES:
                v = float(self.columns[q][i])
                row[q] = None if np.isnan(v) else v
            out.append(row)
        return out

    def title(self) -> str:
        if self.family_source == "all-sequences":
            return f"{self.head}: exact sweep over ALL token sequences ({self.dtype}; no family recorded)"
        return f"{self.head}: exact sweep over the {self.family.name} family ({self.dtype})"

    def witness(self, n: int, quantity: str) -> Any:
        """The input of length ``n`` attaining ``quantity`` (see :meth:`SweepResult.witness`); for a
        logit reading (``logit_inf``, ``logit_sup``) ``n`` is the offset ``m`` and the witness the
        attaining pair (:meth:`~ropeproof.verify.measure.exact._offset_extremes.OffsetExtremes.witness`)."""
        if quantity in LOGIT_READINGS:
            return self.logits().witness(n, quantity)
        return self.result.witness(n, quantity)

    def logits(self) -> OffsetExtremes:
        """The logit reading by offset ``m = 0 .. N - 1``: ``logit_inf`` / ``logit_sup``, the least /
        greatest logit over the family's query-key pairs ``m`` apart
        (:mod:`~ropeproof.verify.measure.exact._offset_extremes`), from the sweep's own tables."""
        if self.offsets is None:
            self.offsets = offset_extremes(self.result.tables, int(self.result.n[-1]))
        return self.offsets

    def logit_rows(self) -> list[dict[str, Any]]:
        """One dict per offset ``m = 0 .. N - 1``: ``m``, ``logit_inf``, ``logit_sup`` (floats)."""
        o = self.logits()
        return [
            {"m": int(m), "logit_inf": float(lo), "logit_sup": float(hi)}
            for m, lo, hi in zip(o.m, o.logit_inf, o.logit_sup, strict=True)
        ]

    def error_bounds(self, quantity: str, extra: float = 0.0) -> np.ndarray:
        """Per row (``n = 2 .. N`` of the unselected sweep; offsets ``m = 0 .. N - 1`` for a logit
        reading, whose bound is the largest per-logit bound at ``m`` plus ``extra``), a bound on
        ``|value - exact|`` of ``quantity`` against the exact extremes of the head's weights: twice the
        largest logit error at any distance below ``n`` (each extreme is a minimum or maximum of
        logits, then one subtraction; each logit's own bound comes from
        :func:`~ropeproof.verify.measure.exact._plane_logits.distance_logits_exact`), plus ``2 extra``
        (a further per-logit error, such as the rounding of a construction's weights) and that
        subtraction's rounding. float64 sweeps only.

        Shapes: return [N - 1]
        """
        if quantity in LOGIT_READINGS:
            errors = self.logits().errors
            if errors is None:
                raise InputError(f"a {self.dtype} sweep carries no error bounds (float64 sweeps do)")
            u = 2.0**-53
            values = np.abs(self.logits().column(quantity))
            return (errors + extra) * (1 + 8 * u) + u * values + 5e-324
        if quantity not in QUANTITIES:
            raise InputError(f"quantity={quantity!r}; accepted: {QUANTITIES + LOGIT_READINGS}")
        size = self.result.n.size + 1
        per_distance = np.zeros(size)
        for t in self.result.tables:
            if t.errors is None:
                raise InputError(f"a {self.dtype} sweep carries no error bounds (float64 sweeps do)")
            per_distance = np.maximum(per_distance, t.errors[:size])
        prefix = np.maximum.accumulate(per_distance)[1:]  # row n - 2 covers distances 0 .. n - 1
        u = 2.0**-53
        values = np.abs(np.nan_to_num(getattr(self.result, quantity)))
        return (2 * (prefix + extra) + u * values) * (1 + 8 * u) + 5e-324


def sweep_head(
    head: CompiledHead | str | Path,
    max_n: int,
    family: Family | None = None,
    dtype: DtypeLike = torch.float64,
    device: DeviceLike = "cpu",
    gap_inf_limit: int = 96,
    logits_only: bool = False,
) -> HeadSweep:
    """Exact extremes of ``head`` over ``family`` (default: :func:`resolve_head_family`) for ``n = 2 ..
    max_n``; ``gap_inf`` is enumerated where the margin is not positive only for ``n <= gap_inf_limit``
    (:func:`~ropeproof.verify.measure.exact._discrepancy.exact_sweep`; NaN above). Lengths where the
    family has no input (below :meth:`~ropeproof.theory._family.Family.min_length`) are NaN.
    ``logits_only``: only the logit reading by offset (:meth:`HeadSweep.logits`); the length extremes
    are not computed (NaN, no witness), which spares the one-pass sweep over lengths. ``head``: a
    compiled head or a head directory (as for
    :func:`~ropeproof.verify.measure.exact._stated_bound.check_bound`)."""
    if isinstance(head, str | Path):
        head = load_head(head)
    if not isinstance(head, CompiledHead):
        raise InputError(f"head must be a CompiledHead or a head directory, got {type(head).__name__}")
    fam, source = resolve_head_family(head, family)
    dt = resolve_dtype(dtype)
    tables = build_tables(head, fam, max_n, dt, device)
    if logits_only:
        nan = np.full(max_n - 1, np.nan)
        n_arr = np.arange(2, max_n + 1)
        result = SweepResult(n_arr, nan, nan.copy(), nan.copy(), np.zeros(max_n - 1, dtype=bool), tables)
    else:
        result = exact_sweep(tables, max_n, gap_inf_limit)
    cols = {"n": result.n, **{q: getattr(result, q) for q in QUANTITIES}}
    return HeadSweep(head.name, fam, dtype_name(dt), cols, result, source)

"""Exact sweeps of any head directory: the family a head is swept over, and the sweep itself.

A head written by ``ropeproof compile`` records how it was built (``metadata["construction"]`` and
``metadata["construction_args"]``), so :func:`head_family` rebuilds the paper construction and takes
its standard family (T_Index: integer ``s`` at the query, letter ``s`` back; T_Retrieval: one
matching pair; Reflexive: the query is its own target), in which ``margin_inf`` is the worst
target margin. Any other head (an import, or a head saved from Python) is swept over
:func:`~ropeproof.verify.measure.exact.families.token_family`, every input over its vocabulary, where
``gap_sup`` is [A]'s discrepancy ``Delta(n)`` and ``margin_inf`` is only the query's own margin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ropeproof.constructions.head import CompiledHead
from ropeproof.constructions.paper import CONSTRUCTIONS
from ropeproof.theory.errors import InputError, RopeproofError
from ropeproof.verify.kernel.devices import DeviceLike, DtypeLike, dtype_name, resolve_dtype
from ropeproof.verify.measure.display import TableDisplay
from ropeproof.verify.measure.exact.discrepancy import QUANTITIES, SweepResult, build_tables, exact_sweep
from ropeproof.verify.measure.exact.families import Family, family_for, token_family


def head_family(head: CompiledHead) -> Family:
    """The family :func:`sweep_head` uses for ``head`` (see the module docstring)."""
    name = head.metadata.get("construction")
    kwargs = head.metadata.get("construction_args")
    if name in CONSTRUCTIONS and isinstance(kwargs, dict):
        try:
            family = family_for(CONSTRUCTIONS[str(name)](**kwargs))
        except (RopeproofError, TypeError) as exc:
            raise InputError(
                f"head {head.name!r}: metadata construction_args={kwargs} are invalid: {exc}"
            ) from exc
        tokens = {t for case in family.cases for t in (*case.query_tokens, *case.other_tokens)}
        if tokens <= set(head.tokens):
            return family
    return token_family(head.tokens)


@dataclass
class HeadSweep(TableDisplay):
    """Exact ``gap_sup``, ``gap_inf``, ``margin_inf`` of a head for ``n = 2 .. N`` (``columns``:
    numpy arrays indexed by ``n - 2``), over ``family``, with logits computed in ``dtype``.

    Shapes: columns [N - 1] (each array)
    """

    head: str
    family: Family
    dtype: str
    columns: dict[str, np.ndarray]
    result: SweepResult

    def select(self, start: int, stop: int, step: int = 1) -> HeadSweep:
        """The rows with ``start <= n <= stop`` and ``n - start`` a multiple of ``step``."""
        n = self.columns["n"]
        mask = (n >= start) & (n <= stop) & ((n - start) % step == 0)
        return HeadSweep(
            self.head, self.family, self.dtype, {k: v[mask] for k, v in self.columns.items()}, self.result
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
        return f"{self.head}: exact sweep over the {self.family.name} family ({self.dtype})"

    def witness(self, n: int, quantity: str) -> Any:
        """The input of length ``n`` attaining ``quantity`` (see :meth:`SweepResult.witness`)."""
        return self.result.witness(n, quantity)


def sweep_head(
    head: CompiledHead,
    max_n: int,
    family: Family | None = None,
    dtype: DtypeLike = torch.float64,
    device: DeviceLike = "cpu",
    gap_inf_limit: int = 96,
) -> HeadSweep:
    """Exact extremes of ``head`` over ``family`` (default :func:`head_family`) for ``n = 2 .. max_n``;
    ``gap_inf`` is enumerated where the margin is not positive only for ``n <= gap_inf_limit``
    (:func:`~ropeproof.verify.measure.exact.discrepancy.exact_sweep`; NaN above)."""
    fam = head_family(head) if family is None else family
    dt = resolve_dtype(dtype)
    result = exact_sweep(build_tables(head, fam, max_n, dt, device), max_n, gap_inf_limit)
    cols = {"n": result.n, **{q: getattr(result, q) for q in QUANTITIES}}
    return HeadSweep(head.name, fam, dtype_name(dt), cols, result)

"""Length sweeps of the paper's constructions: exact extremes, the reported bound, and resolvability.

:func:`sweep_index` and :func:`sweep_retrieval` return :class:`SweepTable` s whose rows hold

- ``n``; ``gap_sup``, ``gap_inf``, ``margin_inf`` (exact, float64);
- ``bound``: [A]'s Theorem 3.2 bound at ``n``; with ``judge=True`` (default) ``bound_holds``:
  whether ``gap_sup`` (the definition of ``Delta``: the gap maximised over inputs) respects it,
  judged with rounding tolerance (``None`` when float64 cannot decide);
- with ``dtype`` other than float64: ``measured_*`` (the same extremes from logits computed in that
  dtype) and ``resolvable`` (whether the measured ``margin_inf`` exceeds the dtype's resolution);
  for float64 ``resolvable`` says the same of the exact value.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
import torch

from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.paper import retrieval_construction
from ropeproof.theory.bounds import ReportedBound, index_bound, retrieval_bound
from ropeproof.theory.errors import InputError
from ropeproof.verify.display import TableDisplay
from ropeproof.verify.exact.bound_checks import BoundComparison, compare
from ropeproof.verify.exact.discrepancy import build_tables, exact_sweep
from ropeproof.verify.exact.families import retrieval_family
from ropeproof.verify.exact.index_sweep import index_sweep
from ropeproof.verify.exact.mp_reference import MpLogits
from ropeproof.verify.exact.offset_logits import distance_logits
from ropeproof.verify.runtime.devices import DeviceLike, DtypeLike, dtype_name, resolve_dtype
from ropeproof.verify.runtime.resolution import gap_resolution, unit_roundoff

QUANTITIES = ("gap_sup", "gap_inf", "margin_inf")


def parse_lengths(text: str) -> tuple[int, int, int]:
    """``"A:B[:STEP]"`` -> ``(A, B, STEP)`` with ``2 <= A <= B`` and ``STEP >= 1``."""
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise InputError(f"lengths={text!r} must look like A:B or A:B:STEP")
    try:
        a, b, step = int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) == 3 else 1
    except ValueError:
        raise InputError(f"lengths={text!r}: A, B and STEP must be integers") from None
    if a < 2 or b < a or step < 1:
        raise InputError(f"lengths={text!r}: need 2 <= A <= B and STEP >= 1 (a query needs one key)")
    return a, b, step


@dataclass
class SweepTable(TableDisplay):
    """Rows of a sweep, columns as numpy arrays, plus what produced them.

    In a notebook it renders as a markdown or HTML table, and ``to_pandas()`` gives a
    ``DataFrame`` of :meth:`rows` (pandas optional; see :mod:`ropeproof.verify.display`).

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
        the construction's closed form (the ground truth that decides near-tied rows)."""
        if self.mp_measured_fn is None:
            raise InputError("this table has no mpmath reference")
        return self.mp_measured_fn(n, quantity)

    def select(self, start: int, stop: int, step: int) -> SweepTable:
        mask = (
            (self.columns["n"] >= start)
            & (self.columns["n"] <= stop)
            & ((self.columns["n"] - start) % step == 0)
        )
        cols = {k: v[mask] for k, v in self.columns.items()}
        return SweepTable(
            self.construction,
            self.params,
            self.dtype,
            cols,
            self.bound,
            self.comparisons,
            self.witness_fn,
            self.mp_measured_fn,
        )

    def title(self) -> str:
        """``construction {params}, dtype; bound: statement``."""
        return f"{self.construction} {self.params}, {self.dtype}; bound: {self.bound.statement}"

    def rows(self) -> list[dict[str, Any]]:
        """One dict per row, JSON-ready (NaN -> None)."""
        keys = list(self.columns)
        out = []
        for i in range(self.columns["n"].size):
            row: dict[str, Any] = {}
            for k in keys:
                v = self.columns[k][i]
                if isinstance(v, np.bool_ | bool):
                    row[k] = bool(v)
                elif isinstance(v, np.integer):
                    row[k] = int(v)
                elif v is None:
                    row[k] = None
                else:
                    fv = float(v)
                    row[k] = None if math.isnan(fv) else fv
            out.append(row)
        return out


READING_COLUMNS = {
    "gap_sup": "bound_holds",
    "gap_inf": "bound_holds_gap_inf",
    "margin_inf": "bound_holds_margin_inf",
}
"""Which column judges which reading of Delta: ``bound_holds`` is the literal one (gap maximised over
inputs, THEORY.md section 5); the other two read Delta as the worst-case gap or margin."""


def _as_bool(status: np.ndarray) -> np.ndarray:
    out = np.full(status.shape, None, dtype=object)
    out[np.isin(status, ("holds", "tight-holds", "tight-equal"))] = True
    out[np.isin(status, ("violated", "tight-violated"))] = False
    return out


def _judge_all(
    cols: dict[str, np.ndarray], bound: np.ndarray, tol: np.ndarray, refine_for
) -> dict[str, BoundComparison]:
    out = {}
    for q, col in READING_COLUMNS.items():
        cmp = compare("min(terms)", q, cols["n"], cols[q], bound, tol, refine_for(q))
        cols[col] = _as_bool(cmp.status)
        out[q] = cmp
    return out


def _index_dtype_extremes(
    theta: float, n: np.ndarray, dtype: torch.dtype, device: DeviceLike
) -> dict[str, np.ndarray]:
    """T_Index extremes from logits computed in ``dtype`` (module arithmetic, one plane)."""
    big = int(n[-1])
    h = distance_logits(
        np.array([1.0, 0.0]), np.array([[1.0, 0.0]]), _plane_spec(theta), np.arange(big), 1.0, dtype, device
    )[0]
    top = np.maximum.accumulate(h[1:])  # max_{1 <= m <= M} h(m), index M - 1
    margin = h[0] - top[n - 2]
    half = (n - 1 + 1) // 2
    return {"gap_sup": h[0] - top[half - 1], "gap_inf": margin, "margin_inf": margin}


def _plane_spec(theta: float):
    from ropeproof.theory.rope_spec import RopeSpec

    return RopeSpec(2, freqs=[theta])


def _exact_columns(ex: Any, bound: np.ndarray) -> dict[str, np.ndarray]:
    """The exact columns of a sweep: ``n``, the three extremes, and the reported bound."""
    return {"n": ex.n, **{q: getattr(ex, q) for q in QUANTITIES}, "bound": bound}


def _finish(
    cols: dict[str, np.ndarray],
    bound: np.ndarray,
    tol: np.ndarray,
    refine_for,
    judge: bool,
    dtype: torch.dtype,
    measured: Callable[[], dict[str, np.ndarray]],
) -> dict[str, BoundComparison]:
    """Add the ``bound_holds*`` columns (or ``None`` without ``judge``), and ``resolvable``: the exact
    margin (float64) or the margin measured in ``dtype`` against that dtype's resolution."""
    comparisons = _judge_all(cols, bound, tol, refine_for) if judge else {}
    if not judge:
        for col in READING_COLUMNS.values():
            cols[col] = np.full(cols["n"].shape, None, dtype=object)
    res = gap_resolution(dtype, head_dim=2, magnitude=1.0)
    if dtype == torch.float64:
        cols["resolvable"] = np.abs(cols["margin_inf"]) > res
    else:
        meas = measured()
        for q in QUANTITIES:
            cols[f"measured_{q}"] = meas[q]
        cols["resolvable"] = np.abs(meas["margin_inf"]) > res
    return comparisons


def sweep_index(
    theta: float, max_n: int, dtype: DtypeLike = torch.float64, device: DeviceLike = "cpu", judge: bool = True
) -> SweepTable:
    """T_Index at ``theta``, every ``n`` in ``2 .. max_n`` (exact:
    :func:`ropeproof.verify.exact.index_sweep.index_sweep`)."""
    dt = resolve_dtype(dtype)
    ex = index_sweep([theta], [1.0], max_n)
    n = ex.n
    bound = index_bound()
    b = bound.evaluate(n, theta)
    tol = 8 * unit_roundoff("float64") * np.maximum(np.abs(ex.gap_sup), np.abs(b))
    cols = _exact_columns(ex, b)
    th = mpmath.mpf(theta)

    def mp_measured(n_: int, q: str) -> Any:
        with mpmath.workdps(40):
            return 2 * mpmath.sin(ex.witness(n_, q)["competitor_offset"] * th / 2) ** 2

    def refine_for(q: str):
        def refine(n_: int) -> tuple[float, float]:
            with mpmath.workdps(40):
                bnd = min(1 - mpmath.cos(th), mpmath.pi**2 / (2 * mpmath.mpf(n_) ** 2))
                return mp_measured(n_, q), bnd

        return refine

    comparisons = _finish(
        cols, b, tol, refine_for, judge, dt, lambda: _index_dtype_extremes(theta, n, dt, device)
    )
    return SweepTable(
        "index",
        {"theta": theta},
        dtype_name(dt),
        cols,
        bound,
        comparisons,
        lambda n_, q: {"theta": theta, **ex.witness(n_, q)},
        mp_measured,
    )


def sweep_retrieval(
    alphabet_size: int,
    theta: float,
    max_n: int,
    dtype: DtypeLike = torch.float64,
    device: DeviceLike = "cpu",
    gap_inf_limit: int = 96,
    judge: bool = True,
) -> SweepTable:
    """T_Retrieval (``|ALPH| = alphabet_size``) at ``theta``, every ``n`` in ``2 .. max_n``."""
    dt = resolve_dtype(dtype)
    c = retrieval_construction(alphabet_size, theta, max_int=1)
    head = compile_construction(c)
    fam = retrieval_family(c)
    ex = exact_sweep(build_tables(head, fam, max_n), max_n, gap_inf_limit)
    n = ex.n
    bound = retrieval_bound()
    omega = 2 * math.pi / alphabet_size
    b = bound.evaluate(n, theta, omega)
    # the sweep's float64 logits carry rounding ~ (4 + 6) u each, the bound ~ 8 u relative
    tol = 24 * unit_roundoff("float64") * np.maximum(1.0, np.abs(b))
    cols = _exact_columns(ex, b)
    mp = functools.cache(lambda: MpLogits(c))  # derived on first use only

    def mp_measured(n_: int, q: str) -> Any:
        w = ex.witness(n_, q)
        gap, margin = mp().gap_and_margin(w.tokens, w.target_position)
        return margin if q == "margin_inf" else gap

    def refine_for(q: str):
        def refine(n_: int) -> tuple[float, float]:
            with mpmath.workdps(40):
                bnd = 1 - mpmath.cos(2 * mpmath.pi / alphabet_size - n_ * mpmath.mpf(theta))
            return mp_measured(n_, q), bnd

        return refine

    def measured() -> dict[str, np.ndarray]:
        meas = exact_sweep(build_tables(head, fam, max_n, dt, device), max_n, gap_inf_limit)
        return {q: getattr(meas, q) for q in QUANTITIES}

    comparisons = _finish(cols, b, tol, refine_for, judge, dt, measured)

    def witness(n_: int, q: str) -> dict[str, Any]:
        w = ex.witness(n_, q)
        return {"theta": theta, "tokens": list(w.tokens), "target_position": w.target_position}

    params = {"alphabet_size": alphabet_size, "theta": theta, "omega": omega}
    return SweepTable("retrieval", params, dtype_name(dt), cols, bound, comparisons, witness, mp_measured)

"""What a corrected statement is checked against: the exact quantity, the reported statement and the
corrected one at every length, a witness, the proof steps, and what the numbers confirm.

A :class:`CorrectionData` holds one or more :class:`Series` (one per parameter setting; the first is the
correction's headline, whose rows ``[n, corrected, exact]`` are pinned and printed). Its
:meth:`~CorrectionData.established` status says what the computation supports:

- ``machine-checked`` when every proof step, their composition included, is checked and passes, none
  argued, and every numeric check agrees; ``proved`` when, besides, some steps are argued in
  docs/theory.md (:func:`ropeproof.theory._proof_checks.proof_level` names them; the composition is one
  wherever no code checks how the steps combine);
- ``certified`` (basis ``"interval"``) or ``conjectured`` (basis ``"numerical"``) when there is no proof
  and the checks agree;
- otherwise a sentence naming the step or check that failed.

Checks compare float64 values with a tolerance of :data:`TOLERANCE_ULPS` ulps of ``max(1, |value|)``:
every quantity here is a handful of O(1) cosines, each a few ulps off (docs/theory.md section 7). A
check that needs more than the tolerance can resolve says so in its name; none decides a statement that
the proof does not already decide.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ropeproof.theory._proof_checks import NOT_PROVED, ProofStep, proof_level, steps_table

TOLERANCE_ULPS = 64
"""Float64 tolerance of the checks, in ulps of ``max(1, |value|)``."""
Kind = Literal["bound", "equality"]
Basis = Literal["proof", "interval", "numerical"]


def tolerance(values: np.ndarray) -> np.ndarray:
    """The checks' float64 tolerance at each value.

    Shapes: values [...]; return [...]"""
    return TOLERANCE_ULPS * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(np.asarray(values, float)))


@dataclass(frozen=True)
class Series:
    """One parameter setting: at each sequence length ``n``, the ``exact`` quantity, the ``reported``
    statement read with ``n`` the length and with ``n`` the largest offset (``reported_offset``, the
    statement at ``n - 1``), and the ``corrected`` statement (the same number under both readings of
    ``n``: the corrected statement with ``n`` the largest offset, taken at ``n - 1``).

    Shapes: n [rows]; exact [rows]; reported [rows]; reported_offset [rows]; corrected [rows]"""

    label: str
    n: np.ndarray
    exact: np.ndarray
    reported: np.ndarray
    reported_offset: np.ndarray
    corrected: np.ndarray

    def rows(self) -> list[list[float | int]]:
        """``[n, corrected, exact]`` per length, ``n`` the sequence length."""
        return [
            [int(a), float(c), float(e)] for a, c, e in zip(self.n, self.corrected, self.exact, strict=True)
        ]

    def offset_rows(self) -> list[list[float | int]]:
        """``[n, corrected, exact]`` per length with ``n`` the largest offset (the length minus 1)."""
        return [[int(a) - 1, c, e] for a, c, e in self.rows()]

    def holds(self, kind: Kind) -> np.ndarray:
        """Per row: ``exact <= corrected`` (``kind="bound"``) or ``exact == corrected`` (``"equality"``),
        within :func:`tolerance`.

        Shapes: return [rows]"""
        tol = tolerance(self.corrected)
        if kind == "equality":
            return np.abs(self.exact - self.corrected) <= tol
        return self.exact <= self.corrected + tol

    def reported_fails(self, offset: bool = False) -> np.ndarray:
        """The lengths where the exact quantity exceeds the reported statement by more than the tolerance
        (the finding the correction answers).

        Shapes: return [failing rows]"""
        reported = self.reported_offset if offset else self.reported
        ok = np.isfinite(reported)
        bad = ok & (self.exact > reported + tolerance(reported))
        return self.n[bad]


@dataclass
class CorrectionData:
    """Everything computed for one correction (module docstring)."""

    quantity: str
    reported_label: str
    corrected_label: str
    kind: Kind
    series: list[Series]
    witness: dict[str, Any]
    proof: list[ProofStep]
    checks: dict[str, bool] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    basis: Basis = "proof"
    failure: dict[str, Any] = field(default_factory=dict)
    """Where the reported statement fails first (:func:`first_failure`), with the input there."""

    def rows(self) -> list[list[float | int]]:
        """The headline series' rows ``[n, corrected, exact]`` (``n`` the length)."""
        return self.series[0].rows()

    def offset_rows(self) -> list[list[float | int]]:
        """The same with ``n`` the largest offset."""
        return self.series[0].offset_rows()

    def all_checks(self) -> dict[str, bool]:
        """``checks`` plus, per series, whether every row satisfies the corrected statement."""
        out = dict(self.checks)
        for s in self.series:
            out[f"{self.kind} holds at every row ({s.label})"] = bool(s.holds(self.kind).all())
        return out

    def established(self) -> tuple[str, str]:
        """``(status, why)``: what the steps and checks establish (module docstring)."""
        failed = [name for name, ok in self.all_checks().items() if not ok]
        if self.basis == "proof":
            level, summary = proof_level(self.proof)
            if level == NOT_PROVED:
                return NOT_PROVED, summary
        else:
            level = {"interval": "certified", "numerical": "conjectured"}[self.basis]
            summary = f"{self.basis} checks"
        if failed:
            return "contradicted", "checks failed: " + "; ".join(failed)
        return level, summary

    def summary_figures(self) -> dict[str, Any]:
        """Figures of the headline series: rows checked, the largest ``exact - corrected`` and where the
        reported statement fails (under both readings of ``n``), plus :attr:`figures`."""
        s = self.series[0]
        fails, fails_offset = s.reported_fails(), s.reported_fails(offset=True)
        excess = s.exact - s.corrected
        return {
            "rows": int(s.n.size),
            "lengths": f"{int(s.n[0])}..{int(s.n[-1])}",
            "max_exact_minus_corrected": float(np.max(excess)),
            "exact_at_max_n": float(s.exact[-1]),
            "corrected_at_max_n": float(s.corrected[-1]),
            "reported_fails_at": int(fails.size),
            "reported_first_failure_n": int(fails[0]) if fails.size else None,
            "reported_fails_at_offset": int(fails_offset.size),
            "reported_first_failure_n_offset": int(fails_offset[0]) if fails_offset.size else None,
            **self.figures,
        }

    def proof_table(self) -> list[dict[str, object]]:
        """The proof steps with their status."""
        return steps_table(self.proof)


def with_steps_run(data: CorrectionData) -> CorrectionData:
    """``data`` after :meth:`CorrectionData.established` has run its proof steps (each keeps its result),
    so that the object a run's store shares between processes carries them and no process runs the
    steps again; returned for the store's products to hand out."""
    data.established()
    return data


def first_failure(series: Series, describe: Callable[[int], dict[str, Any]] | None = None) -> dict[str, Any]:
    """The first length where ``series``' exact quantity exceeds the reported statement (``n`` the length):
    ``n``, both values and ``describe(n)`` (the input there); ``{}`` when the statement holds throughout."""
    fails = series.reported_fails()
    if not fails.size:
        return {}
    n = int(fails[0])
    r = int(np.searchsorted(series.n, n))
    out: dict[str, Any] = {"n": n, "exact": float(series.exact[r]), "reported": float(series.reported[r])}
    if describe is not None:
        out.update(describe(n))
    return out

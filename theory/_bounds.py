"""[A]'s Theorem 3.2 bounds, as reported (``docs/theory.md`` section 5), in symbolic stable form.

- ``Delta_Index(n) <= min(1 - cos(theta), pi^2 / (2 n^2))``; stable: ``min(2 sin(theta/2)^2, pi^2/(2 n^2))``.
- ``Delta_Retrieval(n) <= 1 - cos(omega - n theta)``; stable: ``2 sin((omega - n theta)/2)^2``.

Both are upper bounds on a discrepancy whose precise reading is open: ``Delta`` may be the largest
gap over inputs (``gap_sup``), the smallest (``gap_inf``) or the worst target margin
(``margin_inf``). The checks compare every term against every reading.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ropeproof.theory._rope_symbolic import lambdify_expr

N = sp.Symbol("n", positive=True, integer=True)
THETA = sp.Symbol("theta", real=True)
OMEGA = sp.Symbol("omega", positive=True)


@dataclass(frozen=True)
class BoundTerm:
    """One term of a reported bound: its name, the raw expression and its stable equivalent."""

    name: str
    raw: sp.Expr
    stable: sp.Expr

    def numpy(self) -> Callable[..., np.ndarray]:
        """``f(n, theta, omega)`` of the stable form, vectorised over numpy arrays."""
        return lambdify_expr(self.stable, "numpy", [N, THETA, OMEGA])

    def mpmath(self) -> Callable[..., object]:
        """``f(n, theta, omega)`` of the raw form at mpmath precision (ground truth)."""
        return lambdify_expr(self.raw, "mpmath", [N, THETA, OMEGA])

    def latex(self) -> str:
        return sp.latex(self.stable)


@dataclass(frozen=True)
class ReportedBound:
    """A reported bound: ``Delta(n) <= min(terms)``."""

    construction: str
    terms: tuple[BoundTerm, ...]
    statement: str

    def expression(self) -> sp.Expr:
        return self.terms[0].stable if len(self.terms) == 1 else sp.Min(*[t.stable for t in self.terms])

    def latex(self) -> str:
        return rf"\Delta_{{\mathrm{{{self.construction}}}}}(n) \le {sp.latex(self.expression())}"

    def evaluate(self, n: np.ndarray, theta: float, omega: float = 0.0) -> np.ndarray:
        """The bound ``min_t term_t(n)`` in float64 for every ``n``."""
        n = np.asarray(n, dtype=np.float64)
        vals = [np.broadcast_to(t.numpy()(n, theta, omega), n.shape) for t in self.terms]
        return np.minimum.reduce(vals) if len(vals) > 1 else np.array(vals[0], dtype=np.float64)


def index_bound() -> ReportedBound:
    """Theorem 3.2, Index: ``Delta(n) <= min(1 - cos(theta), pi^2 / (2 n^2))``."""
    return ReportedBound(
        "Index",
        (
            BoundTerm("1-cos(theta)", 1 - sp.cos(THETA), 2 * sp.sin(THETA / 2) ** 2),
            BoundTerm("pi^2/(2n^2)", sp.pi**2 / (2 * N**2), sp.pi**2 / (2 * N**2)),
        ),
        "Delta_Index(n) <= min(1 - cos(theta), pi^2/(2 n^2))",
    )


def retrieval_bound() -> ReportedBound:
    """Theorem 3.2, Retrieval: ``Delta(n) <= 1 - cos(omega - n theta)``."""
    arg = OMEGA - N * THETA
    return ReportedBound(
        "Retrieval",
        (BoundTerm("1-cos(omega-n*theta)", 1 - sp.cos(arg), 2 * sp.sin(arg / 2) ** 2),),
        "Delta_Retrieval(n) <= 1 - cos(omega - n theta)",
    )


def softmax_scale_needed(
    n: sp.Expr = N, margin: sp.Expr | None = None, eps: sp.Expr | None = None
) -> sp.Expr:
    """Logit scale that gives weight ``1 - eps`` on the top key with ``n`` keys and gap ``margin``:
    ``ln((n - 1)(1 - eps) / eps) / margin`` (docs/theory.md section 5, softmax link)."""
    margin = sp.Symbol("Delta", positive=True) if margin is None else margin
    eps = sp.Rational(1, 100) if eps is None else sp.sympify(eps)
    return sp.log((n - 1) * (1 - eps) / eps) / margin

"""Ground truth in mpmath: a construction's query-row logits from its sympy closed forms.

Independent of the torch module: the logit of the last token against key ``j`` is the derived closed
form ``l(query, key)(u)`` at ``u = j - (n - 1)``, evaluated at ``dps`` significant digits with the
construction's parameters taken as the exact binary values of their floats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import mpmath
import sympy as sp

from ropeproof.theory._construction import Construction
from ropeproof.theory._derive import OFFSET, Derivation, derive
from ropeproof.theory._rope_symbolic import lambdify_expr


class MpLogits:
    """Evaluates query-row logits of ``construction`` in mpmath."""

    def __init__(self, construction: Construction, dps: int = 40) -> None:
        self.construction = construction
        self.dps = dps
        self.derivation: Derivation = derive(construction)
        self._fn = lru_cache(maxsize=4096)(self._build)

    def _build(self, query: str, key: str) -> Callable[[object], object]:
        expr = self.derivation.token_logit(query, key)
        # parameters as exact rationals of their float64 values, so mpmath sees the true binary value
        subs = {s: sp.Rational(float(v)) for s, v in self.construction.parameters.items()}
        return lambdify_expr(expr.subs(subs), "mpmath", [OFFSET])

    def row(self, tokens: Sequence[str]) -> list[mpmath.mpf]:
        """Logits of ``tokens[-1]`` at ``n - 1`` against every position ``j = 0 .. n-1``."""
        n = len(tokens)
        q = tokens[-1]
        with mpmath.workdps(self.dps):
            return [+self._fn(q, k)(mpmath.mpf(j - (n - 1))) for j, k in enumerate(tokens)]

    def gap_and_margin(self, tokens: Sequence[str], target_position: int) -> tuple[mpmath.mpf, mpmath.mpf]:
        """``(top1 - top2, l_target - max_{p != target} l_p)`` of the input, in mpmath."""
        row = self.row(tokens)
        with mpmath.workdps(self.dps):
            ordered = sorted(row, reverse=True)
            gap = ordered[0] - ordered[1]
            others = [v for p, v in enumerate(row) if p != target_position]
            return gap, row[target_position] - max(others)

"""Witnesses that explain: what beats the target in a witness input, and by how much.

An :class:`Explanation` names, for one input of length ``n`` (query at ``n - 1``), the query token,
the target (position, offset ``j - i`` from the query, token, logit) and the *winning competitor*: the
non-target position with the largest logit (ties: the earliest), with its position, offset, token
and logit. ``margin`` is the target's logit minus the competitor's (the input's margin); for a gap
witness the two largest logits are named too (``top_positions``). Every witness the toolkit prints
carries one: the exact sweeps of any head (:class:`~ropeproof.verify.measure.exact._discrepancy.Witness`),
the direct sweeps of [A]'s constructions (their witness dicts' ``"explanation"``), the bound checks
and the claims and corrections that report them.

Logits are float64: from a sweep's own tables, or computed here plane by plane with exactly reduced
angles (:func:`input_logits`). For T_Index every key is the same vector, so only offsets matter
(:func:`index_explanation`, from the stable gap ``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._index_sweep import stable_gaps
from ropeproof.verify.measure.exact._plane_logits import distance_logits_exact


@dataclass(frozen=True)
class Explanation:
    """What beats the target in one input (module docstring). Positions are 0-indexed; an offset is
    ``position - (n - 1)`` (``<= 0``), the ``j - i`` of docs/theory.md section 1."""

    quantity: str
    n: int
    query_token: str
    target_position: int
    target_token: str
    target_logit: float
    competitor_position: int
    competitor_token: str
    competitor_logit: float
    top_positions: tuple[int, int] | None = None
    exact_margin: float | None = None

    @property
    def target_offset(self) -> int:
        return self.target_position - (self.n - 1)

    @property
    def competitor_offset(self) -> int:
        return self.competitor_position - (self.n - 1)

    @property
    def margin(self) -> float:
        """The target's logit minus the winning competitor's (negative: the competitor wins); a
        stable value when one was given (``exact_margin``), else the difference of the two logits."""
        if self.exact_margin is not None:
            return self.exact_margin
        return self.target_logit - self.competitor_logit

    def describe(self) -> str:
        """One line: ``query '7' at 16: target 'A' at 9 (offset -7) scores 1; competitor 'B' at 8
        (offset -8) scores 0.98: margin 0.02``."""
        text = (
            f"query {self.query_token!r} at {self.n - 1}: target {self.target_token!r} at "
            f"{self.target_position} (offset {self.target_offset}) scores {self.target_logit:.10g}; "
            f"winning competitor {self.competitor_token!r} at {self.competitor_position} (offset "
            f"{self.competitor_offset}) scores {self.competitor_logit:.10g}: margin {self.margin:.6g}"
        )
        if self.top_positions is not None:
            first, second = self.top_positions
            text += f"; the two largest logits are at positions {first} and {second}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the offsets, the margin and :meth:`describe`."""
        out: dict[str, Any] = {
            "query_token": self.query_token,
            "target_position": self.target_position,
            "target_offset": self.target_offset,
            "target_token": self.target_token,
            "target_logit": self.target_logit,
            "competitor_position": self.competitor_position,
            "competitor_offset": self.competitor_offset,
            "competitor_token": self.competitor_token,
            "competitor_logit": self.competitor_logit,
            "margin": self.margin,
        }
        if self.top_positions is not None:
            out["top_positions"] = list(self.top_positions)
        out["description"] = self.describe()
        return out


EXCERPT_WHOLE = 12
"""Inputs at most this long are shown whole by :func:`token_excerpt`."""
EXCERPT_CONTEXT = 1
"""Neighbours kept on each side of a named position by :func:`token_excerpt`."""


def token_excerpt(
    tokens: Sequence[str], positions: Sequence[int], context: int = EXCERPT_CONTEXT
) -> dict[str, Any]:
    """A bounded excerpt of an input for summaries: ``{"n", "positions", "tokens"}``, the token at each
    listed position (ascending). An input of at most :data:`EXCERPT_WHOLE` tokens is listed whole;
    a longer one keeps the ``positions`` named (the target, the competitor; the query, position
    ``n - 1``, always) and ``context`` neighbours on each side, so at most
    ``(len(positions) + 1) (2 context + 1)`` entries whatever ``n``."""
    n = len(tokens)
    if n <= EXCERPT_WHOLE:
        keep = list(range(n))
    else:
        named = {int(p) for p in positions if 0 <= int(p) < n} | {n - 1}
        keep = sorted({q for p in named for q in range(p - context, p + context + 1) if 0 <= q < n})
    return {"n": n, "positions": keep, "tokens": [str(tokens[p]) for p in keep]}


def explain_row(
    quantity: str, tokens: Sequence[str], logits: Sequence[float], target_position: int
) -> Explanation:
    """The :class:`Explanation` of an input from its query row's ``logits`` (one per position).

    Shapes: logits [n]
    """
    row = np.asarray(logits, dtype=np.float64)
    n = len(tokens)
    if row.shape != (n,) or n < 2 or not 0 <= target_position < n:
        raise InputError(f"logits must have one entry per token (n = {n} >= 2) and a target in 0..{n - 1}")
    others = row.copy()
    others[target_position] = -np.inf
    competitor = int(np.argmax(others))
    top = None
    if quantity != "margin_inf":
        order = np.argsort(-row, kind="stable")
        top = (int(order[0]), int(order[1]))
    return Explanation(
        quantity,
        n,
        str(tokens[-1]),
        int(target_position),
        str(tokens[target_position]),
        float(row[target_position]),
        competitor,
        str(tokens[competitor]),
        float(row[competitor]),
        top,
    )


def input_logits(head: CompiledHead, tokens: Sequence[str]) -> np.ndarray:
    """The query row of ``head`` on ``tokens`` in float64, plane by plane with exactly reduced angles
    (:func:`~ropeproof.verify.measure.exact._plane_logits.distance_logits_exact`), one call per
    distinct key token.

    Shapes: return [n]
    """
    n = len(tokens)
    q = head.W_E[head.token_index(tokens[-1])] @ head.W_Q
    out = np.empty(n)
    names = np.array(tokens, dtype=object)
    for tok in dict.fromkeys(tokens):
        positions = np.nonzero(names == tok)[0]
        k = head.W_E[head.token_index(tok)] @ head.W_K
        vals, _err = distance_logits_exact(
            q, k[None], head.spec, (n - 1 - positions).astype(np.float64), head.scale
        )
        out[positions] = vals[0]
    return out


def explain_input(
    head: CompiledHead, tokens: Sequence[str], target_position: int, quantity: str = "margin_inf"
) -> Explanation:
    """:func:`explain_row` of ``head``'s float64 logits on ``tokens`` (:func:`input_logits`)."""
    return explain_row(quantity, tokens, input_logits(head, tokens), target_position)


def index_input_tokens(n: int, s: int, competitor_offset: int | None = None) -> list[str]:
    """A concrete T_Index input: the query integer ``s`` last, letter ``A`` at the target ``n - 1 - s``,
    letter ``B`` ``competitor_offset`` positions before it (after it when that falls off the start),
    ``C`` elsewhere (every T_Index key is the same vector, so only positions matter)."""
    tokens = ["C"] * n
    target = n - 1 - s
    tokens[target] = "A"
    if competitor_offset:
        c = target - competitor_offset
        tokens[c if c >= 0 else target + competitor_offset] = "B"
    tokens[-1] = str(s)
    return tokens


def index_explanation(
    quantity: str,
    freqs: Sequence[float],
    amps: Sequence[float],
    tokens: Sequence[str],
    target_position: int,
    competitor_position: int,
) -> Explanation:
    """The :class:`Explanation` of a T_Index input: the target scores ``h(0) = sum_k a_k`` and the
    competitor ``|target - competitor| = m`` positions from it ``h(0) - g(m)`` (the stable gap, so
    the margin keeps its digits). Only the two named positions are evaluated."""
    n = len(tokens)
    m = abs(int(target_position) - int(competitor_position))
    if m == 0:
        raise InputError("the competitor must be another position than the target")
    h0 = float(np.sum(amps))
    g = float(stable_gaps(list(freqs), list(amps), np.array([float(m)]))[0])
    top = None if quantity == "margin_inf" else (int(target_position), int(competitor_position))
    return Explanation(
        quantity,
        n,
        str(tokens[-1]),
        int(target_position),
        str(tokens[target_position]),
        h0,
        int(competitor_position),
        str(tokens[competitor_position]),
        h0 - g,
        top,
        g,
    )


__all__ = [
    "Explanation",
    "explain_input",
    "explain_row",
    "index_explanation",
    "index_input_tokens",
    "input_logits",
    "token_excerpt",
]

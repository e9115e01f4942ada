"""What a positional head can do for Retrieval's readout: the statement that replaces Remark 3.1's
output reading (docs/theory.md section 9).

A one-layer head's readout at the query is ``out = sum_j p_j s(c_j)`` (``s(c) = W_E[c] W_V W_O W_U``, one
row per token; ``p`` the query row's attention). In a *positional* head every key is the same vector, so
``p`` depends on the query token and the positions only, never on the key contents. For Retrieval
(docs/theory.md section 3) the query ``(X, Y)`` asks for the one earlier pair whose left letter is ``Y``;
the other positions hold pairs with other left letters.

**Theorem (positional readout bound).** For a positional head, a query ``Q`` asking for ``Y``, any two
distinct pairs ``tau, o`` with left letter ``Y`` and any length ``n >= 2``,

    margin_inf(n) <= C(tau, o) * min_{0 <= j <= n - 2} p_j(Q)  <=  C(tau, o) (1 - p_Q) / (n - 1),
    C(tau, o) = (A(tau, o) + A(o, tau)) / 2,      A(x, y) = s(x)[x] - s(x)[y].

*Proof.* Let ``t`` be a key position of least weight; ``p_t <= (1 - p_Q) / (n - 1)`` since the ``n - 1``
key weights sum to ``1 - p_Q``. Fill every position but ``t`` and the query with the same pairs
(left letters other than ``Y``) and put ``tau`` at ``t`` (input 1) or ``o`` (input 2); both are Retrieval
inputs, and since the head is positional both have the same weights ``p``. With ``R = sum_{j != t} p_j
(s(c_j)[tau] - s(c_j)[o])`` (the same in both), input 1's margin is at most ``out_1[tau] - out_1[o] =
p_t A(tau, o) + R`` and input 2's at most ``out_2[o] - out_2[tau] = p_t A(o, tau) - R``; their sum is
``2 C(tau, o) p_t``, so one of the two margins is at most ``C(tau, o) p_t``.

So a positional head answers Retrieval at length ``n`` only with a readout margin below
``C / (n - 1)`` (``C`` set by its value and unembedding weights, whatever the logit scale), and with hard
attention (one weight 1, the rest 0) it fails at every ``n >= 3``, where some key weight is 0. A symbolic
head is not limited this way (T_Retrieval at ``theta = 0`` puts all the attention on the target as the scale
grows). The bound is tight: a head whose query attends to itself with one logit and to every other
position with another attains it at every length up to its period (docs/theory.md section 9).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import sympy as sp

from ropeproof.theory.dirichlet import ProofStep
from ropeproof.theory.errors import InputError
from ropeproof.theory.proof_checks import DEFINITION
from ropeproof.theory.trig_identity import vanishes_identically


def pair_constant(readout: np.ndarray, targets: Sequence[int]) -> tuple[float, tuple[int, int]]:
    """``(C, (tau, o))``: the least ``C(tau, o) = (A(tau, o) + A(o, tau)) / 2`` over distinct ``tau, o`` in
    ``targets`` (token indices of one left letter), from the readout matrix ``s`` (float64).

    Shapes: readout [V, V] (row c is s(c)); targets [T]"""
    s = np.asarray(readout, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise InputError(f"readout must be a square [V, V] matrix, got shape {s.shape}")
    idx = np.asarray(list(targets), dtype=np.int64)
    if idx.size < 2 or idx.min() < 0 or idx.max() >= s.shape[0]:
        raise InputError(f"targets must hold at least two token indices in 0 .. {s.shape[0] - 1}")
    sub = s[np.ix_(idx, idx)]
    a = np.diag(sub)[:, None] - sub  # A(x, y) = s(x)[x] - s(x)[y]
    c = (a + a.T) / 2
    np.fill_diagonal(c, np.inf)
    i, j = np.unravel_index(int(np.argmin(c)), c.shape)
    return float(c[i, j]), (int(idx[i]), int(idx[j]))


@cache
def _two_inputs_identity() -> bool:
    p_t, r_tau, r_o = sp.symbols("p_t R_tau R_o", real=True)
    s_tt, s_to, s_ot, s_oo = sp.symbols("s_tautau s_tauo s_otau s_oo", real=True)
    first = (p_t * s_tt + r_tau) - (p_t * s_to + r_o)  # out_1[tau] - out_1[o]
    second = (p_t * s_oo + r_o) - (p_t * s_ot + r_tau)  # out_2[o] - out_2[tau]
    c = ((s_tt - s_to) + (s_oo - s_ot)) / 2
    return vanishes_identically(first + second - 2 * c * p_t)


@cache
def _averaging() -> bool:
    keys = sp.Symbol("k", integer=True, positive=True)  # k = n - 1 >= 1 key positions
    p_q, eps = sp.Symbol("p_Q", nonnegative=True), sp.Symbol("epsilon", positive=True)
    # k key weights each above (1 - p_Q)/k by epsilon would sum to 1 - p_Q + k epsilon > 1 - p_Q
    excess = sp.cancel(keys * ((1 - p_q) / keys + eps) - (1 - p_q))
    return bool(excess.is_positive)


def readout_proof() -> list[ProofStep]:
    """The theorem's steps (module docstring)."""
    return [
        ProofStep(
            "positional-weights",
            "every key is the same vector, so the attention weights depend on the query token and the "
            "positions only",
            DEFINITION,
        ),
        ProofStep("readout-linear", "out = sum_j p_j s(c_j)", DEFINITION),
        ProofStep(
            "margin-below-difference",
            "a margin (target minus the best other readout) is at most target minus any one other",
            DEFINITION,
        ),
        ProofStep(
            "two-inputs",
            "(out_1[tau] - out_1[o]) + (out_2[o] - out_2[tau]) = 2 C(tau, o) p_t (the rest of the row "
            "cancels)",
            "sympy",
            _two_inputs_identity,
        ),
        ProofStep(
            "least-weight",
            "n - 1 key weights sum to 1 - p_Q, so the least is at most (1 - p_Q)/(n - 1)",
            "sympy",
            _averaging,
        ),
    ]

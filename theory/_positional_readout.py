"""What a positional head can do for Retrieval's readout: the statement that replaces Remark 3.1's
output reading (docs/theory.md section 9).

A one-layer head's readout at the query is ``out = sum_j p_j s(c_j)`` (``s(c) = W_E[c] W_V W_O W_U``, one
row per token; ``p`` the query row's attention). In a *positional* head every key is the same vector, so
``p`` depends on the query token and the positions only, never on the key contents. For Retrieval
(docs/theory.md section 3) the query ``(X, Y)`` asks for the one earlier pair whose left letter is ``Y``;
the other positions hold pairs with other left letters.

**Theorem (positional readout bound).** For a positional head, a query token ``Q`` asking for ``Y``, any
two distinct pairs ``tau, o`` with left letter ``Y`` and any length ``n >= 2``,

    margin_inf(n) <= min_{0 <= j <= n - 2} C(tau, o) p_j(Q)  <=  C(tau, o) (1 - p_Q(Q)) / (n - 1),
    C(tau, o) = (A(tau, o) + A(o, tau)) / 2,      A(x, y) = s(x)[x] - s(x)[y].

The least over ``j`` is ``C min_j p_j`` when ``C >= 0`` and ``C max_j p_j`` when ``C < 0`` (``C`` has
either sign: a readout can favour the other pair of a letter). So the bound is the least over every query
token ``Q``, every letter ``Y`` it asks for and every pair ``tau != o`` of left letter ``Y`` -- the query's
own weights with its own letter's pairs. A sentence that takes the least ``C`` over pairs of every letter
and the least key weight over every query is false: :mod:`ropeproof.verify.studies.errata._readout_sentence`
builds a head with ``margin_inf = 1/100`` against that product ``1/1000``.

*Proof.* Let ``t`` be any key position. Fill every position but ``t`` and the query with the same pairs
(left letters other than ``Y``) and put ``tau`` at ``t`` (input 1) or ``o`` (input 2); both are Retrieval
inputs, and since the head is positional both have the same weights ``p``. With ``R = sum_{j != t} p_j
(s(c_j)[tau] - s(c_j)[o])`` (the same in both), input 1's margin is at most ``out_1[tau] - out_1[o] =
p_t A(tau, o) + R`` and input 2's at most ``out_2[o] - out_2[tau] = p_t A(o, tau) - R``; their sum is
``2 C(tau, o) p_t``, so one of the two margins is at most ``C(tau, o) p_t``, for every ``t``. The ``n - 1``
key weights sum to ``1 - p_Q``, so the least is at most their mean ``(1 - p_Q)/(n - 1)`` and the largest at
least it: for ``C >= 0`` the key of least weight, for ``C < 0`` the key of largest weight gives
``C p_t <= C (1 - p_Q)/(n - 1)``.

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

from ropeproof.machinery._errors import InputError
from ropeproof.theory._counting_induction import linear_map_of_sum, sum_beyond_count_times_bound
from ropeproof.theory._order_facts import implies, nonnegative
from ropeproof.theory._proof_chain import Chain, Link, composition_step
from ropeproof.theory._proof_checks import ProofStep, definition_step
from ropeproof.theory._trig_identity import vanishes_identically


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


def least_key_term(c: float, key_weights: np.ndarray) -> tuple[float, int]:
    """``(min_j c p_j, j)``: the theorem's bound for one query and one pair constant ``c`` over the key
    weights ``p_j`` (the key of least weight when ``c >= 0``, of largest weight when ``c < 0``).

    Shapes: key_weights [n - 1]"""
    p = np.asarray(key_weights, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise InputError(f"key_weights must be a non-empty vector, got shape {p.shape}")
    j = int(np.argmin(p)) if c >= 0 else int(np.argmax(p))
    return float(c * p[j]), j


@cache
def _positional_weights() -> bool:
    # the RoPE logit q^T R_u k_c of a query q and the key k_c of content c at offset u, with R_u the
    # rotation by u of any number of planes (a symbolic d x d matrix): with every key the same vector
    # (k_c = k for every content c) two contents at the same offset score the same, so the softmax
    # weights depend on the query token and the positions only
    d = sp.Symbol("d", positive=True, integer=True)
    q, k = sp.MatrixSymbol("q", d, 1), sp.MatrixSymbol("k", d, 1)
    rotation = sp.MatrixSymbol("R_u", d, d)
    keys = {"c1": k, "c2": k}  # the positional definition: k_c = k

    def logit(key: sp.MatrixSymbol) -> sp.Expr:
        return q.T * rotation * key

    return sp.expand(logit(keys["c1"]) - logit(keys["c2"])) == sp.ZeroMatrix(1, 1)


@cache
def _readout_linear() -> bool:
    # the head's output at the query, (sum_j p_j W_E[c_j] W_V) W_O W_U, is sum_j p_j s(c_j) for any number
    # of terms (linear_map_of_sum: by induction) with W = W_V W_O W_U (matrix products associate)
    d, k, v = sp.symbols("d k v", positive=True, integer=True)
    row = sp.MatrixSymbol("S", 1, d)
    w_v, w_o, w_u = sp.MatrixSymbol("W_V", d, k), sp.MatrixSymbol("W_O", k, d), sp.MatrixSymbol("W_U", d, v)
    associates = sp.expand((row * w_v) * w_o * w_u - row * (w_v * w_o * w_u)) == sp.ZeroMatrix(1, v)
    return associates and linear_map_of_sum()


@cache
def _two_inputs_identity() -> bool:
    p_t, r_tau, r_o = sp.symbols("p_t R_tau R_o", real=True)
    s_tt, s_to, s_ot, s_oo = sp.symbols("s_tautau s_tauo s_otau s_oo", real=True)
    first = (p_t * s_tt + r_tau) - (p_t * s_to + r_o)  # out_1[tau] - out_1[o]
    second = (p_t * s_oo + r_o) - (p_t * s_ot + r_tau)  # out_2[o] - out_2[tau]
    c = ((s_tt - s_to) + (s_oo - s_ot)) / 2
    return vanishes_identically(first + second - 2 * c * p_t)


@cache
def _smaller_of_two() -> bool:
    m, u, w = sp.symbols("m u w", real=True)
    return implies([sp.Le(m, u), sp.Le(m, w)], sp.Le(m, (u + w) / 2))


@cache
def _averaging() -> bool:
    # k = n - 1 >= 1 key weights summing to 1 - p_Q: were every one above the mean (1 - p_Q)/k, by any
    # excesses, they would sum to more than k (1 - p_Q)/k = 1 - p_Q (sum_beyond_count_times_bound: by
    # induction on k); were every one below it, to less
    keys = sp.Symbol("k", integer=True, positive=True)
    p_q, total = sp.Symbol("p_Q", nonnegative=True), sp.Symbol("S", real=True)
    whole = sp.cancel(keys * ((1 - p_q) / keys) - (1 - p_q)) == 0
    exact = implies([sp.Eq(total, 1 - p_q)], [sp.Le(total, 1 - p_q), sp.Ge(total, 1 - p_q)])
    return whole and exact and sum_beyond_count_times_bound()


@cache
def _sign_picks_the_key() -> bool:
    # C p_t <= C (1 - p_Q)/(n - 1) = C m (m the mean key weight): C >= 0 with p_t = m - a (least weight,
    # a >= 0), or C = -g <= 0 with p_t = m + a (largest weight)
    c, g, a, mean = sp.symbols("C g a m", nonnegative=True)
    return nonnegative(c * mean - c * (mean - a)) and nonnegative(-g * mean - (-g) * (mean + a))


def _readout_steps() -> list[ProofStep]:
    """The theorem's steps (module docstring) but their composition."""
    return [
        ProofStep(
            "positional-weights",
            "every key is the same vector, so two contents at one position get the same RoPE logit, for a "
            "rotation of any number of planes: the attention weights depend on the query token and the "
            "positions only",
            "sympy",
            _positional_weights,
        ),
        ProofStep(
            "readout-linear",
            "the head's readout at the query, (sum_j p_j W_E[c_j] W_V) W_O W_U, is sum_j p_j s(c_j) for any "
            "number of terms (by induction on the number of terms, base and step in sympy)",
            "sympy",
            _readout_linear,
        ),
        definition_step(
            "margin-below-difference",
            "a readout margin (the target's readout minus the best other's) is at most the target's minus "
            "any one other's",
            "margin-at-most-one-competitor",
        ),
        ProofStep(
            "two-inputs",
            "(out_1[tau] - out_1[o]) + (out_2[o] - out_2[tau]) = 2 C(tau, o) p_t (the rest of the row "
            "cancels)",
            "sympy",
            _two_inputs_identity,
        ),
        ProofStep(
            "smaller-of-two",
            "the smaller of the two margins is at most half their sum, C(tau, o) p_t",
            "sympy",
            _smaller_of_two,
        ),
        definition_step(
            "least-over-inputs",
            "margin_inf, the least margin over inputs, is at most the smaller of the two: margin_inf <= "
            "C(tau, o) p_t for every key position t",
            "worst-at-most-one-input",
        ),
        ProofStep(
            "mean-weight",
            "n - 1 key weights sum to 1 - p_Q, so the least is at most (1 - p_Q)/(n - 1) and the largest at "
            "least that (were all above, or all below, the sum would differ: k terms each above c sum to "
            "more than k c, by induction on k)",
            "sympy",
            _averaging,
        ),
        ProofStep(
            "sign-picks-the-key",
            "C p_t <= C (1 - p_Q)/(n - 1) with t the key of least weight when C >= 0 and of largest weight "
            "when C < 0",
            "sympy",
            _sign_picks_the_key,
        ),
        definition_step(
            "below-every-key",
            "a bound below C(tau, o) p_t at every key position t is below their least, min_j C(tau, o) p_j: "
            "margin_inf <= min_j C(tau, o) p_j",
            "worst-above-a-common-bound",
        ),
        definition_step(
            "least-key-term",
            "min_j C(tau, o) p_j, a least value over keys, is at most C(tau, o) p_t at any one key t",
            "worst-at-most-one-input",
        ),
    ]


_MI, _M1, _M2, _D1, _D2, _X, _Z, _XS, _Y, _C, _PS, _LEAST, _LARGEST, _MEAN = sp.symbols(
    "margin_inf m_1 m_2 d_1 d_2 X Z X_s Y C p_s p_least p_largest mean", real=True
)
"""The chain's quantities: ``margin_inf``; the two inputs' margins and readout differences; ``X = C p_t``
at an arbitrary key ``t``; ``Z = min_j C p_j``; ``X_s = C p_s`` at the key ``s`` the sign of ``C`` picks;
``Y = C (1 - p_Q)/(n - 1)``; ``C``; the weights ``p_s``, the least and the largest key weight and their
mean ``(1 - p_Q)/(n - 1)``."""

_POSITIONAL, _WEIGHTS, _LINEAR = (
    "the head is positional (every key the same vector)",
    "the attention weights depend on the query token and the positions only",
    "the readout is sum_j p_j s(c_j)",
)


def readout_chains() -> list[Chain]:
    """The theorem's composition (module docstring) as two chains, ``C >= 0`` (``s`` the key of least
    weight) and ``C <= 0`` (of largest weight), each from the statement's hypotheses to
    ``margin_inf <= min_j C p_j <= C (1 - p_Q)/(n - 1)``. The first links hold at an arbitrary key ``t``
    (``margin_inf <= C p_t``), so ``below-every-key`` takes the least over ``t``."""
    common = (
        Link("positional-weights", needs_facts=(_POSITIONAL,), gives_facts=(_WEIGHTS,)),
        Link("readout-linear", gives_facts=(_LINEAR,)),
        Link("margin-below-difference", gives=(sp.Le(_M1, _D1), sp.Le(_M2, _D2))),
        Link("two-inputs", needs_facts=(_WEIGHTS, _LINEAR), gives=(sp.Eq(_D1 + _D2, 2 * _X),)),
        Link("least-over-inputs", gives=(sp.Le(_MI, _M1), sp.Le(_MI, _M2))),
        Link(
            "smaller-of-two", needs=(sp.Le(_MI, _M1), sp.Le(_MI, _M2)), gives=(sp.Le(_MI, (_M1 + _M2) / 2),)
        ),
        Link("below-every-key", needs=(sp.Le(_MI, _X),), gives=(sp.Le(_MI, _Z),)),
        Link("least-key-term", gives=(sp.Le(_Z, _XS),)),
        Link("mean-weight", gives=(sp.Le(_LEAST, _MEAN), sp.Ge(_LARGEST, _MEAN))),
    )
    conclusion = (sp.Le(_MI, _Z), sp.Le(_Z, _Y))
    chains = []
    for name, sign, key, where in (
        ("C >= 0", sp.Ge(_C, 0), sp.Eq(_PS, _LEAST), sp.Le(_PS, _MEAN)),
        ("C <= 0", sp.Le(_C, 0), sp.Eq(_PS, _LARGEST), sp.Ge(_PS, _MEAN)),
    ):
        picks = Link("sign-picks-the-key", needs=(sign, where), gives=(sp.Le(_XS, _Y),))
        chains.append(Chain(name, (sign, key), conclusion, (*common, picks), (_POSITIONAL,)))
    return chains


def readout_proof() -> list[ProofStep]:
    """The theorem's steps (module docstring) and their composition, checked
    (:func:`~ropeproof.theory._proof_chain.composition_step` over :func:`readout_chains`)."""
    steps = _readout_steps()
    return [*steps, composition_step("9.4", readout_chains(), steps)]

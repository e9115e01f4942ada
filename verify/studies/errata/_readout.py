"""The correction of [A]'s Remark 3.1 read at the output, computed and checked (docs/theory.md section 9).

:func:`readout_correction` takes the positional Retrieval head of
:func:`ropeproof.constructions._counterexamples.positional_retrieval_construction` (period ``N``: the query
attends to itself with one logit and to every other position with another) and compares, at each length,
its exact worst readout margin
(:func:`ropeproof.verify.measure.exact._readout_margin.content_independent_readout_margin`) with the
bound that
every positional head obeys (:mod:`ropeproof.theory._positional_readout`): per query token ``Q`` asking for
a letter ``Y`` and pairs ``tau != o`` of left letter ``Y``, ``min_j C(tau, o) p_j(Q)`` over ``Q``'s key
weights ``p_j(Q)``, which is ``C min_j p_j(Q)`` when ``C >= 0`` (the key of largest weight when ``C < 0``),
least over the queries and pairs.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._counterexamples import positional_retrieval_construction
from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore, object_product
from ropeproof.theory._positional_readout import least_key_term, pair_constant, readout_proof
from ropeproof.verify.kernel._rope import rope_logits
from ropeproof.verify.measure.exact._families import Family, family_for
from ropeproof.verify.measure.exact._readout_margin import content_independent_readout_margin
from ropeproof.verify.studies.errata._correction_data import CorrectionData, Series, tolerance, with_steps_run
from ropeproof.verify.studies.errata._readout_sentence import (
    condensed_sentence_bound,
    corrected_bound,
    counterexample_head,
    worst_readout_margin,
)

ALPHABET, PERIOD, BONUS = 4, 65, 10.0
"""The head that the claim ``remark3.1.positional-cannot-retrieve.output`` exhibits."""


def positional_head(
    alphabet: int = ALPHABET, period: int = PERIOD, bonus: float = BONUS
) -> tuple[CompiledHead, Family]:
    """The compiled positional Retrieval head and its input family (compiling takes a second: ask the run's
    store for :data:`POSITIONAL_HEAD` to compile it once per run)."""
    c = positional_retrieval_construction(alphabet, period, bonus)
    return compile_construction(c), family_for(c)


@object_product("errata.positional-head")
def POSITIONAL_HEAD(
    store: ResultStore, alphabet: int = ALPHABET, period: int = PERIOD, bonus: float = BONUS
) -> tuple[CompiledHead, Family]:
    """:func:`positional_head` as a product of the run's store (read-only)."""
    return positional_head(alphabet, period, bonus)


def working_scale(period: int = PERIOD) -> float:
    """The logit scale that gives the query weight ``2 (N - 1) / (2 (N - 1) + n - 1)``: logit
    ``K = (N - 1) / 2`` at the query and ``-1/2`` elsewhere, so ``ln(2 (N - 1)) / (K + 1/2)``."""
    return math.log(2 * (period - 1)) / ((period - 1) // 2 + 0.5)


def key_weights(head: CompiledHead, query: str, n: int, scale: float) -> np.ndarray:
    """The attention weights of the query token ``query`` at position ``n - 1`` on the key positions
    ``0 .. n - 2`` of a positional head (every key the same vector), float64.

    Shapes: return [n - 1]"""
    if not np.array_equal(head.W_K, np.broadcast_to(head.W_K[:1], head.W_K.shape)):
        raise InputError("key_weights needs a positional head (identical W_K rows)")
    k = torch.as_tensor(np.tile(head.W_K[:1], (n, 1)))
    q = torch.as_tensor(head.W_E[head.token_index(query)] @ head.W_Q)[None]
    row = rope_logits(q, k, head.spec, head.scale * scale, q_positions=[n - 1])[0]
    return torch.softmax(row, -1).numpy()[:-1]


def readout_bound(
    head: CompiledHead, family: Family, n: int, scale: float
) -> tuple[float, dict[str, object]]:
    """The corrected bound at length ``n``: the least, over the family's cases (a letter ``Y`` and its pairs)
    and the queries asking for ``Y``, of ``min_j C_Y p_j(Q)`` (the theorem of
    :mod:`ropeproof.theory._positional_readout`: the key of least weight when ``C_Y >= 0``, of largest
    weight when ``C_Y < 0``), and where it is attained: the query, the pair ``tau, o`` and the key
    position ``t``."""
    readout = head.W_E @ head.W_V @ head.W_O @ head.W_U
    best: tuple[float, dict[str, object]] = (math.inf, {})
    for case in family.cases:
        c, (tau, o) = pair_constant(readout, [head.token_index(t) for t in case.target_tokens])
        for query in case.query_tokens:
            p = key_weights(head, query, n, scale)
            value, t = least_key_term(c, p)
            if value < best[0]:
                best = (
                    value,
                    {
                        "query": query,
                        "tau": head.tokens[tau],
                        "o": head.tokens[o],
                        "pair_constant": c,
                        "key_position": t,
                        "key_weight": float(p[t]),
                        "query_weight": float(1 - p.sum()),
                    },
                )
    return best


def readout_correction(
    lengths: list[int] | range = range(3, PERIOD + 1),
    alphabet: int = ALPHABET,
    period: int = PERIOD,
    bonus: float = BONUS,
    store: ResultStore | None = None,
) -> CorrectionData:
    """The positional head's exact worst readout margin at each length against the per-query bound
    ``min_j C(tau, o) p_j(Q)`` (``C min_j p_j(Q)`` when ``C >= 0``) that every positional head obeys,
    and against the remark's "cannot" (a margin ``<= 0``); the head comes from ``store`` (default a fresh
    one)."""
    n = np.array(sorted({int(x) for x in lengths}))
    if n.size == 0 or n[0] < 2:
        raise InputError(f"lengths={list(lengths)!r} must be a non-empty list of integers >= 2")
    store = ResultStore() if store is None else store
    head, family = store.get(POSITIONAL_HEAD, alphabet=alphabet, period=period, bonus=bonus)
    scale = working_scale(period)
    exact, bound, where = [], [], {}
    for k in n:
        exact.append(content_independent_readout_margin(head, family, int(k), scale).margin)
        b, at = readout_bound(head, family, int(k), scale)
        bound.append(b)
        where[int(k)] = at
    exact_a, bound_a = np.array(exact), np.array(bound)
    zeros = np.zeros(n.size)
    s = Series(f"period N = {period}, bonus {bonus:g}", n, exact_a, zeros, zeros, bound_a)
    last = int(n[-1])
    worst = content_independent_readout_margin(head, family, last, scale)
    pair = where[last]
    witness = {
        "head": f"positional Retrieval head, |ALPH| = {alphabet}, period {period}, bonus {bonus:g}, "
        f"softmax scale {scale:.6g}",
        "n": last,
        "margin": worst.margin,
        "bound": float(bound_a[-1]),
        "worst_case": worst.witness,
        "proof_inputs": pair,
    }
    closed = 1 / (2 * (period - 1) + n - 1)
    first = int(n[0])
    failure = {
        "n": first,
        "exact": float(exact_a[0]),
        "reported": 0.0,
        "worst_case": content_independent_readout_margin(head, family, first, scale).witness,
    }
    sentence = counterexample_head()
    sentence_margin = worst_readout_margin(sentence)
    sentence_bound, sentence_mean = corrected_bound(sentence)
    sentence_old = condensed_sentence_bound(sentence)
    mean_form = (1 - pair["query_weight"]) / (last - 1) * pair["pair_constant"]
    return CorrectionData(
        quantity="worst readout margin of a positional Retrieval head",
        reported_label="[A] Remark 3.1: no positional head implements Retrieval (margin <= 0)",
        corrected_label="min_j C p_j(Q) <= C (1 - p_Q(Q))/(n - 1), least over queries Q and the pairs of the "
        "letter Q asks for, for every positional head",
        kind="bound",
        series=[s],
        witness=witness,
        proof=readout_proof(),
        checks={
            "the head attains the bound at every length (tight)": bool(
                np.all(np.abs(exact_a - bound_a) <= tolerance(bound_a))
            ),
            "the margin is 1/(2(N - 1) + n - 1) at every length": bool(
                np.all(np.abs(exact_a - closed) <= 1e-12 * closed)
            ),
            "the bound is at most C (1 - p_Q)/(n - 1) at the last length": bool(
                bound_a[-1] <= mean_form + tolerance(np.array(mean_form))
            ),
            "on the counterexample head (exact rationals) the corrected statement holds, tightly": bool(
                sentence_margin == sentence_bound <= sentence_mean
            ),
            "the sentence as first written (least C over every letter's pairs times the least key weight "
            "over "
            "every query) fails on the counterexample head": bool(sentence_margin > sentence_old),
        },
        figures={
            "period": period,
            "min_margin": float(exact_a.min()),
            "pair_constant": pair["pair_constant"],
            "counterexample_margin": str(sentence_margin),
            "counterexample_first_sentence_bound": str(sentence_old),
        },
        failure=failure,
    )


@object_product("errata.remark31-readout")
def READOUT(
    store: ResultStore,
    lengths: list[int] | None = None,
    alphabet: int = ALPHABET,
    period: int = PERIOD,
    bonus: float = BONUS,
) -> CorrectionData:
    """:func:`readout_correction` as a product of the run's store (``lengths`` default ``3 .. period``)."""
    chosen = list(range(3, period + 1)) if lengths is None else lengths
    return with_steps_run(readout_correction(chosen, alphabet, period, bonus, store))

"""Judging [A] Remark 3.1 on whole classes of heads: a symbolic head cannot implement Index, a positional
head cannot implement Retrieval read as attention, and (a reading the remark's argument does not cover)
a positional head's readout can still answer Retrieval at every length up to its period.

Each function combines a sympy identity for generic weights (:mod:`ropeproof.theory._impossibility`), an
exhibited pair of task inputs, and a float64 search over random heads of random sizes
(:func:`~ropeproof.verify.studies.beyond._impossibility.class_search`), or an exact worst-case readout
margin (:func:`~ropeproof.verify.measure.exact._readout_margin.content_independent_readout_margin`). The
claims in :mod:`ropeproof.claims._remark31` state what is judged and call these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._counterexamples import positional_retrieval_construction
from ropeproof.constructions._paper import INDEX_THETA, index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.theory._impossibility import (
    positional_logits_ignore_key_content,
    symbolic_output_is_permutation_invariant,
)
from ropeproof.verify.kernel._compiled import answer
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.measure._tasks import follow_letter_chain, follow_number_chain
from ropeproof.verify.measure.exact._families import sample_family_inputs
from ropeproof.verify.measure.exact._readout_margin import content_independent_readout_margin
from ropeproof.verify.studies.beyond._impossibility import class_search
from ropeproof.verify.studies.errata._readout import POSITIONAL_HEAD, working_scale

Pair = tuple[Sequence[str], Sequence[str]]
"""Two task inputs (token sequences, the query last)."""

CLOSED_FORM_REL_TOLERANCE = 1e-12
"""The relative tolerance of the positional head's readout margin against ``1/(2(N - 1) + n - 1)``. The
margin is float64 softmax weights (an exponential per position and a sum of ``n <= N`` terms, each
rounded once) times readout differences of the compiled weights, so its relative error is a few times
``N`` ulps; ``1e-12`` (some 4500 ulps of 1) covers that for periods in the hundreds."""


def symbolic_cannot_index_outcome(pair: Pair, heads: int, dtype: torch.dtype) -> Outcome:
    """No symbolic head (every plane at ``theta = 0``) implements Index, under any readout.

    ``holds`` when: sympy proves a symbolic head's output invariant under permuting key contents for
    generic weights; the two Index inputs of ``pair`` hold the same tokens and need different answers;
    ``heads`` random symbolic heads of random sizes (seed 31) give the same output on both orders within
    the search's float64 allowance; T_Index at ``theta = 0`` answers both alike (softmax readout, in
    ``dtype``) and T_Index at its angle answers both correctly. Figures: each of those; the counterexample
    is the worst random head."""
    identity = symbolic_output_is_permutation_invariant()
    answers = [follow_number_chain(x) for x in pair]
    same_multiset = sorted(pair[0]) == sorted(pair[1])
    search = class_search("symbolic", heads, seed=31)
    # a concrete symbolic head (T_Index at theta = 0) answers both alike; T_Index itself answers both
    nope = compile_construction(index_construction(theta=0.0, letters=2, max_int=2))
    working = compile_construction(index_construction(theta=INDEX_THETA, letters=2, max_int=2))
    nope_answers = answer(nope, [list(x) for x in pair], mode="softmax", dtype=dtype)
    control = answer(working, [list(x) for x in pair], dtype=dtype)
    figures = {
        "sympy_identity": identity,
        "pair_answers": answers,
        "same_multiset": same_multiset,
        "random_heads": search.heads,
        "max_relative_change": search.max_change,
        "tolerance": search.tolerance,
        "theta0_T_Index_answers": nope_answers,
        "T_Index_answers": control,
    }
    ok = (
        identity
        and same_multiset
        and answers[0] != answers[1]
        and search.invariant
        and nope_answers[0] == nope_answers[1]
        and control == answers
    )
    return Outcome.judge(ok, figures, "max_relative_change", counterexample=search.worst)


def positional_cannot_attend_outcome(pair: Pair, heads: int) -> Outcome:
    """No positional head (every key the same vector) implements Retrieval, read as "attends most to the
    target".

    ``holds`` when: sympy proves a positional head's logit row independent of key contents for generic
    weights; the two Retrieval inputs of ``pair`` share their query and have their targets at different
    positions; ``heads`` random positional heads of random sizes (seed 32) give the same logit row on both
    within the search's float64 allowance. Figures: each of those; the counterexample is the worst random
    head."""
    identity = positional_logits_ignore_key_content()
    answers = [follow_letter_chain(x) for x in pair]
    targets = [list(x).index(a) for x, a in zip(pair, answers, strict=True)]
    search = class_search("positional", heads, seed=32)
    figures = {
        "sympy_identity": identity,
        "pair_answers": answers,
        "target_positions": targets,
        "random_heads": search.heads,
        "max_relative_change": search.max_change,
        "tolerance": search.tolerance,
    }
    ok = identity and targets[0] != targets[1] and pair[0][-1] == pair[1][-1]
    ok = ok and search.invariant
    return Outcome.judge(ok, figures, "max_relative_change", counterexample=search.worst)


def _lengths(lengths: str | Sequence[int]) -> list[int]:
    """A list of lengths, or the text ``"a..b"``: every length from ``a`` to ``b``."""
    if isinstance(lengths, str):
        lo, hi = (int(x) for x in lengths.split(".."))
        return list(range(lo, hi + 1))
    return [int(x) for x in lengths]


def positional_readout_outcome(
    alphabet: int,
    period: int,
    bonus: float,
    lengths: str | Sequence[int],
    samples_per_length: int,
    dtype: torch.dtype,
    store: ResultStore,
) -> Outcome:
    """The statement "no positional head implements Retrieval", read at the readout, against the period-N
    positional head (:func:`~ropeproof.constructions._counterexamples.positional_retrieval_construction`,
    ``alphabet`` letters, ``period`` N, ``bonus``; compiled once per run through ``store``) at its working
    scale (:func:`~ropeproof.verify.studies.errata._readout.working_scale`: the query keeps weight
    ``2(N - 1)/(2(N - 1) + n - 1)``).

    At every length of ``lengths`` (a list, or ``"a..b"`` for every length between): the exact worst
    readout margin over every Retrieval input, which must equal ``1/(2(N - 1) + n - 1)`` within
    :data:`CLOSED_FORM_REL_TOLERANCE`; at about five of those lengths (and the last),
    ``samples_per_length`` sampled inputs (seed ``n``) answered in ``dtype`` on the CPU. The statement
    judged is that no such head works, so a positive least margin that matches the closed form makes the
    verdict ``violated`` (the head is the counterexample). Figures: whether it was found, the least margin,
    whether every margin matched, the scale, the sampled accuracy and the margin per length."""
    c = positional_retrieval_construction(alphabet, period, bonus)
    head, fam = store.get(POSITIONAL_HEAD, alphabet=alphabet, period=period, bonus=bonus)
    scale = working_scale(period)
    ns = _lengths(lengths)
    if not ns or min(ns) < 2:
        raise InputError(f"lengths={lengths!r}: accepted, a non-empty list of lengths >= 2, or 'a..b'")
    rows, worst = [], None
    closed_ok = True
    for n in ns:
        r = content_independent_readout_margin(head, fam, n, scale)
        want = 1 / (2 * (period - 1) + n - 1)
        closed_ok &= math.isclose(r.margin, want, rel_tol=CLOSED_FORM_REL_TOLERANCE)
        rows.append({"n": n, "margin": r.margin, "closed_form": want})
        if worst is None or r.margin < worst.margin:
            worst = r
    correct = total = 0
    for n in sorted({*ns[:: max(1, len(ns) // 5)], ns[-1]}):
        samples = sample_family_inputs(fam, n, samples_per_length, seed=n)
        got = answer(head, [list(x) for x, _ in samples], "softmax", scale, "cpu", dtype)
        correct += sum(g == x[t] for g, (x, t) in zip(got, samples, strict=True))
        total += len(samples)
    assert worst is not None
    found = worst.margin > 0 and closed_ok
    figures = {
        "counterexample_found": found,
        "min_margin": worst.margin,
        "margin_is_closed_form": closed_ok,
        "softmax_scale": scale,
        "sampled_accuracy": correct / total,
        "margins": rows,
    }
    cex = {"head": c.description, "softmax_scale": scale, "lengths": lengths, "worst_case": worst.witness}
    return Outcome.judge(not found, figures, "min_margin", counterexample=cex)

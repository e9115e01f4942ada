"""[A] Remark 3.1: a symbolic head cannot implement Index; a positional head cannot implement
Retrieval. Each impossibility is checked as stated, on the whole class: a sympy identity for generic
weights, an exhibited pair of task inputs, and a search over random heads of random sizes; the
positional one under two readings of "implement" (attention on the target, or the readout's answer).
"""

from __future__ import annotations

import math

from ropeproof.claims.corrections import Correction
from ropeproof.claims.registry import Approx, CheckContext, ClaimSet, Outcome, Quick
from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.counterexamples import positional_retrieval_construction
from ropeproof.constructions.paper import INDEX_THETA, index_construction
from ropeproof.theory.impossibility import (
    positional_logits_ignore_key_content,
    symbolic_output_is_permutation_invariant,
)
from ropeproof.verify.kernel.compiled import answer
from ropeproof.verify.measure.exact.families import sample_family_inputs
from ropeproof.verify.measure.tasks import follow_letter_chain, follow_number_chain
from ropeproof.verify.studies.beyond.impossibility import class_search, content_independent_readout_margin
from ropeproof.verify.studies.errata.readout import POSITIONAL_HEAD, READOUT

CLAIMS = ClaimSet(
    "remark3.1",
    section="Remark 3.1 ([A]): what symbolic and positional heads cannot do",
    report_figures=("errata_remark31_readout",),
)
"""The remark3.1 claims, in report order."""

INDEX_PAIR = (("A", "B", "1"), ("B", "A", "1"))
"""Two Index inputs with the same tokens in another order: the query 1 asks for position 1."""
RETRIEVAL_PAIR = (("A1", "BD", "CA"), ("BD", "A1", "CA"))
"""Two Retrieval inputs with the same query (C, A): the pair with left letter A moves."""


@CLAIMS.claim(
    id="remark3.1.symbolic-cannot-index",
    statement="No symbolic head (every plane at theta = 0) implements Index, under any readout: the "
    "inputs {pair} hold the same tokens and need different answers, while a symbolic head's output is "
    "invariant under permuting key contents (sympy, generic weights; {heads} random symbolic heads of "
    "random sizes in float64).",
    reference="[A] Remark 3.1; docs/theory.md section 4",
    params={"pair": " and ".join(" ".join(x) for x in INDEX_PAIR), "heads": Quick(200, 40)},
    meaning="A head that only sees contents sees a multiset, and Index needs positions.",
)
def _symbolic(ctx: CheckContext) -> Outcome:
    identity = symbolic_output_is_permutation_invariant()
    answers = [follow_number_chain(x) for x in INDEX_PAIR]
    same_multiset = sorted(INDEX_PAIR[0]) == sorted(INDEX_PAIR[1])
    search = class_search("symbolic", ctx.params["heads"], seed=31)
    # a concrete symbolic head (T_Index at theta = 0) answers both alike; T_Index itself answers both
    nope = compile_construction(index_construction(theta=0.0, letters=2, max_int=2))
    working = compile_construction(index_construction(theta=INDEX_THETA, letters=2, max_int=2))
    nope_answers = answer(nope, [list(x) for x in INDEX_PAIR], mode="softmax", dtype=ctx.dtype)
    control = answer(working, [list(x) for x in INDEX_PAIR], dtype=ctx.dtype)
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


@CLAIMS.claim(
    id="remark3.1.positional-cannot-retrieve.attention",
    statement="Read as 'the head attends most to the target', no positional head (every key the same "
    "vector) implements Retrieval: the inputs {pair} have the same query and their targets at different "
    "positions, while a positional head's logit row ignores key contents (sympy, generic weights; "
    "{heads} random positional heads of random sizes in float64).",
    reference="[A] Remark 3.1; docs/theory.md section 4",
    params={"pair": " and ".join(" ".join(x) for x in RETRIEVAL_PAIR), "heads": Quick(200, 40)},
    meaning="This is the argument the remark gives: attention that ignores content cannot follow the "
    "matching pair.",
)
def _positional_attention(ctx: CheckContext) -> Outcome:
    identity = positional_logits_ignore_key_content()
    answers = [follow_letter_chain(x) for x in RETRIEVAL_PAIR]
    targets = [x.index(a) for x, a in zip(RETRIEVAL_PAIR, answers, strict=True)]
    search = class_search("positional", ctx.params["heads"], seed=32)
    figures = {
        "sympy_identity": identity,
        "pair_answers": answers,
        "target_positions": targets,
        "random_heads": search.heads,
        "max_relative_change": search.max_change,
        "tolerance": search.tolerance,
    }
    ok = identity and targets[0] != targets[1] and RETRIEVAL_PAIR[0][-1] == RETRIEVAL_PAIR[1][-1]
    ok = ok and search.invariant
    return Outcome.judge(ok, figures, "max_relative_change", counterexample=search.worst)


@CLAIMS.claim(
    id="remark3.1.positional-cannot-retrieve.output",
    statement="Read as 'the argmax of the head's readout is the target pair', no positional head "
    "implements Retrieval. Tested with a positional head that attends to the query itself with one "
    "logit and to every other position with another ({planes} planes at 2 pi k/{period}), whose query "
    "value writes bonus {bonus} on the pairs it asks for: its exact worst readout margin over every "
    "Retrieval input (|ALPH| = {alphabet}) at each length n in {lengths}.",
    reference="[A] Remark 3.1 (a reading the remark's argument does not cover); docs/theory.md section 4",
    params={
        "alphabet": 4,
        "period": 65,
        "planes": 32,
        "bonus": 10.0,
        "lengths": Quick("3..65", [3, 8, 17, 33, 65]),
        "samples_per_length": 64,
    },
    expected="violated",
    pins={
        "counterexample_found": True,
        "min_margin": Approx(1 / 192, rel=1e-9),
        "margin_is_closed_form": True,
        "sampled_accuracy": 1.0,
    },
    meaning="The remark's argument covers attention only. This positional head answers every input up "
    "to length {period}: its worst readout margin is exactly 1/(2(N-1) + n - 1) at length n (N = "
    "{period}), smallest ({min_margin}) at n = N.",
)
def _positional_output(ctx: CheckContext) -> Outcome:
    p = ctx.params
    c = positional_retrieval_construction(p["alphabet"], p["period"], p["bonus"])
    head, fam = ctx.store.get(POSITIONAL_HEAD, alphabet=p["alphabet"], period=p["period"], bonus=p["bonus"])
    k = (p["period"] - 1) // 2
    # logit K at the query, -1/2 elsewhere: this scale gives the query weight 2(N-1) / (2(N-1) + n - 1)
    scale = math.log(2 * (p["period"] - 1)) / (k + 0.5)
    lengths = (
        list(range(3, p["period"] + 1)) if isinstance(p["lengths"], str) else [int(x) for x in p["lengths"]]
    )
    rows, worst = [], None
    closed_ok = True
    for n in lengths:
        r = content_independent_readout_margin(head, fam, n, scale)
        want = 1 / (2 * (p["period"] - 1) + n - 1)
        # p_t is one softmax weight computed in float64: a few ulps of relative error
        closed_ok &= math.isclose(r.margin, want, rel_tol=1e-12)
        rows.append({"n": n, "margin": r.margin, "closed_form": want})
        if worst is None or r.margin < worst.margin:
            worst = r
    correct = total = 0
    for n in sorted({*lengths[:: max(1, len(lengths) // 5)], lengths[-1]}):
        samples = sample_family_inputs(fam, n, p["samples_per_length"], seed=n)
        got = answer(head, [list(x) for x, _ in samples], "softmax", scale, "cpu", ctx.dtype)
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
    cex = {
        "head": c.description,
        "softmax_scale": scale,
        "lengths": p["lengths"],
        "worst_case": worst.witness,
    }
    return Outcome.judge(not found, figures, "min_margin", counterexample=cex)


CLAIMS.add_correction(
    Correction(
        id="remark3.1.positional-readout",
        corrects=("remark3.1.positional-cannot-retrieve.output",),
        reading="'implements' read as 'the argmax of the head's readout is the target pair'",
        statement="Read at the output, Remark 3.1 becomes quantitative: for every positional head (every key "
        "the same vector), every query token Q asking for a letter Y and every two pairs tau != o with left "
        "letter Y, the worst Retrieval readout margin at length n is at most min_j C(tau, o) p_j(Q) <= "
        "C(tau, o) (1 - p_Q(Q))/(n - 1), where p_j(Q) are Q's key weights, p_Q(Q) its weight on itself, "
        "C(tau, o) = (A(tau, o) + A(o, tau))/2 and A(x, y) = s(x)[x] - s(x)[y] for the readout "
        "s = W_E W_V W_O W_U; the least over j takes the key of least weight when C >= 0 and of largest "
        "weight when C < 0. A positional head therefore answers Retrieval only with a margin that decays "
        "like 1/n against its readout scale, and with hard attention it fails at every n >= 3; but it does "
        "answer every input up to any fixed length: the period-{period} head attains the bound exactly.",
        latex=r"\operatorname{margin}_{\inf}(n)\le\min_{0\le j\le n-2}C(\tau,o)\,p_j(Q)\le C(\tau,o)\,"
        r"\frac{1-p_Q(Q)}{n-1}\quad\text{for every query }Q\text{ asking for }Y\text{ and }\tau\ne o"
        r"\text{ with left letter }Y",
        offset_statement="With n the largest offset (n key positions besides the query) the bound reads "
        "min_j C p_j(Q) <= C (1 - p_Q(Q))/n.",
        status="machine-checked",
        range="every positional one-layer head and every length n >= 2; rows: the period-{period} head "
        "(|ALPH| = {alphabet}, bonus {bonus}), lengths 3..{period}",
        tightness="The period-{period} head (query logit K at itself, -1/2 elsewhere) has C = "
        "{pair_constant} and worst margin exactly C min_j p_j = 1/(2(N - 1) + n - 1) at every n <= N, "
        "smallest ({min_margin}) at n = N. The sentence as first written (C the least over the pairs of "
        "every letter, times the least key weight over every query) is false: a positional head (exact "
        "rationals, n = 3) has worst margin {counterexample_margin} against that product's "
        "{counterexample_first_sentence_bound}, and the corrected bound {counterexample_margin} is attained "
        "there.",
        sketch="Put the pair tau, then o, at any key position t, everything else the same: the weights are "
        "the same (positional), so the two margins are at most p_t A(tau, o) + R and p_t A(o, tau) - R, "
        "which sum to 2 C p_t. The n - 1 key weights sum to 1 - p_Q, so the least is at most (1 - p_Q)/(n - "
        "1) and the largest at least that: t of least weight when C >= 0, of largest weight when C < 0.",
        compute=lambda ctx: ctx.store.get(READOUT, **ctx.params),
        params={
            "alphabet": 4,
            "period": 65,
            "bonus": 10.0,
            "lengths": Quick(list(range(3, 66)), [3, 8, 17, 33, 65]),
        },
        pins={
            "min_margin": Approx(1 / 192, rel=1e-9),
            "pair_constant": Approx(1.0, rel=1e-12),
            "reported_first_failure_n": 3,
            "exact_at_max_n": Approx(1 / 192, rel=1e-9),
            "counterexample_margin": "1/100",
            "counterexample_first_sentence_bound": "1/1000",
        },
    )
)

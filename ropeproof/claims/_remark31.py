"""[A] Remark 3.1: a symbolic head cannot implement Index; a positional head cannot implement
Retrieval. Each impossibility is checked as stated, on the whole class: a sympy identity for generic
weights, an exhibited pair of task inputs, and a search over random heads of random sizes; the
positional one under two readings of "implement" (attention on the target, or the readout's answer).
"""

from __future__ import annotations

from ropeproof.claims._corrections import Correction
from ropeproof.claims._registry import Approx, CheckContext, ClaimSet, Outcome, Quick
from ropeproof.verify.studies.errata._readout import READOUT
from ropeproof.verify.studies.errata._remark31_judging import (
    positional_cannot_attend_outcome,
    positional_readout_outcome,
    symbolic_cannot_index_outcome,
)

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
    return symbolic_cannot_index_outcome(INDEX_PAIR, ctx.params["heads"], ctx.dtype)


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
    return positional_cannot_attend_outcome(RETRIEVAL_PAIR, ctx.params["heads"])


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
    return positional_readout_outcome(
        p["alphabet"], p["period"], p["bonus"], p["lengths"], p["samples_per_length"], ctx.dtype, ctx.store
    )


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
        "1) and the largest at least that: t of least weight when C >= 0, of largest weight when C < 0. "
        "The composition is checked too: two chains (C >= 0, C <= 0) whose links' "
        "hypotheses follow from the earlier conclusions by linear real arithmetic.",
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

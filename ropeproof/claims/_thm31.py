"""[A] Theorem 3.1: T_Index and T_Retrieval compute their function up to their horizon."""

from __future__ import annotations

from ropeproof.claims._registry import CheckContext, ClaimSet, Outcome
from ropeproof.constructions._paper import ALPHABET_SIZE as ALPHABET
from ropeproof.constructions._paper import INDEX_THETA, RETRIEVAL_THETA
from ropeproof.verify.measure.exact._horizon_judging import index_horizon_outcome, retrieval_horizon_outcome

CLAIMS = ClaimSet(
    "thm3.1",
    section="Theorem 3.1 ([A]): the constructions work up to their horizon",
    report_figures=("c_accuracy", "e_geometry"),
)
"""The thm3.1 claims, in report order."""


@CLAIMS.claim(
    id="thm3.1.index",
    statement="T_Index (theta = {theta}, {letters} letters, integers 1..{max_int}) has a positive worst-case "
    "margin on every input of the Index family of length n <= {max_len}, and answers {tasks} 1-hop "
    "number tasks correctly (argmax readout, and softmax at logit scale {softmax_scale}).",
    reference="[A] Theorem 3.1; docs/theory.md section 4",
    params={
        "theta": INDEX_THETA,
        "letters": 120,
        "max_int": 16,
        "max_len": 17,
        "tasks": 200,
        "softmax_scale": 30,
    },
    meaning="T_Index implements Selective Index at every length its integer vocabulary covers.",
)
def _thm31_index(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return index_horizon_outcome(
        p["theta"], p["letters"], p["max_int"], p["max_len"], p["tasks"], p["softmax_scale"], ctx.dtype
    )


@CLAIMS.claim(
    id="thm3.1.retrieval",
    statement="T_Retrieval (|ALPH| = {alphabet_size}, theta = {theta}) has a positive worst-case margin on "
    "every Retrieval input of every length n0 with theta < omega/(2 n0) (n0 <= {claimed_horizon}), and "
    "answers {tasks} 1-hop letter tasks correctly; exact margins for n = 2..{max_n}. With n0 read as the "
    "largest offset instead (lengths up to {offset_horizon_length}) the margin is positive too.",
    reference="[A] Theorem 3.1; docs/theory.md section 4",
    params={"alphabet_size": ALPHABET, "theta": RETRIEVAL_THETA, "max_n": 200, "tasks": 200},
    pins={
        "claimed_horizon": 145,
        "exact_first_failure_n": 147,
        "offset_horizon_length": 146,
        "offset_convention": "holds",
    },
    meaning="The stated horizon is safe but not tight: the exact margin stays positive up to one length "
    "before n = {exact_first_failure_n}, where (2n - 3) theta first reaches omega. Read with n0 the largest "
    "offset, the horizon covers lengths up to {offset_horizon_length} and is then exactly tight.",
)
def _thm31_retrieval(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return retrieval_horizon_outcome(p["alphabet_size"], p["theta"], p["max_n"], p["tasks"], ctx.dtype)

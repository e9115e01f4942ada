"""Claims about positional and symbolic heads ([B]'s framework as used by [A]).

Importing this module registers:

- ``ps.exclusion-principle``: [B] Theorem 1 on random heads and on the constructions, exactly;
- ``ps.index-positional``: T_Index scores as positional;
- ``ps.retrieval-symbolic``: T_Retrieval at ``theta = 0`` scores as symbolic;
- ``ps.reference-heads``: constant logits score (1, 1); NoPE is exactly symbolic and a constant-key
  head exactly positional under the exact definitions.
"""

from __future__ import annotations

from ropeproof.claims._registry import Approx, CheckContext, ClaimSet, Outcome, Quick
from ropeproof.constructions._paper import ALPHABET_SIZE, INDEX_THETA
from ropeproof.verify.measure.ps._judging import (
    CLASS_THRESHOLD,
    N_EXACT,
    construction_class_outcome,
    exclusion_outcome,
    reference_heads_outcome,
)

CLAIMS = ClaimSet(
    "ps",
    section="Positional and symbolic heads ([B], [A])",
    report_figures=("ps_plane", "per_frequency", "ps_scale"),
)
"""The ps claims, in report order."""


@CLAIMS.claim(
    id="ps.exclusion-principle",
    statement=(
        "Var of the key-logit row <= (||delta_pos||^2 + ||delta_sym||^2) / ((n-1)! (n-1)) over all "
        "permutations of the n-1 keys, for {random_heads} random RoPE heads (n = 2..8, 3 inputs each) and "
        "for T_Index and T_Retrieval, every permutation enumerated."
    ),
    reference="[B] Theorem 1; docs/theory.md section 2",
    params={"random_heads": Quick(40, 12), "n": "2..8", "inputs_per_head": 3},
    meaning="The inequality holds for every function of the key contents (it is an identity plus "
    "(a - b)^2 <= 2 (a^2 + b^2)); its tightness is what describes a head.",
)
def _exclusion(ctx: CheckContext) -> Outcome:
    return exclusion_outcome(ctx.params["random_heads"], ctx.device, ctx.dtype)


def _classify(ctx: CheckContext, kind: str, **extra: int) -> Outcome:
    p = ctx.params
    size = {"length": p["length"], "n_inputs": p["n_inputs"]}
    judged = {"scales": p["scales"], "threshold": p["threshold"]}
    where = {"device": ctx.device, "dtype": ctx.dtype, "store": ctx.store}
    return construction_class_outcome(kind, p["theta"], **size, **judged, **where, **extra)


SCALES = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
"""Logit scales (multiples of the construction's unit-norm logits) the classification is shown at."""


@CLAIMS.claim(
    id="ps.index-positional",
    statement=(
        "T_Index (theta = {theta}) on {n_inputs} number-task inputs of {length} tokens is positional at its "
        "working logit scale s* = ln((n-1) 99) / margin_inf(n) = {working_scale} (99% attention on the "
        "target): S_pos = 1 and S_sym < {threshold}; under the exact definitions delta_pos = 0. Scores "
        "are also reported at scales {scales}."
    ),
    reference="[A] Thm 3.1 and Remark 3.1; docs/theory.md sections 2 and 4",
    params={
        "theta": INDEX_THETA,
        "n_inputs": 100,
        "length": 17,
        "tau": 1e-4,
        "threshold": CLASS_THRESHOLD,
        "scales": SCALES,
    },
    pins={
        "working_scale": Approx(302.4274367626738, rel=1e-9),
        "S_sym_at_scale_1": Approx(0.27016880576948843, rel=1e-9),
    },
    meaning="At scale 1 the same head scores S_sym = {S_sym_at_scale_1}: with tau = 1e-4 the score is "
    "an argmax over swaps, so on nearly uniform attention it measures the logit range, not the head.",
)
def _index_positional(ctx: CheckContext) -> Outcome:
    return _classify(ctx, "index")


@CLAIMS.claim(
    id="ps.retrieval-symbolic",
    statement=(
        "T_Retrieval at theta = {theta} (|ALPH| = {alphabet}) on {n_inputs} letter-task inputs of {length} "
        "pairs is symbolic at its working logit scale s* = {working_scale}: S_sym = 1 and S_pos < "
        "{threshold}; under the exact definitions delta_sym = 0. Scores are also reported at scales "
        "{scales}."
    ),
    reference="[A] Thm 3.1 and Remark 3.1; docs/theory.md sections 2 and 4",
    params={
        "theta": 0.0,
        "alphabet": ALPHABET_SIZE,
        "n_inputs": 100,
        "length": 17,
        "tau": 1e-4,
        "threshold": CLASS_THRESHOLD,
        "scales": SCALES,
    },
    pins={
        "working_scale": Approx(25.154930531413097, rel=1e-9),
        "S_pos_at_scale_1": Approx(0.2683648704000495, rel=1e-9),
    },
    meaning="At scale 1 the same head scores S_pos = {S_pos_at_scale_1}, for the same reason as T_Index.",
)
def _retrieval_symbolic(ctx: CheckContext) -> Outcome:
    return _classify(ctx, "retrieval", alphabet=ctx.params["alphabet"])


@CLAIMS.claim(
    id="ps.reference-heads",
    statement=(
        "A head with constant logits scores (1, 1); a NoPE head has delta_sym = 0 and a constant-key head "
        "delta_pos = 0 exactly, over all key permutations."
    ),
    reference="[B] definitions; docs/theory.md section 2",
    params={"n_exact": N_EXACT, "n_scores": 17, "inputs": "one-hot, 8 per check"},
    meaning="The scores and the exact definitions agree on the three reference heads.",
)
def _reference(ctx: CheckContext) -> Outcome:
    return reference_heads_outcome(ctx.device, ctx.dtype)

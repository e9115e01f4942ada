"""[A]'s frontier-LLM protocol run on the models of this machine (``docs/theory.md`` section 3, "[A]'s
1-hop protocol for chat models"): the shipped small trained checkpoints and the compiled 12-layer
checkpoints, each on the task it was trained or compiled for, in that task's raw token format
(:mod:`ropeproof.verify.studies.llm_eval._local_models`).

- ``llm-eval.local-ordering``: whether they show [A]'s ordering, letter accuracy above number accuracy
  at every length, and where they stand against [A]'s reported levels: ``holds`` when every model
  shows it, ``violated`` when some model has letter below number at some length (95% intervals
  disjoint), else ``unresolvable`` (intervals overlap). ``open``: [A]'s statement is about frontier
  LLMs, these are small controlled models.
"""

from __future__ import annotations

import importlib.util

from ropeproof.claims._registry import CheckContext, ClaimSet, Outcome, Quick
from ropeproof.verify.studies.llm_eval._local_models import FULL_SIZES, QUICK_SIZES
from ropeproof.verify.studies.llm_eval._local_ordering import local_ordering_outcome
from ropeproof.verify.studies.llm_eval._protocol import DEFAULT_LENGTHS

CLAIMS = ClaimSet(
    "llm-eval",
    section="[A]'s frontier-LLM protocol, on the models of this machine",
    report_figures=("llm_eval_local",),
)
"""The llm-eval claims, in report order."""

HAS_HF = importlib.util.find_spec("transformers") is not None


@CLAIMS.claim(
    id="llm-eval.local-ordering",
    statement=(
        "Under [A]'s 1-hop protocol (lengths {lengths}; {prompts} prompts x {draws} draws per task and "
        "length; each model on its own task in its raw token format), the shipped small trained models and "
        "the compiled 12-layer checkpoints show [A]'s frontier-LLM ordering: letter accuracy above number "
        "accuracy at every length, the 95% Clopper-Pearson intervals disjoint."
    ),
    reference="[A]'s frontier-LLM results as reported (docs/theory.md section 3)",
    params={
        "lengths": DEFAULT_LENGTHS,
        "prompts": Quick(FULL_SIZES["prompts"], QUICK_SIZES["prompts"]),
        "draws": Quick(FULL_SIZES["draws"], QUICK_SIZES["draws"]),
    },
    expected="open",
    meaning=(
        "Whether models on this machine show the letter > number gap [A] reports for frontier LLMs "
        "({prompts} prompts x {draws} draws per task and length): {reading}."
    ),
)
def _local_ordering(ctx: CheckContext) -> Outcome:
    if not HAS_HF:
        return Outcome("unresolvable", detail="transformers is not installed (the hf extra)")
    p = ctx.params
    return local_ordering_outcome(p["lengths"], p["prompts"], p["draws"], store=ctx.store)

"""Judging [A]'s frontier-LLM ordering (letter accuracy above number accuracy at every length) on the models
of this machine (:mod:`ropeproof.verify.studies.llm_eval._local_models`), and where each stands against [A]'s
reported levels. The claim ``llm-eval.local-ordering`` states what is judged and calls
:func:`local_ordering_outcome`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.studies.llm_eval import _local_models as local_models
from ropeproof.verify.studies.llm_eval._results import RunSummary
from ropeproof.verify.studies.llm_eval._statistics import threshold_checks


def ordering_outcome(summaries: Sequence[RunSummary]) -> Outcome:
    """[A]'s ordering on each model's run (:meth:`RunSummary.ordering`, 95% Clopper-Pearson intervals):
    ``holds`` when every model shows it, ``violated`` when some model shows the opposite at some length
    (intervals disjoint), else ``unresolvable`` (overlapping intervals decide nothing, and a model with no
    length measured for both tasks has no ordering).

    Figures: ``orderings`` (each model's verdict); per model its ordering line, the verdict per length, the
    mean accuracy per task and length, and each of [A]'s reported thresholds at a measured length
    (:func:`~ropeproof.verify.studies.llm_eval._statistics.threshold_checks`: met, missed or unresolved);
    ``reading``, every model's line. The counterexample is the orderings."""
    figures: dict[str, Any] = {"orderings": {}}
    for s in summaries:
        order = s.ordering()
        figures["orderings"][s.label] = order.verdict
        figures[s.label] = {
            "ordering": order.line(),
            "per_length": {str(k): v for k, v in order.per_length.items()},
            "accuracy": {
                r.task: {str(x.length): x.accuracy_mean for x in s.results if x.task == r.task}
                for r in s.results
            },
            "thresholds": {
                f"{t['task']} {t['reported']} at {t['length']}": t["verdict"]
                for t in threshold_checks(s.results)
            },
        }
    figures["reading"] = "; ".join(f"{s.label}: {s.ordering().line()}" for s in summaries)
    verdicts = set(figures["orderings"].values())
    ok = verdicts == {"shown"}
    # overlapping intervals decide nothing, and neither does a model with no length measured for both tasks
    resolvable = ok or "not shown" in verdicts
    return Outcome.judge(ok, figures, "orderings", figures["orderings"], resolvable=resolvable)


def local_ordering_outcome(
    lengths: Sequence[int], prompts: int, draws: int, store: ResultStore | None = None
) -> Outcome:
    """:func:`ordering_outcome` of the local models' runs under [A]'s 1-hop protocol at ``lengths``,
    ``prompts`` prompts x ``draws`` draws per task and length
    (:func:`~ropeproof.verify.studies.llm_eval._local_models.local_results`, shared through ``store``)."""
    return ordering_outcome(local_models.local_results(lengths, prompts, draws, store=store))

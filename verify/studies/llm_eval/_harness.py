"""One call that runs [A]'s 1-hop protocol on one model: :func:`evaluate`.

It builds the plan (:mod:`.plan`), opens or resumes the run directory (:mod:`.run_log`; ``out=None``
keeps everything in memory), sends the prompts without a reply (:mod:`.runner`) and summarises the log
(:mod:`.results`), writing ``results.json`` whenever it stops: done, interrupted or failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ropeproof.constructions._paper import TASKS
from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.llm_eval._plan import build_plan, check_format
from ropeproof.verify.studies.llm_eval._protocol import DEFAULT_DRAWS, DEFAULT_LENGTHS, DEFAULT_PROMPTS
from ropeproof.verify.studies.llm_eval._providers import Provider
from ropeproof.verify.studies.llm_eval._results import RunSummary, summarise_log
from ropeproof.verify.studies.llm_eval._run_log import RESULTS_FILE, RunLog, open_run, write_json_atomic
from ropeproof.verify.studies.llm_eval._runner import MAX_FAILURES, run_prompts


def default_label(identity: dict[str, Any]) -> str:
    """A model's name in figures: the directory name of a local model, else the model name."""
    model = str(identity.get("model") or identity.get("provider"))
    return Path(model).name if identity.get("provider") == "hf" else model


def evaluate(
    provider: Provider,
    tasks: Sequence[str] = TASKS,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    prompts: int = DEFAULT_PROMPTS,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    fmt: str = "chat",
    out: str | Path | None = None,
    label: str | None = None,
    concurrency: int = 4,
    progress: bool = False,
    force: bool = False,
    max_failures: int = MAX_FAILURES,
) -> RunSummary:
    """Run the protocol on ``provider`` (module docstring) and return the summary.

    ``fmt`` is ``chat`` ([A]'s prompts) or ``task`` (the controlled tasks' raw sequences); a model built
    for one task (``provider.task``: a trained or compiled checkpoint) is asked only its own task, in the
    ``task`` format (anything else is refused: its tokenizer knows no other words).
    """
    check_format(fmt)
    own = getattr(provider, "task", None)
    if own is not None and fmt == "chat":
        raise InputError(
            f"the model is a {own}-task checkpoint: its tokenizer knows only that task's words, so [A]'s "
            "chat prompts would reach it as unknown words; use --format task (the default for it)"
        )
    if fmt == "task" and own is not None and set(tasks) != {own}:
        raise InputError(
            f"the model is a {own}-task checkpoint (its tokenizer is the {own} task's), so its task-format "
            f"prompts exist for that task only (tasks={list(tasks)}; use --task {own}, or leave --task out)"
        )
    plan = build_plan(tasks, lengths, prompts, draws, seed, fmt)
    identity = {**provider.identity(), "format": fmt, "seed": seed}
    plan_settings = {
        "tasks": list(dict.fromkeys(tasks)),
        "lengths": [int(n) for n in dict.fromkeys(lengths)],
        "prompts": prompts,
        "draws": draws,
    }
    label = label or default_label(identity)
    log = RunLog(None) if out is None else open_run(Path(out), identity, plan_settings, label, force)
    path = None if out is None else str(out)
    try:
        run_prompts(plan, provider, log, concurrency, progress, max_failures)
    finally:
        summary = summarise_log(plan, log, label, identity, plan_settings, path)
        if out is not None:
            write_json_atomic(Path(out) / RESULTS_FILE, summary.to_json())
    return summary

"""The models on this machine under [A]'s 1-hop protocol: the controlled counterpart of [A]'s frontier
figure (the ``hf`` extra).

Each :class:`LocalModel` is one checkpoint answering one task in the ``task`` format (the raw token
sequence it was trained or compiled on, :mod:`.sequences`); models that share a ``label`` form one line
of the figure (a number model and a letter model together answer both tasks, so the ordering letter >
number can be read). :data:`LOCAL_MODELS` lists them; adding a checkpoint directory is one line::

    LocalModel("trained paper", "number", directory("runs/number-paper")),

- ``trained small``: the shipped small GPT-J checkpoints (``ropeproof train TASK --config small``);
- ``compiled 12-layer``: the compiled ``Index^4 Reflexive^8`` / ``Retrieval^4 Reflexive^8`` models
  exported as GPT-J checkpoints (what ``ropeproof export-model gptj TASK`` writes), in memory.

:func:`local_results` runs them (batched forward passes on the CPU) through the run's
:class:`~ropeproof.machinery._result_store.ResultStore` (:data:`LOCAL_SUMMARIES`), so the claim and the
figure of ``ropeproof check`` that both read it compute it once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ropeproof.constructions._paper import check_task
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.verify.studies.llm_eval._harness import evaluate
from ropeproof.verify.studies.llm_eval._local import HFCausalLM
from ropeproof.verify.studies.llm_eval._protocol import DEFAULT_LENGTHS
from ropeproof.verify.studies.llm_eval._results import RunSummary, merge_by_label

Loader = Callable[[ResultStore], tuple[Any, Any]]
"""``load(store) -> (model, tokenizer)``: the run's store holds what other claims and figures load too."""


@dataclass(frozen=True)
class Checkpoint:
    """How to load a checkpoint, and what it is."""

    load: Loader
    description: str


@dataclass(frozen=True)
class LocalModel:
    """A checkpoint, the task it answers, and the line (``label``) it belongs to."""

    label: str
    task: str
    checkpoint: Checkpoint


def shipped(task: str) -> Checkpoint:
    """The shipped small trained checkpoint of ``task`` (loaded once per run, read-only)."""
    check_task(task)

    def load(store: ResultStore) -> tuple[Any, Any]:
        from ropeproof.verify.studies.training._shipped_results import SHIPPED_MODEL

        s = store.get(SHIPPED_MODEL, task=task)
        return s.model, s.tokenizer

    return Checkpoint(load, f"shipped {task}-small")


def compiled(task: str, hops: int = 4, layers: int = 12) -> Checkpoint:
    """The compiled ``hops``-hop, ``layers``-layer model of ``task`` exported as a GPT-J checkpoint."""
    check_task(task)

    def load(store: ResultStore) -> tuple[Any, Any]:
        from ropeproof.verify.interop.hf._model_export import export_model
        from ropeproof.verify.studies.beyond._checkpoint_solvers import CHECKPOINT_MODEL

        exported = export_model(store.get(CHECKPOINT_MODEL, task=task, hops=hops, layers=layers), "gptj")
        return exported.model, exported.tokenizer

    return Checkpoint(load, f"export-model gptj {task} --hops {hops} --layers {layers}")


def directory(path: str | Path) -> Checkpoint:
    """A checkpoint directory that ``from_pretrained`` loads (float32, CPU)."""

    def load(store: ResultStore) -> tuple[Any, Any]:
        provider = HFCausalLM.from_directory(path, fmt="task")
        return provider.model, provider.tokenizer

    return Checkpoint(load, str(path))


LOCAL_MODELS: tuple[LocalModel, ...] = (
    LocalModel("trained small", "number", shipped("number")),
    LocalModel("trained small", "letter", shipped("letter")),
    LocalModel("compiled 12-layer", "number", compiled("number")),
    LocalModel("compiled 12-layer", "letter", compiled("letter")),
)
"""The local models of the report, in figure order (module docstring)."""

QUICK_SIZES = {"prompts": 8, "draws": 2}
"""``ropeproof check --quick``: 8 prompts x 2 draws per task and length."""
FULL_SIZES = {"prompts": 50, "draws": 5}
"""The full report: [A]'s 5 draws, 50 prompts each, per task and length."""


def sizes(quick: bool) -> dict[str, int]:
    """:data:`QUICK_SIZES` or :data:`FULL_SIZES`."""
    return dict(QUICK_SIZES if quick else FULL_SIZES)


def evaluate_local(
    models: Sequence[LocalModel] = LOCAL_MODELS,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    prompts: int = FULL_SIZES["prompts"],
    draws: int = FULL_SIZES["draws"],
    seed: int = 0,
    store: ResultStore | None = None,
) -> list[RunSummary]:
    """One summary per label: each model answers its task in the ``task`` format (in memory; the
    checkpoints are loaded through ``store``, default a fresh one)."""
    if not models:
        raise InputError("models is empty")
    store = ResultStore() if store is None else store
    runs = []
    for m in models:
        model, tokenizer = m.checkpoint.load(store)
        provider = HFCausalLM(model, tokenizer, "task", source=m.checkpoint.description)
        if provider.task != m.task:
            raise InputError(f"{m.checkpoint.description}: its tokenizer is not the {m.task} task's")
        run = evaluate(provider, [m.task], lengths, prompts, draws, seed, "task", label=m.label)
        runs.append(run)
    return merge_by_label(runs)


@data_product("llm-eval.local-summaries")
def LOCAL_SUMMARIES(
    store: ResultStore, lengths: list[int], prompts: int, draws: int, seed: int = 0
) -> list[dict[str, Any]]:
    """:func:`evaluate_local` of :data:`LOCAL_MODELS`, as :meth:`RunSummary.to_json` data."""
    return [s.to_json() for s in evaluate_local(LOCAL_MODELS, lengths, prompts, draws, seed, store)]


def local_results(
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    prompts: int = FULL_SIZES["prompts"],
    draws: int = FULL_SIZES["draws"],
    seed: int = 0,
    store: ResultStore | None = None,
) -> list[RunSummary]:
    """:func:`evaluate_local` of :data:`LOCAL_MODELS`, computed once per run (``store``: the run's
    :class:`~ropeproof.machinery._result_store.ResultStore`, default a fresh one); each caller gets its own
    summaries (:meth:`RunSummary.from_json`)."""
    store = ResultStore() if store is None else store
    data = store.get(
        LOCAL_SUMMARIES, lengths=[int(n) for n in lengths], prompts=prompts, draws=draws, seed=seed
    )
    return [RunSummary.from_json(d) for d in data]

"""Named training configurations: ``paper`` ([A]'s shape and schedule, ``docs/theory.md`` section 6)
and ``small`` (fewer layers, narrower, fewer steps, a larger learning rate; learns on 2 CPU cores).

A configuration fixes the model (HF ``GPTJForCausalLM``: ``n_layer`` blocks of one head each, rotary
over the whole head, ``n_embd`` = head dimension), the optimiser (AdamW with ``lr``, ``betas``,
``weight_decay``), the linear schedule (``warmup_steps`` of linear warm-up from 0 to ``lr``, then linear
decay to 0 at ``steps``), the batch, the checkpoint interval and the evaluation sizes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real

ACTIVATIONS = {
    "gelu": "exact GELU, x * Phi(x) (HF's GELUActivation; [A]'s configuration)",
    "gelu_new": "the tanh approximation of GELU (HF's NewGELUActivation)",
}
"""The MLP activations a configuration may name (HF ``ACT2FN`` keys)."""

MAX_SEED = 2**64 - 1
"""The largest run seed: ``torch.manual_seed`` (initialisation and dropout) takes seeds below ``2**64``
(numpy's seed sequences take any non-negative integer)."""


@dataclass(frozen=True)
class TrainConfig:
    """One training configuration (module docstring). ``mixed_precision`` applies on CUDA only
    (float16 autocast with loss scaling); on the CPU training runs in float32."""

    name: str
    n_layer: int
    n_embd: int
    n_inner: int
    dropout: float
    layer_norm_epsilon: float
    n_positions: int
    lr: float
    betas: tuple[float, float]
    weight_decay: float
    warmup_steps: int
    steps: int
    batch_size: int
    checkpoint_every: int
    mixed_precision: bool
    eval_prompts: int
    score_prompts: int
    activation: str = "gelu"
    training_set: int | None = None

    def __post_init__(self) -> None:
        for name in (
            "n_layer",
            "n_embd",
            "n_inner",
            "n_positions",
            "steps",
            "batch_size",
            "checkpoint_every",
        ):
            integer(getattr(self, name), name, low=1)
        integer(self.n_embd, "n_embd", low=2, even=True, note="rotary pairs dims")
        integer(self.warmup_steps, "warmup_steps", low=0)
        integer(self.eval_prompts, "eval_prompts", low=4, note="one per hop count")
        integer(self.score_prompts, "score_prompts", low=0)
        real(self.dropout, "dropout", low=0.0, high=1.0, high_open=True)
        real(self.lr, "lr", low=0.0, low_open=True)
        real(self.weight_decay, "weight_decay", low=0.0)
        if self.activation not in ACTIVATIONS:
            raise InputError(f"activation={self.activation!r} is unknown; accepted: {sorted(ACTIVATIONS)}")
        if self.training_set is not None:
            integer(self.training_set, "training_set", low=self.batch_size, note="at least one batch")

    def with_overrides(
        self,
        steps: int | None = None,
        checkpoint_every: int | None = None,
        eval_prompts: int | None = None,
        score_prompts: int | None = None,
    ) -> TrainConfig:
        """This configuration with the given fields replaced (``None``: kept); a shorter run keeps its
        warm-up no longer than the run."""
        changes: dict[str, Any] = {}
        if steps is not None:
            changes.update(steps=steps, warmup_steps=min(self.warmup_steps, steps))
        for name, value in (
            ("checkpoint_every", checkpoint_every),
            ("eval_prompts", eval_prompts),
            ("score_prompts", score_prompts),
        ):
            if value is not None:
                changes[name] = value
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["betas"] = list(self.betas)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrainConfig:
        """The configuration a record stores. Records written before ``activation`` and
        ``training_set`` existed were trained with ``gelu_new`` on fresh batches, and read so."""
        data = dict(data)
        data["betas"] = tuple(data["betas"])
        data.setdefault("activation", "gelu_new")
        data.setdefault("training_set", None)
        return cls(**data)


PAPER = TrainConfig(
    name="paper",
    n_layer=12,
    n_embd=128,
    n_inner=512,
    dropout=0.1,
    layer_norm_epsilon=1e-5,
    n_positions=128,
    lr=1e-4,
    betas=(0.95, 0.999),
    weight_decay=1e-4,
    warmup_steps=750,
    steps=6000,
    batch_size=64,
    checkpoint_every=500,
    mixed_precision=True,
    eval_prompts=2400,
    score_prompts=100,
    activation="gelu",
    training_set=432_000,
)
"""[A]'s model and schedule (``docs/theory.md`` section 6): exact GELU, ``n_positions`` 128, and a fixed
training set of 432,000 sequences drawn once and shuffled each epoch (6,000 steps x 64 = 384,000
sequences, under one epoch), validation on 2,400 held-out prompts, the size of [A]'s validation split.
What still differs from [A] is listed in :data:`PAPER_DEVIATIONS`."""

PAPER_DEVIATIONS: tuple[str, ...] = (
    "On the CPU training runs in float32; [A] trains in float16 mixed precision (this configuration "
    "uses float16 autocast with loss scaling on CUDA only).",
    "The training, validation and scoring sequences come from this toolkit's generators (balanced over "
    "hop counts, target positions and answers); [A]'s generator and its held-out test split of 45,600 "
    "are not available.",
    "GPT-J's sin/cos table (a buffer, not a weight: RoPE learns no positions) is rebuilt longer when a "
    "model is loaded for inputs past n_positions (the length study); rows 0..127 are unchanged.",
    "The shipped weights (model.safetensors) are stored rounded to float16 and loaded as float32: the "
    "per-layer pure-heads reading and every accuracy and learning-dynamics figure of the run record "
    "(training.json) were measured on the float32 weights during training, while the readings that run "
    "the shipped model (per-prompt and functional purity, the single-layer ablations, the last layer's "
    "per-hop scores, the length study) read the float16-rounded weights.",
    "No gradient clipping ([A] does not say whether it clips).",
    "Weight decay applies to the weight matrices only (tensors of 2 or more dimensions, the embeddings "
    "included), not to biases or layer-norm weights ([A] does not say which tensors it decays).",
    "Validation prompts (the choice of the best checkpoint, the accuracies) are drawn from a stream "
    "seeded apart from the training stream (seed, stream and batch index through numpy's SeedSequence), "
    "not split off the training sequences ([A] does not say how its validation split was drawn).",
)
"""Every known difference between :data:`PAPER` and [A]'s configuration, and every choice this toolkit
makes where [A] is silent (the report lists them)."""

A_CONFIGURATION: dict[str, Any] = {
    "n_layer": 12,
    "n_embd": 128,
    "n_inner": 512,
    "dropout": 0.1,
    "layer_norm_epsilon": 1e-5,
    "n_positions": 128,
    "lr": 1e-4,
    "betas": (0.95, 0.999),
    "weight_decay": 1e-4,
    "warmup_steps": 750,
    "steps": 6000,
    "batch_size": 64,
    "checkpoint_every": 500,
    "activation": "gelu",
    "training_set": 432_000,
    "eval_prompts": 2400,
}
"""[A]'s configuration where [A] states it (``docs/theory.md`` section 6), field by field."""

A_DESCRIPTIONS = {
    "activation": "[A]'s MLP uses exact GELU",
    "n_positions": "[A]'s sin/cos table has 128 rows",
    "training_set": "[A] draws a fixed training set of 432,000 sequences",
}
"""What [A] does, for the fields where a shipped configuration has differed."""


def config_deviations(config: TrainConfig) -> list[str]:
    """Every way ``config`` differs from [A]'s configuration: one sentence per field of
    :data:`A_CONFIGURATION` it sets otherwise, then the differences and silent choices no configuration
    removes (:data:`PAPER_DEVIATIONS`)."""
    out = []
    for name, want in A_CONFIGURATION.items():
        got = getattr(config, name)
        if got != want:
            shown = "fresh balanced batches every step" if name == "training_set" and got is None else got
            what = A_DESCRIPTIONS.get(name, f"[A]'s {name} is {want!r}")
            out.append(f"{name} = {shown!r} here; {what}.")
    return out + list(PAPER_DEVIATIONS)


def in_a_configuration(config: TrainConfig) -> bool:
    """Whether ``config`` sets every field [A] states (:data:`A_CONFIGURATION`) as [A] does, so that only
    :data:`PAPER_DEVIATIONS` remain."""
    return config_deviations(config) == list(PAPER_DEVIATIONS)


def deviations_by_run(configs: dict[str, TrainConfig]) -> dict[str, Any]:
    """For runs named ``run -> configuration``: ``deviations`` (each run's :func:`config_deviations`
    that a configuration could remove, i.e. without :data:`PAPER_DEVIATIONS`), ``in_a_configuration``
    (the runs with none, sorted) and ``remaining`` (:data:`PAPER_DEVIATIONS`, common to every run)."""
    deviations = {run: config_deviations(c)[: -len(PAPER_DEVIATIONS)] for run, c in configs.items()}
    return {
        "deviations": deviations,
        "in_a_configuration": sorted(run for run, found in deviations.items() if not found),
        "remaining": list(PAPER_DEVIATIONS),
    }


PAPER_V1 = dataclasses.replace(
    PAPER, name="paper", n_positions=2048, activation="gelu_new", training_set=None
)
"""The configuration the paper models of seeds 0-2 were trained with before [A]'s configuration was
followed where known: ``gelu_new`` (the tanh approximation) where [A] uses exact GELU, a 2,048-row sin/cos
table, and a fresh balanced batch every step (384,000 sequences) instead of a fixed training set. Their
records store it (:meth:`TrainConfig.from_json` reads the older records so)."""

SMALL = TrainConfig(
    name="small",
    n_layer=6,
    n_embd=64,
    n_inner=128,
    dropout=0.0,
    layer_norm_epsilon=1e-5,
    n_positions=2048,
    lr=1e-3,
    betas=(0.95, 0.999),
    weight_decay=1e-4,
    warmup_steps=100,
    steps=1500,
    batch_size=64,
    checkpoint_every=250,
    mixed_precision=False,
    eval_prompts=400,
    score_prompts=100,
    activation="gelu_new",
)
"""A CPU-sized variant: 6 layers of width 64, no dropout, learning rate 1e-3, 1,500 steps, the tanh
approximation of GELU (as its shipped models were trained), fresh batches every step. Its
``n_positions`` (GPT-J's sin/cos table) is 2,048 so the length study can run it past 1,000 tokens."""

CONFIGS: dict[str, TrainConfig] = {"small": SMALL, "paper": PAPER}


def get_config(name: str) -> TrainConfig:
    """The configuration called ``name`` (``small`` or ``paper``)."""
    if name not in CONFIGS:
        raise InputError(f"config={name!r} is unknown; accepted: {sorted(CONFIGS)}")
    return CONFIGS[name]

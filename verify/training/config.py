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

from ropeproof.theory.errors import InputError
from ropeproof.theory.validate import integer, real


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
        data = dict(data)
        data["betas"] = tuple(data["betas"])
        return cls(**data)


PAPER = TrainConfig(
    name="paper",
    n_layer=12,
    n_embd=128,
    n_inner=512,
    dropout=0.1,
    layer_norm_epsilon=1e-5,
    n_positions=2048,
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
)
"""[A]'s model and schedule (``docs/theory.md`` section 6). [A] draws 432,000 training sequences once;
here every step draws a fresh balanced batch (6,000 steps x 64 = 384,000 sequences, under one epoch of
[A]'s split), and validation uses 2,400 held-out prompts, the size of [A]'s validation split.
``n_positions`` is 2,048 where [A]'s is 128 (``docs/theory.md`` section 6): it only sizes GPT-J's sin/cos
table (a buffer, not a weight), whose rows 0..16, all a 17-token training input reads, are the same in
both, so training is unchanged (a test compares the two models' losses) and the length study runs these
models at [A]'s 850 tokens and past 1,000."""

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
)
"""A CPU-sized variant: 6 layers of width 64, no dropout, learning rate 1e-3, 1,500 steps. Its
``n_positions`` (GPT-J's sin/cos table) is 2,048 so the length study can run it past 1,000 tokens."""

CONFIGS: dict[str, TrainConfig] = {"small": SMALL, "paper": PAPER}


def get_config(name: str) -> TrainConfig:
    """The configuration called ``name`` (``small`` or ``paper``)."""
    if name not in CONFIGS:
        raise InputError(f"config={name!r} is unknown; accepted: {sorted(CONFIGS)}")
    return CONFIGS[name]

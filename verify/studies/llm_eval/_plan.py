"""The prompts of a run: every (task, length, draw, index) with its text and correct answer.

Draw ``d`` of ``(task, length)`` has the generator seed ``SeedSequence([seed, task number, length, d])``
(:func:`draw_seed`), so draws are independent datasets and a run is reproducible from ``seed``. A
prompt's :attr:`Prompt.key` hashes its id, format, text and answer: the log matches replies to prompts
by key, so a reply is reused only for exactly the prompt it answered.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ropeproof.constructions._paper import TASKS, check_task
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.studies.llm_eval._protocol import chat_prompt
from ropeproof.verify.studies.llm_eval._sequences import FORMATS, chat_instance, check_length, task_instances

MAX_PROMPTS = 100_000
"""Most prompts per draw and length (a bound on typing mistakes, not on the protocol)."""
MAX_DRAWS = 1000


@dataclass(frozen=True)
class Prompt:
    """One request: where it sits in the plan, the tokens, the text sent and the correct answer."""

    task: str
    length: int
    draw: int
    index: int
    format: str
    tokens: tuple[str, ...]
    text: str
    answer: str

    @property
    def id(self) -> str:
        return f"{self.task}/n{self.length}/d{self.draw}/p{self.index}"

    @property
    def key(self) -> str:
        blob = json.dumps([self.id, self.format, self.text, self.answer])
        return hashlib.sha256(blob.encode()).hexdigest()[:24]


def draw_seed(seed: int, task: str, length: int, draw: int) -> int:
    """The generator seed of draw ``draw`` of ``(task, length)`` in a run with seed ``seed``."""
    seed, draw = integer(seed, "seed", low=0), integer(draw, "draw", low=0)
    sequence = np.random.SeedSequence([seed, TASKS.index(check_task(task)), check_length(length), draw])
    return int(sequence.generate_state(1)[0])


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise InputError(f"format={fmt!r} is unknown; accepted: {list(FORMATS)}")
    return fmt


def build_plan(
    tasks: Sequence[str],
    lengths: Sequence[int],
    prompts: int,
    draws: int,
    seed: int = 0,
    fmt: str = "chat",
) -> list[Prompt]:
    """Every prompt of a run, ordered by task, length, draw and index."""
    check_format(fmt)
    if not tasks or not lengths:
        raise InputError("tasks and lengths must be non-empty")
    prompts = integer(prompts, "prompts", low=1, high=MAX_PROMPTS)
    draws = integer(draws, "draws", low=1, high=MAX_DRAWS)
    out = []
    for task in dict.fromkeys(tasks):
        for length in dict.fromkeys(check_length(n) for n in lengths):
            for draw in range(draws):
                s = draw_seed(seed, task, length, draw)
                if fmt == "chat":
                    instances = [chat_instance(task, length, s, i) for i in range(prompts)]
                else:
                    instances = task_instances(task, length, prompts, s)
                for i, inst in enumerate(instances):
                    sequence = " ".join(inst.tokens)
                    text = chat_prompt(task, sequence) if fmt == "chat" else sequence
                    out.append(Prompt(task, length, draw, i, fmt, inst.tokens, text, inst.answer))
    return out

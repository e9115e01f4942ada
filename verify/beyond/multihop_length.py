"""Length generalisation of compiled multi-hop models: the certified horizon, accuracy on [A]'s task
generators from 17 tokens to ``10^4``, and the first input where the model really fails.

Settings (:func:`length_settings`), 12 layers with 4 hop layers, logit scale 1000, cyclic answer codes:

- number task: [A]'s one-plane Index (``theta = 0.8660``); the best 8-plane Index the toolkit knows
  (``best_known.json``, searched at length 4096); the exported checkpoint's program (``theta = 1``, the
  GPT-J width-6 model);
- letter task: [A]'s one-plane Retrieval (``theta = 0.0027``); the best letter code the toolkit knows
  (orthogonal letters at ``theta = 0``, margin 1 at every length,
  :mod:`ropeproof.verify.beyond.letter_codes`); the exported checkpoint's program (``theta = 0.001``).

Reflexive layers are positional; outside the checkpoint programs they use the best 8-plane planes in every
setting, so each curve isolates its Index or Retrieval choice.

For each length and build (:mod:`ropeproof.verify.task_lengths`) the study answers sampled inputs with
:func:`~ropeproof.verify.runtime.chain_readout.long_answers` (float64) and *decoy* inputs: the same
inputs with every answer-kind token off the chain replaced by one decoy a quarter turn from the answer on
the code circle (the chain and its lookups unchanged), so that every leaked letter points the same wrong
way. They are a second probe, not a worst case: sampled inputs are sometimes answered worse. A setting
stops after ``stop_after`` consecutive lengths at or below 25% sampled accuracy. The first wrong answer is
kept as the witness (tokens, expected and given answer) and re-run through the full module when short.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ropeproof.constructions.multihop_compile import CompiledModel, compile_program
from ropeproof.constructions.multihop_programs import checkpoint_program, letter_program, number_program
from ropeproof.constructions.paper import INDEX_THETA, RETRIEVAL_THETA
from ropeproof.theory.errors import InputError
from ropeproof.theory.multihop import MultiHopProgram
from ropeproof.verify.beyond.index_search import best_known_table
from ropeproof.verify.exact.multihop_certified import MultiHopCertificate, certified_horizon
from ropeproof.verify.runtime.chain_readout import long_answers
from ropeproof.verify.runtime.multilayer import answer_model
from ropeproof.verify.task_lengths import BUILDS, long_task, required_max_int
from ropeproof.verify.tasks import TaskInstance

HOPS = 4
LAYERS = 12
BEST_PLANES = (8, 4096)
"""The ``(planes, length)`` entry of ``best_known.json`` used as the best multi-plane Index."""


@dataclass(frozen=True)
class LengthSetting:
    """A model of the study: ``key``, ``task``, a legend ``label`` and ``program(max_int)``."""

    key: str
    task: str
    label: str
    program: Callable[[int], MultiHopProgram]


@functools.cache
def best_planes() -> tuple[tuple[float, float], ...]:
    """The best 8-plane Index construction the toolkit stores (``(theta_k, a_k)``, amplitudes sum to 1)."""
    freqs, amps = best_known_table()[BEST_PLANES]
    return tuple(zip(freqs, amps, strict=True))


def _checkpoint(task: str, max_int: int) -> MultiHopProgram:
    base = checkpoint_program(task, HOPS, LAYERS)
    if task == "letter" or max_int == 16:
        return base
    theta = float(base.parameters[next(s for s in base.parameters if s.name == "theta_I0")])
    return number_program(HOPS, LAYERS, ((theta, 1.0),), "positional", ((theta, 1.0),), max_int=max_int)


def length_settings() -> list[LengthSetting]:
    """The six settings of the module docstring, number task first."""
    best = list(best_planes())
    return [
        LengthSetting(
            "number-paper",
            "number",
            f"one-plane Index, theta = {INDEX_THETA}",
            lambda m: number_program(HOPS, LAYERS, ((INDEX_THETA, 1.0),), "positional", best, max_int=m),
        ),
        LengthSetting(
            "number-best",
            "number",
            "best 8-plane Index",
            lambda m: number_program(HOPS, LAYERS, best, "positional", best, max_int=m),
        ),
        LengthSetting(
            "number-checkpoint", "number", "checkpoint (GPT-J width 6)", lambda m: _checkpoint("number", m)
        ),
        LengthSetting(
            "letter-paper",
            "letter",
            f"one-plane Retrieval, theta = {RETRIEVAL_THETA}",
            lambda m: letter_program(HOPS, LAYERS, RETRIEVAL_THETA, "one-plane", "positional", best),
        ),
        LengthSetting(
            "letter-best",
            "letter",
            "orthogonal letter code, theta = 0",
            lambda m: letter_program(HOPS, LAYERS, 0.0, "orthogonal", "positional", best),
        ),
        LengthSetting(
            "letter-checkpoint", "letter", "checkpoint (GPT-J width 8)", lambda m: _checkpoint("letter", m)
        ),
    ]


# ---------------------------------------------------------------------------------- decoy inputs


def chain_positions(task: str, tokens: Sequence[str]) -> list[int]:
    """Positions of the chain from the last token to its answer (``p_0 = n - 1, .., p_h``)."""
    p = len(tokens) - 1
    out = [p]
    if task == "number":
        while tokens[p].isdigit():
            p -= int(tokens[p])
            out.append(p)
        return out
    while not tokens[p][1:].isdigit():
        want = tokens[p][1:]
        p = max(j for j in range(p) if tokens[j][0] == want)
        out.append(p)
    return out


def _circular(a: int, b: int, size: int) -> int:
    d = abs(a - b) % size
    return min(d, size - d)


def with_decoys(model: CompiledModel, inst: TaskInstance) -> TaskInstance:
    """``inst`` with every answer-kind token off the chain replaced by one decoy whose code sits a quarter
    turn from the answer's (module docstring). The chain, its lookups and the answer are unchanged."""
    chain = chain_positions(model.task, inst.tokens)
    answers = list(model.answers)
    size = len(answers)
    goal = (answers.index(inst.answer) + size // 4) % size
    if model.task == "number":
        decoy = answers[goal]
    else:
        used = {inst.tokens[p][0] for p in chain[1:]}  # lookup letters must stay unique
        allowed = [i for i, t in enumerate(answers) if t[0] not in used]
        decoy = answers[min(allowed, key=lambda i: _circular(i, goal, size))]
    on_chain, is_answer = set(chain), set(answers)
    tokens = tuple(decoy if (p not in on_chain and t in is_answer) else t for p, t in enumerate(inst.tokens))
    return TaskInstance(tokens, inst.answer, inst.hops, inst.target_position)


# ---------------------------------------------------------------------------------------- the study


@dataclass
class LengthRow:
    """Accuracy of one setting at one length and build."""

    setting: str
    task: str
    build: str
    n: int
    inputs: int
    accuracy: float
    decoy_accuracy: float
    certified_horizon: int
    certified: bool

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class LengthStudy:
    """Rows, the certificates (per setting) and the first failure found (per setting and build)."""

    rows: list[LengthRow]
    certificates: dict[str, MultiHopCertificate]
    failures: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def first_failure_n(self, setting: str, build: str) -> int | None:
        f = self.failures.get((setting, build))
        return None if f is None else int(f["n"])

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, cert in self.certificates.items():
            rows = [r for r in self.rows if r.setting == key]
            out[key] = {
                "certified_horizon": cert.horizon,
                "certificate_complete": cert.complete,
                "measured": {
                    b: {
                        "max_n": max((r.n for r in rows if r.build == b), default=None),
                        "all_correct_up_to": _all_correct_up_to([r for r in rows if r.build == b]),
                        "first_failure": self.failures.get((key, b)),
                    }
                    for b in sorted({r.build for r in rows})
                },
            }
        return out


def _all_correct_up_to(rows: list[LengthRow]) -> int | None:
    best = None
    for r in sorted(rows, key=lambda r: r.n):
        if r.accuracy < 1 or r.decoy_accuracy < 1:
            break
        best = r.n
    return best


def default_lengths(quick: bool) -> list[int]:
    """Lengths of the study: 17 to 64 (quick) or 17 to 10^4."""
    if quick:
        return [17, 24, 32, 64]
    return [17, 24, 32, 48, 64, 128, 256, 512, 1024, 2048, 4096, 10000]


def default_count(n: int, quick: bool) -> int:
    """Inputs per length: fewer at the longest lengths."""
    if quick:
        return 6
    return 32 if n <= 1024 else 8 if n <= 4096 else 4


def length_study(
    settings: Sequence[LengthSetting] | None = None,
    lengths: Sequence[int] | None = None,
    builds: Sequence[str] = ("distractors",),
    count: Callable[[int], int] | None = None,
    seed: int = 0,
    stop_after: int = 2,
    confirm_up_to: int = 2048,
) -> LengthStudy:
    """Run the study (module docstring) and return its rows, certificates and first failures."""
    settings = list(settings if settings is not None else length_settings())
    lengths = sorted(int(n) for n in (lengths if lengths is not None else default_lengths(False)))
    bad = sorted(set(builds) - set(BUILDS))
    if bad or not builds:
        raise InputError(f"builds {bad or builds} unknown or empty; accepted: {list(BUILDS)}")
    count = count or (lambda n: default_count(n, False))
    top = lengths[-1]
    certificates: dict[str, MultiHopCertificate] = {}
    rows: list[LengthRow] = []
    failures: dict[tuple[str, str], dict[str, Any]] = {}
    models: dict[tuple[str, int], CompiledModel] = {}

    def model_for(s: LengthSetting, build: str) -> CompiledModel:
        max_int = required_max_int(s.task, top, build)
        if (s.key, max_int) not in models:
            models[(s.key, max_int)] = compile_program(s.program(max_int))
        return models[(s.key, max_int)]

    for s in settings:
        certificates[s.key] = certified_horizon(model_for(s, "distractors"), HOPS, max_n=max(top, 3))
    for build in builds:
        low_streak = {s.key: 0 for s in settings}
        for n in lengths:
            live = [s for s in settings if low_streak[s.key] < stop_after]
            cache: dict[str, list[TaskInstance]] = {}
            for s in live:
                if s.task not in cache:
                    cache[s.task] = long_task(s.task, count(n), n, (1, 2, 3, 4), build, seed + n)
                insts = cache[s.task]
                model = model_for(s, build)
                adv = [with_decoys(model, i) for i in insts]
                got = long_answers(model, [i.tokens for i in insts])
                got_adv = long_answers(model, [i.tokens for i in adv])
                acc = float(np.mean([g == i.answer for g, i in zip(got, insts, strict=True)]))
                acc_adv = float(np.mean([g == i.answer for g, i in zip(got_adv, adv, strict=True)]))
                cert = certificates[s.key]
                rows.append(
                    LengthRow(s.key, s.task, build, n, len(insts), acc, acc_adv, cert.horizon, cert.complete)
                )
                low_streak[s.key] = low_streak[s.key] + 1 if acc <= 0.25 else 0
                if (s.key, build) not in failures:
                    wrong = [(i, g, "sampled") for i, g in zip(insts, got, strict=True) if g != i.answer]
                    wrong += [(i, g, "decoy") for i, g in zip(adv, got_adv, strict=True) if g != i.answer]
                    if wrong:
                        inst, given, kind = wrong[0]
                        confirmed = None
                        if n <= confirm_up_to:
                            confirmed = answer_model(model, [inst.tokens], device="cpu")[0] == given
                        failures[(s.key, build)] = {
                            "n": n,
                            "kind": kind,
                            "hops": inst.hops,
                            "expected": inst.answer,
                            "given": given,
                            "tokens": list(inst.tokens),
                            "confirmed_by_full_module": confirmed,
                        }
    return LengthStudy(rows, certificates, failures)


@functools.cache
def standard_study(quick: bool = False) -> LengthStudy:
    """The study the claims and the figure report (cached per process): every setting; the
    ``distractors`` build (quick) or all three builds; :func:`default_lengths` and :func:`default_count`."""
    builds = ("distractors",) if quick else BUILDS
    return length_study(length_settings(), default_lengths(quick), builds, lambda n: default_count(n, quick))


def log_ticks(lengths: Sequence[int]) -> list[int]:
    """Powers of ten within the lengths' range (figure ticks)."""
    lo, hi = math.log10(min(lengths)), math.log10(max(lengths))
    return [10**k for k in range(math.ceil(lo), math.floor(hi) + 1)]

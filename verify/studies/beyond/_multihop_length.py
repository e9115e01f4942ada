"""Length generalisation of the exported multi-hop checkpoints: the certified horizon, accuracy on [A]'s
task generators from 17 tokens to ``10^4``, and the exact first length where a model really fails.

Settings (:func:`length_settings`): the programs ``ropeproof export-model gptj TASK --solver S`` writes
(:func:`~ropeproof.verify.studies.beyond._checkpoint_solvers.checkpoint_spec`, 12 layers with 4 hop layers,
logit
scale 1000, cyclic answer codes, built for the study's longest length, so the vocabulary holds every
input the study asks), for both tasks and the three solvers:

- ``paper``: [A]'s one-plane Index (``0.8660``) or Retrieval (``0.0027``) on the width-128 spectrum;
- ``smallest``: the width-6 (number) and width-8 (letter) checkpoint (``theta = 1``);
- ``best``: the default export, width 128, the best heads on GPT-J's spectrum and orthogonal letter codes.

For each length and build (:mod:`ropeproof.verify.measure._task_lengths`) the study answers sampled inputs
with
:func:`~ropeproof.verify.kernel._chain_readout.long_answers` (float64) and the same inputs with decoys
(:func:`~ropeproof.verify.measure._task_lengths.with_decoys`). Accuracies carry anytime-valid 95% intervals
(beta-binomial confidence sequences, :mod:`ropeproof.verify.measure._statistics`): within the certified
horizon every input of a row is answered (each must be right); past it a row draws :data:`LOOK` inputs,
then more (:func:`~ropeproof.verify.measure._statistics.look_sizes`), and stops as soon as its interval
lies below 25% (its wrong answers are found by then), else at the length's count. ``inputs`` is the
number each row used. A setting stops after ``stop_after`` consecutive grid lengths whose interval lies
below 25%.

**Exact first failures.** The lengths of the grid are a grid: when a grid length first gives a wrong
answer, every length between the last all-correct grid length and that grid length is probed the same
way, in order (failures need not be monotone in ``n``, so bisection could skip the first; lengths the
certificate covers are probed too, where a wrong answer would be a violation of the proof), and the first
length with a wrong answer is reported with its witness: the tokens, expected and given answer, and
whether the full module confirms it. The searched range is recorded; ``exact`` is false only if the
search was cut at ``search_limit`` lengths. Every witness token is in the checkpoint's vocabulary
(checked), so the exported checkpoint can be asked the same input. Rows of the grid carry ``grid =
True``, rows of the search ``grid = False``; a summary's ``grid_all_correct_up_to`` is a grid result,
``first_failure`` the first length where a *sampled* input failed (no length skipped). It is the family's
first failure only where it meets the certificate (``horizon + 1``); :func:`first_failure_reading` says
which, in each summary and side-by-side row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ropeproof.constructions._multihop_compile import CompiledModel, compile_program
from ropeproof.constructions._paper import TASK_LENGTH
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.verify.kernel._chain_readout import long_answers
from ropeproof.verify.kernel._multilayer import answer_model
from ropeproof.verify.measure._statistics import SequentialProportion, sample_until_decided
from ropeproof.verify.measure._task_lengths import BUILDS, chain_positions, long_task, with_decoys
from ropeproof.verify.measure._tasks import TaskInstance
from ropeproof.verify.measure.exact._multihop_certified import (
    MultiHopCertificate,
    certificate_steps,
    certified_horizon,
    check_searched_as,
)
from ropeproof.verify.studies.beyond._checkpoint_solvers import (
    DEFAULT_CERTIFICATES,
    DEFAULT_CHECKPOINTS,
    DEFAULT_MAX_LENGTH,
    CheckpointSpec,
    checkpoint_spec,
)

__all__ = [
    "HOPS",
    "LAYERS",
    "STANDARD_STUDY",
    "WIDTH",
    "LengthRow",
    "LengthSetting",
    "LengthStudy",
    "chain_positions",
    "default_count",
    "default_lengths",
    "first_failure_reading",
    "length_settings",
    "length_study",
    "log_ticks",
    "standard_study",
    "with_decoys",
]

HOPS = 4
LAYERS = 12
WIDTH = 128
"""The exported checkpoints' width ([A]'s 128); the ``smallest`` solver's program is the same at any width."""
STOP_LEVEL = 0.25
"""A setting stops after ``stop_after`` grid lengths whose 95% interval lies below this accuracy."""
LOOK = 8
"""Past the certified horizon, a row looks after its first ``LOOK`` inputs and stops once decided below
:data:`STOP_LEVEL`."""

AnswerFn = Callable[[CompiledModel, Sequence[Sequence[str]]], list[str]]
"""``answer(model, sequences) -> answers``: how the study answers inputs (default :func:`long_answers`)."""


@dataclass(frozen=True)
class LengthSetting:
    """A checkpoint of the study: ``key``, ``task``, ``solver`` and a legend ``label``."""

    key: str
    task: str
    solver: str
    label: str

    def spec(self, max_length: int) -> CheckpointSpec:
        """The GPT-J checkpoint's program, built for inputs up to ``max_length`` tokens."""
        return checkpoint_spec(self.task, self.solver, "gptj", WIDTH, max(int(max_length), 3), HOPS, LAYERS)


def length_settings() -> list[LengthSetting]:
    """The six settings of the module docstring, number task first."""
    return [
        LengthSetting("number-paper", "number", "paper", "[A]'s one-plane Index (theta = 0.866)"),
        LengthSetting("number-smallest", "number", "smallest", "width-6 checkpoint (theta = 1)"),
        LengthSetting("number-best", "number", "best", "best checkpoint (width 128)"),
        LengthSetting("letter-paper", "letter", "paper", "[A]'s one-plane Retrieval (theta = 0.0027)"),
        LengthSetting("letter-smallest", "letter", "smallest", "width-8 checkpoint (theta = 1)"),
        LengthSetting("letter-best", "letter", "best", "best checkpoint (width 128, orthogonal codes)"),
    ]


# ---------------------------------------------------------------------------------------- the study


@dataclass
class LengthRow:
    """Accuracy of one setting at one length and build, with anytime-valid 95% intervals; ``grid`` is false
    for the lengths probed by the search for an exact first failure."""

    setting: str
    task: str
    build: str
    n: int
    inputs: int
    accuracy: float
    decoy_accuracy: float
    accuracy_ci: tuple[float, float]
    decoy_ci: tuple[float, float]
    certified_horizon: int
    certified: bool
    grid: bool = True

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["accuracy_ci"] = list(self.accuracy_ci)
        out["decoy_ci"] = list(self.decoy_ci)
        return out


def first_failure_reading(horizon: int, first_failure: int | None) -> str:
    """What a first failure found by the search establishes, no more: where it is ``horizon + 1`` the
    certificate proves every shorter length, so it is the first failure of the family; elsewhere the search
    answered sampled inputs of the float64 model at every length (none skipped) and lengths between the
    horizon and it are neither proved nor seen to fail."""
    if first_failure is None:
        return "no failure found by the sampled search on the float64 model"
    if first_failure == horizon + 1:
        return "first failure found; no failure below it among lengths proved (the certificate reaches n - 1)"
    return (
        f"first failure found by a sampled search on the float64 model (no length skipped); lengths "
        f"{horizon + 1}..{first_failure - 1} are neither proved nor seen to fail"
    )


@dataclass
class LengthStudy:
    """Rows, the certificates (per setting), the exact first failures (per setting and build) and, per
    setting, the certificate's horizon with each refinement left out (:func:`certificate_steps`)."""

    rows: list[LengthRow]
    certificates: dict[str, MultiHopCertificate]
    failures: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def first_failure_n(self, setting: str, build: str) -> int | None:
        f = self.failures.get((setting, build))
        return None if f is None else int(f["n"])

    def summary(self) -> dict[str, Any]:
        """Per setting: the certified horizon, and per build the grid, the exact first failure and the gap
        between them (lengths neither proved nor seen to fail: ``first_failure - horizon - 1``)."""
        out: dict[str, Any] = {}
        for key, cert in self.certificates.items():
            rows = [r for r in self.rows if r.setting == key]
            measured = {}
            for b in sorted({r.build for r in rows}):
                grid = [r for r in rows if r.build == b and r.grid]
                fail = self.failures.get((key, b))
                measured[b] = {
                    "grid_max_n": max((r.n for r in grid), default=None),
                    "grid_all_correct_up_to": _all_correct_up_to(grid),
                    "first_failure": fail,
                    "gap_to_certificate": None if fail is None else int(fail["n"]) - cert.horizon - 1,
                    "first_failure_reading": first_failure_reading(
                        cert.horizon, None if fail is None else int(fail["n"])
                    ),
                }
            out[key] = {
                "label": self.labels.get(key, key),
                "certified_horizon": cert.horizon,
                "certificate_complete": cert.complete,
                "certificate_steps": self.steps.get(key),
                "measured": measured,
            }
        return out

    def side_by_side(self) -> dict[str, dict[str, Any]]:
        """``setting/build -> {certified_horizon, first_failure, gap}``: the report's comparison."""
        out = {}
        for key, s in self.summary().items():
            for b, m in s["measured"].items():
                fail = m["first_failure"]
                out[f"{key}/{b}"] = {
                    "certified_horizon": s["certified_horizon"],
                    "first_failure": None if fail is None else fail["n"],
                    "gap": m["gap_to_certificate"],
                    "reading": m["first_failure_reading"],
                }
        return out

    def to_json(self) -> dict[str, Any]:
        """What the claims and figures read, as JSON data: ``rows`` (:meth:`LengthRow.as_dict`), ``summary``,
        ``side_by_side`` and ``failures`` (one entry per setting and build: ``setting``, ``build`` and the
        witness)."""
        return {
            "rows": [r.as_dict() for r in self.rows],
            "summary": self.summary(),
            "side_by_side": self.side_by_side(),
            "failures": [{"setting": k, "build": b, "witness": f} for (k, b), f in self.failures.items()],
        }


def _all_correct_up_to(rows: list[LengthRow]) -> int | None:
    best = None
    for r in sorted(rows, key=lambda r: r.n):
        if r.accuracy < 1 or r.decoy_accuracy < 1:
            break
        best = r.n
    return best


def default_lengths(quick: bool) -> list[int]:
    """Lengths of the study's grid: 17 to 64 (quick) or 17 to 10^4."""
    if quick:
        return [17, 24, 32, 64]
    return [17, 24, 32, 48, 64, 128, 256, 512, 850, 1024, 2048, 4096, 10000]


def default_count(n: int, quick: bool) -> int:
    """Inputs per length: fewer at the longest lengths."""
    if quick:
        return 6
    return 32 if n <= 1024 else 8 if n <= 4096 else 4


@dataclass
class _Probe:
    row: LengthRow
    wrong: list[tuple[TaskInstance, str, str]]


def _probe(
    s: LengthSetting,
    model: CompiledModel,
    cert: MultiHopCertificate,
    build: str,
    n: int,
    count: int,
    seed: int,
    answer: AnswerFn,
    grid: bool,
) -> _Probe:
    insts = long_task(s.task, count, n, (1, 2, 3, 4), build, seed + n)
    seq, seq_adv = SequentialProportion(), SequentialProportion()
    used: list[TaskInstance] = []
    got: list[str] = []
    used_adv: list[TaskInstance] = []
    got_adv: list[str] = []

    def measure(done: int, upto: int) -> None:
        part = insts[done:upto]
        adv = [with_decoys(model, i) for i in part]
        ans, ans_adv = answer(model, [i.tokens for i in part]), answer(model, [i.tokens for i in adv])
        seq.add([g == i.answer for g, i in zip(ans, part, strict=True)])
        seq_adv.add([g == i.answer for g, i in zip(ans_adv, adv, strict=True)])
        used.extend(part)
        got.extend(ans)
        used_adv.extend(adv)
        got_adv.extend(ans_adv)

    # where the certificate holds, every input is checked; past it a row stops once its interval lies
    # below STOP_LEVEL (it has wrong answers then, so no first failure is missed)
    first = count if n <= cert.horizon else min(count, LOOK)
    sample_until_decided(first, count, measure, lambda: seq.decide(STOP_LEVEL) == "below")
    est, est_adv = seq.estimate(), seq_adv.estimate()
    row = LengthRow(
        s.key,
        s.task,
        build,
        n,
        est.n,
        est.value,
        est_adv.value,
        est.bounds,
        est_adv.bounds,
        cert.horizon,
        cert.complete,
        grid,
    )
    wrong = [(i, g, "sampled") for i, g in zip(used, got, strict=True) if g != i.answer]
    wrong += [(i, g, "decoy") for i, g in zip(used_adv, got_adv, strict=True) if g != i.answer]
    return _Probe(row, wrong)


def _witness(
    model: CompiledModel, probe: _Probe, confirm_up_to: int, searched: tuple[int, int], exact: bool
) -> dict[str, Any]:
    inst, given, kind = probe.wrong[0]
    vocab = set(model.tokens)
    outside = sorted({t for t in inst.tokens} - vocab)
    if outside:  # pragma: no cover - the study builds every model for its longest input
        raise InputError(f"witness tokens {outside[:5]} are outside the checkpoint's vocabulary")
    confirmed = None
    if probe.row.n <= confirm_up_to:
        confirmed = answer_model(model, [inst.tokens], device="cpu")[0] == given
    return {
        "n": probe.row.n,
        "exact": exact,
        "searched": list(searched),
        "kind": kind,
        "hops": inst.hops,
        "expected": inst.answer,
        "given": given,
        "tokens": list(inst.tokens),
        "in_vocabulary": True,
        "confirmed_by_full_module": confirmed,
    }


def length_study(
    settings: Sequence[LengthSetting] | None = None,
    lengths: Sequence[int] | None = None,
    builds: Sequence[str] = ("distractors",),
    count: Callable[[int], int] | None = None,
    seed: int = 0,
    stop_after: int = 2,
    confirm_up_to: int = 2048,
    answer: AnswerFn | None = None,
    search_limit: int = 4096,
    with_steps: bool = True,
    compiled: Mapping[str, tuple[CompiledModel, MultiHopCertificate]] | None = None,
) -> LengthStudy:
    """Run the study (module docstring) and return its rows, certificates and exact first failures.
    ``answer`` replaces how inputs are answered (tests plant failures with it). ``compiled``: per
    setting key, its program already compiled (built for the longest length) and certified
    (:func:`~ropeproof.verify.measure.exact._multihop_certified.certified_horizon` to the longest length),
    as the run's store holds them; the other settings are compiled and certified here."""
    settings = list(settings if settings is not None else length_settings())
    lengths = sorted({int(n) for n in (lengths if lengths is not None else default_lengths(False))})
    bad = sorted(set(builds) - set(BUILDS))
    if bad or not builds:
        raise InputError(f"builds {bad or builds} unknown or empty; accepted: {list(BUILDS)}")
    if not lengths or lengths[0] < TASK_LENGTH:
        raise InputError(f"lengths must be non-empty and >= {TASK_LENGTH} ([A]'s length)")
    count = count or (lambda n: default_count(n, False))
    answer = answer or (lambda m, seqs: long_answers(m, seqs))
    top = lengths[-1]
    given = dict(compiled or {})
    models, certificates = {}, {}
    for s in settings:
        if s.key in given:
            models[s.key], certificates[s.key] = given[s.key]
            check_searched_as(certificates[s.key], models[s.key], HOPS, max(top, 3))
        else:
            models[s.key] = compile_program(s.spec(top).program)
            certificates[s.key] = certified_horizon(models[s.key], HOPS, max_n=max(top, 3))
    steps = (
        {
            s.key: certificate_steps(models[s.key], HOPS, max_n=max(top, 3), known=(certificates[s.key],))
            for s in settings
        }
        if with_steps
        else {}
    )
    rows: list[LengthRow] = []
    failures: dict[tuple[str, str], dict[str, Any]] = {}
    for build in builds:
        for s in settings:
            model, cert = models[s.key], certificates[s.key]
            low_streak, last_clean = 0, TASK_LENGTH - 1
            for n in lengths:
                if low_streak >= stop_after:
                    break
                probe = _probe(s, model, cert, build, n, count(n), seed, answer, True)
                rows.append(probe.row)
                low = probe.row.accuracy_ci[1] < STOP_LEVEL
                low_streak = low_streak + 1 if low else 0
                if (s.key, build) in failures:
                    continue
                if not probe.wrong:
                    last_clean = n
                    continue
                start = last_clean + 1  # proved lengths too: a failure there would expose the proof
                stop = min(n - 1, start + search_limit - 1)
                exact = stop >= n - 1
                found = None
                for m in range(start, stop + 1):  # every length: failures need not be monotone
                    extra = _probe(s, model, cert, build, m, count(m), seed, answer, False)
                    rows.append(extra.row)
                    if extra.wrong:
                        found = extra
                        break
                hit = found or probe
                failures[(s.key, build)] = _witness(
                    model, hit, confirm_up_to, (start, n), exact or found is not None
                )
    rows.sort(key=lambda r: (r.setting, r.build, r.n))
    return LengthStudy(rows, certificates, failures, steps, {s.key: s.label for s in settings})


def standard_study(quick: bool = False, store: ResultStore | None = None) -> LengthStudy:
    """The study the claims and the figures report: every setting; the ``distractors`` build (quick) or
    all three builds; :func:`default_lengths` and :func:`default_count`. With a ``store``, a setting
    whose program is the default checkpoint's (the ``best`` solver when the longest length is the default
    design length) takes its compiled model and certificate from it
    (:data:`~ropeproof.verify.studies.beyond._checkpoint_solvers.DEFAULT_CHECKPOINTS` and
    ``DEFAULT_CERTIFICATES``, GPT-J), which other claims share."""
    builds = ("distractors",) if quick else BUILDS
    lengths = default_lengths(quick)
    compiled = {}
    if store is not None and max(lengths) == DEFAULT_MAX_LENGTH:
        for s in length_settings():
            if s.solver == "best":
                args = {"task": s.task, "max_length": DEFAULT_MAX_LENGTH, "hops": HOPS, "layers": LAYERS}
                _spec, model = store.get(DEFAULT_CHECKPOINTS, **args)["gptj"]
                compiled[s.key] = (model, store.get(DEFAULT_CERTIFICATES, **args)["gptj"])
    return length_study(
        length_settings(), lengths, builds, lambda n: default_count(n, quick), compiled=compiled
    )


@data_product("multihop.standard-length-study")
def STANDARD_STUDY(store: ResultStore, quick: bool) -> dict[str, Any]:
    """:func:`standard_study` as :meth:`LengthStudy.to_json` data (the claim ``multihop.length`` and the
    figures ``multihop_length`` and ``training_length`` read it from the run's store)."""
    return standard_study(quick, store).to_json()


def log_ticks(lengths: Sequence[int]) -> list[int]:
    """Powers of ten within the lengths' range (figure ticks)."""
    lo, hi = math.log10(min(lengths)), math.log10(max(lengths))
    return [10**k for k in range(math.ceil(lo), math.floor(hi) + 1)]

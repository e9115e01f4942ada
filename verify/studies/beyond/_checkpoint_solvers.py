"""The programs ``ropeproof export-model`` writes: [A]'s solvers placed on a checkpoint's fixed spectrum.

A checkpoint in [A]'s shape (12 layers, one head per layer, width ``W`` = 128 by default,
``docs/theory.md`` section 6) cannot choose its RoPE frequencies: GPT-J rotates plane ``k`` of its
``rotary_dim`` dims at ``10000^(-2k / rotary_dim)`` and leaves the dims past ``rotary_dim`` unrotated
(``theta = 0``, GPT-J's partial rotary, its own config option); LLaMA rotates every dim at
``rope_theta^(-2k / head_dim)``. :func:`checkpoint_spec` builds, per ``solver``, a program whose every
plane sits on that spectrum, with the export options that put it there:

- ``"best"`` (the default): the Index (number task) and positional Reflexive layers use the best head on
  the spectrum at the design length ``max_length`` (:func:`~ropeproof.verify.studies.beyond._spectrum_search.
  best_on_spectrum`: the amplitudes that maximise the worst-case margin, a linear program solved
  exactly), with at most as many planes as the width leaves room for. The letter task's Retrieval layers
  use orthogonal letter codes (margin 1 at every length,
  :mod:`ropeproof.verify.studies.beyond._letter_codes`):
  on GPT-J at ``theta = 0`` on the last ``2 P`` dims (``rotary_dim = W - 2P``, ``P = 4`` planes for 8
  letters), the Reflexive layers on the spectrum of the rotating dims; on LLaMA, which rotates every dim,
  on the ``P`` slowest planes, with ``rope_theta`` the smallest power of ten ``>= 10^4`` that keeps
  ``(max_length - 1) theta`` of every code plane below :data:`CODE_DRIFT` radians.
- ``"paper"``: [A]'s one-plane Index (``0.8660``) or one-plane Retrieval (``0.0027``, [A]'s code) on the
  spectrum's nearest plane (:func:`~ropeproof.verify.studies.beyond._spectrum_search.nearest_plane`: ``k = 1``
  and ``k = 41`` of 128), with the ``best`` Reflexive layers, so the choice of hop layer is what differs.
- ``"smallest"``: the program of the smallest GPT-J width
  (:func:`~ropeproof.constructions._multihop_programs.checkpoint_program`: ``theta = 1`` Index and
  Reflexive, Retrieval on ``10000^(-6/8) = 0.001``; widths 6 and 8), exported at ``width`` (any width
  whose spectrum holds its planes, 6 and 8 included).

Every solver's number vocabulary has the integers ``1 .. max(16, max_length - 1)``, so every input up to
``max_length`` tokens of every build can be written
(:func:`~ropeproof.verify.measure._task_lengths.required_max_int`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ropeproof.constructions._multihop_programs import (
    LOGIT_SCALE,
    checkpoint_program,
    letter_program,
    number_program,
)
from ropeproof.constructions._paper import (
    ALPHABET_SIZE,
    INDEX_THETA,
    NUMBER_TASK_LETTERS,
    NUMBER_TASK_MAX_INT,
    RETRIEVAL_THETA,
    TASKS,
)
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore, object_product
from ropeproof.machinery._validate import integer
from ropeproof.theory._architectures import ARCHITECTURES, GPTJ_BASE, architecture
from ropeproof.theory._multihop import MultiHopProgram, code_dims
from ropeproof.verify.interop.hf._converters import CONVERTERS
from ropeproof.verify.studies.beyond._spectrum_search import (
    best_on_spectrum,
    nearest_plane,
    spectrum_frequencies,
)

SOLVERS: tuple[str, ...] = ("best", "paper", "smallest")
"""The programs a checkpoint can carry (module docstring)."""
DEFAULT_WIDTH = 128
"""[A]'s width: ``n_embd = head_dim = 128``, one head per layer."""
DEFAULT_MAX_LENGTH = 10_000
"""The longest prompt a checkpoint is built for by default (its position table and vocabulary)."""
DEFAULT_BASE = GPTJ_BASE
"""The spectrum's base where the architecture lets it be chosen and nothing else decides: 10000, GPT-J's
fixed one (so the number task's programs are the same on both)."""
CODE_DRIFT = 2.0**-10
"""LLaMA letter checkpoints: the largest angle ``(max_length - 1) theta`` a code plane may turn."""
MIN_LLAMA_THETA = 1e4


def number_max_int(max_length: int) -> int:
    """The number vocabulary's largest integer: ``max(16, max_length - 1)`` (any pointer that fits)."""
    return max(NUMBER_TASK_MAX_INT, int(max_length) - 1)


@dataclass(frozen=True)
class CheckpointSpec:
    """A program and where it sits in a checkpoint: ``rotary_dim`` (GPT-J: the rotating dims, ``width``
    unless pass-through planes are needed; LLaMA: ``head_dim = width``) and ``rope_theta``."""

    task: str
    solver: str
    arch: str
    width: int
    max_length: int
    program: MultiHopProgram
    rotary_dim: int
    rope_theta: float
    notes: tuple[str, ...] = ()
    design: dict[str, Any] = field(default_factory=dict)

    def export_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~ropeproof.verify.interop.hf._model_export.export_model`: the width,
        and what the architecture lets the export choose (``rotary_dim`` with partial rotary, ``head_dim``
        where the config sets it apart from the width, ``rope_theta`` where the base is free)."""
        facts = architecture(self.arch)
        out: dict[str, Any] = {"max_positions": self.max_length, "hidden_size": self.width}
        if facts.partial_rotary:
            out["rotary_dim"] = self.rotary_dim
        if facts.separate_head_dim:
            out["head_dim"] = self.width
        if facts.fixed_base is None:
            out["rope_theta"] = self.rope_theta
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "solver": self.solver,
            "arch": self.arch,
            "width": self.width,
            "max_length": self.max_length,
            "rotary_dim": self.rotary_dim,
            "rope_theta": self.rope_theta,
            "notes": list(self.notes),
            "design": self.design,
        }


def _check(task: str, solver: str, arch: str, width: int, max_length: int) -> None:
    if task not in TASKS:
        raise InputError(f"task={task!r} is unknown; accepted: {list(TASKS)}")
    if solver not in SOLVERS:
        raise InputError(f"solver={solver!r} is unknown; accepted: {list(SOLVERS)}")
    if arch not in ARCHITECTURES:
        raise InputError(f"arch={arch!r} is unknown; accepted: {list(ARCHITECTURES)}")
    integer(width, "width", low=4, even=True)
    integer(max_length, "max_length", low=3, high=1 << 20)


def _reflexive_room(task: str, channel_code: str, reflexive: str) -> int:
    """Residual dims a program uses besides the Index planes' pointer (number task)."""
    answers = NUMBER_TASK_LETTERS if task == "number" else ALPHABET_SIZE * 8
    return 1 + code_dims(channel_code, answers) + (2 if reflexive == "symbolic" else 0)


def _llama_letter_theta(width: int, planes: int, max_length: int) -> float:
    """The smallest power of ten ``>= 10^4`` whose code planes (the ``planes`` slowest of ``width``) turn
    at most :data:`CODE_DRIFT` over ``max_length`` positions."""
    k0 = width // 2 - planes
    exponent = 4
    while True:
        theta = 10.0**exponent
        if (max_length - 1) * spectrum_frequencies(theta, width)[k0] <= CODE_DRIFT:
            return theta
        exponent += 1


def checkpoint_spec(
    task: str,
    solver: str = "best",
    arch: str = "gptj",
    width: int = DEFAULT_WIDTH,
    max_length: int = DEFAULT_MAX_LENGTH,
    hops: int = 4,
    layers: int = 12,
    reflexive: str = "positional",
    channel_code: str = "cyclic",
    logit_scale: float = LOGIT_SCALE,
) -> CheckpointSpec:
    """The program of ``solver`` for ``task`` on ``arch`` at ``width``, built for prompts up to
    ``max_length`` tokens (module docstring)."""
    _check(task, solver, arch, width, max_length)
    max_int = number_max_int(max_length)
    common = {"logit_scale": logit_scale, "channel_code": channel_code}
    if solver == "smallest":
        program = checkpoint_program(
            task, hops, layers, reflexive, channel_code, logit_scale, max_int=max_int
        )
        return CheckpointSpec(task, solver, arch, width, max_length, program, width, DEFAULT_BASE)
    if reflexive != "positional":
        raise InputError(
            f"reflexive={reflexive!r}: the {solver!r} solver uses positional Reflexive layers on the "
            "spectrum (a symbolic one ties on repeated tokens at theta = 0); use --solver smallest"
        )
    letters_planes = (ALPHABET_SIZE + 1) // 2
    notes: list[str] = []
    design: dict[str, Any] = {}
    if task == "number":
        rotary, base = width, DEFAULT_BASE  # LLaMA uses the same spectrum: rope_theta = 10000, head_dim = W
        room = (width - 1 - _reflexive_room(task, channel_code, reflexive)) // 2
        if room < 1:
            raise InputError(f"width={width} leaves no room for an Index plane; use a width >= 6")
        best = best_on_spectrum(base, rotary, max_length, max_planes=room)
        design["reflexive"] = best.as_dict()
        if solver == "best":
            index = best.planes
            design["index"] = best.as_dict()
        else:
            k = nearest_plane(base, rotary, INDEX_THETA)
            index = ((float(spectrum_frequencies(base, rotary)[k]), 1.0),)
            design["index"] = {"k": k, "theta": index[0][0], "paper_theta": INDEX_THETA}
        program = number_program(hops, layers, index, "positional", best.planes, max_int=max_int, **common)
        return CheckpointSpec(task, solver, arch, width, max_length, program, rotary, base, (), design)
    # letter task
    if solver == "paper":
        rotary, base = width, DEFAULT_BASE
        best = best_on_spectrum(base, rotary, max_length)
        k = nearest_plane(base, rotary, RETRIEVAL_THETA)
        theta = float(spectrum_frequencies(base, rotary)[k])
        design = {
            "retrieval": {"k": k, "theta": theta, "paper_theta": RETRIEVAL_THETA},
            "reflexive": best.as_dict(),
        }
        program = letter_program(hops, layers, theta, "one-plane", "positional", best.planes, **common)
        return CheckpointSpec(task, solver, arch, width, max_length, program, rotary, base, (), design)
    facts = architecture(arch)
    if facts.partial_rotary and facts.fixed_base is not None:  # GPT-J: the code past rotary_dim
        rotary, base = width - 2 * letters_planes, facts.fixed_base
        if rotary < 2:
            raise InputError(
                f"width={width} leaves no rotating dims beside the letter code; use a width >= "
                f"{2 * letters_planes + 2}"
            )
        best = best_on_spectrum(base, rotary, max_length)
        code: Any = 0.0
        notes.append(
            f"rotary_dim {rotary} of {width}: {facts.label} leaves dims {rotary}..{width - 1} unrotated "
            f"(partial rotary, a standard {facts.label} option); the Retrieval layers' orthogonal letter "
            "code sits there at theta = 0"
        )
        design["retrieval"] = {"code": "orthogonal", "theta": 0.0, "dims": [rotary, width - 1]}
    elif facts.fixed_base is None:  # LLaMA: the code on the slowest planes of a chosen base
        rotary = width
        base = _llama_letter_theta(width, letters_planes, max_length)
        spectrum = spectrum_frequencies(base, width)
        code_ks = list(range(width // 2 - letters_planes, width // 2))
        best = best_on_spectrum(base, width, max_length, allowed=range(width // 2 - letters_planes))
        code = [float(spectrum[k]) for k in code_ks]
        notes.append(
            f"rope_theta {base:g}: the orthogonal letter code sits on the {letters_planes} slowest planes "
            f"(k = {code_ks[0]}..{code_ks[-1]}), which turn at most {CODE_DRIFT:g} rad over {max_length} "
            "positions"
        )
        design["retrieval"] = {"code": "orthogonal", "ks": code_ks, "thetas": code}
    else:
        raise InputError(
            f"arch={arch!r}: {facts.label} fixes its base and rotates every dim, so the best letter solver "
            "has no home for its code; use --solver paper or smallest"
        )
    design["reflexive"] = best.as_dict()
    program = letter_program(hops, layers, code, "orthogonal", "positional", best.planes, **common)
    return CheckpointSpec(task, solver, arch, width, max_length, program, rotary, base, tuple(notes), design)


@object_product("beyond.checkpoint-model")
def CHECKPOINT_MODEL(
    store: ResultStore, task: str, hops: int = 4, layers: int = 12, reflexive: str = "positional"
) -> Any:
    """The compiled program of the smallest checkpoint (:func:`checkpoint_program`: widths 6 and 8) as a
    product of the run's store: the multi-hop claims, the local llm-eval models and the per-layer figure
    compile it once (read-only)."""
    from ropeproof.constructions._multihop_compile import compile_program

    return compile_program(checkpoint_program(task, hops, layers, reflexive=reflexive))


@object_product("beyond.default-checkpoints")
def DEFAULT_CHECKPOINTS(
    store: ResultStore, task: str, max_length: int = DEFAULT_MAX_LENGTH, hops: int = 4, layers: int = 12
) -> dict[str, tuple[CheckpointSpec, Any]]:
    """``{arch: (spec, compiled model)}`` for every registered converter
    (:data:`~ropeproof.verify.interop.hf._converters.CONVERTERS`: ``gptj`` and ``llama``): what
    ``ropeproof export-model ARCH TASK`` compiles by default (the best solver, width 128), each program
    compiled once (a program is fixed by its task and spectrum, so GPT-J and LLaMA share the number
    program; read-only)."""
    from ropeproof.constructions._multihop_compile import compile_program

    out: dict[str, tuple[CheckpointSpec, Any]] = {}
    compiled: dict[tuple[int, float], Any] = {}
    for arch in CONVERTERS:  # every registered architecture
        spec = checkpoint_spec(task, "best", arch, max_length=max_length, hops=hops, layers=layers)
        key = (spec.rotary_dim, spec.rope_theta)
        if key not in compiled:
            compiled[key] = compile_program(spec.program)
        out[arch] = (spec, compiled[key])
    return out


@object_product("beyond.default-certificates")
def DEFAULT_CERTIFICATES(
    store: ResultStore, task: str, max_length: int = DEFAULT_MAX_LENGTH, hops: int = 4, layers: int = 12
) -> dict[str, Any]:
    """``{arch: certificate}``: :func:`~ropeproof.verify.measure.exact._multihop_certified.certified_horizon`
    of each compiled model of :data:`DEFAULT_CHECKPOINTS` with ``hops`` hops, searched to ``max_length``
    (what ``export_model`` certifies for a checkpoint of ``max_length`` positions), each distinct compiled
    model certified once (architectures that share the program share the certificate; read-only)."""
    from ropeproof.verify.measure.exact._multihop_certified import certified_horizon

    by_arch = store.get(DEFAULT_CHECKPOINTS, task=task, max_length=max_length, hops=hops, layers=layers)
    done: dict[int, Any] = {}
    out: dict[str, Any] = {}
    for arch, (_spec, model) in by_arch.items():
        if id(model) not in done:
            done[id(model)] = certified_horizon(model, hops, max_n=max_length)
        out[arch] = done[id(model)]
    return out

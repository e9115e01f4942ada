"""[A]'s multi-hop solvers as symbolic programs (``docs/theory.md`` section 6): Index (number task) or
Retrieval (letter task) layers, then Reflexive layers.

Residual layouts (every dimension labelled; ``K`` Index planes, ``P`` letter-code planes):

- :func:`number_program`: ``pointer`` (``2K`` dims, content): the Index query of the token in every
  Index plane, ``rho(-s theta_k) v`` for integer ``s`` and ``v`` for a letter (the ``s = 0`` pointer, so a
  letter attends to itself); ``one`` (constant 1); optional ``self`` (2 dims, content: the token's
  position in the vocabulary on a circle, read by a symbolic Reflexive layer); ``channel`` (the letter
  channel: a letter's code, integers empty).
- :func:`letter_program`: ``key`` and ``query`` (``2P`` dims each, content): the letter code of a pair's
  left letter, and of its right letter ((letter, letter) pairs) or its own left letter ((letter, integer)
  pairs, which so find themselves); ``one``; optional ``self``; ``channel`` (the answer channel:
  a (letter, integer) pair's code, (letter, letter) pairs empty).

Layers: an Index layer reads its query from ``pointer`` and its key ``v`` from ``one`` (logit
``sum_k a_k cos((s - d) theta_k)`` for a key ``d`` back: T_Index of [A] Thm 3.1); a Retrieval layer
reads ``query`` against ``key`` (T_Retrieval, section 4's signs); a positional Reflexive layer reads
``v`` from ``one`` on both sides (logit ``sum_k a_k cos(d theta_k)``, largest at ``d = 0``); a symbolic
Reflexive layer reads ``self`` on both sides (largest on tokens equal to its own). Every value copies
the channel (weight 1). The readout unembeds the channel with the answer codes.

Letter codes (``code``): ``"one-plane"`` ([A]: letter ``c`` at angle ``c omega``, ``omega = 2 pi /
|ALPH|``, one plane at ``theta``) or ``"orthogonal"`` (letter ``i`` in plane ``i // 2`` at phase
``(i mod 2) pi / 2``: orthonormal letters on ``ceil(|ALPH| / 2)`` planes, all at ``theta``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp

from ropeproof.constructions._paper import (
    ALPHABET_SIZE,
    INDEX_THETA,
    LETTER_TASK_MAX_INT,
    NUMBER_TASK_LETTERS,
    NUMBER_TASK_MAX_INT,
    RETRIEVAL_THETA,
    check_task,
    integer_tokens,
)
from ropeproof.machinery._errors import ConstructionError
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._architectures import GPTJ_BASE
from ropeproof.theory._construction import Plane, Token, letter_pair_tokens, letter_tokens
from ropeproof.theory._multihop import (
    CHANNEL_CODES,
    REFLEXIVE_VARIANTS,
    Feature,
    MultiHopProgram,
    ProgramLayer,
    Reader,
    cyclic_code,
    onehot_code,
)

LOGIT_SCALE = 1000.0
"""The working logit scale of the compiled multi-hop models (multiplies every layer's logits, which lie
in ``[-1, 1]`` for unit codes and amplitudes summing to 1)."""
LETTER_CODES: tuple[str, ...] = ("one-plane", "orthogonal")
"""Letter codes a Retrieval layer may use (module docstring)."""

Planes = Sequence[tuple[float, float]]
V_READ = sp.Matrix([[1], [0]])
"""Reads ``v = (1, 0)`` from the constant feature."""


def number_vocabulary(
    letters: int | Sequence[str] = NUMBER_TASK_LETTERS, max_int: int = NUMBER_TASK_MAX_INT
) -> list[Token]:
    """The number task's tokens in model order: the letters (codes ``phi = 0, 1, ..``), then the integers
    ``1 .. max_int``."""
    max_int = integer(max_int, "max_int", low=1, error=ConstructionError)
    return letter_tokens(letters) + integer_tokens(max_int)


def letter_vocabulary(alphabet: int = ALPHABET_SIZE, max_int: int = LETTER_TASK_MAX_INT) -> list[Token]:
    """The letter task's tokens in model order: for each left letter, its (letter, letter) pairs, then its
    (letter, integer) pairs ``1 .. max_int``."""
    alphabet = integer(alphabet, "alphabet", low=2, high=26, error=ConstructionError)
    max_int = integer(max_int, "max_int", low=1, error=ConstructionError)
    letters = letter_tokens(alphabet)
    out: list[Token] = []
    for left in letters:
        out.extend(letter_pair_tokens(left, letters))
        for s in range(1, max_int + 1):
            params = {"phi_left": left.params["phi"], "s": s}
            out.append(Token(f"{left.name}{s}", "pair", params, rule="pair_li"))
    return out


def _plane_pairs(name: str, planes: Planes) -> list[tuple[float, float]]:
    out = []
    for i, entry in enumerate(planes):
        if len(entry) != 2:
            raise ConstructionError(f"{name} entries must be (frequency, amplitude), got {entry!r}")
        f = real(entry[0], f"{name}[{i}] frequency", error=ConstructionError)
        a = real(entry[1], f"{name}[{i}] amplitude", low=0, low_open=True, error=ConstructionError)
        out.append((f, a))
    if not out:
        raise ConstructionError(f"{name} must list at least one (frequency, amplitude) plane")
    return out


def _check_layers(hops: int, layers: int) -> None:
    hops = integer(hops, "hops", low=1, note="the number of hop layers", error=ConstructionError)
    integer(layers, "layers", low=hops, note=f"hops={hops}", error=ConstructionError)


def _symbolic_planes(prefix: str, planes: list[tuple[float, float]]) -> tuple[list[Plane], dict]:
    syms = sp.symbols(f"theta_{prefix}0:{len(planes)}", real=True)
    params = {s: f for s, (f, _) in zip(syms, planes, strict=True)}
    return [Plane(s, sp.Rational(a)) for s, (_, a) in zip(syms, planes, strict=True)], params


def _with_ids(tokens: Sequence[Token]) -> tuple[Token, ...]:
    """The tokens with their vocabulary index as parameter ``id`` (read by the ``self`` feature)."""
    return tuple(Token(t.name, t.kind, {**t.params, "id": i}, t.rule) for i, t in enumerate(tokens))


def _plane_block(k: int, planes: int) -> sp.Matrix:
    """``[2, 2 * planes]`` matrix reading dims ``2k, 2k + 1``."""
    m = sp.zeros(2, 2 * planes)
    m[0, 2 * k] = m[1, 2 * k + 1] = 1
    return m


def _reflexive_layer(variant: str, planes: list[Plane]) -> ProgramLayer:
    if variant == "positional":
        readers = tuple(Reader("one", V_READ) for _ in planes)
    else:
        readers = tuple(Reader("self", sp.eye(2)) for _ in planes)
    return ProgramLayer("reflexive", tuple(planes), readers, readers, variant=variant)


def _self_feature(vocab: int) -> Feature:
    rule = {}
    for r in ("letter", "integer", "pair_ll", "pair_li"):
        rule[r] = lambda p, _v=vocab: cyclic_code(p["id"], _v)
    return Feature("self", ("self.x", "self.y"), "content", rule)


def _channel(code: str, size: int, prefix: str, rule: str, index_of) -> Feature:
    if code not in CHANNEL_CODES:
        raise ConstructionError(f"channel_code={code!r}; accepted: {CHANNEL_CODES}")
    labels = (
        (f"{prefix}.x", f"{prefix}.y") if code == "cyclic" else tuple(f"{prefix}={i}" for i in range(size))
    )
    make = cyclic_code if code == "cyclic" else onehot_code
    return Feature("channel", labels, "channel", {rule: lambda p: make(index_of(p), size)})


def _reflexive_setup(
    reflexive: str, reflexive_planes: Planes | None, default: list[tuple[float, float]]
) -> tuple[list[Plane], dict]:
    if reflexive not in REFLEXIVE_VARIANTS:
        raise ConstructionError(f"reflexive={reflexive!r}; accepted: {REFLEXIVE_VARIANTS}")
    if reflexive_planes is None:
        reflexive_planes = default if reflexive == "positional" else [(0.0, 1.0)]
    return _symbolic_planes("F", _plane_pairs("reflexive_planes", reflexive_planes))


def number_program(
    hops: int = 4,
    layers: int = 12,
    index_planes: Planes = ((INDEX_THETA, 1.0),),
    reflexive: str = "positional",
    reflexive_planes: Planes | None = None,
    letters: int | Sequence[str] = NUMBER_TASK_LETTERS,
    max_int: int = NUMBER_TASK_MAX_INT,
    logit_scale: float = LOGIT_SCALE,
    channel_code: str = "cyclic",
) -> MultiHopProgram:
    """``Index^hops`` then ``Reflexive^(layers - hops)`` on [A]'s number task (module docstring).

    ``index_planes``: ``(theta_k, a_k)`` of the Index layers (default [A]'s one plane at 0.8660);
    ``reflexive_planes``: of the Reflexive layers (default: the Index planes if positional, one
    ``theta = 0`` plane if symbolic). ``letters`` (120) and ``max_int`` (16) set the vocabulary.
    """
    _check_layers(hops, layers)
    iplanes = _plane_pairs("index_planes", index_planes)
    planes, params = _symbolic_planes("I", iplanes)
    rplanes, rparams = _reflexive_setup(reflexive, reflexive_planes, iplanes)
    tokens = _with_ids(number_vocabulary(letters, max_int))
    n_letters = sum(1 for t in tokens if t.rule == "letter")
    if n_letters < 2:
        raise ConstructionError("letters must give at least 2 letters (the answers)")
    k = len(planes)

    def pointer(p: Mapping[str, Any]) -> list[sp.Expr]:
        s = p.get("s", 0)
        return [v for pl in planes for v in (sp.cos(s * pl.freq), -sp.sin(s * pl.freq))]

    features = [
        Feature(
            "pointer",
            tuple(f"pointer.{i}.{c}" for i in range(k) for c in "xy"),
            "content",
            {"letter": pointer, "integer": pointer},
        ),
        Feature("one", ("one",), "constant", {"letter": lambda p: [1], "integer": lambda p: [1]}),
    ]
    if reflexive == "symbolic":
        features.append(_self_feature(len(tokens)))
    features.append(_channel(channel_code, n_letters, "letter", "letter", lambda p: p["phi"]))
    index_layer = ProgramLayer(
        "index",
        tuple(planes),
        tuple(Reader("pointer", _plane_block(i, k)) for i in range(k)),
        tuple(Reader("one", V_READ) for _ in range(k)),
    )
    program_layers = [index_layer] * hops + [_reflexive_layer(reflexive, rplanes)] * (layers - hops)
    readout = features[-1].rules
    return MultiHopProgram(
        name=f"number-{hops}hop-{layers}layer",
        task="number",
        tokens=tokens,
        generic={
            "letter": Token("X", "letter", {"phi": sp.Symbol("phi", integer=True), "id": sp.Symbol("id")}),
            "integer": Token("s", "integer", {"s": sp.Symbol("s", integer=True), "id": sp.Symbol("id")}),
        },
        features=tuple(features),
        layers=tuple(program_layers),
        channel="channel",
        readout=readout,
        channel_code=channel_code,
        answer_count=n_letters,
        logit_scale=sp.Float(logit_scale, 30) if not isinstance(logit_scale, sp.Expr) else logit_scale,
        parameters={**params, **rparams},
        description=(
            f"Index^{hops} Reflexive^{layers - hops} ({reflexive}) on the number task: "
            f"{n_letters} letters, integers 1..{max_int}"
        ),
    )


def _letter_code(code: str, alphabet: int) -> tuple[int, Any]:
    """``(planes, vector(phi))``: the code's number of planes and a letter's ``2P`` coordinates."""
    if code == "one-plane":
        omega = 2 * sp.pi / alphabet
        return 1, lambda phi: [sp.cos(phi * omega), sp.sin(phi * omega)]
    if code == "orthogonal":
        planes = (alphabet + 1) // 2

        def vec(phi: Any) -> list[sp.Expr]:  # Piecewise so that a symbolic phi stays symbolic
            return [sp.Piecewise((1, sp.Eq(phi, j)), (0, True)) for j in range(2 * planes)]

        return planes, vec
    raise ConstructionError(f"code={code!r}; accepted: {LETTER_CODES}")


def letter_program(
    hops: int = 4,
    layers: int = 12,
    retrieval_theta: float | Sequence[float] = RETRIEVAL_THETA,
    code: str = "one-plane",
    reflexive: str = "positional",
    reflexive_planes: Planes | None = None,
    alphabet: int = ALPHABET_SIZE,
    max_int: int = LETTER_TASK_MAX_INT,
    logit_scale: float = LOGIT_SCALE,
    channel_code: str = "cyclic",
) -> MultiHopProgram:
    """``Retrieval^hops`` then ``Reflexive^(layers - hops)`` on [A]'s letter task (module docstring).

    ``retrieval_theta``: the Retrieval planes' frequency (default [A]'s 0.0027), or one frequency per
    code plane (a RoPE spectrum holds each nonzero frequency once, so an orthogonal code on LLaMA puts its
    planes on neighbouring frequencies); ``code``: the letter code; ``reflexive_planes``: of the
    Reflexive layers (default one plane at 0.8660 if positional, one ``theta = 0`` plane if symbolic,
    when ``None``). ``alphabet`` (8) and ``max_int`` (8) set the
    vocabulary: (letter, letter) and (letter, integer) pairs.
    """
    _check_layers(hops, layers)
    raw = letter_vocabulary(alphabet, max_int)
    n_planes, vec = _letter_code(code, alphabet)
    if isinstance(retrieval_theta, int | float | np.floating | np.integer):
        thetas = [float(retrieval_theta)]
    else:
        thetas = [float(t) for t in retrieval_theta]
        if len(thetas) != n_planes:
            raise ConstructionError(
                f"retrieval_theta has {len(thetas)} frequencies; the {code} code of {alphabet} letters has "
                f"{n_planes} planes (give one frequency, or one per plane)"
            )
    if any(t != t or t in (float("inf"), float("-inf")) for t in thetas):
        raise ConstructionError(f"retrieval_theta={retrieval_theta!r} must be finite")
    rplanes, rparams = _reflexive_setup(reflexive, reflexive_planes, [(INDEX_THETA, 1.0)])
    if len(set(thetas)) == 1:
        t_syms = [sp.Symbol("theta_R", real=True)] * n_planes
        t_params = {t_syms[0]: thetas[0]}
    else:
        t_syms = list(sp.symbols(f"theta_R0:{n_planes}", real=True))
        t_params = dict(zip(t_syms, thetas, strict=True))
    tokens = _with_ids(raw)
    answers = alphabet * max_int
    labels = [f"{c}.{p}.{xy}" for c in ("key",) for p in range(n_planes) for xy in "xy"]
    features = [
        Feature(
            "key",
            tuple(labels),
            "content",
            {"pair_ll": lambda p: vec(p["phi_left"]), "pair_li": lambda p: vec(p["phi_left"])},
        ),
        Feature(
            "query",
            tuple(lab.replace("key", "query", 1) for lab in labels),
            "content",
            {"pair_ll": lambda p: vec(p["phi_right"]), "pair_li": lambda p: vec(p["phi_left"])},
        ),
        Feature("one", ("one",), "constant", {"pair_ll": lambda p: [1], "pair_li": lambda p: [1]}),
    ]
    if reflexive == "symbolic":
        features.append(_self_feature(len(tokens)))
    features.append(
        _channel(channel_code, answers, "answer", "pair_li", lambda p: p["phi_left"] * max_int + p["s"] - 1)
    )
    retrieval_layer = ProgramLayer(
        "retrieval",
        tuple(Plane(t, 1) for t in t_syms),
        tuple(Reader("query", _plane_block(i, n_planes)) for i in range(n_planes)),
        tuple(Reader("key", _plane_block(i, n_planes)) for i in range(n_planes)),
        code=code,
        alphabet=alphabet,
    )
    program_layers = [retrieval_layer] * hops + [_reflexive_layer(reflexive, rplanes)] * (layers - hops)
    phi_l, phi_r = sp.Symbol("phi_L", integer=True), sp.Symbol("phi_R", integer=True)
    ident = sp.Symbol("id")
    return MultiHopProgram(
        name=f"letter-{hops}hop-{layers}layer",
        task="letter",
        tokens=tokens,
        generic={
            "pair_ll": Token(
                "(L,R)", "pair", {"phi_left": phi_l, "phi_right": phi_r, "id": ident}, "pair_ll"
            ),
            "pair_li": Token(
                "(L,s)",
                "pair",
                {"phi_left": phi_l, "s": sp.Symbol("s", integer=True), "id": ident},
                "pair_li",
            ),
        },
        features=tuple(features),
        layers=tuple(program_layers),
        channel="channel",
        readout=features[-1].rules,
        channel_code=channel_code,
        answer_count=answers,
        logit_scale=sp.Float(logit_scale, 30) if not isinstance(logit_scale, sp.Expr) else logit_scale,
        parameters={**t_params, **rparams},
        description=(
            f"Retrieval^{hops} ({code} code, |ALPH| = {alphabet}) Reflexive^{layers - hops} ({reflexive}) on "
            f"the letter task: integers 1..{max_int}"
        ),
    )


def gptj_frequency(k: int, width: int) -> float:
    """Plane ``k`` of GPT-J's spectrum when the whole head rotates: ``1 / 10000^(2k / width)``, as HF
    writes it."""
    return 1.0 / (GPTJ_BASE ** (2 * k / width))


def checkpoint_program(
    task: str,
    hops: int = 4,
    layers: int = 12,
    reflexive: str = "positional",
    channel_code: str = "cyclic",
    logit_scale: float = LOGIT_SCALE,
    max_int: int = NUMBER_TASK_MAX_INT,
) -> MultiHopProgram:
    """The program exported as a checkpoint in [A]'s GPT-J shape with the smallest width (``max_int``: the
    number task's largest integer token).

    GPT-J rotates the whole head (``rotary_dim = n_embd``, base 10000) and needs one spare dim for the
    LayerNorm bypass, so ``n_embd = d_model + 1`` rounded up to even and every frequency must be
    ``10000^(-2k / n_embd)``: Index and positional Reflexive layers use plane ``k = 0`` (``theta = 1``);
    Retrieval and symbolic Reflexive layers use the slowest plane ``k = n_embd / 2 - 1`` (``theta = 0``
    has no home when every dim rotates). The same program exports to LLaMA.
    """
    check_task(task, error=ConstructionError)

    def build(fast: float, slow: float) -> MultiHopProgram:
        refl = [(fast, 1.0)] if reflexive == "positional" else [(slow, 1.0)]
        if task == "number":
            return number_program(
                hops,
                layers,
                ((fast, 1.0),),
                reflexive,
                refl,
                max_int=max_int,
                logit_scale=logit_scale,
                channel_code=channel_code,
            )
        return letter_program(
            hops,
            layers,
            slow,
            "one-plane",
            reflexive,
            refl,
            logit_scale=logit_scale,
            channel_code=channel_code,
        )

    width = build(1.0, 0.5).d_model + 1
    width += width % 2
    return build(gptj_frequency(0, width), gptj_frequency(width // 2 - 1, width))

"""Compile a symbolic :class:`~ropeproof.theory._multihop.MultiHopProgram` into explicit per-layer weights.

Layout of the compiled model (``V`` tokens, residual width ``d`` = the sum of the features' dims):

- ``W_E`` ``[V, d]``: row ``t`` is the token's embedding (every feature, in the program's order), with
  ``residual_labels[i]`` naming dimension ``i``; ``W_U`` ``[d, V]``: column ``t`` is the token's
  unembedding on the channel (zero for tokens that are never answers);
- layer ``l`` is a :class:`~ropeproof.constructions._head.CompiledHead` on the residual stream (it carries
  the model's ``W_E`` and ``W_U``): ``K`` planes on ``rotary_dim = 2K`` rotating dims, ``head_dim =
  max(2K, D)`` rounded up to even (``D`` channel dims); ``W_Q[:, plane k] = (a_k Q_k)^T`` on the query
  feature's rows, ``W_K[:, plane k] = K_k^T`` on the key feature's rows; ``W_V`` copies the channel into
  value dims ``0 .. D-1`` (times the layer's value weight) and ``W_O`` writes them back onto the channel;
  ``scale`` is the program's logit scale.

Every entry is evaluated from the sympy program: per feature and token rule the generic expression is
turned into a function of the token's parameters and evaluated in ball arithmetic (python-flint's
``arb`` at :data:`ARB_BITS` bits, the same code sympy prints for mpmath, run on Arb balls); an entry is
the float64 nearest to the value, accepted only when both ends of its ball round to it (else the
precision doubles), and values below :data:`ZERO_BELOW` in magnitude, such as ``sin(pi)``, become exactly
0. Expressions the ball path cannot run (a function it does not provide) are evaluated by mpmath at 30
significant digits instead. Nothing is typed in by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from flint import arb
from flint import ctx as flint_ctx
from sympy.printing.pycode import MpmathPrinter

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import ConstructionError, InputError
from ropeproof.machinery._validate import real
from ropeproof.theory._construction import Token
from ropeproof.theory._multihop import (
    Feature,
    MultiHopProgram,
    chain_coefficient,
    code_dims,
)
from ropeproof.theory._rope_spec import Layout, RopeSpec


@dataclass(frozen=True)
class LayerInfo:
    """What a compiled layer is: ``kind``, Reflexive ``variant``, plane ``freqs``/``amps`` (float64), and a
    Retrieval layer's letter ``code`` and ``alphabet``."""

    kind: str
    variant: str
    freqs: tuple[float, ...]
    amps: tuple[float, ...]
    code: str = ""
    alphabet: int = 0
    value_weight: float = 1.0

    @property
    def hop(self) -> bool:
        return self.kind in ("index", "retrieval")

    @property
    def label(self) -> str:
        return f"reflexive-{self.variant}" if self.kind == "reflexive" else self.kind

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "variant": self.variant,
            "freqs": list(self.freqs),
            "amps": list(self.amps),
            "code": self.code,
            "alphabet": self.alphabet,
            "value_weight": self.value_weight,
        }


@dataclass(frozen=True)
class CompiledModel:
    """Explicit weights of a compiled multi-hop program (layout in the module docstring).

    ``features`` maps a feature name to its ``(start, stop)`` residual dims; ``answers`` lists the
    answer tokens in code order; ``token_rules`` gives each token's rule (``letter``, ``integer``,
    ``pair_ll``, ``pair_li``); ``hop_layers`` is the number of hop layers (Index/Retrieval).
    """

    name: str
    task: str
    tokens: tuple[str, ...]
    residual_labels: tuple[str, ...]
    features: dict[str, tuple[int, int]]
    W_E: np.ndarray
    W_U: np.ndarray
    layers: tuple[CompiledHead, ...]
    layer_info: tuple[LayerInfo, ...]
    answers: tuple[str, ...]
    channel_code: str
    logit_scale: float
    token_rules: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def d_model(self) -> int:
        return int(self.W_E.shape[1])

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    @property
    def hop_pattern(self) -> tuple[bool, ...]:
        return tuple(info.hop for info in self.layer_info)

    @property
    def hop_layers(self) -> int:
        return sum(self.hop_pattern)

    def chain_coefficient(self, hops: int) -> int:
        """The hard-attention multiple of the answer code at the last position for a ``hops``-hop chain
        (:func:`ropeproof.theory._multihop.chain_coefficient`)."""
        return chain_coefficient(self.hop_pattern, hops)

    @cached_property
    def _index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}

    def token_index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise InputError(f"unknown token {name!r}; this model has {self.vocab_size} tokens") from None

    def ids(self, tokens: Any) -> np.ndarray:
        """Token ids ``[n]`` of one sequence or ``[batch, n]`` of equal-length sequences."""
        if len(tokens) == 0:
            raise InputError("the sequence is empty; n must be >= 1")
        if isinstance(tokens[0], str):
            return np.array([self.token_index(t) for t in tokens], dtype=np.int64)
        lengths = {len(seq) for seq in tokens}
        if len(lengths) != 1 or 0 in lengths:
            raise InputError(
                f"sequences must be non-empty and of equal length, got lengths {sorted(lengths)}"
            )
        return np.array([[self.token_index(t) for t in seq] for seq in tokens], dtype=np.int64)

    def feature_dims(self, name: str) -> slice:
        """The residual dims of feature ``name``."""
        if name not in self.features:
            raise InputError(f"feature={name!r} is unknown; this model has {sorted(self.features)}")
        a, b = self.features[name]
        return slice(a, b)

    def decode(self, scores: np.ndarray) -> list[str]:
        """Names of the argmax tokens of readout scores ``[..., V]``."""
        arr = np.asarray(scores, dtype=np.float64)
        return [self.tokens[i] for i in arr.reshape(-1, arr.shape[-1]).argmax(-1)]

    def describe(self) -> str:
        """One line per residual dimension and per layer."""
        lines = [f"{self.name}: d_model {self.d_model}, {self.n_layers} layers, {self.vocab_size} tokens"]
        lines += [f"  dim {i}: {lab}" for i, lab in enumerate(self.residual_labels)]
        for i, (info, head) in enumerate(zip(self.layer_info, self.layers, strict=True)):
            planes = ", ".join(f"theta={f:.6g} a={a:.4g}" for f, a in zip(info.freqs, info.amps, strict=True))
            lines.append(f"  layer {i}: {info.label} ({planes}), head_dim {head.spec.head_dim}")
        return "\n".join(lines)


ARB_BITS = 120
"""Working precision (bits) of the ball evaluation of the embedding (doubled for an entry whose ball
straddles a float64 rounding boundary)."""


class _ArbNamespace:
    """What sympy's mpmath printer calls (``mpmath.mpf``, ``mpmath.cos``, ``mpmath.pi``, ...), on Arb
    balls at the current ``flint.ctx.prec`` (``pi`` is evaluated at the precision in force)."""

    mpf = staticmethod(arb)

    @staticmethod
    def cos(x: Any) -> arb:
        return arb(x).cos()

    @staticmethod
    def sin(x: Any) -> arb:
        return arb(x).sin()

    @staticmethod
    def sqrt(x: Any) -> arb:
        return arb(x).sqrt()

    @property
    def pi(self) -> arb:
        return arb.pi()


def _nearest_float(value: Any) -> float | None:
    """The float64 nearest to the ball ``value`` (0 below :data:`ZERO_BELOW`), or ``None`` when its ends
    round to different floats."""
    if not isinstance(value, arb):
        return float(value)
    if abs(float(value.mid())) + float(value.rad()) < ZERO_BELOW:
        return 0.0
    lo, hi = float(value.lower()), float(value.upper())
    return lo if lo == hi else None


class _Evaluator:
    """Evaluates a feature for many tokens: the generic expression of each (feature, rule) becomes one
    function of the token parameters and the program parameters, run on Arb balls (or, for expressions
    the balls cannot run, on mpmath numbers at 30 digits; module docstring)."""

    def __init__(self, program: MultiHopProgram) -> None:
        self.program = program
        self.symbols = list(program.parameters)
        self.floats = [float(program.parameters[s]) for s in self.symbols]
        self.values = [mpmath.mpf(f) for f in self.floats]
        self.cache: dict[tuple[str, str], tuple[list[str], Any, Any]] = {}
        self.mpmath_only: set[tuple[str, str]] = set()

    def _function(self, feature: Feature, rule: str) -> tuple[list[str], Any, Any]:
        key = (feature.name, rule)
        if key not in self.cache:
            generic = self.program.generic.get(rule)
            if generic is None:
                raise ConstructionError(
                    f"program {self.program.name!r} has no generic token for rule {rule!r}"
                )
            names = sorted(generic.params)
            args = [sp.sympify(generic.params[n]) for n in names] + self.symbols
            exprs = feature.value(generic)
            on_balls = sp.lambdify(args, exprs, modules=[{"mpmath": _ArbNamespace()}], printer=MpmathPrinter)
            self.cache[key] = (names, on_balls, sp.lambdify(args, exprs, modules="mpmath"))
        return self.cache[key]

    def _on_balls(self, fn: Any, params: list[Any]) -> list[float] | None:
        bits = ARB_BITS
        while bits <= 8 * ARB_BITS:
            old = flint_ctx.prec
            flint_ctx.prec = bits
            try:
                vals = fn(*params, *[arb(f) for f in self.floats])
                out = [_nearest_float(v) for v in vals]
            finally:
                flint_ctx.prec = old
            if all(v is not None for v in out):
                return out  # type: ignore[return-value]
            bits *= 2
        return None

    def __call__(self, feature: Feature, token: Token) -> list[float]:
        if token.rule not in feature.rules:
            return [0.0] * feature.dim
        key = (feature.name, token.rule)
        names, on_balls, on_mpmath = self._function(feature, token.rule)
        params = [token.params[n] for n in names]
        if key not in self.mpmath_only:
            try:
                out = self._on_balls(on_balls, params)
            except (AttributeError, TypeError, ValueError, NameError):  # a function the balls lack
                self.mpmath_only.add(key)
                out = None
            if out is not None:
                return out
        with mpmath.workdps(30):
            vals = on_mpmath(*params, *self.values)
        floats = [float(v) for v in vals]
        return [0.0 if abs(v) < ZERO_BELOW else v for v in floats]


ZERO_BELOW = 1e-28
"""Coordinates below this in magnitude are set to 0: the 30-digit evaluation leaves an exact zero such
as ``sin(pi)`` at about ``1e-31``, far below any coordinate of a unit code or a RoPE rotation."""


def _numeric(program: MultiHopProgram, expr: Any, cache: dict[sp.Expr, float]) -> float:
    """``program.numeric``, with a fast path for plain numbers (most reader-matrix entries are 0 or 1) and
    ``cache`` (one per compilation) for the rest (every layer of a kind repeats its frequencies)."""
    e = sp.sympify(expr)
    if e.is_Number:
        return float(e)
    if e not in cache:
        cache[e] = program.numeric(e)
    return cache[e]


def _planes_numeric(
    program: MultiHopProgram, layer_index: int, cache: dict[sp.Expr, float]
) -> tuple[list[float], list[float]]:
    layer = program.layers[layer_index]
    freqs = [_numeric(program, p.freq, cache) for p in layer.planes]
    amps = [_numeric(program, p.amplitude, cache) for p in layer.planes]
    for f in freqs:
        if not np.isfinite(f):
            raise ConstructionError(f"layer {layer_index}: frequency {f} must be finite")
    return freqs, amps


def compile_program(program: MultiHopProgram, layout: Layout = "interleaved") -> CompiledModel:
    """Evaluate ``program`` into a :class:`CompiledModel` (see the module docstring)."""
    if not isinstance(program, MultiHopProgram):
        raise ConstructionError(f"program must be a MultiHopProgram, got {type(program).__name__}")
    evaluate = _Evaluator(program)
    d = program.d_model
    slices = {f.name: program.feature_slice(f.name) for f in program.features}
    w_e = np.zeros((len(program.tokens), d))
    for row, tok in enumerate(program.tokens):
        for f in program.features:
            w_e[row, slices[f.name]] = evaluate(f, tok)
    chan = slices[program.channel]
    channel = program.feature(program.channel)
    readout = Feature("readout", channel.labels, "channel", program.readout)
    w_u = np.zeros((d, len(program.tokens)))
    answers = []
    for col, tok in enumerate(program.tokens):
        if tok.rule in program.readout:
            w_u[chan, col] = evaluate(readout, tok)
            answers.append(tok.name)
    if len(answers) != program.answer_count:
        raise ConstructionError(
            f"program declares {program.answer_count} answers but reads out {len(answers)}"
        )
    n_chan = chan.stop - chan.start
    if n_chan != code_dims(program.channel_code, program.answer_count):
        raise ConstructionError(
            f"the channel has {n_chan} dims; a {program.channel_code} code of {program.answer_count} answers "
            f"needs {code_dims(program.channel_code, program.answer_count)}"
        )
    scale = real(
        program.numeric(program.logit_scale), "logit_scale", low=0, low_open=True, error=ConstructionError
    )
    heads, infos = [], []
    numbers: dict[sp.Expr, float] = {}
    for li, layer in enumerate(program.layers):
        freqs, amps = _planes_numeric(program, li, numbers)
        k = len(freqs)
        head_dim = max(2 * k, n_chan)
        head_dim += head_dim % 2
        spec = RopeSpec(head_dim, rotary_dim=2 * k, freqs=freqs, layout=layout)
        w_q, w_k = np.zeros((d, head_dim)), np.zeros((d, head_dim))
        for p, (reader_q, reader_k) in enumerate(zip(layer.query, layer.key, strict=True)):
            a, b = spec.plane_dims[p]
            for reader, target, amp in ((reader_q, w_q, amps[p]), (reader_k, w_k, 1.0)):
                m = np.array([[_numeric(program, x, numbers) for x in row] for row in reader.matrix.tolist()])
                rows = slices[reader.feature]
                target[rows, a] += amp * m[0]
                target[rows, b] += amp * m[1]
        weight = _numeric(program, layer.value_weight, numbers)
        w_v, w_o = np.zeros((d, head_dim)), np.zeros((head_dim, d))
        w_v[chan, :n_chan] = weight * np.eye(n_chan)
        w_o[:n_chan, chan] = np.eye(n_chan)
        heads.append(
            CompiledHead(
                name=f"{program.name}.layer{li}.{layer.label}",
                tokens=tuple(t.name for t in program.tokens),
                W_E=w_e,
                W_Q=w_q,
                W_K=w_k,
                W_V=w_v,
                W_O=w_o,
                W_U=w_u,
                spec=spec,
                scale=scale,
                metadata={"layer": li, "kind": layer.label},
            )
        )
        infos.append(
            LayerInfo(
                layer.kind, layer.variant, tuple(freqs), tuple(amps), layer.code, layer.alphabet, weight
            )
        )
    return CompiledModel(
        name=program.name,
        task=program.task,
        tokens=tuple(t.name for t in program.tokens),
        residual_labels=program.residual_labels,
        features={name: (s.start, s.stop) for name, s in slices.items()},
        W_E=w_e,
        W_U=w_u,
        layers=tuple(heads),
        layer_info=tuple(infos),
        answers=tuple(answers),
        channel_code=program.channel_code,
        logit_scale=scale,
        token_rules=tuple(t.rule for t in program.tokens),
        metadata={"description": program.description, "layout": layout},
    )

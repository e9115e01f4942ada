"""Multi-hop programs: ``L``-layer, one-head-per-layer RoPE models with a labelled residual stream.

``docs/theory.md`` section 6 (in-place recursion) and section 4 (the single-layer functions). A
:class:`MultiHopProgram` declares

- a vocabulary of :class:`~ropeproof.theory._construction.Token` s;
- the residual stream as a list of named :class:`Feature` s, every dimension with its own label (as
  tracr labels its residual space). A feature's role is ``content`` (written once by the embedding,
  never by a layer), ``constant`` (the dimension that is 1 for every token) or ``channel`` (the one
  subspace layers read values from and write outputs to);
- a list of :class:`ProgramLayer` s (Index, Retrieval, Reflexive in a positional or a symbolic
  variant). In plane ``k`` a layer's query is ``Q_k f_q(x)`` and its key ``K_k f_k(x)``, fixed
  matrices applied to *content* features of the token ``x`` (the query scaled by the plane amplitude
  ``a_k``); its value reads the channel and its output adds ``value_weight`` times the attended
  channel to the position's own channel;
- a readout: per answer token the unembedding vector on the channel.

Logit of layer ``l`` between query token ``x`` at ``i`` and key token ``y`` at ``j`` (before the
program's ``logit_scale``)::

    l(i, j) = sum_k a_k (Q_k f_q(x))^T rho((j - i) theta_k) (K_k f_k(y)).

Because queries and keys read only content, which no layer writes, **every layer's attention pattern is
a function of the input tokens alone**; only the channel carries the recursion.

Why ``h`` hop layers solve every chain of at most ``h`` hops (hard attention)
--------------------------------------------------------------------------------

Write ``C_l[p]`` for position ``p``'s channel entering layer ``l`` and take the chain from the last
position, ``p_0 = n - 1``, ``p_1``, ..., ``p_h`` (``p_{i+1}`` is where ``p_i`` points: ``p_i - m`` for an
integer ``m``, or the earlier pair whose left letter is ``p_i``'s right letter), ending at a letter
(number task) or a (letter, integer) pair (letter task), whose code ``e`` is the answer. Initially
``C_0[p_h] = e`` and ``C_0[p_i] = 0`` for ``i < h`` (integers and (letter, letter) pairs start empty).
Under hard attention, with value weight 1:

- a hop layer (Index, Retrieval) has ``p_i`` attend to ``p_{i+1}`` for ``i < h`` and ``p_h`` to itself
  (a letter's query is the ``s = 0`` pointer; a (letter, integer) pair looks up its own left letter),
  so ``C_{l+1}[p_i] = C_l[p_i] + C_l[p_{i+1}]`` and ``C_{l+1}[p_h] = 2 C_l[p_h]``;
- a Reflexive layer has every position attend to itself: ``C_{l+1}[p_i] = 2 C_l[p_i]``.

By induction ``C_l[p_i] = c_l(i) e`` with non-negative integers ``c_l(i)``, ``c_0(i) = [i = h]`` and
``c_{l+1}(i) = c_l(i) + c_l(min(i + 1, h))`` (hop layer) or ``2 c_l(i)`` (Reflexive), so ``c_l(i) > 0``
exactly when at least ``h - i`` of the first ``l`` layers are hop layers. Only chain positions enter
this recursion (each chain row attends only to a chain position), so whatever the other positions hold
is irrelevant. Hence after any program with at least ``h`` hop layers the last position holds
``c e`` with ``c = c_L(0) >= 1``: the readout ``argmax_Y <C_L[n-1], u_Y>`` returns the answer with
margin ``c gamma``, where ``gamma`` is the code's margin (:func:`code_margin`). For
``Index^{L_I}`` (or ``Retrieval^{L_I}``) followed by ``Reflexive^{L - L_I}``,
``c = 2^{L - L_I} sum_{k = h}^{L_I} binom(L_I, k)`` (:func:`standard_chain_coefficient`): each hop
layer either advances the chain by one or doubles, and a Reflexive layer doubles.
Softmax attention leaks mass off target; :mod:`ropeproof.theory._multihop_bound` bounds the damage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any, Literal

import sympy as sp

from ropeproof.machinery._errors import ConstructionError
from ropeproof.machinery._validate import integer
from ropeproof.theory._construction import Plane, Token
from ropeproof.theory._rope_symbolic import rotation

LayerKind = Literal["index", "retrieval", "reflexive"]
LAYER_KINDS: tuple[str, ...] = ("index", "retrieval", "reflexive")
HOP_KINDS: tuple[str, ...] = ("index", "retrieval")
"""Layer kinds that advance every chain by one hop."""
REFLEXIVE_VARIANTS: tuple[str, ...] = ("positional", "symbolic")
"""Reflexive layers attend to offset 0 (positional) or to their own content (symbolic)."""
FEATURE_ROLES: tuple[str, ...] = ("content", "constant", "channel")
CHANNEL_CODES: tuple[str, ...] = ("cyclic", "onehot")
"""How answers are written in the channel: on a circle (2 dims) or one-hot (one dim per answer)."""

FeatureRule = Callable[[Mapping[str, Any]], Sequence[Any]]
"""``rule(token.params) -> coordinates``: what the embedding writes into a feature for one token."""


@dataclass(frozen=True)
class Feature:
    """A named residual subspace: its dimension ``labels``, its ``role`` and, per token rule, the
    ``rules`` giving the coordinates the embedding writes (a rule missing for a token rule writes 0)."""

    name: str
    labels: tuple[str, ...]
    role: str
    rules: Mapping[str, FeatureRule] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.role not in FEATURE_ROLES:
            raise ConstructionError(f"feature {self.name!r}: role={self.role!r}; accepted: {FEATURE_ROLES}")
        if not self.labels:
            raise ConstructionError(f"feature {self.name!r} needs at least one dimension")
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "rules", dict(self.rules))

    @property
    def dim(self) -> int:
        return len(self.labels)

    def value(self, token: Token) -> list[sp.Expr]:
        """The coordinates the embedding writes for ``token`` (zeros when no rule applies)."""
        rule = self.rules.get(token.rule)
        if rule is None:
            return [sp.Integer(0)] * self.dim
        out = [sp.sympify(v) for v in rule(token.params)]
        if len(out) != self.dim:
            raise ConstructionError(
                f"feature {self.name!r}: rule {token.rule!r} gave {len(out)} coordinates; expected {self.dim}"
            )
        return out


@dataclass(frozen=True)
class Reader:
    """A 2-D vector read from one feature: ``matrix @ f(x)`` (``matrix`` is ``[2, dim(feature)]``)."""

    feature: str
    matrix: sp.Matrix

    def __post_init__(self) -> None:
        m = sp.Matrix(self.matrix)
        if m.shape[0] != 2:
            raise ConstructionError(f"a reader of {self.feature!r} must have 2 rows, got {m.shape}")
        object.__setattr__(self, "matrix", m)


@dataclass(frozen=True)
class ProgramLayer:
    """One attention layer (one head): ``kind``, the Reflexive ``variant``, its RoPE ``planes`` and, per
    plane, how the query and the key are read (:class:`Reader`). ``code``/``alphabet`` name a Retrieval
    layer's letter code (``"one-plane"`` or ``"orthogonal"``)."""

    kind: str
    planes: tuple[Plane, ...]
    query: tuple[Reader, ...]
    key: tuple[Reader, ...]
    variant: str = ""
    value_weight: sp.Expr = 1  # type: ignore[assignment]  (sympified in __post_init__)
    code: str = ""
    alphabet: int = 0

    def __post_init__(self) -> None:
        if self.kind not in LAYER_KINDS:
            raise ConstructionError(f"layer kind={self.kind!r}; accepted: {LAYER_KINDS}")
        if self.kind == "reflexive" and self.variant not in REFLEXIVE_VARIANTS:
            raise ConstructionError(f"reflexive variant={self.variant!r}; accepted: {REFLEXIVE_VARIANTS}")
        if not self.planes or len(self.query) != len(self.planes) or len(self.key) != len(self.planes):
            raise ConstructionError("a layer needs at least one plane and one query/key reader per plane")
        w = sp.sympify(self.value_weight)
        if w.is_number and not bool(w > 0):
            raise ConstructionError(f"value_weight={w} must be > 0")
        object.__setattr__(self, "planes", tuple(self.planes))
        object.__setattr__(self, "query", tuple(self.query))
        object.__setattr__(self, "key", tuple(self.key))
        object.__setattr__(self, "value_weight", w)

    @property
    def hop(self) -> bool:
        """Whether the layer advances chains (Index, Retrieval)."""
        return self.kind in HOP_KINDS

    @property
    def label(self) -> str:
        return f"reflexive-{self.variant}" if self.kind == "reflexive" else self.kind


@dataclass(frozen=True)
class MultiHopProgram:
    """A symbolic multi-hop model (see the module docstring).

    ``generic`` maps each token rule to a token whose parameters are sympy symbols (used to state
    logits for a whole rule at once and to evaluate the embedding quickly); ``readout`` maps the rules of
    answer tokens to their unembedding on the channel; ``parameters`` binds free symbols (frequencies)
    to numbers; ``logit_scale`` multiplies every layer's logits (the softmax sharpness).
    """

    name: str
    task: str
    tokens: tuple[Token, ...]
    generic: Mapping[str, Token]
    features: tuple[Feature, ...]
    layers: tuple[ProgramLayer, ...]
    channel: str
    readout: Mapping[str, FeatureRule]
    channel_code: str
    answer_count: int
    logit_scale: sp.Expr
    parameters: Mapping[sp.Symbol, float] = field(default_factory=dict)
    description: str = ""

    def __post_init__(self) -> None:
        names = [f.name for f in self.features]
        if len(set(names)) != len(names):
            raise ConstructionError(f"program {self.name!r}: duplicate feature names {names}")
        labels = [lab for f in self.features for lab in f.labels]
        if len(set(labels)) != len(labels):
            raise ConstructionError(f"program {self.name!r}: residual labels must be unique")
        toks = [t.name for t in self.tokens]
        if not toks or len(set(toks)) != len(toks):
            raise ConstructionError(
                f"program {self.name!r}: tokens must be a non-empty list of distinct names"
            )
        if not self.layers:
            raise ConstructionError(f"program {self.name!r} needs at least one layer")
        if self.channel_code not in CHANNEL_CODES:
            raise ConstructionError(f"channel_code={self.channel_code!r}; accepted: {CHANNEL_CODES}")
        by_name = {f.name: f for f in self.features}
        if self.channel not in by_name or by_name[self.channel].role != "channel":
            raise ConstructionError(
                f"program {self.name!r}: channel {self.channel!r} is not a channel feature"
            )
        for i, layer in enumerate(self.layers):
            for reader in layer.query + layer.key:
                f = by_name.get(reader.feature)
                if f is None or f.role == "channel":
                    raise ConstructionError(
                        f"layer {i}: queries and keys must read a content or constant feature, not "
                        f"{reader.feature!r} (they read the token's original content, section 6)"
                    )
                if reader.matrix.shape[1] != f.dim:
                    raise ConstructionError(
                        f"layer {i}: reader of {f.name!r} has {reader.matrix.shape[1]} columns; "
                        f"the feature has {f.dim} dims"
                    )
        object.__setattr__(self, "tokens", tuple(self.tokens))
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "parameters", dict(self.parameters))
        object.__setattr__(self, "logit_scale", sp.sympify(self.logit_scale))

    # ---------------------------------------------------------------------------------- layout
    @property
    def residual_labels(self) -> tuple[str, ...]:
        """Every residual dimension's label, in order."""
        return tuple(lab for f in self.features for lab in f.labels)

    @property
    def d_model(self) -> int:
        return sum(f.dim for f in self.features)

    def feature(self, name: str) -> Feature:
        for f in self.features:
            if f.name == name:
                return f
        raise ConstructionError(f"program {self.name!r} has no feature {name!r}")

    def feature_slice(self, name: str) -> slice:
        """The residual dims of feature ``name``."""
        start = 0
        for f in self.features:
            if f.name == name:
                return slice(start, start + f.dim)
            start += f.dim
        raise ConstructionError(f"program {self.name!r} has no feature {name!r}")

    @property
    def hop_pattern(self) -> tuple[bool, ...]:
        """Per layer, whether it is a hop layer."""
        return tuple(layer.hop for layer in self.layers)

    def embedding(self, token: Token) -> list[sp.Expr]:
        """The residual vector the embedding writes for ``token`` (every feature, in order)."""
        return [v for f in self.features for v in f.value(token)]

    # ---------------------------------------------------------------------------------- logits
    def logit(self, layer: int, query: Token, key: Token, offset: sp.Expr) -> sp.Expr:
        """Layer ``layer``'s logit (before ``logit_scale``) of ``query`` against ``key`` at
        ``offset = j - i``: ``sum_k a_k (Q_k f_q)^T rho(offset theta_k) (K_k f_k)``."""
        lay = self.layers[layer]
        total = sp.Integer(0)
        for plane, qr, kr in zip(lay.planes, lay.query, lay.key, strict=True):
            q = qr.matrix * sp.Matrix(self.feature(qr.feature).value(query))
            k = kr.matrix * sp.Matrix(self.feature(kr.feature).value(key))
            total += plane.amplitude * (q.T * rotation(offset * plane.freq) * k)[0, 0]
        return total

    def numeric(self, expr: Any) -> float:
        """``expr`` with every parameter substituted, as a float (error if a symbol is left)."""
        value = sp.sympify(expr).subs(self.parameters)
        if value.free_symbols:
            names = sorted(s.name for s in value.free_symbols)
            raise ConstructionError(f"program {self.name!r}: parameters {names} have no value")
        return float(sp.N(value, 30))


# ------------------------------------------------------------------------------------- codes


def cyclic_code(index: Any, size: int) -> list[sp.Expr]:
    """Answer ``index`` of ``size`` on the unit circle: ``(cos(2 pi i / V), sin(2 pi i / V))``."""
    angle = 2 * sp.pi * sp.sympify(index) / size
    return [sp.cos(angle), sp.sin(angle)]


def onehot_code(index: int, size: int) -> list[sp.Expr]:
    """Answer ``index`` of ``size`` as a one-hot vector."""
    return [sp.Integer(1) if i == index else sp.Integer(0) for i in range(size)]


def code_margin(code: str, size: int) -> sp.Expr:
    """The code's readout margin ``gamma = min_X [<e_X, u_X> - max(0, max_{Y != X} <e_X, u_Y>)]`` with
    ``u_Y = e_Y`` over ``V = size >= 2`` answers; the 0 is a non-answer token, whose unembedding is zero
    (every program has some). ``min(2 sin(pi / V)^2, 1)`` for the cyclic code (neighbours on the circle are
    closest; for ``V <= 4`` a non-answer token is at least as close) and 1 for the one-hot code."""
    if code not in CHANNEL_CODES:
        raise ConstructionError(f"code={code!r}; accepted: {CHANNEL_CODES}")
    size = integer(size, "size", low=2, note="answers", error=ConstructionError)
    if code == "onehot":
        return sp.Integer(1)
    return sp.Min(2 * sp.sin(sp.pi / size) ** 2, 1)


def code_radius(code: str, size: int) -> sp.Expr:
    """The code's readout radius ``rho``: if the last position holds ``c e_X + err`` with ``c > 0`` and
    ``||err|| < c rho``, the readout ``argmax_Y <., u_Y>`` (``u_Y = e_Y`` for the ``V = size >= 2`` answers,
    ``0`` for every other token) is ``X``.

    ``z_X - z_Y = c <e_X, u_X - u_Y> + <err, u_X - u_Y> >= c <e_X, u_X - u_Y> - ||err|| ||u_X - u_Y||``, so
    ``rho = min_{X, Y != X} <e_X, u_X - u_Y> / ||u_X - u_Y||``:

    - cyclic (angles ``2 pi i / V``): an answer ``Y`` at angle ``Delta`` from ``X`` gives
      ``2 sin(Delta/2)^2 / (2 |sin(Delta/2)|) = |sin(Delta/2)| >= sin(pi / V)``, a non-answer ``1``:
      ``rho = sin(pi / V)``;
    - one-hot: an answer gives ``1 / sqrt(2)``, a non-answer ``1``: ``rho = 1 / sqrt(2)``.

    Against :func:`code_margin` (the worst case over every direction of ``err``, ``||u_X - u_Y|| <= 2``):
    ``rho = gamma / ||u_X - u_Y||`` at the closest answer, ``1 / sin(pi / V)`` times more room than
    ``gamma / 2`` for the cyclic code (38 times for [A]'s 120 letters).
    """
    if code not in CHANNEL_CODES:
        raise ConstructionError(f"code={code!r}; accepted: {CHANNEL_CODES}")
    size = integer(size, "size", low=2, note="answers", error=ConstructionError)
    if code == "onehot":
        return 1 / sp.sqrt(2)
    return sp.sin(sp.pi / size)


def code_dims(code: str, size: int) -> int:
    """Channel dimensions a code needs: 2 (cyclic) or ``size`` (one-hot)."""
    return 2 if code == "cyclic" else size


# ------------------------------------------------------------------------ the chain recursion


def chain_coefficient(hop_pattern: Sequence[bool], hops: int) -> int:
    """``c_L(0)`` of the module docstring: the multiple of the answer code the last position holds after
    the program, under hard attention, for a chain of ``hops`` hops (exact integer; 0 if the program
    has fewer than ``hops`` hop layers)."""
    hops = integer(hops, "hops", low=0, error=ConstructionError)
    c = [0] * hops + [1]
    for hop in hop_pattern:
        c = [c[i] + c[min(i + 1, hops)] for i in range(hops + 1)] if hop else [2 * x for x in c]
    return c[0]


def standard_chain_coefficient(hop_layers: int, layers: int, hops: int) -> int:
    """``2^{L - L_I} sum_{k = hops}^{L_I} binom(L_I, k)``: :func:`chain_coefficient` of ``L_I`` hop
    layers followed by ``L - L_I`` Reflexive layers (closed form, derived in the module docstring)."""
    if not 0 <= hop_layers <= layers:
        raise ConstructionError(f"hop_layers={hop_layers} must be in 0..layers={layers}")
    return 2 ** (layers - hop_layers) * sum(comb(hop_layers, k) for k in range(hops, hop_layers + 1))

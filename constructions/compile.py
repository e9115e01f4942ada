"""Compile a symbolic :class:`~theory.construction.Construction` into explicit attention weights.

Layout of the compiled head (``V`` tokens, ``K`` planes):

- residual stream: one-hot tokens, ``d_model = V``; ``W_E = I_V`` and ``W_U = I_V``;
- ``head_dim = max(2K, V)`` rounded up to even, ``rotary_dim = 2K``: plane ``k`` of the spec is
  plane ``k`` of the construction with frequency ``theta_k``; dims past ``2K`` are pass-through and
  carry only values;
- ``W_Q[t]`` / ``W_K[t]``: token ``t``'s query (times the plane amplitude) / key vector, plane ``k``
  written on the spec's dims ``plane_dims[k]``;
- ``W_V[t, :V]``: the value map of token ``t`` over output tokens; ``W_O = [I_V; 0]``.

Every entry is evaluated from the sympy objects (30 significant digits, then rounded to float64);
nothing is typed in by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import sympy as sp
import torch

from theory.construction import Construction
from verify.attention import RopeAttention
from verify.devices import DeviceLike, DtypeLike, resolve_dtype
from verify.errors import ConstructionError, InputError
from verify.rope import Layout, RopeSpec


@dataclass(frozen=True)
class CompiledHead:
    """Explicit weights of a compiled construction.

    Matrices (float64 numpy): ``W_E`` ``[V, d_model]``, ``W_Q``/``W_K``/``W_V`` ``[d_model, head_dim]``,
    ``W_O`` ``[head_dim, d_model]``, ``W_U`` ``[d_model, V]``. ``tokens`` are the vocabulary names in
    row order of ``W_E``; ``spec`` is the RoPE spec; ``scale`` multiplies logits.
    """

    name: str
    tokens: tuple[str, ...]
    W_E: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    W_U: np.ndarray
    spec: RopeSpec
    scale: float = 1.0
    metadata: dict[str, object] = field(default_factory=dict)

    @property
    def d_model(self) -> int:
        return int(self.W_E.shape[1])

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def token_index(self, name: str) -> int:
        """Row of token ``name`` in ``W_E``."""
        try:
            return self._index[name]
        except KeyError:
            raise InputError(f"unknown token {name!r}; this head has {self.vocab_size} tokens") from None

    @cached_property
    def _index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}

    def ids(self, tokens: Sequence[str]) -> np.ndarray:
        """Token ids of a sequence of names."""
        return np.array([self.token_index(t) for t in tokens], dtype=np.int64)

    def encode(
        self, tokens: Sequence[str] | Sequence[Sequence[str]], dtype: DtypeLike = torch.float64
    ) -> torch.Tensor:
        """Embed names: ``[n, d_model]`` for one sequence, ``[batch, n, d_model]`` for a list of them."""
        if len(tokens) == 0:
            raise InputError("the sequence is empty; n must be >= 1")
        if isinstance(tokens[0], str):
            e = torch.as_tensor(self.W_E[self.ids(tokens)])  # type: ignore[arg-type]
        else:
            e = torch.as_tensor(np.stack([self.W_E[self.ids(seq)] for seq in tokens]))
        return e.to(resolve_dtype(dtype))

    def attention(self, device: DeviceLike = "auto", dtype: DtypeLike = torch.float64) -> RopeAttention:
        """The head as a :class:`~verify.attention.RopeAttention` module."""
        return RopeAttention(self.W_Q, self.W_K, self.W_V, self.W_O, self.spec, self.scale, device, dtype)

    def decode(self, scores: torch.Tensor | np.ndarray) -> list[str]:
        """Names of the argmax tokens of unembedded scores ``[..., V]`` (flattened over leading dims)."""
        arr = np.asarray(scores.detach().double().cpu() if isinstance(scores, torch.Tensor) else scores)
        return [self.tokens[i] for i in arr.reshape(-1, arr.shape[-1]).argmax(-1)]

    def answer(
        self,
        sequences: Sequence[Sequence[str]],
        mode: str = "hard",
        softmax_scale: float = 1.0,
        device: DeviceLike = "auto",
        dtype: DtypeLike = torch.float64,
    ) -> list[str | None]:
        """The head's answer at the last position of each (equal-length) sequence.

        ``mode="hard"``: attend only to the argmax logit (ties -> ``None``), write its value, and read
        the argmax output token (``None`` if the value is zero, e.g. an integer under T_Index).
        ``mode="softmax"``: run the module with logits multiplied by ``softmax_scale`` and read the
        argmax of ``output @ W_U``.
        """
        if mode not in ("hard", "softmax"):
            raise InputError(f"mode={mode!r} is unknown; accepted: 'hard', 'softmax'")
        key = (str(device), str(dtype))
        cache = self.__dict__.setdefault("_module_cache", {})
        if key not in cache:
            cache[key] = self.attention(device, dtype)
        head = cache[key]
        head.scale = self.scale * (float(softmax_scale) if mode == "softmax" else 1.0)
        x = self.encode(sequences, dtype)
        res = head(x)
        if mode == "softmax":
            scores = res.output[:, -1] @ torch.as_tensor(
                self.W_U, dtype=res.output.dtype, device=res.output.device
            )
            return self.decode(scores)  # type: ignore[return-value]
        row = res.logits[:, -1].double()
        top2 = torch.topk(row, min(2, row.shape[-1]), dim=-1)
        out: list[str | None] = []
        for b in range(row.shape[0]):
            vals, idx = top2.values[b], top2.indices[b]
            if vals.numel() > 1 and vals[0] == vals[1]:
                out.append(None)
                continue
            tok = self.ids([sequences[b][int(idx[0])]])[0]
            value = self.W_E[tok] @ self.W_V @ self.W_O @ self.W_U
            out.append(self.tokens[int(np.argmax(value))] if np.any(value != 0) else None)
        return out

    def save(self, path: str | object) -> None:
        """Write the head (see :mod:`constructions.io`)."""
        from constructions.io import save_head

        save_head(self, path)  # type: ignore[arg-type]


class _Evaluator:
    """``construction.numeric`` memoised by expression (many tokens share the same entries)."""

    def __init__(self, c: Construction) -> None:
        self.c = c
        self.cache: dict[sp.Expr, float] = {}

    def __call__(self, expr: sp.Expr) -> float:
        expr = sp.sympify(expr)
        if expr not in self.cache:
            self.cache[expr] = self.c.numeric(expr)
        return self.cache[expr]

    def vector(self, vec: sp.Matrix) -> tuple[float, float]:
        return self(vec[0]), self(vec[1])


def compile_construction(
    construction: Construction, layout: Layout = "interleaved", head_dim: int | None = None
) -> CompiledHead:
    """Evaluate ``construction`` into a :class:`CompiledHead` (see the module docstring).

    ``head_dim`` may be raised above the minimum ``max(2K, V)`` (rounded up to even).
    """
    c = construction
    n_tok, n_planes = len(c.tokens), len(c.planes)
    minimum = max(2 * n_planes, n_tok)
    minimum += minimum % 2
    if head_dim is None:
        head_dim = minimum
    elif head_dim < minimum or head_dim % 2:
        raise ConstructionError(f"head_dim={head_dim} must be even and >= {minimum} for this construction")
    freqs = [c.numeric(p.freq) for p in c.planes]
    for p, f in zip(c.planes, freqs, strict=True):
        if not math.isfinite(f):
            raise ConstructionError(f"plane frequency {p.freq} evaluates to {f}; frequencies must be finite")
        amp = c.numeric(p.amplitude)
        if amp < 0:
            raise ConstructionError(f"plane amplitude {p.amplitude} = {amp} must be >= 0")
    spec = RopeSpec(head_dim, rotary_dim=2 * n_planes, freqs=freqs, layout=layout)
    dims = spec.plane_dims[:n_planes]
    index = {t.name: i for i, t in enumerate(c.tokens)}
    num = _Evaluator(c)
    w_q = np.zeros((n_tok, head_dim))
    w_k = np.zeros((n_tok, head_dim))
    w_v = np.zeros((n_tok, head_dim))
    for row, tok in enumerate(c.tokens):
        for (a, b), qv, kv in zip(
            dims, c.plane_vectors(tok, "query"), c.plane_vectors(tok, "key"), strict=True
        ):
            w_q[row, a], w_q[row, b] = num.vector(qv)
            w_k[row, a], w_k[row, b] = num.vector(kv)
        for out_name, weight in c.value(tok).items():
            if out_name not in index:
                raise ConstructionError(f"value of token {tok.name!r} writes unknown token {out_name!r}")
            w_v[row, index[out_name]] = num(weight)
    w_o = np.zeros((head_dim, n_tok))
    w_o[:n_tok, :n_tok] = np.eye(n_tok)
    return CompiledHead(
        name=c.name,
        tokens=tuple(c.token_names),
        W_E=np.eye(n_tok),
        W_Q=w_q,
        W_K=w_k,
        W_V=w_v,
        W_O=w_o,
        W_U=np.eye(n_tok),
        spec=spec,
        scale=1.0,
        metadata={
            "construction": c.name,
            "parameters": {s.name: float(v) for s, v in c.parameters.items()},
            "description": c.description,
        },
    )

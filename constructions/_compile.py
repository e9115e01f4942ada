"""Compile a symbolic :class:`~ropeproof.theory._construction.Construction` into explicit attention weights.

Layout of the compiled head (``V`` tokens, ``K`` planes):

- residual stream: one-hot tokens, ``d_model = V``; ``W_E = I_V`` and ``W_U = I_V``;
- ``head_dim = max(2K, V)`` rounded up to even, ``rotary_dim = 2K``: plane ``k`` of the spec is
  plane ``k`` of the construction with frequency ``theta_k``; dims past ``2K`` are pass-through and
  carry only values;
- ``W_Q[t]`` / ``W_K[t]``: token ``t``'s query (times the plane amplitude) / key vector, plane ``k``
  written on the spec's dims ``plane_dims[k]``;
- ``W_V[t, :V]``: the value map of token ``t`` over output tokens; ``W_O = [I_V; 0]``.

Every entry is evaluated from the sympy objects (30 significant digits, then rounded to float64);
nothing is typed in by hand. The head records the construction's input family (``family``).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import ConstructionError
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._validate import integer
from ropeproof.theory._construction import Construction
from ropeproof.theory._rope_spec import Layout, RopeSpec


def compiled_head_bytes(n_tokens: int, head_dim: int) -> int:
    """Bytes of a compiled head's six float64 matrices: ``8 (2 V^2 + 4 V head_dim)`` for ``V`` tokens
    (``W_E``, ``W_U``: ``V x V``; ``W_Q``, ``W_K``, ``W_V``: ``V x head_dim``; ``W_O``: ``head_dim x V``)."""
    return 8 * (2 * n_tokens * n_tokens + 4 * n_tokens * head_dim)


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

    ``head_dim`` may be raised above the minimum ``max(2K, V)`` (rounded up to even). Raises
    :class:`~ropeproof.machinery._errors.MemoryBudgetError` before allocating when
    :func:`compiled_head_bytes` exceeds the memory limit (:mod:`ropeproof.machinery._memory_budget`).
    """
    c = construction
    n_tok, n_planes = len(c.tokens), len(c.planes)
    minimum = max(2 * n_planes, n_tok)
    minimum += minimum % 2
    if head_dim is None:
        head_dim = minimum
    head_dim = integer(
        head_dim,
        "head_dim",
        low=minimum,
        even=True,
        note="this construction's minimum max(2K, V)",
        error=ConstructionError,
    )
    check_allocation(
        f"compiling {c.name} ({n_tok} tokens, head_dim {head_dim})", compiled_head_bytes(n_tok, head_dim)
    )
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
        family=c.family,
    )

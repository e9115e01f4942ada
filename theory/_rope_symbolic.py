"""Symbolic RoPE: rotations, a symbolic spec, and the closed-form logit of two vectors.

For a query ``q`` at position ``i`` and a key ``k`` at position ``j``, each a list of 2-D vectors
(one per plane), the logit is

    l(i, j) = sum_k (rho(i theta_k) q_k)^T (rho(j theta_k) k_k)
            = sum_k |q_k| |k_k| cos((j - i) theta_k + phase_k),
    phase_k = atan2(q_k1 k_k2 - q_k2 k_k1, q_k . k_k)

(``phase_k`` is the angle from ``q_k`` to ``k_k``). :func:`derive_logit` computes the raw product
and proves, with sympy, that it equals the closed form.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import sympy as sp

from ropeproof.machinery._errors import RopeSpecError
from ropeproof.machinery._validate import integer
from ropeproof.theory._trig_identity import vanishes_identically

Backend = Literal["numpy", "torch", "mpmath"]
Vec2 = sp.Matrix


def rotation(angle: sp.Expr | float) -> sp.Matrix:
    """``rho(a) = [[cos a, -sin a], [sin a, cos a]]`` as a sympy matrix."""
    a = sp.sympify(angle)
    return sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])


def vec2(x: Any, y: Any) -> sp.Matrix:
    """A symbolic 2-D column vector."""
    return sp.Matrix([sp.sympify(x), sp.sympify(y)])


@dataclass(frozen=True)
class SymbolicRopeSpec:
    """A RoPE head with symbolic frequencies: ``freqs[k]`` is the angle per position of plane ``k``."""

    freqs: tuple[sp.Expr, ...]

    def __init__(self, freqs: Sequence[Any]) -> None:
        if len(freqs) == 0:
            raise RopeSpecError("a SymbolicRopeSpec needs at least one plane frequency")
        object.__setattr__(self, "freqs", tuple(sp.sympify(f) for f in freqs))

    @classmethod
    def symbols(cls, n_planes: int, name: str = "theta") -> SymbolicRopeSpec:
        """A spec whose frequencies are the real symbols ``theta_0 .. theta_{K-1}``."""
        n_planes = integer(n_planes, "n_planes", low=1, error=RopeSpecError)
        return cls(sp.symbols(f"{name}_0:{n_planes}", real=True))

    @property
    def n_planes(self) -> int:
        return len(self.freqs)

    def rotation_at(self, position: sp.Expr) -> list[sp.Matrix]:
        """The per-plane rotations ``rho(position * theta_k)``."""
        return [rotation(position * f) for f in self.freqs]


@dataclass(frozen=True)
class LogitForm:
    """A derived RoPE logit.

    ``raw``: ``sum_k (rho(i theta_k) q_k)^T (rho(j theta_k) k_k)`` as sympy builds it.
    ``closed``: ``sum_k amplitude_k cos(offset * theta_k + phase_k)`` in the offset symbol ``u = j - i``.
    """

    raw: sp.Expr
    closed: sp.Expr
    amplitudes: tuple[sp.Expr, ...]
    phases: tuple[sp.Expr, ...]
    freqs: tuple[sp.Expr, ...]
    i: sp.Symbol
    j: sp.Symbol
    offset: sp.Symbol

    def latex(self) -> str:
        """LaTeX of the closed form, ``l(u) = ...``."""
        return rf"\ell(u) = {sp.latex(self.closed)}"

    def _repr_latex_(self) -> str:
        """Jupyter's display: :meth:`latex` as display math."""
        return f"$${self.latex()}$$"

    def free_symbols(self) -> list[sp.Symbol]:
        """Free symbols of the closed form, sorted by name (the default lambdify argument order)."""
        return sorted(self.closed.free_symbols, key=lambda s: s.name)

    def lambdify(
        self, backend: Backend = "numpy", args: Sequence[sp.Symbol] | None = None
    ) -> Callable[..., Any]:
        """The closed form as a numpy, torch or mpmath function of ``args``.

        ``args`` defaults to :meth:`free_symbols`. The mpmath function evaluates at mpmath's
        working precision (``mpmath.mp.dps``).
        """
        return lambdify_expr(self.closed, backend, self.free_symbols() if args is None else args)


def lambdify_expr(expr: sp.Expr, backend: Backend, args: Sequence[sp.Symbol]) -> Callable[..., Any]:
    """``sympy.lambdify`` of ``expr`` for one of the three supported backends."""
    if backend not in ("numpy", "torch", "mpmath"):
        raise ValueError(f"backend={backend!r} is unknown; accepted: 'numpy', 'torch', 'mpmath'")
    return sp.lambdify(list(args), expr, modules=backend)


def _as_planes(vectors: Sequence[Any], n_planes: int, name: str) -> list[sp.Matrix]:
    if len(vectors) != n_planes:
        raise RopeSpecError(f"{name} has {len(vectors)} plane vectors; the spec has {n_planes} planes")
    out = []
    for v in vectors:
        m = sp.Matrix(v)
        if m.shape not in ((2, 1), (1, 2)):
            raise RopeSpecError(f"each {name} plane vector must be 2-D, got shape {m.shape}")
        out.append(m.reshape(2, 1))
    return out


def plane_logit_coefficients(q: sp.Matrix, k: sp.Matrix) -> tuple[sp.Expr, sp.Expr]:
    """``(A, B)`` with ``q^T rho(a) k = A cos a + B sin a``: ``A = q . k``, ``B = q_2 k_1 - q_1 k_2``."""
    return q[0] * k[0] + q[1] * k[1], q[1] * k[0] - q[0] * k[1]


def raw_logit(
    q_planes: Sequence[Any], k_planes: Sequence[Any], spec: SymbolicRopeSpec, i: sp.Expr, j: sp.Expr
) -> sp.Expr:
    """``sum_k (rho(i theta_k) q_k)^T (rho(j theta_k) k_k)``, unsimplified."""
    qs = _as_planes(q_planes, spec.n_planes, "q_planes")
    ks = _as_planes(k_planes, spec.n_planes, "k_planes")
    return sp.Add(
        *[
            ((rotation(i * t) * q).T * (rotation(j * t) * k))[0, 0]
            for q, k, t in zip(qs, ks, spec.freqs, strict=True)
        ]
    )


def derive_logit(
    q_planes: Sequence[Any],
    k_planes: Sequence[Any],
    spec: SymbolicRopeSpec,
    i: sp.Symbol | None = None,
    j: sp.Symbol | None = None,
    offset: sp.Symbol | None = None,
    verify: bool = True,
) -> LogitForm:
    """Derive the logit of query vector ``q`` at position ``i`` and key vector ``k`` at ``j``.

    With ``verify=True`` sympy proves ``raw == closed`` (with ``u = j - i``) and raises
    ``AssertionError`` if it cannot.
    """
    i = sp.Symbol("i", integer=True) if i is None else i
    j = sp.Symbol("j", integer=True) if j is None else j
    u = sp.Symbol("u", integer=True) if offset is None else offset
    qs = _as_planes(q_planes, spec.n_planes, "q_planes")
    ks = _as_planes(k_planes, spec.n_planes, "k_planes")
    raw = raw_logit(qs, ks, spec, i, j)
    closed = sp.Integer(0)
    amps, phases = [], []
    for q, k, theta in zip(qs, ks, spec.freqs, strict=True):
        a, b = plane_logit_coefficients(q, k)
        amp = sp.sqrt(sp.trigsimp(q.dot(q))) * sp.sqrt(sp.trigsimp(k.dot(k)))
        if sp.simplify(sp.expand(amp**2 - (a**2 + b**2))) != 0:  # Lagrange's identity |q|^2|k|^2 = A^2 + B^2
            raise AssertionError("amplitude identity failed")
        phase = sp.atan2(sp.simplify(-b), sp.simplify(a))
        amps.append(amp)
        phases.append(phase)
        closed += amp * sp.cos(u * theta + phase)
    form = LogitForm(raw, closed, tuple(amps), tuple(phases), spec.freqs, i, j, u)
    if verify and not logit_identity_holds(form, qs, ks):
        raise AssertionError("sympy could not prove raw == closed form for this logit")
    return form


def logit_identity_holds(form: LogitForm, qs: Sequence[sp.Matrix], ks: Sequence[sp.Matrix]) -> bool:
    """Prove ``raw(i, j) == sum_k A_k cos((j-i) theta_k) + B_k sin((j-i) theta_k)``.

    ``A cos a + B sin a`` is the expanded form of ``amp cos(a + phase)``; comparing against it avoids
    ``atan2`` and is a polynomial identity in ``cos``/``sin`` once trig sums are expanded.
    """
    expanded = sp.Integer(0)
    d = form.j - form.i
    for q, k, theta in zip(qs, ks, form.freqs, strict=True):
        a, b = plane_logit_coefficients(q, k)
        expanded += a * sp.cos(d * theta) + b * sp.sin(d * theta)
    return vanishes_identically(form.raw - expanded)


def depends_only_on_offset(form: LogitForm) -> bool:
    """Prove ``(d/di + d/dj) raw == 0``: the logit is a function of ``j - i`` alone."""
    total = sp.diff(form.raw, form.i) + sp.diff(form.raw, form.j)
    return vanishes_identically(total)

"""[B]'s partial induction: attend to the *last* earlier occurrence of a symbol.

**Task family** (length ``n``, alphabet ``A >= 2``; docs/theory.md section 4). Tokens are pairs ``(L, v)``
of a letter and a value, as in [A]'s letter task. The query at ``n - 1`` is ``(X, Y)`` with
``X != Y``: "return the value bound to the last occurrence of ``Y``". The target is the latest earlier
pair with left letter ``Y``, at distance ``d_t`` in ``1 .. n-1``; the pairs between it and the query
(distances ``1 .. d_t - 1``) have left letters ``!= Y``; earlier pairs (``d_t + 1 .. n - 1``) are
arbitrary, ``Y`` included. Unlike Retrieval, ``Y`` may occur many times.

A single-layer head whose key depends on the left letter and whose query depends on ``Y`` scores
``f_Y(L, d)`` against a pair ``(L, .)`` ``d`` positions back. With ``T(d) = f_Y(Y, d)``,
``N(d) = max_{L != Y} f_Y(L, d)``, ``R(d) = max(N(d), T(d))`` (any letter) and ``S = N(0)`` (the
query's own key, ``X != Y``):

    margin_inf(n) = min_Y min_{1 <= d_t <= n-1} [ T(d_t) - max(S, max_{1<=d<d_t} N(d),
                                                               max_{d_t<d<=n-1} R(d)) ].

**Two-plane construction** (:func:`two_plane_construction`): plane 0 at ``theta = 0`` carries the
letter code (query ``rho(phi(Y) omega) v`` with amplitude ``alpha = 1 - beta``, key
``rho(phi(L) omega) v``, ``omega = 2 pi / A``); plane 1 at ``theta`` carries position (query ``beta v``,
key ``v``). Derived logit: ``f_Y(L, d) = alpha cos((phi(L) - phi(Y)) omega) + beta cos(d theta)``.
For ``(2n - 3) theta <= 2 pi`` (:func:`two_plane_margin_formula`):

    margin_inf(n) = min( 2 beta sin(theta/2) min(sin(3 theta/2), sin((2n-3) theta/2))   [n >= 3],
                         alpha (1 - cos omega) - beta (1 - cos((n-1) theta)) ),

so the horizon is the largest ``n`` with ``(2n - 3) theta < 2 pi`` and
``alpha (1 - cos omega) > beta (1 - cos((n-1) theta))``; designed for ``n0`` (``theta = pi / n0``,
balanced ``beta``) the margin is ``~ 3 pi^2 beta / (2 n0^2)``: the positional part decays like Index.

**One plane.** With ``theta = 0`` every head ties two occurrences of ``Y`` (``f`` does not depend on
``d``), so ``margin_inf(3) <= 0`` (:func:`zero_frequency_tie`). With one rotating plane,
:func:`search_one_plane` searches heads ``f_Y(L, d) = q_Y . rho(-d theta) k_L`` for one with a
positive margin: such a head is a counterexample to "one plane cannot do it" at that length.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from mpmath import iv

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._construction import (
    Construction,
    Plane,
    Rotated,
    Token,
    letter_pair_tokens,
    letter_tokens,
)
from ropeproof.theory._derive import OFFSET, derive
from ropeproof.verify.measure.exact._certified import interval_ends, iv_precision
from ropeproof.verify.studies.beyond._letter_codes import horizon

THETA = sp.Symbol("theta", real=True)
BETA = sp.Symbol("beta", positive=True)


MAX_HEAD_ALPHABET = 256
"""Largest alphabet of a partial-induction head built here (its logits are tabulated per letter pair)."""
MAX_MARGIN_LENGTH = 1 << 16
"""Longest length at which exact margins are computed here (``O(A n^2)`` work per head)."""


# ----------------------------------------------------------------------------------- exact margins


def margins_from_terms(target: np.ndarray, nonmatch: np.ndarray, self_score: float) -> np.ndarray:
    """``margin_inf(n)`` of one query letter for ``n = 2 .. D + 1`` from ``T(d)``, ``N(d)``
    (``d = 1 .. D``, index ``d - 1``) and ``S`` (formula in the module docstring). ``O(D^2)``."""
    t = np.asarray(target, dtype=np.float64)
    nm = np.asarray(nonmatch, dtype=np.float64)
    big = t.size
    anyl = np.maximum(nm, t)
    before = np.maximum.accumulate(np.concatenate([[self_score], nm[:-1]]))  # max(S, N(1..d_t-1))
    out = np.full(big, np.inf)
    for dt in range(1, big + 1):
        base = t[dt - 1] - before[dt - 1]
        out[dt - 1] = min(out[dt - 1], base)  # n = dt + 1: nothing earlier
        if dt < big:
            later = np.maximum.accumulate(anyl[dt:])  # max R(dt+1 .. n-1), n = dt + 2 ..
            vals = t[dt - 1] - np.maximum(before[dt - 1], later)
            out[dt:] = np.minimum(out[dt:], vals)
    return out


def head_margins(
    logits: Callable[[int], np.ndarray], alphabet: int, max_n: int, cyclic: bool = False
) -> np.ndarray:
    """``margin_inf(n)`` for ``n = 2 .. max_n`` of a head given ``logits(Y) -> [A, max_n]`` array
    ``f_Y(L, d)`` for ``d = 0 .. max_n - 1``. ``cyclic``: ``f_Y(L, d)`` depends on ``L - Y mod A``
    only, so the query ``Y = 0`` stands for all."""
    alphabet = integer(alphabet, "alphabet", low=2, high=MAX_HEAD_ALPHABET)
    max_n = integer(max_n, "max_n", low=2, high=MAX_MARGIN_LENGTH)
    out = np.full(max_n - 1, np.inf)
    for y in range(1 if cyclic else alphabet):
        f = np.asarray(logits(y), dtype=np.float64)
        nm = np.delete(f, y, axis=0).max(0)
        out = np.minimum(out, margins_from_terms(f[y, 1:], nm[1:], float(nm[0])))
    return out


# ---------------------------------------------------------------------------- the two-plane head


def two_plane_construction(alphabet: int, theta: float, beta: float) -> Construction:
    """The two-plane partial-induction head: a ``theta = 0`` letter plane (amplitude ``1 - beta``) and a
    positional plane at ``theta`` (amplitude ``beta``); see the module docstring."""
    integer(alphabet, "alphabet", low=2, high=MAX_HEAD_ALPHABET)
    real(beta, "beta", low=0, high=1, low_open=True, high_open=True)
    real(theta, "theta", low=0, low_open=True)
    omega = 2 * sp.pi / alphabet
    letters = letter_tokens(alphabet)
    tokens = []
    for left in letters:
        tokens.extend(letter_pair_tokens(left, letters))
        tokens.append(Token(f"{left.name}=v", "pair", {"phi_left": left.params["phi"]}, rule="pair_lv"))
    phi_l = sp.Symbol("phi_L", integer=True, nonnegative=True)
    phi_r = sp.Symbol("phi_R", integer=True, nonnegative=True)

    def key(p: dict, k: int, _plane: Plane) -> Rotated:
        return Rotated(p["phi_left"] * omega if k == 0 else 0)

    def query(p: dict, k: int, _plane: Plane) -> Rotated:
        return Rotated(p["phi_right"] * omega if k == 0 else 0)

    return Construction(
        name="partial_induction",
        tokens=tuple(tokens),
        planes=(Plane(0, 1 - BETA), Plane(THETA, BETA)),
        query_rules={"pair_ll": query, "pair_lv": lambda p, k, pl: Rotated(0, 0)},
        key_rules={"pair_ll": key, "pair_lv": key},
        value=lambda t: {t.name: 1},
        generic={
            "pair_ll": Token("(L,R)", "pair", {"phi_left": phi_l, "phi_right": phi_r}, rule="pair_ll"),
            "pair_lv": Token("(L,v)", "pair", {"phi_left": phi_l}, rule="pair_lv"),
        },
        parameters={THETA: float(theta), BETA: float(beta)},
        description="[B] partial induction: a theta = 0 letter plane plus a positional plane.",
    )


def two_plane_logit_expr(alphabet: int = 4) -> sp.Expr:
    """The derived (and proved) closed-form logit of query ``(X, Y)`` against key ``(L, .)`` at
    offset ``u``: ``(1 - beta) cos((phi_L - phi_R) omega) + beta cos(u theta)``."""
    c = two_plane_construction(alphabet, 0.1, 0.5)
    return derive(c).logit("pair_ll", "pair_lv").closed


def two_plane_margins(alphabet: int, theta: float, beta: float, max_n: int) -> np.ndarray:
    """Exact (float64) ``margin_inf(n)``, ``n = 2 .. max_n``, from the derived logit."""
    max_n = integer(max_n, "max_n", low=2, high=MAX_MARGIN_LENGTH)
    c = two_plane_construction(alphabet, theta, beta)
    rule = derive(c).logit("pair_ll", "pair_lv")
    sym = {s.name: s for s in rule.closed.free_symbols}
    expr = rule.closed.subs(c.parameters)
    f = sp.lambdify([sym["phi_L_k"], sym["phi_R_q"], OFFSET], expr, "numpy")
    d = np.arange(max_n, dtype=np.float64)
    letters = np.arange(alphabet)

    def logits(y: int) -> np.ndarray:
        return np.broadcast_to(f(letters[:, None], y, -d[None, :]), (alphabet, max_n))

    return head_margins(logits, alphabet, max_n, cyclic=True)


def two_plane_margin_formula(alphabet: int, theta: float, beta: float, n: int) -> float:
    """Closed form of ``margin_inf(n)`` for ``(2n - 3) theta <= 2 pi`` (module docstring)."""
    if (2 * n - 3) * theta > 2 * math.pi:
        raise InputError(f"the closed form needs (2n - 3) theta <= 2 pi; n={n}, theta={theta}")
    omega = 2 * math.pi / alphabet
    content = (1 - beta) * 2 * math.sin(omega / 2) ** 2 - beta * 2 * math.sin((n - 1) * theta / 2) ** 2
    if n < 3:
        return content
    recency = 2 * beta * math.sin(theta / 2) * min(math.sin(1.5 * theta), math.sin((2 * n - 3) * theta / 2))
    return min(recency, content)


@dataclass(frozen=True)
class TwoPlaneDesign:
    """A two-plane head designed for ``length``: ``theta = pi / length`` and the ``beta`` that balances
    the recency and content terms at ``n = length``."""

    alphabet: int
    length: int
    theta: float
    beta: float
    margin: float


def design_two_plane(alphabet: int, length: int) -> TwoPlaneDesign:
    """``theta = pi / n0`` (``sin(3 theta/2) = sin((2 n0 - 3) theta / 2)``) and the balancing ``beta``."""
    integer(alphabet, "alphabet", low=2, high=MAX_HEAD_ALPHABET)
    length = integer(length, "length", low=3, high=MAX_MARGIN_LENGTH, note="n = 2 has no recency to resolve")
    theta = math.pi / length
    c1 = 2 * math.sin(theta / 2) * min(math.sin(1.5 * theta), math.sin((2 * length - 3) * theta / 2))
    content = 2 * math.sin(math.pi / alphabet) ** 2
    c2 = 2 * math.sin((length - 1) * theta / 2) ** 2
    beta = content / (c1 + content + c2)
    return TwoPlaneDesign(
        alphabet, length, theta, beta, two_plane_margin_formula(alphabet, theta, beta, length)
    )


# ------------------------------------------------------------------------------------- one plane


def zero_frequency_tie() -> sp.Expr:
    """``f_Y(Y, 1) - f_Y(Y, 2)`` for a general one-plane head at ``theta = 0`` (sympy; it is 0)."""
    q0, q1, k0, k1 = sp.symbols("q0 q1 k0 k1", real=True)
    u = sp.Symbol("u", integer=True)
    rot = sp.Matrix([[sp.cos(u * 0), -sp.sin(u * 0)], [sp.sin(u * 0), sp.cos(u * 0)]])
    logit = (sp.Matrix([[q0, q1]]) * rot * sp.Matrix([k0, k1]))[0]
    return sp.simplify(logit.subs(u, -1) - logit.subs(u, -2))


@dataclass
class OnePlaneHead:
    """A one-plane head: ``f_Y(L, d) = q_Y . rho(-d theta) k_L`` (``queries``, ``keys``: ``[A, 2]``)."""

    theta: float
    queries: np.ndarray
    keys: np.ndarray
    label: str = ""

    @property
    def alphabet(self) -> int:
        return int(self.keys.shape[0])

    def logits(self, y: int, max_n: int) -> np.ndarray:
        a = -np.arange(max_n, dtype=np.float64) * self.theta
        q, k = self.queries[y], self.keys
        dot = q[0] * k[:, 0] + q[1] * k[:, 1]
        cross = q[1] * k[:, 0] - q[0] * k[:, 1]
        return np.cos(a)[None, :] * dot[:, None] + np.sin(a)[None, :] * cross[:, None]

    def margins(self, max_n: int, cyclic: bool = False) -> np.ndarray:
        return head_margins(lambda y: self.logits(y, max_n), self.alphabet, max_n, cyclic)

    def as_dict(self) -> dict[str, Any]:
        return {
            "theta": self.theta,
            "queries": self.queries.tolist(),
            "keys": self.keys.tolist(),
            "label": self.label,
        }


def retrieval_code_head(alphabet: int, theta: float) -> OnePlaneHead:
    """[A]'s T_Retrieval geometry as a one-plane head: letter ``c`` at phase ``c omega`` for both its
    key and the query asking for it."""
    omega = 2 * math.pi / alphabet
    v = np.stack([np.cos(omega * np.arange(alphabet)), np.sin(omega * np.arange(alphabet))], 1)
    v = np.where(np.abs(v) < 1e-15, 0.0, v)  # exact zeros at multiples of pi / 2
    return OnePlaneHead(float(theta), v, v.copy(), f"T_Retrieval code, theta={theta:.6g}")


@dataclass
class OnePlaneSearch:
    """Outcome of :func:`search_one_plane`: heads tried, how many solve the task at ``length``, the best."""

    alphabet: int
    length: int
    tried: int
    solved: int
    best: OnePlaneHead
    best_margin: float
    certified_margin: tuple[float, float] | None = None
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def counterexample_found(self) -> bool:
        """A one-plane head with a *certified* positive margin at ``length``."""
        return self.certified_margin is not None and self.certified_margin[0] > 0


def search_one_plane(alphabet: int, length: int, trials: int = 400, seed: int = 0) -> OnePlaneSearch:
    """Search one-plane heads for one that solves partial induction at ``length``.

    Candidates: random heads (``theta`` log-uniform in ``[1e-3 / length, pi]``, Gaussian query and key
    vectors) and the T_Retrieval code on a grid of ``theta`` below ``omega / (2 length)``. Every
    margin is exact (float64); the best head's margin is then enclosed by interval arithmetic.
    """
    alphabet = integer(alphabet, "alphabet", low=2, high=MAX_HEAD_ALPHABET)
    length = integer(length, "length", low=2, high=4096)
    rng = np.random.default_rng(seed)
    heads: list[tuple[str, OnePlaneHead]] = []
    for _ in range(trials):
        theta = float(math.exp(rng.uniform(math.log(1e-3 / length), math.log(math.pi))))
        heads.append(
            (
                "random",
                OnePlaneHead(
                    theta, rng.standard_normal((alphabet, 2)), rng.standard_normal((alphabet, 2)), "random"
                ),
            )
        )
    omega = 2 * math.pi / alphabet
    for frac in np.linspace(0.05, 1.2, 24):
        heads.append(("code", retrieval_code_head(alphabet, float(frac * omega / (2 * length)))))
    best, best_margin, solved = heads[0][1], -math.inf, 0
    by_kind: dict[str, list[int]] = {}
    for kind, h in heads:
        m = float(h.margins(length)[-1])
        counts = by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        if m > 0:
            solved += 1
            counts[1] += 1
        if m > best_margin:
            best, best_margin = h, m
    result = OnePlaneSearch(
        alphabet,
        length,
        len(heads),
        solved,
        best,
        best_margin,
        by_kind={k: (v[0], v[1]) for k, v in by_kind.items()},
    )
    if best_margin > 0:
        result.certified_margin = certified_one_plane_margin(best, length)
    return result


def certified_one_plane_margin(head: OnePlaneHead, n: int, prec: int = 80) -> tuple[float, float]:
    """Interval enclosure ``(lo, hi)`` of a one-plane head's ``margin_inf(n)`` (``mpmath.iv`` for every
    logit, float64 rounded outward after; ``O(A^2 n^2)``)."""
    n = integer(n, "n", low=2, high=512)
    a = head.alphabet
    lo = np.empty((a, a, n))
    hi = np.empty((a, a, n))
    with iv_precision(prec):
        th = iv.mpf(float(head.theta))
        for y in range(a):
            qy = [iv.mpf(float(x)) for x in head.queries[y]]
            for letter in range(a):
                k = [iv.mpf(float(x)) for x in head.keys[letter]]
                dot, cross = qy[0] * k[0] + qy[1] * k[1], qy[1] * k[0] - qy[0] * k[1]
                for d in range(n):
                    angle = -d * th
                    lo[y, letter, d], hi[y, letter, d] = interval_ends(
                        iv.cos(angle) * dot + iv.sin(angle) * cross
                    )
    worst_lo, worst_hi = math.inf, math.inf
    for y in range(a):
        nm_lo = np.delete(lo[y], y, axis=0).max(0)
        nm_hi = np.delete(hi[y], y, axis=0).max(0)
        any_lo, any_hi = np.maximum(nm_lo, lo[y, y]), np.maximum(nm_hi, hi[y, y])
        for dt in range(1, n):
            comp_hi = max(float(nm_hi[:dt].max()), float(any_hi[dt + 1 : n].max(initial=-np.inf)))
            comp_lo = max(float(nm_lo[:dt].max()), float(any_lo[dt + 1 : n].max(initial=-np.inf)))
            worst_lo = min(worst_lo, float(np.nextafter(lo[y, y, dt] - comp_hi, -np.inf)))
            worst_hi = min(worst_hi, float(np.nextafter(hi[y, y, dt] - comp_lo, np.inf)))
    return worst_lo, worst_hi


def one_plane_code_horizon(alphabet: int, theta: float, max_n: int | None = None) -> int:
    """Horizon of the T_Retrieval code head on partial induction at rotation ``theta``."""
    max_n = max_n or min(1 << 16, int(math.pi / alphabet / theta) + 16)
    return horizon(retrieval_code_head(alphabet, theta).margins(max_n, cyclic=True))


def two_plane_horizon(alphabet: int, theta: float, beta: float, max_n: int | None = None) -> int:
    """Horizon of the two-plane head (``theta = 0`` letters + positional plane at ``theta``)."""
    max_n = max_n or min(1 << 16, int(math.pi / theta) + 16)
    return horizon(two_plane_margins(alphabet, theta, beta, max_n))

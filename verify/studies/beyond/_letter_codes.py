"""Letter codes for Retrieval: one plane versus orthogonal codes, and horizons on slowly rotating planes.

A *letter code* gives each letter ``L`` a plane ``p(L)`` and a phase ``beta_L``: the key of a pair
``(L, .)`` is ``rho(beta_L) v`` in plane ``p(L)`` (zero elsewhere) and the query of ``(X, Y)`` is
``rho(beta_Y) v`` in plane ``p(Y)``. With docs/theory.md section 1's convention the logit against a key
``d`` positions back (offset ``u = -d``) is

    f_Y(L, d) = [p(L) = p(Y)] cos(-d theta_{p(Y)} + beta_L - beta_Y),

all vectors unit, so logits lie in ``[-1, 1]``. On the Retrieval family (docs/theory.md section 4;
:func:`ropeproof.verify.measure.exact._families.retrieval_family`: query ``(X, Y)``, ``X != Y``; one earlier
pair
with left
letter ``Y`` at distance ``d_t``; every other pair's left letter ``!= Y``), with
``T_Y(d) = f_Y(Y, d)``, ``O_Y(d) = max_{L != Y} f_Y(L, d)`` and ``S_Y = O_Y(0)`` (the query's own key):

    margin_inf(n) = min_Y min_{1 <= d_t <= n-1} [ T_Y(d_t) - max(S_Y, max_{1 <= d <= n-1, d != d_t} O_Y(d)) ].

Codes:

- :func:`one_plane_code`: [A]'s T_Retrieval, every letter in one plane at phase ``phi(L) omega``,
  ``omega = 2 pi / |ALPH|``. At ``theta = 0``: ``margin = 1 - cos(omega) = 2 sin(pi/|ALPH|)^2 ~
  2 pi^2 / |ALPH|^2``.
- :func:`orthogonal_code`: letter ``i`` in plane ``floor(i / 2)`` at phase ``(i mod 2) pi / 2``, i.e.
  the letters are orthonormal vectors of ``R^(2P)``, ``P = ceil(|ALPH| / 2)``. At ``theta = 0``:
  ``margin = 1`` for every ``|ALPH|``.

The *horizon* is the largest ``n`` with ``margin_inf(n') > 0`` for all ``n' <= n`` (``margin_inf``
never increases with ``n``). For slowly rotating planes (the lowest frequencies of a standard
spectrum) the one-plane code's horizon is the largest ``n`` with ``(2n - 3) theta < omega``
(:func:`one_plane_horizon_formula`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.machinery._validate import integer, real
from ropeproof.verify.kernel._angles import offset_angles
from ropeproof.verify.measure.exact._certified import prefix_top2
from ropeproof.verify.studies.beyond._many_plane import standard_frequencies

MAX_CODE_ALPHABET = 4096
"""Largest alphabet of a letter code built here (its margins are computed per query class)."""


@dataclass(frozen=True)
class LetterCode:
    """A letter code: ``freqs[p]`` per plane, and per letter its ``plane`` and ``phase``."""

    name: str
    freqs: np.ndarray
    plane: np.ndarray
    phase: np.ndarray

    def __post_init__(self) -> None:
        if self.plane.shape != self.phase.shape or self.plane.size < 2:
            raise InputError("a letter code needs >= 2 letters, each with a plane and a phase")
        if self.plane.min() < 0 or self.plane.max() >= self.freqs.size:
            raise InputError(f"letter planes must lie in 0 .. {self.freqs.size - 1}")

    @property
    def alphabet(self) -> int:
        return int(self.plane.size)

    @property
    def planes(self) -> int:
        return int(self.freqs.size)

    def logits(self, query: int, distances: np.ndarray) -> np.ndarray:
        """``f_Y(L, d)`` for ``Y = query``, every letter ``L`` (rows) and every distance (columns)."""
        d = np.asarray(distances, dtype=np.float64)
        same = self.plane == self.plane[query]
        theta = float(self.freqs[self.plane[query]])
        cq, sq = _unit(self.phase[query])
        ck, sk = _unit(self.phase)
        # q . rho(a) k = cos(a) (q . k) + sin(a) (q_y k_x - q_x k_y), a = -d theta
        dot, cross = cq * ck + sq * sk, sq * ck - cq * sk
        a = -offset_angles(d, theta)  # d theta reduced mod 2 pi
        vals = np.cos(a)[None, :] * dot[:, None] + np.sin(a)[None, :] * cross[:, None]
        return np.where(same[:, None], vals, 0.0)

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Explicit ``(queries, keys)``, each ``[|ALPH|, 2P]`` (plane ``p`` on dims ``2p, 2p + 1``)."""
        q = np.zeros((self.alphabet, 2 * self.planes))
        c, s = _unit(self.phase)
        for i, p in enumerate(self.plane):
            q[i, 2 * p], q[i, 2 * p + 1] = c[i], s[i]
        return q, q.copy()


def _unit(phase: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` of phases, exact (0, +-1) at multiples of ``pi / 2``."""
    p = np.asarray(phase, dtype=np.float64)
    c, s = np.cos(p), np.sin(p)
    quarter = np.isclose(np.mod(p, math.pi / 2), 0, atol=1e-12) | np.isclose(
        np.mod(p, math.pi / 2), math.pi / 2, atol=1e-12
    )
    return np.where(quarter, np.round(c), c), np.where(quarter, np.round(s), s)


def one_plane_code(alphabet: int, theta: float = 0.0) -> LetterCode:
    """[A]'s T_Retrieval code: one plane at ``theta``, letter ``c`` at phase ``c 2 pi / |ALPH|``."""
    alphabet = integer(alphabet, "alphabet", low=2, high=MAX_CODE_ALPHABET)
    omega = 2 * math.pi / alphabet
    return LetterCode(
        "one-plane", np.array([float(theta)]), np.zeros(alphabet, dtype=np.int64), omega * np.arange(alphabet)
    )


def orthogonal_code(alphabet: int, freqs: Sequence[float] | float = 0.0) -> LetterCode:
    """Orthonormal letter vectors: letter ``i`` in plane ``i // 2`` at phase ``(i % 2) pi / 2``;
    ``freqs`` is one frequency for every plane or one per plane (``ceil(|ALPH|/2)`` of them)."""
    alphabet = integer(alphabet, "alphabet", low=2, high=MAX_CODE_ALPHABET)
    planes = (alphabet + 1) // 2
    f = np.full(planes, float(freqs)) if np.isscalar(freqs) else np.asarray(freqs, dtype=np.float64)
    if f.shape != (planes,):
        raise InputError(f"orthogonal_code({alphabet}) needs {planes} plane frequencies; got {f.size}")
    i = np.arange(alphabet)
    return LetterCode("orthogonal", f, i // 2, (i % 2) * (math.pi / 2))


def margin_from_terms(target: np.ndarray, other: np.ndarray, self_score: float) -> np.ndarray:
    """``margin_inf(n)`` for ``n = 2 .. D + 1`` of one query class: ``target[d-1] = T(d)``,
    ``other[d-1] = O(d)`` for ``d = 1 .. D``, ``self_score = S`` (formula in the module docstring)."""
    t = np.asarray(target, dtype=np.float64)
    o = np.asarray(other, dtype=np.float64)
    top, idx = prefix_top2(o)
    first = np.maximum(top[:, 0], self_score)
    second = np.maximum(np.where(idx[:, 1] >= 0, top[:, 1], -np.inf), self_score)
    bot, bidx = prefix_top2(t, largest=False)
    excl = np.where(bidx[:, 0] != idx[:, 0], bot[:, 0], np.where(bidx[:, 1] >= 0, bot[:, 1], np.inf))
    return np.minimum(excl - first, t[idx[:, 0]] - second)


def code_margins(code: LetterCode, max_n: int) -> np.ndarray:
    """Exact (float64) ``margin_inf(n)`` of a letter code on the Retrieval family, ``n = 2 .. max_n``.

    Queries with the same plane frequency and the same relative phases of their plane-mates share
    their terms, so each class is computed once.
    """
    max_n = integer(max_n, "max_n", low=2, high=10**7)
    d = np.arange(0, max_n)
    out = np.full(max_n - 1, np.inf)
    seen: set[tuple] = set()
    for y in range(code.alphabet):
        mates = code.plane == code.plane[y]
        rel = tuple(sorted(np.round(np.mod(code.phase[mates] - code.phase[y], 2 * math.pi), 15).tolist()))
        key = (float(code.freqs[code.plane[y]]), rel, bool((~mates).any()))
        if key in seen:
            continue
        seen.add(key)
        f = code.logits(y, d)
        others = np.delete(f, y, axis=0).max(0)
        out = np.minimum(out, margin_from_terms(f[y, 1:], others[1:], float(others[0])))
    return out


def horizon(margins: np.ndarray) -> int:
    """The largest ``n`` with ``margin_inf(n') > 0`` for every ``2 <= n' <= n`` (1 if already ``n = 2``
    fails), from ``margins[n - 2] = margin_inf(n)`` of any head (letter codes here, the partial-induction
    heads of :mod:`ropeproof.verify.studies.beyond._partial_induction`). Raises :class:`InputError` if the
    margin
    is still positive at the end of the sweep."""
    bad = np.nonzero(~(np.asarray(margins) > 0))[0]
    if bad.size == 0:
        raise InputError(
            f"the margin is positive for every n up to {np.asarray(margins).size + 1}; sweep further"
        )
    return int(bad[0]) + 1


def one_plane_horizon_formula(alphabet: int, theta: float) -> int:
    """Largest ``n`` with ``(2n - 3) theta < omega`` (``theta > 0`` small: the one-plane code's horizon)."""
    theta = real(theta, "theta", low=0.0, low_open=True, note="theta = 0 has no horizon")
    omega = 2 * math.pi / alphabet
    n = math.floor((omega / theta + 3) / 2)
    while (2 * n - 3) * theta >= omega:
        n -= 1
    return n


@dataclass(frozen=True)
class SlowHorizon:
    """Horizons of the two codes on the lowest planes of a standard spectrum."""

    head_dim: int
    alphabet: int
    one_plane_theta: float
    one_plane_horizon: int
    one_plane_formula: int
    orthogonal_thetas: tuple[float, ...]
    orthogonal_horizon: int
    orthogonal_margin_at_16: float
    one_plane_margin_at_16: float


def slow_plane_horizons(head_dim: int = 128, alphabet: int = 8, base: float = 10000.0) -> SlowHorizon:
    """Retrieval horizons when the codes use the *lowest* frequencies of the standard spectrum: the
    one-plane code on the lowest plane, the orthogonal code on the lowest ``ceil(|ALPH|/2)`` planes."""
    f = standard_frequencies(head_dim, base)
    planes = (alphabet + 1) // 2
    if planes > f.size:
        raise InputError(f"alphabet={alphabet} needs {planes} planes; head_dim={head_dim} has {f.size}")
    one = one_plane_code(alphabet, float(f[-1]))
    formula = one_plane_horizon_formula(alphabet, float(f[-1]))
    m1 = code_margins(one, 2 * formula + 8)
    ortho = orthogonal_code(alphabet, f[-planes:][::-1].copy())
    guess = int(math.pi / 2 / f[-planes:].max()) + 8
    m2 = code_margins(ortho, guess)
    return SlowHorizon(
        head_dim,
        alphabet,
        float(f[-1]),
        horizon(m1),
        formula,
        tuple(float(x) for x in f[-planes:]),
        horizon(m2),
        float(m2[14]),
        float(m1[14]),
    )


@data_product("beyond.slow-plane-horizons")
def SLOW_HORIZONS(store: ResultStore, head_dim: int = 128, alphabet: int = 8) -> dict[str, Any]:
    """:func:`slow_plane_horizons` as JSON data (:func:`slow_horizon_of` reads it back): the claim
    ``letter-codes.slow-horizon`` and the figure ``letter_codes`` use the same horizons."""
    return dataclasses.asdict(slow_plane_horizons(head_dim, alphabet))


def slow_horizon_of(data: dict[str, Any]) -> SlowHorizon:
    """The :class:`SlowHorizon` of :data:`SLOW_HORIZONS` data."""
    return SlowHorizon(**{**data, "orthogonal_thetas": tuple(data["orthogonal_thetas"])})


def alphabet_comparison(alphabets: Sequence[int], max_n: int = 64) -> list[dict[str, float | int]]:
    """Rows ``(|ALPH|, planes used, margin_inf(max_n))`` for both codes at ``theta = 0``, exact, with the
    closed forms ``2 sin(pi/|ALPH|)^2`` and ``1``."""
    rows = []
    for a in alphabets:
        one = code_margins(one_plane_code(int(a)), max_n)
        ortho = code_margins(orthogonal_code(int(a)), max_n)
        rows.append(
            {
                "alphabet": int(a),
                "one_plane_margin": float(one.min()),
                "one_plane_closed_form": 2 * math.sin(math.pi / a) ** 2,
                "one_plane_asymptotic": 2 * math.pi**2 / a**2,
                "orthogonal_margin": float(ortho.min()),
                "orthogonal_planes": (int(a) + 1) // 2,
                "max_n": max_n,
            }
        )
    return rows

"""Certified correctness of a compiled multi-hop model on every input of its task family, by interval
arithmetic (Arb balls, ``flint.arb``, for the per-length leaks; ``mpmath.iv`` for the one code margin).

The family at length ``n`` with up to ``H`` hops (``docs/theory.md`` sections 3 and 6): every sequence of
``n`` tokens whose chain from the last position reaches an answer (a letter; a (letter, integer) pair)
in ``h <= H`` hops, every step in range (an integer ``m`` at ``p`` has ``m <= p``) and every lookup
unique (a (letter, letter) pair on the chain has two different letters and its right letter is the left
letter of exactly one earlier pair; the answer pair's left letter is that of no other earlier pair).
Nothing else is constrained: tokens off the chain are arbitrary. [A]'s generators (letters then
integers; targets then distractor pairs) are a subset.

For each ``n`` the check encloses

- every layer's chain-row margin ``mu_l(n)`` (:mod:`ropeproof.verify.exact.multihop_margins`);
- the leaked mass ``eps_l(n) <= K e^{-beta mu_l} / (1 + K e^{-beta mu_l})``, ``K = n - 1``, ``beta`` the
  logit scale (``eps_l = 1`` when the margin is not certified positive), as one ``flint.arb`` ball per
  layer and length (:func:`~ropeproof.theory.multihop_bound.leak_bound` with Arb's ``exp``), rounded
  outward by :func:`~ropeproof.verify.exact.certified.arb_ends`;
- the readout margin bound ``R(n) = c gamma - 2^{L+1} sum_l eps_l(n)``
  (:func:`ropeproof.theory.multihop_bound.readout_margin_bound` with unit codes, ``M_0 = U = 1``,
  evaluated in outward-rounded float64 from the interval ends), where ``c = c_L(H)`` is the smallest
  chain coefficient over ``h <= H`` (it decreases with ``h``) and ``gamma`` the code margin.

A row ``holds`` when the lower end of ``R(n)`` is positive: then every input of length ``n`` in the
family is answered correctly by the construction in exact real arithmetic. Otherwise it is
``undecided``: the bound proves nothing there, which is not a failure of the model (sampled inputs and
searches, :mod:`ropeproof.verify.beyond.multihop_length`, say what really happens). ``eps_l`` grows and
``mu_l`` shrinks with ``n``, so ``R`` is non-increasing and the certified lengths are ``2 .. horizon``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flint import arb
from mpmath import iv

from ropeproof.constructions.multihop_compile import CompiledModel
from ropeproof.theory.errors import InputError
from ropeproof.theory.multihop_bound import leak_bound
from ropeproof.verify.exact.certified import arb_ends, arb_precision, interval_ends, iv_precision
from ropeproof.verify.exact.multihop_margins import (
    distinct_layers,
    layer_margin_enclosure,
    layer_sweep,
)


@dataclass
class MultiHopCertificate:
    """Row-by-row verdicts for ``n = 2 .. max_n`` (arrays indexed by ``n - 2``).

    ``bound_lo``/``bound_hi``: the enclosure of ``R(n)``; ``margin_lo[j]``/``eps_hi[j]``: the margin's
    lower end and the leak's upper end of distinct layer ``layers[j]``; ``status``: ``holds`` or
    ``undecided``.

    Shapes: n [max_n - 1]; bound_lo [max_n - 1]; bound_hi [max_n - 1]; margin_lo [layers, max_n - 1];
        eps_hi [layers, max_n - 1]; status [max_n - 1]
    """

    model: str
    hops: int
    logit_scale: float
    coefficient: int
    gamma: tuple[float, float]
    n: np.ndarray
    bound_lo: np.ndarray
    bound_hi: np.ndarray
    layers: list[int]
    multiplicity: list[int]
    margin_lo: np.ndarray
    eps_hi: np.ndarray
    status: np.ndarray
    seconds: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def horizon(self) -> int:
        """The largest ``N`` with every ``n <= N`` certified (1 if ``n = 2`` already is not)."""
        bad = np.nonzero(self.status != "holds")[0]
        return int(self.n[-1]) if bad.size == 0 else int(self.n[bad[0]]) - 1

    @property
    def complete(self) -> bool:
        """Whether every row up to ``max_n`` holds (the horizon may lie beyond)."""
        return bool((self.status == "holds").all())

    def limiting_layer(self, n: int) -> int:
        """The layer whose leak term ``multiplicity * eps`` is largest at length ``n``."""
        r = n - 2
        weights = [m * e for m, e in zip(self.multiplicity, self.eps_hi[:, r], strict=True)]
        return self.layers[int(np.argmax(weights))]

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.model,
            "hops": self.hops,
            "logit_scale": self.logit_scale,
            "chain_coefficient": self.coefficient,
            "code_margin": list(self.gamma),
            "n_range": [int(self.n[0]), int(self.n[-1])],
            "horizon": self.horizon,
            "complete": self.complete,
            "rows": {s: int((self.status == s).sum()) for s in ("holds", "undecided")},
            "seconds": round(self.seconds, 3),
            "certified": True,
        }
        if not self.complete:
            n = self.horizon + 1
            out["first_undecided_n"] = n
            out["bound_at_first_undecided"] = [float(self.bound_lo[n - 2]), float(self.bound_hi[n - 2])]
            out["limiting_layer"] = self.limiting_layer(n)
        return {**out, **self.detail}


def _down(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, -np.inf)


def _up(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, np.inf)


def _gamma(model: CompiledModel, prec: int) -> tuple[Any, tuple[float, float]]:
    answers = len(model.answers)
    with iv_precision(prec):
        if model.channel_code == "onehot":
            g = iv.mpf(1)
        else:
            g = 2 * iv.sin(iv.pi / answers) ** 2
            g = iv.mpf(1) if g.a >= 1 else (g if g.b <= 1 else iv.mpf([g.a, 1]))
        return g, interval_ends(g)


def certify_model(model: CompiledModel, hops: int, max_n: int, prec: int = 80) -> MultiHopCertificate:
    """Certify ``model`` on its task family with up to ``hops`` hops, for ``n = 2 .. max_n``
    (module docstring)."""
    start = time.perf_counter()
    if not isinstance(model, CompiledModel):
        raise InputError(f"model must be a CompiledModel, got {type(model).__name__}")
    if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= model.hop_layers:
        raise InputError(
            f"hops={hops!r} must be an integer in 1..{model.hop_layers} (the model's hop layers)"
        )
    if isinstance(max_n, bool) or not isinstance(max_n, int | np.integer) or not 2 <= max_n <= 10**6:
        raise InputError(f"max_n={max_n!r} must be an integer in 2..10^6")
    max_n = int(max_n)
    unit_codes = model.channel_code in ("cyclic", "onehot")
    if not unit_codes or any(info.value_weight != 1.0 for info in model.layer_info):
        raise InputError(
            "the bound assumes value weight 1 in every layer and unit answer codes (cyclic, one-hot)"
        )
    coefficient = model.chain_coefficient(hops)
    layers = distinct_layers(model)
    infos = [model.layer_info[i] for i in layers]
    multiplicity = [sum(1 for x in model.layer_info if x == info) for info in infos]
    margins = [layer_margin_enclosure(info, max_n, prec, model.vocab_size)[0] for info in infos]
    n = np.arange(2, max_n + 1)
    eps_lo, eps_hi = np.ones((len(layers), n.size)), np.ones((len(layers), n.size))
    _g, g_ends = _gamma(model, prec)
    with arb_precision(prec):
        beta = arb(float(model.logit_scale))
        for j, mu in enumerate(margins):
            for r, nn in enumerate(n.tolist()):
                m = float(mu[r])
                if m > 0:  # the leak bound decreases with the margin: use the margin's lower end
                    eps_lo[j, r], eps_hi[j, r] = arb_ends(leak_bound(beta, arb(m), nn - 1, exp=arb.exp))
    # readout_margin_bound(c, gamma, eps) = c gamma - 2^(L+1) sum_l eps_l, in outward-rounded float64
    total_hi, total_lo = np.zeros(n.size), np.zeros(n.size)
    for mult, e_lo, e_hi in zip(multiplicity, eps_lo, eps_hi, strict=True):
        total_hi = _up(total_hi + _up(mult * e_hi))
        total_lo = _down(total_lo + _down(mult * e_lo))
    scale = 2.0 ** (model.n_layers + 1)  # a power of two: exact
    b_lo = _down(_down(coefficient * g_ends[0]) - _up(scale * total_hi))
    b_hi = _up(_up(coefficient * g_ends[1]) - _down(scale * total_lo))
    status = np.where(b_lo > 0, "holds", "undecided")
    return MultiHopCertificate(
        model.name,
        hops,
        float(model.logit_scale),
        coefficient,
        g_ends,
        n,
        b_lo,
        b_hi,
        layers,
        multiplicity,
        np.array(margins),
        eps_hi,
        status,
        time.perf_counter() - start,
        {"prec": prec},
    )


def certified_horizon(
    model: CompiledModel, hops: int, max_n: int = 10**4, prec: int = 80, first: int = 64
) -> MultiHopCertificate:
    """:func:`certify_model` on ``n = 2 .. N`` for ``N = first, 4 first, ...`` (capped at ``max_n``) until a
    row is undecided or ``max_n`` is reached: the horizon without enclosing lengths far past it."""
    size = max(2, min(int(first), int(max_n)))
    while True:
        cert = certify_model(model, hops, size, prec)
        if not cert.complete or size >= max_n:
            return cert
        size = min(4 * size, int(max_n))


def horizon_witness(
    model: CompiledModel, cert: MultiHopCertificate, sweep_limit: int = 4096
) -> dict[str, Any]:
    """Where the proof stops: at ``n = horizon + 1``, the limiting layer, its exact float64 margin and the
    input attaining it (a chain row's worst case, as tokens), when ``n <= sweep_limit``."""
    if cert.complete:
        return {"n": None, "reason": f"every n <= {int(cert.n[-1])} is certified"}
    n = cert.horizon + 1
    layer = cert.limiting_layer(n)
    out: dict[str, Any] = {
        "n": n,
        "layer": layer,
        "kind": model.layer_info[layer].label,
        "bound": [float(cert.bound_lo[n - 2]), float(cert.bound_hi[n - 2])],
    }
    if n <= sweep_limit:
        sweep = layer_sweep(model, layer, max(n, 3))
        w = sweep.witness(n, "margin_inf")
        out.update(
            {
                "margin": float(w.value),
                "scaled_margin": float(w.value) * model.logit_scale,
                "case": w.case,
                "target_position": w.target_position,
                "tokens": list(w.tokens),
                "leak_bound": float(
                    leak_bound(model.logit_scale, w.value, n - 1, math.exp) if w.value > 0 else 1.0
                ),
            }
        )
    return out

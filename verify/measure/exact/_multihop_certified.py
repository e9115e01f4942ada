"""Certified correctness of a compiled multi-hop model on every input of its task family, by interval
arithmetic (Arb balls, ``flint.arb``, for the per-length leaks; ``mpmath.iv`` for the code constants).

The family at length ``n`` with up to ``H`` hops (``docs/theory.md`` sections 3 and 6): every sequence of
``n`` tokens whose chain from the last position reaches an answer (a letter; a (letter, integer) pair)
in ``h <= H`` hops, every step in range (an integer ``m`` at ``p`` has ``m <= p``) and every lookup
unique (a (letter, letter) pair on the chain has two different letters and its right letter is the left
letter of exactly one earlier pair; the answer pair's left letter is that of no other earlier pair).
Nothing else is constrained: tokens off the chain are arbitrary. [A]'s generators (letters then
integers; targets then distractor pairs) are a subset.

For each ``n`` the check encloses, by :mod:`ropeproof.theory._multihop_bound`,

- every layer's chain-row margin ``mu_l(n)`` (:mod:`ropeproof.verify.measure.exact._multihop_margins`);
- the leaked mass ``eps_l(n) = X / (1 + X)``: with ``leak="max"`` (step 1) ``X = K e^{-beta mu_l}``,
  ``K = n - 1`` (``eps_l = 1`` when the margin is not certified positive); with ``leak="sum"`` (the
  default, step 1') Index and positional Reflexive layers also bound ``X`` by the sum over offsets
  ``T(n - 1) + T(floor((n - 1) / 2))`` (Index) or ``T(n - 1)`` (Reflexive), ``T(k) = sum_{m <= k}
  e^{-beta g(m)}``, and take the smaller; every exponential and partial sum is an Arb ball, rounded
  outward by :func:`~ropeproof.verify.measure.exact._certified.arb_ends`;
- the channel error at the last position: with ``propagation="uniform"`` (step 3) ``E = 2^L sum_l
  eps_l`` for every hop count, compared with ``c = c_L(H)``, the smallest chain coefficient; with
  ``propagation="chain"`` (the default, step 3') ``E_h`` by the per-position recursion
  (:func:`~ropeproof.theory._multihop_bound.chain_error_bound`) for each ``h = 1 .. H`` with its own ``c_h``,
  in float64 rounded upward;
- the readout bound ``R(n) = min_h (c_h kappa - lambda E_h)``: ``readout="radius"`` (the default, step 4')
  uses the code radius ``kappa = rho`` (``sin(pi / V)`` for the cyclic code) and ``lambda = 1``;
  ``readout="margin"`` (step 4) the code margin ``kappa = gamma`` and ``lambda = 2 U = 2``.

``leak="max", propagation="uniform", readout="margin"`` is the first version of this certificate
(:func:`certify_model` with :data:`BASIC`); :func:`certificate_steps` reports how far the proof reaches
with each refinement left out, which says which step loses the most.

A row ``holds`` when the lower end of ``R(n)`` is positive: then every input of length ``n`` in the
family is answered correctly by the construction in exact real arithmetic. Otherwise it is
``undecided``: the bound proves nothing there, which is not a failure of the model (sampled inputs and
searches, :mod:`ropeproof.verify.studies.beyond._multihop_length`, say what really happens). ``eps_l`` grows
and
``mu_l`` shrinks with ``n``, so ``R`` is non-increasing and the certified lengths are ``2 .. horizon``.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flint import arb
from mpmath import iv

from ropeproof.constructions._multihop_compile import CompiledModel, LayerInfo
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._multihop_bound import chain_error_bound, leak_bound, mass_bound
from ropeproof.verify.measure.exact._certified import arb_ends, arb_precision, interval_ends, iv_precision
from ropeproof.verify.measure.exact._multihop_margins import (
    distinct_layers,
    enclose_gaps,
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


LEAKS: tuple[str, ...] = ("sum", "max")
"""Leak bounds: the sum over offsets where it applies (step 1'), or ``K e^{-beta mu}`` (step 1)."""
PROPAGATIONS: tuple[str, ...] = ("chain", "uniform")
"""Error propagation: per chain position and hop count (step 3'), or ``2^L sum eps`` (step 3)."""
READOUTS: tuple[str, ...] = ("radius", "margin")
"""Readout: the code radius (step 4') or the code margin against ``2 U`` (step 4)."""
DEFAULT_STEPS: dict[str, str] = {"leak": "sum", "propagation": "chain", "readout": "radius"}
"""The certificate's steps: every refinement."""
BASIC: dict[str, str] = {"leak": "max", "propagation": "uniform", "readout": "margin"}
"""The first version of the certificate (no refinement)."""


def _code_constants(model: CompiledModel, prec: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """Enclosures of the code margin ``gamma`` and the code radius ``rho``
    (:func:`~ropeproof.theory._multihop.code_margin`, :func:`~ropeproof.theory._multihop.code_radius`)."""
    answers = len(model.answers)
    with iv_precision(prec):
        if model.channel_code == "onehot":
            g, rho = iv.mpf(1), 1 / iv.sqrt(2)
        else:
            g = 2 * iv.sin(iv.pi / answers) ** 2
            g = iv.mpf(1) if g.a >= 1 else (g if g.b <= 1 else iv.mpf([g.a, 1]))
            rho = iv.sin(iv.pi / answers)
        return interval_ends(g), interval_ends(rho)


def _check_steps(leak: str, propagation: str, readout: str) -> None:
    for name, value, accepted in (
        ("leak", leak, LEAKS),
        ("propagation", propagation, PROPAGATIONS),
        ("readout", readout, READOUTS),
    ):
        if value not in accepted:
            raise InputError(f"{name}={value!r} is unknown; accepted: {list(accepted)}")


def _sum_kind(info: LayerInfo) -> str | None:
    """``"two-sided"`` (Index), ``"one-sided"`` (positional Reflexive) or ``None``: which sum over offsets
    bounds the layer's leak (step 1' of :mod:`ropeproof.theory._multihop_bound`)."""
    if info.kind == "index":
        return "two-sided"
    if info.kind == "reflexive" and info.variant == "positional":
        return "one-sided"
    return None


def _offset_sums(info: LayerInfo, beta: float, max_n: int, prec: int) -> tuple[np.ndarray, np.ndarray]:
    """Enclosure ``(lo, hi)`` of ``X(n)``, the sum over offsets of step 1', for ``n = 2 .. max_n``."""
    g_lo, g_hi = enclose_gaps(info.freqs, info.amps, max_n - 1)
    t_lo, t_hi = np.zeros(max_n), np.zeros(max_n)  # T(k) for k = 0 .. max_n - 1
    with arb_precision(prec):
        b = arb(float(beta))
        acc_lo, acc_hi = arb(0), arb(0)
        for m in range(1, max_n):
            acc_hi += (-b * arb(float(g_lo[m - 1]))).exp()  # the term decreases with g
            acc_lo += (-b * arb(float(g_hi[m - 1]))).exp()
            t_lo[m], t_hi[m] = arb_ends(acc_lo)[0], arb_ends(acc_hi)[1]
    k = np.arange(1, max_n)  # n - 1
    if _sum_kind(info) == "one-sided":
        return t_lo[k], t_hi[k]
    half = k // 2
    return _down(t_lo[k] + t_lo[half]), _up(t_hi[k] + t_hi[half])


def _leaks(
    info: LayerInfo, margin_lo: np.ndarray, beta: float, n: np.ndarray, leak: str, prec: int
) -> tuple[np.ndarray, np.ndarray]:
    """Enclosure of the layer's ``eps(n)`` (module docstring)."""
    x_lo, x_hi = np.full(n.size, np.inf), np.full(n.size, np.inf)
    with arb_precision(prec):
        b = arb(float(beta))
        for r, nn in enumerate(n.tolist()):
            m = float(margin_lo[r])
            if m > 0:  # the leak bound decreases with the margin: use the margin's lower end
                x_lo[r], x_hi[r] = arb_ends((nn - 1) * (-b * arb(m)).exp())
    if leak == "sum" and _sum_kind(info) is not None:
        s_lo, s_hi = _offset_sums(info, beta, int(n[-1]), prec)
        x_lo, x_hi = np.minimum(x_lo, s_lo), np.minimum(x_hi, s_hi)
    eps_lo, eps_hi = np.ones(n.size), np.ones(n.size)
    with arb_precision(prec):
        for r in range(n.size):
            if np.isfinite(x_hi[r]):
                eps_hi[r] = arb_ends(mass_bound(arb(float(x_hi[r]))))[1]
            if np.isfinite(x_lo[r]):
                eps_lo[r] = arb_ends(mass_bound(arb(float(x_lo[r]))))[0]
    return eps_lo, np.minimum(eps_hi, 1.0)


@functools.lru_cache(maxsize=128)
def _layer_leaks(
    info: LayerInfo, max_n: int, prec: int, vocab_size: int, beta: float, leak: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One layer's margin enclosure's lower end and leak enclosure ``(margin_lo, eps_lo, eps_hi)`` for
    ``n = 2 .. max_n``: a function of these numbers alone, so kept per process (least recently used,
    128 layers), which the steps of one model's certificate and its search's sizes share; read-only."""
    margin = layer_margin_enclosure(info, max_n, prec, vocab_size)[0]
    eps_lo, eps_hi = _leaks(info, margin, beta, np.arange(2, max_n + 1), leak, prec)
    for a in (margin, eps_lo, eps_hi):
        a.setflags(write=False)
    return margin, eps_lo, eps_hi


def certify_model(
    model: CompiledModel,
    hops: int,
    max_n: int,
    prec: int = 80,
    leak: str = "sum",
    propagation: str = "chain",
    readout: str = "radius",
) -> MultiHopCertificate:
    """Certify ``model`` on its task family with up to ``hops`` hops, for ``n = 2 .. max_n``, with the
    chosen steps (module docstring; the defaults use every refinement)."""
    start = time.perf_counter()
    if not isinstance(model, CompiledModel):
        raise InputError(f"model must be a CompiledModel, got {type(model).__name__}")
    hops = integer(hops, "hops", low=1, high=model.hop_layers, note="the model's hop layers")
    max_n = integer(max_n, "max_n", low=2, high=10**6)
    _check_steps(leak, propagation, readout)
    unit_codes = model.channel_code in ("cyclic", "onehot")
    if not unit_codes or any(info.value_weight != 1.0 for info in model.layer_info):
        raise InputError(
            "the bound assumes value weight 1 in every layer and unit answer codes (cyclic, one-hot)"
        )
    coefficient = model.chain_coefficient(hops)
    layers = distinct_layers(model)
    infos = [model.layer_info[i] for i in layers]
    multiplicity = [sum(1 for x in model.layer_info if x == info) for info in infos]
    n = np.arange(2, max_n + 1)
    beta = float(model.logit_scale)
    enclosed = [_layer_leaks(info, max_n, prec, model.vocab_size, beta, leak) for info in infos]
    margins = [e[0] for e in enclosed]
    eps_lo = np.array([e[1] for e in enclosed])
    eps_hi = np.array([e[2] for e in enclosed])
    g_ends, rho_ends = _code_constants(model, prec)
    kappa, weight = (rho_ends, 1.0) if readout == "radius" else (g_ends, 2.0)
    if propagation == "uniform":
        # E = 2^L sum_l eps_l (step 3), one bound for every hop count, against c = c_L(H)
        total_hi, total_lo = np.zeros(n.size), np.zeros(n.size)
        for mult, e_lo, e_hi in zip(multiplicity, eps_lo, eps_hi, strict=True):
            total_hi = _up(total_hi + _up(mult * e_hi))
            total_lo = _down(total_lo + _down(mult * e_lo))
        scale = weight * 2.0**model.n_layers  # a power of two: exact
        b_lo = _down(_down(coefficient * kappa[0]) - _up(scale * total_hi))
        b_hi = _up(_up(coefficient * kappa[1]) - _down(scale * total_lo))
    else:
        row = {info: j for j, info in enumerate(infos)}
        per_lo = [eps_lo[row[info]] for info in model.layer_info]
        per_hi = [eps_hi[row[info]] for info in model.layer_info]
        b_lo, b_hi = np.full(n.size, np.inf), np.full(n.size, np.inf)
        for h in range(1, hops + 1):
            c, err_hi = chain_error_bound(model.hop_pattern, h, per_hi, up=_up, minimum=np.minimum)
            _c, err_lo = chain_error_bound(model.hop_pattern, h, per_lo, up=_down, minimum=np.minimum)
            b_lo = np.minimum(b_lo, _down(_down(c * kappa[0]) - _up(weight * err_hi)))
            b_hi = np.minimum(b_hi, _up(_up(c * kappa[1]) - _down(weight * err_lo)))
    status = np.where(b_lo > 0, "holds", "undecided")
    return MultiHopCertificate(
        model.name,
        hops,
        beta,
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
        {
            "prec": prec,
            "steps": {"leak": leak, "propagation": propagation, "readout": readout},
            "code_radius": list(rho_ends),
        },
    )


def certified_horizon(
    model: CompiledModel,
    hops: int,
    max_n: int = 10**4,
    prec: int = 80,
    first: int = 64,
    **steps: str,
) -> MultiHopCertificate:
    """:func:`certify_model` on ``n = 2 .. N`` for ``N = first, 4 first, ...`` (capped at ``max_n``) until a
    row is undecided or ``max_n`` is reached: the horizon without enclosing lengths far past it. ``steps``
    (``leak``, ``propagation``, ``readout``) choose the certificate's steps."""
    for size in search_sizes(max_n, first):
        cert = certify_model(model, hops, size, prec, **steps)
        if not cert.complete:
            break
    return cert


def certificate_steps(
    model: CompiledModel,
    hops: int,
    max_n: int = 10**4,
    prec: int = 80,
    known: Sequence[MultiHopCertificate] = (),
) -> dict[str, Any]:
    """Which step of the certificate loses the most: the horizon with every refinement (``all``), with
    each one left out (``without <step>``: leak sum, chain propagation, readout radius) and with none
    (``basic``, the first version), each capped at ``max_n``.

    ``known``: certificates of ``model`` the caller has already computed with :func:`certified_horizon`
    with these ``hops``, ``max_n`` and ``prec`` (its default ``first``); a variant whose steps one of them
    used is read from it instead of certified again (:func:`check_searched_as` checks what it can)."""
    variants = {
        "all": DEFAULT_STEPS,
        "without leak sum": {**DEFAULT_STEPS, "leak": "max"},
        "without chain propagation": {**DEFAULT_STEPS, "propagation": "uniform"},
        "without readout radius": {**DEFAULT_STEPS, "readout": "margin"},
        "basic": BASIC,
    }
    out: dict[str, Any] = {}
    for name, steps in variants.items():
        done = [c for c in known if c.detail["steps"] == steps]
        if done:
            check_searched_as(done[0], model, hops, max_n, prec, steps)
            cert = done[0]
        else:
            cert = certified_horizon(model, hops, max_n, prec, **steps)
        out[name] = {"horizon": cert.horizon, "complete": cert.complete}
    return out


def search_sizes(max_n: int, first: int = 64) -> list[int]:
    """The sizes :func:`certified_horizon` certifies in turn, up to ``max_n``: ``first, 4 first, ..``,
    the last capped at ``max_n``."""
    sizes = [max(2, min(int(first), int(max_n)))]
    while sizes[-1] < max_n:
        sizes.append(min(4 * sizes[-1], int(max_n)))
    return sizes


def check_searched_as(
    cert: MultiHopCertificate,
    model: CompiledModel,
    hops: int,
    max_n: int,
    prec: int = 80,
    steps: dict[str, str] | None = None,
) -> None:
    """Raise :class:`InputError` (naming what differs) unless ``cert`` can be what
    :func:`certified_horizon` returns for ``model`` with these ``hops``, ``max_n``, ``prec`` and ``steps``
    (default :data:`DEFAULT_STEPS`; the default ``first``): the model's name, the hop count, the
    precision and the steps agree, and its rows end where that search stops (at ``max_n`` when complete,
    else at one of :func:`search_sizes`)."""
    end = int(cert.n[-1])
    ends_right = end == max_n if cert.complete else end in search_sizes(max_n)
    wrong = [
        f"{what} {got!r} (expected {want!r})"
        for what, got, want in (
            ("model", cert.model, model.name),
            ("hops", cert.hops, hops),
            ("prec", cert.detail.get("prec"), prec),
            ("steps", cert.detail.get("steps"), DEFAULT_STEPS if steps is None else steps),
        )
        if got != want
    ]
    if not ends_right:
        wrong.append(f"rows ending at n = {end} (the search to max_n = {max_n} stops elsewhere)")
    if wrong:
        raise InputError("the certificate given is not this search's: " + ", ".join(wrong))


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

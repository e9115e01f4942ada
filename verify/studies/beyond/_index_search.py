"""Search for the best ``K``-plane T_Index construction at a target length.

Objective: the normalised worst-case margin at length ``n0``,

    mu(theta, w; n0) = min_{1 <= m <= n0 - 1} sum_k w_k 2 sin(m theta_k / 2)^2,   w_k >= 0, sum_k w_k = 1,

which any ``K``-plane T_Index with amplitudes ``a = A w`` attains normalised by ``A``
(:mod:`ropeproof.verify.studies.beyond._many_plane`). :mod:`ropeproof.theory._dirichlet` places the optimum
``mu*_K(n0)`` between the
mixed radix (Theorem R) and the Dirichlet bound (Theorem D).

The search is global, then local:

1. candidates: the mixed radix for ``n0`` (uniform and two-radix variants), rank-1 lattices
   ``theta_k = 2 pi (z^(k-1) mod N) / N`` for ``N >= n0`` (Korobov), and log-uniform random
   frequencies; all scored exactly in batches (torch, float64);
2. the best few are refined by Adam on a smoothed objective (``-tau log sum_m exp(-g(m)/tau)`` with
   ``tau`` annealed), over ``theta`` and ``w = softmax(rho)``;
3. every result is re-scored with the exact sweep
(:func:`ropeproof.verify.measure.exact._index_sweep.index_sweep`,
accurate
   angle reduction); the best exact value is returned. It is a valid lower bound on ``mu*_K(n0)``.

``best_known.json`` (package data, :func:`best_known_table`) stores the best constructions this search
found with a larger budget (regenerate with ``python -m ropeproof.verify.studies.beyond._index_search``); the
claims and tests re-verify them exactly.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._dirichlet import mixed_radix_base
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.studies.beyond._many_plane import (
    dirichlet_normalised,
    fit_slope,
    log_lengths,
    mixed_radix_curve,
    mixed_radix_frequencies,
    mixed_radix_margin,
)


@dataclass
class SearchResult:
    """The best construction found: frequencies, amplitudes (summing to 1), its exact normalised margin
    at ``length``, and the two theoretical brackets."""

    planes: int
    length: int
    freqs: np.ndarray
    amps: np.ndarray
    margin: float
    source: str
    mixed_radix: float
    dirichlet: float
    history: dict[str, float] = field(default_factory=dict)

    @property
    def bracketed(self) -> bool:
        """``mixed_radix <= margin <= dirichlet`` (exactly as computed)."""
        return self.mixed_radix <= self.margin * (1 + 1e-12) and self.margin <= self.dirichlet

    def as_row(self) -> dict[str, float | int | str]:
        return {
            "planes": self.planes,
            "length": self.length,
            "margin": self.margin,
            "mixed_radix": self.mixed_radix,
            "dirichlet": self.dirichlet,
            "source": self.source,
            "freqs": " ".join(f"{x:.17g}" for x in self.freqs),
            "amps": " ".join(f"{x:.17g}" for x in self.amps),
        }


def exact_margin(freqs: Sequence[float], amps: Sequence[float], length: int) -> float:
    """Exact normalised ``margin_inf(length)``
    (:func:`ropeproof.verify.measure.exact._index_sweep.index_sweep`)."""
    a = np.asarray(amps, dtype=np.float64)
    return float(index_sweep(freqs, a, length).margin_inf[-1] / a.sum())


def batch_margins(freqs: torch.Tensor, amps: torch.Tensor, length: int, block: int = 256) -> torch.Tensor:
    """Normalised ``margin_inf(length)`` of ``B`` constructions at once: ``freqs, amps`` are ``[B, K]``."""
    m = torch.arange(1, length, dtype=torch.float64)
    w = amps / amps.sum(1, keepdim=True)
    out = torch.empty(freqs.shape[0], dtype=torch.float64)
    for s in range(0, freqs.shape[0], block):
        f, ww = freqs[s : s + block], w[s : s + block]
        g = (2 * torch.sin(m[None, :, None] * f[:, None, :] / 2) ** 2 * ww[:, None, :]).sum(-1)
        out[s : s + block] = g.min(1).values
    return out


def _candidates(planes: int, length: int, count: int, gen: torch.Generator) -> tuple[torch.Tensor, list[str]]:
    rows: list[np.ndarray] = []
    labels: list[str] = []
    b = mixed_radix_base(length, planes)
    rows.append(mixed_radix_frequencies([b] * planes))
    labels.append(f"mixed-radix b={b}")
    for j in range(1, planes):  # radices b-1 for the first j levels, b for the rest, if still long enough
        radices = [b - 1] * j + [b] * (planes - j)
        if b - 1 >= 2 and math.prod(radices) >= length:
            rows.append(mixed_radix_frequencies(radices))
            labels.append(f"mixed-radix {radices}")
    n_lattice = count // 2
    big = torch.randint(length, int(1.5 * length) + 2, (n_lattice,), generator=gen)
    zs = torch.randint(1, 1 << 30, (n_lattice,), generator=gen)
    for big_n, z in zip(big.tolist(), zs.tolist(), strict=True):
        z = 1 + z % (big_n - 1)
        pows = [pow(z, k, big_n) for k in range(planes)]
        rows.append(2 * math.pi * np.array(pows, dtype=np.float64) / big_n)
        labels.append(f"lattice N={big_n} z={z}")
    rest = count - len(rows)
    if rest > 0:
        logs = torch.rand(rest, planes, generator=gen, dtype=torch.float64)
        lo, hi = math.log(2 * math.pi / length), math.log(math.pi)
        rnd = torch.exp(lo + (hi - lo) * logs).numpy()
        rows.extend(rnd)
        labels.extend(["random"] * rest)
    folded = np.mod(np.stack(rows), 2 * math.pi)
    folded = np.minimum(folded, 2 * math.pi - folded)  # g depends on theta only through |theta mod 2 pi|
    return torch.as_tensor(folded), labels


def _refine(
    theta0: torch.Tensor, length: int, steps: int, lr: float, gen: torch.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Adam on ``softmin_tau g(m)`` over ``theta`` and ``w = softmax(rho)``, ``tau`` annealed."""
    theta = theta0.clone().requires_grad_(True)
    rho = torch.zeros_like(theta0).requires_grad_(True)
    opt = torch.optim.Adam([theta, rho], lr=lr)
    m = torch.arange(1, length, dtype=torch.float64)
    with torch.no_grad():
        start = batch_margins(theta0[None], torch.ones_like(theta0)[None], length).item()
    best_val, best = -math.inf, (theta0.detach().clone(), torch.ones_like(theta0) / theta0.numel())
    for step in range(steps):
        w = torch.softmax(rho, 0)
        g = (2 * torch.sin(m[:, None] * theta[None, :] / 2) ** 2 * w[None, :]).sum(1)
        scale = max(start, 1e-12)
        tau = scale * (0.3 * (1 - step / steps) + 0.01)
        smooth = -tau * torch.logsumexp(-g / tau, 0)
        exact = float(g.detach().min())
        if exact > best_val:
            best_val, best = exact, (theta.detach().clone(), w.detach().clone())
        opt.zero_grad()
        (-smooth / scale).backward()
        opt.step()
        with torch.no_grad():
            theta.clamp_(0.0, math.pi)
    return best[0].numpy(), best[1].numpy()


def search_best_index(
    planes: int,
    length: int,
    candidates: int = 512,
    refine: int = 6,
    steps: int = 300,
    lr: float | None = None,
    seed: int = 0,
) -> SearchResult:
    """Best ``planes``-plane T_Index at ``length`` found by the global-then-local search above."""
    planes, length = integer(planes, "planes", low=1, high=64), integer(length, "length", low=3, high=1 << 16)
    candidates = integer(candidates, "candidates", low=1)
    refine, steps = integer(refine, "refine", low=0), integer(steps, "steps", low=0)
    gen = torch.Generator().manual_seed(int(seed))
    freqs, labels = _candidates(planes, length, candidates, gen)
    scores = batch_margins(freqs, torch.ones_like(freqs), length)
    order = torch.argsort(scores, descending=True).tolist()
    results: list[tuple[float, np.ndarray, np.ndarray, str]] = []
    for i in order[: max(refine, 1)]:
        f = freqs[i].numpy()
        results.append((exact_margin(f, np.ones(planes), length), f, np.ones(planes) / planes, labels[i]))
    step_size = lr if lr is not None else 0.3 / length
    for i in order[:refine]:
        f, w = _refine(freqs[i], length, steps, step_size, gen)
        results.append((exact_margin(f, w, length), f, w / w.sum(), labels[i] + " + adam"))
    margin, f, w, label = max(results, key=lambda r: r[0])
    return SearchResult(
        planes,
        length,
        np.asarray(f),
        np.asarray(w),
        margin,
        label,
        mixed_radix_margin(length, planes),
        float(dirichlet_normalised(length, planes)[0]),
        {"candidates": candidates, "refined": refine, "steps": steps, "best_unrefined": float(scores.max())},
    )


def verify_entry(planes: int, length: int, freqs: Sequence[float], amps: Sequence[float]) -> SearchResult:
    """Re-score a stored construction exactly and bracket it."""
    f = np.asarray(freqs, dtype=np.float64)
    a = np.asarray(amps, dtype=np.float64)
    if f.size != planes or a.size != planes:
        raise InputError(f"entry for K={planes} must have {planes} frequencies and amplitudes")
    return SearchResult(
        planes,
        length,
        f,
        a / a.sum(),
        exact_margin(f, a, length),
        "stored",
        mixed_radix_margin(length, planes),
        float(dirichlet_normalised(length, planes)[0]),
    )


BEST_KNOWN_FILE = Path(__file__).with_name("best_known.json")
"""Package data: the best constructions this search found (``entries``: ``planes``, ``length``,
``freqs``, ``amps``, the printed ``margin`` and its ``source``)."""


@functools.cache
def _best_known_table() -> dict[tuple[int, int], tuple[tuple[float, ...], tuple[float, ...]]]:
    data = json.loads(BEST_KNOWN_FILE.read_text())
    if data.get("format") != "ropeproof-best-index" or data.get("version") != 1:
        raise InputError(f"{BEST_KNOWN_FILE} is not a ropeproof-best-index v1 file")
    return {
        (int(e["planes"]), int(e["length"])): (tuple(e["freqs"]), tuple(e["amps"])) for e in data["entries"]
    }


def best_known_table() -> dict[tuple[int, int], tuple[tuple[float, ...], tuple[float, ...]]]:
    """``(K, n0) -> (freqs, amps)``: the stored best constructions (read once from
    :data:`BEST_KNOWN_FILE`)."""
    return dict(_best_known_table())


TABLE_LENGTHS = (16, 64, 256, 1024, 4096)
"""Target lengths of the stored constructions."""
TABLE_PLANES = (1, 2, 4, 8)
"""Plane counts of the stored constructions."""


def best_known(planes: int, length: int) -> SearchResult:
    """The stored best construction for ``(planes, length)``, re-verified exactly."""
    table = _best_known_table()
    if (planes, length) not in table:
        raise InputError(f"no stored construction for K={planes}, n0={length}; stored: {sorted(table)}")
    f, a = table[(planes, length)]
    return verify_entry(planes, length, f, a)


def slope_table() -> dict[str, dict[str, float]]:
    """Fitted log-log slopes for K = 1, 2, 4, 8: optimised (stored, n0 = 16..4096), mixed radix and the
    Dirichlet bound (closed forms on the same range and on 10^4..10^7)."""
    out: dict[str, dict[str, float]] = {}
    ns = np.array(TABLE_LENGTHS)
    grid = log_lengths(16, 4096, 24)
    far = log_lengths(10**4, 10**7, 24)
    for k in TABLE_PLANES:
        opt = np.array([best_known(k, int(n)).margin for n in ns])
        out[f"K={k}"] = {
            "expected": -2 / k,
            "optimised_16_4096": fit_slope(ns, opt).slope,
            "optimised_256_4096": fit_slope(ns, opt, 256).slope,
            "mixed_radix_16_4096": fit_slope(grid, mixed_radix_curve(grid, k)).slope,
            "mixed_radix_1e4_1e7": fit_slope(far, mixed_radix_curve(far, k)).slope,
            "dirichlet_1e4_1e7": fit_slope(far, dirichlet_normalised(far, k)).slope,
        }
    return out


def _main() -> None:  # pragma: no cover - regenerates best_known.json
    data = json.loads(BEST_KNOWN_FILE.read_text())
    data["entries"] = []
    for k in TABLE_PLANES:
        for n0 in TABLE_LENGTHS:
            r = search_best_index(k, n0, candidates=4096, refine=16, steps=600, seed=1)
            data["entries"].append(
                {
                    "planes": k,
                    "length": n0,
                    "freqs": r.freqs.tolist(),
                    "amps": r.amps.tolist(),
                    "margin": float(f"{r.margin:.6g}"),
                    "source": r.source,
                }
            )
            print(f"K={k} n0={n0}: {r.margin:.6g} [{r.source}]", flush=True)
    BEST_KNOWN_FILE.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":  # pragma: no cover
    _main()

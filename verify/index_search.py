"""Search for the best ``K``-plane T_Index construction at a target length.

Objective: the normalised worst-case margin at length ``n0``,

    mu(theta, w; n0) = min_{1 <= m <= n0 - 1} sum_k w_k 2 sin(m theta_k / 2)^2,   w_k >= 0, sum_k w_k = 1,

which any ``K``-plane T_Index with amplitudes ``a = A w`` attains normalised by ``A``
(:mod:`verify.many_plane`). :mod:`theory.dirichlet` places the optimum ``mu*_K(n0)`` between the
mixed radix (Theorem R) and the Dirichlet bound (Theorem D).

The search is global, then local:

1. candidates: the mixed radix for ``n0`` (uniform and two-radix variants), rank-1 lattices
   ``theta_k = 2 pi (z^(k-1) mod N) / N`` for ``N >= n0`` (Korobov), and log-uniform random
   frequencies; all scored exactly in batches (torch, float64);
2. the best few are refined by Adam on a smoothed objective (``-tau log sum_m exp(-g(m)/tau)`` with
   ``tau`` annealed), over ``theta`` and ``w = softmax(rho)``;
3. every result is re-scored with the exact sweep (:func:`verify.index_sweep.index_sweep`, accurate
   angle reduction); the best exact value is returned. It is a valid lower bound on ``mu*_K(n0)``.

:data:`BEST_KNOWN` stores the best constructions this search found with a larger budget (regenerate
with ``python -m verify.index_search``); the claims re-verify them exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from theory.dirichlet import mixed_radix_base
from verify.errors import InputError
from verify.index_sweep import index_sweep
from verify.many_plane import dirichlet_normalised, mixed_radix_frequencies, mixed_radix_margin


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
    """Exact normalised ``margin_inf(length)`` (:func:`verify.index_sweep.index_sweep`)."""
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
    if isinstance(planes, bool) or not isinstance(planes, int) or not 1 <= planes <= 64:
        raise InputError(f"planes={planes!r} must be an integer in 1 .. 64")
    if isinstance(length, bool) or not isinstance(length, int) or not 3 <= length <= 1 << 16:
        raise InputError(f"length={length!r} must be an integer in 3 .. 65536")
    if candidates < 1 or refine < 0 or steps < 0:
        raise InputError("candidates must be >= 1, refine and steps >= 0")
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


BEST_KNOWN: dict[tuple[int, int], tuple[tuple[float, ...], tuple[float, ...]]] = {
    (1, 16): ((0.39269908169872414,), (1.0,)),  # 0.0761205 [lattice N=16 z=14]
    (1, 64): ((0.09817477042468103,), (1.0,)),  # 0.00481527 [lattice N=64 z=44]
    (1, 256): ((0.02454369260617026,), (1.0,)),  # 0.000301181 [mixed-radix b=256]
    (1, 1024): ((0.006135923151542565,), (1.0,)),  # 1.88247e-05 [mixed-radix b=1024]
    (1, 4096): ((0.0015339807878856412,), (1.0,)),  # 1.17655e-06 [mixed-radix b=4096]
    (2, 16): (
        (
            1.562556237410327,
            0.39175882322788247,
        ),
        (
            0.4808439205748826,
            0.5191560794251174,
        ),
    ),  # 0.516214 [random + adam]
    (2, 64): (
        (
            0.09540273897107983,
            2.760105051488665,
        ),
        (
            0.46039306232392113,
            0.5396069376760789,
        ),
    ),  # 0.157703 [lattice N=64 z=28 + adam]
    (2, 256): (
        (
            0.024112100007423833,
            1.7425513031591766,
        ),
        (
            0.46618056103274286,
            0.5338194389672571,
        ),
    ),  # 0.0424628 [lattice N=260 z=188 + adam]
    (2, 1024): (
        (
            0.006061149675211353,
            1.3725840483583909,
        ),
        (
            0.5296687843083513,
            0.47033121569164876,
        ),
    ),  # 0.0106691 [lattice N=1044 z=228 + adam]
    (2, 4096): (
        (
            0.0015141428313134536,
            0.8829244432033452,
        ),
        (
            0.5015182421381987,
            0.4984817578618012,
        ),
    ),  # 0.0026554 [lattice N=4305 z=605 + adam]
    (4, 16): (
        (
            0.39269908169872414,
            1.178097245096172,
            2.748893571891069,
            1.9634954084936207,
        ),
        (
            0.25,
            0.25,
            0.25,
            0.25,
        ),
    ),  # 1 [lattice N=16 z=13]
    (4, 64): (
        (
            0.09275213092774548,
            1.8765662120099638,
            2.9069121351302574,
            0.6564434106743405,
        ),
        (
            0.26953621479730694,
            0.2540395344883741,
            0.26547223515873253,
            0.21095201555558638,
        ),
    ),  # 0.565183 [lattice N=74 z=22 + adam]
    (4, 256): (
        (
            0.02370414601578558,
            2.8359838139851448,
            2.322660471797019,
            1.9069481594116025,
        ),
        (
            0.20425543281535644,
            0.2581703876985715,
            0.33603657441341367,
            0.20153760507265858,
        ),
    ),  # 0.326493 [lattice N=268 z=121 + adam]
    (4, 1024): (
        (
            0.005909223813506027,
            1.4794905033132009,
            2.0630218868277796,
            2.57572477104395,
        ),
        (
            0.22223311255325795,
            0.2312845007623089,
            0.32098157760039975,
            0.22550080908403333,
        ),
    ),  # 0.176663 [lattice N=1129 z=266 + adam]
    (4, 4096): (
        (
            0.0014411876733387272,
            2.3570205156124646,
            2.6502191127962056,
            3.1043904733873235,
        ),
        (
            0.2577101242892139,
            0.2567523665295906,
            0.24205943088256654,
            0.24347807829862905,
        ),
    ),  # 0.0903112 [lattice N=4579 z=2861 + adam]
    (8, 16): (
        (
            0.36959913571644626,
            2.2175948142986774,
            0.7391982714328925,
            1.8479956785822313,
            1.478396542865785,
            2.5871939500151235,
            2.95679308573157,
            1.1087974071493392,
        ),
        (
            0.125,
            0.125,
            0.125,
            0.125,
            0.125,
            0.125,
            0.125,
            0.125,
        ),
    ),  # 1.0625 [lattice N=17 z=6]
    (8, 64): (
        (
            0.09299359037922,
            1.6432601604624968,
            1.0645003057620972,
            0.2867010667757,
            1.2566920162053965,
            3.0904976130483064,
            0.8712285800529455,
            2.609354046816744,
        ),
        (
            0.11731469125986183,
            0.14900627819050274,
            0.11530137339195067,
            0.09419665657718491,
            0.13454609251450217,
            0.1253040983410656,
            0.16047479875128257,
            0.1038560109736494,
        ),
    ),  # 0.798347 [lattice N=67 z=49 + adam]
    (8, 256): (
        (
            0.02309994598227789,
            1.917295516529065,
            2.0558951924227324,
            0.9932976772379493,
            0.7622982174151705,
            0.4388989736632799,
            1.2704970290252842,
            1.3628968129543955,
        ),
        (
            0.125,
            0.125,
            0.125,
            0.125,
            0.125,
            0.125,
            0.125,
            0.125,
        ),
    ),  # 0.641195 [lattice N=272 z=83]
    (8, 1024): (
        (
            0.005520772199894079,
            2.7908520188854054,
            0.1579811793244176,
            0.7662408269370439,
            0.35750495009776506,
            2.252561241506948,
            1.0010164547241838,
            2.3512293854989306,
        ),
        (
            0.1314164406050868,
            0.13842565909938392,
            0.1441465133600038,
            0.11232734083110286,
            0.14339585400115812,
            0.10642016811153744,
            0.10466577289101144,
            0.11920225110071564,
        ),
    ),  # 0.476128 [lattice N=1531 z=680 + adam]
    (8, 4096): (
        (
            0.0014065103441296587,
            2.365951895295325,
            0.41096807043551425,
            0.19830902960409755,
            1.5302867788907337,
            1.7014132884578366,
            1.1011705368351572,
            0.31028648529920827,
        ),
        (
            0.1292314282034069,
            0.13160823414875655,
            0.12605039684921146,
            0.11879976525782587,
            0.12105993292894313,
            0.12742530823074938,
            0.12510887916164187,
            0.12071605521946484,
        ),
    ),  # 0.354433 [lattice N=5197 z=1957 + adam]
}
"""``(K, n0) -> (freqs, amps)``: best constructions found (see the module docstring)."""

TABLE_LENGTHS = (16, 64, 256, 1024, 4096)
"""Target lengths of :data:`BEST_KNOWN`."""
TABLE_PLANES = (1, 2, 4, 8)
"""Plane counts of :data:`BEST_KNOWN`."""


def best_known(planes: int, length: int) -> SearchResult:
    """The stored best construction for ``(planes, length)``, re-verified exactly."""
    if (planes, length) not in BEST_KNOWN:
        raise InputError(f"no stored construction for K={planes}, n0={length}; stored: {sorted(BEST_KNOWN)}")
    f, a = BEST_KNOWN[(planes, length)]
    return verify_entry(planes, length, f, a)


def _main() -> None:  # pragma: no cover - regenerates BEST_KNOWN
    for k in TABLE_PLANES:
        for n0 in TABLE_LENGTHS:
            r = search_best_index(k, n0, candidates=4096, refine=16, steps=600, seed=1)
            fs = ", ".join(f"{x!r}" for x in r.freqs.tolist())
            ws = ", ".join(f"{x!r}" for x in r.amps.tolist())
            print(f"    ({k}, {n0}): (({fs},), ({ws},)),  # {r.margin:.6g} [{r.source}]", flush=True)


if __name__ == "__main__":  # pragma: no cover
    _main()

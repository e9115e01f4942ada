"""Benchmark: certified enclosures in Arb balls (python-flint) against the former ``mpmath.iv`` path.

    python3 benchmarks/bench_certified.py [--repeats 3] [--quick] [--json] [--kernel-only]

Prints medians over ``--repeats`` rounds (round robin: one run of each path per round) and the ratio
old / new measured in the same run, for

1. :func:`ropeproof.verify.measure.exact._certified.enclose_index_gaps` over ``K = 8`` planes (the standard
   spectrum of head_dim 16, ``theta_k = 10000^(-k/8)``, unit amplitudes) for ``m = 1 .. 1500`` and
   ``m = 1 .. 10^4``, and over one plane at ``theta = 0.866`` for ``10^4`` offsets from ``m = 10^6`` (one
   shard of the sharded certified Index check, ``ropeproof sweep certified-index``);
2. the whole claim ``many-plane.dirichlet-bound`` in quick mode (``run_claim``), with the old path put
   back by patching the claim's ``certified_dirichlet`` and the box-width step's ``_certify`` with the
   ``mpmath.iv`` versions below.

3. the certified Index kernel against its anchor (issue 35 item 4): ``enclose_index_gaps`` over one plane
   at ``theta = 0.866`` for ``--kernel-offsets`` offsets from ``m = 10^6`` (one shard of ``sweep
   certified-index``), against a bare python-flint loop enclosing ``1 - cos(m theta)`` at the same
   working precision (``[1 - (m * th).cos() for m in ...]``: the balls only, no float ends), and against
   the kernel as it was before (one ``arb_ends`` per offset, a private copy below); medians and the
   ratios kernel / anchor, and whether the kernel's float ends are byte for byte the former kernel's.
   ``--kernel-only`` runs just this part.

The old path is a private copy, in this file, of the package's code before the port (``mpmath.iv`` at
the same precision rule); it is not part of the package. Each case also checks that both paths give
enclosures that overlap everywhere (both are rigorous) and, for the claim, the same verdict and
figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any
from unittest import mock

import flint
import numpy as np
import torch
from mpmath import iv

from ropeproof.claims import CheckContext, run_claim
from ropeproof.claims._many_plane import CLAIMS
from ropeproof.theory._dirichlet import dirichlet_q
from ropeproof.verify.measure.exact._certified import (
    CertifiedCheck,
    arb_ends,
    arb_precision,
    enclose_index_gaps,
    interval_ends,
    iv_precision,
    judge,
    prefix_min_interval,
)

# ------------------------------------------------------------------ the old path (mpmath.iv), private


def iv_enclose_index_gaps(
    freqs: Sequence[float], amps: Sequence[float], max_m: int, prec: int = 80, first_m: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """``enclose_index_gaps`` as it was: one ``mpmath.iv`` interval per ``m``."""
    f = [float(x) for x in freqs]
    a = [float(x) for x in amps]
    size = max_m - first_m + 1
    lo, hi = np.empty(size), np.empty(size)
    big = max(abs(t) for t in f)
    extra = math.frexp(big)[1] + 26 if big >= 1 else 0
    with iv_precision(prec + extra):
        halves = [iv.mpf(t) / 2 for t in f]
        weights = [2 * iv.mpf(w) for w in a]
        for m in range(first_m, max_m + 1):
            total = iv.mpf(0)
            for h, w in zip(halves, weights, strict=True):
                total += w * iv.sin(m * h) ** 2
            lo[m - first_m], hi[m - first_m] = interval_ends(total)
    return lo, hi


def iv_certified_dirichlet(
    freqs: Sequence[float], amps: Sequence[float] | None, max_n: int, prec: int = 80
) -> CertifiedCheck:
    """``certified_dirichlet`` as it was (``mpmath.iv`` gaps and bounds)."""
    start = time.perf_counter()
    f = [float(x) for x in freqs]
    a = [1.0] * len(f) if amps is None else [float(x) for x in amps]
    n = np.arange(2, max_n + 1)
    g_lo, g_hi = iv_enclose_index_gaps(f, a, max_n - 1, prec)
    p_lo, p_hi = prefix_min_interval(g_lo, g_hi)
    k = len(f)
    comparisons = {}
    for q, ms in (("margin_inf", n - 1), ("gap_sup", (n - 1 + 1) // 2)):
        cache: dict[int, tuple[float, float]] = {}
        b_lo, b_hi = np.empty(n.size), np.empty(n.size)
        with iv_precision(prec):
            total = iv.mpf(0)
            for w in a:
                total += iv.mpf(w)
            for i, m in enumerate(ms.tolist()):
                qq = max(2, dirichlet_q(int(m), k))
                if qq not in cache:
                    cache[qq] = interval_ends(2 * total * iv.sin(iv.pi / qq) ** 2)
                b_lo[i], b_hi[i] = cache[qq]
        comparisons[q] = judge("dirichlet", q, n, (p_lo[ms - 1], p_hi[ms - 1]), (b_lo, b_hi))
    return CertifiedCheck(
        "index",
        {"freqs": f, "amps": a, "max_n": max_n, "prec": prec},
        "min_{m<=M} g(m) <= 2 A sin(pi / max(2, floor(M^(1/K))))^2",
        comparisons,
        time.perf_counter() - start,
    )


def iv_certify(freqs: Sequence[float], d: int, q: int, prec: int) -> tuple[bool, float]:
    """The box-width step's ``_certify`` as it was (``mpmath.iv``)."""
    with iv_precision(prec):
        two_pi = 2 * iv.pi
        width = two_pi / q
        worst = 0.0
        for th in freqs:
            x = iv.mpf(d) * iv.mpf(float(th))
            k = round(float(x.mid) / (2 * math.pi))
            r = x - k * two_pi
            worst = max(worst, abs(float(r.a)), abs(float(r.b)))
            if not (abs(r.a) < width.a and abs(r.b) < width.a):
                return False, worst
        return True, worst


def former_one_plane_kernel(
    theta: float, first: int, last: int, prec: int = 80
) -> tuple[np.ndarray, np.ndarray]:
    """``enclose_index_gaps([theta], [1.0], last, prec, first)`` as it was before issue 35: the ball of
    each offset rounded to float64 on its own (``arb_ends``, exact comparisons in Python)."""
    lo, hi = np.empty(last - first + 1), np.empty(last - first + 1)
    extra = math.frexp(abs(theta))[1] + 26 if abs(theta) >= 1 else 0
    with arb_precision(prec + extra + max(0, first.bit_length() - 26)):  # one bit length in the bench
        h, w = flint.arb(theta) / 2, 2 * flint.arb(1.0)
        for m in range(first, last + 1):
            total = flint.arb(0)
            s = (m * h).sin()
            total += w * (s * s)
            e_lo, e_hi = arb_ends(total)
            lo[m - first], hi[m - first] = max(e_lo, 0.0), e_hi
    return lo, hi


def bare_flint_loop(theta: float, first: int, last: int, prec: int = 80) -> list[flint.arb]:
    """The anchor: a bare python-flint loop enclosing ``1 - cos(m theta)`` (balls, no float ends)."""
    with arb_precision(prec + max(0, first.bit_length() - 26)):
        th = flint.arb(theta)
        return [1 - (m * th).cos() for m in range(first, last + 1)]


def bench_kernel(repeats: int, offsets: int) -> dict[str, Any]:
    first = 10**6
    last = first + offsets - 1
    med, res = round_robin(
        {
            "anchor": lambda: bare_flint_loop(0.866, first, last),
            "kernel": lambda: enclose_index_gaps([0.866], [1.0], last, 80, first),
            "former": lambda: former_one_plane_kernel(0.866, first, last),
        },
        repeats,
    )
    same = all(a.tobytes() == b.tobytes() for a, b in zip(res["kernel"], res["former"], strict=True))
    return {
        "case": f"K = 1 (theta = 0.866), {offsets} offsets from m = 10^6, 80 bits",
        "offsets": offsets,
        **{f"{k}_us_per_offset": v / offsets * 1e6 for k, v in med.items()},
        "kernel_over_anchor": med["kernel"] / med["anchor"],
        "former_over_anchor": med["former"] / med["anchor"],
        "bytes_identical_to_former": same,
    }


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


# ------------------------------------------------------------------------------------------ timing


def round_robin(paths: dict[str, Callable[[], Any]], repeats: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Median seconds of each path over ``repeats`` rounds (one run of each per round), and each path's
    last result."""
    times: dict[str, list[float]] = {k: [] for k in paths}
    last: dict[str, Any] = {}
    for _ in range(repeats):
        for name, fn in paths.items():
            start = time.perf_counter()
            last[name] = fn()
            times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}, last


def overlap(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    return bool(np.all(np.maximum(a[0], b[0]) <= np.minimum(a[1], b[1])))


def gap_cases(quick: bool) -> list[tuple[str, list[float], int, int]]:
    standard = [10000.0 ** (-k / 8) for k in range(8)]  # head_dim 16, base 10000: 8 planes
    big = 2000 if quick else 10**4
    return [
        ("K = 8, m = 1 .. 1500", standard, 1, 1500),
        (f"K = 8, m = 1 .. {big}", standard, 1, big),
        (f"K = 1 (theta = 0.866), {big} offsets from m = 10^6", [0.866], 10**6, 10**6 + big - 1),
    ]


def bench_gaps(repeats: int, quick: bool) -> list[dict[str, Any]]:
    rows = []
    for label, freqs, first, last in gap_cases(quick):
        amps = [1.0] * len(freqs)
        med, res = round_robin(
            {
                "iv": lambda f=freqs, a=amps, s=first, e=last: iv_enclose_index_gaps(f, a, e, first_m=s),
                "arb": lambda f=freqs, a=amps, s=first, e=last: enclose_index_gaps(f, a, e, first_m=s),
            },
            repeats,
        )
        count = last - first + 1
        rows.append(
            {
                "case": label,
                "offsets": count,
                "iv_seconds": med["iv"],
                "arb_seconds": med["arb"],
                "iv_us_per_term": med["iv"] / (count * len(freqs)) * 1e6,
                "arb_us_per_term": med["arb"] / (count * len(freqs)) * 1e6,
                "ratio": med["iv"] / med["arb"],
                "enclosures_overlap": overlap(res["iv"], res["arb"]),
            }
        )
    return rows


def _strip(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if "seconds" not in k}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def bench_claim(repeats: int) -> dict[str, Any]:
    claim = CLAIMS["many-plane.dirichlet-bound"]
    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=True)

    def old() -> Any:
        with (
            mock.patch(
                "ropeproof.verify.studies.beyond._many_plane_judging.certified_dirichlet",
                iv_certified_dirichlet,
            ),
            mock.patch("ropeproof.verify.studies.beyond._dirichlet_steps._certify", iv_certify),
        ):
            return run_claim(claim, ctx)

    def new() -> Any:
        return run_claim(claim, ctx)

    new()  # warm-up: the sympy proof steps are cached after their first run, for both paths alike
    med, res = round_robin({"iv": old, "arb": new}, repeats)
    same = res["iv"].outcome.verdict == res["arb"].outcome.verdict and _strip(
        res["iv"].outcome.figures
    ) == _strip(res["arb"].outcome.figures)
    return {
        "claim": claim.id,
        "verdict": res["arb"].outcome.verdict,
        "iv_seconds": med["iv"],
        "arb_seconds": med["arb"],
        "ratio": med["iv"] / med["arb"],
        "same_verdict_and_figures": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="2000 offsets instead of 10^4 in the large cases"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--kernel-only", action="store_true", help="only the kernel against its anchor")
    parser.add_argument("--kernel-offsets", type=int, default=20000, help="offsets of the kernel case")
    args = parser.parse_args()
    result: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, "
        f"torch {torch.__version__}, python-flint {flint.__version__}",
        "load_average_before": load_average(),
        "repeats": args.repeats,
        "kernel": bench_kernel(args.repeats, args.kernel_offsets),
    }
    if not args.kernel_only:
        result["enclose_index_gaps"] = bench_gaps(args.repeats, args.quick)
        result["claim"] = bench_claim(args.repeats)
    result["load_average_after"] = load_average()
    if args.json:
        print(json.dumps(result, indent=1))
        return
    k = result["kernel"]
    print(f"# the certified Index kernel against a bare python-flint loop; medians of {args.repeats} rounds")
    print(
        result["machine"], f"; load average {result['load_average_before']} -> {result['load_average_after']}"
    )
    print(
        f"{k['case']}: anchor {k['anchor_us_per_offset']:.2f} us/offset, "
        f"kernel {k['kernel_us_per_offset']:.2f} us/offset ({k['kernel_over_anchor']:.2f}x the anchor), "
        f"former kernel {k['former_us_per_offset']:.2f} us/offset ({k['former_over_anchor']:.2f}x); "
        f"float ends byte for byte the former kernel's: {k['bytes_identical_to_former']}"
    )
    if args.kernel_only:
        return
    print(f"\n# certified enclosures: mpmath.iv (old) vs arb (new); medians of {args.repeats} rounds")
    print("\n## enclose_index_gaps")
    for r in result["enclose_index_gaps"]:
        print(
            f"{r['case']}: iv {r['iv_seconds']:.3f} s ({r['iv_us_per_term']:.1f} us/term), "
            f"arb {r['arb_seconds']:.3f} s ({r['arb_us_per_term']:.2f} us/term), "
            f"iv / arb {r['ratio']:.1f}x; enclosures overlap: {r['enclosures_overlap']}"
        )
    c = result["claim"]
    print(f"\n## claim {c['claim']} (quick), verdict {c['verdict']}")
    print(
        f"iv {c['iv_seconds']:.2f} s, arb {c['arb_seconds']:.2f} s, iv / arb {c['ratio']:.1f}x; "
        f"same verdict and figures: {c['same_verdict_and_figures']}"
    )


if __name__ == "__main__":
    main()

"""Benchmark: the standard RoPE spectrum's T_Index margin streamed to 10^7, and the certified checks.

Run ``python3 benchmarks/bench_many_plane.py [--max-n 10000000] [--certified-n 10000] [--json]``.
Prints, for head_dim 64 and 128 (base 10000, equal amplitudes):

- the normalised ``margin_inf`` at ``10^3 .. max_n`` and the decay onset (none means the margin
  equals its ``n = 2`` value ``g(1)`` throughout);
- the time of :func:`ropeproof.verify.studies.beyond._many_plane.margin_records` (streaming with exact
pruning), the
  fraction of
  plane terms it evaluated, and the time of the plain chunked
  :func:`ropeproof.verify.measure.exact._index_sweep.index_sweep`
  on the same lengths (skipped above ``--full-sweep-limit``);

and the wall time of the certified Theorem 3.2 checks (:mod:`ropeproof.verify.measure.exact._certified`) for
every
``n <= certified_n``: T_Index at ``theta = 0.866`` (two readings) and T_Retrieval (``|ALPH| = 8``,
``theta = 0`` and ``0.0027``), with their row counts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from ropeproof.verify.measure.exact._certified import certified_index, certified_retrieval
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.studies.beyond._many_plane import (
    dirichlet_decay_guarantee,
    margin_records,
    standard_frequencies,
)


def standard_spectrum(head_dim: int, max_n: int, full_sweep_limit: int) -> dict:
    f = standard_frequencies(head_dim)
    rec = margin_records(f, None, max_n)
    lengths = [n for n in (10**3, 10**4, 10**5, 10**6, 10**7, max_n) if n <= max_n]
    out = {
        "head_dim": head_dim,
        "planes": head_dim // 2,
        "normalised_margin": {str(n): float(rec.normalised(n)[0]) for n in sorted(set(lengths))},
        "decay_onset": rec.decay_onset(),
        "dirichlet_forces_decay_by_log10_n": dirichlet_decay_guarantee(f).log10_length,
        "streaming_seconds": round(rec.seconds, 3),
        "plane_terms_evaluated_fraction": rec.evaluated / ((max_n - 1) * f.size),
    }
    if max_n <= full_sweep_limit:
        t = time.perf_counter()
        full = index_sweep(f, None, max_n)
        out["full_sweep_seconds"] = round(time.perf_counter() - t, 3)
        out["full_sweep_agrees"] = bool(
            np.array_equal(full.margin_inf[[0, -1]], rec.margin_inf(np.array([2, max_n])))
        )
    return out


def certified(max_n: int) -> dict:
    out = {}
    t = time.perf_counter()
    chk = certified_index(0.866, max_n)
    out["index_theta_0.866"] = {
        "seconds": round(time.perf_counter() - t, 3),
        **{q: c.summary()["rows"] for q, c in chk.comparisons.items()},
    }
    for theta in (0.0, 0.0027):
        t = time.perf_counter()
        chk = certified_retrieval(8, theta, max_n)
        out[f"retrieval_alph8_theta_{theta}"] = {
            "seconds": round(time.perf_counter() - t, 3),
            "margin_inf": chk.comparisons["margin_inf"].summary()["rows"],
        }
    out["total_seconds"] = round(sum(v["seconds"] for v in out.values()), 3)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-n", type=int, default=10**7)
    p.add_argument("--certified-n", type=int, default=10**4)
    p.add_argument("--full-sweep-limit", type=int, default=10**7)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    result = {
        "standard_spectrum": [standard_spectrum(hd, args.max_n, args.full_sweep_limit) for hd in (64, 128)],
        "certified": certified(args.certified_n),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for s in result["standard_spectrum"]:
        print(f"head_dim {s['head_dim']} (K = {s['planes']}): normalised margin_inf {s['normalised_margin']}")
        onset = s["dirichlet_forces_decay_by_log10_n"]
        print(f"  decay onset: {s['decay_onset']}; Theorem D forces decay by n ~ 1e{onset:.1f}")
        share = 100 * s["plane_terms_evaluated_fraction"]
        line = f"  streaming {s['streaming_seconds']} s ({share:.2f}% of plane terms)"
        if "full_sweep_seconds" in s:
            line += f"; full sweep {s['full_sweep_seconds']} s, agrees: {s['full_sweep_agrees']}"
        print(line)
    c = result["certified"]
    print(f"certified checks, n <= {args.certified_n}: total {c['total_seconds']} s")
    for k, v in c.items():
        if k != "total_seconds":
            print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the logit reading (``check_bound(..., reading="logit_inf")``) on Men et al.'s quantity.

Run ``python3 benchmarks/bench_logit_reading.py [--offsets 16384] [--repeats 3] [--json]``.

A one-token probe head over 64 planes, ``theta_i = b^(-i/64)`` with ``b = 3.1e5``, whose query and key
are ``(1, 1)/sqrt(2)`` in every plane: its logit at offset ``m`` is ``B_m = sum_i cos(m theta_i)``, and
``logit_inf(m) >= 0`` first fails at the first ``m`` with ``B_m < 0``. Per round (round-robin, one run
of each setting) it times:

- ``numpy``: the plain pass ``cos(outer(m, theta)).sum(1)`` and its first negative row (no error bound);
- ``float64``: ``check_bound`` with error bounds (every offset ``0 .. L`` judged, refined where close);
- ``certified``: the same with interval arithmetic (Arb, 80 bits), every row enclosed;
- ``float64, with lengths``: the float64 check as it was before the logit reading spared the sweep over
  lengths (``sweep_head`` without ``logits_only``, then the same reading), for the ratio.

It prints the medians, the ratios to ``numpy`` and to the sweep with lengths, and checks that every
setting finds the same first violation.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import mpmath
import numpy as np

from ropeproof import CompiledHead, Family, FamilyCase, RopeSpec, check_bound
from ropeproof.verify.measure.exact._head_sweep import sweep_head

BASE, PLANES = 3.1e5, 64


def probe() -> tuple[CompiledHead, Family, np.ndarray]:
    h = 2 * PLANES
    freqs = np.array([float(mpmath.mpf(BASE) ** (-mpmath.mpf(i) / PLANES)) for i in range(PLANES)])
    eye = np.eye(h)
    w_e = np.ones((1, h)) / np.sqrt(2)
    head = CompiledHead(
        "men", ("x",), w_e, eye, eye, eye, eye, np.ones((h, 1)), RopeSpec(h, freqs=freqs), 1.0
    )
    family = Family("probe", (FamilyCase("probe", ("x",), ("x",), ("x",), None),), "one token, anywhere")
    return head, family, freqs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offsets", type=int, default=16384)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    head, family, freqs = probe()
    top = args.offsets

    def numpy_pass() -> int:
        b = np.cos(np.outer(np.arange(top + 1), freqs)).sum(1)
        return int(np.nonzero(b < 0)[0][0])

    def checked(certified: bool) -> int:
        check = check_bound(head, 0, top, "logit_inf", ">=", family=family, certified=certified)
        return int(check.first_violation)

    def with_lengths() -> int:
        sweep = sweep_head(head, top + 1, family)  # the sweep over lengths, then the reading
        return int(np.nonzero(sweep.logits().logit_inf < 0)[0][0])

    settings = {
        "numpy": numpy_pass,
        "float64": lambda: checked(False),
        "certified": lambda: checked(True),
        "float64, with lengths": with_lengths,
    }
    times: dict[str, list[float]] = {k: [] for k in settings}
    found: dict[str, set[int]] = {k: set() for k in settings}
    for _ in range(args.repeats):
        for name, fn in settings.items():
            t = time.perf_counter()
            found[name].add(fn())
            times[name].append(time.perf_counter() - t)
    medians = {k: statistics.median(v) for k, v in times.items()}
    out = {
        "offsets": top,
        "first_violation": sorted(set().union(*found.values())),
        "medians_s": {k: round(v, 4) for k, v in medians.items()},
        "float64 / numpy": round(medians["float64"] / medians["numpy"], 2),
        "certified / numpy": round(medians["certified"] / medians["numpy"], 2),
        "float64, with lengths / float64": round(medians["float64, with lengths"] / medians["float64"], 2),
    }
    if len(out["first_violation"]) != 1:
        raise SystemExit(f"the settings disagree on the first violation: {found}")
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))


if __name__ == "__main__":
    main()

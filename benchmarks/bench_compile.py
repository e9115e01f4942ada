"""Benchmark: compiling a multi-hop program's embedding on Arb balls against 30-digit mpmath.

Run ``python3 benchmarks/bench_compile.py [--max-length 2000] [--repeats 3]``. Compiles the program that
``ropeproof export-model gptj number --max-length N`` writes (the best solver at width 128: its Index
planes, 120 letters and the integers 1..N-1), round robin, with

- the ball path (:mod:`ropeproof.constructions._multihop_compile`'s default: sympy's mpmath code run on
  python-flint ``arb`` balls);
- the 30-digit mpmath path (the baseline, the evaluation compile_program used before), measured in the
  same run by marking every (feature, rule) as mpmath-only;

and prints each median, the ratio, and whether the two embeddings are the same float64s.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ropeproof.constructions import _multihop_compile as multihop_compile
from ropeproof.verify.studies.beyond._checkpoint_solvers import checkpoint_spec


def embedding(program, mpmath_only: bool) -> np.ndarray:
    """``W_E`` of ``program`` by one of the two paths."""
    evaluate = multihop_compile._Evaluator(program)
    if mpmath_only:
        evaluate.mpmath_only.update((f.name, t.rule) for f in program.features for t in program.tokens)
    w = np.zeros((len(program.tokens), program.d_model))
    for row, tok in enumerate(program.tokens):
        w[row] = [v for f in program.features for v in evaluate(f, tok)]
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-length", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    program = checkpoint_spec("number", max_length=args.max_length).program
    planes = len(program.layers[0].planes)
    times: dict[str, list[float]] = {"balls": [], "mpmath": []}
    results = {}
    for _ in range(args.repeats):
        for name in times:
            start = time.perf_counter()
            results[name] = embedding(program, name == "mpmath")
            times[name].append(time.perf_counter() - start)
    same = np.array_equal(results["balls"], results["mpmath"])
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"number program, {len(program.tokens)} tokens, {planes} Index planes, d_model {program.d_model}")
    for name, t in med.items():
        print(f"  {name:7s} median {t:.3f} s  ({', '.join(f'{x:.3f}' for x in times[name])})")
    print(f"  mpmath / balls = {med['mpmath'] / med['balls']:.1f}x; identical float64 embeddings: {same}")


if __name__ == "__main__":
    main()

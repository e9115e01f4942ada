"""Benchmark: how close the length study's forward runs to this CPU's float32 matrix-product rate.

Run ``python3 benchmarks/bench_forward_floor.py [--rounds 5]``. One thread (the toolkit's policy). For each
forward shape the study uses (850 tokens x 4 inputs, 256 x 16, 64 x 64: about 4,096 tokens a forward), it
times :func:`~ropeproof.verify.studies.training._evaluation.last_answers` on the paper letter model as the
study loads it (:func:`~ropeproof.verify.studies.training._lengths.length_model`) and converts the time
to GFLOP/s with the model's own count of multiply-adds (per block: q, k, v and out projections
``4 d^2`` and the MLP ``2 d n_inner`` per position, causal attention ``n d`` per position on average for
scores and values; the last block's out projection, MLP and the logits at the last position only are
left out, so the rate is if anything understated). Beside it, the rate of one plain float32 ``torch.mm``
of the MLP's shape (``[4096, d] @ [d, n_inner]``), the best this CPU does on the study's largest
products. The ratio says how much of the machine the forward leaves unused: the cold full check's task
CPU is mostly these forwards (``training.length``, the multi-hop length claims), so it cannot fall much
below what the judged inputs cost at this rate.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from ropeproof.verify.studies.training._evaluation import last_answers
from ropeproof.verify.studies.training._lengths import encoded, length_model
from ropeproof.verify.studies.training._shipped import shipped_path

SHAPES = ((850, 4), (256, 16), (64, 64))
"""(tokens, inputs) of each forward timed: the study's forward batches."""


def forward_flops(n: int, batch: int, d: int, inner: int, layers: int) -> float:
    """Floating-point operations (2 per multiply-add) of the study's forward of ``batch`` inputs of ``n``
    tokens (module docstring)."""
    per_position = 4 * d * d + 2 * d * inner + n * d
    return 2.0 * batch * n * (layers - 1) * per_position + 2.0 * batch * n * 2 * d * d


def cpu_seconds(fn, rounds: int) -> float:
    """Median process CPU seconds of ``fn()`` over ``rounds`` runs after one warm-up."""
    fn()
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = length_model(shipped_path("letter", "paper", 0))
    cfg = model.config
    d, inner, layers = int(cfg.n_embd), int(cfg.n_inner), int(cfg.n_layer)
    a, b = torch.randn(4096, d), torch.randn(d, inner)
    gemm = cpu_seconds(lambda: torch.mm(a, b), args.rounds * 20)
    gemm_rate = 2.0 * 4096 * d * inner / gemm / 1e9
    print(f"torch.mm float32 [4096, {d}] @ [{d}, {inner}], one thread: {gemm_rate:.1f} GFLOP/s")
    print("| tokens x inputs | forward CPU s | GFLOP/s | / torch.mm rate |")
    print("|---|---|---|---|")
    with torch.inference_mode():
        for n, batch in SHAPES:
            ids = encoded("letter", n, 0, batch, "distractors", 0, (1, 2, 3, 4)).input_ids
            seconds = cpu_seconds(lambda ids=ids: last_answers(model, ids), args.rounds)
            rate = forward_flops(n, batch, d, inner, layers) / seconds / 1e9
            print(f"| {n} x {batch} | {seconds:.3f} | {rate:.1f} | {rate / gemm_rate:.2f} |")


if __name__ == "__main__":
    main()

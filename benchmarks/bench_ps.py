"""Benchmark: positional/symbolic scores of one head on 100 inputs of 17 tokens.

Run ``python3 benchmarks/bench_ps.py [--repeats 7] [--device auto]``. Prints, for a random head
(head_dim 64, base 10000, d_model 64):

- the median time of :func:`ropeproof.verify.ps.scores.ps_scores` (all 120 swaps of the batch as one gather
  and one softmax over the head's logit table);
- the median time of the same scores from a callable head (all swapped inputs stacked into one
  forward pass, and in chunks of 1000 sequences);
- the per-swap loop baseline measured in the same run (one forward pass per swap, as a Python
  loop), the speed-up ratio, and the largest score difference between the three.

Uses CUDA when available (``--device auto``) and says which device ran.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import torch

from ropeproof.verify.ps.scores import attention_row_fn, ps_scores, scores_from_rows, swap_plan
from ropeproof.verify.runtime.attention import RopeAttention
from ropeproof.verify.runtime.devices import resolve_device
from ropeproof.verify.subjects import random_subject

N_INPUTS, LENGTH = 100, 17
CHUNK = 1000


def loop_baseline(head: RopeAttention, x: torch.Tensor, tau: float = 1e-4) -> torch.Tensor:
    """``s_pos, s_sym`` with one forward pass per swap (a Python loop over the 120 swaps)."""
    perms, block_a, block_b = swap_plan(x.shape[1])
    row = head(x).pattern[:, -1, :]
    swapped = []
    for s in range(perms.shape[0]):
        swapped.append(head(x[:, perms[s].to(x.device)]).pattern[:, -1, :])
    s_pos, s_sym, *_ = scores_from_rows(row, torch.stack(swapped, 1), block_a, block_b, tau)
    return torch.stack([s_pos, s_sym])


def median_seconds(fn: Callable[[], object], repeats: int, device: torch.device) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs after one warm-up (CUDA synchronised)."""
    fn()
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    subj = random_subject(N_INPUTS, LENGTH, 64, 10000.0, 64, shared=3.0, seed=0, device=device)
    head, x = subj.head, subj.inputs.to(device)
    fast = ps_scores(head, x)
    via_callable = ps_scores(attention_row_fn(head), x)
    loop = loop_baseline(head, x)
    diff = max(
        float((fast.s_pos - via_callable.s_pos).abs().max()),
        float((fast.s_sym - via_callable.s_sym).abs().max()),
        float((torch.stack([fast.s_pos, fast.s_sym]) - loop.cpu()).abs().max()),
    )
    t_fast = median_seconds(lambda: ps_scores(head, x), args.repeats, device)
    t_call = median_seconds(lambda: ps_scores(attention_row_fn(head), x), args.repeats, device)
    t_chunk = median_seconds(
        lambda: ps_scores(attention_row_fn(head), x, chunk_size=CHUNK), args.repeats, device
    )
    t_loop = median_seconds(lambda: loop_baseline(head, x), args.repeats, device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"device: {device} ({name}), torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"head: {subj.name}; {N_INPUTS} inputs of {LENGTH} tokens, {fast.n_swaps} swaps each")
    print(f"ps_scores (logit table, batched):      median {t_fast * 1e3:9.2f} ms over {args.repeats} repeats")
    print(f"ps_scores (callable, stacked forward): median {t_call * 1e3:9.2f} ms (one call)")
    print(f"ps_scores (callable, chunk_size={CHUNK}): median {t_chunk * 1e3:9.2f} ms")
    print(f"per-swap loop baseline:                median {t_loop * 1e3:9.2f} ms")
    print(
        f"speed-up vs loop: {t_loop / t_fast:.1f}x (table), {t_loop / t_call:.2f}x (callable, one call), "
        f"{t_loop / t_chunk:.2f}x (callable, chunked)"
    )
    print(f"max |score difference| between the three: {diff:.2e}")
    print(f"S_pos = {fast.S_pos:.6f}, S_sym = {fast.S_sym:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

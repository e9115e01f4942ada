"""Benchmarks of the exact sweeps and the attention module (medians and ratios, one run).

    python3 benchmarks/bench_sweeps.py [--repeats 5] [--quick]

Prints:

1. the fast exact sweep against the naive baseline at N = 4096: for every length n, the module's
   last query row on that length's extremal input (one length at a time), reduced to its margin;
2. the sweep times at the target sizes (T_Index to 10^6, T_Retrieval |ALPH| = 8 to 10^5);
3. the module's logit throughput (query-key pairs per second) as a fraction of a plain
   ``torch.matmul`` of the same shapes measured in the same run.

Uses CUDA when available (``device="auto"``) for the module figures and says which device it used.
Machines are noisy: each figure is the median of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.paper import retrieval_construction
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.exact.discrepancy import build_tables, exact_sweep
from ropeproof.verify.exact.families import family_for
from ropeproof.verify.exact.index_sweep import index_sweep
from ropeproof.verify.runtime.attention import RopeAttention
from ropeproof.verify.runtime.compiled import encode, head_module
from ropeproof.verify.runtime.devices import resolve_device
from ropeproof.verify.runtime.rope import rope_logits


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def retrieval_fast(big: int):
    c = retrieval_construction(8, 0.0027, max_int=1)
    head = compile_construction(c)
    return exact_sweep(build_tables(head, family_for(c), big), big)


def naive_baseline(sweep, head, big: int, device: torch.device) -> np.ndarray:
    """The module on each length's extremal input, one length at a time (last row only)."""
    module = head_module(head, device=device)
    margins = np.empty(big - 1)
    for n in range(2, big + 1):
        w = sweep.witness(n, "margin_inf")
        x = encode(head, list(w.tokens)).to(device)
        q, k, _ = module.project(x[None])
        from ropeproof.verify.runtime.rope import apply_rope

        rq = apply_rope(q[:, -1:], module.spec, torch.tensor([n - 1], device=device))
        rk = apply_rope(k, module.spec)
        row = (rq @ rk.transpose(-1, -2))[0, 0]
        t = w.target_position
        others = torch.cat([row[:t], row[t + 1 :]])
        margins[n - 2] = float(row[t] - others.max())
    return margins


def naive_index(theta: float, big: int, device: torch.device) -> np.ndarray:
    """T_Index the naive way: for each n, the extremal input's last row (query s = n - 1, every key v)
    through the module's RoPE arithmetic, then its margin."""
    spec = RopeSpec(2, freqs=[theta])
    v = torch.tensor([1.0, 0.0], dtype=torch.float64, device=device)
    margins = np.empty(big - 1)
    for n in range(2, big + 1):
        s = n - 1
        angle = torch.tensor(-s * theta, dtype=torch.float64)
        q = torch.stack([torch.cos(angle), torch.sin(angle)]).to(v)
        row = rope_logits(q[None], v.expand(n, 2), spec, q_positions=[n - 1])[0]
        t = n - 1 - s
        margins[n - 2] = float(row[t] - torch.cat([row[:t], row[t + 1 :]]).max())
    return margins


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    device = resolve_device("auto")
    gpu = torch.cuda.get_device_name(0) if device.type == "cuda" else "none"
    print(
        f"# ropeproof benchmarks: python {platform.python_version()}, torch {torch.__version__}, "
        f"device {device} (GPU: {gpu}), {torch.get_num_threads()} CPU threads, repeats {args.repeats}"
    )

    big = 4096
    print(f"\n## 1. fast exact sweep vs naive per-length module baseline, N = {big}")
    c = retrieval_construction(8, 0.0027, max_int=1)
    head = compile_construction(c)
    fast_t = median_seconds(lambda: retrieval_fast(big), args.repeats)
    sweep = retrieval_fast(big)
    naive_t = median_seconds(lambda: naive_baseline(sweep, head, big, device), max(1, args.repeats // 2))
    naive = naive_baseline(sweep, head, big, device)
    agree = float(np.max(np.abs(naive - sweep.margin_inf)))
    print(
        f"T_Retrieval: fast {fast_t * 1e3:.1f} ms, naive {naive_t * 1e3:.1f} ms, "
        f"ratio {naive_t / fast_t:.0f}x (margins agree to {agree:.1e})"
    )
    fast_i = median_seconds(lambda: index_sweep([0.8660], [1.0], big), args.repeats)
    naive_i = median_seconds(lambda: naive_index(0.8660, big, device), max(1, args.repeats // 2))
    agree_i = float(
        np.max(np.abs(naive_index(0.8660, big, device) - index_sweep([0.8660], [1.0], big).margin_inf))
    )
    print(
        f"T_Index:     fast {fast_i * 1e3:.2f} ms, naive {naive_i * 1e3:.1f} ms, "
        f"ratio {naive_i / fast_i:.0f}x (margins agree to {agree_i:.1e})"
    )

    print("\n## 2. sweep times at the target sizes (float64, CPU)")
    n_index = 10**5 if args.quick else 10**6
    n_ret = 10**4 if args.quick else 10**5
    t_index = median_seconds(lambda: index_sweep([0.8660], [1.0], n_index), args.repeats)
    t_ret = median_seconds(lambda: retrieval_fast(n_ret), max(1, args.repeats // 2))
    print(f"T_Index all n <= {n_index:.0e}: {t_index:.3f} s (target < 5 s)")
    print(f"T_Retrieval |ALPH|=8 all n <= {n_ret:.0e}: {t_ret:.3f} s (target < 10 s)")

    print("\n## 3. module logit throughput vs torch.matmul of the same shapes")
    batch, n, d_model, head_dim = (4, 512, 128, 64) if args.quick else (8, 1024, 256, 128)
    for dtype in (torch.float64, torch.float32):
        g = torch.Generator().manual_seed(0)
        w = [torch.randn(d_model, head_dim, generator=g) for _ in range(3)]
        module = RopeAttention(
            *w, torch.randn(head_dim, d_model, generator=g), RopeSpec(head_dim), device=device, dtype=dtype
        )
        x = torch.randn(batch, n, d_model, generator=g).to(device, dtype)
        qk = torch.randn(batch, n, head_dim, generator=g).to(device, dtype)
        t_mod = median_seconds(lambda module=module, x=x: module(x), args.repeats)
        t_mm = median_seconds(lambda qk=qk: qk @ qk.transpose(-1, -2), args.repeats)
        pairs = batch * n * n
        print(
            f"{str(dtype).removeprefix('torch.')}: module {pairs / t_mod:.3e} pairs/s (full forward), "
            f"matmul {pairs / t_mm:.3e} pairs/s, module/matmul = {t_mm / t_mod:.3f}"
        )


if __name__ == "__main__":
    main()

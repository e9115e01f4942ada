"""Benchmarks of the exact sweeps and the attention module (medians and ratios, one run).

    python3 benchmarks/bench_sweeps.py [--repeats 5] [--quick]

Prints:

1. the fast exact sweep against the naive baseline at N = 4096: for every length n, the module's
   last query row on that length's extremal input (one length at a time), reduced to its margin;
2. the sweep targets of issues 13 and 18, each as a ratio measured in this run:
   a. ``ropeproof sweep index`` at 10^6 lengths (every row judged; 1000 rows written, and all 10^6
      written as JSON Lines) against the raw exact sweep (``index_sweep``), target <= 3x for the first;
   b. ``sweep retrieval`` (closed form, |ALPH| = 8) at 10^6 lengths, target < 2 s, and against the
      generic family engine at 10^4 lengths (speed-up and largest difference);
   c. the streamed sweeps at 10^7 lengths (every row judged, 10^4 written): peak traced memory against
      the same at 10^6 (bounded memory: ratio about 1);
   d. issue 18: T_Index at theta = 1e-6 to 10^6, rows left undecided (target 0);
   e. the sharded certified Index check: one shard's time and peak memory per 10^4 offsets, the merge
      and judging time, and what n <= 10^9 costs in CPU time at that rate (alone: ``--shards-only``);
3. the module's logit throughput (query-key pairs per second) as a fraction of a plain
   ``torch.matmul`` of the same shapes measured in the same run.

Uses CUDA when available (``device="auto"``) for the module figures and says which device it used.
Machines are noisy: each figure is the median of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import torch

from ropeproof._cli import main as cli_main
from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import retrieval_construction
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._compiled import encode, head_module
from ropeproof.verify.kernel._devices import resolve_device
from ropeproof.verify.kernel._rope import rope_logits
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep
from ropeproof.verify.measure.exact._families import family_for
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.measure.exact._retrieval_sweep import retrieval_sweep
from ropeproof.verify.measure.exact._sweep import iter_index_sweep
from ropeproof.verify.sweep_runs._certified_shards import (
    enclose_gap_records,
    judge_records,
    merge_gap_records,
)
from ropeproof.verify.sweep_runs._sweep_files import SweepSummary


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
        from ropeproof.verify.kernel._rope import apply_rope

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


def cli_seconds(argv: list[str], repeats: int) -> float:
    """Median wall time of ``ropeproof ARGV`` run in this process, output to a temporary file."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        return median_seconds(lambda: cli_main([*argv, "--no-progress", "--out", out]), repeats)


def cpu_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Median CPU time of this process over ``repeats`` calls (less sensitive than wall time to other
    processes sharing the cores)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def peak_memory(fn: Callable[[], object]) -> tuple[float, float]:
    """``(seconds, peak traced MiB)`` of one call (numpy and Python allocations)."""
    tracemalloc.start()
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak


def sweep_targets(args: argparse.Namespace) -> None:
    reps = args.repeats
    big = 10**5 if args.quick else 10**6
    print(f"\n## 2a. `ropeproof sweep index` at {big:.0e} lengths vs the raw exact sweep (CPU, float64)")
    cli_main(
        ["sweep", "index", "--theta", "0.866", "--lengths", "2:100", "--json", "--out", os.devnull]
    )  # warm-up
    raw = median_seconds(lambda: index_sweep([0.8660], [1.0], big), reps)
    judged = cli_seconds(
        ["sweep", "index", "--theta", "0.866", "--lengths", f"2:{big}:1000", "--jsonl"], reps
    )
    full = cli_seconds(["sweep", "index", "--theta", "0.866", "--lengths", f"2:{big}", "--jsonl"], 1)
    print(f"raw index_sweep {raw:.3f} s")
    print(
        f"CLI, every row judged, {big // 1000} rows written: {judged:.3f} s = {judged / raw:.2f}x raw "
        "(target <= 3x)"
    )
    print(
        f"CLI, every row judged and written (JSON Lines): {full:.3f} s = {full / raw:.1f}x raw "
        f"({(big - 1) / full / 1e6:.2f} M rows/s; text formatting of {big:.0e} rows dominates)"
    )

    print(f"\n## 2b. `sweep retrieval` |ALPH| = 8, theta = 0.0027 at {big:.0e} lengths")
    closed = median_seconds(lambda: retrieval_sweep(8, 0.0027, big), reps)
    judged_r = cli_seconds(
        ["sweep", "retrieval", "--theta", "0.0027", "--lengths", f"2:{big}:1000", "--jsonl"], reps
    )
    argv_r = [
        "sweep",
        "retrieval",
        "--theta",
        "0.0027",
        "--lengths",
        f"2:{big}:1000",
        "--jsonl",
        "--no-progress",
    ]
    cpu_r = cpu_seconds(lambda: cli_main([*argv_r, "--out", os.devnull]), reps)
    print(
        f"closed-form sweep {closed:.3f} s; CLI with every row judged {judged_r:.3f} s wall, "
        f"{cpu_r:.3f} s CPU (target < 2 s)"
    )
    small = 10**4
    t_old = median_seconds(lambda: retrieval_fast(small), 1)
    t_new = median_seconds(lambda: retrieval_sweep(8, 0.0027, small), reps)
    old, new = retrieval_fast(small), retrieval_sweep(8, 0.0027, small)
    diff = max(float(np.nanmax(np.abs(getattr(old, q) - getattr(new, q)))) for q in ("gap_sup", "margin_inf"))
    print(
        f"at {small:.0e}: generic engine {t_old:.2f} s, closed form {t_new:.3f} s, "
        f"ratio {t_old / t_new:.0f}x; "
        f"largest difference {diff:.1e} (both float64 evaluations of the same closed form)"
    )

    huge = 10**6 if args.quick else 10**7
    print(f"\n## 2c. streamed sweeps at {huge:.0e} lengths (every row judged, 10^4 rows written): memory")
    for name, extra in (("index", ["--theta", "0.866"]), ("retrieval", ["--theta", "0.0027"])):

        def run(n: int, name: str = name, extra: list[str] = extra) -> None:
            cli_main(
                [
                    "sweep",
                    name,
                    *extra,
                    "--lengths",
                    f"2:{n}:{max(1, n // 10**4)}",
                    "--jsonl",
                    "--no-progress",
                    "--out",
                    os.devnull,
                ]
            )

        t_small, m_small = peak_memory(lambda: run(huge // 10))
        t_huge, m_huge = peak_memory(lambda: run(huge))
        print(
            f"{name}: {huge // 10:.0e} lengths {t_small:.1f} s, peak {m_small:.0f} MiB; {huge:.0e} lengths "
            f"{t_huge:.1f} s, peak {m_huge:.0f} MiB; memory ratio {m_huge / m_small:.2f} (bounded: ~1)"
        )

    print(f"\n## 2d. issue 18: T_Index at theta = 1e-6, n = 2..{big:.0e}")
    start = time.perf_counter()
    summary = SweepSummary()
    for block in iter_index_sweep(1e-6, 2, big):
        summary.add_block(block)
    seconds = time.perf_counter() - start
    undecided = sum(r.rows.get("undecided", 0) for r in summary.readings.values())
    equal = {q: r.rows.get("holds-equal", 0) for q, r in summary.readings.items()}
    print(
        f"{seconds:.2f} s; rows holding with equality per reading {equal}; "
        f"undecided rows {undecided} (target 0)"
    )

    sharded_certified(args)


def sharded_certified(args: argparse.Namespace) -> None:
    shard = 2000 if args.quick else 10**4
    print(
        f"\n## 2e. sharded certified Index check (theta = 0.866, 80-bit Arb balls), shards of {shard} offsets"
    )
    t_shard = median_seconds(
        lambda: enclose_gap_records([0.866], None, 10**6, 10**6 + shard - 1), args.repeats
    )
    _t, m_shard = peak_memory(lambda: enclose_gap_records([0.866], None, 10**6, 10**6 + shard // 10 - 1))
    parts = [
        enclose_gap_records([0.866], None, 1 + k * shard, (k + 1) * shard, m_last=4 * shard) for k in range(4)
    ]
    start = time.perf_counter()
    verdict = judge_records(merge_gap_records(parts), 4 * shard + 1)
    t_judge = time.perf_counter() - start
    per_offset = t_shard / shard
    print(
        f"one shard (median of {args.repeats}): {t_shard:.3f} s ({per_offset * 1e6:.1f} us per offset); "
        f"peak traced memory "
        f"{m_shard:.2f} MiB for {shard // 10} offsets (O(chunk): it does not grow with the shard); "
        f"merge + judge of {4 * shard} rows: {t_judge:.3f} s "
        f"(verdict {verdict.readings['margin_inf'].verdict()})"
    )
    print(
        f"n <= 10^9 at this rate: {per_offset * 1e9 / 3600:.1f} CPU-hours, e.g. {10**9 // 10**6} shards of "
        f"10^6 offsets at {per_offset * 1e6:.0f} s each"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--shards-only", action="store_true", help="only 2e, the sharded certified check")
    args = parser.parse_args()
    if args.shards_only:
        sharded_certified(args)
        return
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

    sweep_targets(args)

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

"""Benchmark: [A]'s positional/symbolic scores of one head on 100 inputs, at n = 17, 128 and 850.

Run ``python3 benchmarks/bench_ps.py [--repeats 5] [--lengths 17,128,850] [--device auto]``. The head
is random (head_dim 64, base 10000, d_model 64, inputs with a shared component), as in the issue
that asked for this. Every path runs in its own subprocess, so its peak memory is its own. Printed
per length:

- ``ps_scores`` on a callable head, streamed (swapped copies built a chunk at a time under the
  default 64 MiB budget, zero-weight swaps skipped, which changes no score), with two callables:
  ``attention_row_fn`` (the head's full forward pass, what the issue measured) and ``last_row_fn``
  (the last token's row alone, O(n) per sequence);
- the same with every swap evaluated (``max_skipped_weight=None``), at n = 17, also with memory
  budgets of 8, 16 and 256 MiB (chunk size against speed);
- ``ps_scores`` on the ``RopeAttention`` itself (per-token keys and back-rotated queries);
- the naive per-swap loop baseline measured in the same run: one call of the same callable per
  swap on the 100 swapped inputs. At n = 128 and 850 it is timed on a sample of swaps spread over
  the whole plan and extrapolated to all of them (said in the output);
- for each: the median wall time (and CPU time, steadier on a shared machine), the swapped
  sequences evaluated, the peak memory (resident set
  size above the level after set-up, from ``/proc/self/status`` VmHWM after resetting it; CUDA:
  ``torch.cuda.max_memory_allocated``), and the ratio ``loop time / path time``;
- the largest score difference between the paths that ran in full.

Uses CUDA when available (``--device auto``) and says which device ran.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ropeproof.verify.ps.row_functions import RowFunction
from ropeproof.verify.ps.scores import attention_row_fn, last_row_fn, ps_scores, scores_from_rows
from ropeproof.verify.ps.swap_stream import DEFAULT_MEMORY_BUDGET, BlockPairs
from ropeproof.verify.runtime.devices import resolve_device
from ropeproof.verify.subjects import random_subject

N_INPUTS, HEAD_DIM, D_MODEL = 100, 64, 64
BUDGET_SWEEP_MIB = (8, 16, 256)
"""Other memory budgets timed at n = 17 (every swap, last_row_fn), to show chunk size against speed."""
LOOP_SAMPLE = {128: 64, 850: 16}
"""Swaps timed by the loop at lengths where all of them would take hours; extrapolated to all."""


def _rss_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS counter (Linux >= 4.0); False where that is not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def loop_scores(fn: RowFunction, x: torch.Tensor, swaps: list[int] | None = None) -> torch.Tensor | None:
    """The naive loop: one call of ``fn`` per swap on all inputs at once (``x[:, perm]``). With
    ``swaps`` given, only those swaps are run (for timing) and nothing is returned."""
    n = x.shape[1]
    plan = BlockPairs(n, 1)
    todo = range(plan.n_swaps) if swaps is None else swaps
    row = fn(x)
    rows = []
    for s in todo:
        (i,), (j,) = (t[0].tolist() for t in plan.positions(torch.tensor([s])))
        perm = list(range(n))
        perm[i], perm[j] = j, i
        rows.append(fn(x[:, perm]))
    if swaps is not None:
        return None
    a, b = plan.positions(torch.arange(plan.n_swaps))
    s_pos, s_sym, *_ = scores_from_rows(row, torch.stack(rows, 1), a, b, 1e-4)
    return torch.stack([s_pos, s_sym]).cpu()


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """One path at one length, in this process: time, swaps evaluated, peak memory, scores."""
    device = resolve_device(case["device"])
    n, path, repeats = case["n"], case["path"], case["repeats"]
    subj = random_subject(N_INPUTS, n, HEAD_DIM, 10000.0, D_MODEL, shared=3.0, seed=0, device=device)
    head, x = subj.head, subj.inputs.to(device)
    callable_of = {"forward": attention_row_fn, "last_row": last_row_fn}
    out: dict[str, Any] = {"evaluated": None, "scores": None, "sampled": None}
    fn: Callable[[], Any]
    if path == "table":
        fn = lambda: ps_scores(head, x, per_swap=False)  # noqa: E731
    elif path.startswith("call"):
        row_fn = callable_of[case["fn"]](head)
        skip = None if path == "call_every" else 0.0
        budget = int(case.get("budget_mib", DEFAULT_MEMORY_BUDGET / 2**20) * 2**20)
        fn = lambda: ps_scores(row_fn, x, per_swap=False, max_skipped_weight=skip, memory_budget=budget)  # noqa: E731
    else:
        row_fn = callable_of[case["fn"]](head)
        plan = BlockPairs(n, 1)
        if case.get("sample"):
            k = case["sample"]
            swaps = [round(i * (plan.n_swaps - 1) / (k - 1)) for i in range(k)]
            out["sampled"] = [k, plan.n_swaps]
            fn = lambda: loop_scores(row_fn, x, swaps)  # noqa: E731
        else:
            fn = lambda: loop_scores(row_fn, x)  # noqa: E731
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
    reset = _reset_peak()
    before = _rss_kib("VmRSS") or 0
    start, cpu = time.perf_counter(), time.process_time()
    result = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    times, cpus = [time.perf_counter() - start], [time.process_time() - cpu]
    if device.type == "cuda":
        out["peak_mib"] = (torch.cuda.max_memory_allocated(device) - base) / 2**20
        out["peak_kind"] = "CUDA allocator"
    else:
        hwm = _rss_kib("VmHWM") if reset else None
        peak = hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out["peak_mib"] = (peak - before) / 1024
        out["peak_kind"] = "RSS (VmHWM)" if hwm is not None else "RSS (ru_maxrss, includes set-up)"
    for _ in range(repeats - 1):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    out["seconds"], out["cpu_seconds"] = statistics.median(times), statistics.median(cpus)
    out["repeats"] = len(times)
    if out["sampled"]:
        k, total = out["sampled"]
        out["seconds"] *= total / k
        out["cpu_seconds"] *= total / k
    if hasattr(result, "s_pos"):
        out["scores"] = [result.s_pos.tolist(), result.s_sym.tolist()]
        out["evaluated"] = int(result.n_evaluated.sum())
    elif result is not None:
        out["scores"] = result.tolist()
        out["evaluated"] = N_INPUTS * BlockPairs(n, 1).n_swaps
    if out["sampled"]:
        out["evaluated"] = N_INPUTS * out["sampled"][1]
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    out["device"] = f"{device} ({name}), torch {torch.__version__}, threads {torch.get_num_threads()}"
    return out


def cases_for(n: int, repeats: int, device: str) -> list[dict[str, Any]]:
    """The paths run at length ``n`` (every swap and the full-forward callable only where affordable)."""
    rep = repeats if n <= 128 else 1
    base = {"n": n, "device": device}
    out = [
        {**base, "path": "call", "fn": "last_row", "repeats": rep},
        {**base, "path": "table", "repeats": rep},
        {
            **base,
            "path": "loop",
            "fn": "last_row",
            "repeats": rep if n <= 17 else 1,
            "sample": LOOP_SAMPLE.get(n),
        },
    ]
    if n <= 17:
        out += [
            {**base, "path": "call", "fn": "forward", "repeats": rep},
            {**base, "path": "call_every", "fn": "forward", "repeats": rep},
            {**base, "path": "call_every", "fn": "last_row", "repeats": rep},
            {**base, "path": "loop", "fn": "forward", "repeats": rep},
        ]
        out += [  # the budget sweep: chunk size against speed, every swap evaluated
            {**base, "path": "call_every", "fn": "last_row", "repeats": rep, "budget_mib": mib}
            for mib in BUDGET_SWEEP_MIB
        ]
    return out


def label(case: dict[str, Any]) -> str:
    fn = {"forward": "attention_row_fn", "last_row": "last_row_fn"}.get(case.get("fn", ""), "")
    if "budget_mib" in case:
        return f"ps_scores(callable {fn}), every swap, {case['budget_mib']} MiB"
    return {
        "call": f"ps_scores(callable {fn}), streamed",
        "call_every": f"ps_scores(callable {fn}), every swap",
        "table": "ps_scores(RopeAttention), streamed",
        "loop": f"naive per-swap loop ({fn})",
    }[case["path"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="repeats at n <= 128 (n = 850 runs once)")
    parser.add_argument("--lengths", default="17,128,850")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_case(json.loads(args.one))))
        return 0
    lengths = [int(v) for v in args.lengths.split(",")]
    print(f"{N_INPUTS} inputs, random head (head_dim {HEAD_DIM}, base 10000, d_model {D_MODEL}), tau = 1e-4, "
          f"memory_budget = {DEFAULT_MEMORY_BUDGET // 2**20} MiB; each path in its own process")  # fmt: skip
    for n in lengths:
        results = []
        for case in cases_for(n, args.repeats, args.device):
            proc = subprocess.run(
                [sys.executable, __file__, "--one", json.dumps(case)],
                capture_output=True,
                text=True,
                check=False,
                env=os.environ.copy(),
            )
            if proc.returncode != 0:
                print(proc.stderr, file=sys.stderr)
                return 1
            results.append((case, json.loads(proc.stdout.strip().splitlines()[-1])))
        s_count = BlockPairs(n, 1).n_swaps
        print(f"\nn = {n}: {s_count} swaps per input, {N_INPUTS * s_count} swapped sequences in all; "
              f"{results[0][1]['device']}")  # fmt: skip
        loops = {c["fn"]: r for c, r in results if c["path"] == "loop"}
        for case, res in results:
            loop = loops.get(case.get("fn", "last_row"))
            ratio = ""
            if case["path"] != "loop" and loop is not None:
                ratio = (
                    f"  {loop['seconds'] / res['seconds']:8.2f}x loop"
                    f" (CPU time {loop['cpu_seconds'] / res['cpu_seconds']:.2f}x)"
                )
            note = ""
            if res["sampled"]:
                note = f"  (timed on {res['sampled'][0]} swaps, extrapolated to {res['sampled'][1]})"
            print(
                f"  {label(case):48s} median {res['seconds']:10.3f} s (CPU {res['cpu_seconds']:9.3f} s) "
                f"over {res['repeats']}"
                f"  evaluated {res['evaluated']:>9d}  peak {res['peak_mib']:8.1f} MiB{ratio}{note}"
            )
        full = [torch.tensor(r["scores"], dtype=torch.float64) for _, r in results if r["scores"] is not None]
        ref = full[0]
        diff = max(float((s - ref).abs().max()) for s in full)
        print(f"  max |score difference| between the {len(full)} paths run in full: {diff:.2e}; "
              f"S_pos = {float(ref[0].mean()):.6f}, S_sym = {float(ref[1].mean()):.6f}")  # fmt: skip
        print(f"  (materialising every swapped input at once would take "
              f"{N_INPUTS * s_count * n * D_MODEL * 8 / 1e9:.3g} GB)")  # fmt: skip
    print(f"\npeak memory measured as {results[0][1]['peak_kind']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

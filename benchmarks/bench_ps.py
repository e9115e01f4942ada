"""Benchmark: [A]'s positional/symbolic scores of one head on 100 inputs, at n = 17, 128 and 850.

Run ``python3 benchmarks/bench_ps.py [--repeats 5] [--lengths 17,128,850] [--device auto]``. The head
is random (head_dim 64, base 10000, d_model 64, inputs with a shared component), as in the issue
that asked for this. Paths, per length:

- ``ps_scores`` on a callable head, streamed (swapped copies built a chunk at a time under the
  default 64 MiB budget, zero-weight swaps skipped, which changes no score), with two callables:
  ``attention_row_fn`` (the head's full forward pass, what the issue measured) and ``last_row_fn``
  (the last token's row alone);
- the same with every swap evaluated (``max_skipped_weight=None``), at n = 17, also with memory
  budgets of 8, 16 and 256 MiB (chunk size against speed);
- ``ps_scores`` on the ``RopeAttention`` itself (per-token keys and back-rotated queries);
- the naive per-swap loop baseline: one call of the same callable per swap on the 100 swapped
  inputs. At n = 128 and 850 it is timed on a sample of swaps spread over the whole plan and
  extrapolated to all of them (said in the output).

Printed for each: the median wall time and CPU time (the CPU time is steadier on a shared machine),
the swapped sequences evaluated, the peak memory and the ratio ``loop time / path time``; then the
largest score difference between the paths that ran in full. Peak memory: each path runs once in a
fresh process, and the peak is the resident set size above its level after set-up
(``/proc/self/status`` VmHWM after resetting it; CUDA: ``torch.cuda.max_memory_allocated``). Times:
at n <= 128, medians over ``--repeats`` rounds in one more process, each round running every path
once (so a busy spell slows all paths alike); at n = 850, the single run of the memory pass.

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

from ropeproof.verify.kernel._devices import resolve_device
from ropeproof.verify.measure._subjects import random_subject
from ropeproof.verify.measure.ps._row_functions import RowFunction
from ropeproof.verify.measure.ps._scores import attention_row_fn, last_row_fn, ps_scores, scores_from_rows
from ropeproof.verify.measure.ps._swap_stream import DEFAULT_MEMORY_BUDGET, BlockPairs

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


def make_fn(case: dict[str, Any], head: Any, x: torch.Tensor) -> tuple[Callable[[], Any], list[int] | None]:
    """The work of one path, as a thunk, and ``[timed swaps, all swaps]`` when the loop is sampled."""
    n, path = case["n"], case["path"]
    callable_of = {"forward": attention_row_fn, "last_row": last_row_fn}
    if path == "table":
        return (lambda: ps_scores(head, x, per_swap=False)), None
    row_fn = callable_of[case["fn"]](head)
    if path.startswith("call"):
        skip = None if path == "call_every" else 0.0
        budget = int(case.get("budget_mib", DEFAULT_MEMORY_BUDGET / 2**20) * 2**20)
        return (
            lambda: ps_scores(row_fn, x, per_swap=False, max_skipped_weight=skip, memory_budget=budget)
        ), None
    total = BlockPairs(n, 1).n_swaps
    if case.get("sample"):
        k = case["sample"]
        swaps = [round(i * (total - 1) / (k - 1)) for i in range(k)]
        return (lambda: loop_scores(row_fn, x, swaps)), [k, total]
    return (lambda: loop_scores(row_fn, x)), None


def _subject(case: dict[str, Any]) -> tuple[Any, torch.Tensor, torch.device]:
    device = resolve_device(case["device"])
    subj = random_subject(N_INPUTS, case["n"], HEAD_DIM, 10000.0, D_MODEL, shared=3.0, seed=0, device=device)
    return subj.head, subj.inputs.to(device), device


def _timed(fn: Callable[[], Any], device: torch.device) -> tuple[Any, float, float]:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start, cpu = time.perf_counter(), time.process_time()
    result = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return result, time.perf_counter() - start, time.process_time() - cpu


def run_memory(case: dict[str, Any]) -> dict[str, Any]:
    """One run of one path in this (fresh) process: peak memory, time, swaps evaluated, scores."""
    head, x, device = _subject(case)
    fn, sampled = make_fn(case, head, x)
    out: dict[str, Any] = {"evaluated": None, "scores": None, "sampled": sampled}
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
    reset = _reset_peak()
    before = _rss_kib("VmRSS") or 0
    result, wall, cpu = _timed(fn, device)
    if device.type == "cuda":
        out["peak_mib"] = (torch.cuda.max_memory_allocated(device) - base) / 2**20
        out["peak_kind"] = "CUDA allocator"
    else:
        hwm = _rss_kib("VmHWM") if reset else None
        peak = hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out["peak_mib"] = (peak - before) / 1024
        out["peak_kind"] = "RSS (VmHWM)" if hwm is not None else "RSS (ru_maxrss, includes set-up)"
    scale = sampled[1] / sampled[0] if sampled else 1.0
    out["seconds"], out["cpu_seconds"], out["repeats"] = wall * scale, cpu * scale, 1
    total = N_INPUTS * BlockPairs(case["n"], 1).n_swaps
    if hasattr(result, "s_pos"):
        out["scores"] = [result.s_pos.tolist(), result.s_sym.tolist()]
        out["evaluated"] = int(result.n_evaluated.sum())
    else:
        out["scores"] = None if result is None else result.tolist()
        out["evaluated"] = total
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    out["device"] = f"{device} ({name}), torch {torch.__version__}, threads {torch.get_num_threads()}"
    return out


def run_timing(cases: list[dict[str, Any]], repeats: int) -> list[dict[str, float]]:
    """Median wall and CPU time of every path at one length, in rounds that interleave the paths
    (after one warm-up each), so a busy spell on a shared machine slows them alike."""
    head, x, device = _subject(cases[0])
    fns = [make_fn(case, head, x) for case in cases]
    for fn, _ in fns:
        fn()
    walls: list[list[float]] = [[] for _ in cases]
    cpus: list[list[float]] = [[] for _ in cases]
    for _ in range(repeats):
        for k, (fn, _) in enumerate(fns):
            _, wall, cpu = _timed(fn, device)
            walls[k].append(wall)
            cpus[k].append(cpu)
    out = []
    for (_, sampled), wall, cpu in zip(fns, walls, cpus, strict=True):
        scale = sampled[1] / sampled[0] if sampled else 1.0
        out.append(
            {"seconds": statistics.median(wall) * scale, "cpu_seconds": statistics.median(cpu) * scale}
        )
    return out


def cases_for(n: int, device: str) -> list[dict[str, Any]]:
    """The paths run at length ``n`` (every swap and the full-forward callable only where affordable)."""
    base = {"n": n, "device": device}
    out = [
        {**base, "path": "call", "fn": "last_row"},
        {**base, "path": "table"},
        {
            **base,
            "path": "loop",
            "fn": "last_row",
            "sample": LOOP_SAMPLE.get(n),
        },
    ]
    if n <= 17:
        out += [
            {**base, "path": "call", "fn": "forward"},
            {**base, "path": "call_every", "fn": "forward"},
            {**base, "path": "call_every", "fn": "last_row"},
            {**base, "path": "loop", "fn": "forward"},
        ]
        out += [  # the budget sweep: chunk size against speed, every swap evaluated
            {**base, "path": "call_every", "fn": "last_row", "budget_mib": mib} for mib in BUDGET_SWEEP_MIB
        ]
    return out


def _child(job: dict[str, Any]) -> Any:
    """Run ``job`` in a fresh interpreter and return its JSON answer (None on failure, reported)."""
    proc = subprocess.run(
        [sys.executable, __file__, "--one", json.dumps(job)],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ.copy(),
    )
    if proc.returncode != 0:
        print(f"child failed (exit {proc.returncode}): {proc.stderr}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
        job = json.loads(args.one)
        out = run_timing(job["cases"], job["repeats"]) if "cases" in job else run_memory(job)
        print(json.dumps(out))
        return 0
    lengths = [int(v) for v in args.lengths.split(",")]
    print(f"{N_INPUTS} inputs, random head (head_dim {HEAD_DIM}, base 10000, d_model {D_MODEL}), tau = 1e-4, "
          f"memory_budget = {DEFAULT_MEMORY_BUDGET // 2**20} MiB; peak memory: each path once in its own "
          "process; times: medians of interleaved rounds in one process (one run at n = 850)")  # fmt: skip
    for n in lengths:
        cases = cases_for(n, args.device)
        results = []
        for case in cases:
            out = _child(case)
            if out is None:
                return 1
            results.append((case, out))
        repeats = args.repeats if n <= 128 else 1
        if repeats > 1:
            timing = _child({"cases": cases, "repeats": repeats})
            if timing is None:
                return 1
            for (_, res), t in zip(results, timing, strict=True):
                res.update(t, repeats=repeats)
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
                f"  {label(case):53s} median {res['seconds']:10.3f} s (CPU {res['cpu_seconds']:9.3f} s) "
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

"""Benchmark: a compiled 12-layer multi-hop model's forward pass against its exported HF checkpoint.

Run ``python3 benchmarks/bench_multihop.py [--repeats 5] [--device auto] [--dtype float32]``. For the
number and letter checkpoints (12 layers, widths 6 and 8) and a batch of 64 inputs of 17 and of 850 tokens
([A]'s training length and the length [A] reports for the letter task), prints the median time of

- :class:`ropeproof.verify.kernel._multilayer.MultiLayerRopeModel` (every layer's logits, pattern and
  residual kept);
- the exported ``GPTJForCausalLM`` on the same token ids (eager attention, ``use_cache=False``; the
  baseline, measured in the same run);
- the last-position readout by the backward recursion
  (:func:`ropeproof.verify.kernel._chain_readout.last_readout`, float64);

with the ratio of each to HF's time and whether the answers agree. Uses CUDA when available.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from ropeproof.constructions._multihop_compile import CompiledModel, compile_program
from ropeproof.constructions._multihop_programs import checkpoint_program
from ropeproof.verify.interop.hf._model_export import export_model
from ropeproof.verify.kernel._chain_readout import last_readout
from ropeproof.verify.kernel._devices import resolve_device, resolve_dtype
from ropeproof.verify.kernel._multilayer import MultiLayerRopeModel, model_module
from ropeproof.verify.measure._task_lengths import long_task

BATCH = 64
LENGTHS = (17, 850)


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


def bench_one(
    model: CompiledModel,
    module: MultiLayerRopeModel,
    hf: Any,
    task: str,
    n: int,
    args: argparse.Namespace,
    device: torch.device,
) -> str:
    """One line: the module, HF and the backward readout on a batch of ``BATCH`` inputs of ``n`` tokens."""
    insts = long_task(task, BATCH, n, build="distractors", seed=n)
    seqs = [i.tokens for i in insts]
    ids = torch.as_tensor(model.ids(seqs), device=device)
    x = module.embed(seqs)

    def ours() -> torch.Tensor:
        with torch.no_grad():
            return module(x).readout[:, -1]

    def theirs() -> torch.Tensor:
        with torch.no_grad():
            return hf(input_ids=ids, use_cache=False).logits[:, -1]

    t_ours = median_seconds(ours, args.repeats, device)
    t_hf = median_seconds(theirs, args.repeats, device)
    t_back = median_seconds(lambda: last_readout(model, seqs, device), args.readout_repeats, device)
    agree = bool((ours().argmax(-1) == theirs()[:, :-1].argmax(-1)).all())
    answers = model.decode(ours().double().cpu().numpy())
    correct = sum(a == i.answer for a, i in zip(answers, insts, strict=True))
    return (
        f"{task:6s} n={n:4d}: module {t_ours * 1e3:9.1f} ms ({t_ours / t_hf:5.2f}x)  "
        f"HF GPT-J {t_hf * 1e3:9.1f} ms (1.00x)  backward readout {t_back * 1e3:9.1f} ms "
        f"({t_back / t_hf:5.2f}x)  answers agree: {agree}, module correct {correct}/{BATCH}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--readout-repeats", type=int, default=1, help="repeats of the float64 readout")
    args = parser.parse_args(argv)
    device, dtype = resolve_device(args.device), resolve_dtype(args.dtype)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"device: {device} ({name}), torch {torch.__version__}, threads {torch.get_num_threads()}, {dtype}")
    print(f"batch {BATCH}; medians over {args.repeats} repeats after a warm-up; ratios are time / HF time")
    for task in ("number", "letter"):
        model = compile_program(checkpoint_program(task))
        module = model_module(model, device, dtype)
        hf = export_model(model, "gptj", dtype=dtype, max_positions=max(LENGTHS)).model.to(device)
        for n in LENGTHS:
            print(bench_one(model, module, hf, task, n, args, device), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

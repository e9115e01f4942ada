"""Issue 46: the accuracy figure's rows (``c_accuracy``) against their minimal forward, one run.

    python3 benchmarks/bench_accuracy.py [--repeats 5] [--quick]

Three settings, interleaved (one run of each per round, in turn), CPU seconds of this process:

- ``rows``: :func:`~ropeproof.paper_figures._accuracy.accuracy_rows` as the figure computes it (sampling
  the inputs, compiling the heads, one projection per input set and dtype, every readout from the last
  query: :func:`~ropeproof.verify.kernel._compiled.answers`);
- ``per readout``: the same rows with one full ``n x n`` forward per readout
  (:func:`~ropeproof.verify.kernel._compiled.answer`, the path before issue 46);
- ``minimal``: the least torch work the rows read, in plain torch on inputs embedded beforehand (not
  timed): per head, length and dtype one ``x @ [W_Q | W_K | W_V]``, the rotation of the last query and of
  every key, one ``[1, n]`` row of logits, and per readout its argmax or ``softmax @ v @ W_O @ W_U``.

A fourth setting, ``compile``, compiles the two heads alone (sympy; the rows do it once). Prints the
medians, ``rows / minimal``, ``(rows - compile) / minimal`` (the forward work, target <= 1.3) and
``per readout / rows``, and whether the three
agree (the two library paths answer alike on every readout; the minimal forward's correct-counts equal
the rows' up to ties, which it reads as its argmax).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.paper_figures._accuracy import DTYPES, INPUTS, LENGTHS, SCALES, accuracy_rows
from ropeproof.verify.kernel._compiled import answer
from ropeproof.verify.kernel._threads import thread_policy
from ropeproof.verify.measure._statistics import proportion_interval
from ropeproof.verify.measure.exact._families import family_for, sample_family_inputs


def per_readout_rows(quick: bool) -> list[tuple]:
    """The rows' counts by one :func:`answer` call (a full forward) per readout."""
    lengths, count = LENGTHS[quick], INPUTS[quick]
    out = []
    for c in _constructions(quick):
        head, fam = compile_construction(c), family_for(c)
        for n in lengths:
            samples = sample_family_inputs(fam, n, count, seed=n)
            seqs, correct = [list(t) for t, _ in samples], [t[p] for t, p in samples]
            for dtype in DTYPES:
                for scale in SCALES:
                    mode = {"mode": "hard"} if scale is None else {"mode": "softmax", "softmax_scale": scale}
                    got = answer(head, seqs, dtype=dtype, device="cpu", **mode)
                    right = sum(a == b for a, b in zip(got, correct, strict=True))
                    out.append((n, dtype, scale, right, proportion_interval(right, count).low))
    return out


def _constructions(quick: bool) -> list:
    lengths = LENGTHS[quick]
    return [
        index_construction(0.8660, max_int=max(lengths) - 1, letters=8),
        retrieval_construction(8, 0.0027, max_int=2),
    ]


def minimal_setup(quick: bool) -> list[dict]:
    """Everything the minimal forward reads, prepared outside the timing."""
    cases = []
    for c in _constructions(quick):
        head, fam = compile_construction(c), family_for(c)
        assert head.spec.layout == "interleaved"
        theta = torch.as_tensor(head.spec.plane_freqs, dtype=torch.float64)
        for n in LENGTHS[quick]:
            samples = sample_family_inputs(fam, n, INPUTS[quick], seed=n)
            x = torch.as_tensor(head.embed([list(t) for t, _ in samples]))
            correct = torch.as_tensor([head.tokens.index(t[p]) for t, p in samples])
            ids = torch.as_tensor([[head.tokens.index(tok) for tok in t] for t, _ in samples])
            angles = torch.arange(n, dtype=torch.float64)[:, None] * theta
            values = torch.as_tensor(head.W_E @ head.W_V @ head.W_O @ head.W_U).argmax(-1)
            for dtype in DTYPES:
                dt = getattr(torch, dtype)
                cases.append(
                    {
                        "x": x.to(dt),
                        "w": torch.cat([torch.as_tensor(m) for m in (head.W_Q, head.W_K, head.W_V)], 1).to(
                            dt
                        ),
                        "ids": ids,
                        "w_o": torch.as_tensor(head.W_O).to(dt),
                        "w_u": torch.as_tensor(head.W_U).to(dt),
                        "cos": angles.cos().to(dt),
                        "sin": angles.sin().to(dt),
                        "h": head.spec.head_dim,
                        "scale": head.scale,
                        "correct": correct,
                        "values": values,
                    }
                )
    return cases


def _rotate(y: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    a, b = y[..., 0::2], y[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2)


def minimal(cases: list[dict]) -> list[int]:
    counts = []
    for c in cases:
        h, x = c["h"], c["x"]
        qkv = x @ c["w"]
        q = _rotate(qkv[:, -1, :h], c["cos"][-1], c["sin"][-1])
        k = _rotate(qkv[..., h : 2 * h], c["cos"], c["sin"])
        row = (q.unsqueeze(-2) @ k.transpose(-1, -2)).squeeze(-2)
        v = qkv[..., 2 * h :]
        for scale in SCALES:
            if scale is None:
                got = c["values"][torch.gather(c["ids"], 1, row.argmax(-1, keepdim=True))[:, 0]]
            else:
                p = torch.softmax(row * (c["scale"] * scale), -1)
                got = ((p.unsqueeze(-2) @ v) @ c["w_o"] @ c["w_u"])[:, 0].argmax(-1)
            counts.append(int((got == c["correct"]).sum()))
    return counts


def cpu_time(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the quick grid (lengths up to 128)")
    args = parser.parse_args()
    quick = args.quick
    print(f"# c_accuracy rows vs their minimal forward ({'quick' if quick else 'full'} grid)")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}")
    with thread_policy(None):
        cases = minimal_setup(quick)
        rows = accuracy_rows(quick)
        old = per_readout_rows(quick)
        assert [(r["n"], r["dtype"], r["correct"]) for r in rows] == [(n, d, k) for n, d, _, k, _ in old]
        print(f"{len(rows)} readouts; both library paths give the same correct-counts on every one")
        counts = minimal(cases)
        agree = sum(a == r["correct"] for a, r in zip(counts, rows, strict=True))
        print(f"minimal forward's correct-counts equal the rows' on {agree} of {len(rows)} readouts")
        settings = {
            "rows": lambda: accuracy_rows(quick),
            "per readout": lambda: per_readout_rows(quick),
            "minimal": lambda: minimal(cases),
            "compile": lambda: [compile_construction(c) for c in _constructions(quick)],
        }
        times: dict[str, list[float]] = {name: [] for name in settings}
        for _ in range(args.repeats):
            for name, fn in settings.items():
                times[name].append(cpu_time(fn))
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"\n{args.repeats} interleaved rounds, CPU seconds of this process (median; runs)")
    for name, t in times.items():
        print(f"  {name:12s} {med[name]:.3f} s  ({', '.join(f'{s:.3f}' for s in t)})")
    forward = med["rows"] - med["compile"]
    print(f"rows / minimal: {med['rows'] / med['minimal']:.2f}x")
    print(
        f"rows less the heads' compile (sympy, {med['compile']:.3f} s) / minimal: "
        f"{forward / med['minimal']:.2f}x (target <= 1.3)"
    )
    print(f"per readout / rows: {med['per readout'] / med['rows']:.2f}x")


if __name__ == "__main__":
    main()

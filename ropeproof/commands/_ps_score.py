"""``ropeproof ps-score``: place a head on the positional-symbolic plane.

``ropeproof ps-score index|retrieval|random [options] [--json]`` scores the compiled T_Index,
T_Retrieval or a random RoPE head on task-shaped (or random) inputs with [A]'s practical score, and
reports the exclusion principle on the same inputs: exactly over all ``(n-1)!`` key permutations
when ``--length <= 8``, otherwise estimated from ``--exclusion-samples`` random permutations.
``--per-frequency`` adds the per-plane profile.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import TYPE_CHECKING, Any

from ropeproof.commands import _head_dir as head_dir
from ropeproof.commands._arguments import (
    add_command,
    add_device,
    add_dtype,
    add_json,
    finite_float,
    int_in,
    nonnegative_float,
    positive_float,
)
from ropeproof.commands._choices import INDEX_THETA, MAX_EXACT_N, TASK_LENGTH
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.kernel._devices import resolve_dtype

if TYPE_CHECKING:
    from ropeproof.verify.measure._subjects import Subject


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "ps-score",
        example="ropeproof ps-score index --n-inputs 20 --length 8 --per-frequency --json",
    )
    p.add_argument(
        "head",
        nargs="?",
        choices=("index", "retrieval", "random"),
        help="which head to score: compiled T_Index or T_Retrieval on task inputs, or a random RoPE head "
        "(or give --head DIR instead)",
    )
    head_dir.add_head_option(p)
    p.add_argument("--n-inputs", type=int_in(1), default=100, help="number of inputs")
    p.add_argument(
        "--length",
        type=int_in(3),
        default=TASK_LENGTH,
        help=f"tokens per input with the query (index, retrieval: the last LENGTH <= {TASK_LENGTH})",
    )
    p.add_argument(
        "--theta",
        type=finite_float,
        default=None,
        help=f"RoPE angle (default: index {INDEX_THETA}, retrieval 0.0)",
    )
    p.add_argument("--tau", type=positive_float, default=1e-4, help="softmax temperature of the swap weights")
    p.add_argument("--block-size", type=int_in(1), default=1, help="swap blocks of this many positions ([B])")
    p.add_argument("--seed", type=int_in(0), default=0, help="seed of the inputs (and of a random head)")
    p.add_argument("--head-dim", type=int_in(2, even=True), default=64, help="random head: head_dim")
    p.add_argument("--base", type=positive_float, default=10000.0, help="random head: RoPE base")
    p.add_argument("--d-model", type=int_in(1), default=64, help="random head: d_model")
    p.add_argument(
        "--shared",
        type=nonnegative_float,
        default=0.0,
        help="random inputs: weight of a component shared by all tokens",
    )
    p.add_argument("--per-frequency", action="store_true", help="also score every RoPE plane on its own")
    p.add_argument(
        "--exclusion-samples",
        type=int_in(1),
        default=1000,
        help=f"random permutations for the exclusion estimate when length > {MAX_EXACT_N}",
    )
    add_device(p)
    add_dtype(p, "dtype of the head and its inputs")
    add_json(p, "the scores")
    p.set_defaults(run=run)


def _subject(args: argparse.Namespace) -> Subject:
    from ropeproof.verify.measure._subjects import Subject, index_subject, random_subject, retrieval_subject
    from ropeproof.verify.measure.ps._head_subject import head_subject

    device, dtype = args.device, resolve_dtype(args.dtype)
    if (args.head is None) == (args.head_dir is None):
        raise InputError("give one head: index, retrieval, random, or --head DIR")
    if args.head_dir is not None:
        head = head_dir.read_head(args.head_dir)
        return head_subject(head, args.n_inputs, args.length, args.seed, device, dtype)
    if args.head == "random":
        return random_subject(
            args.n_inputs, args.length, args.head_dim, args.base, args.d_model,
            shared=args.shared, seed=args.seed, device=device, dtype=dtype,
        )  # fmt: skip
    integer(args.length, "--length", low=3, high=TASK_LENGTH, note=f"the {args.head} head's task length")
    if args.head == "index":
        theta = INDEX_THETA if args.theta is None else args.theta
        subj = index_subject(args.n_inputs, theta, args.seed, device, dtype)
    else:
        theta = 0.0 if args.theta is None else args.theta
        subj = retrieval_subject(args.n_inputs, theta, args.seed, device, dtype)
    return Subject(subj.name, subj.head, subj.inputs[:, -args.length :, :], subj.source)


def _finite(value: Any) -> Any:
    """``value`` with non-finite floats replaced by their names (``"nan"``), so JSON stays valid."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _fmt(v: float) -> str:
    return f"{v:.6g}" if math.isfinite(v) else str(v)


def _check_work(args: argparse.Namespace) -> None:
    """Refuse, before any input is built, scores whose swapped rows pass the limit ``ps-score work``:
    inputs x swaps per input (``K (K - 1) / 2`` for ``K = (length - 1) // block_size`` blocks) x length."""
    from ropeproof.machinery._size_limits import check_size

    blocks = (int(args.length) - 1) // int(args.block_size)
    work = int(args.n_inputs) * (blocks * (blocks - 1) // 2) * int(args.length)
    what = f"ps-score on {args.n_inputs} inputs of length {args.length} (block size {args.block_size})"
    check_size(what, work, "ps-score work")


def run(args: argparse.Namespace) -> int:
    from ropeproof.verify.measure.ps._exact import exact_exclusion, sampled_exclusion
    from ropeproof.verify.measure.ps._per_frequency import per_frequency_scores
    from ropeproof.verify.measure.ps._scores import ps_scores

    _check_work(args)
    subj = _subject(args)
    start = time.perf_counter()
    sc = ps_scores(subj.head, subj.inputs, tau=args.tau, block_size=args.block_size)
    seconds = time.perf_counter() - start
    n = int(subj.inputs.shape[1])
    if n <= MAX_EXACT_N:
        ex = exact_exclusion(subj.head, subj.inputs)
    else:
        ex = sampled_exclusion(subj.head, subj.inputs, n_samples=args.exclusion_samples, seed=args.seed)
    exclusion: dict[str, Any] = {
        "exact": ex.exact,
        "n_permutations": ex.n_permutations,
        "holds_on_all_inputs": ex.all_hold,
        "max_tightness": ex.max_tightness,
        "mean_variance": float(ex.variance.mean()),
        "mean_bound": float(ex.bound.mean()),
        "mean_msd_pos": float(ex.msd_pos.mean()),
        "mean_msd_sym": float(ex.msd_sym.mean()),
    }
    out: dict[str, Any] = {
        "head": subj.name,
        "source": subj.source,
        "device": str(subj.head.device),
        "dtype": str(subj.head.dtype).removeprefix("torch."),
        "scores": sc.to_dict(per_input=args.json),
        "score_seconds": seconds,
        "exclusion": exclusion,
    }
    if args.per_frequency:
        prof = per_frequency_scores(subj.head, subj.inputs, tau=args.tau, block_size=args.block_size)
        out["per_frequency"] = prof.to_dict()
    if args.json:
        print(json.dumps(_finite(out)))
        return 0
    print(f"{subj.name} [{subj.source}] on {sc.s_pos.shape[0]} inputs of {n} tokens ({out['device']}, "
          f"{out['dtype']})")  # fmt: skip
    for name, agg, per in (("S_pos", sc.S_pos, sc.s_pos), ("S_sym", sc.S_sym, sc.s_sym)):
        print(f"  {name} = {_fmt(agg)}  (per input {_fmt(float(per.min()))} .. {_fmt(float(per.max()))})")
    print(f"  {sc.n_swaps} swaps per input, tau = {sc.tau:g}, block_size = {sc.block_size}; {seconds:.3f} s")
    kind = "exact, all" if ex.exact else "sampled,"
    print(
        f"  exclusion principle ({kind} {ex.n_permutations} permutations): "
        f"{'holds' if ex.all_hold else 'VIOLATED'} on every input; max Var/bound = {_fmt(ex.max_tightness)}"
    )
    if args.per_frequency:
        print("  per plane: theta_k  S_pos  S_sym")
        for f, p_, s_ in zip(prof.freqs.tolist(), prof.S_pos.tolist(), prof.S_sym.tolist(), strict=True):
            print(f"    {f:10.4g}  {p_:.4f}  {s_:.4f}")
    return 0

"""``ropeproof sweep index|retrieval ...``: exact discrepancy vs length with Theorem 3.2's bound, a verdict
per row, streamed to stdout or a file; ``ropeproof sweep certified-index ...``: the interval-certified
Index check, in shards of offsets; ``ropeproof sweep merge PART ...`` joins shard files of either kind."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ropeproof.commands import _head_dir as head_dir
from ropeproof.commands._arguments import add_command, add_device, add_dtype, finite_float, int_in
from ropeproof.commands._choices import DEFAULT_SHARD_ROOT, EXECUTORS, INDEX_TERMS
from ropeproof.machinery._errors import InputError, RopeproofError
from ropeproof.machinery._input_files import check_regular_file, read_text
from ropeproof.machinery._size_limits import limit
from ropeproof.machinery._values import LIMITS, AlphabetSize, Angle, Lengths
from ropeproof.verify.kernel._devices import dtype_name, resolve_device, resolve_dtype

if TYPE_CHECKING:
    from ropeproof.verify.sweep_runs._certified_shards import GapRecords

EXAMPLE = """example:
  ropeproof sweep index --theta 0.000001 --lengths 2:600 --json

more examples:
  ropeproof sweep retrieval --alphabet-size 8 --theta 0.0027 --lengths 2:1000000 --jsonl --out r.jsonl
  ropeproof sweep index --theta 0.866 --lengths 2:10000000 --shard 3/8 --jsonl --out part3.jsonl
  ropeproof sweep merge part*.jsonl --out all.jsonl
  ropeproof sweep certified-index --theta 0.866 --lengths 2:100000 --shard 2/16 --out rec2.json
  ropeproof sweep merge rec*.json        # merged records -> certified verdict per reading (JSON)
  ropeproof sweep certified-index --theta 0.866 --lengths 2:10000000 --executor dask --workers 2 --out v.json
  ropeproof sweep index --theta 0.866 --lengths 2:10000000 --jsonl --executor dask --scheduler tcp://host:8786"""


def lengths_text(text: str) -> Lengths:
    """``--lengths A:B[:STEP]``, parsed once here (:meth:`~ropeproof.machinery._values.Lengths.parse`);
    everything after takes the :class:`~ropeproof.machinery._values.Lengths` as it is."""
    try:
        return Lengths.parse(text)
    except RopeproofError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def angle(text: str) -> Angle:
    """``--theta``: a finite real angle, parsed once here (``LIMITS["theta"]``)."""
    return Angle(finite_float(text))


def alphabet_size(text: str) -> AlphabetSize:
    """``--alphabet-size``: ``|ALPH|`` in ``LIMITS["alphabet_size"]``'s range, parsed once here."""
    lim = LIMITS["alphabet_size"]
    return AlphabetSize(int_in(int(lim.low), int(lim.high))(text))  # type: ignore[arg-type]


alphabet_size.accepted = (2, int(LIMITS["alphabet_size"].high), False)  # type: ignore[attr-defined, arg-type]


def shard_text(text: str) -> str:
    """``--shard k/N`` checked when parsed (:func:`parse_shard`); kept as text."""
    from ropeproof.verify.sweep_runs._sweep_files import parse_shard

    try:
        parse_shard(text)
    except RopeproofError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "sweep",
        example="ropeproof sweep index --theta 0.000001 --lengths 2:600 --json",
    )
    p.epilog = EXAMPLE
    p.add_argument(
        "construction",
        nargs="?",
        choices=["index", "retrieval", "certified-index", "merge"],
        help="what to sweep; 'certified-index' for the interval-certified Index check (shardable); "
        "'merge' to join the shard files given as PARTS; or give --head DIR instead",
    )
    p.add_argument(
        "parts",
        nargs="*",
        metavar="PART",
        help="shard files to merge (sweep JSON Lines or certified records)",
    )
    head_dir.add_head_option(p)
    head_dir.add_family_option(p)
    p.add_argument("--theta", type=angle, help="RoPE angle of the plane (index, retrieval)")
    p.add_argument(
        "--alphabet-size",
        "--alphabet",
        dest="alphabet_size",
        type=alphabet_size,
        default=8,
        help="|ALPH| (retrieval; the alphabet_size of sweep_retrieval and retrieval_construction)",
    )
    p.add_argument(
        "--lengths",
        type=lengths_text,
        default="2:100",
        metavar="A:B[:STEP]",
        help="lengths n, 2 <= A <= B: A, A + STEP, ... and B itself",
    )
    p.add_argument(
        "--shard",
        type=shard_text,
        metavar="k/N",
        help="only the k-th of N contiguous slices of the lengths (1 <= k <= N)",
    )
    add_dtype(p, "dtype of the measured logits (float64: exact only)")
    add_device(p, resolve=False)  # resolved where a dtype other than float64 measures logits
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object with a 'rows' list and a 'summary'")
    fmt.add_argument("--jsonl", action="store_true", help="JSON Lines: a header, one line per row, a summary")
    p.add_argument(
        "--out",
        help="write to this file (atomically) instead of stdout; it must not exist unless --force "
        "(a symbolic link, FIFO or device node is never written through or replaced)",
    )
    p.add_argument("--force", action="store_true", help="replace --out if it is an existing regular file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument(
        "--prec",
        type=int_in(24, 4096),
        default=80,
        help="interval precision in bits (certified-index; --head --bound --certified: at least 53)",
    )
    p.add_argument(
        "--term", default=None, choices=INDEX_TERMS, help="certified-index, merge: bound term (default min)"
    )
    d = p.add_argument_group("running the shards on Dask (index, retrieval with --jsonl; certified-index)")
    d.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local: one process; dask: every shard a Dask task, merged here into the same bytes",
    )
    d.add_argument(
        "--workers", type=int_in(1), help="dask: worker processes of the local cluster (default: the cores)"
    )
    d.add_argument(
        "--scheduler", metavar="ADDRESS", help="dask: use the cluster at ADDRESS (tcp://host:port)"
    )
    d.add_argument("--shards", type=int_in(1), help="dask: how many shards (default: by size, >= workers)")
    d.add_argument(
        "--retries", type=int_in(0), default=2, help="dask: retries of a failed shard (Dask's own)"
    )
    d.add_argument(
        "--shard-dir",
        metavar="DIR",
        help=f"dask: where finished shards wait for the merge or a rerun (default {DEFAULT_SHARD_ROOT}/)",
    )
    p.set_defaults(run=run)


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """The library's warnings (e.g. that a local Dask cluster will not pay) as one line each on stderr,
    ``ropeproof sweep: warning: MESSAGE``."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")

        def show(message: Warning | str, *_: object, **__: object) -> None:
            print(f"ropeproof sweep: warning: {message}", file=sys.stderr)

        warnings.showwarning = show
        yield


def _fail(message: str) -> int:
    print(f"ropeproof sweep: error: {message}", file=sys.stderr)
    return 2


RECORDS_LIMIT = limit("gap-records file bytes")
"""The most bytes read from one gap-records shard file."""


def _is_records(path: str) -> bool:
    from ropeproof.verify.sweep_runs._certified_shards import FORMAT as RECORDS_FORMAT

    check_regular_file(path, "merge")  # a FIFO or /dev/zero is refused, never read
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f'"format": "{RECORDS_FORMAT}"' in f.read(200)
    except OSError as e:
        raise InputError(f"cannot read {path!r}: {e.strerror}") from None


def _read_records(path: str) -> GapRecords:
    from ropeproof.verify.sweep_runs._certified_shards import GapRecords

    text = read_text(path, RECORDS_LIMIT, "merge")
    try:
        return GapRecords.from_json(text)
    except RopeproofError as e:
        raise InputError(f"{path!r}: {e}") from None
    except (ValueError, KeyError, TypeError, RecursionError) as e:
        raise InputError(f"{path!r} is not a complete gap-records file ({type(e).__name__})") from None


def _certified(args: argparse.Namespace) -> int:
    """One shard's records (``--shard``), or the whole check judged (no ``--shard``)."""
    from ropeproof.verify.sweep_runs._certified_shards import (
        enclose_gap_records,
        judge_records,
        offsets_for,
    )
    from ropeproof.verify.sweep_runs._shard_runner import run_certified_index
    from ropeproof.verify.sweep_runs._sweep_files import atomic_output, parse_shard

    if args.theta is None:
        return _fail("--theta is required")
    start, stop, step = args.lengths
    if start != 2 or step != 1:
        return _fail(f"certified-index checks every n = 2..B; give --lengths 2:B (got {args.lengths})")
    shard = parse_shard(args.shard) if args.shard else None
    if args.executor == "dask":
        with atomic_output(args.out, sys.stdout, args.force) as out:
            with _warnings_as_lines():
                result = run_certified_index(args.theta, stop, args.term, args.prec, **_dask_options(args))
            out.write(json.dumps(result.to_dict()) + "\n")
        return 0
    first, last = offsets_for(stop, shard)
    with atomic_output(args.out, sys.stdout, args.force) as out:
        records = enclose_gap_records([args.theta], None, first, last, args.prec, m_last=stop - 1)
        if shard is not None:
            out.write(records.to_json() + "\n")
        else:
            out.write(json.dumps(judge_records(records, stop, args.term).to_dict()) + "\n")
    return 0


def _check_workers(workers: int | None) -> None:
    """Refuse more local Dask workers than the cores, or than the memory limit holds at the limit
    ``dask worker bytes`` each (:mod:`ropeproof.machinery._size_limits`): each is a process of its own."""
    import os

    from ropeproof.machinery._memory_budget import format_bytes, memory_limit
    from ropeproof.machinery._size_limits import limit

    if workers is None:
        return
    cores = os.cpu_count() or 1
    if workers > cores:
        raise InputError(f"--workers {workers}: this machine has {cores} cores; accepted: 1 .. {cores}")
    each = limit("dask worker bytes")
    fits = max(1, memory_limit() // each)
    if workers > fits:
        raise InputError(
            f"--workers {workers} needs about {format_bytes(workers * each)} ({format_bytes(each)} a "
            f"worker); the memory limit {format_bytes(memory_limit())} holds {fits}"
        )


def _dask_options(args: argparse.Namespace) -> dict[str, object]:
    if args.scheduler is None:
        _check_workers(args.workers)
    return {
        "executor": "dask",
        "workers": args.workers,
        "scheduler": args.scheduler,
        "shards": args.shards,
        "retries": args.retries,
        "shard_root": args.shard_dir,
        "progress": not args.no_progress and sys.stderr.isatty(),
    }


def _executor_conflict(args: argparse.Namespace) -> str | None:
    """Why the Dask options do not fit the rest of the command line, or ``None``."""
    dask = args.executor == "dask"
    options = {"--workers": args.workers, "--scheduler": args.scheduler, "--shards": args.shards}
    given = [o for o, v in {**options, "--shard-dir": args.shard_dir}.items() if v is not None]
    if given and not dask:
        return f"{', '.join(given)} only apply with --executor dask"
    if not dask:
        return None
    if args.head_dir is not None or args.construction == "merge":
        return "--executor dask runs 'index', 'retrieval' or 'certified-index'"
    if args.shard:
        return "--shard picks one shard by hand; --executor dask runs them all (use --shards N for how many)"
    if args.workers is not None and args.scheduler is not None:
        return "give --workers (a local cluster) or --scheduler (an existing one), not both"
    if args.construction != "certified-index" and not args.jsonl:
        return "--executor dask writes JSON Lines: add --jsonl"
    return None


def run(args: argparse.Namespace) -> int:
    from ropeproof.verify.measure.exact._sweep import iter_index_sweep, iter_retrieval_sweep
    from ropeproof.verify.sweep_runs._sweep_files import (
        SweepHeader,
        atomic_output,
        is_selected,
        merge_jsonl,
        parse_shard,
        shard_lengths,
        table_header,
        text_table_text,
        write_rows,
    )

    if (args.head_dir is None) == (args.construction is None):
        return _fail("give a construction (index, retrieval, certified-index, merge) or --head DIR")
    conflict = _executor_conflict(args) or head_dir.option_conflict(args)
    if conflict is not None:
        return _fail(conflict)
    if args.term is None:
        args.term = "min"
    if args.head_dir is not None:
        with atomic_output(args.out, sys.stdout, args.force) as out, contextlib.redirect_stdout(out):
            return head_dir.run_sweep(args)
    if args.construction == "merge":
        if not args.parts:
            return _fail("merge needs the shard files as arguments")
        if _is_records(args.parts[0]):
            from ropeproof.verify.sweep_runs._certified_shards import judge_records, merge_gap_records

            merged = merge_gap_records([_read_records(p) for p in args.parts])
            result = judge_records(merged, merged.m_stop + 1, args.term)
            with atomic_output(args.out, sys.stdout, args.force) as out:
                out.write(json.dumps(result.to_dict()) + "\n")
            return 0
        with atomic_output(args.out, sys.stdout, args.force) as out:
            merge_jsonl(args.parts, out)
        return 0
    if args.construction == "certified-index":
        return _certified(args)
    if args.parts:
        return _fail(f"unexpected arguments {args.parts} (only 'merge' takes files)")
    if args.theta is None:
        return _fail("--theta is required")
    start, stop, step = args.lengths
    if args.executor == "dask":
        from ropeproof.verify.sweep_runs._shard_runner import SweepSpec, run_sweep

        spec = SweepSpec(
            args.construction, args.theta, (start, stop, step), args.alphabet_size, dtype_name(args.dtype)
        )
        with atomic_output(args.out, sys.stdout, args.force) as out, _warnings_as_lines():
            run_sweep(spec, out, **_dask_options(args))
        return 0
    shard = parse_shard(args.shard) if args.shard else None
    first, last = shard_lengths(start, stop, step, shard)
    exact = args.dtype == "float64"  # numpy alone: no torch dtype or device is needed
    dt = args.dtype if exact else resolve_dtype(args.dtype)
    device = args.device if exact else resolve_device(args.device)
    if args.construction == "index":
        blocks = iter_index_sweep(args.theta, first, last, dt, device)
        params = {"theta": args.theta}
        bound = "Delta_Index(n) <= min(1 - cos(theta), pi^2/(2 n^2))"
    else:
        blocks = iter_retrieval_sweep(args.alphabet_size, args.theta, first, last, dt, device)
        params = {
            "alphabet_size": args.alphabet_size,
            "theta": args.theta,
            "omega": 2 * math.pi / args.alphabet_size,
        }
        bound = "Delta_Retrieval(n) <= 1 - cos(omega - n theta)"
    header = SweepHeader(
        args.construction, params, dtype_name(dt), bound, (start, stop, step), shard, first, last
    )
    progress = None
    if not args.no_progress and last - first >= 200_000:
        from tqdm import tqdm

        progress = tqdm(total=last - first + 1, unit="row", file=sys.stderr, disable=None, leave=False)
    try:
        with atomic_output(args.out, sys.stdout, args.force) as out:
            if args.json or args.jsonl:
                write_rows(out, header, blocks, True, "json" if args.json else "jsonl", progress)
            else:
                measured = not exact
                note = f"; measured_* from logits in {header.dtype}" if measured else ""
                out.write(f"# {args.construction} {params}, exact float64 extremes{note}; bound: {bound}\n")
                out.write(table_header(True, measured) + "\n")
                for block in blocks:
                    sel = block.select(is_selected(block.columns["n"], start, stop, step))
                    if sel.columns["n"].size:
                        out.write(text_table_text(sel, True, measured))
                    if progress is not None:
                        progress.update(int(block.columns["n"].size))
    finally:
        if progress is not None:
            progress.close()
    return 0

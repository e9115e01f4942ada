"""``--head DIR`` for ``ropeproof sweep`` and ``ropeproof ps-score``: any head directory that
``ropeproof compile``, ``ropeproof import`` or ``CompiledHead.save`` wrote (not a subcommand).

``sweep --head DIR`` sweeps the head over the input family it records (``head.json``'s ``"family"``);
``--family FILE`` gives one to a head that records none (a JSON file written by ``Family.save``, or
``tokens`` for every token sequence, said as such). Without either, a head with no family is swept
over every token sequence and the output says so.

``--bound EXPR [--reading R] [--relation <=|>=] [--certified]`` judges a bound you state at every
length of ``--lengths`` (:func:`~ropeproof.verify.measure.exact._stated_bound.check_bound`), printing
every ``STEP``-th row and a summary with the first violation and its witness. ``--plot FILE`` draws
what was swept (:func:`~ropeproof.paper_figures._sweeps.plot_sweeps`) beside the printed output.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ropeproof.machinery._atomic_output import check_output_file
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._bound_options import OFFSET_READINGS, READINGS, RELATIONS

if TYPE_CHECKING:  # the modules of a head sweep, its bound and its plot are imported when they run
    from ropeproof.constructions._head import CompiledHead
    from ropeproof.theory._family import Family
    from ropeproof.verify.measure.exact._head_sweep import HeadSweep


def add_head_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--head",
        dest="head_dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="a head directory (head.json + weights.safetensors) instead of a built-in construction",
    )


def add_family_option(p: argparse.ArgumentParser) -> None:
    """``--family`` and the options of a bound stated on a head (``--bound``, ``--reading``,
    ``--relation``, ``--certified``)."""
    g = p.add_argument_group("a head directory (--head DIR): its family and a bound you state")
    g.add_argument(
        "--family",
        metavar="FILE|tokens",
        default=None,
        help="the input family of a head that records none: a JSON file written by Family.save, or "
        "'tokens' for every token sequence (a head that records its family uses it)",
    )
    g.add_argument(
        "--bound",
        metavar="EXPR",
        default=None,
        help="judge READING(n) RELATION EXPR at every length of --lengths: EXPR in n, parsed by sympy "
        "(numbers, n, the head's parameters such as theta, pi, E, sqrt, sin, cos, exp, log, min, max, "
        "floor, ...; ^ is a power), e.g. 'pi^2/(2*n^2)'",
    )
    g.add_argument(
        "--reading",
        choices=READINGS,
        default=None,
        help="with --bound: which exact extreme the bound is on (default margin_inf); logit_inf / "
        "logit_sup (the least / greatest logit over the family's query-key pairs m apart) read rows by "
        "offset m (--offsets; the bound in m), and without --bound print those rows",
    )
    g.add_argument(
        "--offsets",
        metavar="A:B[:STEP]",
        default=None,
        help="with a logit reading: the offsets m, 0 <= A <= B (default 0:B-1 of --lengths A:B: every "
        "offset an input of length <= B reaches); every offset judged, every STEP-th printed and B",
    )
    g.add_argument(
        "--relation",
        choices=RELATIONS,
        default=None,
        help="with --bound: '<=' (an upper bound, the default), '>=' (a guarantee), or strictly '<', '>' "
        "(a row equal to the bound violates them)",
    )
    g.add_argument(
        "--plot",
        metavar="FILE",
        type=Path,
        default=None,
        help="also draw the sweep (with --bound: the reading against the bound, violated rows marked) to "
        "FILE.png and/or FILE.pdf (by FILE's suffix; none: both), with FILE.csv and FILE.caption.txt; "
        "existing files only with --force",
    )
    g.add_argument(
        "--max-refine",
        type=int,
        default=None,
        metavar="K",
        help="with --bound: Arb re-enclosures per check (default 256); rows it leaves open are undecided",
    )
    g.add_argument(
        "--max-identities",
        type=int,
        default=None,
        metavar="K",
        help="with --bound: sympy identities per check (default 16); rows it leaves open are undecided",
    )
    g.add_argument(
        "--certified",
        action="store_true",
        help=(
            "with --bound: enclose every row by interval arithmetic: each plane's cos and sin in Arb at "
            "--prec bits (at least 53), the sums over the family's inputs in float64 intervals rounded "
            "outward (so --prec does not narrow a row below float64's resolution); rows touching the bound "
            "are re-enclosed input by input in Arb and decided by identity where the subject is a "
            "construction"
        ),
    )


HEAD_OPTIONS = (
    "family",
    "bound",
    "reading",
    "offsets",
    "relation",
    "max_refine",
    "max_identities",
    "certified",
    "plot",
)
"""Options of ``sweep`` that apply only with ``--head`` (their ``argparse`` destinations)."""
NOT_FOR_HEADS = ("theta", "shard", "jsonl", "term")
"""Options of ``sweep`` that a head directory does not take (refused with ``--head``)."""


def option_conflict(args: argparse.Namespace) -> str | None:
    """Why a ``--head``-only option was given without ``--head`` (or a bound's option without
    ``--bound``), or ``None``."""
    given = [
        f"--{dest.replace('_', '-')}"
        for dest in HEAD_OPTIONS
        if getattr(args, dest, None) not in (None, False)
    ]
    if args.head_dir is None:
        return f"{', '.join(given)} only apply with --head DIR" if given else None
    if getattr(args, "offsets", None) is not None and getattr(args, "reading", None) not in OFFSET_READINGS:
        return f"--offsets only applies with --reading {' or '.join(OFFSET_READINGS)}"
    # the options of the built-in sweeps mean nothing for a head: refused, never ignored
    foreign = [f"--{dest}" for dest in NOT_FOR_HEADS if getattr(args, dest, None) not in (None, False)]
    if foreign:
        return (
            f"{', '.join(foreign)}: not an option of a head sweep (--head DIR); it applies to the built-in "
            "index, retrieval and certified-index sweeps"
        )
    if getattr(args, "bound", None) is None:
        loose = [g for g in given if g in ("--relation", "--max-refine", "--max-identities", "--certified")]
        if getattr(args, "reading", None) not in (None, *OFFSET_READINGS):
            loose.insert(0, "--reading")
        if loose:
            return f"{', '.join(loose)} only apply with --bound EXPR"
    elif _dtype_name(args.dtype) != "float64":
        return "--bound judges the exact float64 sweep; --dtype applies only without --bound"
    elif getattr(args, "certified", False) and args.prec < 53:
        return f"--prec={args.prec} is too low for --certified; accepted: an integer in [53, 4096]"
    return None


def _dtype_name(dtype: object) -> str:
    from ropeproof.verify.kernel._devices import dtype_name, resolve_dtype

    return dtype_name(resolve_dtype(dtype))


def read_head(path: Path) -> CompiledHead:
    """The head in ``path`` (errors are :class:`~ropeproof.machinery._errors.InputError` naming the file)."""
    from ropeproof.constructions._head import load_head

    return load_head(path)


def chosen_family(head: CompiledHead, option: str | None) -> Family | None:
    """The family ``--family`` gives (``None``: not given). Refused for a head that records one."""
    from ropeproof.theory._family import Family, token_family

    if option is None:
        return None
    if head.family is not None:
        raise InputError(
            f"--family: head {head.name!r} records its family {head.family.name!r}; --family applies only "
            "to a head that records none"
        )
    if option == "tokens":
        return token_family(head.tokens)
    return Family.load(option)


def family_note(table: HeadSweep) -> str:
    """One line on what was swept: the family and its source, or the all-sequences warning."""
    from ropeproof.verify.measure.exact._head_sweep import NO_FAMILY

    if table.family_source == "all-sequences" or table.family.name == "tokens":
        return (
            NO_FAMILY if table.family_source == "all-sequences" else "every token sequence (--family tokens)"
        )
    source = {
        "given": "given by --family",
        "recorded": "recorded by the head",
        "rebuilt": "rebuilt from the head's construction arguments",
    }[table.family_source]
    fam = table.family
    return f"family {fam.name!r} ({source}): {fam.description}; margin_inf: worst target margin"


def sweep_summary(table: HeadSweep) -> dict[str, Any]:
    """The ``summary`` of ``sweep --head --json``: the family and its source, the lengths, the first
    length whose worst margin is not positive (``None``: none), and the extremes over the rows."""
    import numpy as np

    n = table.columns["n"]
    margin = table.columns["margin_inf"]
    bad = n[~(margin > 0) & ~np.isnan(margin)]

    def extreme(q: str, fn: Any) -> float | None:
        v = table.columns[q]
        v = v[~np.isnan(v)]
        return float(fn(v)) if v.size else None

    return {
        "family": table.family.name,
        "family_source": table.family_source,
        "all_sequences": table.family_source == "all-sequences" or table.family.name == "tokens",
        "lengths": [int(n[0]), int(n[-1])] if n.size else None,
        "rows": int(n.size),
        "first_nonpositive_margin_n": int(bad[0]) if bad.size else None,
        "min_margin_inf": extreme("margin_inf", np.min),
        "max_gap_sup": extreme("gap_sup", np.max),
        "min_gap_inf": extreme("gap_inf", np.min),
        "note": family_note(table),
    }


def run_bound(args: argparse.Namespace, head: CompiledHead, family: Family | None) -> int:
    """``sweep --head DIR --bound EXPR``: every length of ``--lengths`` judged, every ``STEP``-th row
    printed; the summary names the first violation and its witness."""
    from ropeproof.verify.measure._display import format_cell
    from ropeproof.verify.measure.exact._stated_bound import check_bound

    start, stop, step = args.lengths
    if args.reading in OFFSET_READINGS:
        start, stop, step = parse_offsets(args.offsets, stop)
    check = check_bound(
        head,
        args.bound,
        [start, stop],
        reading=args.reading or "margin_inf",
        relation=args.relation or "<=",
        family=family,
        certified=args.certified,
        prec=max(args.prec, 53),
        **{k: getattr(args, k) for k in ("max_refine", "max_identities") if getattr(args, k) is not None},
    )
    rows = check.rows(step)
    if args.plot is not None:
        write_plot(args, check, check.reading)
    if args.json:
        out = {"head": head.name, "family": check.family.name, "rows": rows, "summary": check.summary()}
        print(json.dumps(out))
        return 0
    print(f"# {check.title()}")
    for note in check.notes:
        print(f"# {note}")
    cols = list(rows[0]) if rows else []
    print("  ".join(f"{c:>13s}" for c in cols))
    for r in rows:
        print("  ".join(f"{format_cell(r[c]):>13s}" for c in cols))
    summary = check.summary()
    print(f"# verdict: {summary['verdict']}; rows: {summary['rows']}")
    first = summary.get("first_violation")
    if first is not None:
        row = check.row_name
        print(f"# first violation: {row} = {first[row]}; witness: {describe_witness(first['witness'])}")
    reasons = summary.get("undecided_reasons") or {}
    for why, count in reasons.items():
        print(f"# undecided ({count} rows): {why}")
    return 0


def parse_offsets(text: str | None, stop: int) -> tuple[int, int, int]:
    """``--offsets A:B[:STEP]`` as ``(A, B, STEP)`` with ``0 <= A <= B``, ``STEP >= 1``; ``None``: every
    offset an input of length ``<= stop`` reaches, ``0 .. stop - 1``."""
    if text is None:
        return 0, stop - 1, 1
    parts = text.split(":")
    try:
        a, b, step = int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) == 3 else 1
        if len(parts) not in (2, 3):
            raise ValueError
    except (ValueError, IndexError):
        raise InputError(f"--offsets={text!r} must look like A:B or A:B:STEP (integers)") from None
    if a < 0 or b < a or step < 1:
        raise InputError(f"--offsets={text!r}: need 0 <= A <= B and STEP >= 1")
    return a, b, step


def run_logits(args: argparse.Namespace, head: CompiledHead, family: Family | None) -> int:
    """``sweep --head DIR --reading logit_inf|logit_sup`` without ``--bound``: the logit reading by
    offset (every ``STEP``-th row of ``--offsets`` and its last), with a summary over every offset."""
    from ropeproof.verify.kernel._devices import resolve_device
    from ropeproof.verify.measure._display import format_cell
    from ropeproof.verify.measure.exact._head_sweep import sweep_head

    start, stop, step = parse_offsets(args.offsets, args.lengths.stop)
    table = sweep_head(
        head, max(stop + 1, 2), family=family, dtype=args.dtype, device=resolve_device(args.device)
    )
    rows = table.logit_rows()[start : stop + 1]
    shown = [r for r in rows if (r["m"] - start) % step == 0 or r["m"] == stop]
    summary = logit_summary(table, rows)
    if args.plot is not None:
        write_plot(args, _columns(table, start, stop), args.reading, label=table.head)
    if args.json:
        print(json.dumps({"head": head.name, "family": table.family.name, "rows": shown, "summary": summary}))
        return 0
    print(
        f"# {table.head}: the logit reading by offset m over the {table.family.name} family ({table.dtype})"
    )
    print("  ".join(f"{c:>13s}" for c in ("m", "logit_inf", "logit_sup")))
    for r in shown:
        print("  ".join(f"{format_cell(r[c]):>13s}" for c in ("m", "logit_inf", "logit_sup")))
    print(f"# least logit_inf {summary['min_logit_inf']:.10g} at m = {summary['min_logit_inf_m']}")
    return 0


def _columns(table: HeadSweep, start: int, stop: int) -> dict[str, Any]:
    """The logit reading's columns for offsets ``start .. stop`` (what ``--plot`` draws)."""
    o = table.logits()
    return {"m": o.m[start : stop + 1], **{q: o.column(q)[start : stop + 1] for q in OFFSET_READINGS}}


def logit_summary(table: HeadSweep, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Over every offset of ``rows``: the least ``logit_inf`` and greatest ``logit_sup`` with their offsets
    and witnesses, and the first offset whose ``logit_inf`` is negative (``None``: none)."""
    low = min(rows, key=lambda r: r["logit_inf"])
    high = max(rows, key=lambda r: r["logit_sup"])
    negative = next((r["m"] for r in rows if r["logit_inf"] < 0), None)
    return {
        "family": table.family.name,
        "offsets": [rows[0]["m"], rows[-1]["m"]],
        "rows": len(rows),
        "min_logit_inf": low["logit_inf"],
        "min_logit_inf_m": low["m"],
        "min_logit_inf_witness": table.witness(low["m"], "logit_inf").to_dict(),
        "max_logit_sup": high["logit_sup"],
        "max_logit_sup_m": high["m"],
        "max_logit_sup_witness": table.witness(high["m"], "logit_sup").to_dict(),
        "first_negative_logit_inf_m": negative,
        "note": family_note(table),
    }


def plot_targets(path: Path) -> tuple[Path, str, tuple[str, ...]]:
    """``(directory, stem, formats)`` of ``--plot FILE``: ``.png``/``.pdf`` pick one image format, no
    suffix both; anything else is refused."""
    from ropeproof.paper_figures._style import FORMATS

    if path.is_dir():
        raise InputError(
            f"--plot={str(path)!r} is a directory; give a file name (e.g. {str(path / 'sweep.png')!r})"
        )
    suffix = path.suffix.lower()
    if suffix in ("", ".png", ".pdf"):
        formats = FORMATS if not suffix else (suffix[1:],)
        stem = path.stem if suffix else path.name
        if not stem or stem.startswith("."):
            raise InputError(f"--plot={str(path)!r} needs a file name")
        return path.parent, stem, formats
    raise InputError(f"--plot={str(path)!r}: suffix {path.suffix!r}; accepted: .png, .pdf or none (both)")


def write_plot(args: argparse.Namespace, sweep: Any, quantity: str, label: str | None = None) -> None:
    """Draw ``sweep`` with :func:`~ropeproof.paper_figures._sweeps.plot_sweeps` and save it where
    ``--plot`` says (each file checked by the output rule first; ``--force`` replaces)."""
    from ropeproof.paper_figures._style import save_figure
    from ropeproof.paper_figures._sweeps import plot_sweeps

    directory, stem, formats = plot_targets(args.plot)
    paths = [directory / f"{stem}.{f}" for f in formats] + [
        directory / f"{stem}.csv",
        directory / f"{stem}.caption.txt",
    ]
    for path in paths:
        check_output_file(path, args.force, option="--plot")
    label = label or getattr(sweep, "subject", None) or getattr(sweep, "head", "head")
    figure = plot_sweeps({str(label): sweep}, quantity=quantity, name=stem)
    # created exclusively unless --force: a concurrent run writing the same --plot is refused, not raced
    written = save_figure(figure, directory, formats, replace=bool(args.force), option="--plot")
    print(f"ropeproof sweep: wrote {', '.join(str(p) for p in written)}", file=sys.stderr)


def describe_witness(w: dict[str, Any]) -> str:
    """One line naming the witness input (and, when known, what beats the target), with its excerpt."""
    if "description" in w:
        excerpt = w.get("excerpt")
        if excerpt is None or excerpt["n"] <= len(excerpt["tokens"]):
            return str(w["description"])
        shown = " ".join(f"{p}:{t}" for p, t in zip(excerpt["positions"], excerpt["tokens"], strict=True))
        return f"{w['description']}; input of {excerpt['n']} tokens, excerpt {shown}"
    excerpt = w["excerpt"]
    shown = " ".join(f"{p}:{t}" for p, t in zip(excerpt["positions"], excerpt["tokens"], strict=True))
    return f"{excerpt['n']} tokens, {shown} (target at position {w['target_position']})"


def run_sweep(args: argparse.Namespace) -> int:
    """``ropeproof sweep --head DIR [--family FILE|tokens] [--lengths A:B[:STEP]] [--dtype] [--json]
    [--bound EXPR [--reading R] [--relation <=|>=] [--certified]]``."""
    from ropeproof.verify.kernel._devices import resolve_device
    from ropeproof.verify.measure._display import format_cell
    from ropeproof.verify.measure.exact._head_sweep import sweep_head

    start, stop, step = args.lengths  # parsed once, by the --lengths argument type
    head = read_head(args.head_dir)
    family = chosen_family(head, getattr(args, "family", None))
    if getattr(args, "bound", None) is not None:
        return run_bound(args, head, family)
    if getattr(args, "reading", None) in OFFSET_READINGS:
        return run_logits(args, head, family)
    table = sweep_head(head, stop, family=family, dtype=args.dtype, device=resolve_device(args.device))
    full = table.select(start, stop)
    table = table.select(start, stop, step)
    if getattr(args, "plot", None) is not None:
        all_sequences = full.family_source == "all-sequences" or full.family.name == "tokens"
        write_plot(args, full, "gap_sup" if all_sequences else "margin_inf")
    rows = table.rows()
    if args.json:
        out = {
            "head": head.name,
            "family": table.family.name,
            "dtype": table.dtype,
            "rows": rows,
            "summary": sweep_summary(full),
        }
        print(json.dumps(out))
        return 0
    print(f"# {table.title()}; {family_note(table)}")
    cols = list(rows[0]) if rows else []
    print("  ".join(f"{c:>13s}" for c in cols))
    for r in rows:
        print("  ".join(f"{format_cell(r[c]):>13s}" for c in cols))
    return 0

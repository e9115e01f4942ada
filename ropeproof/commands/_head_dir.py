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
from ropeproof.verify.measure.exact._bound_options import READINGS, RELATIONS

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
        help="with --bound: which exact extreme the bound is on (default margin_inf)",
    )
    g.add_argument(
        "--relation",
        choices=RELATIONS,
        default=None,
        help="with --bound: '<=' (an upper bound, the default) or '>=' (a guarantee)",
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
        "--certified",
        action="store_true",
        help="with --bound: enclose every row by interval arithmetic (Arb at --prec bits, at least 53)",
    )


HEAD_OPTIONS = ("family", "bound", "reading", "relation", "certified", "plot")
"""Options of ``sweep`` that apply only with ``--head`` (their ``argparse`` destinations)."""


def option_conflict(args: argparse.Namespace) -> str | None:
    """Why a ``--head``-only option was given without ``--head`` (or a bound's option without
    ``--bound``), or ``None``."""
    given = [f"--{dest}" for dest in HEAD_OPTIONS if getattr(args, dest, None) not in (None, False)]
    if args.head_dir is None:
        return f"{', '.join(given)} only apply with --head DIR" if given else None
    if getattr(args, "bound", None) is None:
        loose = [g for g in given if g in ("--reading", "--relation", "--certified")]
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
    from ropeproof.verify.measure.exact._sweep import parse_lengths

    start, stop, step = parse_lengths(args.lengths)
    check = check_bound(
        head,
        args.bound,
        [start, stop],
        reading=args.reading or "margin_inf",
        relation=args.relation or "<=",
        family=family,
        certified=args.certified,
        prec=max(args.prec, 53),
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
        print(f"# first violation: n = {first['n']}; witness: {describe_witness(first['witness'])}")
    reasons = summary.get("undecided_reasons") or {}
    for why, count in reasons.items():
        print(f"# undecided ({count} rows): {why}")
    return 0


def plot_targets(path: Path) -> tuple[Path, str, tuple[str, ...]]:
    """``(directory, stem, formats)`` of ``--plot FILE``: ``.png``/``.pdf`` pick one image format, no
    suffix both; anything else is refused."""
    from ropeproof.paper_figures._style import FORMATS

    suffix = path.suffix.lower()
    if suffix in ("", ".png", ".pdf"):
        formats = FORMATS if not suffix else (suffix[1:],)
        stem = path.stem if suffix else path.name
        if not stem or stem.startswith("."):
            raise InputError(f"--plot={str(path)!r} needs a file name")
        return path.parent, stem, formats
    raise InputError(f"--plot={str(path)!r}: suffix {path.suffix!r}; accepted: .png, .pdf or none (both)")


def write_plot(args: argparse.Namespace, sweep: Any, quantity: str) -> None:
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
    label = getattr(sweep, "subject", None) or getattr(sweep, "head", "head")
    figure = plot_sweeps({str(label): sweep}, quantity=quantity, name=stem)
    written = save_figure(figure, directory, formats)
    print(f"ropeproof sweep: wrote {', '.join(str(p) for p in written)}", file=sys.stderr)


def describe_witness(w: dict[str, Any]) -> str:
    """One line naming the witness input (and, when known, what beats the target)."""
    if "description" in w:
        return str(w["description"])
    return f"tokens {w['tokens']} (target at position {w['target_position']})"


def run_sweep(args: argparse.Namespace) -> int:
    """``ropeproof sweep --head DIR [--family FILE|tokens] [--lengths A:B[:STEP]] [--dtype] [--json]
    [--bound EXPR [--reading R] [--relation <=|>=] [--certified]]``."""
    from ropeproof.verify.kernel._devices import resolve_device
    from ropeproof.verify.measure._display import format_cell
    from ropeproof.verify.measure.exact._head_sweep import sweep_head
    from ropeproof.verify.measure.exact._sweep import parse_lengths

    start, stop, step = parse_lengths(args.lengths)  # already checked by the --lengths argument type
    head = read_head(args.head_dir)
    family = chosen_family(head, getattr(args, "family", None))
    if getattr(args, "bound", None) is not None:
        return run_bound(args, head, family)
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

"""``--head DIR`` for ``ropeproof sweep`` and ``ropeproof ps-score``: any head directory that
``ropeproof compile``, ``ropeproof import`` or ``CompiledHead.save`` wrote (not a subcommand).

``sweep --head DIR`` sweeps the head over the input family it records (``head.json``'s ``"family"``);
``--family FILE`` gives one to a head that records none (a JSON file written by ``Family.save``, or
``tokens`` for every token sequence, said as such). Without either, a head with no family is swept
over every token sequence and the output says so.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from ropeproof.constructions.head import CompiledHead, load_head
from ropeproof.theory.errors import InputError
from ropeproof.theory.family import Family, token_family
from ropeproof.verify.kernel.devices import resolve_device
from ropeproof.verify.measure.display import format_cell
from ropeproof.verify.measure.exact.head_sweep import NO_FAMILY, HeadSweep, sweep_head
from ropeproof.verify.measure.exact.sweep import parse_lengths


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
    p.add_argument(
        "--family",
        metavar="FILE|tokens",
        default=None,
        help="--head: the input family of a head that records none: a JSON file written by "
        "Family.save, or 'tokens' for every token sequence (a head that records its family uses it)",
    )


HEAD_OPTIONS = ("family",)
"""Options of ``sweep`` that apply only with ``--head`` (their ``argparse`` destinations)."""


def option_conflict(args: argparse.Namespace) -> str | None:
    """Why a ``--head``-only option was given without ``--head``, or ``None``."""
    if args.head_dir is not None:
        return None
    given = [f"--{dest}" for dest in HEAD_OPTIONS if getattr(args, dest, None) not in (None, False)]
    return f"{', '.join(given)} only apply with --head DIR" if given else None


def read_head(path: Path) -> CompiledHead:
    """The head in ``path`` (errors are :class:`~ropeproof.theory.errors.InputError` naming the file)."""
    return load_head(path)


def chosen_family(head: CompiledHead, option: str | None) -> Family | None:
    """The family ``--family`` gives (``None``: not given). Refused for a head that records one."""
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


def run_sweep(args: argparse.Namespace) -> int:
    """``ropeproof sweep --head DIR [--family FILE|tokens] [--lengths A:B[:STEP]] [--dtype] [--json]``."""
    start, stop, step = parse_lengths(args.lengths)  # already checked by the --lengths argument type
    head = read_head(args.head_dir)
    family = chosen_family(head, getattr(args, "family", None))
    table = sweep_head(head, stop, family=family, dtype=args.dtype, device=resolve_device(args.device))
    full = table.select(start, stop)
    table = table.select(start, stop, step)
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

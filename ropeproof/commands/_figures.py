"""``ropeproof figures [--out DIR] [--quick] [--full] [--only NAME ...] [--formats png,pdf] [--from-report
DIR]``: regenerate the paper figures, or draw a saved report's figures again from its results."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ropeproof.commands._arguments import add_command, add_formats, add_output
from ropeproof.commands._choices import FIGURE_NAMES, STORE_DIR
from ropeproof.machinery._atomic_output import atomic_directory
from ropeproof.machinery._errors import InputError, RopeproofError

if TYPE_CHECKING:
    from ropeproof.machinery._result_store import ResultStore


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "figures",
        example="ropeproof figures --quick --only a_theory_bounds e_geometry --out figures",
    )
    add_output(p, Path("ropeproof-report/figures"), "output directory")
    p.add_argument("--quick", action="store_true", help="shorter sweeps (seconds instead of a minute)")
    p.add_argument(
        "--full",
        action="store_true",
        help="also draw the rows no verdict reads, which ropeproof check does not compute (training_length: "
        "the small configuration's seed 0 and one look at every length a reading does not judge; "
        "training_frequencies and training_theory: every layer, and every shipped configuration, besides "
        "the layer per task the claim training.frequencies judges)",
    )
    p.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        choices=FIGURE_NAMES,
        help=f"draw only these figures, a subset of: {', '.join(FIGURE_NAMES)}",
    )
    p.add_argument(
        "--from-report",
        type=Path,
        metavar="DIR",
        help=f"draw the figures of the ropeproof check report in DIR again from its saved results "
        f"(DIR/{STORE_DIR}/), computing nothing: the report's figures (or --only) at the report's --quick",
    )
    add_formats(p)
    p.set_defaults(run=run)


def _saved_run(directory: Path, quick: bool) -> tuple[ResultStore, bool, list[str]]:
    """The saved results of the report in ``directory``, whether it ran ``--quick`` and its figures."""
    from ropeproof._report import check_report_format
    from ropeproof.machinery._result_store import ResultStore

    try:
        report: dict[str, Any] = json.loads((directory / "report.json").read_text())
        check_report_format(report, f"--from-report {directory}: report.json")
        run_quick = bool(report["run"]["flags"]["quick"])
        drawn = list(report["figures"])
    except RopeproofError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"--from-report {directory}: no readable report.json of ropeproof check ({exc})"
        ) from None
    if quick and not run_quick:
        raise InputError(f"--from-report {directory}: the report ran without --quick; drop --quick")
    if not (directory / STORE_DIR).is_dir():
        raise InputError(
            f"--from-report {directory}: {directory / STORE_DIR} is missing (a report written before "
            "ropeproof check kept its results); run ropeproof check again"
        )
    return ResultStore.saved(directory / STORE_DIR), run_quick, drawn


def run(args: argparse.Namespace) -> int:
    from ropeproof.paper_figures import make_all

    start = time.perf_counter()
    quick, only, store = args.quick, args.only, None
    if args.from_report is not None:
        if args.full:
            raise InputError(
                "--full draws rows a report did not compute; drop --from-report (or --full) to draw them"
            )
        store, quick, drawn = _saved_run(args.from_report, args.quick)
        only = args.only if args.only else drawn
    with atomic_directory(args.out, args.force) as staging:
        try:
            made = make_all(staging, quick, only, formats=args.formats, store=store, full=args.full)
        except RopeproofError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            if store is None:
                raise
            # the same drawing code drew these values when the report was written: what it cannot
            # read now was changed since (or written by another version)
            raise InputError(
                f"--from-report {args.from_report}: a saved value cannot be drawn ({type(exc).__name__}: "
                f"{str(exc)[:200]}); a file under {args.from_report / STORE_DIR} was altered or written by "
                "another ropeproof: run ropeproof check again"
            ) from exc
    for name, paths in made.items():
        print(f"{name}: {', '.join(p.name for p in paths)}")
    source = f" from the results saved in {args.from_report}" if args.from_report is not None else ""
    print(f"{len(made)} figures in {args.out}{source} ({time.perf_counter() - start:.1f} s)")
    return 0

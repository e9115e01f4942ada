"""``ropeproof findings REPORT [--update docs/findings.md]``: the documentation's findings page from a
report.

Prints the findings rendered from ``REPORT`` (a ``report.json`` or the directory holding it); with
``--update FILE`` (also spelled ``--update-readme``, its former name) rewrites the section between the
``<!-- findings:begin -->`` and ``<!-- findings:end -->`` markers of that file, the docs site's findings
page ``docs/findings.md``. Both files are read only when regular files, and at most :data:`REPORT_LIMIT`
/ :data:`PAGE_LIMIT` bytes of them (:mod:`ropeproof.machinery._input_files`: a FIFO or ``/dev/full`` is
refused, not read forever); the page is rewritten atomically and never through a symbolic link or onto
a special file (:mod:`ropeproof.machinery._atomic_output`), which is checked before any work.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ropeproof.commands._arguments import add_command
from ropeproof.machinery._atomic_output import check_replaceable_file, write_text_atomic
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._input_files import read_text

REPORT_LIMIT = 256 << 20
"""The most bytes read from a ``report.json`` (256 MiB)."""
PAGE_LIMIT = 16 << 20
"""The most bytes read from the file that ``--update`` rewrites (16 MiB)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "findings",
        example="ropeproof findings ropeproof-report --update docs/findings.md",
        description="Render the documentation's findings from a report.json (after e.g.\n"
        "ropeproof check --quick --out rep); with --update FILE, rewrite that file's marked section.",
    )
    p.add_argument("report", type=Path, help="a report.json, or the directory holding one")
    p.add_argument(
        "--update",
        "--update-readme",
        dest="update_readme",
        type=Path,
        metavar="FILE",
        help="rewrite that file's findings section (docs/findings.md)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ropeproof._findings_page import render_readme_findings, replace_readme_findings
    from ropeproof._report import check_report_format

    if args.update_readme is not None:  # before any work: a link or special file is never replaced
        check_replaceable_file(args.update_readme, "--update")
    path = args.report / "report.json" if args.report.is_dir() else args.report
    text = read_text(path, REPORT_LIMIT, "REPORT")
    try:
        report = json.loads(text)
        check_report_format(report, str(path))
        body = render_readme_findings(report)
    except InputError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:  # not a report.json
        raise InputError(f"{path} is not a ropeproof report.json ({type(exc).__name__}: {exc})") from exc
    if args.update_readme is None:
        print(body, end="")
        return 0
    _check_complete(report, path)
    page = read_text(args.update_readme, PAGE_LIMIT, "--update")
    try:
        updated = replace_readme_findings(page, body)
    except ValueError as exc:  # the markers are missing
        raise InputError(f"--update={args.update_readme}: {exc}") from exc
    # atomic: an interruption leaves the file as it was
    write_text_atomic(args.update_readme, updated, option="--update")
    print(f"updated the findings section of {args.update_readme}")
    return 0


def _check_complete(report: dict, path: Path) -> None:
    """Refuse to rewrite the findings page from a report that is not a whole run of the package's claims: one
    with none of them (``check --skip '*'`` used to empty the section), or one that selected claims with
    ``--only``/``--skip``, whose findings would silently drop the rest."""
    flags = report["run"]["flags"]
    selected = [f"--{name} {p}" for name in ("only", "skip") for p in flags.get(name) or []]
    if selected:
        raise InputError(
            f"{path} comes from a run that selected claims ({' '.join(selected)}); the findings section "
            "lists every claim, so regenerate it from a whole run (ropeproof check --quick)"
        )
    if not any(c["section"] != "Your claims" for c in report["claims"]):
        raise InputError(
            f"{path} holds none of the package's claims; the findings section would be emptied, so it was "
            "left as it was"
        )

"""``ropeproof findings REPORT [--update-readme README.md]``: the README's findings from a report.

Prints the findings section rendered from ``REPORT`` (a ``report.json`` or the directory holding it);
with ``--update-readme`` rewrites the section between the ``<!-- findings:begin -->`` and
``<!-- findings:end -->`` markers of that file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ropeproof.report import render_readme_findings, replace_readme_findings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "findings",
        help="render the README's findings section from a report.json",
        description="Example: ropeproof check --quick --out rep && "
        "ropeproof findings rep --update-readme README.md",
    )
    p.add_argument("report", type=Path, help="a report.json, or the directory holding one")
    p.add_argument(
        "--update-readme", type=Path, metavar="README", help="rewrite that file's findings section"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    path = args.report / "report.json" if args.report.is_dir() else args.report
    body = render_readme_findings(json.loads(path.read_text()))
    if args.update_readme is None:
        print(body, end="")
        return 0
    text = args.update_readme.read_text()
    args.update_readme.write_text(replace_readme_findings(text, body))
    print(f"updated the findings section of {args.update_readme}")
    return 0

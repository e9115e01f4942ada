"""The ``ropeproof`` command line: ``ropeproof SUBCOMMAND [options]``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ropeproof import __version__

SUBCOMMANDS: tuple[str, ...] = (
    "check",
    "findings",
    "derive",
    "compile",
    "sweep",
    "ps-score",
    "figures",
    "export",
    "import",
    "export-model",
)
"""Modules under :mod:`ropeproof.commands`, one per subcommand, in help order."""

MODULE_NAMES: dict[str, str] = {"import": "import_head"}
"""Subcommands whose module name differs from the command (``import`` is a Python keyword)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ropeproof",
        description="Turn theory about RoPE attention heads into explicit weights and check it.",
    )
    parser.add_argument("--version", action="version", version=f"ropeproof {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND")
    for name in SUBCOMMANDS:
        module = MODULE_NAMES.get(name, name.replace("-", "_"))
        importlib.import_module(f"ropeproof.commands.{module}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    if args.command is None:
        parser.print_help()
        return 2
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

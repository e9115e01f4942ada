"""The ``ropeproof`` command line: ``ropeproof SUBCOMMAND [options]``.

Errors are reported in one place, :func:`main`, as one line on stderr,
``ropeproof SUBCOMMAND: error: MESSAGE``; tracebacks only with ``--debug``. Exit codes:

- ``0``: done; ``1``: ``check --strict`` found a regression, or ``llm-eval`` ended with prompts that
  have no reply;
- ``2``: bad input: a bad argument, a :class:`~ropeproof.machinery._errors.RopeproofError` (bad value,
  refused output directory, a size over the memory limit) or an operating-system error on a path;
- ``3``: an internal error (a bug: please report it with the ``--debug`` traceback); ``check`` also exits 3
  when a figure could not be drawn, after writing its report without it (the traceback is in the report);
- ``130``: interrupted (Ctrl-C); ``141``: the reader of stdout went away (``ropeproof check --list | head``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from ropeproof import __version__
from ropeproof.commands._summaries import SUMMARIES
from ropeproof.machinery._errors import InputError, RopeproofError
from ropeproof.verify.kernel._threads import THREADS_ENV, parse_threads, thread_policy  # no torch

SUBCOMMANDS: tuple[str, ...] = (
    "check",
    "findings",
    "errata",
    "derive",
    "compile",
    "sweep",
    "scan",
    "ps-score",
    "figures",
    "export",
    "import",
    "export-model",
    "train",
    "llm-eval",
    "cache",
)
"""Modules under :mod:`ropeproof.commands`, one per subcommand, in help order."""

MODULE_NAMES: dict[str, str] = {"import": "import_head"}
"""Subcommands whose module name differs from the command (``import`` is a Python keyword)."""

EXIT_OK, EXIT_UNEXPECTED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) collapsed to one space."""
    return " ".join(str(text).split())


NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)
"""What the parser reads as a negative number rather than an option: ``-1``, ``-0.5``, ``-.5``, ``-1e300``,
``-2.5E-7``, ``-inf`` (argparse's own pattern misses exponents and ``inf``, so ``--theta -1e300`` was
taken for an option)."""


class ArgumentParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``PROG: error: MESSAGE (see PROG --help)``, and
    which reads ``-1e300`` as a number (:data:`NEGATIVE_NUMBER`)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        hint = ""
        match = re.fullmatch(r"argument (--[\w-]+)(?:/[^:]*)?: expected one argument", message)
        if match:  # a value that starts with '-', such as --bound '-1 + 2/n', reads as an option
            hint = f"; a value starting with '-' goes after '=': {match.group(1)}=VALUE"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)}{hint} (see '{self.prog} --help')\n")


def requested_subcommand(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs (its first word that is not an option or ``--threads``'s value), or
    ``None`` (no subcommand, or an unknown word: the parser then says what is accepted)."""
    words = iter(argv)
    for word in words:
        if word == "--threads":
            next(words, None)
        elif not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the whole command line. Given the ``argv`` it will parse, it imports only the module
    of the subcommand ``argv`` runs (the others are registered by name and one-line help alone,
    :data:`~ropeproof.commands.SUMMARIES`, so the command, ``ropeproof --help`` included, starts without
    the libraries they need); with ``argv=None`` every subcommand is registered in full."""
    only = requested_subcommand(argv) if argv is not None else None
    if argv is not None and only is None:
        only = ""  # --help, --version, or an error the parser reports: no subcommand module is needed
    parser = ArgumentParser(
        prog="ropeproof",
        description="Turn theory about RoPE attention heads into explicit weights and check it.",
        epilog="example:\n  ropeproof check --quick --out ropeproof-report\n\n"
        "exit codes: 0 done, 1 check --strict found a regression (llm-eval: prompts without a reply), "
        "2 bad input,\n  3 internal error, 130 interrupted (Ctrl-C), 141 stdout closed early "
        "(ropeproof check --list | head)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ropeproof {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback of an error instead of one line"
    )
    parser.add_argument(
        "--threads",
        type=_threads_arg,
        default=None,
        metavar="N",
        help=f"intra-op torch threads (default: ${THREADS_ENV}, else 1; 0: torch's default)",
    )
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND")
    for name in SUBCOMMANDS:
        if only is not None and name != only:  # a name the parser accepts and lists; never parsed in this run
            sub.add_parser(name, help=SUMMARIES[name])
            continue
        module = MODULE_NAMES.get(name, name.replace("-", "_"))
        importlib.import_module(f"ropeproof.commands._{module}").register(sub)
    return parser


def _threads_arg(value: str) -> int:
    try:
        return parse_threads(value, "--threads")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def describe(exc: BaseException) -> str:
    """The one-line message for an error the user can act on."""
    if isinstance(exc, OSError) and not isinstance(exc, RopeproofError):
        where = f": {exc.filename}" if exc.filename else ""
        also = f" -> {exc.filename2}" if exc.filename2 else ""
        return one_line(f"{exc.strerror or type(exc).__name__}{where}{also}")
    if isinstance(exc, MemoryError):
        return "out of memory (lower the sizes, or set ROPEPROOF_MEMORY_LIMIT so the estimate refuses first)"
    return one_line(str(exc))


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (e.g. captured in tests)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ropeproof`` with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.argv = argv
    if args.command is None:
        parser.error(f"choose a subcommand: {', '.join(SUBCOMMANDS)}")
    prog = f"ropeproof {args.command}"
    try:
        with thread_policy(args.threads):
            code = int(args.run(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"{prog}: interrupted; no output directory was changed", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (RopeproofError, OSError, MemoryError) as exc:
        if args.debug:
            raise
        print(f"{prog}: error: {describe(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"{prog}: internal error: {type(exc).__name__}: {one_line(str(exc))} "
            "(a bug; rerun with --debug for the traceback and please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def run() -> int:
    """The ``ropeproof`` command itself (the console script and ``python -m ropeproof``): :func:`main`,
    then the interpreter's teardown without a garbage collection over everything the run imported.

    :func:`gc.freeze` moves every object alive at the end into the collector's permanent generation, so
    the collections the interpreter runs while it shuts down skip them: the objects torch,
    transformers and sympy leave, whose collection dominated the command's exit. Nothing is skipped but
    that collection: the exit code, stdout, stderr and every file are as :func:`main` left them (every
    output is written and closed, atomically, before it returns). ``main`` itself freezes nothing, so a
    program or a test that calls it many times keeps its garbage collected."""
    import gc

    try:
        return main()
    finally:  # a parser's SystemExit (``--help``, a bad argument) and a ``--debug`` traceback too
        gc.freeze()


if __name__ == "__main__":
    sys.exit(run())

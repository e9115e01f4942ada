"""Argument types and shared options of the ``ropeproof`` subcommands.

Every value is checked when the command line is parsed, by the same checks as the library's
(:mod:`ropeproof.machinery._validate`), so a bad value is reported as one line (``ropeproof sweep: error:
argument --theta: 'nan' must be finite; accepted: a finite real number``) before any work starts.
:func:`add_command` builds each subcommand's parser the same way: defaults shown in ``--help``, one
example, and ``--debug``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ropeproof.commands import SUMMARIES
from ropeproof.machinery._errors import RopeproofError
from ropeproof.machinery._validate import integer_problem, real_problem
from ropeproof.verify.kernel._devices import DTYPE_NAMES, resolve_device

if TYPE_CHECKING:
    import torch

DEVICE_CHOICES = ("auto", "cpu", "cuda", "cuda:N")
"""What ``--device`` accepts (``auto``: CUDA when available, else the CPU)."""
DTYPE_CHOICES = DTYPE_NAMES
"""What ``--dtype`` accepts in check, sweep and ps-score."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's and example's line breaks and appends ``(default: X)`` to every option
    whose default is a value (not ``None`` and not a flag's ``False``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "%(default)" in text or action.default is None or action.default is False:
            return text
        if action.default is argparse.SUPPRESS:
            return text
        if not action.option_strings and action.nargs not in ("?", "*"):
            return text
        return f"{text} (default: %(default)s)"


def add_command(
    sub: argparse._SubParsersAction, name: str, example: str, description: str | None = None
) -> argparse.ArgumentParser:
    """A subcommand parser with its one-line help (:data:`~ropeproof.commands.SUMMARIES`),
    :class:`HelpFormatter`, ``example`` in its help, and ``--debug``."""
    help = SUMMARIES[name]
    p = sub.add_parser(
        name,
        help=help,
        description=description or help[0].upper() + help[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the full traceback of an error instead of the one-line message",
    )
    p.set_defaults(example=example)
    return p


def _parsed(text: str, convert: Callable[[str], object]) -> object:
    """``convert(text)``, or ``text`` itself when it does not parse (the validator then names it)."""
    try:
        return convert(text)
    except ValueError:
        return text


def checked_real(
    text: str, low: float | None = None, high: float | None = None, low_open: bool = False, note: str = ""
) -> float:
    """``text`` as a finite float in ``[low, high]`` (``> low`` when ``low_open``), checked by
    :func:`~ropeproof.machinery._validate.real_problem`; else :class:`argparse.ArgumentTypeError` giving the
    text and the accepted range (``note`` in parentheses at its end)."""
    value = _parsed(text, float)
    problem = real_problem(value, low=low, high=high, low_open=low_open, note=note)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r} {problem}")
    return float(value)  # type: ignore[arg-type]


def finite_float(text: str) -> float:
    """A float that is neither NaN nor infinite."""
    return checked_real(text)


def positive_float(text: str) -> float:
    """A finite float ``> 0``."""
    return checked_real(text, low=0.0, low_open=True)


def nonnegative_float(text: str) -> float:
    """A finite float ``>= 0``."""
    return checked_real(text, low=0.0)


def int_in(low: int, high: int | None = None, even: bool = False) -> Callable[[str], int]:
    """An integer ``low <= value`` (``<= high`` when given; even when ``even``), checked by
    :func:`~ropeproof.machinery._validate.integer_problem` (the message gives the accepted range)."""

    def parse(text: str) -> int:
        value = _parsed(text, int)
        problem = integer_problem(value, low=low, high=high, even=even)
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{text!r} {problem}")
        return int(value)  # type: ignore[call-overload]

    parse.accepted = (low, high, even)  # type: ignore[attr-defined]  # read by the CLI fuzz test
    return parse


def device(text: str) -> torch.device:
    """A device that exists on this machine (``auto``, ``cpu``, ``cuda``, ``cuda:N``)."""
    try:
        return resolve_device(text)
    except RopeproofError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


LAZY_DEVICES = ("auto", "cpu")
"""Devices :func:`device_text` accepts without importing torch (each exists on every machine)."""


def device_text(text: str) -> str:
    """:func:`device` kept as the text given: ``auto`` and ``cpu`` (:data:`LAZY_DEVICES`) as they are,
    without importing torch; any other device resolved (and refused when it does not exist) now. For
    commands that need a device only on some paths (``sweep``: the non-float64 dtypes)."""
    if text in LAZY_DEVICES:
        return text
    device(text)
    return text


def add_device(p: argparse.ArgumentParser, resolve: bool = True) -> None:
    """``--device`` with its accepted values; ``resolve=False``: the value stays text
    (:func:`device_text`), for the command to resolve where it needs a device."""
    p.add_argument(
        "--device",
        type=device if resolve else device_text,
        default="auto",
        metavar="{" + ",".join(DEVICE_CHOICES) + "}",
        help="where to compute (auto: CUDA when available, else the CPU)",
    )


def add_dtype(p: argparse.ArgumentParser, help: str, choices: tuple[str, ...] = DTYPE_CHOICES) -> None:
    """``--dtype`` restricted to ``choices`` (float64 by default)."""
    p.add_argument("--dtype", choices=choices, default=choices[0], help=help)


def add_output(
    p: argparse.ArgumentParser,
    default: Path | None,
    what: str,
    how: str = "written completely or not at all",
) -> None:
    """``--out DIR`` (required when ``default`` is None) and ``--force``; ``how`` says how it is written."""
    p.add_argument(
        "--out",
        type=Path,
        default=default,
        required=default is None,
        metavar="DIR",
        help=f"{what}; must be absent or empty unless --force ({how})",
    )
    p.add_argument("--force", action="store_true", help="replace --out if it is a non-empty directory")


def add_json(p: argparse.ArgumentParser, what: str) -> None:
    """``--json``: print one JSON object instead of text."""
    p.add_argument("--json", action="store_true", help=f"print {what} as one JSON object instead of text")


def image_formats(text: str) -> tuple[str, ...]:
    """``--formats``: a comma-separated list of image formats from ``png`` and ``pdf``."""
    from ropeproof.paper_figures._style import FORMATS

    parts = tuple(part.strip() for part in text.split(","))
    if not text.strip() or any(part not in FORMATS for part in parts):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of image formats from {','.join(FORMATS)}"
        )
    return parts


def add_formats(p: argparse.ArgumentParser) -> None:
    """``--formats png,pdf``: the figures' image formats (default: both, only png with ``--quick``)."""
    p.add_argument(
        "--formats",
        type=image_formats,
        default=None,
        metavar="LIST",
        help="image formats of the figures, comma-separated from png,pdf (default: png,pdf; png only with "
        "--quick, whose shortened sweeps make previews)",
    )


def architecture(*extra: str) -> Callable[[str], str]:
    """An architecture name: a key of the live registry
    (:data:`~ropeproof.theory._architectures.ARCHITECTURES`, which ``register_converter`` extends) or one
    of ``extra``. The registry is read when a value is parsed, never for ``--help``."""

    def parse(text: str) -> str:
        from ropeproof.theory._architectures import ARCHITECTURES

        names = [*ARCHITECTURES, *extra]
        if text not in names:
            raise argparse.ArgumentTypeError(
                f"invalid choice: {text!r} (choose from {', '.join(repr(n) for n in names)})"
            )
        return text

    return parse

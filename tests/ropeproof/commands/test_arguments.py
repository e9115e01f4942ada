"""Argument types, and every subcommand's --help: defaults, an example that parses, choices, positionals."""

from __future__ import annotations

import argparse
import shlex

import pytest
import torch

from ropeproof.cli import build_parser
from ropeproof.commands.arguments import (
    DEVICE_CHOICES,
    DTYPE_CHOICES,
    HelpFormatter,
    device,
    finite_float,
    int_in,
    nonnegative_float,
    positive_float,
)


def subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", list(subcommands()))
def test_help_shows_defaults_example_choices_and_positionals(name: str) -> None:
    parser = subcommands()[name]
    assert parser.formatter_class is HelpFormatter
    text = parser.format_help()
    assert "\nexample:\n  ropeproof " + name in text
    # the example is a valid command line of this subcommand
    example = shlex.split(parser.get_default("example"))
    assert example[:2] == ["ropeproof", name]
    parser.parse_args(example[2:])
    for action in parser._actions:
        if not action.option_strings:  # a positional: documented, choices listed
            assert action.help, f"{name}: positional {action.dest} has no help"
            if action.choices:
                assert "{" + ",".join(action.choices) + "}" in text
        elif action.default not in (None, False, argparse.SUPPRESS) and action.help:
            assert f"(default: {action.default})" in " ".join(text.split()), (name, action.dest)
        if action.dest == "device":
            assert "{" + ",".join(DEVICE_CHOICES) + "}" in text
        if action.dest == "dtype":
            assert set(action.choices) <= set(DTYPE_CHOICES)
            assert "{" + ",".join(action.choices) + "}" in text


def test_every_subcommand_is_covered() -> None:
    from ropeproof.cli import SUBCOMMANDS

    assert list(subcommands()) == list(SUBCOMMANDS)


@pytest.mark.parametrize(
    ("parse", "good", "bad"),
    [
        (finite_float, [("1.5", 1.5), ("-0", -0.0), ("1e300", 1e300)], ["nan", "inf", "-inf", "x", ""]),
        (positive_float, [("1e-300", 1e-300), ("2", 2.0)], ["0", "-1", "nan", "inf"]),
        (nonnegative_float, [("0", 0.0), ("3", 3.0)], ["-1e-9", "nan"]),
        (int_in(2), [("2", 2), ("99", 99)], ["1", "-5", "2.0", "x", "1e3"]),
        (int_in(2, 10, even=True), [("2", 2), ("10", 10)], ["3", "12", "0"]),
    ],
)
def test_types(parse, good: list[tuple[str, object]], bad: list[str]) -> None:
    for text, value in good:
        assert parse(text) == value
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


def test_device_type() -> None:
    assert device("cpu") == torch.device("cpu")
    with pytest.raises(argparse.ArgumentTypeError, match="is not a device"):
        device("nosuch")
    if not torch.cuda.is_available():
        with pytest.raises(argparse.ArgumentTypeError, match="CUDA is not available"):
            device("cuda")

"""Argument types, and every subcommand's --help: defaults, an example that parses, choices, positionals."""

from __future__ import annotations

import argparse
import shlex

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof._cli import build_parser
from ropeproof.commands._arguments import (
    DEVICE_CHOICES,
    DTYPE_CHOICES,
    HelpFormatter,
    device,
    finite_float,
    int_in,
    nonnegative_float,
    positive_float,
)
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real_problem


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
    from ropeproof._cli import SUBCOMMANDS

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


@settings(deadline=None, max_examples=150)
@given(
    value=st.integers(-20, 40),
    low=st.integers(-5, 10),
    span=st.none() | st.integers(0, 20),
    even=st.booleans(),
)
def test_int_in_is_the_library_check(value: int, low: int, span: int | None, even: bool) -> None:
    # the command line accepts exactly what the library's integer() accepts, with the same message
    high = None if span is None else low + span
    parse = int_in(low, high, even)
    try:
        want: int | str = integer(value, "v", low=low, high=high, even=even)
    except InputError as exc:
        want = str(exc).removeprefix(f"v={value} ")
    if isinstance(want, int):
        assert parse(str(value)) == want
    else:
        with pytest.raises(argparse.ArgumentTypeError) as err:
            parse(str(value))
        assert str(err.value) == f"{str(value)!r} {want}"


@settings(deadline=None, max_examples=150)
@given(value=st.floats(allow_nan=True, allow_infinity=True))
def test_float_types_are_the_library_check(value: float) -> None:
    for parse, bounds in (
        (finite_float, {}),
        (positive_float, {"low": 0.0, "low_open": True}),
        (nonnegative_float, {"low": 0.0}),
    ):
        text = repr(value)
        problem = real_problem(value, **bounds)
        if problem is None:
            assert parse(text) == value
        else:
            with pytest.raises(argparse.ArgumentTypeError) as err:
                parse(text)
            assert str(err.value) == f"{text!r} {problem}"

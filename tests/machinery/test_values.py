"""Values parsed once at the boundary: the parsers against the limits table, the hand-back of parsed
values by the validators, and the count of checks on ``ropeproof sweep index`` and ``sweep retrieval``
(each of theta, the lengths and the alphabet size checked exactly once, from the command line to the
kernels)."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.commands import main
from ropeproof.machinery import InputError
from ropeproof.machinery import _validate as validate
from ropeproof.machinery._values import LIMITS, AlphabetSize, Angle, Length, Lengths, Parsed

HIGH = int(LIMITS["length"].high)


@given(a=st.integers(2, 10**6), extra=st.integers(0, 10**6), step=st.integers(1, 50))
def test_lengths_parse_text_and_tuples_alike(a: int, extra: int, step: int) -> None:
    b = a + extra
    parsed = Lengths.parse(f"{a}:{b}:{step}")
    assert tuple(parsed) == (a, b, step) and Lengths.of((a, b, step)) == parsed
    assert isinstance(parsed.start, Length) and isinstance(parsed.stop, Length)
    assert Lengths.of(parsed) is parsed and str(Lengths.parse(f"{a}:{b}")) == f"{a}:{b}"


@pytest.mark.parametrize("text", ["1:5", "5:4", "2:5:0", "2", "2:3:4:5", "a:b", f"2:{HIGH + 1}", "2.5:7"])
def test_lengths_refuse_what_is_outside_the_table(text: str) -> None:
    with pytest.raises(InputError, match="lengths="):
        Lengths.parse(text)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_parsed_angle_is_handed_back_unchecked_unless_a_range_is_asked(x: float) -> None:
    a = Angle.of(x)
    assert isinstance(a, Parsed) and a == x and Angle.of(a) is a
    assert validate.real(a, "theta") is a  # finite was checked once: not again
    if x < 0:  # a range the parse did not check is still checked
        with pytest.raises(InputError, match="theta="):
            validate.real(a, "theta", low=0.0)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "x", None])
def test_angles_refuse_non_finite_and_non_numbers(bad: object) -> None:
    with pytest.raises(InputError, match="theta="):
        Angle.of(bad)


def test_alphabet_sizes_follow_the_table() -> None:
    lim = LIMITS["alphabet_size"]
    assert AlphabetSize.of(int(lim.high)) == lim.high and AlphabetSize.of(2) == 2
    for bad in (1, int(lim.high) + 1, 2.5, True):
        with pytest.raises(InputError, match="alphabet_size="):
            AlphabetSize.of(bad)
    a = AlphabetSize.of(11)
    assert validate.integer(a, "alphabet_size", low=2) is a  # within the parsed range: handed back
    with pytest.raises(InputError):
        validate.integer(a, "alphabet_size", low=2, high=10)  # a narrower range is checked


THETA, ALPHABET, STOP = 0.86602539, 11, 37


@contextlib.contextmanager
def counted_checks() -> Iterator[Counter]:
    """Counts the checks of this test's values: ``real_problem`` on theta, ``integer_problem`` on the
    alphabet size and on the last length, ``Lengths.parse``, each only for values not already parsed."""
    counts: Counter = Counter()
    codes = {
        validate.real_problem.__code__: "real",
        validate.integer_problem.__code__: "integer",
        Lengths.parse.__func__.__code__: "lengths",  # type: ignore[attr-defined]
    }

    def profile(frame, event, arg):
        if event != "call" or frame.f_code not in codes:
            return
        kind = codes[frame.f_code]
        value = frame.f_locals.get("value", frame.f_locals.get("text"))
        if isinstance(value, Parsed):
            return
        if kind == "lengths":
            counts["lengths"] += 1
        elif kind == "real" and isinstance(value, float) and value == THETA:
            counts["theta"] += 1
        elif kind == "integer" and value == ALPHABET:
            counts["alphabet_size"] += 1
        elif kind == "integer" and value == STOP:
            counts["lengths"] += 1  # the last length checked again after the parse

    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(None)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["sweep", "index", "--theta", str(THETA), "--lengths", f"2:{STOP}"], {"theta": 1, "lengths": 1}),
        (
            [
                "sweep",
                "retrieval",
                "--alphabet-size",
                str(ALPHABET),
                "--theta",
                str(THETA),
                "--lengths",
                f"2:{STOP}:5",
            ],
            {"theta": 1, "lengths": 1, "alphabet_size": 1},
        ),
    ],
)
def test_each_value_of_a_sweep_is_checked_once(argv: list[str], expected: dict[str, int]) -> None:
    out = io.StringIO()
    with counted_checks() as counts, contextlib.redirect_stdout(out):
        status = main(argv)
    assert status == 0 and re.search(rf"^\s*{STOP}\s", out.getvalue(), re.M)  # the row at B was written
    assert dict(counts) == expected


def test_the_counter_sees_a_second_check() -> None:
    """The count can fail: a kernel that checks theta again is seen."""
    with counted_checks() as counts:
        validate.real(Angle.of(THETA), "theta", low=-10.0)  # a range outside the parse: checked again
        validate.real(THETA, "theta")  # a raw float: checked
    assert counts["theta"] == 2

"""The shared scalar checks: the project's error, the parameter's name, the accepted range."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._paper import index_construction, reflexive_construction, retrieval_construction
from ropeproof.machinery._errors import ConstructionError, InputError
from ropeproof.machinery._validate import integer, integer_problem, real, real_problem


def test_integer_accepts_integers_only() -> None:
    assert integer(3, "n") == 3 and integer(np.int64(4), "n", low=4) == 4 and integer(6, "n", even=True) == 6
    assert integer(sp.Integer(5), "n") == 5
    for bad in (1.5, 2.0, "8", True, None, np.float64(3.0)):
        with pytest.raises(InputError, match=r"n=.* is not an integer; accepted: an integer >= 1"):
            integer(bad, "n", low=1)
    with pytest.raises(InputError, match=r"n=0 is out of range; accepted: an integer >= 1 and <= 9"):
        integer(0, "n", low=1, high=9)
    with pytest.raises(InputError, match="accepted: an even integer"):
        integer(3, "n", even=True)


def test_real_accepts_finite_reals_in_range() -> None:
    assert real(1, "x") == 1.0 and real(np.float32(0.5), "x") == 0.5 and real(sp.Float(2), "x") == 2.0
    assert real(math.inf, "x", finite=False) == math.inf
    for bad in ("0.5", True, None, 1j):
        with pytest.raises(InputError, match="is not a number"):
            real(bad, "x")
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(InputError, match="accepted: a finite real number"):
            real(bad, "x")
    with pytest.raises(ConstructionError, match=r"w=1.0 is out of range; accepted: a finite real number > 1"):
        real(1, "w", low=1, low_open=True, error=ConstructionError)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: index_construction(max_int=1.5), r"max_int=1.5 is not an integer"),
        (lambda: retrieval_construction(alphabet_size="8"), r"alphabet_size='8' is not an integer"),
        (lambda: retrieval_construction(max_int=0), r"max_int=0 is out of range"),
        (lambda: reflexive_construction(max_int=-1), r"max_int=-1 is out of range"),
        (lambda: index_construction(theta="x"), r"theta='x' is not a number"),
        (lambda: index_construction(theta=math.nan), r"theta=nan"),
        (lambda: index_construction(letters=1.5), r"letters=1.5 is not an integer"),
        (lambda: index_construction(letters=True), r"letters=True is not an integer"),
        (lambda: reflexive_construction(letters=["A", ""]), r"non-empty names"),
        (lambda: index_construction(value_weight=1.0), r"value_weight=1.0 is out of range"),
    ],
)
def test_constructions_refuse_bad_parameters_with_their_error(build, match: str) -> None:  # type: ignore[no-untyped-def]
    # these used to be bare TypeErrors (comparison of str with int, range() of a float)
    with pytest.raises(ConstructionError, match=match):
        build()


def test_constructions_accept_symbolic_numbers() -> None:
    assert float(next(iter(index_construction(theta=sp.pi / 4).parameters.values()))) == math.pi / 4


def test_note_and_problem_text() -> None:
    with pytest.raises(
        InputError, match=r"^length=2 is out of range; accepted: an integer >= 3 \(two keys\)$"
    ):
        integer(2, "length", low=3, note="two keys")
    with pytest.raises(
        InputError, match=r"^tau=0\.0 is out of range; accepted: a finite real number > 0 \(s\)$"
    ):
        real(0, "tau", low=0, low_open=True, note="s")
    assert integer_problem(5, low=1) is None and real_problem(0.5, high=1.0) is None
    assert integer_problem("5", low=1) == "is not an integer; accepted: an integer >= 1"
    assert real_problem(math.nan) == "must be finite; accepted: a finite real number"
    assert real_problem(math.inf, finite=False) is None
    assert real_problem(-(10**400)) == "must be finite; accepted: a finite real number"  # float() overflows
    assert real_problem(10**400, finite=False, high=0) == "is out of range; accepted: a real number <= 0"
    with pytest.raises(InputError, match=r"^x=1000000000\d+ must be finite"):
        real(10**400, "x")
    assert real_problem(math.nan, finite=False) == "must be a number, not NaN; accepted: a real number"
    # a refused value is shown converted (np.int64(0) as 0), or by its repr when it is not a number
    with pytest.raises(InputError, match=r"^n=0 is out of range"):
        integer(np.int64(0), "n", low=1)
    with pytest.raises(InputError, match=r"^n=True is not an integer"):
        integer(True, "n")


@settings(deadline=None, max_examples=200)
@given(
    value=st.integers(-50, 50),
    low=st.none() | st.integers(-20, 20),
    high=st.none() | st.integers(-20, 20),
    even=st.booleans(),
)
def test_integer_accepts_exactly_its_range(value: int, low: int | None, high: int | None, even: bool) -> None:
    inside = (
        (low is None or value >= low) and (high is None or value <= high) and (not even or value % 2 == 0)
    )
    assert (integer_problem(value, low=low, high=high, even=even) is None) == inside
    if inside:
        out = integer(np.int32(value), "v", low=low, high=high, even=even)
        assert out == value and type(out) is int
    else:
        with pytest.raises(InputError, match=rf"^v={value} is out of range; accepted: an"):
            integer(value, "v", low=low, high=high, even=even)


@settings(deadline=None, max_examples=200)
@given(
    value=st.floats(allow_nan=True, allow_infinity=True),
    low=st.none() | st.floats(-10, 10),
    high=st.none() | st.floats(-10, 10),
    low_open=st.booleans(),
    high_open=st.booleans(),
)
def test_real_accepts_exactly_its_range(
    value: float, low: float | None, high: float | None, low_open: bool, high_open: bool
) -> None:
    above = low is None or (value > low if low_open else value >= low)
    below = high is None or (value < high if high_open else value <= high)
    inside = math.isfinite(value) and above and below
    bounds = {"low": low, "high": high, "low_open": low_open, "high_open": high_open}
    assert (real_problem(value, **bounds) is None) == inside
    if inside:
        assert real(np.float64(value), "x", **bounds) == value
    else:
        with pytest.raises(InputError, match=r"^x=\S+ (is out of range|must be finite); accepted: a finite"):
            real(value, "x", **bounds)

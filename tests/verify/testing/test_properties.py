"""ropeproof.verify.testing._properties.check_construction on the paper's constructions, a user
construction, and a
broken one (which it must catch)."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import given, settings

from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.machinery._errors import InputError
from ropeproof.theory._construction import Construction, Plane, Rotated
from ropeproof.theory._family import Family, FamilyCase
from ropeproof.verify.measure.exact._sweep import sweep_retrieval
from ropeproof.verify.testing._properties import check_construction
from ropeproof.verify.testing._strategies import index_params


@settings(max_examples=5)
@given(params=index_params(max_int=10, max_letters=4))
def test_index_battery_on_random_parameters(params) -> None:
    top = params["max_int"] + 1
    lengths = sorted({2, min(5, top), top})
    report = check_construction(
        index_construction(**params), lengths=lengths, examples=4, declared="positional"
    )
    assert report.passed


def test_retrieval_theta_zero_is_symbolic_and_respects_its_margin() -> None:
    c = retrieval_construction(4, 0.0, max_int=2)
    bound = 1 - float(sp.cos(sp.pi / 2))
    report = check_construction(c, declared="symbolic", margin_lower_bound=lambda n: bound - 1e-12)
    assert [r.name for r in report.results] == [
        "closed form vs module", "correct up to the horizon", "margin bound", "exactly symbolic"]  # fmt: skip


def test_battery_catches_a_false_declaration_and_a_false_bound() -> None:
    c = retrieval_construction(4, 0.2, max_int=1)
    with pytest.raises(AssertionError, match="exactly positional"):
        check_construction(c, lengths=(3, 4), declared="positional")
    with pytest.raises(AssertionError, match="margin bound"):
        check_construction(c, lengths=(2, 3), margin_lower_bound=lambda n: 0.9)


def test_user_written_construction() -> None:
    """A variant of T_Index whose integer query looks back s + 1 positions; its family must be
    supplied by the user, and the battery finds it wrong against the Index family."""
    base = index_construction(theta=0.7, letters=3, max_int=6)
    shifted = Construction(
        "index", base.tokens, (Plane(sp.Symbol("theta", real=True), 1),),
        {"letter": lambda p, k, pl: Rotated(0), "integer": lambda p, k, pl: Rotated(-(p["s"] + 1) * pl.freq)},
        base.key_rules, base.value, base.generic, base.parameters,
    )  # fmt: skip
    with pytest.raises(InputError, match="carries no input family"):
        check_construction(shifted, lengths=(3, 5))
    report = check_construction(shifted.with_family(base.family), lengths=(3, 5), raise_on_failure=False)
    assert not report.passed
    assert [r.name for r in report.failures()] == ["correct up to the horizon"]


def test_every_length_is_checked_not_only_the_lengths_given() -> None:
    """T_Retrieval (|ALPH| = 4, theta = 0.2) first has margin_inf <= 0 at n = 6 (the direct sweep:
    -0.177), found although only n = 2 and n = 9 are passed; the margin bound is checked at every
    length in between too."""
    assert (
        sweep_retrieval(4, 0.2, 6).columns["margin_inf"][-2:].tolist()[0]
        > 0
        > sweep_retrieval(4, 0.2, 6).columns["margin_inf"][-1]
    )
    c = retrieval_construction(4, 0.2, max_int=1)
    report = check_construction(c, lengths=(2, 9), raise_on_failure=False)
    horizon = next(r for r in report.results if r.name == "correct up to the horizon")
    assert not horizon.passed and horizon.details["first_failing_length"] == 6
    # margin_inf(n) = min_{m < n} 2 sin(m pi / 5)^2: 2 sin(pi/5)^2 = 0.69 for n <= 5, then ~0 from n = 6
    report = check_construction(
        index_construction(theta=0.3, letters=3, max_int=9),
        lengths=(2, 9),
        margin_lower_bound=lambda n: 0.05 if n == 5 else 0.0,
        raise_on_failure=False,
    )
    bound = next(r for r in report.results if r.name == "margin bound")
    # margin_inf(5) = 2 sin(0.15)^2 = 0.0447 < 0.05: found at n = 5, which was not among the lengths
    assert [v[0] for v in bound.details["violations"]] == [5]
    assert bound.details["violations"][0][1] == pytest.approx(2 * math.sin(0.15) ** 2, rel=1e-12)


def test_a_previous_token_family_is_covered_at_every_length() -> None:
    """A head with one fixed offset (the previous token): its family is complete at every length."""
    base = index_construction(theta=0.9, letters=3, max_int=1)
    one = [t.name for t in base.tokens if t.kind == "integer"]
    letters = tuple(t.name for t in base.tokens if t.kind == "letter")
    family = Family("previous", (FamilyCase("prev", tuple(one), letters, base.token_names, 1),), "prev")
    assert family.max_length() is None
    report = check_construction(base.with_family(family), lengths=(2, 30), examples=3)
    assert report.passed

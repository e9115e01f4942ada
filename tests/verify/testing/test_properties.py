"""ropeproof.verify.testing.properties.check_construction on the paper's constructions, a user
construction, and a
broken one (which it must catch)."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings

from ropeproof.constructions.paper import index_construction, retrieval_construction
from ropeproof.theory.construction import Construction, Plane, Rotated
from ropeproof.verify.testing.properties import check_construction
from ropeproof.verify.testing.strategies import index_params


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
    report = check_construction(shifted, lengths=(3, 5), raise_on_failure=False)
    assert not report.passed
    assert [r.name for r in report.failures()] == ["correct up to the horizon"]

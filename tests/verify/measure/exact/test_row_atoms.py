"""decide_row against the plain comparison of the least (greatest) value with the bound, and its budgets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.verify.measure.exact._row_atoms import Atom, Budget, decide_row

VALUES = st.lists(st.integers(-5, 5), min_size=1, max_size=8)


def atoms(values: list[int], error: float) -> list[Atom]:
    return [Atom(float(v), error, ("x",), 0, None) for v in values]


def exact(a: Atom) -> tuple[float, float]:
    return a.value, a.value  # each value is the float it reads: an exact enclosure


@settings(max_examples=200, deadline=None)
@given(values=VALUES, bound=st.integers(-5, 5), minimum=st.booleans(), error=st.sampled_from([0.0, 0.5, 3.0]))
def test_decide_row_is_the_exact_comparison(
    values: list[int], bound: int, minimum: bool, error: float
) -> None:
    """With exact enclosures every row is decided, and as min(values) (max) compares with the bound,
    whatever the float error each value carries first."""
    extreme = min(values) if minimum else max(values)
    truth = "<" if extreme < bound else "=" if extreme == bound else ">"
    outcome, why = decide_row(atoms(values, error), minimum, (bound, bound), exact, None, Budget(100, 0))
    assert (outcome, why) == (truth, "")


def test_budgets_and_identities_are_counted_and_named() -> None:
    """A value touching the bound with an enclosure that cannot separate it: the identity decides, one
    from the budget each; an empty budget names itself."""
    touching = atoms([1, 1, 3], 0.5)

    def wide(a: Atom) -> tuple[float, float]:
        return a.value - 0.25, a.value + 0.25

    budget = Budget(refine=10, identities=5)
    assert decide_row(touching, True, (1.0, 1.0), wide, lambda a: True, budget) == ("=", "")
    assert (budget.refined, budget.proved) == (2, 2)  # the value 3 is above the bound without either
    assert decide_row(touching, True, (1.0, 1.0), wide, lambda a: False, Budget(10, 5))[0] is None
    out = decide_row(touching, True, (1.0, 1.0), wide, lambda a: True, Budget(0, 1))
    assert out == (None, "identity budget reached (max_identities=1)")
    out = decide_row(touching, True, (1.0, 1.0), wide, None, Budget(0, 1))
    assert out[0] is None and out[1].startswith("refinement budget reached (max_refine=0)")

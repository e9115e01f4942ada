"""Families as data: coverage (min_length, max_length) for fixed offsets, distance 0 and any distance,
the JSON round trip, the checks on bad input, and a construction carrying its family."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof import Family, FamilyCase
from ropeproof.constructions._paper import index_construction, reflexive_construction, retrieval_construction
from ropeproof.machinery._errors import ConstructionError, InputError
from ropeproof.theory._family import token_family
from ropeproof.verify.measure.exact._families import family_for


def case(label: str, distance: int | None) -> FamilyCase:
    return FamilyCase(label, ("q",), ("t",), ("o", "t"), distance)


def test_one_fixed_offset_is_covered_at_every_length() -> None:
    previous = Family("previous", (case("prev", 1),), "the previous token")
    assert previous.min_length() == 2 and previous.max_length() is None
    assert all(previous.cases_at(n) == [0] for n in range(2, 500))
    far = Family("back7", (case("b7", 7),), "seven back")
    assert far.min_length() == 8 and far.max_length() is None and far.cases_at(7) == []


def test_distance_zero_and_any_distance_are_unbounded() -> None:
    assert Family("self", (case("s", 0),), "").max_length() is None
    assert Family("any", (case("a", None),), "").max_length() is None
    assert Family("self", (case("s", 0),), "").min_length() == 2


@settings(max_examples=40, deadline=None)
@given(offsets=st.sets(st.integers(1, 12), min_size=1, max_size=12))
def test_every_offset_families_stop_at_the_first_missing_offset(offsets: set[int]) -> None:
    """With every_offset, length n needs a case for each offset 1 .. n - 1: brute force over n."""
    fam = Family("idx", tuple(case(f"s={d}", d) for d in sorted(offsets)), "", every_offset=True)
    complete = [n for n in range(2, 20) if all(d in offsets for d in range(1, n))]
    expected = max(complete) if complete else None
    if expected is None:  # offset 1 missing: nothing is complete beyond the shortest input
        assert fam.max_length() == fam.min_length()
    else:
        assert fam.max_length() == expected
    # a case with any distance covers every offset
    with_any = Family("idx", (*fam.cases, case("any", None)), "", every_offset=True)
    assert with_any.max_length() is None


def test_paper_families() -> None:
    assert family_for(index_construction(letters=3, max_int=16)).max_length() == 17
    assert family_for(retrieval_construction(4, 0.1, max_int=1)).max_length() is None
    assert family_for(reflexive_construction(letters=3)).max_length() is None


def test_json_round_trip(tmp_path) -> None:
    fam = family_for(retrieval_construction(3, 0.1, max_int=1))
    assert Family.from_dict(json.loads(json.dumps(fam.to_dict()))) == fam
    path = fam.save(tmp_path / "fam.json")
    assert Family.load(path) == fam
    idx = family_for(index_construction(letters=2, max_int=3))
    assert Family.from_dict(idx.to_dict()).every_offset is True


def test_bad_input_names_the_parameter(tmp_path) -> None:
    with pytest.raises(InputError, match="target_distance=-1"):
        case("x", -1)
    with pytest.raises(InputError, match="query_tokens"):
        FamilyCase("x", (), ("t",), ("o",), 1)
    with pytest.raises(InputError, match="query_tokens"):
        FamilyCase("x", "q", ("t",), ("o",), 1)  # a string is not a list of names
    with pytest.raises(InputError, match="duplicate case labels"):
        Family("f", (case("a", 1), case("a", 2)), "")
    with pytest.raises(InputError, match="non-empty list of FamilyCase"):
        Family("f", (), "")
    with pytest.raises(InputError, match="lacks the key 'cases'"):
        Family.from_dict({"name": "f"})
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(InputError, match="not JSON"):
        Family.load(tmp_path / "bad.json")
    with pytest.raises(InputError, match="query_tokens must be a non-empty subset"):
        token_family(["a"], ["b"])


def test_a_construction_carries_its_family() -> None:
    c = index_construction(letters=3, max_int=4)
    assert family_for(c) is c.family and c.family.name == "index"
    prev = Family("previous", (FamilyCase("p", ("1",), ("A", "B", "C"), tuple(c.token_names), 1),), "")
    d = c.with_family(prev)
    assert family_for(d) is prev and d.tokens == c.tokens
    # the name is never read: a construction called "index" without a family has none
    with pytest.raises(InputError, match="carries no input family"):
        family_for(c.with_family(None))
    with pytest.raises(ConstructionError, match="uses tokens that construction 'index' lacks"):
        c.with_family(Family("f", (FamilyCase("x", ("Z",), ("A",), ("A",), 1),), ""))

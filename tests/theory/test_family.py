"""Families as data: coverage (min_length, max_length) for fixed offsets, distance 0 and any distance,
the JSON round trip, the checks on bad input, and a construction carrying its family."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof import Family, FamilyCase
from ropeproof.constructions._paper import index_construction, reflexive_construction, retrieval_construction
from ropeproof.machinery._errors import ConstructionError, InputError, OutputError
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


def test_family_files_are_regular_bounded_json(tmp_path: Path) -> None:
    """Family.load reads only a regular file of bounded size (never a FIFO or /dev/zero), refuses a
    distance past int32, a deeply nested file and a truncated one in one line; Family.save into a
    missing directory names the user's path, not a temporary file."""
    import os

    fam = Family("f", (case("a", 1),), "one case")
    os.mkfifo(tmp_path / "fifo")
    for path, match in (
        ("/dev/zero", "is a character device, not a regular file"),
        (tmp_path / "fifo", "is a FIFO, not a regular file"),
        (tmp_path, "is a directory"),
    ):
        with pytest.raises(InputError, match=match):
            Family.load(path)
    data = fam.to_dict()
    data["cases"][0]["target_distance"] = 10**30
    (tmp_path / "far.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"target_distance=10{30}; accepted: an integer 0 \.\. 2147483647"):
        Family.load(tmp_path / "far.json")
    (tmp_path / "deep.json").write_text('{"cases": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InputError, match="nests too deeply"):
        Family.load(tmp_path / "deep.json")
    (tmp_path / "cut.json").write_text(json.dumps(fam.to_dict())[:-5])
    with pytest.raises(InputError, match="is not JSON"):
        Family.load(tmp_path / "cut.json")
    with pytest.raises(OutputError) as missing:
        fam.save(tmp_path / "no" / "f.json")
    assert str(tmp_path / "no" / "f.json") in str(missing.value) and ".partial" not in str(missing.value)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=3),
    lambda sub: st.lists(sub, max_size=3) | st.dictionaries(st.text(max_size=3), sub, max_size=3),
    max_leaves=8,
)


_CASE_KEYS = ("label", "query_tokens", "target_tokens", "other_tokens", "target_distance")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["format", "name", "description", "every_offset", "cases", *_CASE_KEYS]), _JSON)
def test_fuzz_families_loaded_from_json(key: str, value: object) -> None:
    """A saved family with one field replaced by random JSON: loaded as the family it states (its
    round trip equal) or refused with an InputError, never another exception."""
    import tempfile

    data = Family("f", (case("a", 1), case("b", None)), "two cases").to_dict()
    target = data["cases"][0] if key in _CASE_KEYS else data
    target[key] = value
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.json"
        path.write_text(json.dumps(data))
        try:
            loaded = Family.load(path)
        except InputError:
            return
    assert Family.from_dict(loaded.to_dict()) == loaded
    distance = loaded.cases[0].target_distance
    assert distance is None or (type(distance) is int and 0 <= distance <= 2**31 - 1)

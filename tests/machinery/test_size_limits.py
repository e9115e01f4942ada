"""The one table of limits: each checked before the work, refused with the estimate and the limit, and
the documentation's copy of the table equal to it."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from ropeproof.constructions._paper import index_construction, reflexive_construction, retrieval_construction
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._size_limits import LIMITS, check_size, limit, limits_table


def test_check_size_gives_the_estimate_and_the_limit() -> None:
    check_size("fits", limit("export-model layers"), "export-model layers")  # at the limit: accepted
    with pytest.raises(InputError, match=r"^x needs about 1025 layers; the limit is 1024 layers \('export"):
        check_size("x", 1025, "export-model layers")
    with pytest.raises(InputError, match=r"needs about 1e\+08 tokens"):
        check_size("y", 10**8, "construction tokens")


def test_constructions_past_the_vocabulary_limit_are_refused_before_any_token_is_built() -> None:
    cap = limit("construction tokens")
    start = time.perf_counter()
    for build, kwargs, tokens in (
        (index_construction, {"max_int": 100_000, "letters": 16}, 100_016),
        (index_construction, {"max_int": 10**8}, 10**8 + 120),
        (retrieval_construction, {"alphabet_size": 100_000}, 100_000 * 100_008),
        (reflexive_construction, {"max_int": cap}, cap + 8),
    ):
        shown = str(tokens) if tokens < 1e6 else f"{tokens:.3g}"
        with pytest.raises(InputError, match=re.escape(f"needs about {shown} tokens")):
            build(**kwargs)
    with pytest.raises(InputError, match=r"the family of index_construction\(max_int=10000, letters=120\)"):
        index_construction(max_int=10_000)  # 10000 cases of 10120 tokens each
    assert time.perf_counter() - start < 5  # not one token was built
    assert len(index_construction(max_int=16, letters=cap - 16).tokens) == cap  # at the limit: built


def test_the_documentation_holds_the_table() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "outputs.md").read_text()
    inside = page.split("<!-- limits:begin -->\n", 1)[1].split("\n<!-- limits:end -->", 1)[0]
    assert inside == limits_table() and all(f"| {name} |" in inside for name in LIMITS)
    assert "letters=16) needs about 100016 tokens; the limit is 32768 tokens" in " ".join(page.split())

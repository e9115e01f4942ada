"""Sampled bounds bracket the exact extremes, and the guided search reaches them on small families."""

from __future__ import annotations

import pytest

from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.paper import retrieval_construction
from ropeproof.theory.errors import InputError
from ropeproof.verify.exact.discrepancy import build_tables, reference_extremes
from ropeproof.verify.exact.families import family_for, sample_family_inputs
from ropeproof.verify.exact.sampled import head_rows, sampled_extremes, search_margin
from ropeproof.verify.testing.strategies import family_inputs


def test_sampled_bounds_bracket_the_exact_values() -> None:
    c = retrieval_construction(4, 0.4, max_int=1)
    head, fam = compile_construction(c), family_for(c)
    tables = build_tables(head, fam, 9)
    rows = head_rows(head)
    for n in (3, 6, 9):
        exact = reference_extremes(tables, n)
        s = sampled_extremes(rows, sample_family_inputs(fam, n, 200, seed=n))
        assert s.count == 200
        assert s.gap_sup_lower <= exact.gap_sup + 1e-12
        assert s.gap_inf_upper >= exact.gap_inf - 1e-12
        assert s.margin_inf_upper >= exact.margin_inf - 1e-12


def test_guided_search_finds_the_exact_worst_margin() -> None:
    c = retrieval_construction(3, 0.9, max_int=1)
    head, fam = compile_construction(c), family_for(c)
    exact = reference_extremes(build_tables(head, fam, 5), 5)
    found, tokens = search_margin(head_rows(head), family_inputs(fam, 5), max_examples=400)
    assert found == pytest.approx(exact.margin_inf, abs=1e-12)
    assert len(tokens) == 5


def test_errors() -> None:
    c = retrieval_construction(3, 0.0, max_int=1)
    rows = head_rows(compile_construction(c))
    with pytest.raises(InputError, match="samples is empty"):
        sampled_extremes(rows, [])
    with pytest.raises(InputError, match="share one length"):
        sampled_extremes(rows, [(("AB", "BA"), 0), (("AB", "BA", "CA"), 0)])

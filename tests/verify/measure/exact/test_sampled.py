"""Sampled bounds bracket the exact extremes, and the guided search reaches them on small families."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import retrieval_construction
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._discrepancy import build_tables, reference_extremes
from ropeproof.verify.measure.exact._families import family_for, sample_family_inputs
from ropeproof.verify.measure.exact._sampled import head_rows, sampled_extremes, search_margin
from ropeproof.verify.testing._strategies import family_inputs


def _brute_row(head, tokens: tuple[str, ...]) -> np.ndarray:
    """Written here, independently: the last query's logits scale * q^T R(j - i) k_j, with R explicit."""
    n, h = len(tokens), head.spec.head_dim
    q = head.W_E[head.token_index(tokens[-1])] @ head.W_Q
    row = np.empty(n)
    for j, tok in enumerate(tokens):
        k = head.W_E[head.token_index(tok)] @ head.W_K
        r = np.eye(h)
        for (a, b), t in zip(head.spec.plane_dims, head.spec.plane_freqs, strict=True):
            c, sn = math.cos((j - (n - 1)) * t), math.sin((j - (n - 1)) * t)
            r[a, a], r[a, b], r[b, a], r[b, b] = c, -sn, sn, c
        row[j] = head.scale * q @ r @ k
    return row


def test_sampled_bounds_bracket_the_exact_values() -> None:
    """Sampled values are the extremes over exactly the inputs sampled (an independent brute force
    over the same inputs), they bound the exact extremes from the right side, and once the exact
    witnesses are among the samples they equal the exact extremes: two-sided.

    Tolerance: logits of unit query/key rows computed along different float64 paths (module kernel,
    explicit rotation) differ by at most 2 (h + 6) u each, so a gap or margin by twice that."""
    c = retrieval_construction(4, 0.4, max_int=1)
    head, fam = compile_construction(c), family_for(c)
    tables = build_tables(head, fam, 9)
    rows = head_rows(head)
    tol = 4 * (head.spec.head_dim + 6) * 2**-53
    for n in (3, 6, 9):
        exact = reference_extremes(tables, n)
        samples = sample_family_inputs(fam, n, 200, seed=n)
        s = sampled_extremes(rows, samples)
        assert s.count == 200
        brute = [_brute_row(head, tuple(t)) for t, _ in samples]
        gaps = [np.sort(r)[-1] - np.sort(r)[-2] for r in brute]
        margins = [r[p] - np.delete(r, p).max() for r, (_, p) in zip(brute, samples, strict=True)]
        assert s.gap_sup_lower == pytest.approx(max(gaps), abs=tol)
        assert s.gap_inf_upper == pytest.approx(min(gaps), abs=tol)
        assert s.margin_inf_upper == pytest.approx(min(margins), abs=tol)
        assert s.gap_sup_lower <= exact.gap_sup + tol
        assert s.gap_inf_upper >= exact.gap_inf - tol
        assert s.margin_inf_upper >= exact.margin_inf - tol
        witnesses = [(w.tokens, w.target_position) for w in exact.witnesses.values()]
        with_witnesses = sampled_extremes(rows, [*samples, *witnesses])
        assert with_witnesses.gap_sup_lower == pytest.approx(exact.gap_sup, abs=tol)
        assert with_witnesses.gap_inf_upper == pytest.approx(exact.gap_inf, abs=tol)
        assert with_witnesses.margin_inf_upper == pytest.approx(exact.margin_inf, abs=tol)


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

"""The positional readout correction's sentence (docs/theory.md section 9.4): on random positional heads,
every Retrieval input enumerated, the corrected statement holds whatever the sign of C; the sentence as
first written fails on the counterexample head; and with C < 0 the first chain's second step fails while
the corrected one (the key of largest weight) holds."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._positional_readout import least_key_term
from ropeproof.verify.studies.errata._readout_sentence import (
    AbstractPositionalHead,
    condensed_sentence_bound,
    corrected_bound,
    counterexample_head,
    pair_constants,
    worst_readout_margin,
)


def _random_head(seed: int, n: int, letters: int, diagonal: float, scale: float) -> AbstractPositionalHead:
    rng = np.random.default_rng(seed)
    v = letters * (letters + 1)
    readout = rng.standard_normal((v, v)) + diagonal * np.eye(v)
    head_tokens = [(left, right) for left in range(letters) for right in range(letters + 1)]
    weights = {}
    for q, (x, y) in enumerate(head_tokens):
        if y < letters and x != y:
            logits = scale * rng.standard_normal(n)  # depends on the query token and the positions only
            weights[q] = np.exp(logits) / np.exp(logits).sum()
    return AbstractPositionalHead(letters, readout, weights)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.sampled_from([2, 3, 4]),
    diagonal=st.sampled_from([0.0, 3.0]),  # 0: the pair constant is often negative
    scale=st.sampled_from([0.1, 1.0, 5.0]),
)
def test_the_corrected_statement_holds_on_random_heads(
    seed: int, n: int, diagonal: float, scale: float
) -> None:
    head = _random_head(seed, n, 2 if n == 4 else 3, diagonal, scale)
    least, mean_form = corrected_bound(head)
    assert worst_readout_margin(head) <= least + 1e-12
    assert least <= mean_form + 1e-12


def test_the_first_sentence_fails_on_the_counterexample() -> None:
    head = counterexample_head()
    margin = worst_readout_margin(head)
    least, mean_form = corrected_bound(head)
    assert isinstance(margin, Fraction)  # exact
    assert margin == Fraction(1, 100) == least and mean_form == Fraction(1, 50)
    assert condensed_sentence_bound(head) == Fraction(1, 1000) < margin


def test_a_negative_pair_constant_needs_the_key_of_largest_weight() -> None:
    """With C < 0, C min_j p_j can exceed C (1 - p_Q)/(n - 1) (the first chain's second step), while
    min_j C p_j = C max_j p_j does not; found on random heads, where C < 0 is common."""
    negatives = 0
    for seed in range(200):
        head = _random_head(seed, 4, 2, 0.0, 1.0)
        for y in range(head.letters):
            for c, _tau, _o in pair_constants(head, y):
                for q in head.query_tokens(asking=y):
                    keys, p_q = head.weights[q][:-1], head.weights[q][-1]
                    mean = c * (1 - p_q) / (len(keys))
                    value, j = least_key_term(c, keys)
                    assert value <= mean + 1e-15 and value == pytest.approx(c * keys[j])
                    if c < 0:
                        negatives += 1
                        first_chain = c * keys.min()
                        assert (
                            first_chain >= mean - 1e-15
                        )  # the first chain's inequality points the other way
                        if not np.allclose(keys, keys.mean()):
                            assert first_chain > mean
    assert negatives > 0


def test_bad_heads_are_named() -> None:
    head = counterexample_head()
    with pytest.raises(InputError, match="readout must be"):
        AbstractPositionalHead(3, np.zeros((2, 2)), head.weights)
    with pytest.raises(InputError, match="lacks the query tokens"):
        AbstractPositionalHead(3, head.readout, {})
    with pytest.raises(InputError, match="key_weights"):
        least_key_term(1.0, np.array([]))

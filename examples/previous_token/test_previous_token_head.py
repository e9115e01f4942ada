"""Property tests of the previous-token head, with the toolkit's hypothesis strategies.

Run them with ``python -m pytest examples/previous_token`` (``conftest.py`` puts this folder on
``sys.path``); ``tests/test_examples.py`` runs them too.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from previous_token_head import PREVIOUS, frequencies, previous_token_head

from ropeproof import (
    CompiledHead,
    RopeAttention,
    RopeSpec,
    answer,
    check_construction,
    compile_construction,
    family_inputs,
    key_permutations,
    rope_heads,
)

ROTATING = (1.0, 0.75, 0.5, 0.25)
"""The variants with at least one rotating plane (NoPE has none)."""


@cache
def compiled(p: float) -> CompiledHead:
    return compile_construction(previous_token_head(p))


def last_row(head: CompiledHead, tokens: tuple[str, ...]) -> torch.Tensor:
    """The query's logits over every key (positions 0 .. n - 1), from the head's torch module."""
    module = RopeAttention.from_head(head, device="cpu")
    return module(torch.as_tensor(head.embed([tokens]))).logits[0, -1]


@settings(max_examples=12, deadline=None, derandomize=True)
@given(p=st.sampled_from(ROTATING), data=st.data())
def test_it_answers_the_previous_word(p: float, data: st.DataObject) -> None:
    """On any input of the family (drawn by ``family_inputs``), the head's answer is the word one back."""
    n = data.draw(st.integers(2, 400), label="n")
    tokens, target = data.draw(family_inputs(PREVIOUS, n), label="input")
    assert target == n - 2
    assert answer(compiled(p), [tokens], device="cpu") == [tokens[n - 2]]


@settings(max_examples=8, deadline=None, derandomize=True)
@given(p=st.sampled_from((*ROTATING, 0.0)), data=st.data())
def test_the_logits_are_the_closed_form(p: float, data: st.DataObject) -> None:
    """The key ``d`` back scores ``sum_k cos((d - 1) theta_k)`` (computed here in numpy, apart from the
    toolkit), whatever the words."""
    n = data.draw(st.integers(2, 300), label="n")
    tokens, _ = data.draw(family_inputs(PREVIOUS, n), label="input")
    d = np.arange(n - 1, -1, -1)  # key j is d = n - 1 - j positions back
    expected = np.cos(np.outer(d - 1, frequencies(p))).sum(axis=1)
    np.testing.assert_allclose(last_row(compiled(p), tokens).numpy(), expected, rtol=0, atol=1e-12)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(data=st.data())
def test_the_head_is_positional(data: st.DataObject) -> None:
    """Permuting the keys' words (``key_permutations``) leaves the query's logits exactly as they were."""
    n = data.draw(st.integers(3, 40), label="n")
    tokens, _ = data.draw(family_inputs(PREVIOUS, n), label="input")
    order = data.draw(key_permutations(n - 1), label="permutation")
    permuted = (*[tokens[i] for i in order], tokens[-1])
    head = compiled(0.75)
    assert torch.equal(last_row(head, tokens), last_row(head, permuted))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(head=rope_heads(), n=st.integers(3, 12), seed=st.integers(0, 2**16))
def test_no_nope_head_singles_out_the_previous_token(head: RopeAttention, n: int, seed: int) -> None:
    """Barbero et al.'s NoPE argument (second-hand), for any head: with no rotation, a sequence of one
    repeated token gives every key the same logit (up to the rounding of the products), so no NoPE head can
    prefer the previous token."""
    nope = RopeAttention(
        head.W_Q.detach(), head.W_K.detach(), head.W_V.detach(), head.W_O.detach(),
        RopeSpec(head.spec.head_dim, rotary_dim=0), head.scale, device="cpu",
    )  # fmt: skip
    x = torch.as_tensor(np.random.default_rng(seed).standard_normal(head.d_model), dtype=torch.float64)
    row = nope(x.expand(1, n, -1)).logits[0, -1]
    torch.testing.assert_close(row, row[0].expand(n), rtol=1e-12, atol=1e-12)


@settings(max_examples=2, deadline=None, derandomize=True)
@given(p=st.sampled_from((0.75, 0.25)))
def test_the_standard_battery(p: float) -> None:
    """``check_construction``: closed form against the module in mpmath, right at every length up to 40
    (from the exact sweep), and exactly positional."""
    check_construction(previous_token_head(p), lengths=(2, 9, 40), examples=4, declared="positional")

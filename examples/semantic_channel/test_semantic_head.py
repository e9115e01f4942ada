"""Property tests of the semantic-channel head and of the token-consistency sampler, with the toolkit's
hypothesis strategies.

Run them with ``python -m pytest examples/semantic_channel`` (``conftest.py`` puts this folder on
``sys.path``); ``tests/test_examples.py`` runs them too.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from semantic_head import FIND, WORDS, frequencies, semantic_head
from token_consistency import flip_probability, score_correlation

from ropeproof import (
    CompiledHead,
    RopeAttention,
    RopeSpec,
    answer,
    apply_rope,
    check_construction,
    compile_construction,
    family_inputs,
    key_permutations,
    rope_specs,
)

HORIZON = {"lowest": 767, "p-RoPE": 2000}
"""The longest length each variant answers every input of (``semantic_claims.py`` certifies both)."""


@cache
def compiled(variant: str) -> CompiledHead:
    return compile_construction(semantic_head(variant))


def last_row(head: CompiledHead, tokens: tuple[str, ...]) -> torch.Tensor:
    """The query's logits over every key (positions 0 .. n - 1), from the head's torch module."""
    module = RopeAttention.from_head(head, device="cpu")
    return module(torch.as_tensor(head.embed([tokens]))).logits[0, -1]


@settings(max_examples=12, deadline=None, derandomize=True)
@given(variant=st.sampled_from(sorted(HORIZON)), data=st.data())
def test_it_finds_the_word_up_to_its_horizon(variant: str, data: st.DataObject) -> None:
    """On any input of the family (``family_inputs``) up to the horizon, the answer is the one earlier
    occurrence of the asked word."""
    n = data.draw(st.integers(2, HORIZON[variant]), label="n")
    tokens, target = data.draw(family_inputs(FIND, n), label="input")
    assert tokens[target] == tokens[-1].removeprefix("?")
    assert answer(compiled(variant), [tokens], device="cpu") == [tokens[target]]


@settings(max_examples=8, deadline=None, derandomize=True)
@given(variant=st.sampled_from(("lowest", "p-RoPE", "highest")), data=st.data())
def test_the_logits_are_the_closed_form(variant: str, data: st.DataObject) -> None:
    """Word ``c'`` ``d`` back scores ``sum_k cos((c' - c) pi/4 - d theta_k)`` for the query ``?w`` of code
    ``c``, and the query itself 0 (computed here in numpy, apart from the toolkit)."""
    n = data.draw(st.integers(2, 300), label="n")
    tokens, _ = data.draw(family_inputs(FIND, n), label="input")
    asked = WORDS.index(tokens[-1].removeprefix("?"))
    codes = np.array([WORDS.index(t) for t in tokens[:-1]])
    d = np.arange(n - 1, 0, -1)  # key j < n - 1 is d = n - 1 - j positions back
    angles = (codes - asked)[:, None] * math.pi / 4 - np.outer(d, frequencies(variant))
    expected = np.append(np.cos(angles).sum(axis=1), 0.0)  # the query's own key is 0
    np.testing.assert_allclose(last_row(compiled(variant), tokens).numpy(), expected, rtol=0, atol=1e-12)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(data=st.data())
def test_the_p_rope_head_is_symbolic(data: st.DataObject) -> None:
    """Under p-RoPE, permuting the keys' words (``key_permutations``) permutes the query's logits the
    same way: attention follows content only (up to the rounding of the products: the logits are
    content-only in exact arithmetic, but a key's dot product may round differently at another row)."""
    n = data.draw(st.integers(3, 60), label="n")
    tokens, _ = data.draw(family_inputs(FIND, n), label="input")
    order = data.draw(key_permutations(n - 1), label="permutation")
    permuted = (*[tokens[i] for i in order], tokens[-1])
    head = compiled("p-RoPE")
    row, moved = last_row(head, tokens), last_row(head, permuted)
    torch.testing.assert_close(moved[:-1], row[:-1][list(order)], rtol=0, atol=1e-12)
    assert moved[-1] == row[-1] == 0.0


@settings(max_examples=2, deadline=None, derandomize=True)
@given(variant=st.sampled_from(("p-RoPE", "lowest")))
def test_the_standard_battery(variant: str) -> None:
    """``check_construction``: closed form against the module in mpmath, and right at every length up to
    40 (from the exact sweep). Not ``declared="symbolic"``: that check compares the permuted logits
    bit for bit, and the p-RoPE head's differ by rounding (``test_the_p_rope_head_is_symbolic`` checks
    it within 1e-12)."""
    check_construction(semantic_head(variant), lengths=(2, 9, 40), examples=4)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(
    spec=rope_specs(max_head_dim=16),
    j=st.lists(st.integers(0, 5000), min_size=2, max_size=2),
    seed=st.integers(0, 2**16),
)
def test_the_exact_reference_is_the_rotated_keys_correlation(spec: RopeSpec, j: list[int], seed: int) -> None:
    """The reference's correlation ``sum_k |w_k|^2 cos(u theta_k) / |w|^2`` is
    ``(R(j1) w) . (R(j2) w) / |w|^2`` with the rotations from the toolkit's ``apply_rope``, for any head
    geometry (``rope_specs``)."""
    w = np.random.default_rng(seed).standard_normal((1, spec.head_dim))
    rotated = apply_rope(torch.as_tensor(w).expand(2, -1)[None], spec, positions=j)[0].numpy()
    direct = rotated[0] @ rotated[1] / (w[0] @ w[0])
    np.testing.assert_allclose(
        score_correlation(spec, w, np.array([j[0] - j[1]])), [direct], rtol=0, atol=1e-9
    )


@settings(max_examples=10, deadline=None, derandomize=True)
@given(spec=rope_specs(max_head_dim=16), n=st.integers(2, 5000), seed=st.integers(0, 2**16))
def test_the_sampler_agrees_with_its_exact_reference(spec: RopeSpec, n: int, seed: int) -> None:
    """For any head geometry (``rope_specs``: layouts, partial rotary, zero planes), the sampled failure
    probability's interval holds the conditional-exact reference computed from the same draws."""
    e = flip_probability(spec, n, samples=4000, seed=seed)
    assert e.low <= e.reference <= e.high


@settings(max_examples=5, deadline=None, derandomize=True)
@given(dims=st.integers(1, 8), n=st.integers(2, 10**6), seed=st.integers(0, 2**16))
def test_without_rotation_no_key_order_ever_changes(dims: int, n: int, seed: int) -> None:
    """NoPE keeps token consistency exactly: with every frequency 0, no sample changes order."""
    e = flip_probability(RopeSpec(2 * dims, 0), n, samples=2000, seed=seed)
    assert e.failures == 0 and e.reference == 0.0

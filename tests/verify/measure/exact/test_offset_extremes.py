"""The logit reading by offset against brute force: every input of the family enumerated, its query row
computed by the torch module (float64), the least and greatest logit at each offset collected."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.theory._family import Family, FamilyCase
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.measure.exact._head_sweep import sweep_head
from ropeproof.verify.measure.exact._offset_extremes import LOGIT_READINGS

MAX_N = 5


def random_head(seed: int) -> CompiledHead:
    rng = np.random.default_rng(seed)
    d, h, vocab = 4, 4, 5
    w_e, w_q, w_k, w_v = (rng.normal(size=s) for s in ((vocab, d), (d, h), (d, h), (d, h)))
    w_o, w_u = rng.normal(size=(h, d)), rng.normal(size=(d, vocab))
    tokens = tuple(f"t{i}" for i in range(vocab))
    return CompiledHead("random", tokens, w_e, w_q, w_k, w_v, w_o, w_u, RopeSpec(h, freqs=[0.9, 0.2]), 1.0)


FAMILY = Family(
    "mixed",
    (
        FamilyCase("fixed", ("t0",), ("t1", "t2"), ("t3", "t4"), 2),
        FamilyCase("anywhere", ("t1",), ("t0",), ("t2", "t3"), None),
        FamilyCase("self", ("t4",), ("t4",), ("t0", "t2"), 0),
    ),
    "three kinds of target distance",
)


def family_inputs(n: int):
    """Every input of length ``n`` in :data:`FAMILY` (query last)."""
    for case in FAMILY.cases:
        if not case.fits(n):
            continue
        d = case.target_distance
        for d_t in [d] if d is not None else range(1, n):
            for q in case.query_tokens:
                targets = case.target_tokens if d_t else [q]
                for tgt in targets:
                    places = [p for p in range(n - 1) if p != n - 1 - d_t]
                    for rest in itertools.product(case.other_tokens, repeat=len(places)):
                        tokens = [""] * n
                        tokens[-1] = q
                        if d_t:
                            tokens[n - 1 - d_t] = tgt
                        for p, t in zip(places, rest, strict=True):
                            tokens[p] = t
                        yield tokens


def brute_force(head: CompiledHead) -> tuple[np.ndarray, np.ndarray]:
    module = RopeAttention.from_head(head, "cpu")
    low, high = np.full(MAX_N, np.inf), np.full(MAX_N, -np.inf)
    for n in range(2, MAX_N + 1):
        seqs = list(family_inputs(n))
        rows = module(torch.as_tensor(np.stack([head.embed(s) for s in seqs]))).logits[:, -1].numpy()
        for m in range(n):
            low[m] = min(low[m], rows[:, n - 1 - m].min())
            high[m] = max(high[m], rows[:, n - 1 - m].max())
    return low, high


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_logit_reading_equals_brute_force(seed: int) -> None:
    """Least / greatest logit at each offset m = 0..4 over every input of length <= 5 of a family with
    a fixed, an any-distance and a reflexive case; each witness pair scores its value in its input."""
    head = random_head(seed)
    sweep = sweep_head(head, MAX_N, FAMILY)
    logits = sweep.logits()
    low, high = brute_force(head)
    assert logits.m.tolist() == list(range(MAX_N))
    np.testing.assert_allclose(logits.logit_inf, low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(logits.logit_sup, high, rtol=0, atol=1e-12)
    errors = sweep.error_bounds("logit_inf")
    assert (np.abs(logits.logit_inf - low) <= errors + 1e-15).all()
    module = RopeAttention.from_head(head, "cpu")
    for m in range(MAX_N):
        for reading in LOGIT_READINGS:
            w = sweep.witness(m, reading)
            assert w.offset == m and w.tokens[-1] == w.query_token and w.tokens[w.key_position] == w.key_token
            assert list(w.tokens) in list(family_inputs(len(w.tokens)))  # an input of the family
            row = module(torch.as_tensor(head.embed(list(w.tokens))[None])).logits[0, -1].numpy()
            assert row[w.key_position] == pytest.approx(w.value, abs=1e-12)
    rows = sweep.logit_rows()
    assert [r["m"] for r in rows] == list(range(MAX_N)) and rows[0]["logit_inf"] == logits.logit_inf[0]


def test_offsets_outside_the_sweep_are_refused() -> None:
    sweep = sweep_head(random_head(0), MAX_N, FAMILY)
    with pytest.raises(InputError, match="offset=5 is outside this sweep"):
        sweep.witness(5, "logit_inf")
    with pytest.raises(InputError, match="reading='logit_mid'"):
        sweep.logits().column("logit_mid")


def test_logits_only_spares_the_length_sweep_and_keeps_the_reading() -> None:
    """sweep_head(..., logits_only=True): the same logit reading, witnesses and error bounds; the length
    extremes are NaN (not computed), not a value."""
    head = random_head(2)
    full, only = sweep_head(head, MAX_N, FAMILY), sweep_head(head, MAX_N, FAMILY, logits_only=True)
    for reading in LOGIT_READINGS:
        np.testing.assert_array_equal(only.logits().column(reading), full.logits().column(reading))
        np.testing.assert_array_equal(only.error_bounds(reading), full.error_bounds(reading))
        assert only.witness(3, reading) == full.witness(3, reading)
    assert np.isnan(only.columns["margin_inf"]).all() and not np.isnan(full.columns["margin_inf"]).all()

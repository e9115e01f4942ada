"""Sweeps of any head: the family a head gets, and the token family against brute force."""

from __future__ import annotations

import contextlib
import functools
import io
import itertools

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._head import CompiledHead, load_head
from ropeproof.constructions._paper import index_construction, reflexive_construction, retrieval_construction
from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.measure.exact._families import Family, FamilyCase, token_family
from ropeproof.verify.measure.exact._head_sweep import head_family, resolve_head_family, sweep_head
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.measure.exact._sweep import sweep_index, sweep_retrieval


def random_vocab_head(vocab: int = 3, seed: int = 0) -> CompiledHead:
    rng = np.random.default_rng(seed)
    d, h = 4, 4
    w_e, w_q, w_k, w_v = (rng.normal(size=s) for s in ((vocab, d), (d, h), (d, h), (d, h)))
    w_o, w_u = rng.normal(size=(h, d)), rng.normal(size=(d, vocab))
    tokens = tuple(f"t{i}" for i in range(vocab))
    return CompiledHead("random", tokens, w_e, w_q, w_k, w_v, w_o, w_u, RopeSpec(h, freqs=[0.9, 0.2]), 1.0)


def brute_force_gaps(head: CompiledHead, n: int) -> tuple[float, float]:
    """Max and min of top-1 minus top-2 of the last row over every length-n sequence of tokens,
    computed by the torch module on each sequence (an oracle independent of the sweep's tables)."""
    module = RopeAttention.from_head(head, "cpu")
    seqs = list(itertools.product(head.tokens, repeat=n))
    rows = module(torch.as_tensor(np.stack([head.embed(list(s)) for s in seqs]))).logits[:, -1]
    top2 = torch.topk(rows, 2, dim=-1).values
    gaps = top2[:, 0] - top2[:, 1]
    return float(gaps.max()), float(gaps.min())


@pytest.mark.parametrize("seed", [0, 1])
def test_token_family_sweep_equals_brute_force(seed: int) -> None:
    head = random_vocab_head(3, seed)
    table = sweep_head(head, 5)
    assert table.family.name == "tokens"
    for n in range(2, 6):
        sup, inf = brute_force_gaps(head, n)
        r = n - 2
        # both sides evaluate the same float64 logits (sums of 4 products of O(1) numbers): 1e-12
        assert table.columns["gap_sup"][r] == pytest.approx(sup, abs=1e-12)
        assert table.columns["gap_inf"][r] == pytest.approx(inf, abs=1e-12)
    w = table.witness(5, "gap_sup")
    assert len(w.tokens) == 5 and set(w.tokens) <= set(head.tokens)


def test_compiled_heads_record_their_construction_family(tmp_path) -> None:
    c = index_construction(theta=0.7, letters=4, max_int=9)
    head = compile_construction(c)
    assert head.family == c.family and resolve_head_family(head)[1] == "recorded"
    loaded = load_head(head.save(tmp_path / "h"))
    assert loaded.family == c.family  # the directory records it
    assert sweep_head(loaded, 10).family_source == "recorded"
    bare = load_head(head.with_family(None).save(tmp_path / "bare"))
    table = sweep_head(bare, 4)
    assert table.family.name == "tokens" and table.family_source == "all-sequences"
    assert "ALL token sequences" in table.title()


def test_legacy_heads_rebuild_their_construction_family() -> None:
    """Heads from older versions recorded only construction_args; the paper family is rebuilt."""
    head = compile_construction(index_construction(theta=0.7, letters=4, max_int=9)).with_family(None)
    assert head_family(head).name == "tokens"  # nothing says how it was built
    head.metadata["construction_args"] = {"theta": 0.7, "letters": 4, "max_int": 9}
    assert head_family(head).name == "index"
    table = sweep_head(head, 10)
    ref = index_sweep([0.7], [1.0], 10)  # the closed-form sweep, 2 sin^2 in float64
    assert np.allclose(table.columns["margin_inf"], ref.margin_inf, rtol=0, atol=1e-14)
    assert [r["n"] for r in table.select(3, 9, 3).rows()] == [3, 6, 9]
    head.metadata["construction_args"] = {"theta": 0.7, "letters": 40, "max_int": 9}  # other tokens
    assert head_family(head).name == "tokens"
    head.metadata["construction_args"] = {"bogus": 1}
    with pytest.raises(InputError, match="construction_args"):
        head_family(head)


def test_token_family_checks_its_arguments() -> None:
    assert [c.query_tokens for c in token_family(["a", "b"], ["b"]).cases] == [("b",)]
    with pytest.raises(InputError, match="query_tokens"):
        token_family(["a"], ["z"])
    with pytest.raises(InputError, match="non-empty"):
        token_family([])


def test_a_fixed_offset_family_starts_at_its_offset_and_runs_at_every_length() -> None:
    """A family with one case at distance 3 has no input below n = 4 (NaN rows) and is complete at
    every length above; its margins equal a brute force over every input."""
    head = random_vocab_head(3, 2)
    fam = Family("back3", (FamilyCase("q", ("t0",), ("t1",), ("t0", "t1", "t2"), 3),), "t1 three back")
    assert fam.min_length() == 4 and fam.max_length() is None
    table = sweep_head(head, 7, family=fam)
    assert np.isnan(table.columns["margin_inf"][:2]).all()
    with pytest.raises(InputError, match="no input of length n=3"):
        table.witness(3, "margin_inf")
    module = RopeAttention.from_head(head, "cpu")
    for n in range(4, 8):
        seqs = [(*s[: n - 4], "t1", *s[n - 4 :], "t0") for s in itertools.product(head.tokens, repeat=n - 2)]
        rows = module(torch.as_tensor(np.stack([head.embed(list(s)) for s in seqs]))).logits[:, -1]
        target = rows[:, n - 4]
        others = torch.cat([rows[:, : n - 4], rows[:, n - 3 :]], dim=1).max(1).values
        assert table.columns["margin_inf"][n - 2] == pytest.approx(float((target - others).min()), abs=1e-12)


ANGLES = [
    5e-324,
    1e-300,
    1e-20,
    1e-8,
    0.0027,
    0.866,
    -0.866,
    3.141592653589793,
    100.0,
    1e6,
    1e12,
    1e100,
    1e300,
]
ANGLES += [1.7e308]
"""From the smallest subnormal to near the largest float64: every angle the direct sweeps accept."""


@pytest.mark.parametrize("theta", ANGLES)
def test_compiled_paper_heads_agree_with_the_direct_sweeps(theta: float) -> None:
    """Issue 32, case 7: a head sweep forms m * theta exactly, as the direct sweeps do, so the compiled
    T_Index, T_Retrieval and Reflexive heads agree with sweep_index, sweep_retrieval and (Reflexive's
    margin is T_Index's min_m 2 sin(m theta / 2)^2) index_sweep within the head sweep's stated error
    bound plus the rounding of the compiled weights (4 u per unit logit) and the direct sweep's own."""
    u = 2.0**-53
    big = 12
    cases = [
        (index_construction(theta=theta, letters=2, max_int=big - 1), sweep_index(theta, big).columns),
        (retrieval_construction(3, theta, max_int=1), sweep_retrieval(3, theta, big).columns),
        (
            reflexive_construction(theta=theta, letters=2),
            {"margin_inf": index_sweep([theta], [1.0], big).margin_inf},
        ),
    ]
    for c, direct in cases:
        table = sweep_head(compile_construction(c), big)
        assert table.family_source == "recorded" and table.family.name == c.name
        for q in ("margin_inf", "gap_sup"):
            if q not in direct:
                continue
            err = table.error_bounds(q) + 4 * u * 2 + 4 * u  # weights' rounding (both logits), direct's
            diff = np.abs(table.columns[q] - np.asarray(direct[q], dtype=float))
            assert (diff <= err).all(), (c.name, q, float(diff.max()), float(err.max()))
            assert (err < 1e-13).all()


def test_the_index_head_at_1e300_in_both_commands(tmp_path) -> None:
    """The issue's case: sweep --head of the index head compiled at theta = 1e300 gave 7.95e-7 at
    n = 8 where sweep index (and mpmath: min_m 2 sin(m theta / 2)^2 = 0.0358) give 0.0358."""
    import json

    from ropeproof._cli import main

    with mpmath.workprec(3000):
        truth = min(2 * mpmath.sin(m * mpmath.mpf(1e300) / 2) ** 2 for m in range(1, 8))
    assert main(["compile", "index", "--theta", "1e300", "--out", str(tmp_path / "h")]) == 0
    outs = []
    for argv in (["sweep", "--head", str(tmp_path / "h")], ["sweep", "index", "--theta", "1e300"]):
        with contextlib.redirect_stdout(io.StringIO()) as buf:
            assert main([*argv, "--lengths", "8:8", "--json"]) == 0
        outs.append(json.loads(buf.getvalue())["rows"][0]["margin_inf"])
    assert abs(outs[0] - float(truth)) < 1e-14 and abs(outs[1] - float(truth)) < 1e-14
    assert float(truth) == pytest.approx(0.0358, abs=1e-4)


def test_query_tokens_with_different_vectors_are_swept_as_their_union() -> None:
    """One case whose query may be t0 or t1 (different query vectors): the sweep is the worse of the
    two, equal to a brute force over every input."""
    head = random_vocab_head(3, 4)
    both = Family("two", (FamilyCase("q", ("t0", "t1"), ("t2",), ("t0", "t1", "t2"), 1),), "t2 one back")
    table = sweep_head(head, 5, family=both)
    module = RopeAttention.from_head(head, "cpu")
    for n in range(2, 6):
        seqs = [(*s, "t2", q) for q in ("t0", "t1") for s in itertools.product(head.tokens, repeat=n - 2)]
        rows = module(torch.as_tensor(np.stack([head.embed(list(s)) for s in seqs]))).logits[:, -1]
        target = rows[:, n - 2]
        others = torch.cat([rows[:, : n - 2], rows[:, n - 1 :]], dim=1).max(1).values
        assert table.columns["margin_inf"][n - 2] == pytest.approx(float((target - others).min()), abs=1e-12)


_THREE_BACK_HEAD = compile_construction(retrieval_construction(3, 0.4, max_int=1))


@settings(max_examples=40, deadline=None)
@given(start=st.integers(2, 30), span=st.integers(0, 30), step=st.integers(1, 40))
def test_select_keeps_every_step_and_always_the_last_length(start: int, span: int, step: int) -> None:
    """``select(A, B, STEP)`` (``--lengths A:B:STEP``) is ``A, A + STEP, ...`` and always ``B`` itself."""
    stop = start + span
    table = _sweep_to_61().select(start, stop, step)
    expected = sorted({*range(start, stop + 1, step), stop})
    assert table.columns["n"].tolist() == expected


@functools.cache
def _sweep_to_61():
    return sweep_head(_THREE_BACK_HEAD, 61)


def test_sweep_head_takes_a_head_directory_as_check_bound_does(tmp_path) -> None:
    """A head directory is read (the same sweep as its loaded head); None or another object is an
    InputError naming what is accepted, not an AttributeError."""
    head = compile_construction(index_construction(theta=0.866, max_int=8, letters=2))
    head.save(tmp_path / "h")
    from_path, loaded = sweep_head(str(tmp_path / "h"), 8), sweep_head(load_head(tmp_path / "h"), 8)
    assert np.array_equal(from_path.columns["margin_inf"], loaded.columns["margin_inf"], equal_nan=True)
    for bad in (None, 5):
        with pytest.raises(InputError, match="head must be a CompiledHead or a head directory"):
            sweep_head(bad, 8)  # type: ignore[arg-type]

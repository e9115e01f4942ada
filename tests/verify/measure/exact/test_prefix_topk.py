"""Streaming prefix top-k against sorting, whatever the block cuts and ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.verify.measure.exact._prefix_topk import RunningTopK


def sorted_prefix(values: list[float], m: int, k: int, largest: bool) -> tuple[list[float], list[int]]:
    pref = values[: m + 1]
    order = sorted(range(m + 1), key=lambda j: (-pref[j] if largest else pref[j], j))[:k]
    fill = -np.inf if largest else np.inf
    return [pref[j] for j in order] + [fill] * (k - len(order)), order + [-1] * (k - len(order))


VALUES = st.one_of(
    st.lists(st.integers(0, 4).map(float), min_size=1, max_size=200),  # ties
    st.lists(st.floats(-3, 3, allow_nan=False), min_size=1, max_size=200),
)
"""Value streams of the running top-k tests."""


@settings(max_examples=60)
@given(
    values=VALUES,
    k=st.integers(1, 4),
    largest=st.booleans(),
    cuts=st.lists(st.integers(0, 200), max_size=4),
)
def test_running_topk_against_sorting(values, k, largest, cuts) -> None:
    x = np.array(values)
    bounds = [0, *sorted(c for c in cuts if c < len(values)), len(values)]
    run = RunningTopK(k, largest)
    outs = [run.feed_with(x[a:b], np.arange(a, b, dtype=np.float64)) for a, b in itertools.pairwise(bounds)]
    top = np.concatenate([o[0] for o in outs if o[0].size])
    idx = np.concatenate([o[1] for o in outs if o[1].size])
    payload = np.concatenate([o[2] for o in outs if o[2] is not None])[:, :, 0]
    for m in range(len(values)):
        want_v, want_i = sorted_prefix(values, m, k, largest)
        assert top[m].tolist() == want_v and idx[m].tolist() == want_i
        # the payload travels with its entry (here: the entry's own index)
        assert [int(p) if i >= 0 else -1 for p, i in zip(payload[m], idx[m], strict=True)] == want_i


@settings(max_examples=60)
@given(
    values=VALUES,
    k=st.integers(1, 4),
    largest=st.booleans(),
    cuts=st.lists(st.integers(1, 199), max_size=4),
)
def test_states_written_out_are_the_prefix_top_k(values, k, largest, cuts) -> None:
    """feed_states: every position's state ``top[src]``, ``index[src]`` (and its payload) is the sorted
    prefix's, ties included, whatever the block cuts; at most one state per position plus the carry."""
    x = np.array(values)
    bounds = sorted({0, *(c for c in cuts if c < len(values)), len(values)})
    run = RunningTopK(k, largest)
    for a, b in itertools.pairwise(bounds):
        src, top, idx, pay = run.feed_states(x[a:b], np.arange(a, b, dtype=np.float64))
        assert src.shape == (b - a,) and top.shape[0] == idx.shape[0] <= b - a + 1
        assert pay is not None
        for j, m in enumerate(range(a, b)):
            want_v, want_i = sorted_prefix(values, m, k, largest)
            assert top[src[j]].tolist() == want_v and idx[src[j]].tolist() == want_i
            assert [
                int(p) if i >= 0 else -1 for p, i in zip(pay[src[j], :, 0], want_i, strict=True)
            ] == want_i


@pytest.mark.parametrize("kind", ["increasing", "decreasing", "periodic", "walk"])
def test_long_streams_against_sorting_at_sampled_rows(kind: str) -> None:
    """Monotone runs (filled directly), periodic and random-walk data over 3 blocks of 20000."""
    rng = np.random.default_rng(5)
    n = 60000
    x = {
        "increasing": np.arange(n, dtype=np.float64),
        "decreasing": -np.arange(n, dtype=np.float64),
        "periodic": np.cos(0.0027 * np.arange(n)),
        "walk": np.cumsum(rng.normal(size=n)),
    }[kind]
    run = RunningTopK(3)
    got = [run.feed(x[a : a + 20000]) for a in range(0, n, 20000)]
    top, idx = np.concatenate([g[0] for g in got]), np.concatenate([g[1] for g in got])
    values = x.tolist()
    for m in [*rng.integers(0, n, 40).tolist(), 0, 1, 2, n - 1]:
        want_v, want_i = sorted_prefix(values, m, 3, True)
        assert top[m].tolist() == want_v and idx[m].tolist() == want_i

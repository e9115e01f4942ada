"""hypothesis strategies for property-testing RoPE heads and constructions.

They are public: ``from ropeproof import family_inputs, key_permutations, rope_specs, rope_heads,
index_params, retrieval_params``. Use them in your own tests::

    from hypothesis import given
    from ropeproof import rope_specs

    @given(spec=rope_specs(max_head_dim=16))
    def test_mine(spec): ...
"""

from __future__ import annotations

from hypothesis import strategies as st

from ropeproof.theory._rope_spec import LAYOUTS, RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._random_heads import random_head


@st.composite
def rope_specs(
    draw: st.DrawFn,
    max_head_dim: int = 64,
    layouts: tuple[str, ...] = LAYOUTS,
    max_abs_freq: float = 4.0,
    allow_partial: bool = True,
) -> RopeSpec:
    """Random :class:`RopeSpec`: even ``head_dim <= max_head_dim``, partial rotary, either a base
    spectrum or explicit frequencies in ``[-max_abs_freq, max_abs_freq]`` with zeros likely."""
    head_dim = 2 * draw(st.integers(1, max_head_dim // 2))
    rotary_dim = 2 * draw(st.integers(0, head_dim // 2)) if allow_partial else head_dim
    layout = draw(st.sampled_from(layouts))
    if draw(st.booleans()):
        return RopeSpec(head_dim, rotary_dim, base=draw(st.floats(2.0, 1e5)), layout=layout)
    freq = st.one_of(st.just(0.0), st.floats(-max_abs_freq, max_abs_freq, allow_nan=False))
    freqs = draw(st.lists(freq, min_size=rotary_dim // 2, max_size=rotary_dim // 2))
    return RopeSpec(head_dim, rotary_dim, freqs=freqs, layout=layout)


@st.composite
def index_params(draw: st.DrawFn, max_int: int = 16, max_letters: int = 8) -> dict:
    """Keyword arguments for :func:`ropeproof.constructions._paper.index_construction` (theta in (0, pi))."""
    return {
        "theta": draw(st.floats(0.05, 3.0, allow_nan=False)),
        "max_int": draw(st.integers(1, max_int)),
        "letters": draw(st.integers(1, max_letters)),
        "value_weight": draw(st.floats(1.5, 4.0)),
    }


@st.composite
def retrieval_params(draw: st.DrawFn, max_alphabet: int = 8, max_theta: float = 0.05) -> dict:
    """Keyword arguments for :func:`ropeproof.constructions._paper.retrieval_construction`."""
    return {
        "alphabet_size": draw(st.integers(2, max_alphabet)),
        "theta": draw(st.one_of(st.just(0.0), st.floats(0.0, max_theta, allow_nan=False))),
        "max_int": draw(st.integers(1, 4)),
    }


@st.composite
def family_inputs(draw: st.DrawFn, family, n: int) -> tuple[tuple[str, ...], int]:
    """A random length-``n`` input of a :class:`~ropeproof.verify.measure.exact._families.Family`: ``(tokens,
    target_position)``."""
    from ropeproof.verify.measure.exact._families import family_input

    cases = family.cases_at(n)
    if not cases:
        raise ValueError(f"the {family.name} family has no input of length n={n}")
    ci = draw(st.sampled_from(cases))
    d_t = draw(st.integers(1, n - 1))
    picks = draw(st.lists(st.integers(0, 1 << 20), min_size=n, max_size=n))
    return family_input(family, n, ci, d_t, picks)


def key_permutations(n_keys: int) -> st.SearchStrategy[list[int]]:
    """Permutations of the ``n_keys`` non-query positions ``0 .. n_keys - 1``."""
    return st.permutations(list(range(n_keys)))


@st.composite
def rope_heads(draw: st.DrawFn, max_head_dim: int = 16, max_d_model: int = 8) -> RopeAttention:
    """Random RoPE heads: a :func:`rope_specs` spec, ``d_model <= max_d_model``, random weights and scale."""
    spec = draw(rope_specs(max_head_dim=max_head_dim))
    d_model = draw(st.integers(1, max_d_model))
    scale = draw(st.floats(0.05, 2.0))
    return random_head(spec, d_model, draw(st.integers(0, 2**16)), scale)

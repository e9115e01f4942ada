"""hypothesis strategies for property-testing RoPE heads and constructions.

Import them in your own tests::

    from hypothesis import given
    from verify.strategies import rope_specs

    @given(spec=rope_specs(max_head_dim=16))
    def test_mine(spec): ...
"""

from __future__ import annotations

from hypothesis import strategies as st

from verify.rope import LAYOUTS, RopeSpec


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

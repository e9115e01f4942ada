"""The architecture facts: lookup by name, registration, validation, and each architecture's RoPE spec
against the spectrum evaluated in mpmath."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError, RopeproofError
from ropeproof.theory._architectures import (
    ARCHITECTURES,
    GPTJ,
    GPTJ_BASE,
    LLAMA,
    Architecture,
    architecture,
    register_architecture,
)


def test_the_built_in_facts() -> None:
    assert list(ARCHITECTURES) == ["gptj", "llama"]
    assert (GPTJ.layout, GPTJ.fixed_base, GPTJ.partial_rotary, GPTJ.separate_head_dim) == (
        "interleaved",
        10000.0,
        True,
        False,
    )
    assert (LLAMA.layout, LLAMA.fixed_base, LLAMA.partial_rotary, LLAMA.separate_head_dim) == (
        "half",
        None,
        False,
        True,
    )
    assert GPTJ.norm_subtracts_mean and not LLAMA.norm_subtracts_mean
    assert GPTJ_BASE == 10000.0


def test_lookup_is_case_insensitive_and_names_the_accepted() -> None:
    assert architecture("GPTJ") is GPTJ and architecture("llama") is LLAMA
    with pytest.raises(InputError, match=r"arch='neox' is unknown; accepted: \['gptj', 'llama'\]"):
        architecture("neox")

    class Custom(RopeproofError):
        pass

    with pytest.raises(Custom, match="arch=3 is unknown"):
        architecture(3, Custom)


def test_registration() -> None:
    assert register_architecture(GPTJ) is GPTJ  # the same facts again: a no-op
    assert list(ARCHITECTURES) == ["gptj", "llama"]
    other = Architecture("gptj", "GPT-J", "half", 10000.0, True, False, "layernorm")
    with pytest.raises(InputError, match="'gptj' is already registered with other facts"):
        register_architecture(other)
    with pytest.raises(InputError, match="must be an Architecture"):
        register_architecture("gptj")  # type: ignore[arg-type]
    neox = Architecture("neox_test", "NeoX", "half", None, True, False, "layernorm")
    try:
        assert register_architecture(neox) is neox and architecture("neox_test") is neox
    finally:
        ARCHITECTURES.pop("neox_test")
    assert list(ARCHITECTURES) == ["gptj", "llama"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"layout": "adjacent"}, "layout='adjacent' is unknown"),
        ({"norm": "batchnorm"}, "norm='batchnorm' is unknown"),
        ({"fixed_base": 0.0}, r"fixed_base=0.0 must be finite and > 0"),
        ({"fixed_base": math.inf}, r"fixed_base=inf must be finite and > 0"),
        ({"name": ""}, "name='' must be a non-empty string"),
    ],
)
def test_facts_are_validated(fields: dict, message: str) -> None:
    base = {
        "name": "x",
        "label": "X",
        "layout": "half",
        "fixed_base": None,
        "partial_rotary": False,
        "separate_head_dim": True,
        "norm": "rmsnorm",
    }
    with pytest.raises(InputError, match=message):
        Architecture(**(base | fields))


@given(
    st.sampled_from([GPTJ, LLAMA]),
    st.integers(1, 16),
    st.integers(0, 8),
    st.floats(1.5, 1e6),
)
def test_rope_spec_is_the_spectrum_in_the_architectures_layout(
    facts: Architecture, half_rotary: int, passing: int, base: float
) -> None:
    rotary, head_dim = 2 * half_rotary, 2 * (half_rotary + passing)
    spec = facts.rope_spec(head_dim, rotary, base)
    assert (spec.head_dim, spec.rotary_dim, spec.layout) == (head_dim, rotary, facts.layout)
    u = 2.0**-53
    for k in range(half_rotary):
        # float64: the exponent -2k/rotary rounds (relative u), which moves base^e by |e ln base| u, and
        # pow adds about one ulp; the bound doubles that. The reference is mpmath at 40 digits.
        e = 2 * k / rotary
        with mpmath.workdps(40):
            exact = mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * k) / rotary)
        assert abs(spec.plane_freqs[k] - exact) <= 2 * (e * math.log(base) + 2) * u * exact
    assert all(f == 0 for f in spec.plane_freqs[half_rotary:])
    a, b = spec.plane_dims[half_rotary - 1]
    assert (a, b) == (
        (2 * half_rotary - 2, 2 * half_rotary - 1) if facts is GPTJ else (half_rotary - 1, rotary - 1)
    )


def test_an_infinite_base_leaves_one_rotating_plane() -> None:
    """``base = inf``: ``inf ** 0 = 1`` and ``inf ** -x = 0``, so only plane 0 rotates (at 1)."""
    spec = LLAMA.rope_spec(8, 8, math.inf)
    assert spec.plane_freqs.tolist() == [1.0, 0.0, 0.0, 0.0] and spec.layout == "half"

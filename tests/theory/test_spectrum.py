"""Spectra: from numbers, from sympy-exact expressions, from a base (as RopeSpec makes it) and from a model
configuration (against transformers' own ``ROPE_INIT_FUNCTIONS``, each scaling type)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.theory._spectrum import Spectrum


def test_from_base_is_rope_spec_frequencies_bit_for_bit() -> None:
    for base, dim in [(10000.0, 128), (310000.0, 64), (2.5, 8)]:
        s = Spectrum.from_base(base, dim)
        np.testing.assert_array_equal(s.freqs, RopeSpec(dim, base=base).rotating_freqs)
        assert s.amps == (1.0,) * (dim // 2) and s.exact_freqs is None


def test_exact_base_rounds_each_real_to_nearest() -> None:
    s = Spectrum.from_base(3.1e5, 128, exact=True)
    assert s.exact_freqs[3] == sp.Rational(310000) ** sp.Rational(-3, 64)  # the decimal, read exactly
    for e, f in zip(s.exact_freqs, s.freqs, strict=True):
        v = sp.N(e, 50)
        lower, upper = math.nextafter(f, -math.inf), math.nextafter(f, math.inf)
        assert abs(v - f) <= abs(v - lower) and abs(v - f) <= abs(v - upper)


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(InputError, match="freqs"):
        Spectrum(())
    with pytest.raises(InputError, match="amps must be 2"):
        Spectrum((1.0, 2.0), (1.0,))
    with pytest.raises(InputError, match="dim"):
        Spectrum.from_base(10000, 7)
    with pytest.raises(InputError, match="base"):
        Spectrum.from_base(-1.0, 8)
    with pytest.raises(InputError, match="rounded to nearest"):
        Spectrum((0.5,), None, (sp.Rational(1, 3),))
    with pytest.raises(InputError, match="rope_scaling type 'longrope'"):
        Spectrum.from_config({"head_dim": 8, "rope_scaling": {"rope_type": "longrope"}})


SCALINGS = [
    None,
    {"rope_type": "linear", "factor": 4.0},
    {"rope_type": "dynamic", "factor": 2.0},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048},
    {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096, "beta_fast": 16},
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 1024,
    },
]


@pytest.mark.parametrize("scaling", SCALINGS)
@pytest.mark.parametrize("partial", [1.0, 0.5])
def test_from_config_matches_transformers(scaling: dict | None, partial: float) -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    fields = {
        "hidden_size": 512,
        "num_attention_heads": 4,
        "max_position_embeddings": 8192,
        "rope_theta": 500000.0,
        "partial_rotary_factor": partial,
    }
    rope = {"rope_theta": 500000.0, "partial_rotary_factor": partial, **(scaling or {"rope_type": "default"})}
    config = transformers.LlamaConfig(**fields, rope_parameters=rope)
    ours = Spectrum.from_config({**fields, "rope_scaling": scaling})
    kind = rope["rope_type"]
    if kind == "default":
        dim = int(128 * partial)
        expected = 1.0 / 500000.0 ** (np.arange(0, dim, 2) / dim)
        np.testing.assert_allclose(ours.freqs, expected, rtol=1e-15)
        return
    theirs, attention = ROPE_INIT_FUNCTIONS[kind](config, "cpu")
    np.testing.assert_allclose(ours.freqs, theirs.double().numpy(), rtol=3e-6)  # transformers: float32
    if kind == "yarn":
        assert ours.source["attention_factor"] == pytest.approx(attention, rel=1e-12)


def test_dynamic_ntk_raises_the_base_only_past_the_trained_length() -> None:
    config = {
        "head_dim": 64,
        "max_position_embeddings": 4096,
        "rope_scaling": {"type": "dynamic", "factor": 2.0},
    }
    default = Spectrum.from_config({"head_dim": 64, "max_position_embeddings": 4096})
    assert Spectrum.from_config(config).freqs == default.freqs  # seq_len defaults to the trained length
    np.testing.assert_allclose(default.freqs, Spectrum.from_base(10000.0, 64).freqs, rtol=4e-16)
    longer = Spectrum.from_config(config, seq_len=8192)
    assert longer.source["dynamic_base"] == pytest.approx(10000 * 3 ** (64 / 62), rel=1e-14)
    assert all(a <= b for a, b in zip(longer.freqs, Spectrum.from_base(10000.0, 64).freqs, strict=True))


def test_from_config_reads_a_transformers_config_object() -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope = {
        "rope_type": "llama3",
        "rope_theta": 500000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 1024,
    }
    config = transformers.LlamaConfig(hidden_size=512, num_attention_heads=4, rope_parameters=rope)
    ours = Spectrum.from_config(config)
    theirs, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    assert ours.source["rope_type"] == "llama3" and ours.size == 64
    np.testing.assert_allclose(ours.freqs, theirs.double().numpy(), rtol=3e-6)

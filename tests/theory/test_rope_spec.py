"""The numeric RoPE spec's serialisation: one ``to_dict``/``from_dict`` pair, exact round trips."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given

from ropeproof.machinery._errors import RopeSpecError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.testing._strategies import rope_specs


def test_to_dict_golden() -> None:
    spec = RopeSpec(8, rotary_dim=4, base=100.0, layout="half")
    assert spec.to_dict() == {"head_dim": 8, "rotary_dim": 4, "freqs": [1.0, 0.1], "layout": "half"}


@given(spec=rope_specs(max_head_dim=32))
def test_json_round_trip_is_exact(spec: RopeSpec) -> None:
    back = RopeSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert back.head_dim == spec.head_dim and back.rotary_dim == spec.rotary_dim
    assert back.layout == spec.layout
    np.testing.assert_array_equal(back.plane_freqs, spec.plane_freqs)  # bit for bit
    assert back.plane_dims == spec.plane_dims


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ([1, 2], "must be a mapping"),
        ({"head_dim": 4, "rotary_dim": 4, "layout": "half"}, r"keys \['freqs'\]"),
        ({"head_dim": 4, "rotary_dim": 4, "freqs": [1.0], "layout": "half"}, "needs exactly"),
        ({"head_dim": 4, "rotary_dim": 4, "freqs": [1.0, 2.0], "layout": "diagonal"}, "layout"),
    ],
)
def test_from_dict_errors(data: object, match: str) -> None:
    with pytest.raises(RopeSpecError, match=match):
        RopeSpec.from_dict(data)


def test_base_with_infinite_frequencies_is_refused() -> None:
    with pytest.raises(RopeSpecError, match=r"base=5e-324 gives infinite frequencies"):
        RopeSpec(128, base=5e-324)
    tiny = RopeSpec(128, base=1e-300)  # the message's "any base >= 1e-300 is": its largest frequency
    assert np.all(np.isfinite(tiny.plane_freqs)) and tiny.plane_freqs.max() <= 1e300
    for head_dim in (2, 4, 256):
        assert np.all(np.isfinite(RopeSpec(head_dim, base=1e-300).plane_freqs))

"""Device and dtype resolution, the dtype rounding bounds, and the numpy reference logits."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._devices import DTYPE_NAMES, DTYPES, dtype_name, resolve_device, resolve_dtype
from ropeproof.verify.kernel._reference import reference_logits
from ropeproof.verify.kernel._resolution import (
    UNIT_ROUNDOFFS,
    gap_resolution,
    logit_error_bound,
    unit_roundoff,
)


def test_resolve_device_and_dtype() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for name, dt in DTYPES.items():
        assert resolve_dtype(name) is dt and dtype_name(dt) == name
        assert dtype_name(name) == name  # a name is its own (issue 32, case 10: it was "not supported")
    for bad in ("float8", torch.int64):
        with pytest.raises(InputError, match="accepted: \\['bfloat16', 'float16', 'float32', 'float64'\\]"):
            dtype_name(bad)
    with pytest.raises(InputError, match="accepted: 'auto', 'cpu', 'cuda'"):
        resolve_device("gpu0")
    for bad in ("meta", "cpu:1", torch.device("meta")):  # torch parses them; the toolkit cannot run there
        with pytest.raises(InputError, match="accepted: 'auto', 'cpu', 'cuda'"):
            resolve_device(bad)
    if torch.cuda.is_available():
        with pytest.raises(InputError, match="does not exist"):
            resolve_device(f"cuda:{torch.cuda.device_count()}")
    with pytest.raises(InputError, match=r"dtype='float8' is unknown"):
        resolve_dtype("float8")
    with pytest.raises(InputError, match="not supported"):
        resolve_dtype(torch.int64)


def test_unit_roundoffs_are_the_ieee_values() -> None:
    assert unit_roundoff("float64") == 2.0**-53
    assert unit_roundoff("float32") == 2.0**-24
    assert unit_roundoff("bfloat16") == 2.0**-8
    assert unit_roundoff("float16") == 2.0**-11
    for name, dt in DTYPES.items():  # the table the name path reads is torch's own finfo
        assert UNIT_ROUNDOFFS[name] == torch.finfo(dt).eps / 2 == unit_roundoff(dt)


def test_dtype_names_are_checked_without_torch() -> None:
    """A dtype given by name is named and checked without torch (the exact sweeps stay numpy-only)."""
    assert list(DTYPE_NAMES) == list(DTYPES)
    assert [dtype_name(n) for n in DTYPE_NAMES] == list(DTYPE_NAMES)
    with pytest.raises(InputError, match=r"dtype='float8' is unknown"):
        dtype_name("float8")
    with pytest.raises(InputError, match="not supported"):
        dtype_name(torch.int64)


def test_error_bounds_golden() -> None:
    # ((head_dim + 6) u + 2 min(8 u64 |angle|, 1e-14)) * magnitude, and twice that for a gap: the angles
    # are reduced mod 2 pi (verify/kernel/_angles.py), so a large angle costs at most 1e-14
    assert logit_error_bound("float32", 2, 3.0) == 8 * 2.0**-24 * 3.0
    assert logit_error_bound("float64", 4, 1.0, max_angle=1e6) == 10 * 2.0**-53 + 2 * 1e-14
    assert logit_error_bound("float64", 4, 1.0, max_angle=0.5) == 10 * 2.0**-53 + 2 * 8 * 2.0**-53 * 0.5
    assert gap_resolution("bfloat16", 2) == 2 * 8 * 2.0**-8


def test_reference_logits_golden() -> None:
    # one plane at theta = 0.5: q = (1, 0) at i, k = (0, 1) at j -> q^T rho((j - i) 0.5) k = -sin((j - i) 0.5)
    spec = RopeSpec(2, freqs=[0.5])
    q = np.array([[1.0, 0.0]] * 3)
    k = np.array([[0.0, 1.0]] * 3)
    got = reference_logits(q, k, spec)
    want = np.array([[-math.sin((j - i) * 0.5) for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)

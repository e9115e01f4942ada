"""Export weights are checked finite in the dtype they are written in."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ropeproof.verify.interop._errors import ExportError
from ropeproof.verify.interop.hf._finite_weights import finite_weights


def test_weights_are_cast_and_checked() -> None:
    out = finite_weights({"a": np.array([1.0, -2.0]), "b": [[3e38]]}, torch.float32, "hint")
    assert out["a"].dtype == torch.float32 and out["a"].tolist() == [1.0, -2.0]
    with pytest.raises(ExportError, match=r"weight b is not finite in float32 \(largest magnitude 1e\+39; "):
        finite_weights({"a": [1.0], "b": [[1e39, 2.0]]}, torch.float32, "lower it")
    assert finite_weights({"b": [[1e39]]}, torch.float64, "x")["b"].item() == 1e39
    with pytest.raises(ExportError, match=r"weight n is not finite in float64 \(largest magnitude 1; "):
        finite_weights({"n": [1.0, float("nan")]}, torch.float64, "fix")

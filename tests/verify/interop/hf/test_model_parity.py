"""Per-layer attention parity of exported checkpoints with the ropeproof module, per dtype, within the
derived tolerances (the measured maxima are printed)."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from ropeproof.constructions._multihop_compile import compile_program
from ropeproof.constructions._multihop_programs import checkpoint_program
from ropeproof.machinery._errors import InputError
from ropeproof.verify.interop.hf._model_export import export_model
from ropeproof.verify.interop.hf._model_parity import FLOAT32_UNIT, model_parity, parity_table
from ropeproof.verify.measure._tasks import letter_task, number_task


@pytest.mark.parametrize("arch", ["gptj", "llama"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_per_layer_parity(arch: str, dtype: str) -> None:
    for task, make in (("number", number_task), ("letter", letter_task)):
        model = compile_program(checkpoint_program(task, hops=4, layers=12))
        ex = export_model(model, arch, dtype=dtype)
        par = model_parity(ex, model, [t.tokens for t in make(16, seed=3)])
        print(arch, dtype, task, par.summary())
        assert par.ok and par.answers_agree
        assert len(parity_table(par)) == 12 and all(row["ok"] for row in parity_table(par))
        # the score tolerance is float32-level (HF's rotary, q.k and softmax run in float32)
        assert all(p.score_tol < 4.0 for p in par.layers)
        if dtype == "float64" and arch == "gptj":
            # only q.k is float32: everything else (norm bypass, readout) is float64
            assert par.logit_diff < 1e-9
        assert FLOAT32_UNIT == 2.0**-24


def test_parity_needs_eager_attention() -> None:
    model = compile_program(checkpoint_program("number", hops=1, layers=2))
    ex = export_model(model, "gptj", attn_implementation="sdpa")
    with pytest.raises(InputError, match="eager"):
        model_parity(ex, model, [t.tokens for t in number_task(2, hops=(1,), seed=0)])
    with pytest.raises(InputError, match="empty"):
        model_parity(ex, model, [])

"""What an exported checkpoint states: certified for the float64 model in exact arithmetic (the width-6
number checkpoint to 44 tokens, where the certificate's first version stopped at 19), the float32 file
sampled with transformers alone up to that horizon, transformers' float32 RoPE table measured against the
exact angles (7.8e-4 rad below position 10^4 on the width-128 GPT-J spectrum, inside the float32 bound),
and one line that says which is which."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")

from ropeproof.constructions._multihop_compile import compile_program  # noqa: E402
from ropeproof.constructions._multihop_programs import checkpoint_program  # noqa: E402
from ropeproof.verify.interop.hf._checkpoint_certificate import (  # noqa: E402
    certificate_label,
    relabel,
    rope_table_record,
    sample_lengths,
)
from ropeproof.verify.interop.hf._converters import converter  # noqa: E402
from ropeproof.verify.interop.hf._model_export import MODEL_INFO_FILE, export_model  # noqa: E402
from ropeproof.verify.interop.hf._placement import spectrum_rtol  # noqa: E402
from ropeproof.verify.measure.exact._multihop_certified import BASIC, certified_horizon  # noqa: E402
from ropeproof.verify.studies.beyond._checkpoint_solvers import checkpoint_spec  # noqa: E402

WIDTH6 = "certified for the float64 model (exact arithmetic) to 44 tokens; float32 checkpoint"


@pytest.fixture(scope="module")
def number6():
    return compile_program(checkpoint_program("number", hops=4, layers=12))


def test_the_width6_checkpoint_is_certified_for_the_float64_model_and_sampled(
    number6, tmp_path: Path
) -> None:
    ex = export_model(number6, "gptj", max_positions=64)
    record = ex.info.metadata["certificate"]
    assert record["certified_horizon"] == record["certificate_horizon"] == 44  # the previous number holds
    assert certified_horizon(number6, 4, max_n=64, **BASIC).horizon == 19  # the first version's
    assert record["certified_for"] == "the float64 model (exact arithmetic)"
    checkpoint = record["checkpoint"]
    assert (
        checkpoint["certified"] is False and checkpoint["dtype"] == "float32" and checkpoint["sample"] is None
    )
    assert record["label"] == f"{WIDTH6} not sampled"
    # theta = 1 is plane 0 of GPT-J's spectrum: inv_freq = 1 and the angles p are exact in float32, so only
    # float32's sin/cos rounding is left (below 2 ulp of 1)
    assert checkpoint["rope_table"]["positions"] == 44
    assert 0 < checkpoint["rope_table"]["max_angle_error_rad"] < 2.0**-22
    path = ex.save_pretrained(tmp_path / "m")
    record = ex.sample_saved(path)
    sample = record["checkpoint"]["sample"]
    assert sample_lengths(44) == {17: 4, 27: 2, 44: 1}  # [A]'s length, the geometric middle, the horizon
    assert sample["lengths"] == [17, 27, 44] and sample["prompts"] == 14 and sample["correct"] == 14
    assert sample["kinds"] == ["decoy", "sampled"] and sample["first_wrong"] is None
    label = f"{WIDTH6} sampled to 44 tokens (14 prompts at lengths 17, 27, 44: all answered correctly)"
    assert record["label"] == label and record["statement"].endswith(label.split("checkpoint ", 1)[1])
    config = json.loads((path / "config.json").read_text())  # what a user's from_pretrained reads
    assert config["ropeproof_certificate"]["label"] == label and config["certified_horizon"] == 44
    assert json.loads((path / MODEL_INFO_FILE).read_text())["metadata"]["certificate"]["label"] == label
    assert transformers.AutoConfig.from_pretrained(path).ropeproof_certificate["label"] == label


def test_labels_say_what_the_evidence_is(number6) -> None:
    ex = export_model(number6, "gptj", max_positions=3)
    assert ex.info.metadata["certificate"]["certified_horizon"] == 3
    record = relabel({**ex.info.metadata["certificate"]})
    record["checkpoint"] = {**record["checkpoint"], "sample": {"skipped": "below the task length"}}
    assert certificate_label(record).endswith("float32 checkpoint not sampled (below the task length)")
    record["checkpoint"]["sample"] = {
        "lengths": [17, 64],
        "sampled_to": 64,
        "prompts": 10,
        "correct": 7,
        "first_wrong": {"n": 64},
    }
    assert certificate_label(record).endswith(
        "sampled to 64 tokens (10 prompts at lengths 17, 64: 3 answered wrong, first at n=64)"
    )
    assert sample_lengths(16) == {} and sample_lengths(17) == {17: 4}


def test_the_width128_gptj_table_is_off_by_the_referees_angle(tmp_path: Path) -> None:
    """The RoPE table transformers builds (float32 angles) against p * theta below position 10^4: 7.8e-4
    rad, as the referee measured, and within the float32 bound p theta (spectrum_rtol + 2^-24) + 2^-23
    (the frequency, the product and sin/cos each rounded)."""
    spec = checkpoint_spec("number", "best", "gptj", max_length=64)
    model = compile_program(spec.program)
    options = {**spec.export_options(), "max_positions": 10_000}
    ex = export_model(model, "gptj", certify=False, **options)
    table = rope_table_record(converter("gptj"), ex.model, model, ex.info.placements, 10_000)
    assert table["positions"] == 10_000 and 7.8e-4 <= table["max_angle_error_rad"] < 7.9e-4
    at = table["at"]
    p_theta = (10_000 - 1) * max(abs(f) for head in model.layers for f in head.spec.plane_freqs)
    bound = p_theta * (spectrum_rtol(10_000.0, "float32") + 2.0**-24) + 2.0**-23
    assert table["max_angle_error_rad"] <= bound
    assert 0 <= at["position"] < 10_000 and at["theta"] > 0
    # the record a certified export carries measures the same table up to its stated horizon
    assert math.isclose(
        rope_table_record(converter("gptj"), ex.model, model, ex.info.placements, 64)["max_angle_error_rad"],
        float(np.max(_angle_errors(ex, model, 64))),
        rel_tol=0,
        abs_tol=0,
    )


def _angle_errors(ex, model, n: int) -> np.ndarray:
    """Independent of rope_table_record: GPT-J's own table (create_sinusoidal_positions) against p theta."""
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    table = create_sinusoidal_positions(n, ex.info.rotary_dim).double().numpy()
    half = ex.info.rotary_dim // 2
    sin, cos = table[:, :half], table[:, half:]
    p = np.arange(n)
    out = [0.0]
    for head, pl in zip(model.layers, ex.info.placements, strict=True):
        for source, target, _ in pl.planes:
            theta = abs(float(head.spec.plane_freqs[source]))
            if theta and target < half:
                err = np.arctan2(sin[:, target], cos[:, target]) - p * theta
                out.append(float(np.abs((err + np.pi) % (2 * np.pi) - np.pi).max()))
    return np.array(out)

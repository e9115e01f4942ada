"""The exported programs: every plane on the checkpoint's spectrum (or on GPT-J's unrotated dims), the
vocabulary sized for the design length, the width budget, and the certificates at a small length."""

from __future__ import annotations

import pytest

from ropeproof.constructions._multihop_compile import compile_program
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._multihop_certified import certified_horizon
from ropeproof.verify.studies.beyond._checkpoint_solvers import (
    CODE_DRIFT,
    SOLVERS,
    checkpoint_spec,
    number_max_int,
)
from ropeproof.verify.studies.beyond._spectrum_search import spectrum_frequencies

LENGTH = 64


@pytest.mark.parametrize("arch", ["gptj", "llama"])
@pytest.mark.parametrize("task", ["number", "letter"])
@pytest.mark.parametrize("solver", SOLVERS)
def test_every_plane_is_on_the_spectrum(task: str, solver: str, arch: str) -> None:
    spec = checkpoint_spec(task, solver, arch, max_length=LENGTH)
    model = compile_program(spec.program)
    spectrum = set(spectrum_frequencies(spec.rope_theta, spec.rotary_dim).tolist())
    for info in model.layer_info:
        for f in info.freqs:
            if arch == "gptj" and spec.rotary_dim < spec.width:
                assert f in spectrum or f == 0.0  # theta = 0 lives on the unrotated dims
            else:
                assert f in spectrum, (info.label, f)
    assert model.d_model + (1 if arch == "gptj" else 0) <= spec.width  # the spare dim (GPT-J)
    if task == "number":
        ints = [int(t) for t, r in zip(model.tokens, model.token_rules, strict=True) if r == "integer"]
        assert ints == list(range(1, number_max_int(LENGTH) + 1)) and max(ints) == LENGTH - 1
    opts = spec.export_options()
    assert opts["max_positions"] == LENGTH and opts["hidden_size"] == spec.width


@pytest.mark.parametrize("task", ["number", "letter"])
def test_best_solvers_are_certified_over_the_design_length(task: str) -> None:
    for arch in ("gptj", "llama"):
        spec = checkpoint_spec(task, "best", arch, max_length=LENGTH)
        cert = certified_horizon(compile_program(spec.program), 4, max_n=LENGTH)
        assert cert.complete and cert.horizon == LENGTH, (arch, cert.summary())
        assert spec.design["reflexive"]["margin"] > 0.28  # the best Reflexive head's normalised margin
    # the others stop where their one plane aliases: theta = 0.86596 from 30 tokens (offset 29 is 0.020 rad
    # short of 4 turns), theta = 1 from 45 (offset 44 is 0.018 rad past 7 turns); [A]'s Retrieval holds to 64
    horizons = {"number": {"paper": 29, "smallest": 44}, "letter": {"paper": LENGTH, "smallest": 44}}
    for solver, want in horizons[task].items():
        spec = checkpoint_spec(task, solver, "gptj", max_length=LENGTH)
        assert certified_horizon(compile_program(spec.program), 4, max_n=LENGTH).horizon == want


def test_letter_layouts() -> None:
    gptj = checkpoint_spec("letter", "best", "gptj", max_length=LENGTH)
    assert gptj.rotary_dim == 120 and gptj.rope_theta == 10000.0
    assert "partial rotary" in gptj.notes[0]
    retrieval = compile_program(gptj.program).layer_info[0]
    assert retrieval.code == "orthogonal" and set(retrieval.freqs) == {0.0}
    llama = checkpoint_spec("letter", "best", "llama", max_length=10_000)
    codes = llama.design["retrieval"]["thetas"]
    assert len(codes) == 4 and (10_000 - 1) * max(codes) <= CODE_DRIFT
    assert llama.rope_theta == 1e8  # 1e7 leaves the fastest code plane turning 2.7e-3 rad over 10^4 tokens
    assert (10_000 - 1) * spectrum_frequencies(1e7, 128)[60] > CODE_DRIFT
    assert llama.export_options()["rope_theta"] == 1e8


def test_errors() -> None:
    with pytest.raises(InputError, match="solver='nope'"):
        checkpoint_spec("number", "nope")
    with pytest.raises(InputError, match="width=7"):
        checkpoint_spec("number", width=7)
    with pytest.raises(InputError, match="max_length=2"):
        checkpoint_spec("number", max_length=2)
    with pytest.raises(InputError, match="no rotating dims"):
        checkpoint_spec("letter", width=8, max_length=LENGTH)
    with pytest.raises(InputError, match="reflexive='symbolic'"):
        checkpoint_spec("number", reflexive="symbolic", max_length=LENGTH)
    with pytest.raises(InputError, match="arch"):
        checkpoint_spec("number", arch="gpt2")

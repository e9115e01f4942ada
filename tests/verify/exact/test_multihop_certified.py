"""Certified multi-hop correctness: the horizon of the exported models covers [A]'s 17 tokens, the bound
is a valid lower bound on the real model's readout margin, and the proof's end comes with a witness."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from ropeproof.constructions.multihop_compile import CompiledModel, compile_program
from ropeproof.constructions.multihop_programs import letter_program, number_program
from ropeproof.theory.errors import InputError
from ropeproof.theory.multihop_bound import readout_margin_bound
from ropeproof.verify.exact.multihop_certified import certified_horizon, certify_model, horizon_witness
from ropeproof.verify.runtime.multilayer import model_module
from ropeproof.verify.tasks import letter_task, number_task


@pytest.fixture(scope="module")
def number_model() -> CompiledModel:  # the exported GPT-J number model's program (theta = 1)
    return compile_program(number_program(index_planes=((1.0, 1.0),)))


@pytest.fixture(scope="module")
def letter_model() -> CompiledModel:
    return compile_program(letter_program(retrieval_theta=0.001, reflexive_planes=((1.0, 1.0),)))


def test_the_paper_length_is_certified(number_model, letter_model) -> None:
    for model in (number_model, letter_model):
        cert = certified_horizon(model, 4, max_n=200)
        assert cert.horizon >= 17 and not cert.complete
        n = cert.horizon + 1
        assert cert.bound_lo[n - 2] <= 0 < cert.bound_lo[n - 3]
        assert np.all(np.diff(cert.bound_lo[: n - 1]) <= 0)  # non-increasing where certified
        summary = cert.summary()
        assert summary["first_undecided_n"] == n and summary["certified"]
        w = horizon_witness(model, cert)
        assert w["n"] == n and len(w["tokens"]) == n and w["margin"] > 0


def test_checkpoint_programs_are_certified_to_19_tokens() -> None:
    from ropeproof.constructions.multihop_programs import checkpoint_program

    for task in ("number", "letter"):  # the README quotes this horizon
        cert = certified_horizon(compile_program(checkpoint_program(task)), 4, max_n=64)
        assert cert.horizon == 19


def test_bound_encloses_the_formula_at_200_bits(number_model) -> None:
    """R(n) = c gamma - 2^(L+1) sum_l eps_l(mu_l) at each certified layer margin mu_l, evaluated in
    200-bit mpmath (independent of the arb path), lies in the certificate's enclosure. Width: ``c gamma``
    and ``2^(L+1) sum eps`` are below 2^6 here (c = 2816, gamma = 2 sin(pi/120)^2 ~ 1.4e-3; 2^13 times
    leaks below ~3e-4), each formed with a few outward float64 roundings (a few ulps of 2^6, ~1e-14),
    the leak balls being 80-bit; ``1e-12`` leaves a factor of about 100."""
    cert = certify_model(number_model, 2, 24)
    beta = float(number_model.logit_scale)
    with mpmath.workprec(200):
        for n in (5, 17, 24):
            eps = []
            for layer, mult in zip(cert.layers, cert.multiplicity, strict=True):
                mu = mpmath.mpf(float(cert.margin_lo[cert.layers.index(layer), n - 2]))
                x = (n - 1) * mpmath.exp(-beta * mu)
                eps += [x / (1 + x)] * mult
            gamma = 2 * mpmath.sin(mpmath.pi / 120) ** 2
            r = readout_margin_bound(number_model.chain_coefficient(2), gamma, eps)
            assert cert.bound_lo[n - 2] <= r <= cert.bound_hi[n - 2]
            assert cert.bound_hi[n - 2] - cert.bound_lo[n - 2] <= 1e-12 * max(1.0, abs(r))


def _readout_margins(model: CompiledModel, tasks) -> np.ndarray:
    res = model_module(model, device="cpu").run([t.tokens for t in tasks])
    z = res.readout[:, -1].numpy()
    out = []
    for b, t in enumerate(tasks):
        i = model.token_index(t.answer)
        out.append(z[b, i] - np.max(np.delete(z[b], i)))
    return np.array(out)


@pytest.mark.parametrize("hops", [1, 4])
def test_bound_is_below_the_real_readout_margin(hops, number_model, letter_model) -> None:
    for model, tasks in (
        (number_model, number_task(32, hops=(hops,), seed=hops)),
        (letter_model, letter_task(32, hops=(hops,), seed=hops)),
    ):
        cert = certify_model(model, hops, 17)
        margins = _readout_margins(model, tasks)
        # the bound is for exact arithmetic; float64 readouts of channels ~2^12 are off by ~1e-12
        assert np.all(margins >= cert.bound_lo[-1] - 1e-9)
        assert cert.bound_lo[-1] > 0 and cert.coefficient == model.chain_coefficient(hops)


def test_best_multi_plane_model_is_certified_far(number_model) -> None:
    from ropeproof.verify.beyond.index_search import best_known_table

    freqs, amps = best_known_table()[(8, 4096)]
    model = compile_program(number_program(index_planes=list(zip(freqs, amps, strict=True))))
    cert = certified_horizon(model, 4, max_n=300)
    assert cert.complete and cert.horizon == 300
    assert horizon_witness(model, cert)["n"] is None


def test_errors(number_model) -> None:
    with pytest.raises(InputError, match="hops"):
        certify_model(number_model, 5, 10)
    with pytest.raises(InputError, match="max_n"):
        certify_model(number_model, 1, 1)
    with pytest.raises(InputError, match="CompiledModel"):
        certify_model("m", 1, 10)  # type: ignore[arg-type]

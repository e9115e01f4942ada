"""Certified multi-hop correctness: the horizon of the exported models covers [A]'s 17 tokens, the bound
is a valid lower bound on the real model's readout margin, and the proof's end comes with a witness."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from ropeproof.constructions._multihop_compile import CompiledModel, compile_program
from ropeproof.constructions._multihop_programs import letter_program, number_program
from ropeproof.machinery._errors import InputError
from ropeproof.theory._multihop_bound import chain_error_bound, readout_margin_bound
from ropeproof.verify.kernel._multilayer import model_module
from ropeproof.verify.measure._tasks import letter_task, number_task
from ropeproof.verify.measure.exact._multihop_certified import (
    BASIC,
    certificate_steps,
    certified_horizon,
    certify_model,
    check_searched_as,
    horizon_witness,
    search_sizes,
)


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


def test_width6_programs_are_certified_to_44_tokens() -> None:
    """The width-6/8 programs fail from 45 tokens (offset 44 is within 0.018 of 7 turns of theta = 1), and
    the refined certificate reaches 44; the first version stopped at 19. The README quotes these."""
    from ropeproof.constructions._multihop_programs import checkpoint_program

    for task in ("number", "letter"):
        model = compile_program(checkpoint_program(task))
        assert certified_horizon(model, 4, max_n=64).horizon == 44
        assert certified_horizon(model, 4, max_n=64, **BASIC).horizon == 19
    steps = certificate_steps(compile_program(checkpoint_program("number")), 4, 64)
    assert {k: v["horizon"] for k, v in steps.items()} == {
        "all": 44,
        "without leak sum": 21,
        "without chain propagation": 25,
        "without readout radius": 19,
        "basic": 19,
    }


def test_bound_encloses_the_formula_at_200_bits(number_model) -> None:
    """R(n) = c gamma - 2^(L+1) sum_l eps_l(mu_l) at each certified layer margin mu_l, evaluated in
    200-bit mpmath (independent of the arb path), lies in the certificate's enclosure. Width: ``c gamma``
    and ``2^(L+1) sum eps`` are below 2^6 here (c = 2816, gamma = 2 sin(pi/120)^2 ~ 1.4e-3; 2^13 times
    leaks below ~3e-4), each formed with a few outward float64 roundings (a few ulps of 2^6, ~1e-14),
    the leak balls being 80-bit; ``1e-12`` leaves a factor of about 100."""
    cert = certify_model(number_model, 2, 24, **BASIC)
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


def test_refined_bound_encloses_the_formula_at_200_bits(number_model) -> None:
    """The default certificate's R(n) = min_h (c_h sin(pi/V) - E_h), with the sum-over-offsets leaks
    T(n-1) + T((n-1)//2) (Index) and T(n-1) (Reflexive) of g(m) = 2 sin(m/2)^2 at theta = 1 and the
    per-position recursion, evaluated in 200-bit mpmath from mpmath's own sines, lies in the enclosure.
    Width: c_h rho and E_h are below 2^12 * 0.03 ~ 2^7 here, formed with a few hundred outward float64
    roundings (~1e-13); ``1e-11`` leaves a factor of about 100."""
    cert = certify_model(number_model, 2, 30)
    beta = number_model.logit_scale
    pattern = number_model.hop_pattern
    with mpmath.workprec(200):
        terms = [mpmath.exp(-beta * 2 * mpmath.sin(mpmath.mpf(m) / 2) ** 2) for m in range(1, 30)]
        partial = [mpmath.mpf(0)]
        for t in terms:
            partial.append(partial[-1] + t)
        for n in (5, 17, 30):
            two, one = partial[n - 1] + partial[(n - 1) // 2], partial[n - 1]
            eps = [(two if hop else one) / (1 + (two if hop else one)) for hop in pattern]
            r = min(
                c * mpmath.sin(mpmath.pi / 120) - e
                for c, e in (chain_error_bound(pattern, h, eps) for h in (1, 2))
            )
            assert cert.bound_lo[n - 2] <= r <= cert.bound_hi[n - 2]
            assert cert.bound_hi[n - 2] - cert.bound_lo[n - 2] <= 1e-11 * max(1.0, abs(r))


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
        margins = _readout_margins(model, tasks)
        basic = certify_model(model, hops, 17, **BASIC)  # a bound on the logit margin itself
        # the bound is for exact arithmetic; float64 readouts of channels ~2^12 are off by ~1e-12
        assert np.all(margins >= basic.bound_lo[-1] - 1e-9)
        assert basic.bound_lo[-1] > 0 and basic.coefficient == model.chain_coefficient(hops)
        # the refined bound is a radius: logit margins are >= min ||u_X - u_Y|| (= 2 sin(pi/V)) times it
        refined = certify_model(model, hops, 17)
        closest = 2 * np.sin(np.pi / len(model.answers))
        assert refined.bound_lo[-1] > 0
        assert np.all(margins >= closest * refined.bound_lo[-1] - 1e-9)


def test_best_multi_plane_model_is_certified_far(number_model) -> None:
    from ropeproof.verify.studies.beyond._index_search import best_known_table

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
    with pytest.raises(InputError, match="leak='nope' is unknown"):
        certify_model(number_model, 1, 10, leak="nope")


@pytest.mark.parametrize("user", [(15, 53), (1000, 12)])
def test_certificate_ignores_the_global_precision(number_model, user: tuple[int, int]) -> None:
    """Issue 32: no verdict depends on mpmath.mp or python-flint's context as a user left them."""
    from flint import ctx as flint_ctx

    want = certify_model(number_model, 2, 30)
    saved = mpmath.mp.prec, flint_ctx.prec
    try:
        mpmath.mp.dps, flint_ctx.prec = user
        got = certify_model(number_model, 2, 30)
    finally:
        mpmath.mp.prec, flint_ctx.prec = saved
    for name in ("bound_lo", "bound_hi", "margin_lo", "eps_hi", "status"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert got.gamma == want.gamma


def test_certificates_leave_the_model_unchanged(number_model) -> None:
    """The certificate, its steps and its witness stash nothing on the model: its attributes are the same
    objects with the same contents afterwards."""

    def attributes() -> dict[str, tuple[int, bytes | None]]:
        return {
            k: (id(v), v.tobytes() if isinstance(v, np.ndarray) else None)
            for k, v in vars(number_model).items()
        }

    before = attributes()
    cert = certified_horizon(number_model, 4, max_n=60)
    horizon_witness(number_model, cert)
    certificate_steps(number_model, 4, 60)
    assert attributes() == before


def test_steps_read_certificates_already_computed(number_model, letter_model) -> None:
    cert = certified_horizon(number_model, 4, max_n=200)
    basic = certified_horizon(number_model, 4, max_n=200, **BASIC)
    assert certificate_steps(number_model, 4, 200, known=(cert, basic)) == certificate_steps(
        number_model, 4, 200
    )
    assert search_sizes(10_000) == [64, 256, 1024, 4096, 10_000] and search_sizes(50) == [50]
    # a certificate of another search is refused, naming what differs
    with pytest.raises(InputError, match=r"hops 4 \(expected 3\)"):
        check_searched_as(cert, number_model, 3, 200)
    with pytest.raises(InputError, match="model"):
        check_searched_as(cert, letter_model, 4, 200)
    with pytest.raises(InputError, match="steps"):
        check_searched_as(basic, number_model, 4, 200)
    with pytest.raises(InputError, match="rows ending at n = 64"):
        check_searched_as(cert, number_model, 4, 60)  # a search to 60 certifies 2..60 only
    complete = certified_horizon(number_model, 4, max_n=20)
    assert complete.complete
    check_searched_as(complete, number_model, 4, 20)
    with pytest.raises(InputError, match="rows ending at n = 20"):
        check_searched_as(complete, number_model, 4, 30)


def test_kept_layer_leaks_are_each_steps_own(number_model, letter_model) -> None:
    """Certificates of several steps and sizes share the per-process layer leaks; each certificate still
    holds its own steps' margins and leaks, as computed directly."""
    from ropeproof.verify.measure.exact import _multihop_certified as mc
    from ropeproof.verify.measure.exact._multihop_margins import layer_margin_enclosure

    for model in (number_model, letter_model):
        for max_n in (40, 90, 40):
            for steps in ({}, BASIC, {"readout": "margin"}, {"leak": "max"}):
                cert = certify_model(model, 4, max_n, **steps)
                n = np.arange(2, max_n + 1)
                for j, layer in enumerate(cert.layers):
                    info = model.layer_info[layer]
                    mu = layer_margin_enclosure(info, max_n, 80, model.vocab_size)[0]
                    _lo, hi = mc._leaks(info, mu, model.logit_scale, n, steps.get("leak", "sum"), 80)
                    assert np.array_equal(cert.margin_lo[j], mu) and np.array_equal(cert.eps_hi[j], hi)
    assert mc._layer_leaks.cache_info().hits > 0

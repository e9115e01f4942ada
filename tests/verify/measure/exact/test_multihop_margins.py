"""Per-layer chain-row margins: the exact float64 sweep inside the interval enclosures of the closed
forms, the enclosures against 50-digit mpmath, and the families against the real model's rows."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.constructions._multihop_compile import CompiledModel, compile_program
from ropeproof.constructions._multihop_programs import letter_program, number_program
from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._multilayer import model_module
from ropeproof.verify.measure.exact._certified import enclose_index_gaps
from ropeproof.verify.measure.exact._families import family_input
from ropeproof.verify.measure.exact._multihop_margins import (
    _orthogonal_terms,
    distinct_layers,
    enclose_gaps,
    layer_family,
    layer_margin_enclosure,
    layer_sweep,
    margins_at,
    model_margin_enclosures,
)

MODELS = {
    "number-two-planes": number_program(index_planes=((1.0, 0.7), (0.3, 0.3)), letters=6, max_int=16),
    "letter-one-plane": letter_program(
        alphabet=8, max_int=2, retrieval_theta=0.0027, reflexive_planes=((1.0, 1),)
    ),
    "letter-orthogonal": letter_program(code="orthogonal", alphabet=5, max_int=1, retrieval_theta=0.004),
    "letter-orthogonal-spread": letter_program(  # one frequency per code plane, as on a LLaMA spectrum
        code="orthogonal", alphabet=6, max_int=1, retrieval_theta=(0.002, 0.011, 0.005)
    ),
    "number-symbolic": number_program(
        reflexive="symbolic", reflexive_planes=((0.01, 1.0),), letters=4, max_int=8
    ),
}


@pytest.fixture(scope="module")
def models() -> dict[str, CompiledModel]:
    return {k: compile_program(p) for k, p in MODELS.items()}


@pytest.mark.parametrize("name", list(MODELS))
def test_exact_sweep_lies_in_the_enclosure(name: str, models) -> None:
    model = models[name]
    max_n = 60
    encl = model_margin_enclosures(model, max_n)
    for layer in distinct_layers(model):
        exact = layer_sweep(model, layer, max_n).margin_inf
        lo, hi = encl[layer]
        # the sweep evaluates float64 logits of float64 weights: a few ulp of logits of size <= 1
        tol = 8 * np.finfo(np.float64).eps
        assert np.all(exact >= lo - tol) and np.all(exact <= hi + tol), model.layer_info[layer]
        assert np.all(np.diff(exact) <= tol)  # margins never increase with n
        assert np.all(hi - lo <= 1e-14)


def test_gap_enclosure_contains_50_digit_values() -> None:
    freqs, amps = [0.8660, 0.3, 1e-3], [0.5, 0.25, 0.25]
    lo, hi = enclose_gaps(freqs, amps, 400)
    with mpmath.workdps(50):
        for m in range(1, 401):
            g = sum(
                2 * mpmath.mpf(a) * mpmath.sin(m * mpmath.mpf(f) / 2) ** 2
                for f, a in zip(freqs, amps, strict=True)
            )
            assert lo[m - 1] <= g <= hi[m - 1]
    ilo, ihi = enclose_index_gaps(freqs, amps, 400)  # arb: the intervals overlap
    assert np.all(np.maximum(lo, ilo) <= np.minimum(hi, ihi))
    lo2, _ = enclose_gaps(freqs, amps, 100)  # cached and sliced
    np.testing.assert_array_equal(lo2, lo[:100])
    with pytest.raises(InputError, match="amps"):
        enclose_gaps([1.0], [-1.0], 3)


def test_gap_enclosures_are_kept_for_the_most_recent_spectra(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process keeps GAP_CACHE_BYTES of enclosures, of the most recently used spectra: a spectrum
    used again stays, the least recent goes, and an evicted one is enclosed again to the same values."""
    import ropeproof.verify.measure.exact._multihop_margins as margins

    monkeypatch.setattr(margins, "_GAP_CACHE", type(margins._GAP_CACHE)())
    monkeypatch.setattr(margins, "GAP_CACHE_BYTES", 3 * 2 * 20 * 8)  # three spectra of 20 float64 pairs
    spectra = [([0.5 + k / 10], [1.0]) for k in range(5)]
    first = enclose_gaps(*spectra[0], 20)
    for f, a in spectra[1:3]:
        enclose_gaps(f, a, 20)
    enclose_gaps(*spectra[0], 10)  # used again: now the most recent
    enclose_gaps(*spectra[3], 20)  # evicts spectra[1], the least recent
    assert [k[0] for k in margins._GAP_CACHE] == [(0.7,), (0.5,), (0.8,)]
    enclose_gaps(*spectra[4], 20)  # evicts spectra[2]
    enclose_gaps(*spectra[1], 20)  # evicts spectra[0]
    assert [k[0] for k in margins._GAP_CACHE] == [(0.8,), (0.9,), (0.6,)]
    enclose_gaps(*spectra[2], 100)  # larger than the budget alone: kept, every other one goes
    assert [k[0] for k in margins._GAP_CACHE] == [(0.7,)]
    again = enclose_gaps(*spectra[0], 20)
    np.testing.assert_array_equal(again[0], first[0])
    np.testing.assert_array_equal(again[1], first[1])


def test_retrieval_closed_form_values(models) -> None:
    m = models["letter-one-plane"]
    lo, hi = layer_margin_enclosure(m.layer_info[0], 20)
    theta, omega = 0.0027, 2 * np.pi / 8
    # n = 2: a (letter, letter) row has its target 1 back and its own key competing,
    # cos(theta) - cos(omega); a (letter, integer) row is its own target against a key 1 back,
    # 1 - cos(omega - theta), which is smaller
    expected = min(np.cos(theta) - np.cos(omega), 1 - np.cos(omega - theta))
    assert expected == 1 - np.cos(omega - theta)
    assert lo[0] <= expected <= hi[0]
    lo_o, hi_o = layer_margin_enclosure(models["letter-orthogonal"].layer_info[0], 10)
    # orthogonal code: the (letter, letter) row scores cos(theta) against S = 0; the (letter, integer)
    # row loses |sin(theta)| to a plane-mate a quarter turn away, 1 back
    assert lo_o[0] <= min(np.cos(0.004), 1 - np.sin(0.004)) == 1 - np.sin(0.004) <= hi_o[0]
    assert margins_at([(lo, hi)], 2) == [(float(lo[0]), float(hi[0]))]


def _row_margin(logits: torch.Tensor, row: int, target: int) -> float:
    r = logits[row, : row + 1].clone()
    t = float(r[target])
    r[target] = -torch.inf
    return t - float(r.max())


@pytest.mark.parametrize("name", ["number-two-planes", "letter-one-plane"])
def test_families_are_the_model_rows(name: str, models) -> None:
    """Every family input's query row, run through the whole model, has its target at least
    margin_inf(n) above the rest; the attaining input attains it."""
    model = models[name]
    module = model_module(model, device="cpu")
    rng = np.random.default_rng(0)
    n = 14
    for layer in distinct_layers(model)[:2]:
        fam = layer_family(model, layer)
        sweep = layer_sweep(model, layer, n)
        low = float(sweep.margin_inf[n - 2])
        for _ in range(12):
            ci = int(rng.choice(fam.cases_at(n)))
            d_t = int(rng.integers(1, n)) if fam.cases[ci].target_distance is None else 0
            tokens, target = family_input(fam, n, ci, d_t, rng.integers(0, 1 << 30, size=n).tolist())
            logits = module.run([tokens]).logits[layer][0] / model.logit_scale
            assert _row_margin(logits, n - 1, target) >= low - 1e-12
        w = sweep.witness(n, "margin_inf")
        logits = module.run([w.tokens]).logits[layer][0] / model.logit_scale
        assert _row_margin(logits, n - 1, w.target_position) == pytest.approx(low, abs=1e-12)


def test_errors(models) -> None:
    m = models["number-symbolic"]
    with pytest.raises(InputError, match="layer"):
        layer_family(m, 99)
    with pytest.raises(InputError, match="vocab_size"):
        layer_margin_enclosure(m.layer_info[-1], 10)
    with pytest.raises(InputError, match="max_n"):
        layer_margin_enclosure(m.layer_info[0], 1)
    with pytest.raises(InputError, match="CompiledModel"):
        layer_family("model", 0)  # type: ignore[arg-type]
    # a symbolic Reflexive layer at theta = 0.01: a copy 1 back costs 1 - cos(0.01)
    lo, hi = layer_margin_enclosure(m.layer_info[-1], 5, vocab_size=m.vocab_size)
    assert lo[0] <= 1 - np.cos(0.01) <= hi[0]


@given(theta=st.floats(-7.0, 7.0), max_d=st.integers(1, 80))
def test_orthogonal_terms_contain_200_bit_values(theta: float, max_d: int) -> None:
    """T(d) = cos(d theta) and O(d) = |sin(d theta)| (arb balls, rounded outward) against 200-bit mpmath;
    each end is one float64 rounding of an 80-bit ball, so widths stay below 2^-40 (values <= 1)."""
    (t_lo, t_hi), (o_lo, o_hi) = _orthogonal_terms(theta, max_d, 80)
    assert np.all(t_hi - t_lo <= 2.0**-40) and np.all(o_hi - o_lo <= 2.0**-40) and np.all(o_lo >= 0)
    with mpmath.workprec(200):
        for d in range(1, max_d + 1):
            x = d * mpmath.mpf(theta)
            assert t_lo[d - 1] <= mpmath.cos(x) <= t_hi[d - 1]
            assert o_lo[d - 1] <= abs(mpmath.sin(x)) <= o_hi[d - 1]


def _attributes(model: CompiledModel) -> dict[str, tuple[int, bytes | None]]:
    """Every attribute of ``model`` by name: the object's identity and, for an array, its bytes."""
    return {k: (id(v), v.tobytes() if isinstance(v, np.ndarray) else None) for k, v in vars(model).items()}


def test_sweeps_and_enclosures_leave_the_model_unchanged(models) -> None:
    """Nothing is stashed on the model (it used to keep its layer sweeps in ``model.__dict__``): the
    attributes are the same objects with the same contents after sweeping every layer twice and
    enclosing every layer, and a second sweep is a fresh result equal to the first."""
    model = models["letter-one-plane"]
    before = _attributes(model)
    first = {layer: layer_sweep(model, layer, 30) for layer in distinct_layers(model)}
    for layer, sweep in first.items():
        again = layer_sweep(model, layer, 30)
        assert again is not sweep and np.array_equal(again.margin_inf, sweep.margin_inf)
    model_margin_enclosures(model, 30)
    assert _attributes(model) == before

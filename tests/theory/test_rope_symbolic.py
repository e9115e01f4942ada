"""Symbolic RoPE: closed form, offset-only dependence, lambdify backends vs rope_logits."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.theory._rope_symbolic import (
    SymbolicRopeSpec,
    depends_only_on_offset,
    derive_logit,
    rotation,
    vec2,
)
from ropeproof.verify.kernel._rope import rope_logits


def _general_form(n_planes: int = 2):
    spec = SymbolicRopeSpec.symbols(n_planes)
    qs = sp.symbols(f"q0:{2 * n_planes}", real=True)
    ks = sp.symbols(f"k0:{2 * n_planes}", real=True)
    q = [vec2(qs[2 * p], qs[2 * p + 1]) for p in range(n_planes)]
    k = [vec2(ks[2 * p], ks[2 * p + 1]) for p in range(n_planes)]
    return derive_logit(q, k, spec), qs, ks, spec


def test_rotation_composes_to_offset() -> None:
    a, b = sp.symbols("a b", real=True)
    assert sp.simplify(rotation(a).T * rotation(b) - rotation(b - a)) == sp.zeros(2, 2)


def test_closed_form_shape_and_offset_dependence() -> None:
    form, qs, ks, _spec = _general_form()
    # raw depends on i and j separately; the closed form only on u = j - i
    assert {form.i, form.j} <= form.raw.free_symbols
    assert form.offset in form.closed.free_symbols
    assert form.i not in form.closed.free_symbols and form.j not in form.closed.free_symbols
    assert depends_only_on_offset(form)
    # amplitude is |q_k| |k_k|
    assert (
        sp.simplify(form.amplitudes[0] - sp.sqrt(qs[0] ** 2 + qs[1] ** 2) * sp.sqrt(ks[0] ** 2 + ks[1] ** 2))
        == 0
    )
    # shifting both positions leaves the raw logit unchanged
    c = sp.Symbol("c", integer=True)
    shifted = form.raw.subs({form.i: form.i + c, form.j: form.j + c}, simultaneous=True)
    assert sp.simplify(sp.expand_trig(sp.expand(shifted - form.raw))) == 0
    assert r"\cos" in form.latex() and form.latex().startswith(r"\ell(u) =")


def test_rotated_base_vectors_give_pure_phase() -> None:
    """q = a rho(b_q) e1, k = rho(b_k) e1: logit is a cos(u theta + b_k - b_q)."""
    a, bq, bk, th, u = sp.symbols("a b_q b_k theta u", real=True)
    e1 = vec2(1, 0)
    form = derive_logit([a * rotation(bq) * e1], [rotation(bk) * e1], SymbolicRopeSpec([th]), offset=u)
    expected = a * sp.cos(u * th + bk - bq)
    for vals in ({a: 0.7, bq: 0.3, bk: -1.1, th: 0.9, u: 5}, {a: 2, bq: 2.5, bk: 0.4, th: 0.01, u: -17}):
        assert float(form.closed.subs(vals)) == pytest.approx(float(expected.subs(vals)), abs=1e-14)


def test_non_identity_is_rejected() -> None:
    """The identity prover is not vacuous: a wrong closed form is caught."""
    from ropeproof.theory._rope_symbolic import LogitForm, logit_identity_holds

    form, qs, ks, spec = _general_form(1)
    q = [vec2(qs[0], qs[1])]
    k = [vec2(ks[0], ks[1])]
    wrong = LogitForm(
        form.raw + sp.sin(form.i * spec.freqs[0]),
        form.closed,
        form.amplitudes,
        form.phases,
        form.freqs,
        form.i,
        form.j,
        form.offset,
    )
    assert logit_identity_holds(form, q, k)
    assert not logit_identity_holds(wrong, q, k)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_lambdified_backends_equal_rope_logits(layout: str) -> None:
    form, qs, ks, spec = _general_form(2)
    rng = np.random.default_rng(7)
    f_np, f_torch, f_mp = (form.lambdify(b) for b in ("numpy", "torch", "mpmath"))
    args = form.free_symbols()
    for _ in range(20):
        qv, kv = rng.standard_normal(4), rng.standard_normal(4)
        th = rng.uniform(-3, 3, size=2)
        i, j = rng.integers(0, 40, size=2)
        rs = RopeSpec(4, freqs=th.tolist(), layout=layout)
        q = torch.zeros(i + 1, 4, dtype=torch.float64)
        k = torch.zeros(j + 1, 4, dtype=torch.float64)
        for p, (a, b) in enumerate(rs.plane_dims):
            q[i, a], q[i, b] = qv[2 * p], qv[2 * p + 1]
            k[j, a], k[j, b] = kv[2 * p], kv[2 * p + 1]
        want = rope_logits(q, k, rs)[i, j].item()
        values = {
            **dict(zip(qs, qv, strict=True)),
            **dict(zip(ks, kv, strict=True)),
            spec.freqs[0]: th[0],
            spec.freqs[1]: th[1],
            form.offset: int(j - i),
        }
        ordered = [values[s] for s in args]
        assert f_np(*ordered) == pytest.approx(want, abs=1e-12)
        assert f_torch(
            *[torch.tensor(float(v), dtype=torch.float64) for v in ordered]
        ).item() == pytest.approx(want, abs=1e-12)
        with mpmath.workdps(30):
            assert float(f_mp(*[mpmath.mpf(float(v)) for v in ordered])) == pytest.approx(want, abs=1e-12)
    assert not math.isnan(want)

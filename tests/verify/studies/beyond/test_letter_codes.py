"""Letter codes: exact margins against brute force through explicit RoPE vectors and against the
compiled T_Retrieval engine; closed forms in |ALPH|; horizons on slowly rotating planes."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._rope import rope_logits
from ropeproof.verify.measure.exact._sweep import sweep_retrieval
from ropeproof.verify.studies.beyond._letter_codes import (
    SLOW_HORIZONS,
    alphabet_comparison,
    code_margins,
    horizon,
    one_plane_code,
    one_plane_horizon_formula,
    orthogonal_code,
    slow_horizon_of,
    slow_plane_horizons,
)


def brute_margin(code, n: int) -> float:
    """margin_inf(n) over every Retrieval input, logits from the explicit vectors through rope_logits."""
    q, k = code.vectors()
    spec = RopeSpec(2 * code.planes, freqs=code.freqs.tolist())
    keys = torch.as_tensor(k)
    worst = math.inf
    for y, x in itertools.permutations(range(code.alphabet), 2):
        # logits of query y at n - 1 against every letter at every position
        table = rope_logits(
            torch.as_tensor(q[y])[None],
            keys.repeat(n, 1),
            spec,
            q_positions=[n - 1],
            k_positions=np.repeat(np.arange(n), code.alphabet),
        )
        table = table.reshape(n, code.alphabet).numpy()  # [position, letter]
        others = [c for c in range(code.alphabet) if c != y]
        for d_t in range(1, n):
            for letters in itertools.product(others, repeat=n - 2):
                dist = [d for d in range(1, n) if d != d_t]
                comp = [table[n - 1, x]] + [table[n - 1 - d, c] for c, d in zip(letters, dist, strict=True)]
                worst = min(worst, table[n - 1 - d_t, y] - max(comp))
    return worst


@pytest.mark.parametrize(
    "code",
    [
        one_plane_code(3, 0.4),
        one_plane_code(4, 0.0),
        orthogonal_code(3, [0.2, 0.05]),
        orthogonal_code(4, 0.0),
        orthogonal_code(4, [0.7, 0.01]),
    ],
    ids=lambda c: f"{c.name}-{c.alphabet}-{c.freqs.tolist()}",
)
def test_code_margins_equal_brute_force_through_rope(code) -> None:
    got = code_margins(code, 6)
    for n in (2, 4, 6):
        assert got[n - 2] == pytest.approx(brute_margin(code, n), abs=1e-14)


@settings(max_examples=10)
@given(alphabet=st.integers(2, 9), theta=st.floats(0.0, 3.0))
def test_one_plane_code_equals_the_compiled_retrieval_engine(alphabet, theta) -> None:
    engine = sweep_retrieval(alphabet, theta, 40, gap_inf_limit=2).columns["margin_inf"]
    # The engine reduces m theta exactly (error ~1e-16); code_margins takes cos(m theta) of the plain
    # float64 product m theta, whose rounding (<= u |m theta|, m <= 40) moves each cos by as much, and
    # a margin is a difference of two such cosines plus a few roundings of values <= 2: 4 u (40 theta + 2).
    atol = 4 * 2.0**-53 * (40 * theta + 2)
    np.testing.assert_allclose(code_margins(one_plane_code(alphabet, theta), 40), engine, rtol=0, atol=atol)


def test_closed_forms_in_the_alphabet() -> None:
    rows = alphabet_comparison([2, 3, 4, 7, 16, 64, 100], 20)
    for r in rows:
        assert r["one_plane_margin"] == pytest.approx(r["one_plane_closed_form"], rel=1e-13)
        assert r["orthogonal_margin"] == 1.0
    assert rows[-1]["one_plane_margin"] == pytest.approx(2 * math.pi**2 / 100**2, rel=2e-3)


def test_one_plane_horizon_formula_is_exact() -> None:
    for alphabet, theta in ((8, 0.0027), (4, 0.013), (26, 0.0004), (2, 0.05)):
        h = horizon(
            code_margins(one_plane_code(alphabet, theta), 2 * one_plane_horizon_formula(alphabet, theta) + 5)
        )
        assert h == one_plane_horizon_formula(alphabet, theta)


def _rotated_logit(q: list, k: list, d: int, thetas: list) -> mpmath.mpf:
    """Written here, in mpmath: q . R(-d) k with R explicit, plane p on dims (2p, 2p + 1)."""
    total = mpmath.mpf(0)
    for p, t in enumerate(thetas):
        c, s = mpmath.cos(-d * t), mpmath.sin(-d * t)
        kx, ky = k[2 * p], k[2 * p + 1]
        total += q[2 * p] * (c * kx - s * ky) + q[2 * p + 1] * (s * kx + c * ky)
    return total


def test_slow_plane_horizons() -> None:
    """Horizons of the two codes on the lowest planes of a 64-dim standard spectrum, |ALPH| = 8,
    derived by hand and checked in mpmath (50 digits) on explicit vectors.

    The worst input puts the target (left letter Y) at the far end, d_t = n - 1, and the strongest
    competitor right after it, d = n - 2 (or the other way round; same condition):

    - one plane at theta = 10000^(-62/64), letters at phases c omega (omega = pi/4): the competitor
      with the next code scores cos(omega - (n - 2) theta) against the target's cos((n - 1) theta), so
      the margin is positive iff (2n - 3) theta < omega;
    - orthogonal code on the 4 lowest planes, the plane-mate at phase +pi/2: it scores
      sin((n - 2) theta_p) = cos(pi/2 - (n - 2) theta_p), positive margin iff (2n - 3) theta_p < pi/2,
      decided by the fastest of the four planes, theta_p = 10000^(-56/64).
    """
    h = slow_plane_horizons(64, 8)
    with mpmath.workdps(50):
        slow = mpmath.mpf(10000) ** (mpmath.mpf(-62) / 64)
        fast = mpmath.mpf(10000) ** (mpmath.mpf(-56) / 64)
        omega, quarter = 2 * mpmath.pi / 8, mpmath.pi / 2
        one = int(mpmath.floor((omega / slow + 3) / 2))  # largest n with (2n - 3) slow < omega
        ortho = int(mpmath.floor((quarter / fast + 3) / 2))
        assert (2 * one - 3) * slow < omega <= (2 * one - 1) * slow
        assert (2 * ortho - 3) * fast < quarter <= (2 * ortho - 1) * fast
        # the worst inputs on explicit vectors: positive margin at the horizon, none one step later
        unit = [mpmath.mpf(1), mpmath.mpf(0)]
        nxt = [mpmath.cos(omega), mpmath.sin(omega)]
        for n, positive in ((one, True), (one + 1, False)):
            margin = _rotated_logit(unit, unit, n - 1, [slow]) - _rotated_logit(unit, nxt, n - 2, [slow])
            assert (margin > 0) == positive
        q, mate = [mpmath.mpf(0)] * 8, [mpmath.mpf(0)] * 8
        q[0], mate[1] = 1, 1  # letter 0 and its plane-mate (phase pi/2) in the fastest plane
        thetas = [fast, 0, 0, 0]
        for n, positive in ((ortho, True), (ortho + 1, False)):
            margin = _rotated_logit(q, q, n - 1, thetas) - _rotated_logit(q, mate, n - 2, thetas)
            assert (margin > 0) == positive
    assert h.one_plane_theta == pytest.approx(float(slow), rel=2**-52)
    assert h.one_plane_horizon == h.one_plane_formula == one
    assert h.orthogonal_thetas[0] == pytest.approx(float(fast), rel=2**-52)
    assert h.orthogonal_horizon == ortho
    assert h.orthogonal_margin_at_16 > 0.99 > 0.3 > h.one_plane_margin_at_16
    # the run's store keeps them as JSON data and hands back the same horizons
    assert slow_horizon_of(ResultStore().get(SLOW_HORIZONS, head_dim=64)) == h


def test_validation() -> None:
    with pytest.raises(InputError):
        one_plane_code(1)
    with pytest.raises(InputError):
        orthogonal_code(5, [0.1, 0.2])
    with pytest.raises(InputError):
        horizon(np.array([1.0, 0.5]))
    with pytest.raises(InputError):
        one_plane_horizon_formula(8, 0.0)

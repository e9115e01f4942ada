"""Scores against the logit scale, and the working scale of a head."""

from __future__ import annotations

import math

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._subjects import index_subject
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.measure.ps._scale_sweep import scores_over_scales, working_scale


def test_working_scale_golden() -> None:
    # 99% on the target among n - 1 = 16 keys: ln(16 * 0.99 / 0.01) / margin
    assert working_scale(0.5, 17) == pytest.approx(math.log(16 * 99) / 0.5, rel=1e-14)
    with pytest.raises(InputError, match="margin"):
        working_scale(0.0, 17)
    with pytest.raises(InputError, match="eps"):
        working_scale(0.5, 17, eps=1.0)


def test_index_becomes_pure_as_the_scale_grows_and_the_head_is_restored() -> None:
    subj = index_subject(20)
    before = subj.head.scale
    margin = float(index_sweep([0.866], [1.0], 17).margin_inf[-1])
    rows = scores_over_scales(subj.head, subj.inputs, [1.0, 10.0, working_scale(margin, 17)])
    assert subj.head.scale == before
    assert all(r.S_pos == pytest.approx(1.0, abs=1e-12) for r in rows)
    assert rows[0].S_sym > 0.1 > rows[-1].S_sym  # impure-looking at scale 1, pure where it works
    with pytest.raises(
        InputError, match=r"scales\[0\]=0\.0 is out of range; accepted: a finite real number > 0"
    ):
        scores_over_scales(subj.head, subj.inputs, [0.0])
    assert subj.head.scale == before

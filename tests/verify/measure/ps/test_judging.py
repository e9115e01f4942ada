"""Judging the positional/symbolic statements: the tolerances per dtype by hand, the exclusion summary on
reports whose figures are known, the working scale against the worst margin in mpmath, and each verdict
turning when a threshold is out of reach or the reference heads are mixed up."""

from __future__ import annotations

import math

import mpmath
import pytest
import torch

from ropeproof.constructions._paper import INDEX_THETA
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.measure.ps import _judging as judging
from ropeproof.verify.measure.ps._exact import ExclusionReport
from ropeproof.verify.measure.ps._judging import (
    construction_class_outcome,
    exclusion_outcome,
    exclusion_summary,
    reference_heads_outcome,
    tolerances,
)

CPU = torch.device("cpu")
SCALES = [1.0, 10.0]


def test_tolerances_per_dtype() -> None:
    """score_tol = max(1e-12, 4 eps^2); deviation_tol = (4 eps max|L|)^2."""
    assert tolerances(torch.float64) == (1e-12, (4 * 2.0**-52) ** 2)
    assert tolerances(torch.float32, 3.0) == (1e-12, (4 * 2.0**-23 * 3.0) ** 2)
    assert tolerances(torch.float16) == (4 * 2.0**-20, (4 * 2.0**-10) ** 2)


def _report(
    n: int, variance: list[float], bound: list[float], half: list[float], holds: list[bool]
) -> ExclusionReport:
    t = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    var, b = t(variance), t(bound)
    tight = torch.where(b > 0, var / b, torch.tensor(math.nan, dtype=torch.float64))
    zeros = torch.zeros(len(variance), dtype=torch.float64)
    return ExclusionReport(
        n,
        1,
        True,
        var,
        zeros,
        zeros,
        zeros,
        zeros,
        b,
        t(half),
        tight,
        zeros,
        torch.tensor(holds),
        zeros,
        zeros,
    )


def test_exclusion_summary_on_known_reports() -> None:
    reports = [
        ("a", _report(3, [0.5, 0.0], [1.0, 0.0], [0.5, 0.0], [True, True])),  # tightness 0.5 and NaN
        ("b", _report(4, [0.2, 0.9], [1.0, 1.0], [0.2, 0.9 + 9e-16], [True, True])),  # 0.2, 0.9
    ]
    ok, figures, worst = exclusion_summary(reports)
    assert ok and figures["heads"] == 2 and figures["inputs"] == 4
    assert (figures["max_tightness"], figures["median_tightness"], figures["min_tightness"]) == (
        0.9,
        0.5,
        0.2,
    )
    assert figures["identity_rel_err"] == pytest.approx(9e-16 / 0.9, rel=1e-6)
    # the excess (Var - bound) / bound: -0.5 and 0 (0 / 0 read as 0) in a, -0.8 and -0.1 in b
    assert worst == {"head": "a", "n": 3, "variance": 0.0, "bound": 0.0}
    reports.append(("c", _report(2, [1.0], [0.5], [1.0], [False])))
    ok, _figures, worst = exclusion_summary(reports)
    assert not ok and worst["head"] == "c"


def test_exclusion_outcome_holds_on_random_heads_and_the_constructions() -> None:
    out = exclusion_outcome(3, CPU, torch.float64)
    f = out.figures
    assert out.verdict == "holds" and f["heads"] == 3 + 3 and f["inputs"] == 3 * 3 + 3 * 6
    assert 0 < f["min_tightness"] <= f["median_tightness"] <= f["max_tightness"] <= 1
    assert f["identity_rel_err"] <= 1e-12


def test_index_is_positional_at_the_scale_its_mpmath_margin_needs() -> None:
    """The working scale is ln((n - 1) 99) / margin with T_Index's worst margin at n = 17,
    min_{1 <= m <= 16} (1 - cos(m theta)), computed here in mpmath."""
    out = construction_class_outcome(
        "index", INDEX_THETA, 17, 10, SCALES, 0.1, CPU, torch.float64, ResultStore()
    )
    with mpmath.workdps(30):
        margin = min(1 - mpmath.cos(m * mpmath.mpf(INDEX_THETA)) for m in range(1, 17))
        scale = mpmath.log(16 * 99) / margin
    f = out.figures
    assert out.verdict == "holds" and f["worst_margin"] == pytest.approx(float(margin), rel=1e-12)
    assert f["working_scale"] == pytest.approx(float(scale), rel=1e-9)
    assert f["S_sym_at_working_scale"] < 0.1 and f["msd_pos_exact"] == 0.0
    assert [r["scale"] for r in f["scores_by_scale"]] == [*SCALES, f["working_scale"]]


def test_retrieval_is_symbolic_at_its_working_scale() -> None:
    """At theta = 0 the worst Retrieval margin is 1 - cos(2 pi / 8) at every length."""
    out = construction_class_outcome("retrieval", 0.0, 17, 10, SCALES, 0.1, CPU, torch.float64, ResultStore())
    with mpmath.workdps(30):
        scale = mpmath.log(16 * 99) / (1 - mpmath.cos(2 * mpmath.pi / 8))
    assert out.verdict == "holds" and out.figures["working_scale"] == pytest.approx(float(scale), rel=1e-9)
    assert out.figures["msd_sym_exact"] == 0.0 and out.figures["S_pos_at_working_scale"] < 0.1


def test_a_threshold_out_of_reach_is_violated() -> None:
    out = construction_class_outcome(
        "index", INDEX_THETA, 17, 10, SCALES, 1e-12, CPU, torch.float64, ResultStore()
    )
    assert out.verdict == "violated" and "msd_pos_exact" in out.counterexample
    with pytest.raises(InputError, match="kind"):
        construction_class_outcome(
            "both", INDEX_THETA, 17, 10, SCALES, 0.1, CPU, torch.float64, ResultStore()
        )


def test_reference_heads_score_as_defined() -> None:
    out = reference_heads_outcome(CPU, torch.float64)
    f = out.figures
    assert out.verdict == "holds" and f["nope_max_msd_sym"] == 0.0 and f["constant_key_max_msd_pos"] == 0.0
    assert abs(f["constant_S_pos"] - 1) <= 1e-12 and abs(f["constant_S_sym"] - 1) <= 1e-12
    assert f["nope_min_msd_pos"] > 0 and f["constant_key_min_msd_sym"] > 0  # the other deviation is not 0


def test_mixed_up_reference_heads_are_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.reference_heads

    def swapped(device, dtype):
        heads = real(device, dtype)
        return {**heads, "nope": heads["constant_key"], "constant_key": heads["nope"]}

    monkeypatch.setattr(judging, "reference_heads", swapped)
    assert reference_heads_outcome(CPU, torch.float64).verdict == "violated"

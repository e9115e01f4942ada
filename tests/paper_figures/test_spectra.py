"""Spectrum figures: the rows plotted are the scan's verdicts and the decay's values, the captions state
what was checked, and bad input is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.paper_figures._spectra import plot_parameter_scans, plot_partial_sum_decay
from ropeproof.paper_figures._style import save_figure
from ropeproof.theory._spectrum import Spectrum
from ropeproof.verify.measure.exact._parameter_scan import scan_parameter
from ropeproof.verify.measure.exact._partial_sums import partial_sum_decay


def test_scan_strips_carry_every_verdict(tmp_path: Path) -> None:
    scans = {
        f"m <= {n}": scan_parameter(
            lambda x: Spectrum((x,)), n, interval=(0.1, 8.0), resolution=0.05, threshold=0.5
        )
        for n in (1, 2)
    }
    result = plot_parameter_scans(scans, parameter="theta", marks={"m <= 1": 1.0})
    assert [(r["value"], r["verdict"]) for r in result.rows if r["label"] == "m <= 2"] == list(
        zip(scans["m <= 2"].values, scans["m <= 2"].verdicts, strict=True)
    )
    assert "log steps of 0.05" in result.caption and "certified" in result.caption
    names = {p.name for p in save_figure(result, tmp_path)}
    assert {"parameter_scan.png", "parameter_scan.csv", "parameter_scan.caption.txt"} <= names


def test_decay_rows_and_first_rise() -> None:
    decay = partial_sum_decay(Spectrum.from_base(10000.0, 16), 200)
    result = plot_partial_sum_decay(decay)
    assert [r["f"] for r in result.rows] == decay.values.tolist() and len(result.rows) == 201
    assert f"first rises at m = {decay.first_rise}." in result.caption


def test_bad_input() -> None:
    with pytest.raises(InputError, match="at least one"):
        plot_parameter_scans({})
    with pytest.raises(InputError, match="ParameterScan"):
        plot_parameter_scans({"a": 1})  # type: ignore[dict-item]
    with pytest.raises(InputError, match="PartialSumDecay"):
        plot_partial_sum_decay(None)  # type: ignore[arg-type]

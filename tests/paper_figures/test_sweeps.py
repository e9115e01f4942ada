"""plot_sweeps: the rows it plots are the sweeps' values, the files it saves, the normalisations, and
sweep --head --plot drawing the same."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import numpy as np
import pytest

from ropeproof._cli import main
from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.paper_figures._style import FigureResult, save_figure
from ropeproof.paper_figures._sweeps import plot_sweeps
from ropeproof.verify.measure.exact._head_sweep import sweep_head
from ropeproof.verify.measure.exact._stated_bound import check_bound


def two_sweeps():
    a = sweep_head(compile_construction(index_construction(theta=0.866, letters=2, max_int=30)), 31)
    b = sweep_head(compile_construction(index_construction(theta=0.3, letters=2, max_int=30)), 31)
    return {"theta = 0.866": a, "theta = 0.3": b}


def test_rows_are_the_sweeps_values_and_files_are_written(tmp_path: Path) -> None:
    sweeps = two_sweeps()
    fig = plot_sweeps(sweeps, quantity="gap_sup", bound="pi^2/(2*n^2)", name="mine")
    assert isinstance(fig, FigureResult) and fig.name == "mine"
    for label, sweep in sweeps.items():
        rows = [r for r in fig.rows if r["label"] == label]
        assert [r["n"] for r in rows] == list(range(2, 32))
        np.testing.assert_array_equal([r["gap_sup"] for r in rows], sweep.columns["gap_sup"])
        np.testing.assert_allclose(
            [r["bound"] for r in rows], np.pi**2 / (2 * np.arange(2, 32) ** 2), rtol=1e-15
        )
    assert "pi^2/(2*n^2)" in fig.caption and "Delta(n)" in fig.caption
    paths = save_figure(fig, tmp_path)
    assert [p.name for p in paths] == ["mine.png", "mine.pdf", "mine.csv", "mine.caption.txt"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and paths[1].read_bytes()[:5] == b"%PDF-"
    table = list(csv.DictReader(io.StringIO(paths[2].read_text())))
    assert len(table) == 60 and float(table[0]["gap_sup"]) == pytest.approx(float(fig.rows[0]["gap_sup"]))


def test_normalisations_and_bound_checks() -> None:
    sweeps = two_sweeps()
    first = plot_sweeps(sweeps, normalise="first")
    label = "theta = 0.3"
    rows = [r for r in first.rows if r["label"] == label]
    assert rows[0]["plotted"] == 1.0
    scaled = plot_sweeps(sweeps, normalise=lambda n: 1.0 / n**2)
    r = next(r for r in scaled.rows if r["label"] == label and r["n"] == 10)
    assert r["plotted"] == pytest.approx(r["margin_inf"] * 100)
    check = check_bound(index_construction(theta=0.866, letters=2, max_int=30), "pi^2/(2*n^2)", 31)
    ratio = plot_sweeps({"index": check}, normalise="bound")
    violated = [r["n"] for r in ratio.rows if r["status"] in ("violated", "tight-violated")]
    assert violated[0] == 4 and all(r["plotted"] > 1 for r in ratio.rows if r["n"] in violated)
    assert "crosses: violated rows" in ratio.caption


def test_bad_input() -> None:
    sweeps = two_sweeps()
    with pytest.raises(InputError, match="quantity='gap'"):
        plot_sweeps(sweeps, quantity="gap")
    with pytest.raises(InputError, match="non-empty mapping"):
        plot_sweeps({})
    with pytest.raises(InputError, match="needs a bound"):
        plot_sweeps(sweeps, normalise="bound")
    with pytest.raises(InputError, match="normalise='x'"):
        plot_sweeps(sweeps, normalise="x")
    with pytest.raises(InputError, match="plain file stem"):
        plot_sweeps(sweeps, name="../x")
    with pytest.raises(InputError, match="must be a HeadSweep"):
        plot_sweeps({"x": [1, 2]})


def test_sweep_head_plot(tmp_path: Path, capsys) -> None:
    assert main(["compile", "index", "--theta", "0.866", "--letters", "2", "--out", str(tmp_path / "h")]) == 0
    capsys.readouterr()
    argv = ["sweep", "--head", str(tmp_path / "h"), "--lengths", "2:17", "--json"]
    assert main([*argv, "--plot", str(tmp_path / "m.png")]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "m.csv").read_text())))
    assert [float(r["margin_inf"]) for r in rows] == pytest.approx([r["margin_inf"] for r in out["rows"]])
    assert (tmp_path / "m.png").exists() and not (tmp_path / "m.pdf").exists()
    assert main([*argv, "--plot", str(tmp_path / "m.png")]) == 2  # exists: refused without --force
    assert "--plot" in capsys.readouterr().err
    assert main([*argv, "--plot", str(tmp_path / "b"), "--bound", "pi^2/(2*n^2)"]) == 0
    capsys.readouterr()
    assert (tmp_path / "b.pdf").exists() and "violated" in (tmp_path / "b.csv").read_text()
    assert main([*argv, "--plot", str(tmp_path / "x.svg")]) == 2
    (tmp_path / "pdir").mkdir()
    assert main([*argv, "--plot", str(tmp_path / "pdir")]) == 2  # a directory: refused, not pdir.png beside
    assert "is a directory; give a file name" in capsys.readouterr().err
    assert not (tmp_path / "pdir.png").exists() and not (tmp_path / "pdir.pdf").exists()
    # without --force every file is created exclusively: one that appears meanwhile (a concurrent run's)
    # is refused, not replaced
    from ropeproof.machinery._errors import OutputError
    from ropeproof.paper_figures._style import save_figure
    from ropeproof.paper_figures._sweeps import plot_sweeps
    from ropeproof.verify.measure.exact._head_sweep import sweep_head

    figure = plot_sweeps({"h": sweep_head(str(tmp_path / "h"), 6)}, name="m")
    before = (tmp_path / "m.png").read_bytes()
    with pytest.raises(OutputError, match=r"--plot .*m.png appeared meanwhile; it was not replaced"):
        save_figure(figure, tmp_path, ("png",), replace=False, option="--plot")
    assert (tmp_path / "m.png").read_bytes() == before


def test_options_of_the_builtin_sweeps_are_refused_with_a_head(tmp_path: Path, capsys) -> None:
    """--theta, --shard, --jsonl and --term mean nothing for a head directory: refused, never ignored."""
    assert main(["compile", "index", "--theta", "0.866", "--letters", "2", "--out", str(tmp_path / "h")]) == 0
    capsys.readouterr()
    argv = ["sweep", "--head", str(tmp_path / "h"), "--lengths", "2:6", "--bound", "1"]
    for extra in (["--theta", "0.5"], ["--shard", "1/2"], ["--jsonl"], ["--term", "min"]):
        assert main([*argv, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert f"{extra[0]}: not an option of a head sweep (--head DIR)" in err, err


def test_the_caption_names_only_lengths_with_rows() -> None:
    """A family whose shortest input has length 4 has no value at n = 2, 3: the caption names 4..30,
    and a thinned selection says how many lengths it holds."""
    from ropeproof.constructions._paper import retrieval_construction
    from ropeproof.verify.measure.exact._families import Family, family_for

    construction = retrieval_construction(3, 0.4, max_int=1)
    cases = tuple(dataclasses.replace(c, target_distance=3) for c in family_for(construction).cases)
    sweep = sweep_head(compile_construction(construction), 30, Family("three-back", cases, "3 back"))
    assert np.isnan(sweep.columns["margin_inf"][:2]).all()
    assert "(mine: n = 4..30)" in plot_sweeps({"mine": sweep}).caption
    thinned = plot_sweeps({"mine": sweep.select(2, 30, 10)}).caption
    assert "(mine: n = 12..30 (3 lengths with a value))" in thinned

"""check's figures drawn by two processes equal the figures drawn in one, byte for byte."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ropeproof.figure_process import start_figures
from ropeproof.paper_figures import make_all
from ropeproof.theory.errors import InputError

NAMES = ["e_geometry", "ps_plane", "a_theory_bounds"]


def test_two_processes_draw_what_one_draws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ropeproof.paper_figures as figures_package

    drawn_here: list[str] = []
    real = figures_package.make_all

    def spy(out_dir: Path, quick: bool = False, only: list[str] | None = None, formats=None):  # type: ignore[no-untyped-def]
        drawn_here.extend(only or [])
        return real(out_dir, quick=quick, only=only, formats=formats)

    # the parent's make_all; the spawned child imports its own
    monkeypatch.setattr(figures_package, "make_all", spy)
    both = ("png", "pdf")
    main = ["ps_plane"]
    job = start_figures(tmp_path / "split", quick=True, threads=1, names=NAMES, main=main, formats=both)
    split = job.finish()
    monkeypatch.undo()
    alone = make_all(tmp_path / "alone", quick=True, only=NAMES, formats=both)
    assert list(split) == NAMES and set(alone) == set(NAMES)
    for name in NAMES:
        for a, b in zip(split[name], alone[name], strict=True):
            assert a.name == b.name and a.read_bytes() == b.read_bytes(), a.name
        assert [p.suffix for p in split[name]] == [".png", ".pdf", ".csv", ".txt"]
    assert not job.process.is_alive()
    # the main figure is drawn by the parent first and never by the child; each figure is drawn once
    assert drawn_here[0] == "ps_plane" and "ps_plane" not in job.drawn_by_child
    assert sorted(drawn_here + job.drawn_by_child) == sorted(NAMES)


def test_an_error_in_the_child_is_raised_in_the_parent(tmp_path: Path) -> None:
    # the parent takes a name only after the claims; here it finishes at once, so the child may meet
    # the unknown name first or the parent may: either way the same InputError reaches the caller
    job = start_figures(tmp_path / "f", quick=True, threads=1, names=["nosuch"])
    with pytest.raises(InputError, match="unknown figures"):
        job.finish()
    job.cancel()


def test_cancel_stops_the_child(tmp_path: Path) -> None:
    job = start_figures(tmp_path / "f", quick=True, threads=1, names=NAMES)
    start = time.perf_counter()
    job.cancel()
    assert not job.process.is_alive() and time.perf_counter() - start < 10


def test_check_draws_the_figures_that_share_the_claims_work_in_its_own_process() -> None:
    from ropeproof.paper_figures import DRAWN_WITH_CLAIMS, NEEDS_HF, figure_names

    assert NEEDS_HF <= DRAWN_WITH_CLAIMS <= set(figure_names())


def test_a_selection_draws_only_its_claims_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check --claims FILE --only 'mine.*' used to draw every paper figure (146 s for two 1-second
    claims); a selection draws the figures its claims name, and every built-in topic names real figures."""
    from ropeproof.claims import registered_claims
    from ropeproof.cli import main
    from ropeproof.commands.check import figures_of
    from ropeproof.paper_figures import figure_names

    claims = registered_claims()
    named = {name for c in claims for name in c.report_figures}
    assert named <= set(figure_names())
    assert named == set(figure_names())  # every figure illustrates some claim
    thm32 = [c for c in claims if c.id.startswith("thm3.2.")]
    drawn = figures_of(thm32, whole=False)
    assert drawn[:3] == ["a_theory_bounds", "b_loglog_discrepancy", "d_softmax_scale"]
    assert all(name.startswith("errata_") for name in drawn[3:])
    assert figures_of(thm32, whole=True) is None
    claims_file = tmp_path / "mine.py"
    claims_file.write_text(
        "from ropeproof.claims import ClaimSet, Outcome\nCLAIMS = ClaimSet('mine')\n"
        "@CLAIMS.claim(id='mine.one', statement='s', reference='r')\n"
        "def _(ctx):\n    return Outcome.judge(ok=True, figures={})\n"
    )
    out = tmp_path / "rep"
    args = ["check", "--claims", str(claims_file), "--only", "mine.*", "--no-progress", "--out", str(out)]
    assert main([*args, "--jobs", "1"]) == 0
    assert not (out / "figures").exists() or list((out / "figures").iterdir()) == []
    out2 = tmp_path / "rep2"
    assert main(["check", "--quick", "--only", "rope.*", "--only", "thm3.1.index", "--no-progress",
                 "--jobs", "1", "--out", str(out2)]) == 0  # fmt: skip
    assert sorted(p.stem for p in (out2 / "figures").glob("*.png")) == ["c_accuracy", "e_geometry"]

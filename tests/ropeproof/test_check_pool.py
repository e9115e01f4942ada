"""check's figures drawn by two processes sharing the run's store equal the figures drawn in one, byte for
byte; a saved report's figures are drawn again from its results alone."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ropeproof.cli import main
from ropeproof.check_pool import FigurePool, draw_figures
from ropeproof.paper_figures import make_all
from ropeproof.theory.result_store import ResultStore

NAMES = ["e_geometry", "ps_plane", "a_theory_bounds"]
BOTH = ("png", "pdf")


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_two_processes_draw_what_one_draws(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "store")
    pool = FigurePool(NAMES, tmp_path / "split", store, True, BOTH, threads=1, first={"a_theory_bounds"})
    split = pool.finish()
    assert pool.drawn_by_worker[0] == "a_theory_bounds"  # sent to the second process at the start
    alone = make_all(tmp_path / "alone", quick=True, only=NAMES, formats=BOTH)
    assert list(split) == NAMES and set(alone) == set(NAMES)  # report order, whoever drew what
    for name in NAMES:
        assert [p.name for p in split[name]] == [p.name for p in alone[name]]
        assert [p.suffix for p in split[name]] == [".png", ".pdf", ".csv", ".txt"]
    assert _files(tmp_path / "split") == _files(tmp_path / "alone")
    # each figure was drawn by one side; what either side computed is in the shared directory
    here = [n for n in NAMES if n not in pool.drawn_by_worker]
    assert sorted(here + pool.drawn_by_worker) == sorted(NAMES)
    assert len(store.saved_keys()) == len(NAMES)  # one data product per figure, written once


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_a_figure_that_raises_in_either_process_costs_only_itself(tmp_path: Path) -> None:
    # the first process may take the failing name itself, or the second may meet it: the same record
    names = ["nosuch", "e_geometry", "alsonot"]
    pool = FigurePool(names, tmp_path / "f", ResultStore(tmp_path / "s"), True, ("png",), 1)
    drawn = pool.finish()
    assert list(drawn) == ["e_geometry"] and all(p.is_file() for p in drawn["e_geometry"])
    assert sorted(pool.failed) == ["alsonot", "nosuch"]
    assert "InputError: unknown figure 'nosuch'" in pool.failed["nosuch"]
    assert pool.failed["nosuch"].startswith("Traceback")
    pool.cancel()
    made, failed = draw_figures(names, tmp_path / "one", ResultStore(), True, ("png",))
    assert list(made) == ["e_geometry"] and list(failed) == ["nosuch", "alsonot"]


def test_check_writes_its_report_when_a_figure_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in one figure used to discard a whole run (an 18-minute check included): now the claims,
    the corrections and the other figures are written, the failure is in the report, and check exits 3
    with one line naming the figure."""
    import ropeproof.paper_figures as paper_figures

    real = paper_figures.draw_figure

    def broken(name: str, quick: bool, store: ResultStore):
        if name == "e_geometry":
            raise ZeroDivisionError("planted")
        return real(name, quick, store)

    monkeypatch.setattr(paper_figures, "draw_figure", broken)  # one process: --jobs 1
    out = tmp_path / "rep"
    args = ["check", "--quick", "--only", "thm3.1.*", "--jobs", "1", "--no-progress", "--out", str(out)]
    assert main(args) == 3
    report = json.loads((out / "report.json").read_text())
    assert report["claims"] and all(c["verdict"] != "error" for c in report["claims"])
    assert list(report["figure_errors"]) == ["e_geometry"]
    assert "ZeroDivisionError: planted" in report["figure_errors"]["e_geometry"]
    assert "e_geometry" not in report["figures"] and report["figures"]  # the others were drawn
    md = (out / "report.md").read_text()
    assert "## Figure errors" in md and "ZeroDivisionError: planted" in md


def test_cancel_stops_the_second_process(tmp_path: Path) -> None:
    pool = FigurePool(NAMES, tmp_path / "f", ResultStore(tmp_path / "s"), True, ("png",), 1)
    start = time.perf_counter()
    pool.cancel()
    assert time.perf_counter() - start < 10
    with pytest.raises(ValueError, match="through its directory"):
        FigurePool(NAMES, tmp_path / "f", ResultStore(), True, ("png",), 1)


def test_a_selection_draws_only_its_claims_figures(tmp_path: Path) -> None:
    """check --claims FILE --only 'mine.*' used to draw every paper figure (146 s for two 1-second
    claims); a selection draws the figures its claims name, and every built-in topic names real figures."""
    from ropeproof.claims import registered_claims
    from ropeproof.commands.check import figures_of
    from ropeproof.paper_figures import figure_names

    claims = registered_claims()
    named = {name for c in claims for name in c.report_figures}
    assert named <= set(figure_names())
    assert named == set(figure_names())  # every figure illustrates some claim
    thm32 = [c for c in claims if c.id.startswith("thm3.2.")]
    assert figures_of(thm32, whole=False) == [
        "a_theory_bounds",
        "b_loglog_discrepancy",
        "d_softmax_scale",
        *(f"errata_{x}" for x in ("index_fixed_theta", "index_best_theta", "index_largest_gap")),
        *(f"errata_{x}" for x in ("retrieval_margin", "retrieval_largest_gap")),
    ]
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


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_a_saved_report_draws_its_figures_again_without_computing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two processes or one write the same report and figures; ``figures --from-report`` draws the same
    bytes from the report's store alone (a store that may not compute: anything missing would raise)."""
    select = ["--quick", "--only", "rope.*", "--only", "thm3.1.index", "--no-progress"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["check", *select, "--jobs", "1", "--out", str(one)]) == 0
    assert main(["check", *select, "--jobs", "2", "--out", str(two)]) == 0
    assert sorted(p.stem for p in (one / "figures").glob("*.png")) == ["c_accuracy", "e_geometry"]
    assert _files(one / "figures") == _files(two / "figures")
    assert _files(one / "store") == _files(two / "store")  # the same values, whichever process computed
    assert not (one / "store" / ".locks").exists()
    again = tmp_path / "again"
    assert main(["figures", "--from-report", str(one), "--out", str(again)]) == 0
    assert _files(again) == _files(one / "figures")
    capsys.readouterr()
    # what cannot be drawn from a saved report is refused in one line, exit 2
    for argv, message in [
        (["--from-report", str(tmp_path / "none")], "no readable report.json"),
        (["--from-report", str(one), "--only", "a_theory_bounds"], "do not hold figure.a-theory-bounds"),
    ]:
        assert main(["figures", *argv, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    report = json.loads((one / "report.json").read_text())
    report["run"]["flags"]["quick"] = False
    (one / "report.json").write_text(json.dumps(report))
    assert main(["figures", "--from-report", str(one), "--quick", "--out", str(tmp_path / "y")]) == 2
    assert "the report ran without --quick" in capsys.readouterr().err


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_a_claim_and_a_figure_in_two_processes_compute_a_shared_result_once(tmp_path: Path) -> None:
    """The Theorem 3.2 claims and the theory figure read one Index sweep table, the PS claim and the PS
    figure one scored head (object products); with the figures in a second process, each is computed once
    in the run (the store's computation log, reported as ``run.computations``)."""
    select = ["--quick", "--only", "thm3.2.index.pi2-over-2n2.*", "--only", "ps.index-positional"]
    out = tmp_path / "two"
    assert main(["check", *select, "--jobs", "2", "--no-progress", "--out", str(out)]) == 0
    computations = json.loads((out / "report.json").read_text())["run"]["computations"]
    assert computations["computed_more_than_once"] == {}
    assert computations["values"] >= 4
    assert not [p for p in (out / "store").iterdir() if p.name.startswith(".")]  # no pickles left behind

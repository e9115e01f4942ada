"""[A]'s frontier figure from run directories (``ropeproof llm-eval plot``) and the local models' figure:
one line per model, the plotted rows equal to the runs' results, and a reading that can go each way.
The local models' figure (``llm_eval_local``) is checked in the quick report (tests/ropeproof/test_cli.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ropeproof._cli import main
from ropeproof.machinery._errors import InputError
from ropeproof.paper_figures._llm_eval import figure_rows, llm_eval_figure, readings
from ropeproof.verify.studies.llm_eval._harness import evaluate
from ropeproof.verify.studies.llm_eval._local import PythonCallable
from ropeproof.verify.studies.llm_eval._protocol import answer
from ropeproof.verify.studies.llm_eval._results import load_run, merge_by_label


def _tokens(text: str) -> list[str]:
    return text.splitlines()[-1].removeprefix("Sequence: ").split()


def perfect(text: str) -> str:
    tokens = _tokens(text)
    return answer("number" if tokens[-1].isdigit() else "letter", tokens)


def letters_only(text: str) -> str:
    """Right on the letter task, wrong on every number prompt: [A]'s ordering, strongly."""
    tokens = _tokens(text)
    return "0" if tokens[-1].isdigit() else answer("letter", tokens)


def _run(tmp_path: Path, fn, name: str, tasks=("number", "letter")) -> Path:
    out = tmp_path / f"{name}-{'-'.join(tasks)}"
    evaluate(
        PythonCallable(fn, name), tasks, [8, 32], prompts=10, draws=2, out=out, label=name, concurrency=1
    )
    return out


def test_plot_draws_every_run_and_reads_the_ordering(tmp_path: Path, capsys) -> None:
    runs = [_run(tmp_path, perfect, "perfect"), _run(tmp_path, letters_only, "letters-only")]
    fig_dir = tmp_path / "figure"
    code = main(["llm-eval", "plot", *map(str, runs), "--out", str(fig_dir), "--formats", "png", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert sorted(p.name for p in fig_dir.iterdir()) == [
        "llm_eval.caption.txt",
        "llm_eval.csv",
        "llm_eval.png",
    ]
    assert doc["readings"] == [
        "perfect: ordering unresolved: the 95% intervals overlap at length 8, 32",
        "letters-only: shows [A]'s ordering: letter above number at every length (95% intervals disjoint)",
    ]
    with open(fig_dir / "llm_eval.csv") as f:
        rows = list(csv.DictReader(f))
    summaries = [load_run(r) for r in runs]
    expected = figure_rows(summaries)
    assert len(rows) == len(expected) == 8
    for got, want in zip(rows, expected, strict=True):
        assert got["model"] == want["model"] and int(got["length"]) == want["length"]
        assert float(got["accuracy_mean"]) == pytest.approx(want["accuracy_mean"], abs=1e-12)
        assert float(got["ci_low"]) == pytest.approx(want["ci_low"], abs=1e-12)
    caption = (fig_dir / "llm_eval.caption.txt").read_text()
    assert "letter > 0.88 at length 32" in caption and readings(summaries)[1] in caption


def test_runs_of_one_family_share_a_line(tmp_path: Path, capsys) -> None:
    number = _run(tmp_path, perfect, "family", ("number",))
    letter = _run(tmp_path, letters_only, "family", ("letter",))
    (joined,) = merge_by_label([load_run(number), load_run(letter)])
    assert {r.task for r in joined.results} == {"number", "letter"}
    assert joined.ordering().verdict == "unresolved"  # both perfect on their task
    with pytest.raises(InputError, match="both have the number task at length 8"):
        merge_by_label([load_run(number), load_run(number)])
    code = main(["llm-eval", "plot", str(number), str(tmp_path), "--out", str(tmp_path / "fig")])
    assert code == 2 and "is not an llm-eval run directory" in capsys.readouterr().err
    with pytest.raises(InputError, match="nothing to plot"):
        llm_eval_figure([])

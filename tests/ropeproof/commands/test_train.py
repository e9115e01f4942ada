from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropeproof._cli import main
from ropeproof.commands import _train as train_command
from ropeproof.verify.studies.training._trainer import load_record

pytest.importorskip("transformers")


def test_train_writes_a_run_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["train", "letter", "--out", str(out), "--steps", "4", "--checkpoint-every", "2"]
    argv += ["--eval-prompts", "8", "--score-prompts", "0", "--no-progress", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["task"] == "letter" and doc["config"]["steps"] == 4 and doc["best_step"] in (0, 2, 4)
    assert set(doc["accuracy"]) == {"0", "1", "2", "3", "4"}
    assert len(load_record(out).losses) == 4
    assert main(argv) == 2  # the run directory is not empty
    assert "not empty" in capsys.readouterr().err
    assert main([*argv, "--resume"]) == 0  # already finished: resuming adds no step
    assert len(load_record(out).losses) == 4
    assert main([*argv, "--force"]) == 0
    assert train_command.register is not None


def test_resume_with_other_settings_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    base = ["train", "number", "--out", str(out), "--eval-prompts", "4", "--score-prompts", "0"]
    base.append("--no-progress")
    assert main([*base, "--steps", "2"]) == 0
    capsys.readouterr()
    assert main([*base, "--steps", "3", "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ropeproof train: error: --out=") and "steps" in err[0]


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own refusals
        return int(exc.code or 0)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_bad_input_with_force_leaves_the_old_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `train --force --seed 18446744073709551616 --out D` used to delete the run in D, then fail (exit 3)
    from ropeproof.machinery._memory_budget import ENV_VAR as MEMORY_ENV
    from ropeproof.machinery._time_budget import ENV_VAR as TIME_ENV

    monkeypatch.delenv(MEMORY_ENV, raising=False)
    out = tmp_path / "D"
    base = [
        "train",
        "letter",
        "--out",
        str(out),
        "--steps",
        "2",
        "--eval-prompts",
        "4",
        "--score-prompts",
        "0",
    ]
    assert main([*base, "--no-progress"]) == 0
    before = _files(out)
    capsys.readouterr()
    for extra, message in (
        (["--seed", str(2**64)], "argument --seed: '18446744073709551616' is out of range; accepted: an "
         "integer >= 0 and <= 18446744073709551615"),
        (["--steps", str(10**12)], "--steps 1000000000000 (the record keeps every loss)"),
        (["--eval-prompts", str(10**8)], "--eval-prompts 100000000 and"),
    ):  # fmt: skip
        assert _exit_code([*base, "--force", "--no-progress", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
        assert _files(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["D"]
    monkeypatch.setenv(TIME_ENV, "1s")
    assert main([*base, "--force", "--no-progress", "--steps", "100000"]) == 2
    err = capsys.readouterr().err
    assert "would take about" in err and "more than the time limit of 1 s" in err
    assert _files(out) == before

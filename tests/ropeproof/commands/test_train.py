from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropeproof.cli import main
from ropeproof.commands import train as train_command
from ropeproof.verify.studies.training.trainer import load_record

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

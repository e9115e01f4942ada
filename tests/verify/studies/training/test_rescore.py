"""Re-scoring a finished run adds counts and intervals and never changes a recorded measurement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.training._config import SMALL
from ropeproof.verify.studies.training._rescore import rescore_run
from ropeproof.verify.studies.training._trainer import RECORD_FILE, load_record, train

TINY = SMALL.with_overrides(steps=2, checkpoint_every=1, eval_prompts=8, score_prompts=4)


def _strip(run: Path) -> dict:
    """The record as an earlier trainer wrote it: no counts, no intervals."""
    data = json.loads((run / RECORD_FILE).read_text())
    for e in data["evaluations"]:
        e.pop("counts")
        for key in ("S_pos_ci", "S_sym_ci", "entropy_ci"):
            e["dynamics"].pop(key)
    (run / RECORD_FILE).write_text(json.dumps(data))
    return data


def test_rescore_adds_intervals_and_reproduces_the_numbers(tmp_path: Path) -> None:
    run = tmp_path / "run"
    trained = train("letter", TINY, run, seed=3, progress=False)
    old = _strip(run)
    new = rescore_run(run)
    assert [e["step"] for e in new.evaluations] == [0, 1, 2]
    for before, after, original in zip(old["evaluations"], new.evaluations, trained.evaluations, strict=True):
        assert after["accuracy"] == before["accuracy"] == original["accuracy"]
        assert after["counts"] == original["counts"]
        assert after["counts"]["0"][1] == 8 and sum(after["counts"][h][1] for h in "1234") == 8
        dyn = after["dynamics"]
        assert dyn["S_pos"] == before["dynamics"]["S_pos"]
        for value, (low, high) in zip(dyn["S_pos"], dyn["S_pos_ci"], strict=True):
            assert low <= value <= high
    assert load_record(run).evaluations == new.evaluations  # written back


def test_rescore_refuses_a_record_the_checkpoints_do_not_reproduce(tmp_path: Path) -> None:
    run = tmp_path / "run"
    train("number", TINY.with_overrides(score_prompts=0), run, seed=0, progress=False)
    data = json.loads((run / RECORD_FILE).read_text())
    data["evaluations"][1]["accuracy"]["0"] += 0.125  # one more right answer than the weights give
    (run / RECORD_FILE).write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"step 1\.accuracy\.0: recorded .* does not reproduce"):
        rescore_run(run, with_dynamics=False)
    assert json.loads((run / RECORD_FILE).read_text()) == data  # left as it was

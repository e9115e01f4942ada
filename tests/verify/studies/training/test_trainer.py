"""The training loop: a few steps run and learn, resume equals an uninterrupted run bit for bit,
checkpoints load with from_pretrained and answer through the tokenizer."""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import pytest
import torch

from ropeproof.machinery._errors import InputError, OutputError
from ropeproof.verify.measure._tasks import number_task
from ropeproof.verify.measure._tokenizer import prompt_text
from ropeproof.verify.studies.training._config import SMALL
from ropeproof.verify.studies.training._evaluation import accuracy_per_hop, predictions
from ropeproof.verify.studies.training._trainer import checkpoint_dir, load_record, train

transformers = pytest.importorskip("transformers")

TINY = SMALL.with_overrides(steps=6, checkpoint_every=3, eval_prompts=8, score_prompts=2)


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return transformers.GPTJForCausalLM.from_pretrained(path).state_dict()


def test_a_few_steps_run_and_write_checkpoints(tmp_path: Path) -> None:
    record = train("number", TINY, tmp_path / "run", progress=False)
    assert len(record.losses) == 6 and all(math.isfinite(x) for x in record.losses)
    # the first loss is near ln(vocab) for a freshly initialised model (HF init, std 0.02 logits)
    assert abs(record.losses[0] - math.log(137)) < 0.1
    assert [e["step"] for e in record.evaluations] == [0, 3, 6]
    assert set(record.evaluations[0]["accuracy"]) == {"0", "1", "2", "3", "4"}
    dyn = record.evaluations[-1]["dynamics"]
    assert len(dyn["S_pos"]) == len(dyn["S_sym"]) == len(dyn["entropy"]) == TINY.n_layer
    assert all(0.0 <= v <= 1.0 + 1e-12 for v in dyn["entropy"])
    assert checkpoint_dir(tmp_path / "run", 3).is_dir() and (tmp_path / "run" / "model.safetensors").is_file()
    assert load_record(tmp_path / "run").best_step in (0, 3, 6)


def test_resume_after_interruption_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    cfg = dataclasses.replace(TINY, dropout=0.1, score_prompts=0)
    whole = train("letter", cfg, tmp_path / "whole", seed=3, progress=False, with_dynamics=False)
    part = train("letter", cfg, tmp_path / "part", seed=3, progress=False, with_dynamics=False, stop_after=4)
    assert len(part.losses) == 4  # interrupted after step 4: the last checkpoint is step 3
    resumed = train(
        "letter", cfg, tmp_path / "part", seed=3, progress=False, with_dynamics=False, resume=True
    )
    assert resumed.losses == whole.losses  # dropout 0.1 is on: the generator state is restored too
    a, b = _weights(checkpoint_dir(tmp_path / "whole", 6)), _weights(checkpoint_dir(tmp_path / "part", 6))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_resume_refuses_another_run_and_a_full_directory(tmp_path: Path) -> None:
    train("number", TINY.with_overrides(steps=3), tmp_path / "run", progress=False, with_dynamics=False)
    with pytest.raises(OutputError, match="seed"):
        train("number", TINY.with_overrides(steps=3), tmp_path / "run", seed=1, resume=True, progress=False)
    with pytest.raises(OutputError, match="is not empty; pass --force"):
        train("number", TINY, tmp_path / "run", progress=False)
    with pytest.raises(OutputError, match="nothing to resume"):
        train("number", TINY, tmp_path / "none", resume=True, progress=False)
    # a truncated record: one line naming it, not a JSONDecodeError
    record = tmp_path / "run" / "training.json"
    record.write_text(record.read_text()[:40])
    with pytest.raises(InputError, match=r"the training record .*training.json is not JSON .*truncated"):
        train("number", TINY.with_overrides(steps=3), tmp_path / "run", resume=True, progress=False)
    record.unlink()
    os.mkfifo(record)  # no writer: never waited on
    with pytest.raises(InputError, match="is a FIFO, not a regular file"):
        load_record(tmp_path / "run")


def test_checkpoint_loads_with_from_pretrained_and_answers_through_the_tokenizer(tmp_path: Path) -> None:
    train("number", TINY, tmp_path / "run", progress=False, with_dynamics=False)
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "run").eval()
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "run")
    insts = number_task(5, seed=9)
    enc = tok([prompt_text(i.tokens) for i in insts], return_tensors="pt")
    with torch.no_grad():
        words = tok.convert_ids_to_tokens(model(**enc).logits[:, -1].argmax(-1).tolist())
    # the same answers as the in-package evaluation, which indexes the vocabulary directly
    ids = predictions(model, enc["input_ids"])
    assert words == tok.convert_ids_to_tokens(ids.tolist())
    assert enc["input_ids"].shape == (5, 17) and (enc["input_ids"] != tok.unk_token_id).all()


def test_accuracy_per_hop_counts_right_answers() -> None:
    from ropeproof.verify.studies.training._data import Batch

    class Fixed(torch.nn.Module):  # answers token id = the first input id
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(1))

        def forward(
            self, input_ids: torch.Tensor, use_cache: bool = False, logits_to_keep: int = 0
        ) -> object:
            logits = torch.nn.functional.one_hot(input_ids, 10).float()[:, :, :]
            logits = logits[:, :1].expand(-1, input_ids.shape[1], -1)
            logits = logits[:, -logits_to_keep:] if logits_to_keep else logits  # as transformers does
            return type("Out", (), {"logits": logits})()

    ids = torch.tensor([[1, 0], [2, 0], [3, 0], [4, 0]])
    batch = Batch(ids, torch.tensor([1, 2, 0, 4]), torch.tensor([1, 1, 2, 2]))
    assert accuracy_per_hop(Fixed(), batch) == {0: 0.75, 1: 1.0, 2: 0.5}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_force_replaces_an_old_run_only_once_the_new_one_is_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ropeproof.machinery._errors import InputError
    from ropeproof.verify.studies.training import _trainer as trainer

    out = tmp_path / "run"
    tiny = TINY.with_overrides(steps=2, checkpoint_every=2, score_prompts=0)
    train("letter", tiny, out, progress=False, with_dynamics=False)
    before = _files(out)
    # bad input: refused before the old run is touched
    for bad in ({"seed": 2**64}, {"seed": -1}, {"stop_after": -1}):
        with pytest.raises(InputError, match=next(iter(bad))):
            train("letter", tiny, out, progress=False, force=True, **bad)  # type: ignore[arg-type]
        assert _files(out) == before

    # a failure while the new run's first checkpoint is built: the old run stays whole
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the new run failed at step 0")

    with monkeypatch.context() as m:
        m.setattr(trainer, "_evaluate", broken)
        with pytest.raises(RuntimeError, match="step 0"):
            train("letter", tiny, out, seed=5, progress=False, force=True, with_dynamics=False)
    assert _files(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    # interrupted after the swap: the new run is what --out holds, and it resumes
    train("letter", tiny, out, seed=5, progress=False, force=True, with_dynamics=False, stop_after=1)
    assert load_record(out).seed == 5 and load_record(out).losses == []  # its last checkpoint: step 0
    assert not (out / "model.safetensors").exists()  # the old run's best model went with it
    done = train("letter", tiny, out, seed=5, progress=False, resume=True, with_dynamics=False)
    assert len(done.losses) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["run"]

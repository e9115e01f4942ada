"""The task tokenizer: word-level, ids in model order, [A]'s prompt format, loadable by AutoTokenizer."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from ropeproof.constructions._multihop_compile import compile_program
from ropeproof.constructions._multihop_programs import number_program
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._tasks import letter_task, number_task
from ropeproof.verify.measure._tokenizer import (
    UNK,
    build_tokenizer,
    prompt_text,
    task_tokenizer,
    task_vocabulary,
    word,
)


def test_ids_are_model_rows_and_prompts_look_like_the_paper(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    tok = task_tokenizer("number")
    vocab = task_vocabulary("number")
    assert len(vocab) == 136 and len(tok) == 137
    model = compile_program(number_program(hops=1, layers=1))
    assert list(model.tokens) == vocab  # token id = model row
    tok.save_pretrained(tmp_path)
    assert (tmp_path / "tokenizer.json").is_file()
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    ids = loaded("a z b y c x d w 5")["input_ids"]
    assert ids == [vocab.index(t) for t in ["A", "Z", "B", "Y", "C", "X", "D", "W", "5"]]
    assert loaded.convert_ids_to_tokens([vocab.index("L26"), 136]) == ["l26", UNK]
    assert loaded("qq 5")["input_ids"][0] == 136  # unknown words map to [UNK]
    inst = number_task(1, seed=0)[0]
    assert loaded(prompt_text(inst.tokens))["input_ids"] == [vocab.index(t) for t in inst.tokens]


def test_letter_task_words() -> None:
    tok = task_tokenizer("letter")
    vocab = task_vocabulary("letter")
    assert vocab[:3] == ["AA", "AB", "AC"] and "C2" in vocab and len(vocab) == 128
    assert tok("c2 fc")["input_ids"] == [vocab.index("C2"), vocab.index("FC")]
    inst = letter_task(1, seed=0)[0]
    assert prompt_text(inst.tokens).split() == [word(t) for t in inst.tokens]
    assert word("L26") == "l26"


def test_errors() -> None:
    with pytest.raises(InputError, match="task"):
        task_vocabulary("words")
    with pytest.raises(InputError, match="distinct"):
        build_tokenizer(["A", "a"])
    with pytest.raises(InputError, match="distinct"):
        build_tokenizer(["a b"])

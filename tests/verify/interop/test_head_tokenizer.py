"""The tokenizer a single-head export ships: written by save_pretrained and read back by
AutoTokenizer.from_pretrained alone, word i is id i with case kept, unknown words refused, bad names
refused before anything is built."""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from ropeproof.verify.interop._errors import ExportError  # noqa: E402
from ropeproof.verify.interop._head_tokenizer import head_tokenizer  # noqa: E402


def test_word_i_is_id_i_after_from_pretrained(tmp_path) -> None:
    names = ["A", "a", "C2", "17", "[x]"]  # case kept: "A" and "a" are different tokens
    head_tokenizer(names).save_pretrained(tmp_path)
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path)
    assert tok("A a C2 17 [x] A")["input_ids"] == [0, 1, 2, 3, 4, 0]
    assert tok.convert_ids_to_tokens([4, 2]) == ["[x]", "C2"]
    assert len(tok) == len(names)  # no extra id the model has no row for
    with pytest.raises(Exception, match="UNK"):  # tokenizers refuses a word outside the vocabulary
        tok("A b")


@pytest.mark.parametrize(
    "names, match",
    [
        ([], "distinct"),
        (["A", "A"], "distinct"),
        (["A", "B C"], "whitespace"),
        (["A", ""], "non-empty"),
        (["A", "[UNK]"], "unknown word"),
    ],
)
def test_bad_names_are_refused(names: list[str], match: str) -> None:
    with pytest.raises(ExportError, match=match):
        head_tokenizer(names)

"""A word-level tokenizer over [A]'s task tokens, loadable with ``AutoTokenizer.from_pretrained``.

One vocabulary per task, in the compiled models' token order (so token id = model row), written as in
[A]'s appendix: lower case, one word per token, prompts separated by spaces (``docs/theory.md``
section 3):

- number task: letters ``a .. z`` then ``l26, l27, ..`` (the toolkit's ``A .. Z``, ``L26, ..``) and the
  integers ``1 .. 16``, e.g. ``a z b y c x d w 5``;
- letter task: pairs ``c2`` ((letter, integer)) and ``fc`` ((letter, letter)).

The last id is ``[UNK]`` (unknown words map to it; exported models give it a zero embedding and a zero
unembedding, so it is never an answer). Built with the ``tokenizers`` library that ``transformers``
installs (a ``WordLevel`` model with a whitespace pre-tokenizer) and saved as ``tokenizer.json`` by
``save_pretrained``. Training code (issue 15) uses the same builder, so trained and compiled checkpoints
share ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ropeproof.constructions._multihop_programs import letter_vocabulary, number_vocabulary
from ropeproof.constructions._paper import check_task
from ropeproof.machinery._errors import InputError

UNK = "[UNK]"
"""The unknown-word token, the last id of every task tokenizer."""


def word(token: str) -> str:
    """The word a token name is written as in prompts (``"C2"`` -> ``"c2"``, ``"L26"`` -> ``"l26"``)."""
    return token.lower()


def task_vocabulary(task: str, **sizes: int) -> list[str]:
    """The task's token names in model order (``letters``/``max_int`` for the number task,
    ``alphabet``/``max_int`` for the letter task; [A]'s sizes by default)."""
    if check_task(task) == "number":
        return [t.name for t in number_vocabulary(**sizes)]
    return [t.name for t in letter_vocabulary(**sizes)]


def prompt_text(tokens: Sequence[str]) -> str:
    """A prompt as [A] writes it: the words of the tokens, separated by spaces."""
    return " ".join(word(t) for t in tokens)


def build_tokenizer(tokens: Sequence[str]) -> Any:
    """A ``PreTrainedTokenizerFast`` whose word ``word(tokens[i])`` has id ``i`` and ``[UNK]`` id
    ``len(tokens)``. Needs ``transformers`` (the ``hf`` extra)."""
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise InputError("the tokenizer needs transformers: pip install 'ropeproof[hf]'") from exc
    words = [word(t) for t in tokens]
    if len(set(words)) != len(words) or UNK in words or any(not w or w.split() != [w] for w in words):
        raise InputError("token words must be distinct, non-empty, without spaces, and not [UNK]")
    vocab = {w: i for i, w in enumerate(words)}
    vocab[UNK] = len(words)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token=UNK)


def task_tokenizer(task: str, **sizes: int) -> Any:
    """:func:`build_tokenizer` over :func:`task_vocabulary`."""
    return build_tokenizer(task_vocabulary(task, **sizes))

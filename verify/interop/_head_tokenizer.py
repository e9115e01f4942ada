"""The tokenizer a single-head export ships: ``AutoTokenizer.from_pretrained(DIR)`` loads it, and word
``tokens[i]`` encodes to id ``i``, the model's embedding row of that token.

A word-level vocabulary over the compiled head's token names exactly as they are (case kept: ``"A"``,
``"C2"``, ``"17"``), split on whitespace, built with the ``tokenizers`` library that ``transformers``
installs and written as ``tokenizer.json``. There is no ``[UNK]``: the model has no row for one, so a word
outside the vocabulary is refused by the tokenizer (``WordLevel error: Missing [UNK] token``) rather than
mapped to a row that would give a wrong answer. (The multi-hop checkpoints' task tokenizer,
:mod:`ropeproof.verify.measure._tokenizer`, writes [A]'s lower-case words and has an ``[UNK]`` row.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ropeproof.verify.interop._errors import ExportError

UNKNOWN = "[UNK]"
"""The name ``tokenizers`` gives an unknown word; absent from the vocabulary, so unknown words are refused."""


def head_tokenizer(tokens: Sequence[str]) -> Any:
    """A ``PreTrainedTokenizerFast`` in which word ``tokens[i]`` has id ``i`` (module docstring);
    :class:`ExportError` when the names are not distinct, non-empty words without whitespace."""
    names = [str(t) for t in tokens]
    if not names or len(set(names)) != len(names) or any(not w or w.split() != [w] for w in names):
        raise ExportError(
            "a tokenizer needs the head's token names to be distinct, non-empty words without whitespace"
        )
    if UNKNOWN in names:
        raise ExportError(f"a token named {UNKNOWN!r} would receive every unknown word; rename it")
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise ExportError("the tokenizer needs transformers: pip install 'ropeproof[hf]'") from exc
    model = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(names)}, unk_token=UNKNOWN))
    model.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=model)

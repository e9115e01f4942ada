"""[A]'s 1-hop protocol for chat models, as reconstructed (``docs/theory.md`` section 3, "[A]'s
1-hop protocol for chat models"): the two prompts verbatim, the layout, the answer rules, the default
settings and the thresholds [A] reports.

**Number (1 hop).** Lowercase letters separated by spaces, then a final integer ``n``; the answer is
the token ``n`` positions to the left of the final token: ``a z b y c x d w 5`` -> ``y``.

**Letter (1 hop).** Tokens of a lowercase letter and a digit, then a final token of two letters; the
answer is the earlier token whose first character is the final token's second character, and exactly
one token qualifies: ``a4 b3 c2 d1 fc`` -> ``c2``.

**Length** is the number of tokens, the final token included. The answer rules here are written from
the statement alone, so a test can check them against [A]'s listed examples
(:data:`EXAMPLES`) and the generators against the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ropeproof.constructions._paper import check_task
from ropeproof.machinery._errors import InputError

NUMBER_INSTRUCTIONS = (
    "You will be given a sequence of space-separated tokens. Your task is to find the target token by "
    "following these rules: 1. Identify the very last token in the sequence, which will always be a "
    "number 'n'. 2. Move 'n' positions to the left from that final token. 3. The token you land on is "
    "the target token. Output just the target token."
)
"""[A]'s number-task prompt, verbatim as reconstructed."""

LETTER_INSTRUCTIONS = (
    "You will be given a sequence of space-separated tokens. Your task is to find the target token by "
    "following these rules: 1. Start with the very last token in the sequence. 2. Identify the second "
    "character of that token. 3. Scan backwards (to the left) to find the token that starts with that "
    "exact character; there is only one token that fulfills this condition. 4. This is your target "
    "token. Output just the target token."
)
"""[A]'s letter-task prompt, verbatim as reconstructed."""

INSTRUCTIONS: dict[str, str] = {"number": NUMBER_INSTRUCTIONS, "letter": LETTER_INSTRUCTIONS}

SEQUENCE_PREFIX = "Sequence: "
"""The layout (this project's choice; [A]'s exact layout is unknown): the instructions, a blank line,
then the sequence on its own last line after this prefix."""

EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("number", "a z b y c x d w 5", "y"),
    ("number", "v t k g n k o h m p 4", "o"),
    ("number", "w y b c v t r i p p 10", "w"),
    ("letter", "a4 b3 c2 d1 fc", "c2"),
    ("letter", "w9 t7 l5 g1 n4 l6 u9 k7 m5 p8 gk", "k7"),
    ("letter", "q5 r7 x4 t7 f4 k7 q4 u2 u3 r5 ex", "x4"),
)
"""[A]'s listed examples: ``(task, sequence, answer)``."""

DEFAULT_LENGTHS: tuple[int, ...] = (8, 16, 32, 64, 100)
DEFAULT_DRAWS = 5
"""Dataset draws per (model, task, length), reported as mean and standard deviation (as [A] did)."""
DEFAULT_PROMPTS = 50
"""Prompts per draw and length (not stated by [A]; this project's default)."""
MIN_LENGTH = 2
"""The shortest sequence: one token and the final token."""
MAX_LENGTH = 4096


@dataclass(frozen=True)
class Threshold:
    """One accuracy level [A] reports: ``task`` at ``length`` is ``relation`` (``">"`` or ``"<"``)
    ``value``."""

    task: str
    length: int
    relation: str
    value: float

    def describe(self) -> str:
        return f"{self.task} {self.relation} {self.value} at length {self.length}"


REPORTED_THRESHOLDS: tuple[Threshold, ...] = (
    Threshold("letter", 32, ">", 0.88),
    Threshold("letter", 100, ">", 0.65),
    Threshold("number", 32, "<", 0.5),
    Threshold("number", 100, "<", 0.1),
)
"""What [A] reports for GPT-5.4, GPT-5.5 and Claude Sonnet 3.7 (all three models)."""


def chat_prompt(task: str, sequence: str) -> str:
    """The message a chat model receives: ``task``'s instructions, a blank line, ``Sequence: ...``."""
    return f"{INSTRUCTIONS[check_task(task)]}\n\n{SEQUENCE_PREFIX}{sequence}"


def number_answer(tokens: Sequence[str]) -> str:
    """The number rule: the token ``n`` positions left of the final token ``n`` (``1 <= n < length``)."""
    if len(tokens) < MIN_LENGTH:
        raise InputError(f"a number sequence needs at least {MIN_LENGTH} tokens, got {len(tokens)}")
    last = tokens[-1]
    if not last.isdigit() or not 1 <= int(last) <= len(tokens) - 1:
        raise InputError(f"the final token {last!r} must be an integer in 1..{len(tokens) - 1}")
    return tokens[len(tokens) - 1 - int(last)]


def letter_answer(tokens: Sequence[str]) -> str:
    """The letter rule: the one earlier token whose first character is the final token's second."""
    if len(tokens) < MIN_LENGTH:
        raise InputError(f"a letter sequence needs at least {MIN_LENGTH} tokens, got {len(tokens)}")
    last = tokens[-1]
    if len(last) != 2:
        raise InputError(f"the final token {last!r} must have two characters")
    hits = [t for t in tokens[:-1] if t[:1] == last[1]]
    if len(hits) != 1:
        raise InputError(f"{len(hits)} earlier tokens start with {last[1]!r}; exactly one must")
    return hits[0]


def answer(task: str, tokens: Sequence[str]) -> str:
    """:func:`number_answer` or :func:`letter_answer`."""
    return number_answer(tokens) if check_task(task) == "number" else letter_answer(tokens)

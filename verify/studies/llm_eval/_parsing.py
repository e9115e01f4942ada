"""Reading the answer out of a model's raw reply.

Tolerated around the answer: whitespace (newlines included), quotes (``' " `` and backticks, and the
typographic ``‘ ’ “ ”``) and a trailing period, in any nesting (``"c2".``, ``'y.'``). Nothing else is
forgiven: the answer must then be one token without inner whitespace and is compared with the correct
one exactly (case included). The raw reply is always logged, so a different reading can be applied
later without asking again (summaries re-read the logged replies with this parser).
"""

from __future__ import annotations

from dataclasses import dataclass

QUOTES = "'\"`‘’“”"


@dataclass(frozen=True)
class ParsedReply:
    """``answer`` is the token read, or ``None`` with ``problem`` saying why not."""

    answer: str | None
    problem: str = ""


def parse_reply(reply: str | None) -> ParsedReply:
    """The answer token in ``reply`` (module docstring)."""
    if reply is None:
        return ParsedReply(None, "no reply")
    text = reply.strip()
    while True:
        before = text
        text = text.strip()
        if text[:1] and text[0] in QUOTES:
            text = text[1:]
        if text[-1:] and (text[-1] in QUOTES or text[-1] == "."):
            text = text[:-1]
        if text == before:
            break
    if not text:
        return ParsedReply(None, "empty reply")
    if len(text.split()) != 1:
        return ParsedReply(None, "not one token")
    return ParsedReply(text)


def is_correct(reply: str | None, answer: str) -> bool:
    """Whether ``reply`` reads as exactly ``answer``."""
    return parse_reply(reply).answer == answer

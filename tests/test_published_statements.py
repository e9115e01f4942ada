"""The published text states each correction only as its claim checks it.

The published text is README.md, every page under docs/, and every string of the package's source (its
docstrings, which the API reference publishes, and the captions and labels that figures and reports
print). A statement that a correction replaced must not survive there in its old form: each rule below
names a pattern of a corrected statement and the qualifier that the checked statement carries in the same
sentence; a sentence with the pattern and without the qualifier is an old statement.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE_FOLDERS = ("ropeproof", "machinery", "theory", "constructions", "verify", "paper_figures")


@dataclass(frozen=True)
class Rule:
    """A corrected statement's pattern and the qualifiers each sentence holding it needs (all of them)."""

    correction: str
    pattern: str
    needs: tuple[str, ...]

    def offending(self, sentence: str) -> bool:
        if not re.search(self.pattern, sentence):
            return False
        return not all(re.search(n, sentence) for n in self.needs)


RULES = (
    # remark3.1.positional-readout: the condensed sentence "a positional head's worst readout margin is at
    # most C min_j p_j <= C (1 - p_Q)/(n - 1)" is false (no per-query reading, and C < 0 reverses it)
    Rule(
        "remark3.1.positional-readout",
        r"(at most|<=|bound) `?C\s*\*?\s*min_j p_j|C\s*\*?\s*min_j p_j(\(Q\))?`?\s*<=\s*`?C\s*\(1 - p_Q",
        (r"\bC(\(tau, o\))?( = C\(tau, o\))? >= 0", r"quer(y|ies)"),
    ),
    # partial-induction.one-plane: the min form of the letter code's margin holds for n >= 3 only (n = 2
    # has cos theta - cos omega)
    Rule(
        "partial-induction.one-plane",
        r"min\(2 sin\(theta ?/ ?2\) sin\(3 theta ?/ ?2\)|\\min\\left\(2\\sin\\tfrac\{\\theta\}\{2\}",
        (r"n >= 3|3 <= n|n\\ge 3",),
    ),
)


def _sentences(text: str) -> list[str]:
    text = re.sub(r"\s+", " ", text)
    return re.split(r"(?<=[.!?])\s+(?=[A-Z*(\[`])", text)


def _strings(path: Path) -> list[str]:
    """Every string constant of a module (docstrings, captions, f-strings' literal parts joined)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
    return out


def published_texts() -> dict[str, list[str]]:
    """``{where: texts}``: the markdown pages and every module's string constants."""
    texts = {
        str(p.relative_to(ROOT)): [p.read_text()] for p in [ROOT / "README.md", *ROOT.glob("docs/**/*.md")]
    }
    for folder in SOURCE_FOLDERS:
        for p in (ROOT / folder).rglob("*.py"):
            texts[str(p.relative_to(ROOT))] = _strings(p)
    return texts


def old_statements(texts: dict[str, list[str]]) -> list[str]:
    return [
        f"{where} ({rule.correction}): {sentence[:200]}"
        for where, chunks in texts.items()
        for chunk in chunks
        for sentence in _sentences(chunk)
        for rule in RULES
        if rule.offending(sentence)
    ]


def test_no_published_text_states_a_correction_in_its_old_form() -> None:
    texts = published_texts()
    assert len(texts) > 100  # the corpus is really there
    assert old_statements(texts) == []


@pytest.mark.parametrize(
    ("text", "correction"),
    [
        (
            "Remark 3.1 read at the output: a positional head's worst readout margin is at most C min_j p_j "
            "<= C (1 - p_Q)/(n - 1); the head attains it.",
            "remark3.1.positional-readout",
        ),
        ("The bound C * min_j p_j holds for every positional head.", "remark3.1.positional-readout"),
        (
            "The letter code has worst margin exactly min(2 sin(theta/2) sin(3 theta/2), margin_Retrieval(n))"
            " "
            "at every length up to n0 + 1.",
            "partial-induction.one-plane",
        ),
    ],
)
def test_the_rules_catch_the_old_sentences(text: str, correction: str) -> None:
    assert [w.split(" ")[1] for w in old_statements({"page": [text]})] == [f"({correction}):"]


def test_the_rules_pass_the_checked_statements() -> None:
    checked = [
        "For every query Q asking for Y and pairs tau != o with C = C(tau, o) >= 0, the worst readout margin "
        "is at most C min_j p_j(Q) <= C (1 - p_Q(Q))/(n - 1).",
        "Worst margin exactly min(2 sin(theta/2) sin(3 theta/2), margin_Retrieval(n)) at every length "
        "3 <= n <= n0 + 1.",
    ]
    assert old_statements({"page": checked}) == []

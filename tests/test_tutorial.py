"""``docs/tutorial.py`` (a Jupytext percent-format notebook) runs end to end, cell by cell, in one
fresh namespace, as a notebook kernel would run it. Its own ``assert`` statements check the numbers
it states."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.py"


def cells(text: str) -> list[tuple[str, str]]:
    """``(kind, source)`` of every cell: ``# %%`` starts a code cell, ``# %% [markdown]`` a markdown
    cell (the Jupytext percent format); the header before the first marker is not a cell."""
    out: list[tuple[str, str]] = []
    kind, lines = None, []
    for line in text.splitlines():
        if line.startswith("# %%"):
            if kind is not None:
                out.append((kind, "\n".join(lines)))
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind is not None:
            lines.append(line)
    if kind is not None:
        out.append((kind, "\n".join(lines)))
    return out


def test_the_tutorial_is_a_percent_format_notebook() -> None:
    text = TUTORIAL.read_text()
    assert text.startswith("# ---\n# jupyter:\n#   jupytext:") and "format_name: percent" in text
    found = cells(text)
    assert [k for k, _ in found].count("code") >= 8
    headings = [re.findall(r"^# ## (.*)$", src, re.M) for kind, src in found if kind == "markdown"]
    titles = " / ".join(h[0] for h in headings if h)
    for topic in ("construction", "Derive", "Compile", "exact sweep", "property test", "score", "Export"):
        assert topic in titles, titles


def test_the_tutorial_runs(tmp_path, monkeypatch) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("transformer_lens")
    monkeypatch.chdir(tmp_path)  # anything written lands in a temporary directory
    namespace: dict[str, object] = {"__name__": "__tutorial__"}
    for index, (kind, source) in enumerate(cells(TUTORIAL.read_text())):
        if kind == "code":
            exec(compile(source, f"{TUTORIAL}:cell{index}", "exec"), namespace)
    assert namespace["first_exceeded"] == 4
    assert namespace["claim_result"].outcome.verdict == "holds"  # type: ignore[attr-defined]

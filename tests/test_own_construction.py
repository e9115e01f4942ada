"""docs/guides/own-construction.md runs: its python blocks in order in one namespace, and every `ropeproof`
command line of its bash blocks through the command line's main, in one scratch directory."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "own-construction.md"


def blocks() -> list[tuple[str, str]]:
    """``(kind, code)`` per fenced block, the code padded with blank lines so that tracebacks give the
    guide's own line numbers."""
    text = GUIDE.read_text()
    out = []
    for m in re.finditer(r"```(python|bash)\n(.*?)```", text, flags=re.S):
        pad = text.count("\n", 0, m.start(2))
        out.append((m.group(1), "\n" * pad + m.group(2)))
    return out


def test_the_guide_has_every_step() -> None:
    kinds = [k for k, _ in blocks()]
    assert kinds.count("python") >= 8 and kinds.count("bash") >= 3
    text = GUIDE.read_text()
    for needed in (
        "Family",
        "check_bound",
        "certified=True",
        "plot_sweeps",
        "save_figure",
        "--plot",
        "second-hand",
    ):
        assert needed in text, needed


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_every_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ropeproof._cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "figures").mkdir()
    namespace: dict[str, object] = {"__name__": "own_construction"}
    for kind, code in blocks():
        if kind == "python":
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, str(GUIDE), "exec"), namespace)
            continue
        for line in code.splitlines():
            if not line.startswith("ropeproof "):
                continue
            with contextlib.redirect_stdout(io.StringIO()) as out:
                code_ = main(shlex.split(line, comments=True)[1:])
            assert code_ == 0, (line, out.getvalue()[-500:])
    assert (tmp_path / "figures" / "prev_head.png").exists()
    assert os.path.exists(tmp_path / "figures" / "previous_token_margins.pdf")

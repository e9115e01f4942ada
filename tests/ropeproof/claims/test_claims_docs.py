"""Every ```python block of docs/claims.md (the guide to your own claims) runs on its own, in a fresh
namespace, and says what it shows (each block asserts its own results)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "claims.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_guide_has_its_examples() -> None:
    assert len(BLOCKS) >= 3
    assert all("assert " in block for block in BLOCKS)  # every example checks what it claims


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_block_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"{DOC}:block{index}", "exec"), {"__name__": "docs_claims_block"})

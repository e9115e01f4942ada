"""docs/interop.md: every ```python block runs, in order, in one namespace (the guide builds on itself)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "interop.md"


def test_interop_guide_blocks_run() -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("transformer_lens")
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 6
    namespace: dict = {"__name__": "interop_guide"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)

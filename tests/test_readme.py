"""Every ```python block of the README runs (in order, in one namespace)."""

from __future__ import annotations

import re
from pathlib import Path

from ropeproof import claims

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 5
    saved = dict(claims._REGISTRY)  # the README registers an example claim; keep the registry clean
    try:
        namespace: dict = {}
        for block in blocks:
            exec(compile(block, str(README), "exec"), namespace)
        example = claims._REGISTRY["my.index-margin-positive"]
        ctx = claims.CheckContext(device=__import__("torch").device("cpu"), dtype=__import__("torch").float64)
        assert claims.run_claim(example, ctx).outcome.verdict == "holds"
    finally:
        claims._REGISTRY.clear()
        claims._REGISTRY.update(saved)

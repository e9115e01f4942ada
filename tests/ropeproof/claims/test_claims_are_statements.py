"""Claims are statements, not computations: a built-in claim module declares what is checked against what
and calls a judging function of :mod:`ropeproof.verify`, so it imports none of the numerical libraries
(numpy, torch, mpmath) that a computation would need. Imports nested in functions count too."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from ropeproof.claims import BUILTIN_TOPICS

NUMERICAL = ("numpy", "torch", "mpmath")
"""The libraries a claim module may not import."""

EXCLUDED: dict[str, str] = {}
"""Claim modules exempt for now, with the reason."""


def _path(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin)


def numerical_imports(path: Path) -> list[str]:
    """``"line: module"`` for every import of a :data:`NUMERICAL` library (or a submodule) in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [f"{node.lineno}: {name}" for name in names if name.split(".")[0] in NUMERICAL]
    return found


def _builds_claims(path: Path) -> bool:
    """Whether the file assigns ``CLAIMS = ClaimSet(...)`` at module level."""
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "CLAIMS" for t in node.targets)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "id", None) == "ClaimSet"
        for node in ast.parse(path.read_text(), str(path)).body
    )


@pytest.mark.parametrize("module", [m for m in BUILTIN_TOPICS if m not in EXCLUDED])
def test_a_claim_module_imports_no_numerical_library(module: str) -> None:
    found = numerical_imports(_path(module))
    assert not found, (
        f"{module} imports {', '.join(found)}: a claim states what is checked and calls a judging function "
        "of ropeproof.verify, which does the computing"
    )


def test_every_module_with_claims_is_a_topic_and_every_exclusion_one() -> None:
    """A module of ``ropeproof/claims`` that builds a ``ClaimSet`` is a built-in topic (so the rule above
    reaches it), and every exclusion names a topic."""
    claims_dir = _path("ropeproof.claims").parent
    with_claims = {f"ropeproof.claims.{p.stem}" for p in claims_dir.glob("*.py") if _builds_claims(p)}
    assert with_claims == set(BUILTIN_TOPICS)
    assert set(EXCLUDED) <= set(BUILTIN_TOPICS)


def test_the_scan_finds_nested_and_aliased_imports(tmp_path: Path) -> None:
    src = tmp_path / "claim.py"
    src.write_text(
        "import numpy as np\nfrom ropeproof.verify import x\n\ndef f():\n    import torch.nn\n"
        "    from mpmath import mpf\n    from .numpy import y\n"
    )
    assert numerical_imports(src) == ["1: numpy", "5: torch.nn", "6: mpmath"]

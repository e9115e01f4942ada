"""MkDocs hook: lay the installed namespace out for the API reference.

The packages install from folders whose names differ from theirs (``theory/`` is ``ropeproof.theory``;
pyproject's ``package-dir`` is the one map), so the reference reads its sources from
``build/api-src/ropeproof/``, a tree of symbolic links built here from that map before the build.
``__main__.py`` is left out: it is the command line's entry point, not API.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "build" / "api-src"


def build_tree(root: Path = ROOT, dest: Path = SOURCES) -> Path:
    """Build ``dest/ropeproof`` (links to every file of ``ropeproof/`` and one link per mapped folder)."""
    package_dir = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    top = dest / "ropeproof"
    if dest.exists():
        shutil.rmtree(dest)
    top.mkdir(parents=True)
    for entry in (root / package_dir["ropeproof"]).iterdir():
        if entry.name not in ("__main__.py", "__pycache__"):
            (top / entry.name).symlink_to(entry)
    for name, folder in package_dir.items():
        if name.count(".") == 1:  # ropeproof.theory -> theory/
            (top / name.split(".")[1]).symlink_to(root / folder)
    return dest


@event_priority(100)  # before mkdocstrings reads its search paths
def on_config(config: Any) -> None:
    build_tree()

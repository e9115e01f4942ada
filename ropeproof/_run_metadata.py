"""What identifies a run in ``report.json``'s ``run``: the command line, UTC time, git commit (when run from a
checkout), package versions and flags."""

from __future__ import annotations

import datetime
import importlib.metadata
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ropeproof import __version__
from ropeproof._json_values import jsonable
from ropeproof.claims import (
    CheckContext,
)

PACKAGES = ("torch", "numpy", "sympy", "mpmath", "hypothesis", "matplotlib", "safetensors", "transformers")
"""Package versions recorded in the report (``null`` when not installed)."""


def _git_commit() -> str | None:
    """``HEAD`` of the checkout the package runs from (``+dirty`` if modified), or ``None``."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"ropeproof": __version__, "python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_metadata(
    ctx: CheckContext, argv: Sequence[str] | None = None, flags: dict[str, Any] | None = None
) -> dict:
    """What identifies a run: the command line, the UTC time, the git commit, versions and flags."""
    return {
        "command": ["ropeproof", *argv] if argv is not None else None,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "versions": _versions(),
        "flags": jsonable(
            {
                "device": str(ctx.device),
                "dtype": str(ctx.dtype).removeprefix("torch."),
                "quick": ctx.quick,
                "certified": ctx.certified,
                **(flags or {}),
            }
        ),
    }

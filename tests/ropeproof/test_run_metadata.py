"""What identifies a run in report.json: the command line, the time, the commit, versions and flags."""

from __future__ import annotations

import datetime
import importlib.metadata
import subprocess
from pathlib import Path

import torch

from ropeproof._run_metadata import PACKAGES, run_metadata
from ropeproof.claims import CheckContext


def test_the_run_names_its_command_time_commit_versions_and_flags() -> None:
    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=True)
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    run = run_metadata(ctx, ["check", "--quick"], {"jobs": 2})
    created = datetime.datetime.fromisoformat(run["created"])
    assert run["command"] == ["ropeproof", "check", "--quick"] and before <= created
    assert run["flags"] == {"device": "cpu", "dtype": "float64", "quick": True, "certified": False, "jobs": 2}
    assert set(run["versions"]) >= {"ropeproof", *PACKAGES}
    assert run["versions"]["numpy"] == importlib.metadata.version("numpy")
    root = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    if head.returncode == 0:  # run from a checkout: its commit, marked when the tree has changes
        assert run["git_commit"].removesuffix("+dirty") == head.stdout.strip()
    assert run_metadata(ctx)["command"] is None

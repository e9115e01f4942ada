"""The command line: help, version, and the check command's report files."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ropeproof import __version__
from ropeproof.cli import main


def test_help_lists_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in ("check",):
        assert name in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"ropeproof {__version__}"


def test_console_script_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ropeproof", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "usage: ropeproof" in out

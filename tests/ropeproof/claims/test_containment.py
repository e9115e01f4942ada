"""A claim that exits or moves the working directory cannot make ``check`` report success or write
elsewhere than ``--out`` (ropeproof.claims._containment)."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from ropeproof._cli import main
from ropeproof.claims._containment import CheckEscaped, contained

ESCAPING_CLAIMS = textwrap.dedent(
    """
    import os
    import sys

    from ropeproof.claims import ClaimSet, Outcome

    CLAIMS = ClaimSet("escape")


    @CLAIMS.claim(id="escape.sys-exit", statement="calls sys.exit(0)", reference="test", expected="holds")
    def _(ctx):
        sys.exit(0)


    @CLAIMS.claim(id="escape.os-exit", statement="calls os._exit(0)", reference="test", expected="holds")
    def _(ctx):
        os._exit(0)


    @CLAIMS.claim(id="escape.chdir", statement="moves the cwd", reference="test", expected="holds")
    def _(ctx):
        os.chdir(os.environ["ESCAPE_TO"])
        return Outcome.judge(ok=True, figures={})
    """
)


def test_escaping_claims_are_errors_and_the_report_lands_in_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "claims.py").write_text(ESCAPING_CLAIMS)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("ESCAPE_TO", str(elsewhere))
    monkeypatch.chdir(tmp_path)
    argv = [
        "check",
        "--claims",
        "claims.py",
        "--only",
        "escape.*",
        "--strict",
        "--no-figures",
        "--no-progress",
        "--jobs",
        "1",  # the claims process is what contains them (test_check_pool.py runs two)
    ]
    assert main([*argv, "--out", "rep"]) == 1  # never 0: every claim is an error
    assert Path.cwd() == tmp_path
    assert list(elsewhere.iterdir()) == []
    claims = {c["id"]: c for c in json.loads((tmp_path / "rep" / "report.json").read_text())["claims"]}
    assert {k: c["verdict"] for k, c in claims.items()} == dict.fromkeys(
        ("escape.sys-exit", "escape.os-exit", "escape.chdir"), "error"
    )
    assert "sys.exit(0)" in claims["escape.sys-exit"]["detail"]
    assert "os._exit(0)" in claims["escape.os-exit"]["detail"]
    assert "changed the working directory" in claims["escape.chdir"]["detail"]


def test_contained_restores_os_exit_and_leaves_forked_children_alone(tmp_path: Path) -> None:
    real = os._exit
    with pytest.raises(CheckEscaped, match=r"os._exit\(3\)"), contained():
        os._exit(3)
    assert os._exit is real
    marker = tmp_path / "child-exited"
    with contained():
        pid = os.fork()
        if pid == 0:  # the child: the guard must call the real _exit
            marker.write_text("x")
            os._exit(7)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7 and marker.exists()

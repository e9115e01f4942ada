"""Your claims load and run in a process of their own (ropeproof.claims._claims_process): nothing they change
reaches the built-in claims (issue 32 case 6), a claim that sleeps or leaves a thread running cannot keep
``check`` from ending (issue 32, per-claim timeout), a claims file imports the modules next to it and its
pins keep their types (issue 33 item 5)."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import mpmath
import pytest
import torch

from ropeproof._cli import main
from ropeproof.claims import Approx, CheckContext, run_claim
from ropeproof.claims._claims_process import DEFAULT_TIMEOUT, STOP_GRACE, ClaimsProcess, RemoteClaim, portable
from ropeproof.claims._loading import ClaimLoadError, claim_source

CLAIMS_FILE = textwrap.dedent(
    """
    import os
    import signal
    import threading
    import time

    import mpmath

    import sibling_helper  # a module next to this file

    mpmath.mp.prec = 12  # at import: must not reach the built-in claims
    os.environ["ROPEPROOF_MEMORY_LIMIT"] = "1"

    from ropeproof.claims import Approx, ClaimSet, Outcome, claim


    @claim(
        id="mine.decorated",
        statement="my bound fails first at n = {n}",
        reference="my notes",
        expected="violated",
        pins={"n": 27, "exact": True, "x": Approx(0.5, rel=1e-6)},
    )
    def _(ctx):
        figures = {"n": 27, "exact": True, "x": 0.5, "prec": mpmath.mp.prec, "obj": sibling_helper.Thing()}
        return Outcome.judge(False, figures, "n", counterexample={"n": 27})


    CLAIMS = ClaimSet("mine")


    @CLAIMS.claim(id="mine.lazy-import", statement="imports next to it inside a check", reference="me")
    def _(ctx):
        import sibling_lazy

        mpmath.mp.prec = 5  # put back before the next claim
        os.environ["ROPEPROOF_THREADS"] = "junk"
        return Outcome.judge(sibling_lazy.VALUE == 3, {"value": sibling_lazy.VALUE})


    @CLAIMS.claim(id="mine.after", statement="sees the settings as loading left them", reference="me")
    def _(ctx):
        seen = {"prec": mpmath.mp.prec, "threads": os.environ.get("ROPEPROOF_THREADS")}
        return Outcome.judge(seen == {"prec": 12, "threads": None}, seen)


    @CLAIMS.claim(id="mine.sleeps", statement="never returns", reference="me")
    def _(ctx):
        time.sleep(3600)


    @CLAIMS.claim(id="mine.thread", statement="leaves a thread running", reference="me")
    def _(ctx):
        threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
        return Outcome.judge(True, {})


    @CLAIMS.claim(id="mine.crash", statement="kills its own process", reference="me")
    def _(ctx):
        os.kill(os.getpid(), signal.SIGKILL)
    """
)
IDS = ["mine.decorated", "mine.lazy-import", "mine.after", "mine.sleeps", "mine.thread", "mine.crash"]
LIMIT = 3.0
"""Seconds a claim of the test file may run (the sleeping one is stopped after this)."""


pytestmark = pytest.mark.xdist_group("claims-process")  # one pytest worker: one shared claims process


@pytest.fixture(scope="session")  # session: pytest-xdist may run other modules' tests between these
def claims_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("yours")
    (root / "sibling_helper.py").write_text(
        "class Thing:\n    def __str__(self):\n        return 'a thing'\n"
    )
    (root / "sibling_lazy.py").write_text("VALUE = 3\n")
    path = root / "my_claims.py"
    path.write_text(CLAIMS_FILE)
    return path


@pytest.fixture(scope="session")  # started once (seconds: torch's import), like the file above
def process(claims_file: Path):
    with ClaimsProcess([claims_file], timeout=LIMIT) as p:
        yield p


CTX = CheckContext(torch.device("cpu"), torch.float64)


def _run(process: ClaimsProcess, claim_id: str):
    return run_claim(next(c for c in process.claims if c.id == claim_id), CTX)


def test_loading_happens_there_and_the_claims_arrive_as_data(
    process: ClaimsProcess, claims_file: Path
) -> None:
    assert mpmath.mp.prec == 53 and os.environ.get("ROPEPROOF_MEMORY_LIMIT") != "1"  # not here
    assert not any(name.startswith("ropeproof_user_claims") for name in sys.modules)
    assert [c.id for c in process.claims] == IDS
    c = process.claims[0]
    assert isinstance(c, RemoteClaim) and not c.builtin and claim_source(c) == str(claims_file)
    assert c.statement_for(False) == "my bound fails first at n = 27" and c.report_section == "Your claims"
    assert c.pins == {"n": 27, "exact": True, "x": Approx(0.5, rel=1e-6)}  # types kept, not text
    assert type(c.pins["n"]) is int and type(c.pins["exact"]) is bool


def test_a_claim_runs_there_with_the_settings_its_file_made(process: ClaimsProcess) -> None:
    result = _run(process, "mine.decorated")
    assert result.outcome.verdict == "violated" and result.regression is None
    assert result.status == "expected violated, got violated"
    assert result.outcome.figures["prec"] == 12  # the file's own setting, in its own process
    assert result.outcome.figures["obj"] == "a thing"  # an object of the file's: its text
    assert mpmath.mp.prec == 53
    lazy, after = _run(process, "mine.lazy-import"), _run(process, "mine.after")
    assert (lazy.outcome.verdict, lazy.outcome.figures) == ("holds", {"value": 3})
    assert after.outcome.verdict == "holds", after.outcome.figures  # what mine.lazy-import set was put back


def test_a_claim_that_never_returns_is_stopped_at_the_limit(process: ClaimsProcess) -> None:
    starts = process.starts
    begin = time.monotonic()
    result = _run(process, "mine.sleeps")
    took = time.monotonic() - begin
    assert LIMIT <= took < LIMIT + 10, took
    assert result.outcome.verdict == "error" and result.unexpected
    assert f"claim mine.sleeps did not finish within {LIMIT:g} s" in result.outcome.detail
    assert "--claim-timeout" in result.outcome.detail
    assert process.starts == starts and not process._proc.is_alive()  # killed; the next claim starts one


def test_a_process_that_dies_makes_its_claim_an_error(process: ClaimsProcess) -> None:
    starts, stopped = process.starts, process._conn is None  # stopped by the test above
    assert _run(process, "mine.after").outcome.verdict == "holds"  # in a fresh process if it was stopped
    assert process.starts == starts + stopped
    result = _run(process, "mine.crash")
    assert result.outcome.verdict == "error"
    assert "killed by signal SIGKILL" in result.outcome.detail and "mine.crash" in result.outcome.detail
    assert not process._proc.is_alive()


def test_a_thread_left_running_cannot_hold_the_process_open(claims_file: Path) -> None:
    with ClaimsProcess([claims_file], timeout=LIMIT) as p:
        assert _run(p, "mine.thread").outcome.verdict == "holds"
        begin = time.monotonic()
        p.close()
        assert time.monotonic() - begin < STOP_GRACE + 5
        assert p._proc.exitcode is not None  # it has ended


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (no such process, or a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


@pytest.mark.e2e  # a third interpreter killed from outside: CI's second pass (-m e2e)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_check_killed_from_outside_takes_the_claims_process_with_it(claims_file: Path) -> None:
    """A check stopped by a signal it does not handle (a ``timeout`` command's SIGTERM) runs no cleanup;
    the claims process, busy with a claim that never returns, must not outlive it."""
    script = (
        "import sys, torch\n"
        "from ropeproof.claims import CheckContext, run_claim\n"
        "from ropeproof.claims._claims_process import ClaimsProcess\n"
        f"p = ClaimsProcess([{str(claims_file)!r}], timeout=3600)\n"
        "print(p._proc.pid, flush=True)\n"
        "run_claim(next(c for c in p.claims if c.id == 'mine.sleeps'), "
        "CheckContext(torch.device('cpu'), torch.float64))\n"
    )
    first = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child = None
    try:
        child = int(first.stdout.readline())  # type: ignore[union-attr]
        assert not _gone(child)
        time.sleep(0.5)  # the claim is running
        first.send_signal(signal.SIGTERM)
        first.wait(30)
        deadline = time.monotonic() + 30
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(child)
    finally:
        first.kill()
        if child is not None and not _gone(child):  # the test failed: end what it started
            os.kill(child, signal.SIGKILL)


def test_bad_sources_are_refused_in_one_line_before_any_process_starts(tmp_path: Path) -> None:
    for spec, message in [
        (tmp_path / "missing.py", "no such file"),
        ("1:2:3", "no importable module"),
        ("rp_no_such_top_level_module.claims", "no importable module"),
    ]:
        with pytest.raises(ClaimLoadError, match=message):
            ClaimsProcess([spec])
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ClaimLoadError, match="RuntimeError: boom"):
        ClaimsProcess([broken])
    exits = tmp_path / "exits.py"
    exits.write_text("import os\nos._exit(3)\n")
    with pytest.raises(ClaimLoadError, match=r"exits\.py ended \(exit code 3\)"):
        ClaimsProcess([exits])
    with pytest.raises(ValueError, match="seconds > 0"):
        ClaimsProcess([], timeout=0)


def test_loading_that_never_ends_is_stopped_at_the_limit(tmp_path: Path) -> None:
    slow = tmp_path / "slow_claims.py"
    slow.write_text("import time\ntime.sleep(3600)\n")
    begin = time.monotonic()
    with pytest.raises(ClaimLoadError, match=rf"{slow}.* did not finish within 1 s \(--claim-timeout\)"):
        ClaimsProcess([slow], timeout=1)
    assert time.monotonic() - begin < 330  # the start (torch's import) is not counted against the limit


def test_the_limits_are_the_documented_ones() -> None:
    """docs/guides/your-claims.md states these numbers."""
    from ropeproof._cli import build_parser
    from ropeproof._report import REPORT_VERSION

    assert DEFAULT_TIMEOUT == 600 and STOP_GRACE == 2 and REPORT_VERSION == 4
    check = build_parser()._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
    assert check.parse_args([]).claim_timeout is None  # check leaves the limit to the claims process:
    assert inspect.signature(ClaimsProcess).parameters["timeout"].default == DEFAULT_TIMEOUT
    docs = (Path(__file__).resolve().parents[3] / "docs" / "guides" / "your-claims.md").read_text()
    assert "default 600" in docs and "within 2 seconds" in docs and "version 4" in docs


def test_portable_keeps_data_and_turns_other_objects_into_text() -> None:
    class Mine:
        def __str__(self) -> str:
            return "mine"

    value = {"n": 3, "x": [0.5, (True, None)], "a": Approx(1.0), "t": torch.float64, "m": Mine(), 1: Mine()}
    assert portable(value) == {"n": 3, "x": [0.5, (True, None)], "a": Approx(1.0), "t": torch.float64,
                               "m": "mine", 1: "mine"}  # fmt: skip


@pytest.mark.e2e  # a whole check with a claims process of its own: CI's second pass (-m e2e)
def test_check_with_a_leaky_claims_file_leaves_the_builtin_claims_alone(
    claims_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 32 case 6: a claims file setting mpmath.mp.prec = 12 (and ROPEPROOF_MEMORY_LIMIT=1) made
    these built-in claims and the correction read "contradicted" and blamed the toolkit."""
    out = tmp_path / "rep"
    builtin = ["many-plane.index-exact", "thm3.2.index.pi2-over-2n2.best-theta"]
    argv = ["check", "--quick", "--claims", str(claims_file), "--strict", "--no-figures", "--no-progress"]
    argv += ["--jobs", "1"]  # the built-in claims run in this process, beside the leaky file's process
    argv += [x for i in [*builtin, "mine.decorated", "mine.after"] for x in ("--only", i)]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    by_id = {c["id"]: c for c in report["claims"]}
    statuses = [by_id[i]["status"] for i in builtin]
    assert statuses == ["as expected (pinned)", "finding about the paper (pinned)"]
    assert report["regressions"] == [] and report["unexpected"] == []
    assert [c["established"] for c in report["corrections"]] == [c["status"] for c in report["corrections"]]
    mine = by_id["mine.decorated"]
    assert (mine["origin"], mine["section"]) == ("user", "Your claims")
    assert mine["status"] == "expected violated, got violated"
    assert mine["pins"] == {"n": 27, "exact": True, "x": {"value": 0.5, "rel": 1e-6, "abs": 0.0}}
    md = (out / "report.md").read_text()
    yours = md.split("### Your claims")[1].split("## All claims")[0]
    assert md.index("### Your claims") > md.index("### Theorem 3.2")
    assert "mine.decorated" in yours and "finding about the paper" not in yours


@pytest.mark.e2e  # a whole check with a claims process of its own: CI's second pass (-m e2e)
def test_check_ends_when_a_claim_sleeps_or_leaves_a_thread(
    claims_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rep"
    argv = ["check", "--claims", str(claims_file), "--only", "mine.sleeps", "--only", "mine.thread"]
    argv += ["--claim-timeout", "2", "--strict", "--no-figures", "--no-progress", "--out", str(out)]
    argv += ["--jobs", "1"]  # one process besides the claims process (test_check_pool.py runs two)
    assert main(argv) == 1  # the stopped claim is an error: --strict fails, as for any claim of yours
    err = capsys.readouterr().err
    assert "REGRESSION" not in err
    assert (
        "your claim mine.sleeps: the check raised an error (TimeoutError: claim mine.sleeps did not finish "
        "within 2 s (check --claim-timeout 2); its process was stopped)" in err
    )
    report = json.loads((out / "report.json").read_text())
    sleeps = next(c for c in report["claims"] if c["id"] == "mine.sleeps")
    assert sleeps["verdict"] == "error"
    assert "did not finish within 2 s (check --claim-timeout 2)" in sleeps["detail"]
    assert report["unexpected"] == ["mine.sleeps"] and report["regressions"] == []

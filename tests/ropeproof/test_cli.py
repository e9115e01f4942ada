"""The command line: help, version, and the check command's report files."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ropeproof import __version__
from ropeproof._cli import main
from ropeproof.paper_figures import available_figure_names

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in ("check", "derive", "compile", "sweep", "ps-score", "figures", "export"):
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


def test_the_command_freezes_what_is_left_before_the_interpreter_ends(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command (``run``, the console script's entry point) returns main's exit code with every object
    left alive frozen, so the interpreter's teardown does not collect torch's objects; ``main`` alone
    freezes nothing (a program calling it keeps its garbage collected)."""
    import gc

    from ropeproof import _cli as cli

    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["ropeproof"]
    assert entry == "ropeproof._cli:run"
    assert "from ropeproof._cli import run" in (ROOT / "ropeproof" / "__main__.py").read_text()
    frozen_before = gc.get_freeze_count() > 0  # the suite freezes what collection imported (conftest)
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit):
            main(["--version"])
        assert __version__ in capsys.readouterr().out and gc.get_freeze_count() == 0
        monkeypatch.setattr(cli, "main", lambda: 7)
        assert cli.run() == 7 and gc.get_freeze_count() > 0  # main's exit code, unchanged
        gc.unfreeze()
        monkeypatch.setattr(cli, "main", lambda: sys.exit(2))  # the parser's way out
        with pytest.raises(SystemExit):
            cli.run()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        if frozen_before:
            gc.freeze()


@pytest.mark.xdist_group("quick-report")  # its users on one worker: another would wait on its lock
@pytest.mark.e2e  # uses the whole `check --quick` (the suite's slowest fixture): CI's second pass
def test_check_quick_writes_report_and_figures(quick_report: tuple[int, Path]) -> None:
    code, out = quick_report
    assert code == 0  # --strict: no regression in the quick run
    report = json.loads((out / "report.json").read_text())
    ids = [c["id"] for c in report["claims"]]
    for expected in (
        "rope.relative-position",
        "thm3.1.index",
        "thm3.1.retrieval",
        "remark3.1.symbolic-cannot-index",
        "remark3.1.positional-cannot-retrieve.output",
        "thm3.2.index.min.gap_sup",
        "ps.exclusion-principle",
    ):
        assert expected in ids
    by_id = {c["id"]: c for c in report["claims"]}
    assert by_id["thm3.1.retrieval"]["figures"]["exact_first_failure_n"] == 147
    assert by_id["thm3.2.index.pi2-over-2n2.gap_sup"]["verdict"] == "violated"
    assert by_id["thm3.2.index.pi2-over-2n2.gap_sup"]["counterexample"]["n"] == 4
    assert all(c["verdict"] != "error" for c in report["claims"]) and report["regressions"] == []
    md = (out / "report.md").read_text()
    assert md.index("## Findings") < md.index("## All claims")
    assert "| claim | statement | reference | expected | verdict | status |" in md
    assert "a_theory_bounds.png" in md
    for name in ("a_theory_bounds", "b_loglog_discrepancy", "c_accuracy", "d_softmax_scale",
                 "e_geometry", "ps_scale"):  # fmt: skip
        for ext in ("png", "csv", "caption.txt"):
            assert (out / "figures" / f"{name}.{ext}").stat().st_size > 0
        assert not (out / "figures" / f"{name}.pdf").exists()  # quick figures are PNG previews
    if "llm_eval_local" in available_figure_names():  # [A]'s frontier protocol on the local models
        caption = (out / "figures" / "llm_eval_local.caption.txt").read_text()
        assert "8 prompts x 2 draws" in caption and "trained small: " in caption
        local = by_id["llm-eval.local-ordering"]
        assert set(local["figures"]["orderings"]) == {"trained small", "compiled 12-layer"}
        seen = set(local["figures"]["orderings"].values())
        verdict = "holds" if seen == {"shown"} else "violated" if "not shown" in seen else "unresolvable"
        assert local["verdict"] == verdict and local["expected"] == "open"


def test_strict_fails_on_an_unexpected_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ropeproof import claims as registry

    def broken(ctx):
        return registry.Outcome.judge(False, {"x": 1.0}, "x", counterexample={"n": 2})

    broken.__module__ = "ropeproof.claims._rope"  # stands for a built-in claim (yours read neutrally)
    c = registry.Claim("test.broken", "A claim that fails.", "test", {}, broken)
    monkeypatch.setattr(registry, "registered_claims", lambda: [c])  # check reads it when a run starts
    # --jobs 1: the patched registry exists in this process only (tests/ropeproof/test_check_pool.py
    # runs the two-process path)
    args = ["check", "--out", str(tmp_path), "--no-progress", "--no-figures", "--jobs", "1"]
    assert main(args) == 0
    assert main([*args, "--strict"]) == 2  # the first report is there: a rerun needs --force
    assert main([*args, "--strict", "--force"]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["claims"][0]["counterexample"] == {"n": 2}
    assert report["claims"][0]["status"].startswith("REGRESSION: expected holds, got violated")


def test_certified_mode_agrees_with_floating_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ropeproof import claims as registry

    chosen = [
        c
        for c in registry.registered_claims()
        if c.id.startswith("thm3.2.index.") and c.id.split(".")[-1] in ("gap_sup", "margin_inf")
    ]
    monkeypatch.setattr(registry, "registered_claims", lambda: chosen)
    base = ["check", "--no-progress", "--no-figures", "--jobs", "1"]  # one process: the patched registry
    assert main([*base, "--out", str(tmp_path / "f")]) == 0
    assert main([*base, "--certified", "--out", str(tmp_path / "c")]) == 0
    fp = {c["id"]: c for c in json.loads((tmp_path / "f" / "report.json").read_text())["claims"]}
    cert = {c["id"]: c for c in json.loads((tmp_path / "c" / "report.json").read_text())["claims"]}
    assert len(cert) == 6
    for cid, c in cert.items():
        assert c["certified"] and not fp[cid]["certified"]
        assert c["verdict"] == fp[cid]["verdict"], cid
        if c["verdict"] == "violated":
            assert c["counterexample"]["n"] == fp[cid]["counterexample"]["n"] == 4
    assert "(certified)" in (tmp_path / "c" / "report.md").read_text()


@pytest.mark.e2e  # a whole command run from outside: CI's second pass (-m e2e)
def test_a_terminated_check_leaves_no_staging_directory(tmp_path: Path) -> None:
    # `timeout 60 ropeproof check` (SIGTERM) used to leave a 9 MB .ropeproof-report.partial-* behind
    import signal
    import time

    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "report.md").write_text("the previous run")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ropeproof", "check", "--quick", "--no-progress", "--force", "--out", "rep"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not any(".partial-" in p.name for p in tmp_path.iterdir()):  # the claims are running
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)  # let the claims and the figure process write into the staging directory
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted; no output directory was changed" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    assert [p.name for p in (tmp_path / "rep").iterdir()] == ["report.md"]


def test_the_list_of_subcommands_is_the_one_their_modules_give() -> None:
    """``ropeproof --help`` lists every subcommand with its one-line help without importing them: the
    same text as the parser with every subcommand registered in full."""
    from ropeproof._cli import SUBCOMMANDS, build_parser
    from ropeproof.commands._summaries import SUMMARIES

    assert list(SUMMARIES) == list(SUBCOMMANDS)
    assert build_parser(["--help"]).format_help() == build_parser(None).format_help()
    full = build_parser(None)._subparsers._group_actions[0]  # type: ignore[union-attr]
    assert {a.dest: a.help for a in full._choices_actions} == SUMMARIES


def test_a_subcommand_starts_without_the_others() -> None:
    """``ropeproof --version`` and ``ropeproof --help`` import no subcommand and no torch; a subcommand
    imports no other subcommand's module (``findings`` does not load ``check`` or ``sweep``)."""
    import subprocess
    import sys

    from ropeproof._cli import requested_subcommand

    assert requested_subcommand(["--threads", "2", "sweep", "index"]) == "sweep"
    assert requested_subcommand(["--debug", "nosuch"]) is None and requested_subcommand(["-h"]) is None
    code = (
        "import sys\n"
        "from ropeproof._cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "names = ('torch', 'ropeproof.commands._check', 'ropeproof.commands._sweep',"
        " 'ropeproof.commands._train')\n"
        "print(','.join(m for m in names if m in sys.modules) or 'none', file=sys.stderr)\n"
    )
    for argv, loaded in (
        (["--version"], {"none"}),
        (["--help"], {"none"}),
        (["findings", "--help"], {"none", "torch"}),
        (["check", "--help"], {"ropeproof.commands._check"}),  # its claims (and torch) wait for a run
    ):
        out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd="/")
        assert out.stderr.strip().splitlines()[-1] in loaded, (argv, out.stderr)


def test_check_starts_its_second_process_early_only_when_the_claims_are_all_built_in(tmp_path: Path) -> None:
    """``--jobs 1``, ``--list`` and ``--claims`` start no second process before the claims are known, nor
    does a rerun whose every task the cache kept (it gives them back, :mod:`ropeproof._task_cache`)."""
    import argparse

    from ropeproof._task_cache import complete_run
    from ropeproof.commands import _check as check
    from ropeproof.machinery._result_cache import ResultCache

    def args(**kw: object) -> argparse.Namespace:
        settings = {"jobs": 2, "list": False, "claims": [], "no_figures": True, "no_cache": False}
        settings |= {"quick": True, "device": "cpu", "dtype": "float64", "certified": False, "only": []}
        settings |= {"skip": [], "formats": None, "no_plugins": False, "cache_dir": tmp_path / "cache"}
        return argparse.Namespace(**{**settings, **kw})

    cache = ResultCache(tmp_path / "cache")
    complete_run(cache, check._run_settings(args(quick=False)), [], [])
    cache.close()
    kept = args(quick=False)
    for refused in (args(jobs=1), args(list=True), args(claims=["mine.py"]), kept):
        assert check._early_second_process(refused) is None
    second = check._early_second_process(args())
    try:
        assert second is not None and second.apply(sorted, ([2, 1],)) == [1, 2]  # a live process
    finally:
        second.terminate()
        second.join()

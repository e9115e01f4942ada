"""The run directory: the log survives a line cut short by a crash, refuses a corrupt line, and a run
directory resumes only a run with the same identity (unless forced)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropeproof.machinery._errors import InputError, OutputError
from ropeproof.verify.studies.llm_eval._harness import evaluate
from ropeproof.verify.studies.llm_eval._local import PythonCallable
from ropeproof.verify.studies.llm_eval._results import load_run
from ropeproof.verify.studies.llm_eval._run_log import (
    LOG_FILE,
    SETTINGS_FILE,
    RunLog,
    open_run,
    write_json_atomic,
)
from ropeproof.verify.studies.llm_eval._runner import FailureStreakError


def test_appends_are_on_disk_and_a_cut_line_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / LOG_FILE
    log = RunLog(path)
    log.append([{"key": "a", "reply": "x"}, {"key": "b", "reply": None, "error": "timed out"}])
    log.append([{"key": "b", "reply": "y"}])
    assert [json.loads(line)["key"] for line in path.read_text().splitlines()] == ["a", "b", "b"]
    assert {k: r["reply"] for k, r in RunLog(path).replies().items()} == {"a": "x", "b": "y"}
    with open(path, "a") as f:
        f.write('{"key": "c", "rep')  # killed mid-write
    assert len(RunLog(path, repair=False).records()) == 3 and path.read_text().endswith('"rep')
    assert len(RunLog(path).records()) == 3 and path.read_text().endswith("}\n")  # repaired on reopening


def test_a_corrupt_line_inside_the_log_is_named(tmp_path: Path) -> None:
    path = tmp_path / LOG_FILE
    path.write_text('{"key": "a", "reply": "x"}\nnot json\n{"key": "b", "reply": "y"}\n')
    with pytest.raises(InputError, match="line 2 is not JSON"):
        RunLog(path)


def test_only_a_run_with_the_same_identity_is_resumed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ident = {"provider": "python", "model": "m:f", "format": "chat", "seed": 0}
    open_run(out, ident, {"prompts": 1}, "m").append([{"key": "k", "reply": "x"}])
    log = open_run(out, ident, {"prompts": 2}, "m")  # another plan: resumed
    assert log.replies().keys() == {"k"}
    assert json.loads((out / SETTINGS_FILE).read_text())["plan"] == {"prompts": 2}
    with pytest.raises(OutputError, match="other settings \\(seed: 0 -> 1\\)"):
        open_run(out, {**ident, "seed": 1}, {}, "m")
    assert open_run(out, {**ident, "seed": 1}, {}, "m", force=True).records() == []
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="holds no llm-eval run"):
        open_run(other, ident, {}, "m")
    write_json_atomic(tmp_path / "doc.json", {"a": 1})
    assert json.loads((tmp_path / "doc.json").read_text()) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json", "other", "run"]  # no temporary left


def solve(text: str) -> str:
    """A perfect solver (the library's rules), for runs that must come out exactly."""
    from ropeproof.verify.studies.llm_eval._protocol import answer

    tokens = text.splitlines()[-1].removeprefix("Sequence: ").split()
    return answer("number" if tokens[-1].isdigit() else "letter", tokens)


def test_an_interrupted_run_resumes_to_the_same_summary(tmp_path: Path) -> None:
    calls: list[str] = []

    def flaky(text: str) -> str:
        calls.append(text)
        if len(calls) > 9:
            raise RuntimeError("the callable broke")
        return solve(text)

    out = tmp_path / "run"
    with pytest.raises(
        FailureStreakError, match=r"3 requests in a row got no reply .*RuntimeError: the callable"
    ):
        evaluate(
            PythonCallable(flaky, "solver"),
            lengths=[5, 9],
            prompts=4,
            draws=2,
            out=out,
            concurrency=1,
            max_failures=3,
        )
    partial = load_run(out)
    assert partial.missing == 32 - 9 and len(calls) == 12

    def counted(text: str) -> str:
        calls.append(text)
        return solve(text)

    summary = evaluate(
        PythonCallable(counted, "solver"), lengths=[5, 9], prompts=4, draws=2, out=out, concurrency=1
    )
    assert summary.complete and all(r.accuracy_mean == 1.0 and r.n_prompts == 8 for r in summary.results)
    assert load_run(out).to_json() == {**summary.to_json(), "path": str(out)}
    assert len(calls) == 12 + 23 and len(set(calls[9:])) == 23  # nothing answered was asked again
    assert not set(calls[:9]) & set(calls[12:])


def test_force_replaces_a_run_only_once_the_new_settings_are_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ropeproof.verify.studies.llm_eval._run_log as run_log

    out = tmp_path / "run"
    ident = {"provider": "python", "model": "m:f", "format": "chat", "seed": 0}
    open_run(out, ident, {"prompts": 1}, "m").append([{"key": "k", "reply": "x"}])
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def crash(path: Path, doc: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:  # the new settings cannot be written: the old run stays whole
        m.setattr(run_log, "write_json_atomic", crash)
        with pytest.raises(OSError, match="No space left"):
            open_run(out, {**ident, "seed": 1}, {}, "m", force=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert open_run(out, {**ident, "seed": 1}, {}, "m", force=True).records() == []
    assert sorted(p.name for p in out.iterdir()) == [SETTINGS_FILE] and [
        p.name for p in tmp_path.iterdir()
    ] == ["run"]


def test_the_log_follows_the_umask(tmp_path: Path) -> None:
    import os
    import stat

    umask = os.umask(0o002)
    try:
        RunLog(tmp_path / LOG_FILE).append([{"key": "a", "reply": "x"}])
        write_json_atomic(tmp_path / "run.json", {})
    finally:
        os.umask(umask)
    for name in (LOG_FILE, "run.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o664, name


def test_a_huge_reply_is_logged_and_read_to_its_first_characters(tmp_path: Path) -> None:
    # a 20 MB reply was logged in full
    from ropeproof.verify.studies.llm_eval._runner import REPLY_CHARS

    def verbose(text: str) -> str:
        return solve(text) + " " * 20_000_000 if "Sequence" in text else solve(text)

    summary = evaluate(
        PythonCallable(verbose, "v"), ["letter"], [8], 2, 1, out=tmp_path / "run", concurrency=1
    )
    records = RunLog(tmp_path / "run" / LOG_FILE).records()
    assert all(len(r["reply"]) == REPLY_CHARS and r["reply_chars"] == 20_000_000 + 2 for r in records)
    assert all(r["correct"] for r in records) and summary.results[0].accuracy_mean == 1.0
    assert (tmp_path / "run" / LOG_FILE).stat().st_size < 2 * 2 * REPLY_CHARS
    assert load_run(tmp_path / "run").results == summary.results  # re-read from the log: the same


def test_a_log_that_is_a_link_or_a_fifo_is_refused(tmp_path: Path) -> None:
    import os

    (tmp_path / "elsewhere").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    os.mkfifo(tmp_path / "fifo")  # reading or appending to it would wait forever
    for name in ("link", "fifo"):
        with pytest.raises(OutputError, match="is not a regular file"):
            RunLog(tmp_path / name)
        log = RunLog(None)
        log.path = tmp_path / name
        with pytest.raises(OutputError, match="is not a regular file"):
            log.append([{"key": "a", "reply": "x"}])
    assert (tmp_path / "elsewhere").read_text() == ""

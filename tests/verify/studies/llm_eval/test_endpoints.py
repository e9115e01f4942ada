"""``ropeproof llm-eval`` against real HTTP servers on 127.0.0.1 (``conftest.ChatServer``): accuracies
that match what the server answered, retries through 429s, 500s and timeouts, malformed bodies logged
and asked again on a rerun, Ctrl-C and kill -9 that never make a paid request twice, and keys that
appear in no output."""

from __future__ import annotations

import _thread
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ropeproof._cli import main
from ropeproof.verify.studies.llm_eval._run_log import LOG_FILE, RESULTS_FILE, SETTINGS_FILE
from ropeproof.verify.studies.llm_eval._statistics import clopper_pearson

KEY = "sk-test-" + "5eCr3t" * 6
FIELDS = {"task", "length", "accuracy_mean", "accuracy_std", "n_prompts", "ci_low", "ci_high"}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def eval_argv(url: str, out: Path, *extra: str, provider: str = "openai") -> list[str]:
    if provider == "anthropic":
        url = url.removesuffix("/v1")  # the anthropic client adds /v1/messages to the server root
    return ["llm-eval", "--provider", provider, "--base-url", url, "--model", "M", "--out", str(out),
            "--no-progress", *extra]  # fmt: skip


def log_records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / LOG_FILE).read_text().splitlines()]


def test_accuracies_match_what_the_server_answered(
    chat_server, helpers, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = chat_server(key=KEY)
    out = tmp_path / "run"
    argv = eval_argv(
        server.url, out, "--task", "number", "--lengths", "8,16,32", "--prompts", "20", "--draws", "2"
    )
    code, stdout, _ = run_cli([*argv, "--json"], capsys)
    assert code == 0
    doc = json.loads(stdout)
    assert doc["complete"] and server.total == 3 * 20 * 2 and max(server.requests.values()) == 1
    for r in doc["results"]:
        assert set(r) == FIELDS
        asked = [p for p in server.requests if len(helpers.sequence_of(p)) == r["length"]]
        right = sum(helpers.answers_right(p) for p in asked)
        assert len(asked) == r["n_prompts"] == 40
        assert r["accuracy_mean"] == pytest.approx(right / 40, abs=1e-15)
        assert (r["ci_low"], r["ci_high"]) == clopper_pearson(right, 40)
    assert [r["length"] for r in doc["results"]] == [8, 16, 32]
    assert 0 < doc["results"][2]["accuracy_mean"] < doc["results"][0]["accuracy_mean"] == 1.0
    assert json.loads((out / RESULTS_FILE).read_text()) == doc
    records = log_records(out)
    assert {r["prompt"] for r in records} == set(server.requests)
    assert all(r["reply"] == server.replies[r["prompt"]] for r in records)
    # rerunning the finished run sends nothing and reports the same
    assert run_cli([*argv, "--json"], capsys)[0] == 0 and server.total == 120


def test_a_server_failing_half_its_requests_still_answers_every_prompt(
    chat_server, helpers, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    h = helpers.prompt_hash

    def faults(prompt: str, attempt: int) -> str | None:
        if attempt > 1:
            return None
        return "timeout" if h(prompt) % 16 == 0 else ("429", "500")[h(prompt) % 2]

    server = chat_server(faults=faults, stall=0.5)
    out = tmp_path / "run"
    argv = eval_argv(
        server.url, out, "--lengths", "8,16", "--prompts", "10", "--draws", "2", "--timeout", "0.25"
    )
    code, stdout, err = run_cli(argv, capsys)
    assert code == 0, err
    assert server.total == 2 * 80 and set(server.requests.values()) == {2}
    assert (
        server.faults_sent["429"] > 0 and server.faults_sent["500"] > 0 and server.faults_sent["timeout"] > 0
    )
    records = log_records(out)
    assert len(records) == 80 and all(r["reply"] is not None and r["error"] is None for r in records)
    assert "shows [A]'s ordering" in stdout or "ordering" in stdout


def test_malformed_bodies_are_logged_and_asked_again_on_a_rerun(
    chat_server, helpers, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    broken = {}

    def faults(prompt: str, attempt: int) -> str | None:
        broken[prompt] = helpers.prompt_hash(prompt) % 3 == 0
        return "broken" if broken[prompt] and attempt == 1 else None

    server = chat_server(faults=faults)
    out = tmp_path / "run"
    argv = eval_argv(server.url, out, "--task", "letter", "--lengths", "8", "--prompts", "12", "--draws", "1")
    code, stdout, err = run_cli([*argv, "--json"], capsys)
    n_broken = sum(broken.values())
    assert code == 1 and 0 < n_broken < 12
    assert f"{n_broken} prompts have no reply" in err and err.count("\n") == 1
    doc = json.loads(stdout)
    assert (
        not doc["complete"] and doc["missing"] == n_broken and doc["results"][0]["n_prompts"] == 12 - n_broken
    )
    errors = [r for r in log_records(out) if r["error"]]
    assert len(errors) == n_broken and all(r["error"].startswith("malformed response") for r in errors)
    code, stdout, _ = run_cli([*argv, "--json"], capsys)
    assert code == 0 and json.loads(stdout)["results"][0]["n_prompts"] == 12
    assert all(server.requests[p] == (2 if broken[p] else 1) for p in server.requests)


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """Python's own Ctrl-C handler for the test, the one ``_thread.interrupt_main`` needs: a process
    started in the background (``cmd &``, ``nohup``) starts with SIGINT ignored, and ``interrupt_main``
    then does nothing. The previous handler is put back after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_keeps_every_reply_and_the_rerun_asks_nothing_twice(
    chat_server, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def interrupt(total: int) -> None:
        if total == 10:
            _thread.interrupt_main()  # Ctrl-C
        if total >= 10:
            time.sleep(0.3)  # the requests in flight stay in flight while the main thread handles it

    server = chat_server(on_request=interrupt)
    out = tmp_path / "run"
    argv = eval_argv(server.url, out, "--lengths", "8", "--prompts", "15", "--draws", "1")
    code, _, err = run_cli(argv, capsys)
    assert code == 130 and "interrupted; every reply received is in" in err
    asked = server.total
    assert 10 <= asked < 30 and len(log_records(out)) == asked  # the requests in flight were waited for
    assert run_cli(argv, capsys)[0] == 0
    assert server.total == 30 and set(server.requests.values()) == {1}


@pytest.mark.e2e  # a whole command run from outside: CI's second pass (-m e2e)
def test_kill_9_loses_at_most_the_requests_in_flight(
    chat_server, tmp_path: Path, capsys, monkeypatch
) -> None:
    server = chat_server(delay=0.02)
    out = tmp_path / "run"
    argv = eval_argv(
        server.url, out, "--lengths", "8,16", "--prompts", "10", "--draws", "1", "--concurrency", "2"
    )
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    proc = subprocess.Popen([sys.executable, "-m", "ropeproof", *argv], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while server.total < 12 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        proc.kill()
        proc.wait()
    logged = {r["prompt"] for r in log_records(out)}
    assert 12 <= server.total < 40 and len(logged) >= server.total - 2
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert run_cli(argv, capsys)[0] == 0
    twice = [p for p, n in server.requests.items() if n > 1]
    assert len(server.requests) == 40 and len(twice) <= 2 and max(server.requests.values()) <= 2
    assert not set(twice) & logged  # only requests in flight at the kill were asked again
    assert len({r["key"] for r in log_records(out)}) == 40


def test_a_key_never_reaches_a_log_a_result_file_or_an_error(
    chat_server, tmp_path: Path, capsys, monkeypatch
) -> None:
    server = chat_server(key=KEY, echo_key=True)  # a 401 body and every reply repeat the key sent
    wrong = "sk-wrong-" + "k3y" * 8
    monkeypatch.setenv("OPENAI_API_KEY", wrong)
    argv = eval_argv(server.url, tmp_path / "refused", "--lengths", "8", "--prompts", "2", "--draws", "1")
    code, stdout, err = run_cli(argv, capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("ropeproof llm-eval: error: the openai server refused the request (HTTP 401)")
    assert "[redacted]" in err and wrong not in err + stdout
    refused = server.total  # one 401 per request that was in flight

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    out = tmp_path / "answered"
    argv = eval_argv(
        server.url, out, "--lengths", "8", "--prompts", "3", "--draws", "1", provider="anthropic"
    )
    code, stdout, err = run_cli(argv, capsys)
    assert code == 0 and server.total == refused + 6
    for path in [tmp_path / "refused", out]:
        for f in path.iterdir():
            assert KEY not in f.read_text() and wrong not in f.read_text(), f
    assert KEY not in stdout + err
    replies = [r["reply"] for r in log_records(out)]
    assert all(r.endswith("(key [redacted])") for r in replies)
    settings = json.loads((out / SETTINGS_FILE).read_text())
    assert settings["identity"]["provider"] == "anthropic" and settings["identity"]["model"] == "M"


def test_anthropic_replies_are_scored(chat_server, helpers, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = chat_server(key=KEY)
    argv = eval_argv(
        server.url,
        tmp_path / "run",
        "--lengths",
        "16",
        "--prompts",
        "8",
        "--draws",
        "2",
        "--json",
        provider="anthropic",
    )
    code, stdout, _ = run_cli(argv, capsys)
    doc = json.loads(stdout)
    assert code == 0
    for r in doc["results"]:
        asked = [p for p in server.requests if (p.split()[-1].isdigit()) == (r["task"] == "number")]
        assert r["accuracy_mean"] == pytest.approx(sum(map(helpers.answers_right, asked)) / 16, abs=1e-15)


def test_a_huge_reply_is_not_read_nor_logged(chat_server, tmp_path: Path, capsys, monkeypatch) -> None:
    # a 20 MB reply was read and logged in full despite --max-tokens 16
    from ropeproof.verify.studies.llm_eval._remote import reply_bytes

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    huge = "x" * 20_000_000
    server = chat_server(policy=lambda prompt: huge if prompt.split()[-1].isdigit() else "fine")
    out = tmp_path / "run"
    argv = eval_argv(server.url, out, "--lengths", "8", "--prompts", "3", "--draws", "1")
    code, _, err = run_cli(argv, capsys)
    assert code == 1 and "3 prompts have no reply" in err
    assert max(server.requests.values()) == 1  # refused, not retried
    records = log_records(out)
    refused = [r for r in records if r["error"]]
    assert len(refused) == 3 and {r["task"] for r in refused} == {"number"}
    pattern = (
        rf"reply not read: its body was \d{{8}} bytes, more than the {reply_bytes(16)} read at most "
        r"\(the bound follows --max-tokens 16\)"
    )
    assert all(re.fullmatch(pattern, r["error"]) for r in refused), refused[0]["error"]
    assert (out / "log.jsonl").stat().st_size < 100_000


def test_a_client_error_never_shows_the_key(tmp_path: Path, capsys, monkeypatch) -> None:
    from ropeproof.verify.studies.llm_eval._remote import OpenAIChat

    def boom(self: object, prompt: object) -> None:
        raise RuntimeError(f"the client failed with key {KEY}") from ValueError(f"sent {KEY}")

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(OpenAIChat, "ask", boom)
    argv = eval_argv("http://127.0.0.1:9/v1", tmp_path / "run", "--lengths", "8", "--prompts", "1")
    code, stdout, err = run_cli([*argv, "--draws", "1", "--concurrency", "1"], capsys)
    assert code == 3 and "the client failed with key [redacted]" in err and KEY not in err + stdout

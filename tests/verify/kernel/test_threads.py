"""The thread policy: resolution order, restoring the caller's setting, nesting, the decorator form,
the CLI's --threads, the claim runner, and the test suite itself."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TypeVar

import pytest
import torch

from ropeproof import _cli as cli
from ropeproof.claims import CheckContext, Outcome, run_claim
from ropeproof.claims._registry import Claim
from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._threads import (
    DEFAULT_THREADS,
    THREADS_ENV,
    parse_threads,
    resolve_threads,
    thread_policy,
)

T = TypeVar("T")


def outside_any_policy(fn: Callable[[], T]) -> T:
    """Run ``fn`` in a fresh context, outside the session's enclosing policy (tests/conftest.py), as
    a library user's code runs."""
    return contextvars.Context().run(fn)


@pytest.fixture
def caller_threads():
    """Run the test from a caller that set 2 threads itself; put the suite's setting back after."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield 2
    torch.set_num_threads(before)


def test_the_suite_runs_under_the_policy() -> None:
    """tests/conftest.py enters thread_policy() for the session."""
    n = resolve_threads()
    assert n == 0 or torch.get_num_threads() == n


def test_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    def scenario() -> None:
        monkeypatch.delenv(THREADS_ENV, raising=False)
        assert resolve_threads() == DEFAULT_THREADS == 1  # nothing said: the default
        monkeypatch.setenv(THREADS_ENV, "2")
        assert resolve_threads() == 2  # the environment beats the default
        with thread_policy(3):  # an enclosing policy beats the environment ...
            assert resolve_threads() == 3
            assert resolve_threads(1) == 1  # ... and an explicit value beats the enclosing policy
        assert resolve_threads() == 2

    outside_any_policy(scenario)


@pytest.mark.parametrize("bad", ["-1", "two", "1.5", "", " "])
def test_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv(THREADS_ENV, bad)
    if bad.strip():
        with pytest.raises(
            InputError, match=rf"{THREADS_ENV}=.* accepted: an integer >= 0 \(0: leave torch's setting\)"
        ):
            outside_any_policy(resolve_threads)
    else:  # blank means unset
        assert outside_any_policy(resolve_threads) == DEFAULT_THREADS


@pytest.mark.parametrize("bad", [-1, 1.5, True, "x", None])
def test_bad_explicit_value(bad: object) -> None:
    if bad is None:  # None is "not given", not an error
        assert parse_threads(" 4 ") == 4
        return
    with pytest.raises(
        InputError, match=r"threads=.* accepted: an integer >= 0 \(0: leave torch's setting\)"
    ):
        parse_threads(bad)  # type: ignore[arg-type]


def test_block_sets_and_restores(caller_threads: int) -> None:
    with thread_policy(1) as n:
        assert n == torch.get_num_threads() == 1
        with thread_policy() as inner:  # nested, no value: inherits the enclosing 1
            assert inner == 1
    assert torch.get_num_threads() == caller_threads


def test_restores_after_an_exception(caller_threads: int) -> None:
    with pytest.raises(RuntimeError, match="boom"), thread_policy(1):
        assert torch.get_num_threads() == 1
        raise RuntimeError("boom")
    assert torch.get_num_threads() == caller_threads


def test_zero_leaves_torch_alone(caller_threads: int) -> None:
    with thread_policy(0) as n:
        assert n == torch.get_num_threads() == caller_threads


def test_decorator_form(caller_threads: int) -> None:
    @thread_policy(1)
    def inside() -> int:
        return torch.get_num_threads()

    assert inside() == 1
    assert inside() == 1  # reusable: a fresh block per call
    assert torch.get_num_threads() == caller_threads


def test_claim_runner_applies_the_policy_and_restores(
    caller_threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    seen: list[int] = []

    def check(ctx: CheckContext) -> Outcome:
        seen.append(torch.get_num_threads())
        return Outcome.judge(ok=True, figures={})

    c = Claim("t.threads", "records its threads", "test", {}, check)
    ctx = CheckContext(torch.device("cpu"), torch.float64)

    def scenario() -> None:
        assert run_claim(c, ctx).outcome.verdict == "holds"
        with thread_policy(2):  # the CLI's --threads reaches the runner through the enclosing block
            run_claim(c, ctx)

    outside_any_policy(scenario)
    assert seen == [DEFAULT_THREADS, 2]
    assert torch.get_num_threads() == caller_threads


def test_cli_threads_option(
    caller_threads: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ropeproof.commands._check as check_command

    seen: list[int] = []
    monkeypatch.setattr(check_command, "run", lambda args: seen.append(torch.get_num_threads()) or 0)
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert outside_any_policy(lambda: cli.main(["--threads", "1", "check"])) == 0
    assert outside_any_policy(lambda: cli.main(["check"])) == 0  # no flag, no variable: the default
    monkeypatch.setenv(THREADS_ENV, "0")
    assert outside_any_policy(lambda: cli.main(["check"])) == 0  # 0: torch's (here the caller's) setting
    assert seen == [1, DEFAULT_THREADS, caller_threads]
    assert torch.get_num_threads() == caller_threads
    with pytest.raises(SystemExit) as exc:
        cli.main(["--threads", "-3", "check"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "ropeproof: error: argument --threads: --threads=-3 is out of range; accepted: an integer >= 0 "
        "(0: leave torch's setting) (see 'ropeproof --help')"
    )


def test_numpy_blas_threads_follow_the_policy_and_are_restored() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    if not blas_threads():
        pytest.skip("numpy loaded no BLAS library that threadpoolctl can see")

    def scenario() -> None:
        with threadpool_limits(limits=2, user_api="blas"):  # the caller's own setting
            with thread_policy(1):
                assert blas_threads() == {1}
            assert blas_threads() == {2}

    outside_any_policy(scenario)


def test_without_torch_imported_the_policy_is_the_count_torch_starts_with() -> None:
    """The policy imports no torch; before torch's import it sets OMP_NUM_THREADS for the block, so torch
    imported inside starts with the policy's count, and the environment is restored after."""
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "os.environ.pop('OMP_NUM_THREADS', None)\n"
        "from ropeproof.verify.kernel._threads import thread_policy\n"
        "assert 'torch' not in sys.modules\n"
        "with thread_policy(1):\n"
        "    assert os.environ['OMP_NUM_THREADS'] == '1'\n"
        "    import torch\n"
        "    inside = torch.get_num_threads()\n"
        "print(inside, 'OMP_NUM_THREADS' in os.environ)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.split() == ["1", "False"]

"""The llm-eval tests' server: ``ChatServer`` (``chat_server.py`` beside this file: (a real HTTP
server on 127.0.0.1 speaking the OpenAI and Anthropic APIs, with faults on purpose; a test fixture, so it
ships in no wheel) answering with a
scripted policy that solves the tasks with its own reading of the sequence (written here, independent
of the library's answer rules), so the tests compare the harness's accuracies with what the server
answered.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest


def _load_chat_server() -> ModuleType:
    """``chat_server.py`` beside this file, loaded by path (the suite imports test files by path, not as
    a package), once per process."""
    import importlib.util
    from pathlib import Path

    name = "ropeproof_tests_chat_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("chat_server.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


ChatServer = _load_chat_server().ChatServer


def prompt_hash(prompt: str) -> int:
    """A deterministic number per prompt (Python's ``hash`` of a string changes between processes)."""
    return sum(map(ord, prompt)) * 2654435761 % 2**32


def sequence_of(prompt: str) -> list[str]:
    """The tokens on the prompt's last line (after ``Sequence:`` when present)."""
    last = prompt.strip().splitlines()[-1]
    return last.removeprefix("Sequence:").split()


def server_solution(prompt: str) -> str:
    """The correct answer, read by the server: a final integer means "count back", else "find the
    token starting with the final token's second character"."""
    tokens = sequence_of(prompt)
    if re.fullmatch(r"[0-9]+", tokens[-1]):
        return tokens[-1 - int(tokens[-1])]
    (hit,) = [t for t in tokens[:-1] if t.startswith(tokens[-1][1])]
    return hit


def answers_right(prompt: str) -> bool:
    """Whether :func:`scripted_policy` answers ``prompt`` right: every letter prompt, and number prompts
    that count back at most 7."""
    last = sequence_of(prompt)[-1]
    return not re.fullmatch(r"[0-9]+", last) or int(last) <= 7


def scripted_policy(prompt: str) -> str:
    """The right answer or ``"none"`` (:func:`answers_right`), decorated in one of the ways the parser
    must tolerate (chosen by the prompt's characters)."""
    reply = server_solution(prompt) if answers_right(prompt) else "none"
    return [reply, f" {reply}\n", f'"{reply}".', f"'{reply}'"][prompt_hash(prompt) % 4]


@pytest.fixture
def chat_server() -> Iterator[Callable[..., ChatServer]]:
    """Start servers with ``chat_server(**ChatServer kwargs)`` (the policy defaults to
    :func:`scripted_policy`); all are stopped after the test."""
    started: list[ChatServer] = []

    def start(**kwargs: object) -> ChatServer:
        kwargs.setdefault("policy", scripted_policy)
        server = ChatServer(**kwargs).__enter__()  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__()


@pytest.fixture
def helpers() -> ModuleType:
    """This module: the server's own reading of prompts (``sequence_of``, ``server_solution``,
    ``answers_right``, ``prompt_hash``) for the tests to compare against."""
    return sys.modules[__name__]

"""A real HTTP server on 127.0.0.1 for the llm-eval tests: it speaks the OpenAI chat-completions API
(``POST /v1/chat/completions``) and the Anthropic messages API (``POST /v1/messages``), answers with a
scripted policy, counts every request per prompt, and can fail on purpose (429, 500, a timeout, a
broken JSON body, a 401 that echoes the key it was sent; ``echo_key`` repeats the key in every reply).

The policy solves the tasks with its own reading of the sequence (written here, independent of the
library's answer rules), so the tests compare the harness's accuracies with what the server answered.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType

import pytest

Fault = str | None
"""``None`` (answer), ``"429"``, ``"500"``, ``"timeout"`` (answer after :attr:`ChatServer.stall` s) or
``"broken"`` (HTTP 200 with a truncated JSON body)."""


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


class ChatServer:
    """The server (module docstring). ``requests`` counts requests per prompt text, ``replies`` keeps the
    last reply sent per prompt; ``faults(prompt, attempt)`` decides each request's fault (``attempt``
    counts from 1 per prompt); ``on_request(total)`` runs after every request is counted."""

    def __init__(
        self,
        policy: Callable[[str], str] = scripted_policy,
        key: str | None = None,
        faults: Callable[[str, int], Fault] | None = None,
        delay: float = 0.0,
        stall: float = 1.0,
        on_request: Callable[[int], None] | None = None,
        echo_key: bool = False,
    ) -> None:
        self.policy, self.key, self.faults, self.delay, self.stall = policy, key, faults, delay, stall
        self.echo_key = echo_key
        self.on_request = on_request
        self.requests: Counter[str] = Counter()
        self.replies: dict[str, str] = {}
        self.faults_sent: Counter[str] = Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.handle(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def total(self) -> int:
        return sum(self.requests.values())

    def _send(
        self, handler: BaseHTTPRequestHandler, code: int, body: bytes, headers: dict | None = None
    ) -> None:
        try:
            handler.send_response(code)
            handler.send_header("Content-Type", "application/json")
            for k, v in (headers or {}).items():
                handler.send_header(k, v)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def handle(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        anthropic = handler.path.endswith("/messages")
        # Anthropic's clients send x-api-key (older) or a bearer token (newer); OpenAI's a bearer token
        sent_key = handler.headers.get("x-api-key") or handler.headers.get("Authorization", "").removeprefix(
            "Bearer "
        )
        content = body["messages"][-1]["content"]
        prompt = content if isinstance(content, str) else "".join(b["text"] for b in content)
        with self.lock:
            self.requests[prompt] += 1
            attempt = self.requests[prompt]
            total = self.total
        if self.on_request is not None:
            self.on_request(total)
        if self.key is not None and sent_key != self.key:
            msg = {
                "error": {
                    "type": "authentication_error",
                    "message": f"Incorrect API key provided: {sent_key}",
                }
            }
            self._send(handler, 401, json.dumps(msg).encode())
            return
        fault = self.faults(prompt, attempt) if self.faults else None
        if fault is not None:
            with self.lock:
                self.faults_sent[fault] += 1
        if fault in ("429", "500"):
            msg = {"error": {"message": "slow down" if fault == "429" else "internal error"}}
            self._send(handler, int(fault), json.dumps(msg).encode(), {"retry-after-ms": "5"})
            return
        if fault == "timeout":
            time.sleep(self.stall)
        if self.delay:
            time.sleep(self.delay)
        reply = self.policy(prompt) + (f" (key {sent_key})" if self.echo_key else "")
        with self.lock:
            self.replies[prompt] = reply
        if fault == "broken":
            self._send(handler, 200, b'{"id": "x", "choices": [{"message": {"content": "a')
            return
        usage_in, usage_out = len(prompt.split()), 1
        if anthropic:
            doc = {
                "id": f"msg_{attempt}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [{"type": "text", "text": reply}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
            }
        else:
            doc = {
                "id": f"chatcmpl-{attempt}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
                ],
                "usage": {
                    "prompt_tokens": usage_in,
                    "completion_tokens": usage_out,
                    "total_tokens": usage_in + 1,
                },
            }
        self._send(handler, 200, json.dumps(doc).encode())

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat_server() -> Iterator[Callable[..., ChatServer]]:
    """Start servers with ``chat_server(**ChatServer kwargs)``; all are stopped after the test."""
    started: list[ChatServer] = []

    def start(**kwargs: object) -> ChatServer:
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

"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API
(``POST /v1/chat/completions``) and the Anthropic messages API (``POST /v1/messages``), for testing and
benchmarking :mod:`ropeproof.verify.studies.llm_eval` (or any harness) without a network.

It answers every prompt with ``policy(prompt_text)``, counts every request per prompt, and fails on
purpose when ``faults(prompt, attempt)`` says so: ``"429"`` and ``"500"`` (with ``retry-after-ms: 5``),
``"timeout"`` (answers after ``stall`` seconds), ``"broken"`` (HTTP 200 with a truncated JSON body). With
``key`` set, a request with another key gets a 401 whose body repeats the key it was sent (as some
servers do); ``echo_key`` appends the key sent to every reply. Start and stop it as a context manager::

    with ChatServer(lambda prompt: "y") as server:
        ...  # server.url is http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Fault = str | None
"""``None`` (answer), ``"429"``, ``"500"``, ``"timeout"`` or ``"broken"`` (module docstring)."""


class ChatServer:
    """The server (module docstring). ``requests`` counts requests per prompt text, ``replies`` keeps the
    last reply sent per prompt, ``faults_sent`` counts the faults by kind; ``faults(prompt, attempt)``
    decides each request's fault (``attempt`` counts from 1 per prompt); ``delay`` seconds pass before
    every reply (a model's latency); ``on_request(total)`` runs after every request is counted."""

    def __init__(
        self,
        policy: Callable[[str], str],
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
        # a short poll: shutdown() waits for the loop's next look (0.5 s by default, every server of a test)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:PORT/v1`` (Anthropic's clients take it without
        ``/v1``)."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def total(self) -> int:
        """Requests received so far, faulty ones included."""
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
        """Answer one POST whose JSON ``body`` has been read."""
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

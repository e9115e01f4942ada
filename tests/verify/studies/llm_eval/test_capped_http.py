"""Response bodies are read to a bound, whether their length is declared or they arrive in chunks."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from ropeproof.verify.studies.llm_eval._capped_http import REFUSED_HEADER, cap_body, capped_hooks

# openai is imported by the tests that use it, not at collection (every pytest worker collects this)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="needs openai (llm extra)")


def _http() -> ModuleType:
    """The HTTP library the official client is built on (httpx or its fork)."""
    import openai

    base = next(c for c in openai.DefaultHttpxClient.__mro__[1:] if c.__name__ == "Client")
    return sys.modules[base.__module__.partition(".")[0]]


class _Chunks:
    def __init__(self, parts: list[bytes]) -> None:
        self.parts, self.read, self.closed = parts, 0, False

    def __iter__(self) -> Iterator[bytes]:
        for part in self.parts:
            self.read += len(part)
            yield part

    def close(self) -> None:
        self.closed = True


def _response(parts: list[bytes], headers: dict[str, str]) -> tuple[object, _Chunks]:
    http = _http()
    chunks = _Chunks(parts)
    stream = type(
        "Stream",
        (http.SyncByteStream,),
        {"__iter__": lambda s: iter(chunks), "close": lambda s: chunks.close()},
    )()
    return http.Response(200, headers=headers, stream=stream), chunks


def test_a_body_within_the_bound_is_handed_on_whole() -> None:
    response, chunks = _response([b'{"a": ', b"1}"], {"transfer-encoding": "chunked"})
    cap_body(response, 8)
    assert response.status_code == 200 and response.read() == b'{"a": 1}' and chunks.closed
    assert REFUSED_HEADER not in response.headers


@pytest.mark.parametrize(
    ("parts", "headers", "why", "read"),
    [
        ([b"x" * 10] * 1000, {"transfer-encoding": "chunked"}, "more than the 25 bytes read at most", 30),
        ([b"x" * 10] * 1000, {"content-length": "10000"}, "10000 bytes, more than the 25 read at most", 0),
        (
            [b"x"],
            {"content-encoding": "gzip"},
            "compressed (gzip) although an uncompressed body was asked for",
            0,
        ),
    ],
)
def test_a_body_past_the_bound_is_not_read(
    parts: list[bytes], headers: dict[str, str], why: str, read: int
) -> None:
    response, chunks = _response(parts, headers)
    cap_body(response, 25)
    assert response.status_code == 413 and response.headers[REFUSED_HEADER] == why and chunks.closed
    assert response.headers["x-should-retry"] == "false" and response.read() == b""
    assert chunks.read == read  # at most one chunk past the bound was read


def test_the_hooks_ask_for_an_uncompressed_body() -> None:
    http = _http()
    hooks = capped_hooks(100)
    request = http.Request(
        "POST", "http://127.0.0.1:9/v1/chat/completions", headers={"accept-encoding": "gzip"}
    )
    for hook in hooks["request"]:
        hook(request)
    assert request.headers["accept-encoding"] == "identity" and len(hooks["response"]) == 1

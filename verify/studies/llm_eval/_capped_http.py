"""Replies read to a bound: event hooks for the HTTP client of the official ``openai`` and ``anthropic``
clients that read at most ``limit`` bytes of a response body.

The request hook asks for an uncompressed body (``Accept-Encoding: identity``), so that the bound holds
for what is decoded too. The response hook runs when the headers have arrived, before the client reads
the body: it reads the body itself, at most ``limit + 1`` bytes of it, and hands the client what it
read. A body longer than ``limit`` (by its ``Content-Length`` or as it arrives) or compressed although
an uncompressed one was asked for is not read further: the connection is closed and the client sees an
HTTP 413 with an empty body, the header :data:`REFUSED_HEADER` saying why, and ``x-should-retry: false``
(the official clients then neither retry nor parse it; :mod:`.remote` turns it into a failed reply).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ropeproof.machinery._validate import integer

REFUSED_HEADER = "x-ropeproof-refused-body"
"""Set on a response whose body was not read; its value says why."""


def _length(text: str | None) -> int | None:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None


def cap_body(response: Any, limit: int) -> None:
    """Read ``response``'s body (an ``httpx``-style response whose body has not been read) to at most
    ``limit`` bytes, in place (module docstring)."""
    http = sys.modules[type(response).__module__.partition(".")[0]]  # httpx, or the fork the client uses
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    declared = _length(response.headers.get("content-length"))
    why = None
    if encoding not in ("", "identity"):
        why = f"compressed ({encoding}) although an uncompressed body was asked for"
    elif declared is not None and declared > limit:
        why = f"{declared} bytes, more than the {limit} read at most"
    data = b""
    if why is None:
        chunks, total = [], 0
        for chunk in response.stream:
            total += len(chunk)
            if total > limit:
                why = f"more than the {limit} bytes read at most"
                break
            chunks.append(chunk)
        data = b"".join(chunks)
    response.stream.close()
    if why is not None:
        response.status_code = 413
        for name in ("content-encoding", "transfer-encoding"):
            if name in response.headers:
                del response.headers[name]
        response.headers[REFUSED_HEADER] = why
        response.headers["x-should-retry"] = "false"
        data = b""
    response.headers["content-length"] = str(len(data))
    response.stream = http.ByteStream(data)


def capped_hooks(limit: int) -> dict[str, list[Callable[[Any], None]]]:
    """``event_hooks`` for an ``httpx``-style client that read at most ``limit`` bytes of every response
    body (module docstring)."""
    limit = integer(limit, "limit", low=1)

    def ask_identity(request: Any) -> None:
        request.headers["accept-encoding"] = "identity"

    def cap(response: Any) -> None:
        cap_body(response, limit)

    return {"request": [ask_identity], "response": [cap]}

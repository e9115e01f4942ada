"""Reading a file a user names: regular files only, and never more than a stated number of bytes.

:func:`read_bytes` opens the path without blocking (a FIFO with no writer would otherwise wait forever),
refuses anything that is not a regular file once open (a FIFO, a device such as ``/dev/zero`` or
``/dev/full`` that never ends, a socket, a directory), refuses a file larger than ``limit`` bytes, and
reads at most ``limit + 1`` bytes, so a file that grows while it is read is refused too. A symbolic
link is followed (reading through one changes nothing). Every refusal is an
:class:`~ropeproof.machinery._errors.InputError` naming the option and the path.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import format_bytes
from ropeproof.machinery._size_limits import limit

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}
_CHUNK = 1 << 20
JSON_LIMIT = limit("JSON file bytes")
"""The most bytes read from a JSON file a user names (a family, a training record)."""


def _open_regular(path: Path, option: str) -> tuple[int, os.stat_result]:
    """``path`` opened read-only without blocking, and its status: the open descriptor (the caller closes
    it) when it is a regular file, else an :class:`InputError` (the descriptor closed) saying that it does
    not exist, cannot be read or is not a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError(f"{option} {path} does not exist") from None
    except OSError as exc:
        raise InputError(f"{option} {path} cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise InputError(f"{option} {path} cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "a special file")
        raise InputError(f"{option} {path} is {kind}, not a regular file; only regular files are read")
    return fd, st


def read_bytes(path: str | Path, limit: int, option: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (module docstring); ``option``
    names the path in errors."""
    path = Path(path)
    fd, st = _open_regular(path, option)
    try:
        too_big = (
            f"{option} {path} is larger than {format_bytes(limit)}, the most read from it; "
            "it is not a file this command reads"
        )
        if st.st_size > limit:
            raise InputError(too_big)
        os.set_blocking(fd, True)
        parts, total = [], 0
        while total <= limit:
            part = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not part:
                break
            parts.append(part)
            total += len(part)
        if total > limit:  # it grew while it was read
            raise InputError(too_big)
        return b"".join(parts)
    except OSError as exc:
        raise InputError(f"{option} {path} cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_text(path: str | Path, limit: int, option: str) -> str:
    """:func:`read_bytes` decoded as UTF-8 (an :class:`InputError` if it is not)."""
    data = read_bytes(path, limit, option)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{option} {path} is not UTF-8 text (byte {exc.start})") from None


def check_regular_file(path: str | Path, option: str) -> int:
    """The size of ``path`` when it is a regular file (opened without blocking, so a FIFO is refused,
    not waited on), else the same :class:`InputError` as :func:`read_bytes`. For files read as a
    stream, whose size has no limit (a sweep's JSON Lines shards)."""
    fd, st = _open_regular(Path(path), option)
    os.close(fd)
    return int(st.st_size)


def read_json(path: str | Path, option: str, limit: int = JSON_LIMIT) -> Any:
    """The JSON value in the regular file ``path`` (:func:`read_text`, at most ``limit`` bytes); a file
    that is not JSON (truncated, say) or nests too deeply for the parser is an :class:`InputError`
    naming ``option`` and the path."""
    text = read_text(path, limit, option)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{option} {path} is not JSON ({exc.msg} at line {exc.lineno}); truncated?"
        ) from None
    except RecursionError:
        raise InputError(f"{option} {path} nests too deeply to be read as JSON") from None

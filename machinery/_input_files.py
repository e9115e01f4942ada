"""Reading a file a user names: regular files only, and never more than a stated number of bytes.

:func:`read_bytes` opens the path without blocking (a FIFO with no writer would otherwise wait forever),
refuses anything that is not a regular file once open (a FIFO, a device such as ``/dev/zero`` or
``/dev/full`` that never ends, a socket, a directory), refuses a file larger than ``limit`` bytes, and
reads at most ``limit + 1`` bytes, so a file that grows while it is read is refused too. A symbolic
link is followed (reading through one changes nothing). Every refusal is an
:class:`~ropeproof.machinery._errors.InputError` naming the option and the path.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import format_bytes

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}
_CHUNK = 1 << 20


def read_bytes(path: str | Path, limit: int, option: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (module docstring); ``option``
    names the path in errors."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError(f"{option} {path} does not exist") from None
    except OSError as exc:
        raise InputError(f"{option} {path} cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "a special file")
            raise InputError(f"{option} {path} is {kind}, not a regular file; only regular files are read")
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

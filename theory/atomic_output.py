"""Outputs that are complete or absent: every file and directory the toolkit writes goes through here.

Files. :func:`atomic_path` hands out a temporary path beside the target and moves it onto the target
when the block ends without an error (else deletes it); :func:`atomic_open` opens that path as a file
(optionally ``fsync``-ed before the move, for what a user paid for: an LLM reply log); both give the
file the umask's mode (``0666 & ~umask``; ``mkstemp`` would leave it private). With ``replace=False`` the
file is linked into place instead, which fails rather than replace a file that appeared meanwhile.
:func:`check_output_file` is the rule for a file a user names (``sweep --out FILE``): absent, or an
existing regular file only with ``force``; never a symbolic link, a directory, a FIFO, a device node or a
socket. :func:`staged_directory` fills a temporary directory and renames it onto a directory the toolkit
owns (a training checkpoint).

Directories a user names (``--out DIR``):

:func:`atomic_directory` checks the target *before* the command does any work, hands the command a
fresh staging directory next to the target, and moves the staging directory into place only when
the command finishes. If the command fails or is interrupted (Ctrl-C), the staging directory is
removed and the target is left exactly as it was, so a report is never mixed with an older run's
files.

Policy (``check``, ``figures``, ``compile`` and ``export`` all follow it):

- the target may be absent or an empty directory; its parent directories are created;
- a non-empty directory is refused unless ``force=True`` (the CLI's ``--force``), which replaces it
  as a whole (its old contents are deleted, not merged);
- the current working directory, a directory that contains it, the home directory and a filesystem
  root are never replaced, not even with ``--force`` or when empty;
- a symbolic link is refused (replacing it would leave its target without the output), and so are
  an existing file and a place that cannot be written, each with an
  :class:`~ropeproof.theory.errors.OutputError` that names the option and the path.

The swap is two ``os.rename`` calls within one directory: the old directory is renamed aside, the
staging directory renamed to the target, then the old one deleted. A crash between the two renames
(not an exception: those roll back) leaves the old run in ``.NAME.old-*`` beside the target.
A process killed outright (SIGKILL) may leave a ``.NAME.partial-*`` staging directory behind.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ropeproof.theory.errors import OutputError


def _protected(target: Path) -> str | None:
    """Why ``target`` may never be replaced, or ``None``."""
    resolved = target.resolve()
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        return "it is the current directory or contains it"
    if resolved == Path.home().resolve():
        return "it is the home directory"
    if resolved.parent == resolved:
        return "it is a filesystem root"
    return None


def check_output_target(target: Path, force: bool = False, option: str = "--out") -> None:
    """Raise :class:`OutputError` unless ``target`` may receive a new output directory (see the
    module docstring for the policy). Touches nothing on disk."""
    target = Path(target)
    if target.is_symlink():
        # replacing the link would leave its target without the output; writing through it would put
        # the output somewhere the command line does not name
        where = os.readlink(target)
        raise OutputError(
            f"{option}={target} is a symbolic link (to {where}); "
            "pass the directory itself, or remove the link"
        )
    if not target.exists():
        return
    if not target.is_dir():
        raise OutputError(
            f"{option}={target} is an existing file; expected a directory that is absent or empty "
            "(or pass --force to replace a non-empty one)"
        )
    reason = _protected(target)
    if reason is not None:
        raise OutputError(f"{option}={target} cannot be replaced: {reason}; choose a new directory")
    try:
        empty = not any(target.iterdir())
    except OSError as exc:
        raise OutputError(f"{option}={target} cannot be read: {exc.strerror}") from exc
    if not empty and not force:
        raise OutputError(
            f"{option}={target} is not empty; pass --force to replace it, or choose a new directory"
        )


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def atomic_directory(target: str | Path, force: bool = False, option: str = "--out") -> Iterator[Path]:
    """Validate ``target``, yield an empty staging directory, and on success move it to ``target``.

    ``force`` allows replacing a non-empty directory; ``option`` names the setting in error messages.
    Raises :class:`OutputError` before yielding when the target is refused or its parent cannot be
    written. On any exception (``KeyboardInterrupt`` included) the staging directory is deleted and
    ``target`` is untouched.
    """
    check_output_target(Path(target), force, option)
    target = Path(target).absolute()  # fixed now: the command may change the working directory
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.absolute().name}.partial-", dir=parent))
    except OSError as exc:
        raise OutputError(
            f"{option}={target}: cannot create a directory in {parent}: {exc.strerror or exc}"
        ) from exc
    try:
        os.chmod(staging, _default_mode())  # mkdtemp makes it private (0o700)
        yield staging
        check_output_target(target, force, option)  # it may have changed while the command ran
        _swap_into_place(staging, target)
    except BaseException:
        _remove(staging)
        raise


def _swap_into_place(staging: Path, target: Path) -> None:
    """Rename ``staging`` to ``target``, replacing an existing ``target`` (see the module docstring)."""
    if not (target.exists() or target.is_symlink()):
        os.rename(staging, target)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{target.absolute().name}.old-", dir=target.absolute().parent))
    aside.rmdir()  # only its unique name is needed
    os.rename(target, aside)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(aside, target)
        raise
    _remove(aside)


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_path(path: str | Path, *, replace: bool = True, option: str = "--out") -> Iterator[Path]:
    """A temporary path beside ``path``, moved onto ``path`` when the block ends without an error and
    deleted otherwise (module docstring). ``replace=False``: linked into place, raising
    :class:`OutputError` (naming ``option``) if ``path`` exists by then."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix + ".partial", dir=parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, _file_mode())
        if replace:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise OutputError(f"{option} {path} appeared meanwhile; it was not replaced") from None
        except OSError:  # a filesystem without hard links
            if os.path.lexists(path):
                raise OutputError(f"{option} {path} appeared meanwhile; it was not replaced") from None
            os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_open(
    path: str | Path, mode: str = "w", *, fsync: bool = False, replace: bool = True, option: str = "--out"
) -> Iterator[IO[Any]]:
    """:func:`atomic_path` opened as a file (``mode`` ``"w"`` or ``"wb"``; text as UTF-8), flushed and,
    with ``fsync``, synced to disk before it is moved into place."""
    with atomic_path(path, replace=replace, option=option) as tmp:
        encoding = None if "b" in mode else "utf-8"
        with open(tmp, mode, encoding=encoding) as f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())


def write_text_atomic(path: str | Path, text: str, *, fsync: bool = False) -> None:
    """``text`` written to ``path`` through :func:`atomic_open`."""
    with atomic_open(path, fsync=fsync) as f:
        f.write(text)


def check_output_file(path: str | Path, force: bool = False, option: str = "--out") -> None:
    """Raise :class:`OutputError` unless ``path`` may receive a new regular file: absent, or (with
    ``force``) an existing regular file. Symbolic links (broken or not) and special files (FIFOs, device
    nodes, sockets) are never written through or replaced; directories never replaced; the directory
    holding ``path`` must exist and be writable."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot be inspected ({exc.strerror})") from None
    if st is not None:
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            raise OutputError(
                f"{option} {path} is a symbolic link; never written through or replaced "
                "(give the file's own path, or remove the link)"
            )
        if stat.S_ISDIR(mode):
            raise OutputError(f"{option} {path} is a directory; give a file name")
        if not stat.S_ISREG(mode):
            kinds = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFSOCK: "a socket",
                     stat.S_IFBLK: "a block device"}  # fmt: skip
            kind = kinds.get(stat.S_IFMT(mode), "a special file")
            raise OutputError(
                f"{option} {path} is {kind}, not a regular file; only regular files are written"
            )
        if not force:
            raise OutputError(f"{option} {path} exists; pass --force to replace it, or choose another name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"{option} {path}: the directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"{option} {path}: the directory {str(parent)!r} is not writable")


@contextmanager
def staged_directory(path: str | Path) -> Iterator[Path]:
    """An empty directory beside ``path`` to fill; renamed onto ``path`` (replacing a directory there)
    when the block ends without an error, deleted otherwise. For directories the toolkit owns (a
    training checkpoint), not for ``--out`` (see :func:`atomic_directory`)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        tmp.rename(path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)

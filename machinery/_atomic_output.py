"""Outputs that are complete or absent: every file and directory the toolkit writes goes through here.

Files. :func:`atomic_path` hands out a temporary path beside the target and moves it onto the target
when the block ends without an error (else deletes it); :func:`atomic_open` opens that path as a file
(optionally ``fsync``-ed before the move, for what a user paid for: an LLM reply log); both give the
file the umask's mode (``0666 & ~umask``; ``mkstemp`` would leave it private). With ``replace=False`` the
file is linked into place instead, which fails rather than replace a file that appeared meanwhile.
Whatever the caller, a file is only ever moved onto a *regular* file: a symbolic link (broken or not),
a FIFO, a device node, a socket or a directory at the target is refused with an
:class:`~ropeproof.machinery._errors.OutputError`, before the work and again just before the move, and left
as it was (replacing a link would leave its target without the output). :func:`check_output_file` is
the rule for a file a user names (``sweep --out FILE``): that, plus absent or (with ``force``) existing.

Directories: **one swap protocol** (:func:`staged_directory` for directories the toolkit owns, such as
a training checkpoint; :func:`atomic_directory` for one a user names):

1. stage: a fresh directory beside the destination under a unique name (``.NAME.partial-*``), which
   the caller fills;
2. move the old destination, if any, aside to a unique name (``.NAME.old-*``) with one ``rename``;
3. move the staged directory in with one ``rename`` (if that fails, the old one is moved back);
4. only then delete the old one.

Nothing is deleted before its replacement is in place: an error or Ctrl-C while the caller fills the
staging directory deletes the staging directory and leaves the destination exactly as it was; a crash
between steps 2 and 3 (a power cut, not an exception: those roll back) leaves the previous directory
whole in ``.NAME.old-*`` beside the destination. Two writers never share a staging name. Every file
and directory moved in gets the umask's mode (a library that writes its files private, as
``safetensors`` does, is overruled), so an output's files have one mode. While a staging directory or
file exists, SIGTERM (``timeout``, a batch scheduler) is turned into :class:`Terminated`, a
``KeyboardInterrupt``, so it is cleaned up as on Ctrl-C (only where SIGTERM had its default action, in
the main thread); SIGKILL may still leave a ``.NAME.partial-*`` behind.

Directories a user names (``--out DIR``): :func:`atomic_directory` checks the target *before* the
command does any work, hands the command the staging directory, and swaps it in when the command
finishes, so a report is never mixed with an older run's files. Policy (``check``, ``figures``,
``compile``, ``export``, ``train`` all follow it):

- the target may be absent or an empty directory; its parent directories are created;
- a non-empty directory is refused unless ``force=True`` (the CLI's ``--force``), which replaces it
  as a whole (its old contents are deleted, not merged, and only once the new ones are in place);
- the current working directory, a directory that contains it, the home directory and a filesystem
  root are never replaced, not even with ``--force`` or when empty;
- a symbolic link is refused (replacing it would leave its target without the output), and so are
  an existing file and a place that cannot be written, each with an
  :class:`~ropeproof.machinery._errors.OutputError` that names the option and the path.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ropeproof.machinery._errors import OutputError


class Terminated(KeyboardInterrupt):
    """SIGTERM received while an output was being staged (module docstring): unwinds like Ctrl-C, so the
    staging directory or file is deleted and the destination left as it was."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated(f"terminated by signal {signum}")


@contextmanager
def terminate_cleanly() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``) instead of ending
    the process on the spot, so ``finally`` blocks and the staging clean-up run. Only in the main thread
    and only where SIGTERM has its default action (a program's own handler is left alone); the previous
    handler is restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (AttributeError, ValueError):  # pragma: no cover - no SIGTERM on this platform
        yield
        return
    if previous not in (signal.SIG_DFL, _raise_terminated):
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _default_mode() -> int:
    return 0o777 & ~_umask()


def _file_mode() -> int:
    return 0o666 & ~_umask()


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def _check_replaceable_directory(target: Path, option: str) -> None:
    """Raise :class:`OutputError` if something other than a real directory (a link, a file, a special
    file) sits at ``target``; absent is fine."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise OutputError(
            f"{option}={target} is a symbolic link (to {os.readlink(target)}); never replaced, pass the "
            "directory itself, or remove the link"
        )
    if not stat.S_ISDIR(mode):
        raise OutputError(f"{option}={target} is {_kind(mode)}, not a directory; it was left as it was")


def _stage_beside(target: Path, option: str) -> Path:
    """Step 1 of the protocol: a fresh, empty directory beside ``target`` under a unique name (parents
    created), with the umask's mode."""
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=parent))
    except OSError as exc:
        raise OutputError(
            f"{option}={target}: cannot create a directory in {parent}: {exc.strerror or exc}"
        ) from exc
    os.chmod(staging, _default_mode())  # mkdtemp makes it private (0o700)
    return staging


def _follow_umask(root: Path) -> None:
    """Give every directory under ``root`` (itself included) and every regular file the umask's mode."""
    dirs, files = _default_mode(), _file_mode()
    os.chmod(root, dirs)
    for base, subdirs, names in os.walk(root):
        for name in subdirs:
            if not os.path.islink(os.path.join(base, name)):
                os.chmod(os.path.join(base, name), dirs)
        for name in names:
            path = os.path.join(base, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.chmod(path, files)


def _file_inodes(directory: Path) -> dict[str, int]:
    out = {}
    with os.scandir(directory) as entries:
        for e in entries:
            st = e.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                out[e.name] = st.st_ino
    return out


@contextmanager
def new_files_follow_umask(directory: str | Path) -> Iterator[None]:
    """Give the regular files that the block creates directly in ``directory`` (an existing directory;
    a new name, or a name now holding another file) the umask's mode, as ``open`` would, and leave every
    other file as it was: for a library's ``save`` into a directory a caller names (``safetensors``
    creates its files ``0600`` where every other file gets ``0666 & ~umask``), so the new files of one
    output have one mode."""
    directory = Path(directory)
    before = _file_inodes(directory)
    yield
    mode = _file_mode()
    for name, inode in _file_inodes(directory).items():
        if before.get(name) != inode:
            os.chmod(directory / name, mode)


def _swap_into_place(staging: Path, target: Path, option: str = "--out") -> None:
    """Steps 2-4 of the protocol (module docstring): move ``target`` aside, ``staging`` in, then delete
    the old one. Refuses (leaving both) when ``target`` is not a real directory."""
    _follow_umask(staging)
    _check_replaceable_directory(target, option)
    if not os.path.lexists(target):
        os.rename(staging, target)
        return
    # a unique empty directory: rename() replaces an empty directory atomically, so no other writer can
    # take the name between choosing it and moving the old directory there
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rename(target, aside)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(aside, target)
        raise
    _remove(aside)


@contextmanager
def _staged(target: Path, option: str, recheck: Any = None) -> Iterator[Path]:
    """Stage beside ``target``, yield, swap in on success (``recheck()`` first); on any exception delete
    the staging directory and leave ``target`` as it was."""
    with terminate_cleanly():
        staging = _stage_beside(target, option)
        try:
            yield staging
            if recheck is not None:
                recheck()
            _swap_into_place(staging, target, option)
        except BaseException:
            _remove(staging)
            raise


@contextmanager
def atomic_directory(target: str | Path, force: bool = False, option: str = "--out") -> Iterator[Path]:
    """Validate ``target``, yield an empty staging directory, and on success swap it in as ``target``.

    ``force`` allows replacing a non-empty directory; ``option`` names the setting in error messages.
    Raises :class:`OutputError` before yielding when the target is refused or its parent cannot be
    written. On any exception (``KeyboardInterrupt`` and SIGTERM included) the staging directory is
    deleted and ``target`` is untouched.
    """
    check_output_target(Path(target), force, option)
    target = Path(target).absolute()  # fixed now: the command may change the working directory
    with _staged(target, option, lambda: check_output_target(target, force, option)) as staging:
        yield staging  # rechecked before the swap: it may have changed while the command ran


@contextmanager
def staged_directory(path: str | Path, option: str = "path") -> Iterator[Path]:
    """An empty directory beside ``path`` to fill, swapped in as ``path`` (replacing a directory there)
    by the module's one protocol when the block ends without an error, deleted otherwise. For
    directories the toolkit owns (a training checkpoint), so without :func:`atomic_directory`'s checks
    of a user's ``--out``; a symbolic link or a file at ``path`` is still refused, never replaced."""
    path = Path(path).absolute()
    _check_replaceable_directory(path, option)
    with _staged(path, option) as staging:
        yield staging


_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "a special file")


def check_replaceable_file(path: str | Path, option: str = "--out") -> None:
    """Raise :class:`OutputError` unless ``path`` is absent or a regular file: a symbolic link (broken
    or not), a directory, a FIFO, a device node or a socket is never written through or replaced."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot be inspected ({exc.strerror})") from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode):
        raise OutputError(
            f"{option} {path} is a symbolic link; never written through or replaced "
            "(give the file's own path, or remove the link)"
        )
    if stat.S_ISDIR(mode):
        raise OutputError(f"{option} {path} is a directory; give a file name")
    raise OutputError(f"{option} {path} is {_kind(mode)}, not a regular file; only regular files are written")


@contextmanager
def atomic_path(path: str | Path, *, replace: bool = True, option: str = "--out") -> Iterator[Path]:
    """A temporary path beside ``path``, moved onto ``path`` when the block ends without an error and
    deleted otherwise (module docstring). Raises :class:`OutputError` (naming ``option``) when ``path``
    is not absent or a regular file, before yielding and again before the move. ``replace=False``:
    linked into place, raising :class:`OutputError` if ``path`` exists by then."""
    path = Path(path)
    check_replaceable_file(path, option)
    parent = path.parent if str(path.parent) else Path(".")
    with terminate_cleanly():
        try:
            fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix + ".partial", dir=parent)
        except OSError as exc:  # named by the user's path, never by the temporary's
            where = "does not exist" if not parent.is_dir() else f"cannot be written ({exc.strerror or exc})"
            raise OutputError(f"{option} {path}: the directory {str(parent)!r} {where}") from None
        os.close(fd)
        tmp = Path(name)
        try:
            yield tmp
            os.chmod(tmp, _file_mode())
            check_replaceable_file(path, option)  # it may have changed while the caller wrote
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


def write_text_atomic(path: str | Path, text: str, *, fsync: bool = False, option: str = "--out") -> None:
    """``text`` written to ``path`` through :func:`atomic_open` (``option`` names ``path`` in errors)."""
    with atomic_open(path, fsync=fsync, option=option) as f:
        f.write(text)


def check_output_file(path: str | Path, force: bool = False, option: str = "--out") -> None:
    """Raise :class:`OutputError` unless ``path`` may receive a new regular file: absent, or (with
    ``force``) an existing regular file. Symbolic links (broken or not) and special files (FIFOs, device
    nodes, sockets) are never written through or replaced; directories never replaced; the directory
    holding ``path`` must exist and be writable."""
    path = Path(path)
    check_replaceable_file(path, option)
    if os.path.lexists(path) and not force:
        raise OutputError(f"{option} {path} exists; pass --force to replace it, or choose another name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"{option} {path}: the directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"{option} {path}: the directory {str(parent)!r} is not writable")

"""Output directories that are complete or absent: every command that writes goes through here.

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
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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

"""Output directories are complete or absent: the policy of ropeproof.machinery._atomic_output."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from ropeproof.machinery._atomic_output import atomic_directory, check_output_target
from ropeproof.machinery._errors import OutputError


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".partial-" in p.name or ".old-" in p.name)


def test_absent_target_is_created_with_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out"
    with atomic_directory(target) as staging:
        assert staging.parent == target.parent and staging != target and not target.exists()
        (staging / "x.txt").write_text("new")
    assert _tree(target) == {"x.txt": b"new"}
    assert _leftovers(target.parent) == []
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o777 & ~umask  # not mkdtemp's private 0o700


def test_empty_directory_is_replaced_without_force(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    with atomic_directory(target) as staging:
        (staging / "x.txt").write_text("new")
    assert _tree(target) == {"x.txt": b"new"}


def test_non_empty_directory_needs_force_and_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "out"
    (target / "figures").mkdir(parents=True)
    (target / "report.md").write_text("old")
    (target / "figures" / "old.png").write_text("old")
    with (
        pytest.raises(OutputError, match=r"--out=.*out is not empty; pass --force"),
        atomic_directory(target),
    ):
        raise AssertionError("not reached: refused before yielding")
    assert _tree(target) == {"report.md": b"old", "figures/old.png": b"old"}
    with atomic_directory(target, force=True) as staging:
        (staging / "report.md").write_text("new")
    assert _tree(target) == {"report.md": b"new"}  # no old figure next to the new report
    assert _leftovers(tmp_path) == []


def test_existing_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("keep")
    for force in (False, True):
        with pytest.raises(OutputError, match="is an existing file"):
            check_output_target(target, force)
    assert target.read_text() == "keep"


def test_symbolic_link_is_refused_never_replaced(tmp_path: Path) -> None:
    # a link to a directory used to be renamed aside and replaced by a real directory: the link's
    # target never received the report
    real = tmp_path / "real"
    real.mkdir()
    (real / "keep.txt").write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    broken = tmp_path / "broken"
    broken.symlink_to(tmp_path / "nowhere")
    for path in (link, broken):
        for force in (False, True):
            with (
                pytest.raises(OutputError, match=r"is a symbolic link \(to .*\); pass the directory itself"),
                atomic_directory(path, force) as staging,
            ):
                (staging / "report.md").write_text("new")
    assert link.is_symlink() and broken.is_symlink()
    assert _tree(real) == {"keep.txt": b"keep"}
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_failure_leaves_target_untouched(tmp_path: Path, error: type[BaseException]) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "report.md").write_text("old complete report")
    before = _tree(target)
    with pytest.raises(error), atomic_directory(target, force=True) as staging:
        (staging / "report.md").write_text("half")
        raise error()
    assert _tree(target) == before
    assert _leftovers(tmp_path) == []


def test_force_never_replaces_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "mine.txt").write_text("precious")
    monkeypatch.chdir(work / "sub")
    for target in (Path("."), work):
        with pytest.raises(OutputError, match="current directory"):
            check_output_target(target, force=True)
    assert (work / "sub" / "mine.txt").read_text() == "precious"
    (work / "sub" / "mine.txt").unlink()
    with pytest.raises(OutputError, match="current directory"):  # not even when it is empty
        check_output_target(Path("."))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc, which refuses new entries")
def test_unwritable_place_is_refused_before_any_work() -> None:
    nowhere = "/proc/ropeproof-nowhere/out"
    with (
        pytest.raises(OutputError, match=f"--out={nowhere}: cannot create a directory"),
        atomic_directory(nowhere),
    ):
        raise AssertionError("not reached")


def test_option_name_appears_in_messages(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    with pytest.raises(OutputError, match=r"^--model-dir="):
        check_output_target(tmp_path / "x", option="--model-dir")


def test_atomic_files_are_complete_or_absent(tmp_path: Path) -> None:
    from ropeproof.machinery._atomic_output import atomic_open, atomic_path, write_text_atomic

    target = tmp_path / "f.json"
    write_text_atomic(target, "old")
    with pytest.raises(RuntimeError), atomic_open(target) as f:
        f.write("half of the new")
        raise RuntimeError("crash while writing")
    assert target.read_text() == "old" and _leftovers(tmp_path) == [] and len(list(tmp_path.iterdir())) == 1
    with atomic_open(target, fsync=True) as f:
        f.write("new")
    assert target.read_text() == "new"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # not mkstemp's private 0o600
    with atomic_path(tmp_path / "g.bin") as tmp:
        tmp.write_bytes(b"\x00\x01")
    assert (tmp_path / "g.bin").read_bytes() == b"\x00\x01"
    # replace=False links into place and refuses a file that appeared meanwhile
    with (
        pytest.raises(OutputError, match=r"--out .*f.json appeared meanwhile"),
        atomic_open(target, replace=False) as f,
    ):
        f.write("third")
    assert target.read_text() == "new" and len(list(tmp_path.iterdir())) == 2


def test_named_files_follow_the_output_rule(tmp_path: Path) -> None:
    from ropeproof.machinery._atomic_output import check_output_file

    check_output_file(tmp_path / "absent.txt")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(OutputError, match="exists; pass --force"):
        check_output_file(tmp_path / "file.txt")
    check_output_file(tmp_path / "file.txt", force=True)
    (tmp_path / "link").symlink_to(tmp_path / "file.txt")
    os.mkfifo(tmp_path / "fifo")
    for name, message in (
        ("link", "symbolic link"),
        ("fifo", "a FIFO, not a regular file"),
        ("", "a directory"),
    ):
        with pytest.raises(OutputError, match=message):
            check_output_file(tmp_path / name, force=True)
    with pytest.raises(OutputError, match="does not exist"):
        check_output_file(tmp_path / "nowhere" / "x.txt")


def test_staged_directories_replace_whole_or_not_at_all(tmp_path: Path) -> None:
    from ropeproof.machinery._atomic_output import staged_directory

    target = tmp_path / "step-1"
    with staged_directory(target) as tmp:
        (tmp / "a").write_text("1")
    with pytest.raises(KeyboardInterrupt), staged_directory(target) as tmp:
        (tmp / "b").write_text("2")
        raise KeyboardInterrupt
    assert _tree(target) == {"a": b"1"} and sorted(p.name for p in tmp_path.iterdir()) == ["step-1"]
    with staged_directory(target) as tmp:
        (tmp / "b").write_text("2")
    assert _tree(target) == {"b": b"2"}


def test_staged_directory_names_are_unique_per_writer(tmp_path: Path) -> None:
    # the fixed name ``step-1.partial`` used to be shared: a second writer deleted the first one's files
    from ropeproof.machinery._atomic_output import staged_directory

    target = tmp_path / "step-1"
    with staged_directory(target) as first, staged_directory(target) as second:
        assert first != second and first.parent == second.parent == tmp_path
        (first / "a").write_text("first")
        (second / "b").write_text("second")
        assert (first / "a").read_text() == "first"  # the second writer did not delete it
    assert _tree(target) == {"a": b"first"}  # the outer block swapped last
    assert _leftovers(tmp_path) == []


def test_the_old_directory_is_deleted_only_after_the_new_one_is_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ropeproof.machinery._atomic_output as ao

    seen: list[dict[str, bytes]] = []
    real_remove = ao._remove

    def remove(path: Path) -> None:
        seen.append(_tree(target))  # what the destination holds when anything is deleted
        real_remove(path)

    monkeypatch.setattr(ao, "_remove", remove)
    for writer in (ao.staged_directory, lambda p: ao.atomic_directory(p, force=True)):
        target = tmp_path / "out"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        (target / "old.txt").write_text("old")
        seen.clear()
        with writer(target) as staging:
            (staging / "new.txt").write_text("new")
        assert seen == [{"new.txt": b"new"}]  # one deletion (the old one), after the swap
        assert _tree(target) == {"new.txt": b"new"} and _leftovers(tmp_path) == []


_CRASH_BETWEEN_RENAMES = """
import os, sys
from pathlib import Path
import ropeproof.machinery._atomic_output as ao
target = Path(sys.argv[1])
calls = []
real = os.rename
def rename(src, dst):
    calls.append((src, dst))
    if len(calls) == 2:  # the staged directory is about to move in: the power goes out
        os._exit(9)
    real(src, dst)
ao.os.rename = rename
with ao.staged_directory(target) as staging:
    (staging / "new.txt").write_text("new")
"""


def test_a_crash_between_the_renames_keeps_the_previous_directory(tmp_path: Path) -> None:
    import subprocess

    target = tmp_path / "step-000100"
    target.mkdir()
    (target / "model.bin").write_text("previous checkpoint")
    done = subprocess.run([sys.executable, "-c", _CRASH_BETWEEN_RENAMES, str(target)], check=False)
    assert done.returncode == 9
    assert not target.exists()
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(".step-000100.old-")]
    assert len(aside) == 1 and _tree(aside[0]) == {"model.bin": b"previous checkpoint"}


def test_staged_directory_refuses_a_link_or_a_file_in_its_place(tmp_path: Path) -> None:
    from ropeproof.machinery._atomic_output import staged_directory

    real = tmp_path / "real"
    real.mkdir()
    (real / "keep").write_text("keep")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    (tmp_path / "file").write_text("file")
    for name, message in (("link", "symbolic link"), ("file", "a regular file|not a directory")):
        with pytest.raises(OutputError, match=message), staged_directory(tmp_path / name) as staging:
            (staging / "x").write_text("x")
    assert (tmp_path / "link").is_symlink() and _tree(real) == {"keep": b"keep"}
    assert (tmp_path / "file").read_text() == "file" and _leftovers(tmp_path) == []


def test_files_a_save_creates_follow_the_umask_and_no_other(tmp_path: Path) -> None:
    """new_files_follow_umask: a file the block creates private (as safetensors does) gets the umask's
    mode; one it rewrites in place, one it leaves alone and one it replaces by a new file are treated as
    open() would treat them (the first two keep their mode)."""
    import os
    import stat

    from ropeproof.machinery._atomic_output import new_files_follow_umask

    for name in ("kept", "rewritten", "replaced"):
        (tmp_path / name).write_text("old")
        os.chmod(tmp_path / name, 0o600)
    umask = os.umask(0o022)
    try:
        with new_files_follow_umask(tmp_path):
            fd = os.open(tmp_path / "weights", os.O_WRONLY | os.O_CREAT, 0o600)
            os.close(fd)
            (tmp_path / "rewritten").write_text("new")
            (tmp_path / "replaced.tmp").write_text("new")
            os.chmod(tmp_path / "replaced.tmp", 0o600)
            os.replace(tmp_path / "replaced.tmp", tmp_path / "replaced")
            (tmp_path / "sub").mkdir(mode=0o700)
    finally:
        os.umask(umask)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {"kept": 0o600, "rewritten": 0o600, "replaced": 0o644, "weights": 0o644, "sub": 0o700}


def test_moved_in_files_follow_the_umask(tmp_path: Path) -> None:
    # safetensors writes its files 0o600; head.json next to them was 0o644
    from ropeproof.machinery._atomic_output import staged_directory

    umask = os.umask(0)
    os.umask(umask)
    with atomic_directory(tmp_path / "out") as staging:
        (staging / "sub").mkdir(mode=0o700)
        for name in ("weights.safetensors", "sub/x.json"):
            (staging / name).write_text("w")
            os.chmod(staging / name, 0o600)
    with staged_directory(tmp_path / "ckpt") as staging:
        (staging / "model.safetensors").write_text("w")
        os.chmod(staging / "model.safetensors", 0o600)
    for path in (
        tmp_path / "out/weights.safetensors",
        tmp_path / "out/sub/x.json",
        tmp_path / "ckpt/model.safetensors",
    ):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    for path in (tmp_path / "out", tmp_path / "out/sub", tmp_path / "ckpt"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o777 & ~umask


def test_file_writers_never_replace_links_or_special_files(tmp_path: Path) -> None:
    # findings --update-readme LINK used to replace the link by a regular file (its target kept the old text)
    from ropeproof.machinery._atomic_output import write_text_atomic

    real = tmp_path / "README.md"
    real.write_text("old")
    (tmp_path / "link.md").symlink_to(real)
    (tmp_path / "broken.md").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name, message in (
        ("link.md", "symbolic link"),
        ("broken.md", "symbolic link"),
        ("fifo", "a FIFO, not a regular file"),
        ("dir", "a directory"),
    ):
        with pytest.raises(OutputError, match=f"^--update-readme .*{name} .*{message}"):
            write_text_atomic(tmp_path / name, "new", option="--update-readme")
    assert (tmp_path / "link.md").is_symlink() and real.read_text() == "old"
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "broken.md", "dir", "fifo", "link.md"]


def test_a_link_that_appears_while_writing_is_not_replaced(tmp_path: Path) -> None:
    from ropeproof.machinery._atomic_output import atomic_open

    real = tmp_path / "real"
    real.write_text("keep")
    with pytest.raises(OutputError, match="symbolic link"), atomic_open(tmp_path / "out") as f:
        f.write("new")
        (tmp_path / "out").symlink_to(real)
    assert (tmp_path / "out").is_symlink() and real.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "real"]


_SIGTERM_WHILE_STAGING = """
import os, signal, sys, time
from pathlib import Path
from ropeproof.machinery._atomic_output import atomic_directory, atomic_path
kind, target = sys.argv[1], Path(sys.argv[2])
writer = atomic_directory(target, force=True) if kind == "dir" else atomic_path(target)
try:
    with writer as staging:
        if kind == "dir":
            (staging / "big.bin").write_bytes(b"x" * 1000)
        else:
            staging.write_text("half")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
except KeyboardInterrupt as exc:
    print(type(exc).__name__)
    sys.exit(130)
"""


@pytest.mark.parametrize("kind", ["dir", "file"])
def test_sigterm_cleans_staging_as_ctrl_c_does(tmp_path: Path, kind: str) -> None:
    # a timed-out check (SIGTERM) used to leave its 9 MB .ropeproof-report.partial-* behind
    import subprocess

    target = tmp_path / "out"
    if kind == "dir":
        target.mkdir()
        (target / "old.txt").write_text("old")
    else:
        target.write_text("old")
    done = subprocess.run(
        [sys.executable, "-c", _SIGTERM_WHILE_STAGING, kind, str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (130, "Terminated")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (_tree(target) == {"old.txt": b"old"}) if kind == "dir" else (target.read_text() == "old")


def test_terminate_cleanly_leaves_a_programs_own_handler_alone() -> None:
    import signal

    from ropeproof.machinery._atomic_output import terminate_cleanly

    def mine(signum: int, frame: object) -> None:
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with terminate_cleanly():
            assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)
    with terminate_cleanly():
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, mine)
    assert signal.getsignal(signal.SIGTERM) == previous

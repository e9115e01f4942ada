"""Output directories are complete or absent: the policy of ropeproof.theory.atomic_output."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from ropeproof.theory.atomic_output import atomic_directory, check_output_target
from ropeproof.theory.errors import OutputError


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
    from ropeproof.theory.atomic_output import atomic_open, atomic_path, write_text_atomic

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
    from ropeproof.theory.atomic_output import check_output_file

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
    from ropeproof.theory.atomic_output import staged_directory

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

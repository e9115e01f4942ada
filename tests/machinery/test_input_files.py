"""Files a user names are read only when regular, and never past a bound."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._input_files import check_regular_file, read_bytes, read_json, read_text


def test_regular_files_and_links_to_them_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("héllo")
    (tmp_path / "link").symlink_to(tmp_path / "a.txt")
    assert read_text(tmp_path / "a.txt", 100, "--x") == read_text(tmp_path / "link", 100, "--x") == "héllo"
    assert read_bytes(tmp_path / "a.txt", 6, "--x") == "héllo".encode()  # exactly the limit


def test_refusals_name_the_option_and_the_path(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 101)
    (tmp_path / "bin").write_bytes(b"\xff\xfe")
    os.mkfifo(tmp_path / "fifo")  # no writer: opening it for reading used to wait forever
    (tmp_path / "dir").mkdir()
    cases = [
        ("big", r"larger than 100 B, the most read from it"),
        ("bin", "is not UTF-8 text"),
        ("fifo", "is a FIFO, not a regular file"),
        ("dir", "is a directory, not a regular file"),
        ("absent", "does not exist"),
    ]
    for name, message in cases:
        with pytest.raises(InputError, match=f"^--update-readme {tmp_path / name} .*{message}"):
            read_text(tmp_path / name, 100, "--update-readme")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux device nodes")
@pytest.mark.parametrize("device", ["/dev/full", "/dev/zero", "/dev/null"])
def test_endless_devices_are_refused_without_reading(device: str) -> None:
    # `findings REPORT --update-readme /dev/full` read until the OOM killer stopped it at 24 GB
    with pytest.raises(InputError, match=f"{device} is a character device, not a regular file"):
        read_bytes(device, 1 << 30, "--update-readme")


def test_a_file_that_grows_while_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "growing"
    path.write_bytes(b"x" * 10)
    real_read = os.read

    def read(fd: int, n: int) -> bytes:  # another process appends between the size check and the read
        with open(path, "ab") as f:
            f.write(b"y" * 50)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", read)
    with pytest.raises(InputError, match="larger than 20 B"):
        read_bytes(path, 20, "--x")


def test_json_files_and_streamed_files(tmp_path: Path) -> None:
    """read_json: the value, or one line for a truncated file or one nested past the parser;
    check_regular_file: the size of a regular file, the same refusal as read_bytes for anything else."""
    (tmp_path / "ok.json").write_text('{"a": [1, 2]}')
    (tmp_path / "cut.json").write_text('{"a": [1, ')
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    assert read_json(tmp_path / "ok.json", "--x") == {"a": [1, 2]}
    with pytest.raises(InputError, match=r"--x .*cut.json is not JSON .*truncated"):
        read_json(tmp_path / "cut.json", "--x")
    with pytest.raises(InputError, match="nests too deeply"):
        read_json(tmp_path / "deep.json", "--x")
    with pytest.raises(InputError, match="larger than 10 B"):
        read_json(tmp_path / "ok.json", "--x", limit=10)
    assert check_regular_file(tmp_path / "ok.json", "--x") == 13
    os.mkfifo(tmp_path / "fifo")
    for special, kind in (
        (tmp_path / "fifo", "a FIFO"),
        ("/dev/zero", "a character device"),
        (tmp_path, "a dir"),
    ):
        with pytest.raises(InputError, match=f"--x {special} is {kind}"):
            check_regular_file(special, "--x")

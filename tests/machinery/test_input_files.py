"""Files a user names are read only when regular, and never past a bound."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._input_files import read_bytes, read_text


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

"""Every reference points inside the repository: no file cites a theory document that is not shipped,
and every "docs/theory.md section N" names a section that exists."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THEORY = ROOT / "docs" / "theory.md"
FORBIDDEN = [
    re.compile("THEORY" + r"\.md"),  # the private brief's name (split so this file does not match itself)
    re.compile(r"(?<![\w.])" + "shared" + r"/"),  # a folder outside the repository
    re.compile(r"/" + "work" + r"/"),  # an absolute path of one machine
]
CITATION = re.compile(r"docs/theory\.md`{0,2} sections? (\d+)(?:\s*(?:-|and|,)\s*(\d+))?")


def _text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    suffixes = {".py", ".md", ".toml", ".txt", ".cfg", ".json", ".mplstyle", ".yml", ".yaml"}
    return [ROOT / f for f in listed if Path(f).suffix in suffixes and (ROOT / f).is_file()]


def _sections() -> set[int]:
    return {int(m) for m in re.findall(r"^## (\d+)\. ", THEORY.read_text(), flags=re.M)}


def test_sections_are_numbered_one_to_ten() -> None:
    assert sorted(_sections()) == list(range(1, 11))


def test_no_reference_leaves_the_repository() -> None:
    files = _text_files()
    assert THEORY in files and len(files) > 50
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        if path != Path(__file__).resolve()
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if any(p.search(line) for p in FORBIDDEN)
    ]
    assert not offenders, "\n".join(offenders)


def test_every_cited_section_exists() -> None:
    sections = _sections()
    cited: list[tuple[str, int]] = []
    for path in _text_files():
        text = " ".join(path.read_text(errors="replace").split())  # citations may wrap lines
        for m in CITATION.finditer(text):
            first = int(m.group(1))
            last = int(m.group(2)) if m.group(2) else first
            cited += [(str(path.relative_to(ROOT)), k) for k in range(first, last + 1)]
    assert len(cited) >= 30  # the claims, docstrings and captions cite it
    missing = [(f, k) for f, k in cited if k not in sections]
    assert not missing, missing

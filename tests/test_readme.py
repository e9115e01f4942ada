"""Every ```python block of the README runs on its own, in a fresh namespace."""

from __future__ import annotations

import re
from pathlib import Path

from ropeproof import claims

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 5
    try:
        for block in blocks:
            exec(compile(block, str(README), "exec"), {"__name__": "readme_block"})
        example = claims.USER_CLAIMS["my.index-margin-positive"]
        ctx = claims.CheckContext(device=__import__("torch").device("cpu"), dtype=__import__("torch").float64)
        assert claims.run_claim(example, ctx).outcome.verdict == "holds"
    finally:  # the README registers an example claim; keep the registry clean
        if "my.index-margin-positive" in claims.USER_CLAIMS:
            claims.USER_CLAIMS.remove("my.index-margin-positive")


def test_readme_lists_every_sweep_status() -> None:
    from ropeproof.verify.measure.exact.bound_checks import STATUSES

    text = README.read_text()
    missing = [s for s in STATUSES if f"`{s}`" not in text]
    assert not missing, f"README's sweep section does not name the statuses {missing}"


def test_readme_says_what_every_dependency_is_for() -> None:
    """Each requirement of pyproject.toml (the core and every extra) has a row in the README's table of
    dependencies, and the table names no package the project does not require."""
    import tomllib

    project = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    required = list(project["dependencies"])
    required += [r for extra in project["optional-dependencies"].values() for r in extra]
    names = {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in required}
    table = README.read_text().split("## Dependencies, and what each is for", 1)[1].split("\n## ", 1)[0]
    first_cells = [
        row.split("|")[1] for row in table.splitlines() if row.startswith("| ") and "---" not in row
    ]
    listed = {
        re.sub(r"\[.*?\]", "", name).strip().lower()
        for cell in first_cells[1:]  # the header row names the columns
        for name in re.sub(r"\(.*?\)", "", cell).split(",")
    }
    assert names - listed == set(), "required but not in the README's table"
    assert listed - names == set(), "in the README's table but not required"

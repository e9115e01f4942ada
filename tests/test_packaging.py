"""Packaging: the folders install as one namespace, a built wheel works in a fresh virtual
environment, and every module of the package is imported by at least one test."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_package_list_matches_the_folders(package_modules: dict[str, Path]) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {m for m, path in package_modules.items() if path.name == "__init__.py"}
    assert listed == on_disk
    mapping = config["tool"]["setuptools"]["package-dir"]
    # the user's top-level folders, each installed under the one namespace
    assert {folder: package.split(".")[-1] for package, folder in mapping.items()} == {
        "ropeproof": "ropeproof",
        "machinery": "machinery",
        "theory": "theory",
        "constructions": "constructions",
        "verify": "verify",
        "paper_figures": "paper_figures",
    }
    assert all(p == "ropeproof" or p.startswith("ropeproof.") for p in mapping)


def test_every_module_is_imported_by_a_test(package_modules: dict[str, Path]) -> None:
    imported: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported |= {f"{node.module}.{a.name}" for a in node.names}
    modules = {
        m
        for m, path in package_modules.items()
        if path.name not in ("__init__.py", "__main__.py")  # __main__: tests/cli runs python -m ropeproof
    }
    missing = sorted(modules - imported)
    assert not missing, f"modules no test imports: {missing}"


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
@pytest.mark.skipif(sys.platform == "win32", reason="venv layout differs on Windows")
def test_wheel_installs_into_a_fresh_venv(tmp_path: Path) -> None:
    """Build a wheel, install it into a new venv (torch and the other dependencies come from the
    base interpreter's site-packages and, when the tests run in a venv, from that venv's), then import
    it and run a command from outside the checkout."""
    dist = tmp_path / "dist"
    source = tmp_path / "source"  # build from a copy: setuptools writes build/ next to the sources
    skip = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".*cache", "*.pyc")
    shutil.copytree(ROOT, source, ignore=skip)
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run(
        [*pip_wheel, "-w", str(dist), str(source)],
        check=True,
        capture_output=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    (wheel,) = dist.glob("ropeproof-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # the library only: no test, fixture or test server ships
        shipped = archive.namelist()
    assert not [n for n in shipped if n.startswith("tests/") or "/tests/" in n or "chat_server" in n]
    assert {"ropeproof/machinery/_values.py", "ropeproof/verify/sweep_runs/__init__.py"} <= set(shipped)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # dependencies installed in the running venv (python-flint, say) are seen after the new venv's own
    # packages: a .pth line only appends the folder to sys.path (the editable install's own .pth files
    # there are not processed, so `import ropeproof` still finds the wheel)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    running = sysconfig.get_paths()["purelib"]
    (env_dir / "lib" / version / "site-packages" / "running_env.pth").write_text(running + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    probe = "\n".join(
        [
            "import importlib.util, json, ropeproof",
            "from ropeproof.verify.studies.beyond._index_search import best_known_table",
            "from ropeproof.paper_figures._style import STYLE",
            "bare = [m for m in ('theory', 'verify', 'constructions', 'paper_figures')",
            "        if importlib.util.find_spec(m)]",
            "print(json.dumps({'file': ropeproof.__file__, 'bare': bare,",
            "                  'stored': len(best_known_table()), 'style': STYLE.is_file()}))",
        ]
    )
    out = subprocess.run([str(python), "-c", probe], cwd=work, capture_output=True, text=True, check=True)
    info = __import__("json").loads(out.stdout)
    assert Path(info["file"]).resolve().is_relative_to(env_dir.resolve()), info  # the wheel, not the checkout
    assert info["bare"] == []  # nothing named theory/verify/... at top level
    assert info["stored"] == 20 and info["style"]  # package data travelled
    cmd = subprocess.run(
        [str(env_dir / "bin" / "ropeproof"), "derive", "index"], cwd=work, capture_output=True, text=True
    )
    assert cmd.returncode == 0, cmd.stderr
    assert "query integer vs key letter: cos(s_q*theta + theta*u)" in cmd.stdout


def test_the_lazy_api_lists_agree() -> None:
    """ropeproof's public names: _EXPORTS, __all__ (made from it) and the static TYPE_CHECKING imports name
    the same things, each from the layer package that exports it (tests/test_public_api.py: every
    package)."""
    import ropeproof

    tree = ast.parse((ROOT / "ropeproof" / "__init__.py").read_text())
    static: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                static |= {alias.name: imp.module for alias in imp.names}
    assert static == ropeproof._EXPORTS
    assert set(ropeproof.__all__) == {"__version__", *ropeproof._EXPORTS}
    for name in ropeproof.__all__:
        assert getattr(ropeproof, name) is not None


def test_importing_a_lower_layer_loads_no_application() -> None:
    code = (
        "import ropeproof.theory, ropeproof.verify.kernel._rope, sys; print(sorted(m for m in sys.modules "
        "if m.startswith(('ropeproof._cli', 'ropeproof.claims', 'ropeproof.commands', 'ropeproof._report'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.strip() == "[]"

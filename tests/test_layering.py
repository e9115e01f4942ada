"""The house's rules, enforced: imports run theory -> constructions -> verify -> paper_figures -> CLI
and claims, no two files import each other (directly or through a cycle), nothing imports the
folders by their bare names, and the bottom two layers load without torch."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

import pytest

import ropeproof.verify as verify_package
import ropeproof.verify.studies as studies_package

pytestmark = pytest.mark.xdist_group("layering")  # one pytest worker parses the files once for every test

ROOT = Path(__file__).resolve().parents[1]
LAYER_ORDER = [
    "ropeproof.machinery",
    "ropeproof.theory",
    "ropeproof.constructions",
    "ropeproof.verify",
    "ropeproof.paper_figures",
    "ropeproof",
]
"""The installed packages from the bottom layer to the top; their folders come from pyproject's
``package-dir``, the one place the map is written."""
FOLDERS = {
    folder: (package, LAYER_ORDER.index(package))
    for package, folder in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ].items()
}
LAYER_NAMES = ["machinery", "theory", "constructions", "verify", "paper_figures", "CLI and claims"]
VERIFY_FOLDERS = sorted(p.name for p in (ROOT / "verify").iterdir() if (p / "__init__.py").is_file())
"""``verify/``'s folders as the tree has them."""
VERIFY_LAYERS = {name: layer for layer, name in enumerate(verify_package.LAYERS)}
"""The order inside ``verify/``: its folders are its layers, bottom first, as ``verify/__init__.py`` lists
them (``LAYERS``); a module may import only modules of its own folder or lower ones."""
BARE = ("machinery", "theory", "constructions", "verify", "paper_figures")


def layer_of(module: str) -> int | None:
    """The layer of a ``ropeproof...`` module name (``None`` outside the package)."""
    best = None
    for package, layer in FOLDERS.values():
        if (module == package or module.startswith(package + ".")) and (
            best is None or len(package) > len(best[0])
        ):
            best = (package, layer)
    return None if best is None else best[1]


@functools.cache
def _import_statements(path: Path, stamp: tuple[int, int]) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Every import statement of the file, nested ones included, parsed once per version of the file
    (``stamp``: its modification time and size) however many tests walk it."""
    tree = ast.parse(path.read_text(), str(path))
    return tuple(node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))


def imported_names(path: Path, module: str, mods: Mapping[str, Path]) -> list[tuple[str, int]]:
    """``(imported module, line)`` for every import statement in the file, nested ones included.

    ``from A import B`` counts as importing ``A.B`` when that is a module of the package, else ``A``;
    relative imports are resolved against ``module``.
    """
    stat = path.stat()
    is_package = path.name == "__init__.py"
    out = []
    for node in _import_statements(path, (stat.st_mtime_ns, stat.st_size)):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                anchor = parts if is_package else parts[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((sub if sub in mods else base, node.lineno))
    return out


def edges(mods: Mapping[str, Path]) -> dict[str, set[str]]:
    """The import graph between the package's files."""
    return {
        module: {name for name, _ in imported_names(path, module, mods) if name in mods and name != module}
        for module, path in mods.items()
    }


def test_every_import_runs_left_to_right(package_modules: dict[str, Path]) -> None:
    mods = package_modules
    backwards = []
    for module, path in mods.items():
        src = layer_of(module)
        for name, line in imported_names(path, module, mods):
            dst = layer_of(name) if name.startswith("ropeproof") else None
            if dst is not None and src is not None and dst > src:
                where = f"{path.relative_to(ROOT)}:{line}"
                backwards.append(f"{where} ({LAYER_NAMES[src]}) imports {name} ({LAYER_NAMES[dst]})")
    assert not backwards, "imports that run right-to-left:\n" + "\n".join(backwards)


def verify_layer_of(module: str) -> int | None:
    """The layer inside ``verify/`` of a ``ropeproof.verify.X...`` module (``None`` for other modules and
    for ``ropeproof.verify`` itself); ``KeyError`` for a part of ``verify`` that has no layer."""
    parts = module.split(".")
    if parts[:2] != ["ropeproof", "verify"] or len(parts) < 3:
        return None
    return VERIFY_LAYERS[parts[2]]


def verify_backward_edges(mods: Mapping[str, Path], extra: Mapping[str, Path] | None = None) -> list[str]:
    """Imports inside ``verify/`` that run from a lower layer to a higher one, and imports of
    ``verify.testing`` from production code below the command line (nested imports included)."""
    out = []
    for module, path in {**mods, **(extra or {})}.items():
        src = verify_layer_of(module)
        for name, line in imported_names(path, module, mods):
            dst = verify_layer_of(name) if name in mods else None
            where = f"{path}:{line}"
            if src is not None and dst is not None and dst > src:
                out.append(f"{where} ({module.split('.')[2]}) imports {name} (a higher layer)")
            elif (
                dst == VERIFY_LAYERS["testing"]
                and src is None
                and (layer_of(module) or 0) < LAYER_ORDER.index("ropeproof")
            ):
                out.append(f"{where} imports {name}: verify.testing is for tests and the CLI only")
    return out


def test_verify_folders_are_its_layers(package_modules: dict[str, Path]) -> None:
    """Every module of ``verify`` sits in one of the layer folders, and every layer is a folder."""
    assert sorted(VERIFY_LAYERS) == VERIFY_FOLDERS
    loose = sorted(
        m
        for m, path in package_modules.items()
        if path.parent == ROOT / "verify" and path.name != "__init__.py"
    )
    assert not loose, f"modules at verify/'s root, outside every layer folder: {loose}"


def test_verify_layers_run_in_order(package_modules: dict[str, Path]) -> None:
    bad = verify_backward_edges(package_modules)
    assert not bad, "imports inside verify/ that run against its order:\n" + "\n".join(bad)


def test_the_verify_checker_sees_a_planted_edge(tmp_path: Path, package_modules: dict[str, Path]) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    from ropeproof.verify.measure.exact._sweep import sweep_index\n")
    bad = verify_backward_edges(package_modules, {"ropeproof.verify.kernel.planted": planted})
    assert len(bad) == 1 and "(kernel) imports ropeproof.verify.measure.exact._sweep" in bad[0]
    test_tool = tmp_path / "uses_testing.py"
    test_tool.write_text("from ropeproof.verify.testing._strategies import rope_specs\n")
    bad = verify_backward_edges(package_modules, {"ropeproof.paper_figures.uses_testing": test_tool})
    assert len(bad) == 1 and "for tests and the CLI only" in bad[0]
    ok = verify_backward_edges(package_modules, {"ropeproof.commands.uses_testing": test_tool})
    assert ok == []


def test_no_import_cycles_between_files(package_modules: dict[str, Path]) -> None:
    graph = edges(package_modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            connect(v)
    assert not cycles, f"import cycles between files: {cycles}"


@pytest.mark.parametrize(
    "folder",
    ["machinery", "theory", "constructions", "verify", "paper_figures", "ropeproof", "tests", "benchmarks"],
)
def test_nothing_imports_the_bare_folder_names(folder: str, package_modules: dict[str, Path]) -> None:
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for name, line in imported_names(path, "tests.x", package_modules):
            if name.split(".")[0] in BARE:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, "use the installed names (ropeproof.theory, ...):\n" + "\n".join(bad)


def test_the_checker_sees_a_backward_edge(tmp_path: Path, package_modules: dict[str, Path]) -> None:
    # the walker itself must be able to fail: a theory module importing verify is caught
    f = tmp_path / "bad.py"
    f.write_text("def f():\n    from ropeproof.verify.kernel._rope import apply_rope\n")
    names = [n for n, _ in imported_names(f, "ropeproof.theory.bad", package_modules)]
    assert "ropeproof.verify.kernel._rope" in names
    assert layer_of("ropeproof.verify.kernel._rope") > layer_of("ropeproof.theory.bad")
    assert layer_of("ropeproof.claims._thm32") == 5 and layer_of("ropeproof.paper_figures._style") == 4
    assert layer_of("ropeproof.machinery._errors") == 0 < layer_of("ropeproof.theory._bounds")


def test_theory_and_constructions_load_without_torch(package_modules: dict[str, Path]) -> None:
    mods = [m for m in package_modules if layer_of(m) in (0, 1, 2)]
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}:\n"
        "    importlib.import_module(m)\n"
        "print(sorted(k for k in sys.modules if k == 'torch' or k.startswith('torch.'))[:3])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.strip() == "[]", out.stdout


STUDY_ORDER = {name: rank for rank, name in enumerate(studies_package.ORDER)}


def study_backward_edges(mods: Mapping[str, Path], extra: Mapping[str, Path] | None = None) -> list[str]:
    """Imports between ``verify/studies``' folders that run from a lower study to a higher one."""

    def study(module: str) -> str | None:
        parts = module.split(".")
        return parts[3] if parts[:3] == ["ropeproof", "verify", "studies"] and len(parts) > 4 else None

    out = []
    for module, path in {**mods, **(extra or {})}.items():
        src = study(module)
        for name, line in imported_names(path, module, mods):
            dst = study(name) if name in mods else None
            if src is not None and dst is not None and STUDY_ORDER[dst] > STUDY_ORDER[src]:
                out.append(f"{path}:{line} (studies.{src}) imports {name} (studies.{dst}, a higher study)")
    return out


def test_studies_import_in_order(package_modules: dict[str, Path]) -> None:
    assert sorted(STUDY_ORDER) == sorted(
        p.name for p in (ROOT / "verify" / "studies").iterdir() if (p / "__init__.py").is_file()
    )
    bad = study_backward_edges(package_modules)
    assert not bad, "imports between studies against their order:\n" + "\n".join(bad)
    planted = ROOT / "verify" / "studies" / "errata" / "_readout.py"
    caught = study_backward_edges(package_modules, {"ropeproof.verify.studies.beyond._planted": planted})
    assert caught and "(studies.beyond) imports ropeproof.verify.studies.errata." in caught[0]


PROCESS_MODULES = {"os", "signal", "tempfile", "filelock", "shutil", "subprocess"}
WRITING_CALLS = {"write_text", "write_bytes", "savefig", "mkdir", "unlink", "rename", "replace", "rmtree"}


def io_problems(path: Path, delegate: bool = False) -> list[str]:
    """Process and file machinery in a file: imports of :data:`PROCESS_MODULES`, calls of a writing
    method (:data:`WRITING_CALLS`), ``open`` with a writing mode, and (unless ``delegate``: handing a
    write to ``machinery``'s atomic outputs) imports of the atomic outputs."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            bad = [n for n in names if n.split(".")[0] in PROCESS_MODULES]
            bad += [n for n in names if n.endswith("_atomic_output") and not delegate]
            out += [f"{path.name}:{node.lineno} imports {n}" for n in bad]
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in WRITING_CALLS and f.attr != "replace":
                out.append(f"{path.name}:{node.lineno} calls .{f.attr}()")
            if isinstance(f, ast.Name) and f.id == "open" and len(node.args) > 1:
                mode = node.args[1]
                if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                    out.append(f"{path.name}:{node.lineno} opens for writing")
    return out


@pytest.mark.parametrize(("folder", "delegate"), [("theory", True), ("verify/measure", False)])
def test_the_mathematics_and_the_measurements_do_no_process_or_file_work(folder: str, delegate: bool) -> None:
    """``theory/`` is mathematics and ``verify/measure/`` computes rows: neither imports process or file
    machinery (``os``, ``signal``, ``tempfile``, ``filelock``, ...) nor writes a file itself; that lives
    in ``machinery/`` (``Family.save`` in theory hands its JSON to the atomic outputs there) and in
    ``verify/sweep_runs/``, and ``verify/measure/`` hands nothing to the atomic outputs either."""
    bad = [p for path in sorted((ROOT / folder).rglob("*.py")) for p in io_problems(path, delegate)]
    assert not bad, "\n".join(bad)


def test_the_io_scan_sees_writing(tmp_path: Path) -> None:
    f = tmp_path / "writes.py"
    f.write_text("import os\nfrom pathlib import Path\nPath('x').write_text('y')\nopen('z', 'w')\n")
    assert [p.split(" ", 1)[1] for p in io_problems(f)] == [
        "imports os",
        "calls .write_text()",
        "opens for writing",
    ]
    assert io_problems(ROOT / "machinery" / "_atomic_output.py")

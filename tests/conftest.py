"""Shared test set-up: hypothesis profiles, the CUDA marker and the thread policy.

Profiles (select with ``pytest --hypothesis-profile=NAME``):

- ``default``: few examples, derandomized (the same examples every run, so CI is reproducible),
  for the 2-core budget (whole suite under 3 minutes);
- ``explore``: the same size, fresh random examples each run (finds new counterexamples);
- ``thorough``: many more random examples, for a longer local or nightly run.

Tests marked ``slow`` (full-size checks, minutes each) are skipped unless ``-m slow`` selects them or the
``thorough`` profile is chosen.

``deadline=None`` everywhere: first-call latency (sympy, torch kernels, CUDA init) would otherwise
trip hypothesis' per-example deadline.

The suite runs under the toolkit's thread policy (``ropeproof.verify.kernel._threads``: one intra-op
torch thread unless ``ROPEPROOF_THREADS`` says otherwise), like ``ropeproof check``.
"""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, settings

from ropeproof.verify.kernel._threads import thread_policy

# Bytecode: the suite's own processes keep the bytecode they compile (``__pycache__``, git-ignored) even
# where the environment says not to (``PYTHONDONTWRITEBYTECODE``, set on the project's machines): without
# it every pytest worker rewrites and compiles every test module again, and every command-line test's
# fresh interpreter compiles the toolkit's modules again. Set before any test module is imported, and
# in the environment the workers and the commands under test inherit.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = {
    folder: package
    for package, folder in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ].items()
}
"""Repository folder -> installed package name, read from pyproject's ``package-dir`` (the one place the
map is written)."""


@pytest.fixture(scope="session")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    """``ropeproof check --quick --strict`` run once per test run: ``(exit code, output dir)``. The
    suite's costliest fixture, so its tests are ``e2e`` (CI's second pass, ``pytest -m e2e``).

    Under pytest-xdist every worker asks for it; the first computes it under a file lock in the
    directory the workers share (the parent of each worker's base temporary directory) and the others
    read its exit code (the ``xdist_group`` marks alone did not keep the tests on one worker)."""
    from filelock import FileLock

    from ropeproof._cli import main

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    root = tmp_path_factory.getbasetemp().parent if worker else tmp_path_factory.getbasetemp()
    shared = root / "quick-report-shared"
    shared.mkdir(exist_ok=True)
    out, code_file = shared / "report", shared / "exit-code"
    with FileLock(str(shared / "lock")):
        if not code_file.exists():
            # --jobs 1: under pytest-xdist every core already runs a worker, so a second figure process
            # would only compete with them (the two-process path has its own test,
            # tests/ropeproof/test_check_pool.py)
            cache = shared / "cache"  # its own, empty: every value is computed
            argv = ["check", "--quick", "--strict", "--jobs", "1", "--no-progress", "--cache-dir", str(cache)]
            code_file.write_text(str(main([*argv, "--out", str(out)])))
    return int(code_file.read_text()), out


@pytest.fixture(scope="session")
def package_modules() -> dict[str, Path]:
    """Every module of the installed package by name (``ropeproof.verify.kernel._rope``), with its file."""
    out = {}
    for folder, package in PACKAGE_FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


settings.register_profile(
    "default",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "explore",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("default")


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's ``ropeproof check`` runs get a cache of earlier runs' results of their own (empty),
    never the user's: what a test computes is computed, and nothing outside the test is read."""
    monkeypatch.setenv("ROPEPROOF_CACHE_DIR", str(tmp_path_factory.mktemp("result-cache")))


@pytest.fixture(autouse=True)
def _mpmath_precision_kept() -> Iterator[None]:
    """A test leaves mpmath's global precision as it found it (a test that sets ``mpmath.mp.dps`` without
    putting it back changes every later test of its worker): a leak fails the test that made it."""
    import mpmath

    before = mpmath.mp.prec
    yield
    after = mpmath.mp.prec
    mpmath.mp.prec = before
    assert after == before, f"the test left mpmath.mp.prec at {after} (found {before}); use mpmath.workprec"


@pytest.fixture(scope="session", autouse=True)
def _thread_policy() -> Iterator[int]:
    """The toolkit's thread policy for the whole session (the previous setting restored at the end)."""
    with thread_policy() as threads:
        yield threads


def _runs_slow(config: pytest.Config) -> bool:
    """``slow`` tests run when asked for: ``-m`` names them, or ``--hypothesis-profile=thorough``."""
    marks = config.getoption("markexpr", default="") or ""
    return "slow" in marks or config.getoption("hypothesis_profile", default=None) == "thorough"


def _runs_e2e(config: pytest.Config) -> bool:
    """``e2e`` tests (the slowest end-to-end runs, which CI runs as a second pass) run when ``-m`` names
    them."""
    return "e2e" in (config.getoption("markexpr", default="") or "")


def _keep_xdist_groups(items: list[pytest.Item]) -> None:
    """Make ``xdist_group`` marks group again under pytest 9.2: pytest-xdist (3.8) names a grouped item's
    group by appending ``@GROUP`` to ``item._nodeid``, which pytest 9.2 no longer reads (its node ids are
    ``item._id``), so ``--dist loadgroup`` spread every group over the workers. The node id is set from
    the string xdist wrote; with an older pytest the two agree already and nothing changes."""
    for item in items:
        written = getattr(item, "_nodeid", None)
        if isinstance(written, str) and "@" in written and item.nodeid != written and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(written)


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own, which names the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _keep_xdist_groups(items)
    if not _runs_slow(config):
        later = pytest.mark.skip(reason="slow: run with -m slow or --hypothesis-profile=thorough")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(later)
    if not _runs_e2e(config):
        e2e = pytest.mark.skip(reason="end-to-end: run with -m e2e (CI runs them)")
        for item in items:
            if "e2e" in item.keywords:
                item.add_marker(e2e)
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA; none available on this machine")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Collect without the cyclic garbage collector, then freeze what collection left alive
    (:func:`gc.freeze`): importing torch, sympy and transformers creates many long-lived objects
    that every full collection of every test would otherwise traverse again. Garbage that tests make is
    collected as usual."""
    import gc

    gc.disable()
    try:
        return (yield)
    finally:
        gc.freeze()
        gc.enable()

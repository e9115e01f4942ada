"""``ropeproof sweep`` on the exact float64 path starts light (issue 35 item 4, issue 46 item 5): no torch,
no matplotlib, no sympy (the Index rows read the stored identity ``INDEX_TERM_IDENTITY``), no figure or
stated-bound module; a measured dtype, ``--head`` or an identity still to prove imports what it needs when
it runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "torch",
    "matplotlib",
    "sympy",
    "ropeproof.paper_figures",
    "ropeproof.verify.measure.exact._stated_bound",
    "ropeproof.verify.measure.exact._head_sweep",
)
CODE = (
    "import json, sys\n"
    "from ropeproof._cli import main\n"
    "for argv in json.loads(sys.argv[1]):\n"
    "    code = main(argv)\n"
    f"    names = {HEAVY!r}\n"
    "    print(code, ','.join(m for m in names if m in sys.modules) or 'none', file=sys.stderr)\n"
)
EXACT = [
    ["sweep", "index", "--theta", "0.866", "--lengths", "2:300"],
    ["sweep", "index", "--theta", "0.866", "--lengths", "2:300", "--jsonl", "--device", "cpu"],
    ["sweep", "retrieval", "--alphabet-size", "1000", "--theta", "0.866", "--lengths", "2:300", "--json"],
    ["sweep", "certified-index", "--theta", "0.866", "--lengths", "2:300"],
]

pytestmark = pytest.mark.xdist_group("sweep-imports")  # the exact sweeps share one interpreter


def loaded(*argvs: list[str]) -> list[tuple[str, str]]:
    """For each of ``argvs`` run in turn in one fresh interpreter: the exit code of ``ropeproof ARGV``
    and the heavy modules in ``sys.modules`` after it (what it and the runs before it loaded)."""
    out = subprocess.run(
        [sys.executable, "-c", CODE, json.dumps(argvs)], capture_output=True, text=True, cwd="/"
    )
    lines = out.stderr.strip().splitlines()[-len(argvs) :]
    return [(code, names) for code, names in (line.split(" ") for line in lines)]


@pytest.fixture(scope="module")
def exact_runs() -> list[tuple[str, str]]:
    """:func:`loaded` of the exact sweeps, one after another in one interpreter: each must leave the
    heavy modules unloaded, so sharing the interpreter hides nothing (a module one run loaded would
    show at that run and every later one)."""
    return loaded(*EXACT)


@pytest.mark.parametrize("case", range(len(EXACT)), ids=[f"argv{i}" for i in range(len(EXACT))])
def test_exact_sweeps_import_no_torch(case: int, exact_runs: list[tuple[str, str]]) -> None:
    assert exact_runs[case] == ("0", "none"), EXACT[case]


def test_a_measured_dtype_imports_torch() -> None:
    """The check above can see torch: the float32 sweep measures logits with it."""
    ((code, names),) = loaded(
        ["sweep", "index", "--theta", "0.866", "--lengths", "2:50", "--dtype", "float32"]
    )
    assert code == "0" and names.split(",")[0] == "torch"


def test_a_sweep_index_in_a_fresh_interpreter_imports_no_sympy() -> None:
    """The start-up target's own command line, alone in a fresh interpreter (issue 46 item 5)."""
    assert loaded(["sweep", "index", "--theta", "0.866", "--lengths", "2:3"]) == [("0", "none")]


def test_an_identity_still_to_prove_imports_sympy() -> None:
    """The check above can see sympy: retrieval at theta = 0 proves its identity when it runs."""
    ((code, names),) = loaded(
        ["sweep", "retrieval", "--alphabet-size", "8", "--theta", "0", "--lengths", "2:9"]
    )
    assert code == "0" and "sympy" in names.split(",")

"""``ropeproof sweep`` on the exact float64 path starts light (issue 35 item 4): no torch, no matplotlib,
no figure or stated-bound module; a measured dtype or ``--head`` imports what it needs when it runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

CODE = (
    "import sys\n"
    "from ropeproof.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "names = ('torch', 'matplotlib', 'ropeproof.paper_figures',"
    " 'ropeproof.verify.measure.exact.stated_bound', 'ropeproof.verify.measure.exact.head_sweep')\n"
    "print(code, ','.join(m for m in names if m in sys.modules) or 'none', file=sys.stderr)\n"
)


def loaded(argv: list[str]) -> tuple[str, str]:
    """The exit code and the heavy modules in ``sys.modules`` after ``ropeproof ARGV`` in a fresh
    interpreter."""
    out = subprocess.run([sys.executable, "-c", CODE, *argv], capture_output=True, text=True, cwd="/")
    code, names = out.stderr.strip().splitlines()[-1].split(" ")
    return code, names


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "index", "--theta", "0.866", "--lengths", "2:300"],
        ["sweep", "index", "--theta", "0.866", "--lengths", "2:300", "--jsonl", "--device", "cpu"],
        ["sweep", "retrieval", "--alphabet-size", "1000", "--theta", "0.866", "--lengths", "2:300", "--json"],
        ["sweep", "certified-index", "--theta", "0.866", "--lengths", "2:300"],
    ],
)
def test_exact_sweeps_import_no_torch(argv: list[str]) -> None:
    assert loaded(argv) == ("0", "none")


def test_a_measured_dtype_imports_torch() -> None:
    """The check above can see torch: the float32 sweep measures logits with it."""
    code, names = loaded(["sweep", "index", "--theta", "0.866", "--lengths", "2:50", "--dtype", "float32"])
    assert code == "0" and names.split(",")[0] == "torch"

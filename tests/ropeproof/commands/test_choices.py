"""The parsers' literals (``ropeproof.commands._choices``) equal the library values they stand for, and no
subcommand's ``--help`` imports torch, sympy, matplotlib or the claims (issue 46 item 5)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from ropeproof._cli import SUBCOMMANDS
from ropeproof.commands import _choices as choices


def test_construction_choices_equal_the_constructions() -> None:
    from ropeproof.constructions._paper import CONSTRUCTIONS, INDEX_THETA, TASK_LENGTH, TASKS

    assert tuple(sorted(CONSTRUCTIONS)) == choices.CONSTRUCTION_NAMES
    assert (choices.TASKS, choices.INDEX_THETA, choices.TASK_LENGTH) == (TASKS, INDEX_THETA, TASK_LENGTH)
    for parameter, text in choices.CONSTRUCTION_DEFAULTS.items():
        read = []
        for name, build in sorted(CONSTRUCTIONS.items()):
            param = inspect.signature(build).parameters.get(parameter)
            if param is not None and param.default is not inspect.Parameter.empty:
                read.append(f"{name} {param.default}")
        assert text == ", ".join(read), parameter


def test_the_other_choices_equal_their_sources() -> None:
    from ropeproof._report import STORE_DIR
    from ropeproof.constructions._multihop_programs import LOGIT_SCALE
    from ropeproof.paper_figures import figure_names
    from ropeproof.theory._architectures import ARCHITECTURES
    from ropeproof.verify.measure.exact._certified import INDEX_TERMS
    from ropeproof.verify.measure.ps._exact import MAX_EXACT_N
    from ropeproof.verify.sweep_runs._shard_runner import DEFAULT_SHARD_ROOT, EXECUTORS

    assert choices.LOGIT_SCALE == LOGIT_SCALE
    assert tuple(figure_names()) == choices.FIGURE_NAMES
    assert choices.STORE_DIR == STORE_DIR
    assert tuple(ARCHITECTURES) == choices.ARCHITECTURE_NAMES
    assert tuple(INDEX_TERMS) == choices.INDEX_TERMS
    assert choices.MAX_EXACT_N == MAX_EXACT_N
    assert (tuple(EXECUTORS), str(DEFAULT_SHARD_ROOT)) == (choices.EXECUTORS, choices.DEFAULT_SHARD_ROOT)


HEAVY = ("torch", "sympy", "matplotlib", "ropeproof.claims", "ropeproof._report", "transformers")
CODE = (
    "import contextlib, io, json, sys\n"
    "from ropeproof._cli import main\n"
    "for sub in json.loads(sys.argv[1]):\n"
    "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
    "        try:\n"
    "            main([sub, '--help'])\n"
    "        except SystemExit as exc:\n"
    "            assert exc.code == 0, (sub, exc.code)\n"
    "    assert 'usage: ropeproof ' + sub in out.getvalue(), sub\n"
    f"    print(sub, ','.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')\n"
)


def test_no_subcommand_help_imports_torch_sympy_matplotlib_or_the_claims() -> None:
    """Every subcommand's ``--help`` in turn in one fresh interpreter: what any of them loaded would
    show at it and at every later one."""
    out = subprocess.run(
        [sys.executable, "-c", CODE, json.dumps(list(SUBCOMMANDS))], capture_output=True, text=True, cwd="/"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [w for sub in SUBCOMMANDS for w in (sub, "none")]


@pytest.mark.parametrize("sub", ["figures", "compile", "sweep"])
def test_help_still_lists_the_choices(sub: str, capsys) -> None:
    from ropeproof._cli import main

    with pytest.raises(SystemExit):
        main([sub, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    expected = {"figures": "c_accuracy", "compile": "index 0.866, reflexive 0.5", "sweep": "pi2-over-2n2"}
    assert expected[sub] in text

"""Fuzz the command line: random argument vectors for every subcommand end in exit 0, or in exit 2 with
one ``ropeproof CMD: error: ...`` line; never in a traceback or another exit code.

The vectors are generated from the parser itself (each subcommand's positionals and options, their
choices and their argument types), so a new subcommand or option is fuzzed without touching this
file. Values mix good ones with bad ones (NaN, negative sizes, junk text, an existing file as
``--out``, an unwritable place). Sizes are capped by option name so every run takes well under a
second; the claim registry and the figure table are replaced by one trivial claim and one tiny figure
(the real ones take minutes), which still runs the command's own code: output checks, the atomic
directory, the report and figure writers.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ropeproof import claims as registry
from ropeproof import paper_figures
from ropeproof._cli import build_parser, main
from ropeproof.claims._corrections import Correction
from ropeproof.commands import _errata as errata
from ropeproof.commands._arguments import device, device_text, finite_float, nonnegative_float, positive_float
from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.paper_figures._style import FigureResult, subplots
from ropeproof.verify.studies.errata._correction_data import CorrectionData, Series
from ropeproof.verify.sweep_runs import _shard_runner as shard_runner

SIZE_CAPS = {
    "n_inputs": 6,
    "length": 12,
    "exclusion_samples": 20,
    "head_dim": 16,
    "d_model": 8,
    "letters": 12,
    "alphabet": 4,
    "max_int": 12,
    "max_positions": 64,
    "max_length": 40,
    "width": 12,
    "rotary_dim": 16,
    "block_size": 4,
    "seed": 3,
    "steps": 3,
    "eval_prompts": 8,
    "score_prompts": 2,
    "jobs": 1,
}
"""Largest integer drawn per option (keeps each run fast); other integer options draw up to 8."""
JUNK = ["", "x", "-1", "0", "nan", "1e400", "--", "1:2:3:4"]
ALWAYS_GIVEN = {
    "lengths",
    "n_inputs",
    "exclusion_samples",
    "steps",
    "eval_prompts",
    "score_prompts",
    "jobs",
    "max_length",
}
"""Options whose defaults are too big for a fuzz run (``sweep``'s default lengths 2:100 take minutes
for a retrieval sweep whose margin is negative; ``train``'s default run takes minutes; ``export-model``'s
default ``--max-length 10000`` compiles ten thousand integer tokens; ``check --jobs 2``
draws the real figures in a second process, where the patched figure registry does not reach): always
drawn, so their values stay capped."""
SKIPPED = {"help", "debug", "version"}
"""Options not fuzzed: --help only prints, --debug asks for tracebacks on purpose."""


def subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _mostly(good: st.SearchStrategy[str], bad: st.SearchStrategy[str], clean: bool) -> st.SearchStrategy[str]:
    """``good`` only when ``clean``; otherwise ``good`` seven times in eight, else ``bad``. The
    simplest examples, which hypothesis tries first, are good ones."""
    return good if clean else st.integers(0, 7).flatmap(lambda i: bad if i == 7 else good)


def _integers(action: argparse.Action, clean: bool) -> st.SearchStrategy[str]:
    low, high, even = getattr(action.type, "accepted", (0, None, False))
    cap = max(low, SIZE_CAPS.get(action.dest, 8))
    good = st.integers(low, cap if high is None else min(cap, high))
    if even:
        good = good.map(lambda v: v + v % 2)
    return _mostly(good.map(str), st.sampled_from([str(low - 1), "-3", "x", "2.5", "1e3"]), clean)


def _floats(action: argparse.Action, clean: bool) -> st.SearchStrategy[str]:
    if action.type in (positive_float, nonnegative_float):
        good = st.floats(1e-3 if action.type is positive_float else 0.0, 4).map(repr)
    else:
        good = st.one_of(st.floats(-4, 4).map(repr), st.sampled_from(["1e17", "3.14159", "1e-300"]))
    return _mostly(good, st.sampled_from(["nan", "inf", "-inf", "-2.5", "x", ""]), clean)


def _lengths(clean: bool) -> st.SearchStrategy[str]:
    # n <= 16: a retrieval sweep whose margin is negative enumerates gap_inf per length (~11 s to n = 40)
    good = st.tuples(st.integers(2, 12), st.integers(0, 4), st.integers(1, 4)).map(
        lambda t: f"{t[0]}:{t[0] + t[1]}" + (f":{t[2]}" if t[2] > 1 else "")
    )
    bad = st.sampled_from(["abc", "2:", ":5", "2:5:x", "5:2", "1:5", "2:5:0", "-1:3"])
    return _mostly(good, bad, clean)


def _paths(action: argparse.Action, tmp: Path, clean: bool) -> st.SearchStrategy[str]:
    """``--out``: a new directory (good) or an existing file, a non-empty directory, an unwritable place.
    Other paths (an input directory such as ``--head DIR``): a small compiled head (good), or the same
    bad places."""
    (tmp / "a-file").write_text("x")
    (tmp / "full").mkdir(exist_ok=True)
    (tmp / "full" / "old.txt").write_text("old")
    bad = [str(tmp / "a-file"), str(tmp / "full"), "/proc/ropeproof-fuzz/out", str(tmp / "a-file" / "sub")]
    if action.dest == "out":
        return _mostly(st.just(str(tmp / "new" / "out")), st.sampled_from(bad), clean)
    head = tmp.parent / "head"  # written once per test by test_random_argument_vectors
    return _mostly(st.just(str(head)), st.sampled_from([*bad, str(tmp / "missing")]), clean)


def values(action: argparse.Action, tmp: Path, clean: bool) -> st.SearchStrategy[list[str]]:
    """Tokens that follow ``action``'s option string (or stand for a positional); only accepted values
    when ``clean``."""
    if action.nargs == 0:
        return st.just([])
    if action.choices:
        one = _mostly(st.sampled_from(sorted(action.choices)), st.sampled_from(["nosuch", ""]), clean)
    elif action.type is Path:
        one = _paths(action, tmp, clean)
    elif action.type in (finite_float, positive_float, nonnegative_float, float):
        one = _floats(action, clean)
    elif action.type in (device, device_text):
        one = _mostly(st.sampled_from(["auto", "cpu"]), st.sampled_from(["cuda:7", "nosuch", ""]), clean)
    elif action.dest == "lengths":
        one = _lengths(clean)
    elif action.type is int or hasattr(action.type, "accepted"):
        one = _integers(action, clean)
    else:
        one = st.sampled_from(JUNK)
    if action.nargs in ("+", "*"):
        return st.lists(one, min_size=1, max_size=2)
    return one.map(lambda v: [v])


@st.composite
def argument_vectors(draw: st.DrawFn, name: str, parser: argparse.ArgumentParser, tmp: Path) -> list[str]:
    """A command line for subcommand ``name``: half the time every value is one the parser accepts
    (such vectors reach the command's own checks), else bad values and missing positionals mix in."""
    clean = draw(st.booleans())
    argv = [name]
    for action in parser._actions:
        if action.dest in SKIPPED or action.dest == argparse.SUPPRESS:
            continue
        if not action.option_strings:
            missing = not clean and draw(st.integers(0, 9)) == 9
            argv += [] if missing else draw(values(action, tmp, clean))
        elif action.required or action.dest in ALWAYS_GIVEN or draw(st.integers(0, 2)) == 2:  # one in three
            argv += [action.option_strings[-1], *draw(values(action, tmp, clean))]
    return argv


def _trivial_claim(ctx: registry.CheckContext) -> registry.Outcome:
    return registry.Outcome.judge(True, {"x": 1.0}, "x")


def _tiny_figure(quick: bool = False, store: object = None) -> FigureResult:
    fig, ax = subplots(figsize=(1, 1))
    ax.plot([0, 1], [0, 1])
    return FigureResult("tiny", fig, [{"x": 0, "y": 0}, {"x": 1, "y": 1}], "A tiny figure.")


def _trivial_correction() -> Correction:
    """A correction that computes a two-row table (the real ones take seconds each)."""

    def compute(ctx: registry.CheckContext) -> CorrectionData:
        n = np.array([2, 3])
        series = Series("tiny", n, np.zeros(2), np.zeros(2), np.zeros(2), np.ones(2))
        return CorrectionData(
            "q", "reported", "corrected", "bound", [series], {"n": 3}, [], basis="numerical"
        )

    return Correction(
        "fuzz.correction", ("fuzz.trivial",), "any", "It holds.", "x", "Same.", "conjectured",
        "n = 2..3", "none", "none", compute,
    )  # fmt: skip


@contextlib.contextmanager
def _no_cluster(*args: object) -> Iterator[None]:
    """Stands in for :func:`ropeproof.verify.sweep_runs._shard_runner._client`: ``--executor dask`` vectors
    get as far as starting a cluster, then end in a one-line error
    (tests/verify/sweep_runs/test_shard_runner.py
    runs real clusters)."""
    raise InputError("no Dask cluster in the fuzz test")
    yield


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", list(subparsers()))
def test_random_argument_vectors(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    claim = registry.Claim("fuzz.trivial", "A claim that holds.", "test", {}, _trivial_claim)
    monkeypatch.setattr(registry, "registered_claims", lambda: [claim])
    monkeypatch.setattr(errata, "registered_corrections", lambda: [_trivial_correction()])
    monkeypatch.setattr(paper_figures, "figures", lambda: {"tiny": _tiny_figure})
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)  # llm-eval: no key, so no request can leave the machine
    monkeypatch.setattr(shard_runner, "_client", _no_cluster)  # a Dask cluster takes seconds to start
    parser = subparsers()[name]
    tmp_root = Path(tempfile.mkdtemp(prefix="ropeproof-fuzz-"))
    compile_construction(index_construction(letters=2, max_int=3)).save(tmp_root / "head")
    examples = max(6, settings.default.max_examples // 3)  # 8 per subcommand in the default profile

    @settings(max_examples=examples, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def one_run(data: st.DataObject) -> None:
        tmp = Path(tempfile.mkdtemp(dir=tmp_root))
        try:
            argv = data.draw(argument_vectors(name, parser, tmp), label="argv")
            with contextlib.chdir(tmp):  # default outputs (ropeproof-report/) land in the temporary directory
                code, out, err = run_main(argv)
            assert "Traceback" not in err, (argv, err)
            assert code in (0, 2), (argv, code, err)
            if code == 2:
                errors = [line for line in err.splitlines() if ": error: " in line]
                assert len(errors) == 1 and err.rstrip("\n").endswith(errors[0]), (argv, err)
                assert errors[0].startswith(f"ropeproof {name}: error: "), (argv, err)
            elif "--json" in argv and "--help" not in argv:
                json.loads(out)  # the promised single JSON object
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    try:
        one_run()
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)

"""Bad inputs end in one line, ``ropeproof CMD: error: ...``, with exit code 2; never a traceback.

Each case of issue 12 is pinned here (see also test_cli_fuzz.py for random argument vectors).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ropeproof._cli import EXIT_INTERNAL, EXIT_INTERRUPTED, main
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import ENV_VAR


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: --help, --version and usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, command: str, fragment: str) -> None:
    prog = command if command.startswith("ropeproof") else f"ropeproof {command}"
    assert code == 2, err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"{prog}: error: "), err
    assert fragment in err, err
    assert "Traceback" not in err


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory")
    return path


CASES = [
    (
        ["sweep", "index", "--theta", "nan"],
        "argument --theta: 'nan' must be finite; accepted: a finite real number",
    ),
    (
        ["sweep", "index", "--theta", "inf"],
        "argument --theta: 'inf' must be finite; accepted: a finite real number",
    ),
    (["sweep", "index", "--theta", "0.8", "--lengths", "5:2"], "need 2 <= A <= B"),
    (["sweep", "index", "--theta", "0.8", "--lengths", "1:5"], "need 2 <= A <= B"),
    (["sweep", "index", "--theta", "0.8", "--lengths", "2:5:0"], "STEP >= 1"),
    (["sweep", "index", "--theta", "0.8", "--lengths", "abc"], "must look like A:B or A:B:STEP"),
    (["sweep", "index", "--theta", "0.8", "--lengths", "a:b"], "must be integers"),
    (
        ["sweep", "retrieval", "--theta", "0.001", "--alphabet", "0"],
        "argument --alphabet-size/--alphabet: '0' is out of range",
    ),
    (["sweep", "index", "--theta", "0.8", "--device", "nosuch"], "device='nosuch' is not a device"),
    (["sweep", "index", "--theta", "0.8", "--dtype", "int8"], "argument --dtype: invalid choice: 'int8'"),
    (["check", "--device", "nosuch"], "accepted: 'auto', 'cpu', 'cuda', 'cuda:N'"),
    (["check", "--dtype", "float8"], "argument --dtype: invalid choice: 'float8'"),
    (["check", "--json"], "--json applies to --list only"),
    (
        ["ps-score", "random", "--head-dim", "7"],
        "argument --head-dim: '7' is out of range; accepted: an even",
    ),
    (
        ["ps-score", "index", "--length", "40"],
        "--length=40 is out of range; accepted: an integer >= 3 and <= 17 (the index head's task length)",
    ),
    (
        ["ps-score", "random", "--tau", "0"],
        "argument --tau: '0' is out of range; accepted: a finite real number > 0",
    ),
    (["figures", "--only", "nosuch"], "argument --only: invalid choice: 'nosuch'"),
    (["compile", "index", "--letters", "0", "--out", "x"], "argument --letters: '0' is out of range"),
    (
        ["compile", "index", "--max-int", "0", "--out", "x"],
        "max_int=0 is out of range; accepted: an integer >= 1",
    ),
    (["export", "gptj", "index", "--logit-scale", "-1", "--out", "x"], "argument --logit-scale"),
    (["derive", "nosuch"], "argument construction: invalid choice: 'nosuch'"),
    (["nosuch"], "invalid choice: 'nosuch'"),
    (["llm-eval", "--model", "m", "--out", "x"], "--provider is required"),
    (["llm-eval", "--provider", "hf", "--model", "m", "--lengths", "1,8", "--out", "x"], "'1,8' is out of"),
    (["llm-eval", "--provider", "hf", "--model", "m", "--lengths", "8:4", "--out", "x"], "not a list of"),
    (["llm-eval", "--provider", "hf", "--model", "nosuch-dir", "--out", "x"], "is not a model directory"),
    (["llm-eval", "--provider", "python", "--model", "m", "--out", "x"], "must look like module:function"),
    (
        ["llm-eval", "--provider", "openai", "--model", "m", "--base-url", "ftp://h", "--out", "x"],
        "base_url='ftp://h' must be an http:// or https:// URL",
    ),
    (["llm-eval", "--provider", "openai", "--model", "m", "--extra-body", "[1]", "--out", "x"], "a JSON"),
    (["llm-eval", "plot", "--out", "x"], "the following arguments are required: DIR"),
    # special files are refused, never read (a device never ends, a FIFO without a writer blocks)
    (["sweep", "merge", "/dev/zero"], "merge /dev/zero is a character device, not a regular file"),
    (["sweep", "merge", "/dev/null", "/dev/zero"], "merge /dev/null is a character device"),
    (["check", "--claims", "/dev/zero", "--out", "r"], "--claims /dev/zero is a character device, not a"),
    (["check", "--claims", "/", "--out", "r"], "--claims / is a directory, not a regular file"),
    (["cache", "info", "--cache-dir", "/dev/null"], "/dev/null exists and is not a directory"),
    (
        ["sweep", "--head", "h", "--bound", "-1+2"],
        "expected one argument; a value starting with '-' goes after '=': --bound=VALUE",
    ),
    (  # the error names the user's path, never the temporary beside it
        ["sweep", "index", "--theta", "0.8", "--lengths", "2:5", "--out", "/proc/ropeproof_out"],
        "--out /proc/ropeproof_out: the directory '/proc' cannot be written",
    ),
    # sizes past the one table of limits: refused with the estimate and the limit, before any work
    (["compile", "index", "--max-int", "100000000", "--out", "h"], "needs about 1e+08 tokens; the limit is"),
    (["compile", "retrieval", "--alphabet-size", "100000", "--out", "h"], "about 1e+10 tokens; the limit"),
    (["ps-score", "random", "--length", "100000"], "needs about 5e+16 entries; the limit is 1099511627776"),
    (["export-model", "gptj", "number", "--layers", "100000", "--out", "m"], "the limit is 1024 layers"),
    (
        [
            "sweep",
            "certified-index",
            "--theta",
            "0.8",
            "--lengths",
            "2:9",
            "--executor",
            "dask",
            "--workers",
            "100000",
        ],
        "--workers 100000: this machine has",
    ),
]


@pytest.mark.parametrize(("argv", "fragment"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may be written; if something were, it lands here
    code, out, err = run_cli(argv, capsys)
    assert out == ""
    prog = "ropeproof" if argv[0] == "nosuch" else f"ropeproof {argv[0]}"
    assert_one_line_error(code, err, prog, fragment)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--quick", "--no-progress", "--out", "{file}"],
        ["figures", "--only", "e_geometry", "--out", "{file}"],
        ["compile", "index", "--out", "{file}"],
        ["export", "gptj", "index", "--out", "{file}"],
    ],
    ids=["check", "figures", "compile", "export"],
)
def test_out_is_an_existing_file(argv: list[str], a_file: Path, capsys, monkeypatch) -> None:
    """Refused before any claim, figure or compilation runs (the patched functions would fail)."""
    from ropeproof import claims as registry  # check reads it when a run starts

    monkeypatch.setattr(
        registry, "run_claims", lambda *a, **k: pytest.fail("claims ran before --out was checked")
    )
    argv = [a.replace("{file}", str(a_file)) for a in argv]
    code, _, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, argv[0], f"--out={a_file} is an existing file")
    assert a_file.read_text() == "not a directory"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc, which refuses new entries")
@pytest.mark.parametrize(
    "command", [["check", "--quick"], ["figures"], ["compile", "index"], ["export", "llama", "index"]]
)
def test_out_in_an_unwritable_place(command: list[str], capsys, monkeypatch) -> None:
    from ropeproof import claims as registry  # check reads it when a run starts

    monkeypatch.setattr(
        registry, "run_claims", lambda *a, **k: pytest.fail("claims ran before --out was checked")
    )
    code, _, err = run_cli([*command, "--out", "/proc/ropeproof-nowhere/out"], capsys)
    assert_one_line_error(code, err, command[0], "cannot create a directory in /proc/ropeproof-nowhere")


def test_sizes_that_cannot_fit_are_refused(capsys, monkeypatch, tmp_path: Path) -> None:
    """``--alphabet 1000`` asked for 7.3 TiB and ``compile --letters 100000`` for 74.5 GiB. The exact
    float64 retrieval sweep no longer compiles the head (it runs:
    tests/verify/measure/exact/test_sweep_memory.py);
    measured logits in float32 still need it."""
    monkeypatch.setenv(ENV_VAR, "64GiB")
    argv = ["sweep", "retrieval", "--theta", "0.001", "--alphabet", "1000", "--lengths", "2:5"]
    code, _, err = run_cli([*argv, "--dtype", "float32"], capsys)
    assert_one_line_error(
        code, err, "sweep", "TiB, more than the memory limit of 64 GiB (set ROPEPROOF_MEMORY_LIMIT"
    )
    out = tmp_path / "h"
    code, _, err = run_cli(["compile", "index", "--letters", "100000", "--out", str(out)], capsys)
    assert_one_line_error(code, err, "compile", "needs about 100016 tokens; the limit is 32768 tokens")
    assert not out.exists() and list(tmp_path.iterdir()) == []  # and no staging directory is left
    monkeypatch.setenv(ENV_VAR, "16GiB")
    code, _, err = run_cli(["compile", "index", "--letters", "30000", "--out", str(out)], capsys)
    assert_one_line_error(code, err, "compile", "needs about 40.3 GiB, more than the memory limit of 16 GiB")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_compile_refuses_an_existing_head_unless_forced(tmp_path: Path, capsys) -> None:
    out = tmp_path / "h"
    args = ["compile", "index", "--letters", "3", "--max-int", "4", "--out", str(out)]
    assert run_cli(args, capsys)[0] == 0
    weights = (out / "weights.safetensors").read_bytes()
    code, _, err = run_cli(["compile", "index", "--letters", "2", "--out", str(out)], capsys)
    assert_one_line_error(code, err, "compile", "is not empty; pass --force")
    assert (out / "weights.safetensors").read_bytes() == weights
    code, out_text, _ = run_cli([*args, "--force", "--json"], capsys)
    assert code == 0 and json.loads(out_text)["vocab_size"] == 7


def test_ctrl_c_in_the_figure_phase_keeps_the_old_report(tmp_path: Path, capsys, monkeypatch) -> None:
    """The issue's case: Ctrl-C while figures were drawn left new and old figures mixed next to an old,
    complete-looking report.md. Now the old run stays exactly as it was."""
    from ropeproof import _check_pool as check_pool
    from ropeproof import claims as registry

    trivial = registry.Claim(
        "test.trivial",
        "A claim that holds.",
        "test",
        {},
        lambda ctx: registry.Outcome.judge(True, {"x": 1.0}, "x"),
    )
    monkeypatch.setattr(registry, "registered_claims", lambda: [trivial])
    out = tmp_path / "rep"

    def draw_one_then(stop: BaseException):
        def draw_figures(names, out_dir: Path, store, quick: bool, formats, seconds=None):
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "fig_a.png").write_bytes(b"png of this run")
            if stop is not None:
                raise stop
            return {"a": [out_dir / "fig_a.png"]}, {}

        return draw_figures

    monkeypatch.setattr(check_pool, "draw_figures", draw_one_then(None))
    # --jobs 1: the figures in this process, where the patched draw_figures is
    assert run_cli(["check", "--no-progress", "--jobs", "1", "--out", str(out)], capsys)[0] == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert set(map(str, before)) == {"report.md", "report.json", "figures/fig_a.png"}
    (out / "figures" / "fig_a.png").write_bytes(b"png of the old run")
    before[Path("figures/fig_a.png")] = b"png of the old run"

    monkeypatch.setattr(check_pool, "draw_figures", draw_one_then(KeyboardInterrupt()))
    code, _, err = run_cli(["check", "--no-progress", "--jobs", "1", "--out", str(out), "--force"], capsys)
    assert (
        code == EXIT_INTERRUPTED and err == "ropeproof check: interrupted; no output directory was changed\n"
    )
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # no staging directory left behind


def test_debug_shows_the_traceback(capsys) -> None:
    with pytest.raises(InputError, match="--length=40"):
        main(["ps-score", "index", "--length", "40", "--debug"])
    with pytest.raises(InputError, match="--length=40"):
        main(["--debug", "ps-score", "index", "--length", "40"])


def test_an_internal_error_is_one_line_with_exit_3(capsys, monkeypatch) -> None:
    from ropeproof.commands import _derive as derive

    def broken(construction: str, latex: bool = False) -> dict:
        raise TypeError("a bug\nover two lines")

    monkeypatch.setattr(derive, "derivation", broken)
    code, _, err = run_cli(["derive", "index"], capsys)
    assert code == EXIT_INTERNAL
    assert err == (
        "ropeproof derive: internal error: TypeError: a bug over two lines "
        "(a bug; rerun with --debug for the traceback and please report it)\n"
    )


@pytest.mark.e2e  # a whole command run from outside: CI's second pass (-m e2e)
def test_list_into_a_closed_pipe_ends_quietly() -> None:
    """``ropeproof check --list | head -1``: no BrokenPipeError traceback, exit 141 (128 + SIGPIPE).

    The reader closes the pipe before the child has even imported ropeproof, so the child's first
    write is the one that fails (reading a line first, like head, could let a listing smaller than
    the pipe buffer through without any error)."""
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-m', 'ropeproof', 'check', '--list'],"
        " stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
        "p.stdout.close()\n"
        "err = p.stderr.read().decode(); rc = p.wait()\n"
        "print(rc); print(repr(err))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    rc, err = res.stdout.splitlines()
    assert (rc, err) == ("141", "''")


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ('{"hidden_size": 8}', "has model_type=None; accepted: a checkpoint of one of ['gptj', 'llama']"),
        ("[1, 2]", "has model_type=None"),
        ('{"model_type": "bert"}', "has model_type='bert'"),
        ("not json", "is not a JSON file"),
        ('{"model_type": "gptj"}', "transformers cannot load"),
    ],
)
def test_import_of_a_bad_checkpoint_is_one_line(
    config: str, fragment: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A config.json without model_type used to be an internal error (exit 3)."""
    pytest.importorskip("transformers")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text(config)
    argv = [
        "import",
        "hf",
        str(tmp_path / "model"),
        "--layer",
        "0",
        "--head",
        "0",
        "--out",
        str(tmp_path / "o"),
    ]
    code, _, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, "ropeproof import", fragment)
    assert not (tmp_path / "o").exists()

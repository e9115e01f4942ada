"""The derive, compile, sweep and figures subcommands, run in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropeproof._cli import main
from ropeproof.commands import _compile as compile_command
from ropeproof.commands import _derive as derive
from ropeproof.commands import _export as export
from ropeproof.commands import _figures as figures
from ropeproof.commands import _ps_score as ps_score
from ropeproof.commands import _sweep as sweep
from ropeproof.constructions._head import load_head


def test_every_command_module_registers_itself() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    for module in (compile_command, derive, figures, sweep, ps_score, export):
        module.register(sub)
    assert set(sub.choices) == {"compile", "derive", "figures", "sweep", "ps-score", "export"}


def test_derive_prints_the_closed_forms(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["derive", "retrieval"]) == 0
    out = capsys.readouterr().out
    assert "1 - cos(omega - n theta)" in out or "omega" in out
    assert "query pair_ll vs key pair_ll" in out


def test_compile_writes_a_loadable_head(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "h"
    assert main(["compile", "index", "--letters", "3", "--max-int", "4", "--out", str(out)]) == 0
    head = load_head(out)
    assert head.tokens == ("A", "B", "C", "1", "2", "3", "4")
    assert "wrote index (7 tokens" in capsys.readouterr().out


def test_sweep_json_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "index", "--theta", "0.866", "--lengths", "2:5", "--json", "--device", "cpu"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["n"] for r in doc["rows"]] == [2, 3, 4, 5]
    # margin_inf of T_Index is 1 - cos(theta) while n - 1 <= pi/theta (the adjacent key is closest)
    assert doc["rows"][0]["margin_inf"] == pytest.approx(1 - __import__("math").cos(0.866), rel=1e-14)


def test_figures_only_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["figures", "--out", str(tmp_path), "--only", "e_geometry"]) == 0
    assert (tmp_path / "e_geometry.png").stat().st_size > 0
    assert "1 figures in" in capsys.readouterr().out


def test_sweep_low_precision_table_shows_the_measured_values(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 12: the bfloat16 table printed float64 values under a "dtype bfloat16" header."""
    argv = ["sweep", "index", "--theta", "0.866", "--lengths", "8:9", "--dtype", "bfloat16"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "exact float64 extremes; measured_* from logits in bfloat16" in lines[0]
    assert "meas_margin" in lines[1]
    cells = lines[2].split()
    exact, measured = float(cells[3]), float(cells[10])
    assert exact == pytest.approx(1 - __import__("math").cos(7 * 0.866), rel=1e-5)  # printed with %13.6g
    assert measured != exact and abs(measured - exact) < 4e-3  # bfloat16 has 8 bits: a few 1e-3 near 1


def test_sweep_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["sweep", "index", "--theta", "nan"],
        ["sweep", "index", "--theta", "0.5", "--lengths", "1:10"],
        ["sweep", "index", "--theta", "0.5", "--shard", "5/2"],
        ["sweep", "retrieval", "--theta", "0.5", "--alphabet", "1"],
        ["sweep", "index", "--theta", "0.5", "--out", str(tmp_path / "no" / "x.json")],
        ["sweep", "merge"],
    ):
        try:
            code = main(argv)
        except SystemExit as exc:  # argument errors exit from the parser, with the same one line
            code = exc.code
        assert code == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("ropeproof sweep: error:") and err.count("\n") == 1, err


def test_derive_json_matches_the_text(capsys: pytest.CaptureFixture[str]) -> None:
    for construction in ("index", "retrieval", "reflexive"):
        assert main(["derive", construction]) == 0
        text = capsys.readouterr().out
        assert main(["derive", construction, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["construction"] == construction
        assert text.startswith(f"# {doc['description']}\n")
        for row in doc["logits"]:
            assert f"  query {row['query']} vs key {row['key']}: {row['closed']}\n" in text
        for line in doc["discrepancy"]:
            assert f"  {line}\n" in text
        assert (doc["bound"] is None) == (construction == "reflexive")
        if doc["bound"] is not None:
            assert f"  {doc['bound']['statement']}\n" in text


def test_derive_index_closed_form_is_the_papers(capsys: pytest.CaptureFixture[str]) -> None:
    """[A]'s T_Index logit: integer query s against a letter key u = j - i back is cos(theta (s + u))."""
    import sympy as sp

    assert main(["derive", "index", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    closed = {(r["query"], r["key"]): sp.sympify(r["closed"]) for r in doc["logits"]}
    theta, s, u = sp.symbols("theta s_q u")
    got = closed[("integer", "letter")]
    got = got.subs({sym: {"theta": theta, "s_q": s, "u": u}.get(sym.name, sym) for sym in got.free_symbols})
    assert sp.simplify(got - sp.cos(theta * (s + u))) == 0


def test_compile_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "h"
    assert (
        main(
            [
                "compile",
                "retrieval",
                "--alphabet",
                "3",
                "--max-int",
                "2",
                "--theta",
                "0.1",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    head = load_head(out)
    assert doc["vocab_size"] == len(head.tokens) == 3 * (3 + 2)
    assert doc["head_dim"] == head.spec.head_dim and doc["freqs"] == [0.1]
    assert doc["parameters"] == {"theta": 0.1} and doc["path"] == str(out)


def test_check_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    from ropeproof.claims import registered_claims
    from ropeproof.claims._loading import claim_source

    assert main(["check", "--list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    claims = registered_claims()
    assert [c["id"] for c in doc["claims"]] == [c.id for c in claims]
    first = doc["claims"][0]
    assert set(first) == {"id", "source", "statement", "reference", "expected", "quick", "params"}
    assert first["statement"] == claims[0].statement_for(False)
    assert first["source"] == claim_source(claims[0])


def test_export_model_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("transformers")
    import argparse

    from ropeproof.commands import _export_model as export_model
    from ropeproof.verify.interop.hf._model_export import load_model_info

    sub = argparse.ArgumentParser().add_subparsers()
    export_model.register(sub)
    assert "export-model" in sub.choices

    small = ["--solver", "smallest", "--width", "6", "--max-length", "64"]
    argv = [
        "export-model",
        "gptj",
        "number",
        "--hops",
        "2",
        "--layers",
        "3",
        *small,
        "--out",
        str(tmp_path / "m"),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "hidden_size 6" in out and "5:spare" in out and "proved correct" in out
    # issue 34: the proof covers the float64 model; the saved float32 file is sampled, and the label says so
    assert "label: certified for the float64 model (exact arithmetic)" in out
    assert "float32 checkpoint sampled to" in out and "all answered correctly" in out
    info = load_model_info(tmp_path / "m")
    assert info.n_layers == 3 and info.task == "number"
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["certified_horizon"] == info.metadata["certificate"]["certified_horizon"] <= 64
    assert config["vocab_size"] == 120 + 63 + 1  # integers 1..63 for prompts up to 64 tokens, and [UNK]

    # issue 22: a position table of 3 cannot run 17 tokens, so the stated horizon is 3, not the proof's 44
    argv = [
        "export-model",
        "gptj",
        "number",
        *small,
        "--max-positions",
        "3",
        "--json",
        "--out",
        str(tmp_path / "p"),
    ]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["certified_horizon"] == 3 and doc["certificate"]["limited_by"] == "max_positions"
    assert doc["label"].endswith(
        "float32 checkpoint not sampled (the stated horizon 3 is below the task length 17)"
    )
    assert json.loads((tmp_path / "p" / "config.json").read_text())["certified_horizon"] == 3

    # issue 22: a logit scale whose q_proj weights overflow float32 is refused, and nothing is written
    argv = [
        "export-model",
        "gptj",
        "letter",
        "--max-length",
        "32",
        "--logit-scale=1e300",
        "--out",
        str(tmp_path / "s"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and "logit_scale=1e+300 is out of range" in err[0]
        and "accepted: 0 < logit_scale <=" in err[0]
    )
    assert not (tmp_path / "s").exists()
    assert (
        main(["export-model", "gptj", "number", "--hops", "3", "--layers", "2", "--out", str(tmp_path / "x")])
        == 2
    )
    assert "layers=2 is out of range; accepted: an integer >= 3 (hops=3)" in capsys.readouterr().err


# ------------------------------ figures --from-report: a damaged store or a newer report (issue 32, case 11)


@pytest.fixture(scope="module")
def saved_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report directory as ``check --quick`` leaves it for one figure: report.json (version 4, the
    fields ``figures --from-report`` reads) and the store the figure was drawn from."""
    from ropeproof._report import REPORT_FORMAT, STORE_DIR
    from ropeproof.machinery._result_store import ResultStore
    from ropeproof.paper_figures import make_all

    root = tmp_path_factory.mktemp("report")
    store = ResultStore(root / STORE_DIR)
    made = make_all(root / "figures", True, ["e_geometry"], store=store)
    store.finish_run()
    report = {
        "format": REPORT_FORMAT,
        "version": 4,
        "run": {"flags": {"quick": True}},
        "figures": {name: [p.name for p in paths] for name, paths in made.items()},
    }
    (root / "report.json").write_text(json.dumps(report))
    return root


def _damaged(saved_report: Path, tmp_path: Path, edit) -> Path:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(saved_report, copy)
    (value_file,) = (copy / "store").glob("figure.e-geometry-*.json")
    edit(copy / "report.json", value_file)
    return copy


def _set(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_figures_from_a_report_of_the_current_version(saved_report: Path, tmp_path: Path, capsys) -> None:
    assert main(["figures", "--from-report", str(saved_report), "--out", str(tmp_path / "ok")]) == 0
    assert "1 figures in" in capsys.readouterr().out and (tmp_path / "ok" / "e_geometry.png").is_file()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rep, val: val.write_text(val.read_text()[:5000]), "is not a complete ropeproof-result file"),
        (lambda rep, val: _set(val, lambda d: d.__setitem__("value", None)), "a saved value cannot be drawn"),
        (lambda rep, val: _set(val, lambda d: d.pop("value")), "is not a complete ropeproof-result file"),
        (
            lambda rep, val: _set(val, lambda d: next(iter(d["value"].values())).__setitem__(0, None)),
            "a saved value cannot be drawn",
        ),
        (lambda rep, val: _set(rep, lambda d: d.__setitem__("version", 99)), "of version 99; this ropeproof"),
        (lambda rep, val: _set(rep, lambda d: d.__setitem__("format", "x")), "is not a ropeproof-report"),
    ],
)
def test_figures_from_a_damaged_report_is_a_one_line_refusal(
    edit, message: str, saved_report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A truncated store file or a null value stopped with an internal error (exit 3), and a report of
    version 99 was drawn as if it were the current one; each is now refused in one line, exit 2, and
    nothing is written."""
    copy = _damaged(saved_report, tmp_path, edit)
    assert main(["figures", "--from-report", str(copy), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("ropeproof figures: error:"), err
    assert not (tmp_path / "out").exists()


def test_figures_full_refuses_a_saved_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--full draws rows no report computed, so it is refused with --from-report, in one line, exit 2."""
    argv = ["figures", "--full", "--from-report", str(tmp_path), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--full draws rows a report did not compute" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()

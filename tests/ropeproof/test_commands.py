"""The derive, compile, sweep and figures subcommands, run in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropeproof.cli import main
from ropeproof.commands import compile as compile_command
from ropeproof.commands import derive, figures, sweep
from ropeproof.constructions.head import load_head


def test_every_command_module_registers_itself() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    for module in (compile_command, derive, figures, sweep):
        module.register(sub)
    assert set(sub.choices) == {"compile", "derive", "figures", "sweep"}


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
    assert (tmp_path / "fig_e_geometry.png").stat().st_size > 0
    assert "1 figures in" in capsys.readouterr().out


def test_export_model_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("transformers")
    import argparse

    from ropeproof.commands import export_model
    from ropeproof.verify.interop.hf.model_export import load_model_info

    sub = argparse.ArgumentParser().add_subparsers()
    export_model.register(sub)
    assert "export-model" in sub.choices

    assert (
        main(["export-model", "gptj", "number", "--hops", "2", "--layers", "3", "--out", str(tmp_path / "m")])
        == 0
    )
    out = capsys.readouterr().out
    assert "hidden_size 6" in out and "5:spare" in out and "certified correct" in out
    info = load_model_info(tmp_path / "m")
    assert info.n_layers == 3 and info.task == "number"
    assert (
        main(["export-model", "gptj", "number", "--hops", "3", "--layers", "2", "--out", str(tmp_path / "x")])
        == 2
    )
    assert "layers=2 must be an integer >= hops=3" in capsys.readouterr().err

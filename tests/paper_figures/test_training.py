"""The training figures: registered, drawn from the shipped records, with the rows they plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropeproof.machinery._result_store import ResultStore
from ropeproof.paper_figures import figure_names
from ropeproof.paper_figures._style import save_figure
from ropeproof.paper_figures._training import (
    accuracy_figure,
    dynamics_rows,
    ps_final_figure,
    ps_paths_figure,
)
from ropeproof.verify.studies.training._shipped import shipped_path, shipped_seeds
from ropeproof.verify.studies.training._trainer import load_record


def test_training_figures_draw_and_carry_their_rows(tmp_path: Path) -> None:
    assert {"training_accuracy", "training_ps_paths", "training_ps_final"} <= set(figure_names())
    rows = dynamics_rows()
    assert {r["config"] for r in rows} == {"paper", "small"}  # seed 0 of both configurations
    store = ResultStore()
    acc, paths, final = (f(store=store) for f in (accuracy_figure, ps_paths_figure, ps_final_figure))
    assert len(store.computed) == 1  # the three figures read one product: the records' dynamics
    for config, layers in (("paper", 12), ("small", 6)):
        number = load_record(shipped_path("number", config))
        steps = [e["step"] for e in number.evaluations]
        assert sorted({r["step"] for r in rows if r["task"] == "number" and r["config"] == config}) == steps
        last = next(
            r for r in acc.rows if r["task"] == "number" and r["config"] == config and r["step"] == steps[-1]
        )
        assert last["accuracy_4hop"] == number.evaluations[-1]["accuracy"]["4"]
        k, n = number.evaluations[-1]["counts"]["4"]
        assert last["accuracy_4hop_ci_low"] <= k / n <= last["accuracy_4hop_ci_high"]  # Wilson band
        assert len([r for r in paths.rows if r["config"] == config]) == sum(
            len(load_record(shipped_path(t, config)).evaluations) * layers for t in ("number", "letter")
        )
        best = [r for r in final.rows if r["task"] == "number" and r["config"] == config]
        assert {r["step"] for r in best} == {number.best_step} and len(best) == layers
        assert all(r["S_pos_ci_low"] <= r["S_pos"] <= r["S_pos_ci_high"] for r in best)
    for result in (acc, paths, final):
        files = save_figure(result, tmp_path)
        assert all(f.stat().st_size > 0 for f in files)


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_length_and_frequency_figures(tmp_path: Path) -> None:
    from ropeproof.paper_figures._training import frequencies_figure, length_figure

    store = ResultStore()
    lengths = length_figure(quick=True, store=store)
    configs = [c for c in ("paper", "small") if 0 in shipped_seeds("number", c)]
    models = {r["model"] for r in lengths.rows}
    # quick: the claim's quick plan, letter and number on the distractors build (full: every reading), of
    # the smallest configuration only
    assert models == {"compiled width 6/8", "compiled best (width 128)", f"trained {configs[-1]}"}
    assert f"Quick preview: the trained models of the {configs[-1]} configuration only" in lengths.caption
    assert "at 17, 64, 850 tokens" in lengths.caption
    judged = [r for r in lengths.rows if r["kind"] == "trained"]
    assert {r["n"] for r in judged} <= {17, 64, 850} and all(r["judged"] for r in judged)
    # with --full, every length of the plan: the judged rows are the same, the others one look each
    trained = [r for r in length_figure(quick=True, store=store, full=True).rows if r["kind"] == "trained"]
    assert {r["n"] for r in trained} == {17, 64, 850}
    assert [r for r in trained if r["judged"]] == judged
    assert {r["reading"] for r in trained} == {"letter-distractors", "number-distractors"}
    assert {r["build"] for r in trained if r["task"] == "number"} == {"distractors"}  # its vocabulary
    assert all(r["accuracy"] >= 0.875 for r in trained if r["n"] == 17)  # the training length, 8 inputs
    assert all(r["ci_lo"] <= r["accuracy"] <= r["ci_hi"] for r in lengths.rows)
    compiled = [r for r in lengths.rows if r["model"] == "compiled width 6/8" and r["task"] == "number"]
    assert {(r["certified_horizon"], r["first_failure"]) for r in compiled} == {(44, 45)}
    freqs = frequencies_figure(quick=True, store=store)
    assert {r["config"] for r in freqs.rows} == {configs[-1]}  # quick: the last (smallest) configuration only
    for task in ("number", "letter"):
        layers = {r["layer"] for r in freqs.rows if r["task"] == task}
        n_layer = load_record(shipped_path(task, configs[-1])).config.n_layer
        # quick: the layer the claim training.frequencies judges (the number model's first, the letter's last)
        assert layers == {0 if task == "number" else n_layer - 1}
        hf_config = json.loads((Path(shipped_path(task, configs[-1])) / "config.json").read_text())
        for layer in layers:
            shares = [r["share"] for r in freqs.rows if r["task"] == task and r["layer"] == layer]
            assert len(shares) == hf_config["rotary_dim"] // 2  # one share per rotary plane
            assert abs(sum(shares) - 1.0) < 1e-12  # shares of a float64 sum
    assert f"Quick preview: the {configs[-1]} configuration only" in freqs.caption
    for result in (lengths, freqs):
        assert all(f.stat().st_size > 0 for f in save_figure(result, tmp_path))


def test_the_quick_length_preview_measures_the_smallest_configuration() -> None:
    """The length figure measures paper seed 0 (the claim's judged rows), with ``full`` seed 0 of every
    shipped configuration (paper first); its quick preview only the smallest one's, both tasks."""
    from ropeproof.paper_figures._training import _shipped_configs, trained_length_dirs

    def configs(dirs: list[Path]) -> list[tuple[str, str]]:
        return [(load_record(d).task, load_record(d).config.name) for d in dirs]

    assert _shipped_configs() == ["paper", "small"]
    assert configs(trained_length_dirs()) == [("number", "paper"), ("letter", "paper")]
    assert configs(trained_length_dirs(full=True)) == [
        (t, c) for c in ("paper", "small") for t in ("number", "letter")
    ]
    assert configs(trained_length_dirs(quick=True)) == [("number", "small"), ("letter", "small")]


def test_theory_figure_quick() -> None:
    from itertools import pairwise

    from ropeproof.paper_figures._training import _shipped_configs, theory_figure

    result = theory_figure(quick=True)
    smallest = _shipped_configs()[-1]  # quick: the smallest configuration, the frequency claim's layers
    last = load_record(shipped_path("letter", smallest)).config.n_layer - 1
    assert {(r["task"], r["layer"]) for r in result.rows} == {("number", 0), ("letter", last)}
    assert {r["config"] for r in result.rows} == {smallest} and "Quick preview" in result.caption
    assert {r["n"] for r in result.rows} == set(range(2, 18))
    index = [r for r in result.rows if r["task"] == "number"]
    assert all(r["construction_margin_inf"] > 0 for r in index)  # T_Index solves its family at that theta
    # T_Retrieval at a fixed angle loses margin as the family grows (Theorem 3.1 needs theta < omega/(2 n0))
    retrieval = [
        r["construction_margin_inf"]
        for r in sorted(result.rows, key=lambda r: r["n"])
        if r["task"] == "letter"
    ]
    assert retrieval[0] > 0 and all(b < a for a, b in pairwise(retrieval))


def test_length_figure_takes_trained_directories(tmp_path: Path) -> None:
    """A trained run directory given as data (here a copy of the shipped letter model) is measured like
    the shipped one: the same weights and seeded inputs give the same accuracies."""
    import shutil

    from ropeproof.paper_figures._training import length_figure_rows

    run = tmp_path / "my-run"
    shutil.copytree(shipped_path("letter"), run)
    rows = length_figure_rows(quick=True, trained=[run], full=True)
    mine = {(r["build"], r["n"]): r["accuracy"] for r in rows if r.get("path") == "my-run"}
    shipped = {
        (r["build"], r["n"]): r["accuracy"]
        for r in length_figure_rows(quick=True, trained=[shipped_path("letter")], full=True)
        if r["kind"] == "trained"
    }
    assert mine == shipped and {n for _b, n in mine} == {17, 64, 850}
    judged = length_figure_rows(quick=True, trained=[run])  # the default: the judged rows only
    assert {r["n"] for r in judged if r["kind"] == "trained"} < {17, 64, 850}
    assert all(r["judged"] for r in judged if r["kind"] == "trained")


def test_the_frequency_figures_compute_in_check_only_the_profiles_the_claim_reads() -> None:
    """``ropeproof check`` (not ``--full``) asks the frequency and theory figures for the profile of the
    layer per task that ``training.frequencies`` judges, of the paper configuration's seed 0 (profiles the
    claim computes anyway); ``--full`` asks for every layer of every shipped configuration; ``--quick``
    for the judged layers of the smallest configuration."""
    from types import SimpleNamespace

    from ropeproof.paper_figures import _training as tr
    from ropeproof.verify.studies.training._shipped_results import FREQUENCY_PROFILE, SHIPPED_MODEL

    class Recorder:
        def __init__(self) -> None:
            self.profiles: list[tuple[str, str, int]] = []

        def get(self, product, **args):  # type: ignore[no-untyped-def]
            if product is SHIPPED_MODEL:
                return SimpleNamespace(model=SimpleNamespace(config=SimpleNamespace(n_layer=3)))
            assert product is FREQUENCY_PROFILE and args.get("seed", 0) == 0
            self.profiles.append((args["config"], args["task"], args["layer"]))
            return [{"theta": 0.5, "share": 1.0, "layer": args["layer"], "task": args["task"]}]

    configs = tr._shipped_configs()
    judged = [("number", 0), ("letter", 2)]  # the number model's first layer, the letter model's last
    for quick, full, want in (
        (False, False, [(configs[0], t, layer) for t, layer in judged]),
        (True, False, [(configs[-1], t, layer) for t, layer in judged]),
        (False, True, [(c, t, layer) for c in configs for t, _ in judged for layer in range(3)]),
    ):
        store = Recorder()
        tr.FREQUENCIES_DATA.compute(store, quick, full)
        assert store.profiles == want, (quick, full)
    assert len(configs) >= 2  # the full figure adds the other configuration

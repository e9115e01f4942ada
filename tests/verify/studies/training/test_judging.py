"""The training judging on hand-made measurements: each aggregation's verdict follows its inputs and flips
when one seed's measurement changes (the seeds are patched: two paper seeds, one small)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ropeproof.verify.studies.training import _judging as judging
from ropeproof.verify.studies.training._config import PAPER, PAPER_V1
from ropeproof.verify.studies.training._lengths import flip_text, row_against, study_plan
from ropeproof.verify.studies.training._trainer import TrainingRecord

SEEDS = {"paper": [0, 1], "small": [0]}


@pytest.fixture(autouse=True)
def _seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        judging, "seeds_of", lambda config, quick=False: SEEDS[config][: 1 if quick else None]
    )


def _no_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judging, "seeds_of", lambda config, quick=False: [])


# -- over the seeds ------------------------------------------------------------------------------------


def test_over_seeds_holds_only_when_every_paper_seed_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    found = {("paper", 0): "shows", ("paper", 1): "shows", ("small", 0): "contradicts"}
    out = judging.over_seeds(lambda config, seed: found[(config, seed)])
    assert out.verdict == "holds"  # the small setting is reported, not judged
    assert out.figures["paper_seeds_showing"] == "2 of 2"
    assert out.figures["small"]["contradicts"] == 1 and out.key_figure == "paper_seeds_showing"
    found[("paper", 1)] = "undecided"
    assert judging.over_seeds(lambda config, seed: found[(config, seed)]).verdict == "unresolvable"
    found[("paper", 0)] = "contradicts"
    out = judging.over_seeds(lambda config, seed: found[(config, seed)])
    assert out.verdict == "violated" and out.figures["paper_seeds_showing"] == "0 of 2"
    quick = judging.over_seeds(lambda config, seed: found[(config, seed)], quick_models=True)
    assert quick.figures["paper"]["seeds"] == 1 and quick.verdict == "violated"
    _no_seeds(monkeypatch)
    none = judging.over_seeds(lambda config, seed: "shows")
    assert none.verdict == "unresolvable" and none.detail == judging.NO_PAPER


# -- accuracy ------------------------------------------------------------------------------------------


def _rows(*sides: str, low: float = 0.96) -> dict[str, dict[str, Any]]:
    return {
        str(h): {"side": s, "ci_low": low - 0.01 * h, "ci_high": low + 0.02, "correct": 90 + h, "count": 100}
        for h, s in enumerate(sides, start=1)
    }


def test_accuracy_holds_until_a_row_is_below_or_undecided(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = {(t, s): _rows("above", "above") for t in judging.TASKS for s in (0, 1)}
    out = judging.judge_accuracy("paper", lambda task, seed: rows[(task, seed)])
    assert out.verdict == "holds" and out.counterexample is None
    assert out.figures["worst_ci_low"] == pytest.approx(0.94)
    assert set(out.figures) == {
        "number-seed0",
        "letter-seed0",
        "number-seed1",
        "letter-seed1",
        "worst_ci_low",
        "worst_said",
    }
    rows[("letter", 1)] = _rows("above", "undecided", low=0.9)
    out = judging.judge_accuracy("paper", lambda task, seed: rows[(task, seed)])
    assert out.verdict == "unresolvable" and out.figures["worst_ci_low"] == pytest.approx(0.88)
    assert (
        out.figures["worst_said"] == "0.88, letter-seed1 at 2 hops: 92/100 prompts, interval [0.880, 0.920]"
    )
    assert out.counterexample is out.figures
    rows[("number", 0)] = _rows("below", "above")
    assert judging.judge_accuracy("paper", lambda task, seed: rows[(task, seed)]).verdict == "violated"
    # the small setting has one seed here
    small = judging.judge_accuracy("small", lambda task, seed: rows[(task, seed)])
    assert (
        set(small.figures) == {"number-seed0", "letter-seed0", "worst_ci_low", "worst_said"}
        and small.verdict == "violated"
    )
    _no_seeds(monkeypatch)
    none = judging.judge_accuracy("small", lambda task, seed: rows[(task, seed)])
    assert none.verdict == "unresolvable" and none.detail == "no small checkpoint ships"


# -- configuration -------------------------------------------------------------------------------------


def test_configuration_holds_when_some_paper_seed_follows_a_for_both_tasks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configs = {(t, s): PAPER_V1 for t in judging.TASKS for s in (0, 1)}
    monkeypatch.setattr(
        judging,
        "shipped_record",
        lambda task, config="small", seed=0: SimpleNamespace(config=configs[(task, seed)]),
    )
    out = judging.configuration_outcome()
    assert out.verdict == "violated" and out.figures["seeds_in_a_configuration"] == []
    assert out.figures["deviations"]["number-seed0"] and out.figures["deviations_said"] != "none"
    configs[("number", 1)] = PAPER
    assert judging.configuration_outcome().verdict == "violated"  # the letter run of seed 1 still deviates
    configs[("letter", 1)] = PAPER
    out = judging.configuration_outcome()
    assert out.verdict == "holds" and out.figures["seeds_in_a_configuration"] == [1]
    assert out.figures["deviations"]["letter-seed1"] == []
    assert "number-seed1" not in out.figures["deviations_said"]
    assert out.figures["deviations_said"].startswith("number-seed0: ")


# -- the last letter layer -----------------------------------------------------------------------------


def _worst(accuracy: float, layer: int | str = 0) -> dict[str, Any]:
    return {
        "accuracy": accuracy, "correct": round(100 * accuracy), "count": 100, "ci_low": accuracy - 0.05,
        "ci_high": accuracy + 0.05, "hops": 1, "layer": layer, "lowest_ci_low": accuracy - 0.08,
    }  # fmt: skip


def _single(necessary: list[int], worst: float, finding: str) -> dict[str, Any]:
    return {"finding": finding, "necessary": necessary, "worst": _worst(worst)}


def test_last_layer_causal_finding_reads_every_hop_count() -> None:
    assert judging.last_layer_causal_finding(_rows("below", "below")) == "shows"
    assert judging.last_layer_causal_finding(_rows("below", "undecided")) == "undecided"
    assert judging.last_layer_causal_finding(_rows("undecided", "above")) == "contradicts"


def test_letter_last_layer_verdict_is_the_causal_readings_and_the_others_are_reported() -> None:
    causal = {
        ("paper", 0): _rows("below", "below", low=0.2),
        ("paper", 1): _rows("below", "below", low=0.3),
        ("small", 0): _rows("above", "above"),
    }
    single = {("paper", 0): _single([11], 0.1, "shows"), ("paper", 1): _single([], 0.4, "contradicts")}
    single[("small", 0)] = single[("paper", 1)]

    def run() -> Any:
        return judging.judge_letter_last_layer(
            lambda c, s: causal[(c, s)],
            lambda c, s: single[(c, s)],
            lambda c, s: {"finding": "undecided", "per_hop": {"1": {"seed": s}}},
        )

    out = run()
    assert out.verdict == "holds" and out.figures["reading"] == "causal"
    assert out.figures["reading_verdicts"] == {
        "causal": "holds",
        "any-single-layer": "violated",
        "descriptive": "unresolvable",
    }
    assert out.figures["readings_that_flip_it"] == ["any-single-layer", "descriptive"]
    assert out.figures["readings"]["any-single-layer"]["detail"]["paper-seed0"] == {
        "necessary": [11],
        "worst": _worst(0.1),
    }
    stands = out.figures["where_readings_stand"]
    assert stands["causal"] == (
        "accuracy with the last layer zeroed stays >= 0.180 (lowest interval end: 92/100 prompts, interval "
        "[0.180, 0.220])"
    )
    assert stands["any-single-layer"] == (
        "no single layer's ablation drops every hop count below 0.5 in 1 of 2 paper seeds; lowest accuracy "
        "after one: 0.100 (10/100 prompts at 1 hops, anytime-valid 95% interval [0.050, 0.150], layer 0); "
        "lowest interval end over every layer and hop count: 0.020"
    )
    assert out.figures["where_readings_stand_said"].startswith("causal: accuracy with the last layer")
    single[("paper", 0)]["worst"] = _worst(0.1, "undecided which")
    assert "0.150], undecided which)" in run().figures["where_readings_stand"]["any-single-layer"]
    assert "descriptive" not in stands
    causal[("paper", 1)] = _rows("below", "undecided", low=0.3)
    assert run().verdict == "unresolvable"
    causal[("paper", 1)] = _rows("below", "above", low=0.3)
    out = run()
    assert out.verdict == "violated" and out.figures["readings_that_flip_it"] == ["descriptive"]


# -- pure heads ----------------------------------------------------------------------------------------


def _record(pos: list[list[float]], sym: list[list[float]]) -> TrainingRecord:
    """A finished record whose best checkpoint has the given per-layer score intervals."""
    dyn = {"S_pos_ci": pos, "S_sym_ci": sym}
    return TrainingRecord("number", PAPER, 0, [], [{"step": 5, "dynamics": dyn}], 5)


PURE = _record([[0.8, 0.9], [0.0, 0.1]], [[0.0, 0.1], [0.8, 0.9]])  # gaps of at least 0.7
MIXED = _record([[0.8, 0.9], [0.4, 0.5]], [[0.0, 0.1], [0.3, 0.4]])  # second layer: gap within 0.2


def _prompt(finding: str, low: float, layer: int | str = 0) -> dict[str, Any]:
    worst = {
        "layer": layer, "share": low + 0.1, "pure": round(100 * (low + 0.1)), "prompts": 100, "ci_low": low,
        "ci_high": low + 0.2, "lowest_ci_low": low,
    }  # fmt: skip
    return {"finding": finding, "worst_layer": worst, "layers": {}}


def _functional(finding: str, lows: list[float]) -> dict[str, Any]:
    rows = {str(h): {"ci_low": low, "side": "above"} for h, low in enumerate(lows, start=1)}
    return {"impure_layers": [1] if lows else [], "rows": rows, "finding": finding}


def test_pure_heads_verdict_is_the_per_layer_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    records = {(t, s): PURE for t in judging.TASKS for s in (0, 1)}
    monkeypatch.setattr(judging, "shipped_record", lambda task, config="small", seed=0: records[(task, seed)])
    prompt = {(t, s): _prompt("shows", 0.7 + 0.1 * s) for t in judging.TASKS for s in (0, 1)}
    functional = {
        (t, s): _functional("shows", [0.95, 0.92] if t == "letter" else [])
        for t in judging.TASKS
        for s in (0, 1)
    }

    def run() -> Any:
        return judging.judge_pure_heads(
            0.5, lambda t, c, s: prompt[(t, s)], lambda t, c, s: functional[(t, s)]
        )

    out = run()
    assert out.verdict == "holds"
    assert out.figures["reading_verdicts"] == {
        "per-layer": "holds",
        "per-prompt": "holds",
        "functional": "holds",
    }
    detail = out.figures["readings"]["per-layer"]["detail"]["paper-seed1"]
    assert {t: d["finding"] for t, d in detail.items()} == {"number": "shows", "letter": "shows"}
    assert [g["gap_ci"] for g in detail["number"]["layers"]] == [
        pytest.approx([0.7, 0.9]),
        pytest.approx([-0.9, -0.7]),
    ]
    stands = out.figures["where_readings_stand"]
    assert stands == {
        "per-prompt": "holds for any bar on the share of pure prompts up to 0.700 (lowest interval end over "
        "every layer and seed); lowest share 0.800 (80/100 prompts, anytime-valid 95% interval [0.700, "
        "0.900], layer 0)",
        "functional": "holds for any accuracy bar up to 0.920",
    }
    prompt[("number", 0)] = _prompt("shows", 0.7, "undecided which")
    assert run().figures["where_readings_stand"]["per-prompt"].endswith("0.900], undecided which)")
    records[("letter", 1)] = MIXED
    out = run()
    assert out.verdict == "violated" and out.figures["readings_that_flip_it"] == ["functional", "per-prompt"]
    assert out.figures["readings"]["per-layer"]["detail"]["paper-seed1"]["letter"]["finding"] == "contradicts"
    prompt[("number", 0)] = _prompt("contradicts", 0.3)
    assert run().figures["reading_verdicts"]["per-prompt"] == "violated"
    functional = {k: _functional("shows", []) for k in functional}
    assert run().figures["where_readings_stand"]["functional"] == "no layer to zero"


# -- length --------------------------------------------------------------------------------------------


def _length_row(key: str, n: int, accuracy: float, cap: int) -> dict[str, Any]:
    threshold = 0.5 if key.startswith("number") else 0.9
    low, high = accuracy - 0.02, accuracy + 0.02
    side = "above" if low >= threshold else "below" if high < threshold else "undecided"
    return {
        "reading": key, "n": n, "accuracy": accuracy, "ci_low": low, "ci_high": high, "count": cap,
        "correct": round(accuracy * cap), "threshold": threshold, "side": side,
    }  # fmt: skip


def test_length_verdict_is_the_primary_readings_and_flips_with_a_row() -> None:
    plan = study_plan(True)  # letter-distractors and number-distractors at 17, 64 and 850
    assert plan["readings"] == ["letter-distractors", "number-distractors"] and plan["lengths"] == [
        17,
        64,
        850,
    ]
    accuracy = {
        "letter-distractors": {17: 1.0, 64: 0.97, 850: 0.95},
        "number-distractors": {17: 1.0, 64: 0.1, 850: 0.05},
    }
    drops: dict[tuple[str, int], float] = {}
    calls: list[tuple[str, str, int, int, int]] = []

    def row(key: str, config: str, seed: int, n: int, cap: int) -> dict[str, Any]:
        calls.append((key, config, seed, n, cap))
        value = accuracy[key][n]
        if key.startswith("letter") and n == 850:
            value = drops.get((config, seed), value)
        return _length_row(key, n, value, cap)

    out = judging.judge_lengths("letter-distractors", plan, row)
    assert out.verdict == "holds"
    assert out.figures["reading_verdicts"] == {"letter-distractors": "holds", "number-distractors": "holds"}
    assert out.figures["readings_that_flip_it"] == {}
    assert out.figures["paper_letter_850"] == (
        "above 90% (accuracy 0.950, anytime-valid 95% interval [0.930, 0.970] on 64 inputs)"
    )
    # every paper seed (the verdicts read no other), each reading's judged lengths; the letter reading
    # measures 850 first
    assert {(c, s) for _, c, s, _, _ in calls} == {("paper", 0), ("paper", 1)}
    assert calls[0] == ("letter-distractors", "paper", 0, 850, 64)
    assert out.figures["inputs_answered"] == sum(c[4] for c in calls)
    assert {(k, n) for k, _, _, n, _ in calls} == {
        ("letter-distractors", 17), ("letter-distractors", 64), ("letter-distractors", 850),
        ("number-distractors", 64), ("number-distractors", 850),
    }  # fmt: skip
    assert out.figures["readings"]["letter-distractors"]["small"] == judging.SMALL_NOT_MEASURED
    calls.clear()
    full = judging.judge_lengths("letter-distractors", study_plan(True, full=True), row)
    assert {(c, s) for _, c, s, _, _ in calls} == {("paper", 0), ("paper", 1), ("small", 0)}
    assert ("number-distractors", "paper", 0, 17, 64) in calls  # one look at a length no verdict reads
    assert full.figures["reading_verdicts"] == out.figures["reading_verdicts"]
    calls.clear()
    assert [r["n"] for r in out.figures["rows"]["paper-seed0"]] == [17, 64, 850, 64, 850]
    drops[("paper", 1)] = 0.5  # paper seed 1's letter model below 0.9 at 850
    out = judging.judge_lengths("letter-distractors", plan, row)
    assert out.verdict == "violated"
    assert out.figures["readings"]["letter-distractors"]["paper"]["per_seed"] == {
        "0": "shows",
        "1": "contradicts",
    }
    flip = out.figures["readings_that_flip_it"]
    assert list(flip) == ["number-distractors"] and flip["number-distractors"].startswith("holds: ")
    assert out.figures["readings_said"] == "letter-distractors violated; number-distractors holds"
    drops[("paper", 1)] = 0.9  # straddles 0.9
    assert judging.judge_lengths("letter-distractors", plan, row).verdict == "unresolvable"
    assert judging.judge_lengths("number-distractors", plan, row).verdict == "holds"


def test_length_without_paper_seeds_is_unresolvable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judging, "seeds_of", lambda config, quick=False: [0] if config == "small" else [])
    out = judging.judge_lengths(
        "letter-distractors", study_plan(True), lambda k, c, s, n, cap: _length_row(k, n, 0.99, cap)
    )
    assert out.verdict == "unresolvable" and out.detail == judging.NO_PAPER
    assert out.figures["paper_letter_850"] == "not measured"


def _found(key: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"reading": key, **_finding(key, rows)}


def _finding(key: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    from ropeproof.verify.studies.training._lengths import reading_finding

    return reading_finding(key, rows)


def test_flip_text_names_the_worst_paper_seed_with_counts_and_intervals() -> None:
    """Every flip point names its seed, length, count and interval; a flip point that needs a length not
    sampled to a decision is "not decided", naming the lengths."""
    key = "letter-distractors"
    seed0 = [_length_row(key, 17, 0.97, 240), _length_row(key, 850, 0.5, 56)]
    seed1 = [_length_row(key, 17, 0.96, 240), _length_row(key, 850, 0.6, 56)]
    above = {
        "verdict": "violated",
        "seeds": {"paper-seed0": _found(key, seed0), "paper-seed1": _found(key, seed1), "small-seed0": {}},
    }
    assert flip_text(above) == (
        "violated: fails at thresholds above 0.520 (paper-seed0 at n = 850: 28/56 inputs, accuracy 0.500, "
        "anytime-valid 95% interval [0.480, 0.520]); holds for thresholds up to 0.480 (paper-seed0 at n = "
        "850: 28/56 inputs, accuracy 0.500, anytime-valid 95% interval [0.480, 0.520]) (worst seed)"
    )
    seed0[0] = {**_length_row(key, 17, 0.97, 240), "judged": False}  # one look after the contradiction
    above["seeds"]["paper-seed0"] = _found(key, seed0)
    assert flip_text(above).endswith(
        "where it holds: not decided (lengths not sampled to a decision: paper-seed0 n = 17) (worst seed)"
    )
    seed1[0] = {**_length_row(key, 17, 0.96, 240), "judged": False}
    above["seeds"]["paper-seed1"] = _found(key, seed1)
    assert "(lengths not sampled to a decision: every paper seed n = 17)" in flip_text(above)
    key = "number-distractors"
    rows = [_length_row(key, n, a, 64) for n, a in ((64, 0.7), (128, 0.45), (256, 0.2))]
    below = {"verdict": "violated", "seeds": {"paper-seed0": _found(key, rows)}}
    text = flip_text(below)
    assert text.startswith("violated: fails at thresholds up to 0.680 (paper-seed0 at n = 64: 45/64 inputs")
    assert "holds for thresholds above 0.720 (paper-seed0 at n = 64" in text
    assert text.endswith("decided below the threshold at every length from n = 128")
    rows[1] = _length_row(key, 128, 0.5, 1024)  # undecided at the cap: no flip at 128
    assert flip_text({**below, "seeds": {"paper-seed0": _found(key, rows)}}).endswith("from n = 256")
    rows[2] = {**_length_row(key, 256, 0.2, 4), "judged": False}
    assert flip_text({**below, "seeds": {"paper-seed0": _found(key, rows)}}).endswith(
        "from no length (not decided (lengths not sampled to a decision: paper-seed0 n = 128, 256))"
    )
    assert flip_text({"verdict": "unresolvable", "seeds": {"small-seed0": {}}}) == "unresolvable"


def test_row_against_says_where_the_interval_lies() -> None:
    row = _length_row("letter-distractors", 850, 0.9, 100)
    assert row_against(row) == (
        "not decided against 90% (accuracy 0.900, anytime-valid 95% interval [0.880, 0.920] on 100 inputs)"
    )
    assert row_against(_length_row("number-distractors", 64, 0.1, 8)).startswith("below 50% ")


# -- frequencies ---------------------------------------------------------------------------------------


def _plane(theta: float, stability: float) -> dict[str, Any]:
    return {"layer": 0, "freq_id": 2, "theta": theta, "share": 0.4, "dominant_stability": stability}


def test_frequencies_follow_theta_and_stability() -> None:
    planes = {("number", c, s): _plane(0.87, 1.0) for c in SEEDS for s in SEEDS[c]}
    planes |= {("letter", c, s): _plane(0.003, 0.99) for c in SEEDS for s in SEEDS[c]}
    out = judging.judge_frequencies(lambda t, c, s: planes[(t, c, s)], quick=False)
    assert out.verdict == "holds" and out.figures["paper_seeds_showing"] == "2 of 2"
    assert out.figures["dominant_planes"]["paper-seed1-letter"]["theta"] == 0.003
    assert len(out.figures["dominant_planes"]) == 6
    planes[("letter", "paper", 1)] = _plane(0.003, 0.94)  # not stably largest
    assert judging.judge_frequencies(lambda t, c, s: planes[(t, c, s)], quick=False).verdict == "unresolvable"
    planes[("number", "paper", 0)] = _plane(0.3, 1.0)  # a low plane in the number model's first layer
    out = judging.judge_frequencies(lambda t, c, s: planes[(t, c, s)], quick=False)
    assert out.verdict == "violated" and out.figures["paper"]["per_seed"] == {
        "0": "contradicts",
        "1": "undecided",
    }
    quick = judging.judge_frequencies(lambda t, c, s: planes[(t, c, s)], quick=True)
    assert set(quick.figures["dominant_planes"]) == {
        "paper-seed0-number",
        "paper-seed0-letter",
        "small-seed0-number",
        "small-seed0-letter",
    }


def test_judging_that_loads_models_needs_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "transformers" else real(name, *a)
    )
    for out in (
        judging.accuracy_outcome(None, "paper", 0.95, 400, 2400, "record"),  # type: ignore[arg-type]
        judging.letter_last_layer_outcome(None, 0.5, 100, 2400),  # type: ignore[arg-type]
        judging.pure_heads_outcome(None, 0.5),  # type: ignore[arg-type]
        judging.length_outcome(None, True, "letter-distractors"),  # type: ignore[arg-type]
        judging.frequencies_outcome(None, 20, True),  # type: ignore[arg-type]
    ):
        assert out.verdict == "unresolvable" and out.detail == judging.NO_TRANSFORMERS


# -- by configuration ----------------------------------------------------------------------------------


def test_verdicts_by_configuration_split_the_seeds_by_how_they_were_trained(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configs = {0: PAPER_V1, 1: PAPER}
    monkeypatch.setattr(
        judging, "shipped_record", lambda task, config="small", seed=0: SimpleNamespace(config=configs[seed])
    )
    assert judging.configuration_groups() == {"a-configuration": [1], "earlier": [0]}
    split = judging.verdict_by_configuration({0: "contradicts", 1: "shows"})
    assert split["a-configuration"] == {"seeds": [1], "verdict": "holds"}
    assert split["earlier"] == {"seeds": [0], "verdict": "violated"} and split["changes"] is True
    assert judging.verdict_by_configuration({0: "shows", 1: "shows"})["changes"] is False
    only_first = judging.verdict_by_configuration({0: "shows"})  # a quick run judges seed 0 alone
    assert only_first["a-configuration"]["verdict"] == "no seed" and only_first["changes"] is None
    out = judging.over_seeds(lambda config, seed: {0: "contradicts", 1: "shows"}[seed])
    assert out.verdict == "violated" and out.figures["by_configuration"]["changes"] is True
    readings = judging.readings_outcome(
        "a",
        {
            "a": lambda config, seed: ("shows", None),
            "b": lambda config, seed: ("shows" if seed == 1 else "contradicts", None),
        },
    )
    assert readings.figures["configuration_changes"] == ["b"]
    assert readings.figures["readings"]["a"]["by_configuration"]["changes"] is False
    configs[1] = PAPER_V1  # no seed in [A]'s configuration: nothing to compare
    assert judging.verdict_by_configuration({0: "shows", 1: "shows"})["changes"] is None

"""The training claims: the shipped checkpoints' accuracy holds on intervals; [A]'s observations get a
verdict per seed that follows the records (checked on the shipped records and on made-up ones that flip
it), counted over seeds, with undecided intervals left undecided."""

from __future__ import annotations

import pytest
import torch

from ropeproof.claims import _training as claims_training
from ropeproof.claims._registry import CheckContext, run_claim
from ropeproof.claims._training import CLAIMS
from ropeproof.verify.studies.training import _judging as judging
from ropeproof.verify.studies.training._config import PAPER
from ropeproof.verify.studies.training._observations import pure_heads
from ropeproof.verify.studies.training._trainer import TrainingRecord

CTX = CheckContext(device=torch.device("cpu"), dtype=torch.float64, quick=True)
IDS = [
    "training.paper-accuracy",
    "training.small-accuracy",
    "training.configuration",
    "training.hop-by-hop",
    "training.letter-simultaneous",
    "training.layer-roles",
    "training.letter-last-layer",
    "training.pure-heads",
    "training.uniform-early",
    "training.length",
    "training.frequencies",
]
RECORD_ONLY = [*IDS[3:6], "training.uniform-early"]
READINGS = ["training.letter-last-layer", "training.pure-heads", "training.length"]
"""The observations reported under every reading, pinned per reading and run in full checks only."""


def test_the_shared_names_stay_importable_from_the_claim_module() -> None:
    """Other code imports these from the claim module; they are the judging module's own."""
    for name in ("seeds_of", "shipped_record", "SETTINGS", "HOPS"):
        assert getattr(claims_training, name) is getattr(judging, name)
    assert claims_training.SETTINGS == ("paper", "small")


def test_ids_expectations_and_quick() -> None:
    from ropeproof.claims._training import HAS_HF

    assert [c.id for c in CLAIMS] == IDS
    assert [c.id for c in CLAIMS if not c.quick] == READINGS
    pinned = IDS[:3] + READINGS if HAS_HF else IDS[2:3]
    assert [c.id for c in CLAIMS if c.expected != "open"] == pinned
    if HAS_HF:
        assert {CLAIMS[c].expected for c in READINGS} == {"violated"}
        assert all(set(CLAIMS[c].pins) == {"reading_verdicts", "configuration_changes"} for c in READINGS)
        # the readings named as changed by [A]'s configuration are readings of the claim
        assert all(
            set(CLAIMS[c].pins["configuration_changes"]) <= set(CLAIMS[c].pins["reading_verdicts"])
            for c in READINGS
        )


def test_a_verdict_names_its_reading_and_every_reading_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verdict is the primary reading's over the paper seeds; every reading's verdict is reported and
    the readings that flip it are named."""
    monkeypatch.setattr(judging, "seeds_of", lambda config, quick=False: [0, 1] if config == "paper" else [0])
    looks = {
        "strict": lambda config, seed: ("contradicts" if seed == 1 else "shows", {"seed": seed}),
        "lenient": lambda config, seed: ("shows", {}),
        "open": lambda config, seed: ("undecided" if seed == 0 else "shows", {}),
    }
    out = judging.readings_outcome("strict", looks, {"strict": lambda d: f"{len(d)} paper details"})
    assert out.verdict == "violated" and out.figures["reading"] == "strict"
    assert out.figures["reading_verdicts"] == {
        "strict": "violated",
        "lenient": "holds",
        "open": "unresolvable",
    }
    assert out.figures["readings_that_flip_it"] == ["lenient", "open"]
    assert out.figures["readings"]["strict"]["detail"]["paper-seed1"] == {"seed": 1}
    assert out.figures["readings"]["strict"]["small"]["seeds"] == 1
    assert out.figures["where_readings_stand"] == {"strict": "2 paper details"}
    assert (
        "strict violated (paper seeds showing, contradicting, undecided: 1/1/0)"
        in out.figures["readings_said"]
    )


@pytest.mark.parametrize("claim_id", IDS[:2])
def test_shipped_checkpoints_answer_the_held_out_prompts(claim_id: str) -> None:
    pytest.importorskip("transformers")
    res = run_claim(CLAIMS[claim_id], CTX)
    assert res.outcome.verdict == "holds", res.outcome.figures
    # the Wilson lower end, not the point estimate, clears the claim's bar (0.95 paper, 0.9 small)
    assert res.outcome.figures["worst_ci_low"] >= CLAIMS[claim_id].params["min_accuracy"]


@pytest.mark.parametrize("claim_id", [c for c in IDS[3:] if c not in READINGS])
def test_observations_count_seeds_per_setting(claim_id: str) -> None:
    if claim_id not in RECORD_ONLY:
        pytest.importorskip("transformers")
    res = run_claim(CLAIMS[claim_id], CTX)
    assert res.outcome.verdict in ("holds", "violated", "unresolvable"), res.outcome.detail
    for setting in ("paper", "small"):
        summary = res.outcome.figures[setting]
        assert summary["shows"] + summary["contradicts"] + summary["undecided"] == summary["seeds"]
        assert len(summary["per_seed"]) == summary["seeds"]
    paper = res.outcome.figures["paper"]
    want = (
        "holds"
        if paper["shows"] == paper["seeds"] > 0
        else "violated"
        if paper["contradicts"]
        else "unresolvable"
    )
    assert res.outcome.verdict == want


CE = PAPER.checkpoint_every


def _fake(curves: dict[int, list[int]], s_pos: list[list[float]], s_sym: list[list[float]]) -> TrainingRecord:
    """Three checkpoints; ``curves[h][k]`` right answers of 600 at ``h`` hops; per-layer score intervals."""
    evals = []
    for k, step in enumerate([0, CE, 2 * CE]):
        counts = {str(h): [curves[h][k], 600] for h in (1, 2, 3, 4)}
        counts["0"] = [sum(c[0] for c in counts.values()), 2400]
        dyn = {
            "S_pos_ci": s_pos,
            "S_sym_ci": s_sym,
            "entropy_ci": [[0.95, 1.0]] * len(s_pos),
            "S_pos": [sum(p) / 2 for p in s_pos],
            "S_sym": [sum(p) / 2 for p in s_sym],
        }
        evals.append({"step": step, "counts": counts, "accuracy": {}, "dynamics": dyn})
    return TrainingRecord("number", PAPER, 0, [], evals, 2 * CE)


def _layers(pattern: str) -> tuple[list[list[float]], list[list[float]]]:
    """Intervals per layer from a string: p positional, s symbolic, u uniform-ish, ? straddling 0.5."""
    table = {
        "p": ([0.8, 0.9], [0.1, 0.2]),
        "s": ([0.1, 0.2], [0.8, 0.9]),
        "u": ([0.95, 1.0], [0.95, 1.0]),
        "?": ([0.45, 0.7], [0.1, 0.2]),
    }
    return [table[c][0] for c in pattern], [table[c][1] for c in pattern]


def test_verdicts_follow_the_records_and_count_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    in_order = {1: [0, 590, 595], 2: [0, 0, 595], 3: [0, 0, 595], 4: [0, 0, 595]}
    together = {h: [0, 590, 595] for h in (1, 2, 3, 4)}
    roles = _layers("uupppusuusss")  # middle layers (3-6) positional, deep layers (9-11) symbolic
    letter_roles = _layers("ssssssssssss")
    records = {
        (0, "number"): _fake(in_order, *roles),
        (0, "letter"): _fake(together, *letter_roles),
        (1, "number"): _fake(together, *roles),  # seed 1: 1 and 4 hops at the same checkpoint
        (1, "letter"): _fake(in_order, *_layers("sssppsssssss")),
    }
    monkeypatch.setattr(judging, "shipped_record", lambda task, config="small", seed=0: records[(seed, task)])
    monkeypatch.setattr(judging, "seeds_of", lambda config, quick=False: [0, 1] if config == "paper" else [])

    def outcome(cid: str):  # type: ignore[no-untyped-def]
        return run_claim(CLAIMS[cid], CTX).outcome

    hop = outcome("training.hop-by-hop")
    assert hop.verdict == "violated" and hop.figures["paper"]["per_seed"] == {
        "0": "shows",
        "1": "contradicts",
    }
    assert hop.figures["paper_seeds_showing"] == "1 of 2"
    assert outcome("training.letter-simultaneous").figures["paper"]["per_seed"] == {
        "0": "shows",
        "1": "contradicts",
    }
    roles_out = outcome("training.layer-roles")
    assert roles_out.figures["paper"]["per_seed"] == {
        "0": "shows",
        "1": "contradicts",
    }  # seed 1's letter model
    # an interval straddling 0.5 leaves purity undecided rather than decided either way
    records[(0, "number")] = _fake(in_order, *_layers("ppp?ssssssss"))
    records[(1, "number")] = _fake(in_order, *_layers("pppsssssssss"))
    records[(1, "letter")] = _fake(together, *letter_roles)
    pure = {seed: pure_heads(records[(seed, "number")], 0.5) for seed in (0, 1)}
    assert pure == {0: "undecided", 1: "shows"}
    assert outcome("training.uniform-early").verdict == "violated"  # p and s layers are not near-uniform
    for key in list(records):
        records[key] = _fake(together, *_layers("uuuuuuuuuuuu"))
    assert outcome("training.uniform-early").verdict == "holds"
    monkeypatch.setattr(judging, "seeds_of", lambda config, quick=False: [])
    none = outcome("training.hop-by-hop")
    assert none.verdict == "unresolvable" and none.detail == "no paper-configuration checkpoint ships"


def test_the_readings_of_the_pinned_claims_are_judged() -> None:
    """The readings the claims pin are the ones the judging produces (full study)."""
    from ropeproof.claims._training import LAST_LAYER_VERDICTS, LENGTH_VERDICTS, PURE_VERDICTS
    from ropeproof.verify.studies.training._lengths import study_plan

    assert list(LENGTH_VERDICTS) == study_plan(False)["readings"]
    assert set(LAST_LAYER_VERDICTS) == {"causal", *judging.LAST_LAYER_STANDS, "descriptive"}
    assert set(PURE_VERDICTS) == {"per-layer", *judging.PURE_STANDS}


def test_the_configuration_claim_lists_every_paper_run_and_holds_with_a_seed_in_a_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = run_claim(CLAIMS["training.configuration"], CTX)
    figures = result.outcome.figures
    assert result.outcome.verdict == "holds" and not result.regression
    assert (
        figures["seeds_in_a_configuration"] == claims_training.CONFIGURATION_PINS["seeds_in_a_configuration"]
    )
    runs = {f"{t}-seed{s}" for s in claims_training.seeds_of("paper") for t in ("number", "letter")}
    assert set(figures["deviations"]) == runs
    for run, found in figures["deviations"].items():  # the earlier seeds differ in exactly three fields
        fields = [d.split(" = ")[0] for d in found]
        in_a = int(run.rsplit("seed", 1)[1]) in figures["seeds_in_a_configuration"]
        assert fields == ([] if in_a else ["n_positions", "activation", "training_set"]), run
    monkeypatch.setattr(judging, "seeds_of", lambda config, quick=False: [0, 1, 2])  # the earlier seeds alone
    assert run_claim(CLAIMS["training.configuration"], CTX).outcome.verdict == "violated"

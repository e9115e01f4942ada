from __future__ import annotations

import dataclasses

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.training._config import CONFIGS, PAPER, PAPER_V1, SMALL, TrainConfig, get_config


def test_paper_config_is_the_brief_shape_and_schedule() -> None:
    # docs/theory.md section 6: 12 layers, one head, n_embd 128, MLP 512, dropout 0.1, eps 1e-5,
    # AdamW 1e-4, betas (0.95, 0.999), wd 1e-4, 750 warm-up, batch 64, 6000 steps / 500, n_positions 128,
    # exact GELU, a fixed training set of 432,000 sequences
    p = PAPER
    assert (p.n_layer, p.n_embd, p.n_inner, p.dropout, p.layer_norm_epsilon, p.n_positions) == (
        12,
        128,
        512,
        0.1,
        1e-5,
        128,
    )
    assert (p.activation, p.training_set) == ("gelu", 432_000)
    assert (p.lr, p.betas, p.weight_decay, p.warmup_steps, p.batch_size) == (
        1e-4,
        (0.95, 0.999),
        1e-4,
        750,
        64,
    )
    assert (p.steps, p.checkpoint_every, p.mixed_precision) == (6000, 500, True)


def test_small_is_smaller_than_paper() -> None:
    assert SMALL.n_layer < PAPER.n_layer and SMALL.n_embd < PAPER.n_embd and SMALL.steps < PAPER.steps
    assert SMALL.n_layer >= 4  # one hop per layer needs at least 4 layers for 4 hops (section 6)
    # the README states these
    assert (SMALL.n_layer, SMALL.n_embd, SMALL.steps, SMALL.lr) == (6, 64, 1500, 1e-3)
    assert SMALL.score_prompts == PAPER.score_prompts == 100


def test_round_trip_and_overrides() -> None:
    for cfg in CONFIGS.values():
        assert TrainConfig.from_json(cfg.to_json()) == cfg
    short = SMALL.with_overrides(steps=10, score_prompts=0)
    assert short.steps == 10 and short.warmup_steps == 10 and short.score_prompts == 0
    assert SMALL.with_overrides() == SMALL


def test_older_records_read_as_what_they_were_trained_with() -> None:
    """Records written before ``activation`` and ``training_set`` existed (the shipped paper seeds 0-2)
    were trained with the tanh GELU on fresh batches and a 2,048-row table: PAPER_V1."""
    old = PAPER_V1.to_json()
    del old["activation"], old["training_set"]
    assert TrainConfig.from_json(old) == PAPER_V1
    assert (PAPER_V1.activation, PAPER_V1.training_set, PAPER_V1.n_positions) == ("gelu_new", None, 2048)
    assert dataclasses.replace(PAPER_V1, activation="gelu", training_set=432_000, n_positions=128) == PAPER


def test_bad_values_are_refused() -> None:
    with pytest.raises(InputError, match="config="):
        get_config("huge")
    with pytest.raises(InputError, match="steps="):
        SMALL.with_overrides(steps=0)
    with pytest.raises(InputError, match="n_embd"):
        TrainConfig.from_json({**SMALL.to_json(), "n_embd": 33})
    with pytest.raises(InputError, match="activation='relu'"):
        dataclasses.replace(SMALL, activation="relu")
    with pytest.raises(InputError, match="training_set=10"):
        dataclasses.replace(SMALL, training_set=10)


def test_n_positions_does_not_change_training() -> None:
    """[A]'s n_positions = 128 and the paper configuration's 2048 give the same initialisation and the
    same first training steps, bit for bit: the table only grows past the 17 positions training reads."""
    pytest.importorskip("transformers")
    import torch

    from ropeproof.verify.studies.training._trainer import new_run, train_step

    tiny = dataclasses.replace(PAPER, n_layer=2, batch_size=8, score_prompts=0)
    runs, losses = [], []
    for n in (128, 2048):  # one after the other: dropout draws from torch's global generator
        runs.append(new_run("number", dataclasses.replace(tiny, n_positions=n), 0, torch.device("cpu")))
        losses.append([train_step(runs[-1]) for _ in range(3)])
    assert losses[0] == losses[1]
    a, b = (run.model.state_dict() for run in runs)
    assert all(torch.equal(a[k], b[k]) for k in a if "embed_positions" not in k)


def test_deviations_from_a_are_listed_field_by_field() -> None:
    """The corrected paper configuration differs from [A]'s only in what no configuration removes; the
    configuration of seeds 0-2 in three more fields, each named."""
    from ropeproof.verify.studies.training._config import PAPER_DEVIATIONS, config_deviations

    assert config_deviations(PAPER) == list(PAPER_DEVIATIONS)
    old = config_deviations(PAPER_V1)[: -len(PAPER_DEVIATIONS)]
    assert [d.split(" =")[0] for d in old] == ["n_positions", "activation", "training_set"]
    assert "fresh balanced batches every step" in old[2] and "'gelu_new'" in old[1]
    assert len(config_deviations(SMALL)) > 6  # the small configuration is not [A]'s


def test_deviations_by_run_names_the_runs_in_a_configuration() -> None:
    from ropeproof.verify.studies.training._config import (
        PAPER_DEVIATIONS,
        deviations_by_run,
        in_a_configuration,
    )

    found = deviations_by_run({"new": PAPER, "old": PAPER_V1, "small": SMALL})
    assert found["in_a_configuration"] == ["new"] and found["remaining"] == list(PAPER_DEVIATIONS)
    assert found["deviations"]["new"] == []
    assert [d.split(" = ")[0] for d in found["deviations"]["old"]] == [
        "n_positions",
        "activation",
        "training_set",
    ]
    assert in_a_configuration(PAPER) and not in_a_configuration(PAPER_V1) and not in_a_configuration(SMALL)


def test_the_training_guide_states_a_configuration_as_it_is() -> None:
    """The guide's sentence on the paper configuration names [A]'s values as the code holds them."""
    from pathlib import Path

    from ropeproof.verify.studies.training._config import A_CONFIGURATION

    guide = (Path(__file__).resolve().parents[4] / "docs" / "guides" / "training.md").read_text()
    text = " ".join(guide.split())
    a = A_CONFIGURATION
    for phrase in (
        f"{a['n_layer']} layers of one {a['n_embd']}-dim head, MLP {a['n_inner']}, exact GELU",
        f"dropout {a['dropout']}, a {a['n_positions']}-row sin/cos table",
        f"learning rate {a['lr']:.0e}".replace("e-04", "e-4"),
        f"{a['warmup_steps']} warm-up steps, {a['steps']:,} steps of {a['batch_size']}",
        f"a fixed training set of {a['training_set']:,} sequences",
        f"{a['eval_prompts']:,} validation prompts",
    ):
        assert phrase in text, phrase
    assert a["activation"] == "gelu" and PAPER.activation == "gelu"


def _theory_section_6() -> str:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[4] / "docs" / "theory.md").read_text()
    start = page.index("## 6. Multi-hop models and [A]'s training")
    return " ".join(page[start : page.index("## 7.", start)].split())


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_theory_section_6_states_the_shipped_paper_runs_as_their_records_hold_them() -> None:
    """docs/theory.md section 6's model and training numbers are those of the shipped paper runs' records:
    the seeds in [A]'s configuration for every field, the seeds trained before with their n_positions."""
    import re

    from ropeproof.verify.studies.training._judging import TASKS, seeds_of, shipped_record

    records = {
        (task, seed): shipped_record(task, "paper", seed).config
        for seed in seeds_of("paper")
        for task in TASKS
    }
    in_a = {k: c for k, c in records.items() if c.n_positions == 128 and c.activation == "gelu"}
    before = {k: c for k, c in records.items() if k not in in_a}
    assert in_a and before  # both kinds are shipped, and the page speaks of both
    text = _theory_section_6()
    fields = {
        r"with (\d+) layers, one head per layer": ("n_layer",),
        r"`n_embd = (\d+)`": ("n_embd",),
        r"GELU MLP of width (\d+)": ("n_inner",),
        r"dropout ([\d.]+),": ("dropout",),
        r"layer-norm epsilon ([\de.-]+)": ("layer_norm_epsilon",),
        r"configuration uses \[A\]'s `n_positions = ([\d,]+)`": ("n_positions",),
        r"learning rate ([\de.-]+)": ("lr",),
        r"betas \(([\d.]+), ([\d.]+)\)": ("betas",),
        r"weight decay ([\de.-]+)\)": ("weight_decay",),
        r"schedule with (\d+) warm-up steps": ("warmup_steps",),
        r"batch (\d+),": ("batch_size",),
        r"a checkpoint every (\d+) steps up to ([\d,]+)": ("checkpoint_every", "steps"),
        r"split ([\d,]+) / ([\d,]+) /": ("training_set", "eval_prompts"),
    }
    for pattern, names in fields.items():
        found = re.search(pattern, text)
        assert found is not None, pattern
        said = [_number(g) for g in found.groups()]
        for config in in_a.values():
            held = list(config.betas) if names == ("betas",) else [getattr(config, n) for n in names]
            assert said == held, (pattern, said, held)
    seeds = re.search(r"shipped paper seeds? (\d+) to (\d+) were trained with `n_positions = ([\d,]+)`", text)
    assert seeds is not None
    low, high, positions = (int(_number(g)) for g in seeds.groups())
    assert {seed for _task, seed in before} == set(range(low, high + 1))
    assert {c.n_positions for c in before.values()} == {positions}
    assert {seed for _task, seed in in_a} == {
        int(s) for s in re.findall(r"\(shipped paper seeds? (\d+)\)", text)
    }
    # no other n_positions anywhere in the section
    stated = {int(_number(x)) for x in re.findall(r"n_positions = ([\d,]+)", text)}
    assert stated == {c.n_positions for c in records.values()}


def test_the_silent_choices_and_the_float16_storage_are_listed_as_the_code_makes_them() -> None:
    """Each sentence of :data:`PAPER_DEVIATIONS` about a choice where [A] is silent is what the code does:
    the shipped weights are float16 files, AdamW decays exactly the tensors of 2 or more dimensions, no
    step clips a gradient, and the validation stream's seeds are not the training stream's."""
    pytest.importorskip("transformers")
    import json
    from pathlib import Path

    import torch

    from ropeproof.verify.studies.training import _trainer as trainer
    from ropeproof.verify.studies.training._config import PAPER_DEVIATIONS
    from ropeproof.verify.studies.training._data import TRAIN, VALIDATION, stream_seed
    from ropeproof.verify.studies.training._trainer import new_run, train_step

    said = " ".join(PAPER_DEVIATIONS)
    for phrase in ("stored rounded to float16", "No gradient clipping", "tensors of 2 or more dimensions",
                   "seeded apart from the training stream", "per-layer pure-heads reading"):  # fmt: skip
        assert phrase in said, phrase
    shipped = Path(trainer.__file__).resolve().parent / "shipped"
    dirs = [d for d in shipped.iterdir() if (d / "config.json").is_file()]
    assert dirs and all(json.loads((d / "config.json").read_text())["dtype"] == "float16" for d in dirs)
    for d in dirs:  # the safetensors header names every tensor's dtype
        raw = (d / "model.safetensors").read_bytes()
        header = json.loads(raw[8 : 8 + int.from_bytes(raw[:8], "little")])
        assert {v["dtype"] for k, v in header.items() if k != "__metadata__"} == {"F16"}, d
    tiny = dataclasses.replace(PAPER, n_layer=2, batch_size=8, score_prompts=0)
    run = new_run("number", tiny, 0, torch.device("cpu"))
    groups = run.optimizer.param_groups
    decayed = {id(p) for g in groups if g["weight_decay"] > 0 for p in g["params"]}
    assert decayed == {id(p) for p in run.model.parameters() if p.ndim >= 2}
    assert decayed and any(p.ndim < 2 for p in run.model.parameters())
    # no clipping: torch's clipping functions are never called in a step, and the trainer names none
    import inspect

    calls: list[str] = []
    originals = {name: getattr(torch.nn.utils, name) for name in ("clip_grad_norm_", "clip_grad_value_")}
    for name, original in originals.items():
        setattr(torch.nn.utils, name, lambda *a, _n=name, _f=original, **k: calls.append(_n) or _f(*a, **k))
    try:
        train_step(run)
    finally:
        for name, original in originals.items():
            setattr(torch.nn.utils, name, original)
    assert "clip" not in inspect.getsource(trainer)
    assert calls == []
    assert all(stream_seed(0, VALIDATION, k) != stream_seed(0, TRAIN, k) for k in range(64))

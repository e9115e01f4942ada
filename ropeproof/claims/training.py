"""Claims about trained models: the shipped ``small`` checkpoints (``ropeproof train TASK --config small
--seed 0``) and [A]'s reported observations on training (``docs/theory.md`` section 6), with verdicts
computed from the shipped run records and weights.

- ``training.small-accuracy``: the shipped checkpoints answer the held-out prompts (pinned where the
  ``hf`` extra is installed);
- ``training.hop-by-hop``, ``training.letter-simultaneous``, ``training.layer-roles``,
  ``training.letter-last-layer``, ``training.pure-heads``, ``training.uniform-early``,
  ``training.length``, ``training.frequencies``: [A]'s observations, ``open`` (reported, not pinned:
  they describe one small seeded run, not [A]'s models).
"""

from __future__ import annotations

import importlib.util
import itertools
from typing import Any

from ropeproof.claims.registry import CheckContext, ClaimSet, Outcome, Quick
from ropeproof.verify.training.observations import (
    HOPS,
    best_evaluation,
    evaluation_at,
    first_learned_steps,
    layer_depth_groups,
    layer_labels,
)
from ropeproof.verify.training.trainer import TrainingRecord, load_record

CLAIMS = ClaimSet(
    "training",
    section="Theory meets training: small trained GPT-J models ([A]'s set-up)",
    report_figures=(
        "training_accuracy",
        "training_ps_paths",
        "training_ps_final",
        "training_length",
        "training_frequencies",
        "training_theory",
    ),
)
"""The training claims, in report order."""

HAS_HF = importlib.util.find_spec("transformers") is not None


def shipped_record(task: str) -> TrainingRecord:
    """The run record of the shipped small checkpoint of ``task`` (needs no transformers)."""
    from ropeproof.verify.training.shipped import shipped_path

    return load_record(shipped_path(task))


def _shipped(task: str) -> Any:
    from ropeproof.verify.training.shipped_memo import shared_shipped

    return shared_shipped(task)


def _validation(task: str, count: int) -> Any:
    from ropeproof.verify.training.data import VALIDATION, TaskEncoder

    record = shipped_record(task)
    return TaskEncoder(task).draw(count, record.seed, VALIDATION, 0)


@CLAIMS.claim(
    id="training.small-accuracy",
    statement=(
        "The shipped small checkpoints (number and letter task, weights stored in float16) answer at least "
        "{min_accuracy} of {prompts} held-out balanced 17-token prompts correctly for each hop count 1-4."
    ),
    reference="docs/theory.md section 6 ([A]'s set-up); ropeproof train --config small",
    params={"prompts": Quick(400, 100), "min_accuracy": 0.95},
    expected="holds" if HAS_HF else "open",
    meaning="The small configuration really learns both tasks on a CPU, and the shipped weights show it.",
)
def _small_accuracy(ctx: CheckContext) -> Outcome:
    if not HAS_HF:
        return Outcome("unresolvable", detail="transformers is not installed (the hf extra)")
    from ropeproof.verify.training.evaluation import accuracy_per_hop

    figures: dict[str, Any] = {}
    for task in ("number", "letter"):
        acc = accuracy_per_hop(_shipped(task).model, _validation(task, ctx.params["prompts"]))
        figures[task] = {str(h): acc[h] for h in HOPS}
    worst = min(v for t in ("number", "letter") for v in figures[t].values())
    figures["min_accuracy_per_hop"] = worst
    return Outcome.judge(
        worst >= ctx.params["min_accuracy"],
        figures,
        key_figure="min_accuracy_per_hop",
        counterexample=figures,
    )


@CLAIMS.claim(
    id="training.hop-by-hop",
    statement=(
        "On the number task, hop counts are learned in order: the first checkpoint reaching validation "
        "accuracy {threshold} is no earlier for h + 1 hops than for h hops (h = 1..3), and 4 hops comes "
        "strictly after 1 hop, in the shipped small run."
    ),
    reference="[A] as reported (docs/theory.md section 6: number-task accuracy rises hop by hop)",
    params={"threshold": 0.9},
    expected="open",
    meaning="Whether the small model learns the number task one hop count at a time, as [A] reports.",
)
def _hop_by_hop(ctx: CheckContext) -> Outcome:
    first = first_learned_steps(shipped_record("number"), ctx.params["threshold"])
    steps = [first[h] for h in HOPS]
    ok = None not in steps and all(a <= b for a, b in itertools.pairwise(steps)) and steps[0] < steps[-1]
    return Outcome.judge(
        bool(ok), {"first_learned_step": first}, key_figure="first_learned_step", counterexample=first
    )


@CLAIMS.claim(
    id="training.letter-simultaneous",
    statement=(
        "On the letter task, all hop counts 1-4 first reach validation accuracy {threshold} at the same "
        "checkpoint of the shipped small run."
    ),
    reference="[A] as reported (docs/theory.md section 6: letter-task hop counts rise together)",
    params={"threshold": 0.9},
    expected="open",
    meaning="Whether the small model learns all letter-task hop counts together, as [A] reports.",
)
def _letter_simultaneous(ctx: CheckContext) -> Outcome:
    first = first_learned_steps(shipped_record("letter"), ctx.params["threshold"])
    ok = None not in first.values() and len(set(first.values())) == 1
    return Outcome.judge(
        ok, {"first_learned_step": first}, key_figure="first_learned_step", counterexample=first
    )


@CLAIMS.claim(
    id="training.layer-roles",
    statement=(
        "In the shipped small number model's best checkpoint, some middle layer is positional and some deep "
        "layer is symbolic by [A]'s layer-swap scores on 100 prompts (positional: S_pos > 0.5 > S_sym; "
        "symbolic: S_sym > 0.5 > S_pos; middle and deep: [A]'s layers 3-6 and 9-11 of 12 mapped by "
        "relative depth), and no layer of the letter model is positional."
    ),
    reference="[A] as reported (docs/theory.md section 6: positional middle layers, symbolic deep layers)",
    expected="open",
    meaning="Whether the small models split into positional and symbolic layers where [A] found them.",
)
def _layer_roles(ctx: CheckContext) -> Outcome:
    number, letter = shipped_record("number"), shipped_record("letter")
    labels = layer_labels(best_evaluation(number))
    groups = layer_depth_groups(number.config.n_layer)
    letter_labels = layer_labels(best_evaluation(letter))
    ok = (
        any(labels[i] == "positional" for i in groups["middle"])
        and any(labels[i] == "symbolic" for i in groups["deep"])
        and "positional" not in letter_labels
    )
    figures = {
        "number_labels": labels,
        "letter_labels": letter_labels,
        "groups": groups,
        "number_S_pos": best_evaluation(number)["dynamics"]["S_pos"],
        "number_S_sym": best_evaluation(number)["dynamics"]["S_sym"],
    }
    return Outcome.judge(ok, figures, key_figure="number_labels", counterexample=figures)


@CLAIMS.claim(
    id="training.letter-last-layer",
    statement=(
        "Zeroing the last layer's attention output of the shipped small letter model drops its accuracy "
        "below {max_accuracy} for every hop count 1-4 ({prompts} held-out prompts)."
    ),
    reference="[A] as reported (docs/theory.md section 6: the last head is needed for every hop count)",
    params={"prompts": Quick(400, 100), "max_accuracy": 0.5},
    expected="open",
    meaning="Whether the small letter model, like [A]'s, needs its last head for every hop count.",
)
def _letter_last_layer(ctx: CheckContext) -> Outcome:
    if not HAS_HF:
        return Outcome("unresolvable", detail="transformers is not installed (the hf extra)")
    from ropeproof.verify.training.evaluation import ablated_accuracy_per_hop

    shipped = _shipped("letter")
    layer = shipped.model.config.n_layer - 1
    acc = ablated_accuracy_per_hop(shipped.model, _validation("letter", ctx.params["prompts"]), layer)
    per_hop = {str(h): acc[h] for h in HOPS}
    worst = max(per_hop.values())
    figures = {"ablated_accuracy": per_hop, "max_ablated_accuracy": worst, "layer": layer}
    return Outcome.judge(worst < ctx.params["max_accuracy"], figures, key_figure="max_ablated_accuracy")


@CLAIMS.claim(
    id="training.pure-heads",
    statement=(
        "Every layer of the shipped small number and letter models' best checkpoints is pure: "
        "|S_pos - S_sym| >= {min_gap} by [A]'s layer-swap scores on 100 prompts."
    ),
    reference="[A] as reported (docs/theory.md section 6: the best models have pure heads)",
    params={"min_gap": 0.5},
    expected="open",
    meaning="Whether the trained heads are clearly positional or clearly symbolic, as in [A]'s best models.",
)
def _pure_heads(ctx: CheckContext) -> Outcome:
    gaps: dict[str, list[float]] = {}
    for task in ("number", "letter"):
        dyn = best_evaluation(shipped_record(task))["dynamics"]
        gaps[task] = [abs(p - s) for p, s in zip(dyn["S_pos"], dyn["S_sym"], strict=True)]
    smallest = min(min(g) for g in gaps.values())
    return Outcome.judge(
        smallest >= ctx.params["min_gap"],
        {"gaps": gaps, "min_gap": smallest},
        key_figure="min_gap",
        counterexample=gaps,
    )


@CLAIMS.claim(
    id="training.uniform-early",
    statement=(
        "Early in training heads are near-uniform: at the first checkpoint after training starts, every "
        "layer of both shipped small runs scores S_pos >= {level} and S_sym >= {level} (at step 0 too), "
        "with normalised attention entropy >= {entropy}."
    ),
    reference="[A] as reported (docs/theory.md section 6: early heads score high on both scores)",
    params={"level": 0.9, "entropy": 0.9},
    expected="open",
    meaning="Whether the small models pass through [A]'s near-uniform phase at the start of training.",
)
def _uniform_early(ctx: CheckContext) -> Outcome:
    level, ent = ctx.params["level"], ctx.params["entropy"]
    figures: dict[str, Any] = {}
    ok = True
    for task in ("number", "letter"):
        record = shipped_record(task)
        for step in (0, record.config.checkpoint_every):
            dyn = evaluation_at(record, step)["dynamics"]
            good = [
                p >= level and s >= level and e >= ent
                for p, s, e in zip(dyn["S_pos"], dyn["S_sym"], dyn["entropy"], strict=True)
            ]
            figures[f"{task}_step{step}_uniform_layers"] = sum(good)
            figures[f"{task}_step{step}"] = dyn
            ok &= all(good)
    figures["n_layers"] = shipped_record("number").config.n_layer
    return Outcome.judge(
        ok,
        figures,
        key_figure=f"number_step{shipped_record('number').config.checkpoint_every}_uniform_layers",
    )


@CLAIMS.claim(
    id="training.length",
    statement=(
        "Length generalisation of the shipped small models on the 'distractors' build ({count} inputs per "
        "length, n in {lengths}): the letter model keeps accuracy >= 0.9 at every n <= 850 ([A]: above 90% "
        "up to 850 tokens) and the number model is below 0.5 at every n >= 64 ([A]: it fails soon after "
        "the training length)."
    ),
    reference="[A] as reported (docs/theory.md sections 5 and 6: length generalisation)",
    params={"count": Quick(64, 8), "lengths": Quick((17, 32, 64, 128, 256, 512, 850, 1024), (17, 64, 850))},
    expected="open",
    meaning="Whether small trained models generalise in length the way [A]'s did.",
)
def _length(ctx: CheckContext) -> Outcome:
    if not HAS_HF:
        return Outcome("unresolvable", detail="transformers is not installed (the hf extra)")
    from ropeproof.verify.training.lengths import last_length_above
    from ropeproof.verify.training.shipped_memo import length_accuracy_row

    lengths, count = list(ctx.params["lengths"]), ctx.params["count"]
    rows = {t: [length_accuracy_row(t, n, count) for n in lengths] for t in ("number", "letter")}
    letter_ok = all(r["accuracy"] >= 0.9 for r in rows["letter"] if r["n"] <= 850)
    number_ok = all(r["accuracy"] < 0.5 for r in rows["number"] if r["n"] >= 64)
    figures = {
        "letter_last_length_at_0.9": last_length_above(rows["letter"], 0.9),
        "number_last_length_at_0.9": last_length_above(rows["number"], 0.9),
        "accuracy": {t: {r["n"]: r["accuracy"] for r in rows[t]} for t in rows},
    }
    return Outcome.judge(
        letter_ok and number_ok, figures, key_figure="letter_last_length_at_0.9", counterexample=figures
    )


@CLAIMS.claim(
    id="training.frequencies",
    statement=(
        "[A] reports Index heads on a high frequency (id 2, theta 0.8660) and Retrieval heads on a very low "
        "one (id 42, theta 0.0027). In the shipped small models (on {prompts} prompts), the plane with the "
        "largest logit share in the number model's first layer has theta >= 0.5, and in the letter model's "
        "last layer theta <= 0.05."
    ),
    reference="[A] and [B] as reported (docs/theory.md sections 2, 5 and 6: frequency ids 2 and 42)",
    params={"prompts": Quick(100, 20)},
    expected="open",
    meaning="Whether trained heads use the frequencies [A] found: high for pointer heads, low for lookups.",
)
def _frequencies(ctx: CheckContext) -> Outcome:
    if not HAS_HF:
        return Outcome("unresolvable", detail="transformers is not installed (the hf extra)")
    from ropeproof.verify.training.head_theory import dominant_plane
    from ropeproof.verify.training.shipped_memo import frequency_profile_rows

    figures: dict[str, Any] = {}
    for task in ("number", "letter"):
        figures[task] = []
        for layer in range(_shipped(task).model.config.n_layer):
            top = dominant_plane(frequency_profile_rows(task, ctx.params["prompts"], layer))
            figures[task].append(
                {k: top[k] for k in ("layer", "freq_id", "theta", "share", "S_pos", "S_sym")}
            )
    first, last = figures["number"][0]["theta"], figures["letter"][-1]["theta"]
    figures["number_first_layer_theta"], figures["letter_last_layer_theta"] = first, last
    return Outcome.judge(
        first >= 0.5 and last <= 0.05, figures, key_figure="letter_last_layer_theta", counterexample=figures
    )

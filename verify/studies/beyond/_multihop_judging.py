"""Judging the multi-hop statements ([A]'s decomposition, ``docs/theory.md`` section 6) on the exported
checkpoints' compiled programs: the chain coefficient against the real models' channels, the certified
horizons (interval and exact arithmetic), the length study against the certificates, [A]'s per-layer
scores, and the exported checkpoints read back by ``transformers`` alone.

The programs are those of :mod:`ropeproof.verify.studies.beyond._checkpoint_solvers`, compiled once per run
(the run's :class:`~ropeproof.machinery._result_store.ResultStore`); the claims in
:mod:`ropeproof.claims._multihop` state what is judged and call these.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.constructions._paper import TASK_LENGTH
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.theory._multihop import chain_coefficient, standard_chain_coefficient
from ropeproof.verify.interop._errors import ExportError
from ropeproof.verify.interop.hf._converters import CONVERTERS
from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers
from ropeproof.verify.kernel._multilayer import model_module
from ropeproof.verify.measure._layer_scores import layer_ps_scores
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.measure._tasks import TaskInstance, letter_task, number_task
from ropeproof.verify.measure.exact._multihop_certified import (
    BASIC,
    MultiHopCertificate,
    certificate_steps,
    certified_horizon,
    horizon_witness,
)
from ropeproof.verify.studies.beyond._checkpoint_solvers import (
    CHECKPOINT_MODEL,
    DEFAULT_CERTIFICATES,
    DEFAULT_CHECKPOINTS,
    DEFAULT_MAX_LENGTH,
    CheckpointSpec,
)
from ropeproof.verify.studies.beyond._multihop_length import HOPS, LAYERS, STANDARD_STUDY

CHAIN_RELATIVE_TOLERANCE = 1e-9
"""The largest relative difference :func:`recursion_outcome` allows between a chain's channel at the last
position and the chain coefficient times the answer's code: the attention the hop layers leak off their
targets (bounded by the certified margins at the programs' logit scale) plus float64 rounding."""

PS_LAYER_KINDS: tuple[tuple[str, str, str], ...] = (
    ("number", "index", "positional"),
    ("letter", "retrieval", "symbolic"),
)
"""``(task, layer kind, label every such layer must get)`` judged by :func:`ps_layers_outcome`."""

PARITY_INPUTS = 16
"""How many of :func:`hf_parity_outcome`'s inputs are also compared layer by layer."""

HF_PARITY_ARCH = "gptj"
"""The architecture :func:`hf_parity_outcome` exports ([A]'s GPT-J)."""


def checkpoint_model(store: ResultStore, task: str, hops: int = HOPS, layers: int = LAYERS) -> CompiledModel:
    """The smallest checkpoint's compiled program (``layers`` layers, ``hops`` hop layers, widths 6 and 8),
    compiled once per run (the run's store)."""
    return store.get(CHECKPOINT_MODEL, task=task, hops=hops, layers=layers)


def default_checkpoint(
    store: ResultStore, task: str, arch: str, hops: int = HOPS, layers: int = LAYERS
) -> tuple[CheckpointSpec, CompiledModel]:
    """What ``ropeproof export-model ARCH TASK`` compiles by default (the best solver, width 128, built
    for :data:`~ropeproof.verify.studies.beyond._checkpoint_solvers.DEFAULT_MAX_LENGTH` tokens) and its
    compiled model, compiled once per run (the run's store; architectures with the same spectrum share
    the program)."""
    by_arch = store.get(
        DEFAULT_CHECKPOINTS, task=task, max_length=DEFAULT_MAX_LENGTH, hops=hops, layers=layers
    )
    if arch not in by_arch:
        raise InputError(f"arch={arch!r} is unknown; accepted: {list(by_arch)}")
    return by_arch[arch]


def default_certificates(
    store: ResultStore, task: str, hops: int = HOPS, layers: int = LAYERS
) -> dict[str, MultiHopCertificate]:
    """``{arch: certificate}`` of :func:`default_checkpoint`'s compiled models, searched to their design
    length (what ``export_model`` certifies), certified once per run (the run's store)."""
    return store.get(DEFAULT_CERTIFICATES, task=task, max_length=DEFAULT_MAX_LENGTH, hops=hops, layers=layers)


def task_inputs(
    task: str, count: int, hops: Sequence[int] = (1, 2, 3, 4), seed: int = 0
) -> list[TaskInstance]:
    """``count`` of [A]'s inputs of ``task`` (``"number"`` or ``"letter"``) with the given hop counts."""
    if task not in ("number", "letter"):
        raise InputError(f"task={task!r} is unknown; accepted: 'number', 'letter'")
    return (number_task if task == "number" else letter_task)(count, hops=tuple(hops), seed=seed)


def recursion_outcome(
    store: ResultStore, device: torch.device, inputs_per_hop: int, hops: int = HOPS, layers: int = LAYERS
) -> Outcome:
    """The in-place recursion on the smallest checkpoints: the chain coefficient of ``hops`` hop layers
    then Reflexive layers (:func:`~ropeproof.theory._multihop.chain_coefficient` of the layer pattern)
    equals the closed form (:func:`~ropeproof.theory._multihop.standard_chain_coefficient`) for every
    ``h = 1 .. hops``, and, on ``inputs_per_hop`` inputs of ``h`` hops (seed ``h``) of each task, the
    channel dims of the last position after the last layer (float64 on ``device``) equal the coefficient
    times the answer's unembedding row, to relative :data:`CHAIN_RELATIVE_TOLERANCE` (the largest absolute
    difference over inputs and dims divided by the coefficient).

    Figures: the coefficients and the largest relative error (the key figure). The counterexample is the
    coefficients, the closed form and the largest error."""
    pattern = [True] * hops + [False] * (layers - hops)
    counts = range(1, hops + 1)
    coeffs = {h: chain_coefficient(pattern, h) for h in counts}
    closed = {h: standard_chain_coefficient(hops, layers, h) for h in counts}
    worst = 0.0
    for task in ("number", "letter"):
        model = checkpoint_model(store, task, hops, layers)
        module = model_module(model, device, "float64")
        chan = model.feature_dims("channel")
        for h in counts:
            insts = task_inputs(task, inputs_per_hop, (h,), seed=h)
            res = module.run([i.tokens for i in insts])
            got = res.residual[-1, :, -1, chan].double().cpu().numpy()
            want = np.stack([coeffs[h] * model.W_U[chan, model.token_index(i.answer)] for i in insts])
            worst = max(worst, float(np.abs(got - want).max() / coeffs[h]))
    ok = coeffs == closed and worst <= CHAIN_RELATIVE_TOLERANCE
    return Outcome.judge(
        ok,
        {"chain_coefficients": coeffs, "max_relative_channel_error": worst},
        key_figure="max_relative_channel_error",
        counterexample={"coefficients": coeffs, "closed_form": closed, "worst": worst},
    )


def certified_outcome(
    store: ResultStore, task: str, hops: int, max_n: int, layers: int = LAYERS, needed: int = TASK_LENGTH
) -> Outcome:
    """The smallest checkpoint's program of ``task`` is certified (interval arithmetic,
    :func:`~ropeproof.verify.measure.exact._multihop_certified.certified_horizon` searched to ``max_n``)
    correct on every input with ``1 .. hops`` hops up to a horizon of at least ``needed`` tokens.

    Figures: the certified horizon (the key figure), that of the first version of the certificate
    (:data:`~ropeproof.verify.measure.exact._multihop_certified.BASIC`), the model's width, the width of
    its GPT-J checkpoint (the next even width above ``d_model``), the logit scale, the chain coefficient,
    the certificate's summary, the horizon with each refinement left out
    (:func:`~ropeproof.verify.measure.exact._multihop_certified.certificate_steps`) and the limiting
    layer's worst-case chain row at the first undecided length (the counterexample too)."""
    model = checkpoint_model(store, task, hops, layers)
    cert = certified_horizon(model, hops, max_n=max_n)
    basic = certified_horizon(model, hops, max_n=max_n, **BASIC)
    witness = horizon_witness(model, cert)
    figures: dict[str, Any] = {
        "certified_horizon": cert.horizon,
        "basic_horizon": basic.horizon,
        "d_model": model.d_model,
        "gptj_width": model.d_model + 1 + (model.d_model + 1) % 2,
        "logit_scale": model.logit_scale,
        "chain_coefficient": cert.coefficient,
        "certificate": cert.summary(),
        "certificate_steps": certificate_steps(model, hops, max_n, known=(cert, basic)),
        "where_the_proof_stops": witness,
    }
    return Outcome.judge(
        cert.horizon >= needed,
        figures,
        key_figure="certified_horizon",
        counterexample=witness,
        detail=(
            "Leaked attention bounded from each layer's exact margins (a sum over offsets where the keys "
            "are all alike), propagated per chain position through the residual stream and read out "
            "against the code's radius (theory/_multihop_bound.py), enclosed with Arb balls (python-flint); "
            "'certificate_steps' gives the horizon with each refinement left out, 'where_the_proof_stops' "
            "the limiting layer's worst-case chain row at the first undecided length."
        ),
        certified=True,
    )


def certified_long_outcome(store: ResultStore, hops: int, max_n: int, layers: int = LAYERS) -> Outcome:
    """The default checkpoints' programs (:func:`default_checkpoint`) of both tasks and every registered
    architecture (:data:`~ropeproof.verify.interop.hf._converters.CONVERTERS`) are certified, in exact
    arithmetic, with a complete certificate whose horizon is ``max_n``.

    Figures: per ``task-arch`` the certificate's summary and the checkpoint's; the smallest horizon (the
    key figure). The counterexample is the figures."""
    figures: dict[str, Any] = {}
    ok = True
    for task in ("number", "letter"):
        certs = default_certificates(store, task, hops, layers) if max_n == DEFAULT_MAX_LENGTH else {}
        for arch in CONVERTERS:
            spec, model = default_checkpoint(store, task, arch, hops, layers)
            cert = certs[arch] if arch in certs else certified_horizon(model, hops, max_n=max_n)
            figures[f"{task}-{arch}"] = {**cert.summary(), "checkpoint": spec.summary()}
            ok &= cert.complete and cert.horizon == max_n
    figures["min_horizon"] = min(v["horizon"] for v in figures.values())
    return Outcome.judge(ok, figures, key_figure="min_horizon", counterexample=figures, certified=True)


def length_outcome(store: ResultStore, quick: bool) -> Outcome:
    """The standard length study
    (:data:`~ropeproof.verify.studies.beyond._multihop_length.STANDARD_STUDY`, quick or full) against the
    certificates: no row at a length up to its certified horizon has a sampled or decoy accuracy below 1
    (a *violation*), and every first failure's witness is in the checkpoint's vocabulary and exact.

    Figures: the settings' summaries, the side-by-side table, the first failure's length per
    ``setting/build`` (the key figure), the number of violations, the inputs answered and the rows past
    the certified horizon whose interval's upper end is below 25%. The counterexample is the first three
    violations."""
    study = store.get(STANDARD_STUDY, quick=quick)
    violations = [
        r
        for r in study["rows"]
        if r["n"] <= r["certified_horizon"] and (r["accuracy"] < 1.0 or r["decoy_accuracy"] < 1.0)
    ]
    summary = study["summary"]
    first = {
        f"{k}/{b}": (v["measured"][b]["first_failure"] or {}).get("n")
        for k, v in summary.items()
        for b in v["measured"]
    }
    witnesses_ok = all(f["witness"]["in_vocabulary"] and f["witness"]["exact"] for f in study["failures"])
    figures = {
        "settings": summary,
        "side_by_side": study["side_by_side"],
        "first_failure_n": first,
        "violations": len(violations),
        "inputs_answered": sum(r["inputs"] for r in study["rows"]),
        "rows_below_25_past_horizon": sum(
            r["n"] > r["certified_horizon"] and r["accuracy_ci"][1] < 0.25 for r in study["rows"]
        ),
    }
    return Outcome.judge(
        not violations and witnesses_ok,
        figures,
        key_figure="first_failure_n",
        counterexample=violations[:3],
        detail="A violation would be a wrong answer at a certified length: a bug in the proof or the code.",
    )


def ps_layers_outcome(
    store: ResultStore,
    device: torch.device,
    count: int,
    tau: float,
    scored_layers: int,
    hops: int = HOPS,
    layers: int = LAYERS,
) -> Outcome:
    """[A]'s layer-input swap scores (:func:`~ropeproof.verify.measure._layer_scores.layer_ps_scores`,
    ``tau``, ``count`` inputs with 1-4 hops) of the first ``scored_layers`` layers of the smallest
    checkpoints' programs: for each ``(task, kind, label)`` of :data:`PS_LAYER_KINDS`, every scored layer
    of that kind gets that label.

    Figures: each task's per-layer scores, the smallest ``S_pos`` of an Index layer (the key figure) and
    the smallest ``S_sym`` of a Retrieval layer. The counterexample is the figures."""
    figures: dict[str, Any] = {}
    ok = True
    for task, kind, want in PS_LAYER_KINDS:
        model = checkpoint_model(store, task, hops, layers)
        scores = layer_ps_scores(
            model, task_inputs(task, count), tau, device, layers=list(range(scored_layers))
        )
        figures[task] = [s.as_dict() for s in scores]
        ok &= all(s.label == want for s in scores if s.kind == kind)
    figures["min_index_S_pos"] = min(s["S_pos"] for s in figures["number"] if s["kind"] == "index")
    figures["min_retrieval_S_sym"] = min(s["S_sym"] for s in figures["letter"] if s["kind"] == "retrieval")
    return Outcome.judge(ok, figures, key_figure="min_index_S_pos", counterexample=figures)


def _hf_task(transformers: Any, model: CompiledModel, task: str, count: int) -> dict[str, Any]:
    """Export ``model`` as :data:`HF_PARITY_ARCH`, load it with transformers alone and answer ``count``
    prompts (seed 7) greedily; layer-by-layer parity on the first :data:`PARITY_INPUTS`."""
    from ropeproof.verify.interop.hf._model_export import export_model
    from ropeproof.verify.interop.hf._model_parity import model_parity
    from ropeproof.verify.measure._tokenizer import prompt_text

    insts = task_inputs(task, count, seed=7)
    with tempfile.TemporaryDirectory() as tmp:
        export_model(model, HF_PARITY_ARCH).save_pretrained(tmp)
        tok = transformers.AutoTokenizer.from_pretrained(tmp)
        lm = transformers.AutoModelForCausalLM.from_pretrained(tmp, attn_implementation="eager")
        enc = tok([prompt_text(i.tokens) for i in insts], return_tensors="pt")
        gen = lm.generate(**enc, max_new_tokens=1, do_sample=False)
        answers = tok.batch_decode(gen[:, -1:])
    accuracy = float(np.mean([a == i.answer.lower() for a, i in zip(answers, insts, strict=True)]))
    parity = model_parity(
        export_model(model, HF_PARITY_ARCH), model, [i.tokens for i in insts[:PARITY_INPUTS]]
    )
    return {"accuracy": accuracy, "n_embd": lm.config.n_embd, "parity": parity.summary()}


def _transformers() -> Any | None:
    """The ``transformers`` module, or ``None`` when it cannot be imported (the ``hf`` extra)."""
    try:
        return require_transformers()
    except ExportError:
        return None


NO_TRANSFORMERS = "transformers is not installed (the hf extra)"
"""The detail of the ``unresolvable`` outcome of the checks that need ``transformers``."""


def hf_parity_outcome(store: ResultStore, count: int, hops: int = HOPS, layers: int = LAYERS) -> Outcome:
    """The smallest checkpoints' programs exported as :data:`HF_PARITY_ARCH` and loaded with
    ``AutoModelForCausalLM`` alone answer all of ``count`` 1-4-hop prompts of each task by greedy
    decoding, and match the ropeproof module layer by layer
    (:func:`~ropeproof.verify.interop.hf._model_parity.model_parity`, its derived float32 tolerances) on
    the first :data:`PARITY_INPUTS`; ``unresolvable`` without transformers.

    Figures: per task the accuracy, the exported width and the parity summary; the smallest accuracy (the
    key figure). The counterexample is the figures."""
    transformers = _transformers()
    if transformers is None:
        return Outcome("unresolvable", detail=NO_TRANSFORMERS)
    figures: dict[str, Any] = {}
    ok = True
    with quiet_progress():
        for task in ("number", "letter"):
            figures[task] = _hf_task(transformers, checkpoint_model(store, task, hops, layers), task, count)
            ok &= figures[task]["accuracy"] == 1.0 and figures[task]["parity"]["ok"]
    figures["min_accuracy"] = min(figures[t]["accuracy"] for t in ("number", "letter"))
    return Outcome.judge(ok, figures, key_figure="min_accuracy", counterexample=figures)


def hf_lengths_outcome(
    store: ResultStore,
    lengths: Sequence[int],
    inputs: Mapping[str | int, int],
    hops: int = HOPS,
    layers: int = LAYERS,
) -> Outcome:
    """The default checkpoints (:func:`default_checkpoint`, both tasks, every registered architecture),
    exported and read back by ``transformers`` alone
    (:func:`~ropeproof.verify.interop.hf._length_check.transformers_length_check`, float32 and float64),
    answer every sampled and decoy prompt of each length of ``lengths`` (``inputs[length]`` prompts of
    each kind; the keys may be strings, as in a claim's JSON parameters); ``unresolvable`` without
    transformers.

    Figures: the rows (without their first wrong answer), the prompts answered, each export's certified
    horizon and the smallest accuracy (the key figure). The counterexample is the first three rows with a
    wrong answer."""
    if _transformers() is None:
        return Outcome("unresolvable", detail=NO_TRANSFORMERS)
    from ropeproof.verify.interop.hf._length_check import transformers_length_check
    from ropeproof.verify.interop.hf._model_export import export_model

    counts = {int(k): v for k, v in inputs.items()}
    missing_counts = [n for n in lengths if n not in counts]
    if missing_counts:
        raise InputError(f"inputs must give a count for every length; missing: {missing_counts}")
    rows: list[dict[str, Any]] = []
    horizons: dict[str, Any] = {}
    for task in ("number", "letter"):
        for arch in CONVERTERS:
            spec, model = default_checkpoint(store, task, arch, hops, layers)
            certificate = default_certificates(store, task, hops, layers)[arch]
            with tempfile.TemporaryDirectory() as tmp:
                exported = export_model(
                    model, arch, notes=spec.notes, certificate=certificate, **spec.export_options()
                )
                exported.save_pretrained(tmp)
                horizons[f"{task}-{arch}"] = exported.certified_horizon
                rows += transformers_length_check(tmp, model, lengths, lambda n: counts[n])
    wrong = [r for r in rows if r["accuracy"] < 1.0]
    figures = {
        "rows": [{k: v for k, v in r.items() if k != "first_wrong"} for r in rows],
        "prompts": sum(r["inputs"] for r in rows),
        "certified_horizons": horizons,
        "min_accuracy": min(r["accuracy"] for r in rows),
    }
    return Outcome.judge(not wrong, figures, key_figure="min_accuracy", counterexample=wrong[:3])

"""Claims about compiled multi-hop models ([A]'s decomposition, ``docs/theory.md`` section 6).

- ``multihop.recursion``: ``h`` hop layers solve every chain of at most ``h`` hops (the chain coefficient,
  and the real models' channels);
- ``multihop.certified-number`` / ``multihop.certified-letter``: the smallest checkpoints' programs (widths 6
  and 8, ``theta = 1``) are certified correct on every input of their family up to 44 tokens (interval
  arithmetic), where the first version of the certificate stopped at 19, with each step's share;
- ``multihop.certified-long``: the compiled models of ``ropeproof export-model``'s default checkpoints (the
  best solver at width 128, every registered architecture) are certified to ``10^4`` in exact arithmetic
  (the saved float32 files are sampled: ``multihop.hf-lengths``);
- ``multihop.length``: measured accuracy against length agrees with the certificates; the first failures a
  sampled search finds (no length skipped; the family's first failure where it meets the certificate) and
  their witnesses, side by side with the certified horizons;
- ``multihop.ps-layers``: Index layers score positional and Retrieval layers symbolic;
- ``multihop.hf-parity``: the exported GPT-J checkpoints answer [A]'s tasks after ``from_pretrained`` and
  match the module layer by layer;
- ``multihop.hf-lengths``: the default checkpoints answer sampled and decoy prompts of 17, 850 and ``10^4``
  tokens through ``AutoModelForCausalLM`` alone, in float32 and float64.
"""

from __future__ import annotations

import importlib.util

from ropeproof.claims._registry import CheckContext, ClaimSet, Outcome, Quick
from ropeproof.constructions._multihop_programs import LOGIT_SCALE
from ropeproof.constructions._paper import TASK_LENGTH
from ropeproof.verify.studies.beyond._checkpoint_solvers import DEFAULT_MAX_LENGTH
from ropeproof.verify.studies.beyond._multihop_judging import (
    HOPS,
    LAYERS,
    certified_long_outcome,
    certified_outcome,
    hf_lengths_outcome,
    hf_parity_outcome,
    length_outcome,
    ps_layers_outcome,
    recursion_outcome,
)
from ropeproof.verify.studies.beyond._multihop_length import length_settings

CLAIMS = ClaimSet(
    "multihop",
    section="Past the papers: compiled multi-hop models ([A]'s decomposition)",
    report_figures=("multihop_length", "multihop_ps_layers"),
)
"""The multi-hop claims, in report order."""

PS_SCORED_LAYERS = Quick(LAYERS, HOPS + 1)
"""How many leading layers ``multihop.ps-layers`` scores: all of them, or (quick) the hop layers and the
first Reflexive layer."""


@CLAIMS.claim(
    id="multihop.recursion",
    statement=(
        "Under the in-place recursion, {hop_layers} Index (or Retrieval) layers then Reflexive layers, "
        "{layers} in all, leave 2^(L - L_I) sum_(k = h..L_I) binom(L_I, k) times the answer's code at the "
        "last position for every chain of h <= {hop_layers} hops, and the compiled checkpoints hold exactly "
        "that (to relative 1e-9) on {inputs_per_hop} of [A]'s 17-token inputs per hop count."
    ),
    reference="[A] (f_NUM, f_LET decomposition); docs/theory.md section 6",
    params={"layers": LAYERS, "hop_layers": HOPS, "inputs_per_hop": 8},
    pins={"chain_coefficients": {1: 3840, 2: 2816, 3: 1280, 4: 256}},
    meaning="h hop layers solve every chain of at most h hops, and the real models carry exactly the "
    "predicted multiple of the answer.",
)
def _recursion(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return recursion_outcome(ctx.store, ctx.device, p["inputs_per_hop"], p["hop_layers"], p["layers"])


_CERTIFIED_MEANING = (
    "Every 1-{hops}-hop input up to {certified_horizon} tokens is proved correct (the model first "
    "fails at 45: offset 44 is within 0.018 rad of 7 turns of theta = 1, claim multihop.length); "
    "'certificate_steps' says which step of the proof loses the most."
)
"""The meaning of the two certified claims multihop.certified-number and multihop.certified-letter."""


@CLAIMS.claim(
    id="multihop.certified-number",
    statement=(
        "The compiled {layers}-layer number model of the width-6 GPT-J checkpoint (Index on theta = 1, logit "
        "scale {logit_scale:g}) answers every input of the number-task family with 1-{hops} hops correctly "
        "at every length up to {certified_horizon} ([A] trains at 17; the first version of the certificate "
        "stopped at {basic_horizon}), certified by interval arithmetic."
    ),
    reference="[A] Thm 3.1 and section 6; this toolkit",
    params={"task": "number", "hops": HOPS, "layers": LAYERS, "logit_scale": LOGIT_SCALE, "max_n": 256},
    pins={"certified_horizon": 44, "basic_horizon": 19},
    meaning=_CERTIFIED_MEANING,
)
def _certified(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return certified_outcome(ctx.store, p["task"], p["hops"], p["max_n"], p["layers"])


CLAIMS.claim(
    id="multihop.certified-letter",
    statement=(
        "The compiled {layers}-layer letter model of the width-8 GPT-J checkpoint (Retrieval on theta = "
        "0.001, logit scale {logit_scale:g}) answers every input of the letter-task family with 1-{hops} "
        "hops correctly at every length up to {certified_horizon} ([A] trains at 17; the first version of "
        "the certificate stopped at {basic_horizon}), certified by interval arithmetic."
    ),
    reference="[A] Thm 3.1 and section 6; this toolkit",
    params={"task": "letter", "hops": HOPS, "layers": LAYERS, "logit_scale": LOGIT_SCALE, "max_n": 256},
    pins={"certified_horizon": 44, "basic_horizon": 19},
    meaning=_CERTIFIED_MEANING,
)(_certified)


@CLAIMS.claim(
    id="multihop.certified-long",
    statement=(
        "The compiled models of ropeproof export-model's default checkpoints (the best solver at width "
        "128, {layers} layers, logit scale 1000, built for {max_n} tokens; number and letter task, every "
        "registered architecture) are certified correct, in exact arithmetic, on every input of their "
        "family with 1-{hops} hops at every length up to {max_n}."
    ),
    reference="[A] section 6; the best heads on a fixed RoPE spectrum; letter codes; this toolkit",
    params={"hops": HOPS, "layers": LAYERS, "max_n": DEFAULT_MAX_LENGTH},
    quick=False,
    pins={"min_horizon": DEFAULT_MAX_LENGTH},
    meaning="The models the default checkpoints hold are proved correct to {max_n} tokens in exact "
    "arithmetic, on their own spectra; the saved float32 files are sampled, not proved (multihop.hf-lengths; "
    "the config's ropeproof_certificate.label says so).",
)
def _certified_long(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return certified_long_outcome(ctx.store, p["hops"], p["max_n"], p["layers"])


@CLAIMS.claim(
    id="multihop.length",
    statement=(
        "The exported checkpoints' programs ([A]'s one-plane solvers, the smallest and the best), run in "
        "float64, answer every sampled and decoy input correctly at every length up to their certified "
        "horizon; past it, a sampled search finds the first length with a wrong answer with no length "
        "skipped (every length between the last all-correct grid length and the failing one probed; the "
        "family's first failure where it meets the certificate) and keeps a witness in the checkpoint's "
        "vocabulary, for lengths {lengths} and inputs built as {builds}. Rows carry anytime-valid 95% "
        "intervals; past the certified horizon a row stops as soon as its interval lies below 25%."
    ),
    reference="[A] length generalisation (docs/theory.md sections 5 and 6); this toolkit",
    params={
        "settings": [s.key for s in length_settings()],
        "builds": Quick("window, distractors, both", "distractors"),
        "lengths": Quick("17..10000", "17..64"),
    },
    pins={"violations": 0},
    meaning="No wrong answer where the proof holds; 'side_by_side' gives, per setting and build, the "
    "certified horizon, the first failure the sampled search found (no length skipped) and the gap between "
    "them (lengths neither proved nor seen to fail), and says in 'reading' whether the failure is proved "
    "first (it meets the certificate); the witnesses' tokens are in the settings' 'first_failure'.",
)
def _length(ctx: CheckContext) -> Outcome:
    return length_outcome(ctx.store, ctx.quick)


@CLAIMS.claim(
    id="multihop.ps-layers",
    statement=(
        "At logit scale 1000, [A]'s layer-input swap score (tau = {tau:g}, {inputs} inputs of {length} "
        "tokens) finds every Index layer of the compiled number model positional (S_pos > 0.5 > S_sym) and "
        "every Retrieval layer of the letter model symbolic (S_sym > 0.5 > S_pos)."
    ),
    reference="[A] Figure 2 and section 6 (per-layer scores); [B] definitions",
    params={"inputs": Quick(100, 20), "tau": 1e-4, "length": TASK_LENGTH},
    meaning="The compiled solvers reproduce [A]'s picture: Index layers positional, Retrieval symbolic.",
)
def _ps_layers(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return ps_layers_outcome(
        ctx.store, ctx.device, p["inputs"], p["tau"], PS_SCORED_LAYERS.resolve(ctx.quick)
    )


@CLAIMS.claim(
    id="multihop.hf-parity",
    statement=(
        "The exported 12-layer GPT-J checkpoints (widths 6 and 8 against [A]'s 128) answer 100% of 1-4-hop "
        "number and letter inputs of 17 tokens by greedy decoding after from_pretrained, and every layer's "
        "scores and attention weights match the ropeproof module within the derived float32 tolerances."
    ),
    reference="[A] section 6 (12-layer GPT-J, one head per layer); docs/theory.md section 1 (layouts)",
    params={"arch": "gptj", "dtype": "float32", "inputs": 48, "length": TASK_LENGTH},
    quick=False,
    # pinned where the hf extra is installed; without transformers the check cannot run
    expected="holds" if importlib.util.find_spec("transformers") else "open",
    meaning="The checkpoints work with transformers alone and agree with ropeproof layer by layer.",
)
def _hf_parity(ctx: CheckContext) -> Outcome:
    return hf_parity_outcome(ctx.store, ctx.params["inputs"])


@CLAIMS.claim(
    id="multihop.hf-lengths",
    statement=(
        "The default checkpoints of ropeproof export-model (best solver, width 128; number and letter task, "
        "GPT-J and LLaMA), loaded with AutoModelForCausalLM and AutoTokenizer alone, answer every sampled "
        "and decoy prompt of {lengths} tokens correctly by greedy decoding, in float32 and float64."
    ),
    reference="[A] section 6 (12-layer GPT-J, one head per layer, width 128); this toolkit",
    params={"lengths": [TASK_LENGTH, 850, DEFAULT_MAX_LENGTH], "inputs": {"17": 8, "850": 2, "10000": 1}},
    quick=False,
    expected="holds" if importlib.util.find_spec("transformers") else "open",
    meaning="The checkpoints a user downloads work at {lengths} tokens with transformers alone.",
)
def _hf_lengths(ctx: CheckContext) -> Outcome:
    return hf_lengths_outcome(ctx.store, ctx.params["lengths"], ctx.params["inputs"])

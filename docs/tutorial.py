# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # ropeproof tutorial: from a construction to a checked, exported head
#
# A Jupytext notebook (open it with `jupytext --to notebook docs/tutorial.py`, or run it as a
# script). Every `assert` below is checked when the test suite runs this file
# (`tests/test_tutorial.py`), so the numbers it states are the numbers it computes. It needs the
# `hf` and `tl` extras for the last section; everything else runs on the core install.
#
# The conventions are `docs/theory.md` section 1: 0-indexed positions, the query is the last
# token, and the logit of query `i` against key `j` is `scale * q_i^T R(j - i) k_j`.

# %% [markdown]
# ## 1. State a construction
#
# T_Index ([A] Thm 3.1) attends `s` positions back from an integer `s`. Here is a variant of our
# own: a second, slower RoPE plane at half amplitude. Tokens, planes and per-token query/key rules
# are all a construction is.

# %%
import tempfile

import sympy as sp
import torch

from ropeproof import Construction, Plane, Rotated, index_construction

THETA, THETA2 = 0.8660, 0.05


def two_plane_index(theta: float, theta2: float, letters: int = 8, max_int: int = 16) -> Construction:
    """T_Index with a second plane: integer s rotates its query by -s * theta_k in both planes."""
    base = index_construction(theta=theta, letters=letters, max_int=max_int)
    t1, t2 = sp.Symbol("theta", real=True), sp.Symbol("theta2", real=True)
    return Construction(
        "index",
        base.tokens,
        (Plane(t1, 1), Plane(t2, sp.Rational(1, 2))),
        {
            "letter": lambda p, k, plane: Rotated(0),
            "integer": lambda p, k, plane: Rotated(-p["s"] * plane.freq),
        },
        base.key_rules,
        base.value,
        base.generic,
        {t1: theta, t2: theta2},
        family=base.family,  # the same inputs as T_Index: the family travels with the construction
    )


construction = two_plane_index(THETA, THETA2)
len(construction.tokens)  # 8 letters and the integers 1..16

# %% [markdown]
# ## 2. Derive its logit
#
# `derive` builds every rule pair's logit in sympy and proves the closed form equal to the raw
# rotated product. In Jupyter the derivation renders as LaTeX.

# %%
from ropeproof import derive

derivation = derive(construction)
integer_vs_letter = derivation.logit("integer", "letter")
print(integer_vs_letter.closed)  # cos(s_q*theta + theta*u) + cos(s_q*theta2 + theta2*u)/2, u = j - i
sym = {x.name: x for x in integer_vs_letter.closed.free_symbols}
peak = integer_vs_letter.closed.subs(sym["u"], -sym["s_q"])  # the key s positions back, j = i - s
assert sp.simplify(peak - sp.Rational(3, 2)) == 0  # both planes at cos(0): the largest logit, 3/2
derivation  # the LaTeX display in a notebook

# %% [markdown]
# ## 3. Compile and run it
#
# Compilation evaluates every entry from sympy into float64 matrices; the torch module runs them.

# %%
from ropeproof import RopeAttention, answer, compile_construction, number_task

head = compile_construction(construction)
tasks = number_task(50, vocab_letters=8, max_int=16, hops=(1,), seed=0)
assert answer(head, [t.tokens for t in tasks], device="cpu") == [t.answer for t in tasks]
module = RopeAttention.from_head(head, device="cpu")
result = module(torch.as_tensor(head.embed([tasks[0].tokens])))
print(result.logits.shape, result.pattern[0, -1].argmax().item(), tasks[0].target_position)

# %% [markdown]
# ## 4. An exact sweep, with its bound
#
# The exact worst-case margin over every input of the Index family, for every length, and the
# witness input that attains it. The one-plane sweep carries [A]'s reported Theorem 3.2 bound and
# judges it: the `pi^2 / (2 n^2)` term is first exceeded at `n = 4`.

# %%
from ropeproof import family_for, sweep_head, sweep_index

two_plane = sweep_head(head, 17, family=family_for(construction))
assert (two_plane.columns["margin_inf"] > 0).all()  # correct at every length 2..17
one_plane = sweep_index(THETA, 100)
bound = one_plane.bound.evaluate(one_plane.columns["n"], THETA)  # min(1 - cos(theta), pi^2 / (2 n^2))
exceeded = one_plane.columns["gap_sup"] > bound
assert one_plane.columns["bound_holds"][2] is False  # judged with rounding tolerance: n = 4 violates
first_exceeded = int(one_plane.columns["n"][exceeded.argmax()])
assert first_exceeded == 4
print(two_plane.witness(17, "margin_inf").tokens[-3:])
one_plane.select(2, 8, 1)  # a table in a notebook; .to_pandas() with pandas installed

# %% [markdown]
# ## 5. A property test
#
# `check_construction` runs the standard battery: closed form against the module in mpmath,
# correctness up to the horizon, and positional exactness. Hypothesis drives it over parameters.

# %%
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof import check_construction


@settings(max_examples=3, deadline=None, derandomize=True)
@given(theta2=st.floats(0.01, 0.1))
def test_second_plane_keeps_index_positional(theta2: float) -> None:
    c = two_plane_index(THETA, theta2, letters=4, max_int=12)
    check_construction(c, lengths=(2, 7, 13), declared="positional")


test_second_plane_keeps_index_positional()

# %% [markdown]
# ## 6. The positional/symbolic score
#
# [A]'s practical score swaps pairs of layer inputs and compares the attention rows. Every key of
# T_Index is the same vector, so the head is exactly positional: `S_pos = 1`.

# %%
from ropeproof import ps_scores
from ropeproof.verify.measure.ps import head_subject

subject = head_subject(head, n_inputs=20, length=17, seed=0)
scores = ps_scores(subject.head, subject.inputs)
assert abs(scores.S_pos - 1) < 1e-12
print(f"S_pos = {scores.S_pos:.6f}, S_sym = {scores.S_sym:.6f}")

# %% [markdown]
# ## 7. A claim of our own
#
# A claim is data plus a check; `ropeproof check --claims FILE --only PATTERN` runs claims from a
# file (see `tests/data/example_claims.py`). In a notebook, run it directly and look at the result.

# %%
from ropeproof.claims import CheckContext, Claim, Outcome, run_claim


def second_plane_widens_margin(ctx: CheckContext) -> Outcome:
    without = sweep_head(compile_construction(two_plane_index(THETA, 0.0)), 17).columns["margin_inf"]
    gain = two_plane.columns["margin_inf"] - without
    return Outcome.judge(
        ok=bool((gain > 0).all()), figures={"min_gain": float(gain.min())}, key_figure="min_gain"
    )


widens = Claim(
    "tutorial.second-plane-widens-margin",
    "The theta2 = 0.05 plane gives T_Index a larger worst-case margin than theta2 = 0 at every length 2..17.",
    "docs/tutorial.py",
    {"theta": THETA, "theta2": THETA2},
    second_plane_widens_margin,
)
claim_result = run_claim(widens, CheckContext(torch.device("cpu"), torch.float64))
assert claim_result.outcome.verdict == "holds"
claim_result  # renders as markdown / HTML in a notebook

# %% [markdown]
# ## 8. Export to HF transformers and TransformerLens
#
# Export never approximates a frequency: it places every plane on a frequency of the target's RoPE
# spectrum, exactly, or says why it cannot. `0.8660` and `0.05` are not integer powers of one ratio,
# so no LLaMA spectrum holds both; the same two planes at frequencies of GPT-J's 128-dim spectrum
# (`10000^(-2k/128)`, `k = 1` and `k = 21`) export everywhere.

# %%
from ropeproof.verify.interop.hf import ExportError, export_head
from ropeproof.verify.interop.tl import export_hooked_transformer, from_hooked_transformer

try:
    export_head(head, "llama")
except ExportError as exc:
    print(str(exc)[:90], "...")

K1, K21 = 10000 ** (-2 / 128), 10000 ** (-42 / 128)  # 0.86596..., 0.04870...
exportable = compile_construction(two_plane_index(K1, K21))
sequences = [t.tokens for t in tasks[:8]]
answers = [t.answer for t in tasks[:8]]
assert answer(exportable, sequences, device="cpu") == answers
llama = export_head(exportable, "llama", logit_scale=100.0)  # a one-layer LlamaForCausalLM
gptj = export_head(exportable, "gptj", logit_scale=100.0)  # k = 1 and k = 21 of rotary_dim 128
assert llama.answer(sequences) == gptj.answer(sequences) == answers

# %% [markdown]
# The TransformerLens export is an attention-only rotary `HookedTransformer`: its hooks
# (`run_with_cache`, activation patching) see exactly the head's scores and pattern. Importing
# the head back with `from_hooked_transformer` and undoing the placement gives the compiled
# matrices again.

# %%
hooked = export_hooked_transformer(exportable, logit_scale=100.0, n_ctx=64)
assert hooked.answer(sequences) == answers
_, cache = hooked.model.run_with_cache(hooked.ids(sequences))
x = torch.as_tensor(exportable.embed(sequences)).float()
ours = RopeAttention.from_head(exportable, device="cpu", dtype="float32")(x)
sharp = torch.softmax(100.0 * ours.logits, dim=-1)  # the export multiplied the logits by 100
assert (cache["blocks.0.attn.hook_pattern"][:, 0] - sharp).abs().max() < 1e-5

imported = from_hooked_transformer(hooked.model, 0, 0, device="cpu", **hooked.info.import_kwargs())
back = hooked.info.to_source(imported)
assert torch.allclose(back.W_Q, torch.as_tensor(exportable.W_Q, dtype=back.W_Q.dtype), atol=1e-5)
with tempfile.TemporaryDirectory() as tmp:
    path = hooked.save(tmp)  # `ropeproof import tl DIR --layer 0 --head 0 --out HEAD` reads this
    print(sorted(p.name for p in path.iterdir()))

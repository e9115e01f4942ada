"""[A] Remark 3.1: a symbolic head cannot implement Index; a positional head cannot implement
Retrieval (searches for failing input pairs, with working constructions as controls)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ropeproof.claims.registry import CheckContext, ClaimSet, Outcome
from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.paper import (
    INDEX_THETA,
    index_construction,
    retrieval_construction,
)
from ropeproof.verify.beyond.impossibility import find_failure_pair
from ropeproof.verify.exact.families import family_for
from ropeproof.verify.runtime.compiled import answer

CLAIMS = ClaimSet("remark3.1")
"""The remark3.1 claims, in report order."""


def _target(tokens: tuple[str, ...], t: int) -> str:
    return tokens[t]


@CLAIMS.claim(
    id="remark3.1.symbolic-cannot-index",
    statement="A purely symbolic head (every plane at theta = 0; also a random NoPE head) cannot implement "
    "Index: a search finds two inputs it does not both answer, while T_Index has none.",
    reference="[A] Remark 3.1; docs/theory.md section 4",
    params={"n": 6, "letters": 4, "max_int": 8, "search_examples": 2000},
)
def _remark_symbolic(ctx: CheckContext) -> Outcome:
    c = index_construction(theta=0.0, letters=4, max_int=8)
    head = compile_construction(c)
    rng = np.random.default_rng(0)
    random_nope = dataclasses.replace(
        head,
        W_Q=rng.standard_normal(head.W_Q.shape) * (head.W_Q != 0),
        W_K=rng.standard_normal(head.W_K.shape) * (head.W_K != 0),
    )
    fam = family_for(c)
    found = {}
    for name, h in (("theta=0 T_Index", head), ("random NoPE", random_nope)):
        fp = find_failure_pair(
            lambda b, h=h: answer(h, b, mode="softmax", dtype=ctx.dtype), fam, 6, _target, "content"
        )
        found[name] = fp
    working = index_construction(theta=INDEX_THETA, letters=4, max_int=8)
    wh = compile_construction(working)
    control = find_failure_pair(
        lambda b: answer(wh, b, dtype=ctx.dtype), family_for(working), 6, _target, "content", 500
    )
    ok = all(fp is not None for fp in found.values()) and control is None
    figures = {f"failure_found[{k}]": v is not None for k, v in found.items()}
    figures["control_T_Index_failure_found"] = control is not None
    example = next((dataclasses.asdict(v) for v in found.values() if v is not None), None)
    figures["example_pair"] = example
    return Outcome.judge(
        ok,
        figures,
        "example_pair",
        counterexample={"not found for": [k for k, v in found.items() if v is None]},
    )


@CLAIMS.claim(
    id="remark3.1.positional-cannot-retrieve",
    statement="A purely positional head (every key the same vector) cannot implement Retrieval: a search "
    "finds two inputs it does not both answer, while T_Retrieval has none.",
    reference="[A] Remark 3.1; docs/theory.md section 4",
    params={"n": 6, "alphabet_size": 4, "search_examples": 2000},
)
def _remark_positional(ctx: CheckContext) -> Outcome:
    c = retrieval_construction(4, 0.01, max_int=2)
    head = compile_construction(c)
    fam = family_for(c)
    found = {}
    for theta in (0.01, 0.3, 1.0):
        h = compile_construction(retrieval_construction(4, theta, max_int=2))
        positional = dataclasses.replace(h, W_K=np.tile(h.W_K[:1], (h.W_K.shape[0], 1)))
        fp = find_failure_pair(
            lambda b, p=positional: answer(p, b, dtype=ctx.dtype), fam, 6, _target, "target"
        )
        found[f"constant keys, theta={theta}"] = fp
    control = find_failure_pair(lambda b: answer(head, b, dtype=ctx.dtype), fam, 6, _target, "target", 500)
    ok = all(fp is not None for fp in found.values()) and control is None
    figures: dict[str, Any] = {f"failure_found[{k}]": v is not None for k, v in found.items()}
    figures["control_T_Retrieval_failure_found"] = control is not None
    figures["example_pair"] = next((dataclasses.asdict(v) for v in found.values() if v is not None), None)
    return Outcome.judge(
        ok,
        figures,
        "example_pair",
        counterexample={"not found for": [k for k, v in found.items() if v is None]},
    )

"""The multi-hop claims: every quick claim holds, with the figures its statement names."""

from __future__ import annotations

import math
import re

import pytest
import torch

from ropeproof.claims._multihop import CLAIMS
from ropeproof.claims._registry import CheckContext, run_claim

CTX = CheckContext(device=torch.device("cpu"), dtype=torch.float64, quick=True)


def test_ids_and_quick_set() -> None:
    ids = [c.id for c in CLAIMS]
    assert ids == [
        "multihop.recursion",
        "multihop.certified-number",
        "multihop.certified-letter",
        "multihop.certified-long",
        "multihop.length",
        "multihop.ps-layers",
        "multihop.hf-parity",
        "multihop.hf-lengths",
    ]
    assert [c.id for c in CLAIMS if not c.quick] == [
        "multihop.certified-long",
        "multihop.hf-parity",
        "multihop.hf-lengths",
    ]


@pytest.mark.parametrize(
    "claim_id", ["multihop.recursion", "multihop.certified-number", "multihop.certified-letter"]
)
def test_quick_claims_hold(claim_id: str) -> None:
    res = run_claim(CLAIMS[claim_id], CTX)
    assert res.outcome.verdict == "holds", res.outcome.detail
    figs = res.outcome.figures
    if claim_id == "multihop.recursion":  # 2^8 sum_{k=h}^4 binom(4, k)
        assert figs["chain_coefficients"] == {1: 3840, 2: 2816, 3: 1280, 4: 256}
    else:
        assert figs["certified_horizon"] == 44 and figs["basic_horizon"] == 19 and res.outcome.certified
        assert abs(44 - 14 * math.pi) < 0.018  # offset 44 nearly aliases with 7 turns of theta = 1
        assert figs["certificate_steps"]["all"]["horizon"] == 44
        assert figs["logit_scale"] == 1000.0
        assert figs["gptj_width"] == (6 if claim_id.endswith("number") else 8)
        stop = figs["where_the_proof_stops"]
        assert stop["n"] == figs["certified_horizon"] + 1 and len(stop["tokens"]) == stop["n"]


def test_length_and_ps_claims_hold() -> None:
    length = run_claim(CLAIMS["multihop.length"], CTX)
    assert length.outcome.verdict == "holds", length.outcome.detail
    assert length.outcome.figures["violations"] == 0
    first = length.outcome.figures["first_failure_n"]
    assert first["number-best/distractors"] is None  # 100% up to 64 in the quick study
    side = length.outcome.figures["side_by_side"]
    for task in ("number", "letter"):  # the smallest checkpoints: certified to 44, first wrong at 45
        assert side[f"{task}-smallest/distractors"] == {
            "certified_horizon": 44,
            "first_failure": 45,
            "gap": 0,
            "reading": "first failure found; no failure below it among lengths proved "
            "(the certificate reaches n - 1)",
        }
    ps = run_claim(CLAIMS["multihop.ps-layers"], CTX)
    assert ps.outcome.verdict == "holds"
    assert ps.outcome.figures["min_index_S_pos"] > 0.5 and ps.outcome.figures["min_retrieval_S_sym"] > 0.5


def test_the_recursion_statement_names_the_tolerance_judged() -> None:
    from ropeproof.verify.studies.beyond._multihop_judging import CHAIN_RELATIVE_TOLERANCE

    stated = re.search(r"\(to relative ([0-9.e+-]+)\)", CLAIMS["multihop.recursion"].statement)
    assert stated is not None and float(stated.group(1)) == CHAIN_RELATIVE_TOLERANCE

"""``ropeproof llm-eval``'s own parsing (lengths, temperature, extra body) and the defaults and sizes
the llm-eval guide (docs/guides/llm-eval.md) states for it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ropeproof._cli import build_parser
from ropeproof.commands._llm_eval import json_object, lengths_list, temperature
from ropeproof.verify.studies.llm_eval._local_models import FULL_SIZES, QUICK_SIZES

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "llm-eval.md"


def test_lengths_take_lists_and_inclusive_ranges() -> None:
    assert lengths_list("8,16,32") == (8, 16, 32)
    assert lengths_list("2:5,8,4") == (2, 3, 4, 5, 8)
    assert lengths_list("10:30:10") == (10, 20, 30)
    for bad in ("1,8", "8:4", "x", "", "2:5:0", "5000"):
        with pytest.raises(argparse.ArgumentTypeError):
            lengths_list(bad)


def test_temperature_and_extra_body() -> None:
    assert temperature("0") == 0.0 and temperature("omit") is None
    assert json_object('{"reasoning_effort": "minimal"}') == {"reasoning_effort": "minimal"}
    for call, bad in ((temperature, "-1"), (temperature, "hot"), (json_object, "[1]"), (json_object, "{")):
        with pytest.raises(argparse.ArgumentTypeError):
            call(bad)


def test_the_guide_states_the_defaults_that_run() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    defaults = vars(sub.choices["llm-eval"].parse_args([]))
    text = " ".join(GUIDE.read_text().split())
    stated = {
        "`--lengths` (default `8,16,32,64,100`": ("lengths", (8, 16, 32, 64, 100)),
        "`--prompts` per draw and length (default 50)": ("prompts", 50),
        "`--draws` (default 5, as [A])": ("draws", 5),
        "`--max-tokens` (default 16)": ("max_tokens", 16),
        "(`--max-retries`, default 8; `--timeout` seconds per attempt, default 60)": ("max_retries", 8),
        "`--concurrency` (default 4)": ("concurrency", 4),
    }
    for phrase, (dest, value) in stated.items():
        assert phrase in text and defaults[dest] == value, phrase
    assert defaults["timeout"] == 60.0 and defaults["temperature"] == 0.0
    assert "50 prompts x 5 draws per task and length, 8 x 2 with `--quick`" in text
    assert FULL_SIZES == {"prompts": 50, "draws": 5} and QUICK_SIZES == {"prompts": 8, "draws": 2}

"""The previous-token example end to end: exact sweeps of every p-RoPE variant, certified bounds, a plot,
a saved head, and an export to ``transformers`` replayed at its worst cases.

Run it (writes under ``OUT``, default ``previous_token_out``)::

    python examples/previous_token/previous_token_walkthrough.py [OUT]

Every step uses ropeproof's public API only. The numbers it prints are what ``docs/guides/examples.md``
shows, and ``tests/test_examples.py`` checks them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from previous_token_head import HALF, PREVIOUS, VARIANTS, previous_token_head, two_token_margin

from ropeproof import (
    check_bound,
    compile_construction,
    export_head,
    plot_sweeps,
    replay_worst_cases,
    required_logit_scale,
    save_figure,
    sweep_head,
)

MAX_N = 2000
"""The lengths every sweep and bound covers: every n = 2 .. MAX_N."""
EXPORT_N = 256
"""The longest input the exported model is asked to answer (its ``max_positions``)."""
EPS = 0.01
"""The exported model's target weight must be at least ``1 - EPS`` (the softmax link)."""


def label(p: float) -> str:
    return {1.0: "RoPE", 0.0: "NoPE"}.get(p, f"{p:g}-RoPE")


def sweeps(max_n: int = MAX_N) -> dict[float, Any]:
    """The exact sweep of every variant over its family: ``margin_inf(n)`` for ``n = 2 .. max_n``."""
    return {p: sweep_head(compile_construction(previous_token_head(p)), max_n) for p in VARIANTS}


def bounds(max_n: int = MAX_N) -> dict[str, Any]:
    """Three bounds, each judged at every length and certified by interval arithmetic:

    - ``costs_little``: 0.75-RoPE's worst margin is at least RoPE's ``n = 2`` margin minus 1e-6;
    - ``keeps_half``: 0.25-RoPE's is at least :data:`HALF`, about half of it (false: the first violation
      and its witness);
    - ``nope``: NoPE's is at most 0 (every offset scores the same).
    """
    full = two_token_margin(1.0)
    return {
        "costs_little": check_bound(
            previous_token_head(0.75), full - 1e-6, max_n, relation=">=", certified=True
        ),
        "keeps_half": check_bound(previous_token_head(0.25), HALF, max_n, relation=">=", certified=True),
        "nope": check_bound(previous_token_head(0.0), 0, 200, relation="<=", certified=True),
    }


def figures(out: Path, swept: dict[float, Any], checked: dict[str, Any]) -> list[Path]:
    """The margins of every variant on one plot (with the half-of-RoPE line), and the false bound's check
    with its violated rows marked; PNG, PDF, CSV and caption each."""
    margins = plot_sweeps(
        {label(p): s for p, s in swept.items()},
        quantity="margin_inf",
        bound=float(HALF),
        name="previous_token_margins",
    )
    check = plot_sweeps({"0.25-RoPE": checked["keeps_half"]}, name="previous_token_keeps_half")
    return [*save_figure(margins, out / "figures"), *save_figure(check, out / "figures")]


def export_and_replay(out: Path, p: float = 0.75, max_n: int = EXPORT_N, eps: float = EPS) -> dict[str, Any]:
    """Export the p-RoPE head as a float64 GPT-J model at the logit scale the softmax link asks for at
    ``max_n`` (``required_logit_scale`` of its worst margin over ``n <= max_n``), replay the family's
    worst case at every length through the saved directory, and ask the model one question with
    ``transformers`` alone."""
    import torch
    import transformers

    construction = previous_token_head(p)
    head = compile_construction(construction)
    margin = float(np.nanmin(sweep_head(head, max_n).columns["margin_inf"]))
    scale = required_logit_scale(margin, max_n, eps)
    path = out / f"gptj_p{p:g}"
    export_head(head, "gptj", logit_scale=scale, dtype="float64", max_positions=max_n).save(path)
    replay = replay_worst_cases(path, head, construction=construction, eps=eps)

    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager")
    prompt = "the cat sat on"
    with torch.no_grad():
        logits = model(**tokenizer(prompt, return_tensors="pt")).logits
    said = tokenizer.convert_ids_to_tokens(int(logits[0, -1].argmax()))
    return {
        "margin": margin,
        "scale": scale,
        "path": path,
        "replay": replay,
        "prompt": prompt,
        "answer": said,
    }


def report(swept: dict[float, Any], checked: dict[str, Any]) -> list[str]:
    """What the sweeps and bounds found, one line each."""
    lines = [f"exact sweep over the {PREVIOUS.name} family, every n = 2..{MAX_N}:"]
    for p, s in swept.items():
        m = s.columns["margin_inf"]
        worst = int(np.argmin(m))
        flat = (
            "the same at every n" if bool((m == m[0]).all()) else f"first at n = {int(s.columns['n'][worst])}"
        )
        lines.append(f"  {label(p):9s} worst margin {m[worst]:.9f} ({flat})")
    little, half, nope = checked["costs_little"], checked["keeps_half"], checked["nope"]
    lines.append(
        f"0.75-RoPE >= RoPE's n = 2 margin - 1e-6: {little.verdict()}, rows {little.comparison.counts()}"
    )
    first = half.summary()["first_violation"]
    lines.append(f"0.25-RoPE >= {HALF}: {half.verdict()}, first violation n = {first['n']} (certified)")
    lines.append(f"  witness: {first['witness']['description']}")
    lines.append(f"NoPE <= 0: {nope.verdict()}, rows {nope.comparison.counts()}")
    return lines


def main(out: str | Path = "previous_token_out", export: bool = True) -> dict[str, Any]:
    """Run every step, print what it found, and return the results."""
    out = Path(out)
    swept, checked = sweeps(), bounds()
    lines = report(swept, checked)
    written = figures(out, swept, checked)
    lines.append(f"figures: {', '.join(p.name for p in written if p.suffix == '.png')}")
    saved = compile_construction(previous_token_head(0.75)).save(out / "head_p0.75")
    lines.append(f"saved head (with its family): {saved.name}")
    results: dict[str, Any] = {"sweeps": swept, "bounds": checked, "figures": written, "head_dir": saved}
    if export:
        ex = export_and_replay(out)
        r = ex["replay"]
        lines.append(
            f"GPT-J export at logit scale {ex['scale']:.4f} = required_logit_scale({ex['margin']:.9f}, "
            f"{EXPORT_N}, {EPS})"
        )
        lines.append(
            f"  worst cases replayed ({r.lengths}): first wrong n = {r.first_wrong_n}, "
            f"exact horizon {r.exact_horizon}"
        )
        lines.append(f"  transformers: {ex['prompt']!r} -> {ex['answer']!r}")
        results["export"] = ex
    print("\n".join(lines))
    results["lines"] = lines
    return results


if __name__ == "__main__":
    main(*sys.argv[1:2])

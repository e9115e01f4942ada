"""The semantic-channel example end to end: exact sweeps of the find-the-word head on three plane sets,
certified bounds, Du et al.'s token consistency sampled with intervals, a plot, a saved head, and exports
to ``transformers`` replayed at their worst cases.

Run it (writes under ``OUT``, default ``semantic_out``)::

    python examples/semantic_channel/semantic_walkthrough.py [OUT]

Every step uses ropeproof's public API only. The numbers it prints are what ``docs/guides/examples.md``
shows, and ``tests/test_examples.py`` checks them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from semantic_head import FIND, PLANE_SETS, content_margin, semantic_head
from token_consistency import flip_probability, spectrum

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
"""The lengths the sweeps and the false bound cover: every n = 2 .. MAX_N."""
EXPORT_N = 1024
"""The exported models' ``max_positions``."""
SCALE_N = 256
"""The length the lowest-planes export's logit scale is chosen for."""
EPS = 0.01
"""The exported model's target weight must be at least ``1 - EPS`` (the softmax link)."""
DU_LENGTHS = (16, 256, 4096, 65536)


def sweeps(max_n: int = MAX_N) -> dict[str, Any]:
    """The exact sweep of every variant over the find-the-word family, ``n = 2 .. max_n`` (``gap_inf`` is
    not enumerated: only ``margin_inf`` is used here, and enumerating it where the margin is not positive,
    as on the highest planes, is slow)."""
    return {v: sweep_head(compile_construction(semantic_head(v)), max_n, gap_inf_limit=0) for v in PLANE_SETS}


def bounds() -> dict[str, Any]:
    """Three bounds, each judged at every length and certified by interval arithmetic:

    - ``p_rope``: under p-RoPE the worst margin is at least 1.17 at every n <= 4000;
    - ``horizon``: on the lowest planes it is at least 0.001 at every n <= 767;
    - ``never_fails``: on the lowest planes it stays >= 0 at every n <= 2000 (false: the first violation
      and its witness).
    """
    return {
        "p_rope": check_bound(semantic_head("p-RoPE"), "1.17", 4000, relation=">=", certified=True),
        "horizon": check_bound(semantic_head("lowest"), "0.001", 767, relation=">=", certified=True),
        "never_fails": check_bound(semantic_head("lowest"), 0, MAX_N, relation=">=", certified=True),
    }


def token_consistency(samples: int = 40000) -> dict[str, list[Any]]:
    """Du et al.'s failure probability (``token_consistency.py``) at each of :data:`DU_LENGTHS`, for RoPE's
    16 planes and for p-RoPE at p = 0.75."""
    return {
        label: [flip_probability(spectrum(p), n, samples, seed=n) for n in DU_LENGTHS]
        for label, p in (("RoPE", 1.0), ("0.75-RoPE", 0.75))
    }


def figures(out: Path, swept: dict[str, Any], checked: dict[str, Any]) -> list[Path]:
    """The three variants' margins on one plot (with the line at 0), and the false bound's check with
    its violated rows marked; PNG, PDF, CSV and caption each."""
    margins = plot_sweeps(swept, quantity="margin_inf", bound=0.0, name="semantic_margins")
    check = plot_sweeps({"lowest planes": checked["never_fails"]}, name="semantic_never_fails")
    return [*save_figure(margins, out / "figures"), *save_figure(check, out / "figures")]


def export_and_replay(out: Path) -> dict[str, Any]:
    """Export the lowest-planes head as a float64 GPT-J model at the logit scale the softmax link asks
    for at :data:`SCALE_N`, replay its worst cases at every length up to there and at every 32nd length
    beyond; export the p-RoPE head at the scale for :data:`EXPORT_N` and replay n = 2 and every multiple
    of 64; ask the p-RoPE model one question with ``transformers`` alone."""
    import torch
    import transformers

    results: dict[str, Any] = {}
    for variant, scale_n in (("lowest", SCALE_N), ("p-RoPE", EXPORT_N)):
        construction = semantic_head(variant)
        head = compile_construction(construction)
        margin = float(np.nanmin(sweep_head(head, scale_n, gap_inf_limit=0).columns["margin_inf"]))
        scale = required_logit_scale(margin, scale_n, EPS)
        path = out / f"gptj_{variant}"
        export_head(head, "gptj", logit_scale=scale, dtype="float64", max_positions=EXPORT_N).save(path)
        if variant == "lowest":
            dense = replay_worst_cases(path, head, construction=construction, max_n=scale_n)
            sparse = replay_worst_cases(
                path, head, construction=construction, lengths=range(scale_n, EXPORT_N + 1, 32)
            )
            replays = [dense, sparse]
        else:
            replays = [
                replay_worst_cases(
                    path, head, construction=construction, lengths=[2, *range(64, EXPORT_N + 1, 64)]
                )
            ]
        results[variant] = {
            "margin": margin,
            "scale": scale,
            "scale_n": scale_n,
            "path": path,
            "replays": replays,
        }

    path = results["p-RoPE"]["path"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager")
    prompt = "c a h b e ?h"
    with torch.no_grad():
        logits = model(**tokenizer(prompt, return_tensors="pt")).logits
    results["prompt"] = prompt
    results["answer"] = tokenizer.convert_ids_to_tokens(int(logits[0, -1].argmax()))
    return results


def report(swept: dict[str, Any], checked: dict[str, Any], du: dict[str, list[Any]]) -> list[str]:
    """What the sweeps, bounds and samples found, one line each."""
    lines = [f"exact sweep over the {FIND.name} family, every n = 2..{MAX_N}:"]
    for variant, s in swept.items():
        n, m = s.columns["n"], s.columns["margin_inf"]
        bad = np.flatnonzero(~(m > 0))
        fails = f"first <= 0 at n = {int(n[bad[0]])}" if bad.size else "positive at every n"
        lines.append(f"  {variant:8s} margin at n = 3: {m[1]:.9f}, worst {np.nanmin(m):.9f}, {fails}")
    lines.append(f"  p-RoPE's margin from n = 3 on is 4 (1 - cos(pi/4)) = {float(content_margin()):.9f}")
    for key, what in (("p_rope", "p-RoPE >= 1.17, n <= 4000"), ("horizon", "lowest >= 0.001, n <= 767")):
        lines.append(f"{what}: {checked[key].verdict()}, rows {checked[key].comparison.counts()}")
    first = checked["never_fails"].summary()["first_violation"]
    lines.append(f"lowest >= 0, n <= {MAX_N}: violated, first violation n = {first['n']} (certified)")
    lines.append(f"  witness: {first['witness']['description']}")
    lines.append("Du et al.'s token consistency (sampled, 99.9% Clopper-Pearson):")
    for label, estimates in du.items():
        for e in estimates:
            lines.append(f"  {label:9s} {e.describe()}")
    return lines


def export_lines(ex: dict[str, Any]) -> list[str]:
    lines = []
    for variant in ("lowest", "p-RoPE"):
        r = ex[variant]
        lines.append(
            f"{variant}: GPT-J export at logit scale {r['scale']:.4f} = "
            f"required_logit_scale({r['margin']:.9f}, {r['scale_n']}, {EPS})"
        )
        for replay in r["replays"]:
            wrong = replay.first_wrong
            said = (
                ""
                if wrong is None
                else f" (margin {wrong['margin']:.6f}, needs scale {wrong['required_scale']:.2f})"
            )
            lines.append(
                f"  replayed {replay.lengths}: first wrong n = {replay.first_wrong_n}{said}, "
                f"exact horizon {replay.exact_horizon}"
            )
    lines.append(f"transformers (p-RoPE export): {ex['prompt']!r} -> {ex['answer']!r}")
    return lines


def main(out: str | Path = "semantic_out", export: bool = True) -> dict[str, Any]:
    """Run every step, print what it found, and return the results."""
    out = Path(out)
    swept, checked, du = sweeps(), bounds(), token_consistency()
    lines = report(swept, checked, du)
    written = figures(out, swept, checked)
    lines.append(f"figures: {', '.join(p.name for p in written if p.suffix == '.png')}")
    saved = compile_construction(semantic_head("lowest")).save(out / "head_lowest")
    lines.append(f"saved head (with its family): {saved.name}")
    results: dict[str, Any] = {
        "sweeps": swept,
        "bounds": checked,
        "du": du,
        "figures": written,
        "head_dir": saved,
    }
    if export:
        results["export"] = export_and_replay(out)
        lines += export_lines(results["export"])
    print("\n".join(lines))
    results["lines"] = lines
    return results


if __name__ == "__main__":
    main(*sys.argv[1:2])

"""(c) Accuracy of the compiled heads against length, at several softmax scales and dtypes."""

from __future__ import annotations

import matplotlib
import numpy as np

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.paper_figures._style import FigureResult, styled, subplots
from ropeproof.verify.kernel._compiled import answers
from ropeproof.verify.measure._statistics import proportion_interval
from ropeproof.verify.measure.exact._families import family_for, sample_family_inputs

DTYPES = ("float64", "float32", "bfloat16")
SCALES = (1.0, 10.0, 100.0, None)  # None: hard attention (argmax of the logits)


LENGTHS = {False: (2, 4, 8, 16, 32, 64, 128, 256), True: (2, 8, 32, 128)}
"""The lengths of the figure (full, ``quick``)."""
INPUTS = {False: 48, True: 16}
"""Random family inputs per (head, length) (full, ``quick``), the same ones for every dtype and readout."""


def accuracy_rows(quick: bool = False) -> list[dict]:
    """Accuracy on :data:`INPUTS` random family inputs per length (every input of the family at each
    length is equally likely), per head, dtype and readout: ``correct`` of ``inputs``, ``accuracy`` and
    its 95% Wilson interval ``ci_low``, ``ci_high``. Each head's inputs of one length are projected once per
    dtype and read at every scale (:func:`~ropeproof.verify.kernel._compiled.answers`: the last query
    alone, the answers of :func:`~ropeproof.verify.kernel._compiled.answer`)."""
    lengths, count = LENGTHS[quick], INPUTS[quick]
    subjects = {
        "T_Index theta=0.866": index_construction(0.8660, max_int=max(lengths) - 1, letters=8),
        "T_Retrieval theta=0.0027": retrieval_construction(8, 0.0027, max_int=2),
    }
    rows = []
    for name, c in subjects.items():
        head = compile_construction(c)
        fam = family_for(c)
        for n in lengths:
            samples = sample_family_inputs(fam, n, count, seed=n)
            seqs = [list(t) for t, _ in samples]
            correct = [t[p] for t, p in samples]
            for dtype in DTYPES:  # one projection per input set and dtype, read at every scale
                readouts = answers(head, seqs, SCALES, dtype=dtype, device="cpu")
                for scale, got in zip(SCALES, readouts, strict=True):
                    right = sum(a == b for a, b in zip(got, correct, strict=True))
                    estimate = proportion_interval(right, count)
                    rows.append(
                        {
                            "construction": name,
                            "n": n,
                            "dtype": dtype,
                            "readout": "argmax" if scale is None else f"softmax x{scale:g}",
                            "accuracy": estimate.value,
                            "correct": right,
                            "inputs": count,
                            "ci_low": estimate.low,
                            "ci_high": estimate.high,
                        }
                    )
    return rows


@data_product("figure.c-accuracy")
def ACCURACY_DATA(store: ResultStore, quick: bool) -> list[dict]:
    """:func:`accuracy_rows` as a product of the run's store."""
    return accuracy_rows(quick)


@styled
def accuracy_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Accuracy against length of both compiled heads, per dtype and readout."""
    rows = (ResultStore() if store is None else store).get(ACCURACY_DATA, quick=quick)
    names = list(dict.fromkeys(r["construction"] for r in rows))
    fig, axes = subplots(
        len(names), len(DTYPES), figsize=(10, 5.5), sharex=True, sharey=True, layout="constrained"
    )
    readouts = list(dict.fromkeys(r["readout"] for r in rows))
    for i, name in enumerate(names):
        for j, dtype in enumerate(DTYPES):
            ax = axes[i, j]
            for k, readout in enumerate(readouts):
                sel = [
                    r
                    for r in rows
                    if r["construction"] == name and r["dtype"] == dtype and r["readout"] == readout
                ]
                n = np.array([r["n"] for r in sel])
                acc = np.array([r["accuracy"] for r in sel])
                color = matplotlib.colormaps["viridis"](k / max(1, len(readouts) - 1))
                line = ax.semilogx(n, acc, "o-", ms=3, color=color, label=readout)[0]
                low, high = ([r[key] for r in sel] for key in ("ci_low", "ci_high"))
                ax.fill_between(n, low, high, color=color, alpha=0.12, lw=0)
                failing = n[acc < 1.0]
                if failing.size:  # the first grid length where a sampled input was answered wrongly
                    ax.axvline(failing[0], color=line.get_color(), ls=":", lw=0.8)
            ax.set_title(f"{name}, {dtype}", fontsize=8)
            ax.set_ylim(-0.05, 1.05)
            if i == len(names) - 1:
                ax.set_xlabel("sequence length n (tokens)")
            if j == 0:
                ax.set_ylabel("accuracy (fraction correct)")
    axes[0, 0].legend(loc="lower left")
    lengths = ", ".join(str(n) for n in LENGTHS[quick])
    caption = (
        f"Accuracy of the compiled heads on random inputs of their exact input families ({INPUTS[quick]} per "
        f"head and length, the same ones for every dtype and readout; lengths {lengths}), for hard attention "
        "(argmax of the logits) and softmax attention at logit scales 1, 10, 100, in float64, float32 and "
        "bfloat16; bands: 95% Wilson intervals over the sampled inputs. Dotted verticals mark the first "
        "length of this grid at which a sampled input was answered wrongly: a sampled grid point, not an "
        "exact first failure (the sweeps search every length for those). T_Index uses selective values "
        "(letters weight 2, integers 0); T_Retrieval copies the pair."
    )
    return FigureResult("c_accuracy", fig, rows, caption)

"""Derivations render as LaTeX in Jupyter (``_repr_latex_``)."""

from __future__ import annotations

import sympy as sp

from ropeproof.constructions._paper import retrieval_construction
from ropeproof.theory._derive import derive
from ropeproof.theory._rope_symbolic import SymbolicRopeSpec, derive_logit, vec2


def test_logit_form_latex() -> None:
    q0, q1, k0, k1 = sp.symbols("q0 q1 k0 k1", real=True)
    form = derive_logit([vec2(q0, q1)], [vec2(k0, k1)], SymbolicRopeSpec.symbols(1))
    assert form._repr_latex_() == f"$${form.latex()}$$"
    assert form._repr_latex_().startswith(r"$$\ell(u) = ")


def test_derivation_latex_has_one_aligned_line_per_rule_pair() -> None:
    d = derive(retrieval_construction(), prove=False)
    text = d._repr_latex_()
    assert text.startswith(r"$$\text{retrieval}:\quad\begin{aligned}") and text.endswith(r"\end{aligned}$$")
    assert text.count("&=") == len(d.logits) == 4
    assert r"\mathrm{pair\_ll}" in text and "pair_ll" not in text  # underscores escaped for MathJax
    rl = d.logit("pair_ll", "pair_li")
    assert rl._repr_latex_() == f"$${rl.display_latex()}$$"
    assert sp.latex(rl.closed) in rl._repr_latex_()

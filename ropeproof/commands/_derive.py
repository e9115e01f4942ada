"""``ropeproof derive index|retrieval|reflexive [--latex] [--json]``: closed-form logits, discrepancy,
bounds."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ropeproof.commands._arguments import add_command, add_json
from ropeproof.commands._choices import CONSTRUCTION_NAMES
from ropeproof.commands._compile import CONSTRUCTION_HELP

if TYPE_CHECKING:
    import sympy as sp


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "derive",
        example="ropeproof derive retrieval --latex",
    )
    p.add_argument("construction", choices=CONSTRUCTION_NAMES, help=CONSTRUCTION_HELP)
    p.add_argument("--latex", action="store_true", help="LaTeX instead of plain sympy text")
    add_json(p, "the derivation (expressions as sympy text, or LaTeX with --latex)")
    p.set_defaults(run=run)


def _show(expr: sp.Expr, latex: bool) -> str:
    import sympy as sp

    return sp.latex(expr) if latex else sp.sstr(expr)


def derivation(construction: str, latex: bool = False) -> dict[str, Any]:
    """What ``derive`` prints, as data: ``description``, ``logits`` (one per query/key rule pair),
    ``discrepancy`` (lines of text) and ``bound`` (``None`` for reflexive)."""
    import sympy as sp

    from ropeproof.constructions._paper import CONSTRUCTIONS
    from ropeproof.theory._bounds import index_bound, retrieval_bound
    from ropeproof.theory._derive import derive
    from ropeproof.theory._stable import stabilize

    c = CONSTRUCTIONS[construction](**({"letters": 2, "max_int": 2} if construction == "index" else {}))
    d = derive(c)
    logits = [
        {"query": qr, "key": kr, "closed": _show(rl.closed, latex)} for (qr, kr), rl in d.logits.items()
    ]
    rule = next(iter(d.logits.values()))
    u = sp.Symbol("u", integer=True)
    discrepancy: list[str]
    if c.name == "index":
        from ropeproof.verify.measure.exact._index_sweep import index_gap_expression

        discrepancy = [
            f"competitor m positions from the target: g(m) = {_show(index_gap_expression(c), latex)}",
            "margin_inf(n) = min_{1<=m<=n-1} g(m);  gap_sup(n) = min_{1<=m<=ceil((n-1)/2)} g(m)",
        ]
        bound = index_bound()
    elif c.name == "retrieval":
        rl = d.logit("pair_ll", "pair_ll")
        dt, dd, c_sym = sp.symbols("d_t d c", integer=True)
        params = {v: 0 for v in rl.closed.free_symbols if v.name.startswith("phi_R")}
        target = rl.closed.subs(params).subs(
            {s: 0 for s in rl.closed.free_symbols if s.name.startswith("phi_L")}
        )
        target = target.subs(u, -dt)
        other = (
            rl.closed.subs(params)
            .subs({s: c_sym for s in rl.closed.free_symbols if s.name.startswith("phi_L")})
            .subs(u, -dd)
        )
        gap = _show(stabilize(target - other), latex)
        discrepancy = [
            f"target d_t back vs a pair with code difference c, d back: {gap}",
            f"(omega = 2 pi/|ALPH|; at |ALPH| = 8, omega = {2 * sp.pi / 8})",
        ]
        bound = retrieval_bound()
    else:
        gap = _show(stabilize(rule.closed.subs(u, 0) - rule.closed.subs(u, -u)), latex)
        discrepancy = [f"self vs a key d back: {gap}"]
        bound = None
    return {
        "construction": c.name,
        "description": c.description,
        "logits": logits,
        "discrepancy": discrepancy,
        "bound": None
        if bound is None
        else {
            "statement": bound.latex() if latex else bound.statement,
            "terms": [{"name": t.name, "stable": _show(t.stable, latex)} for t in bound.terms],
        },
    }


def run(args: argparse.Namespace) -> int:
    doc = derivation(args.construction, args.latex)
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"# {doc['description']}")
    print("## closed-form logits, u = j - i (proved equal to the rotated product)")
    for row in doc["logits"]:
        print(f"  query {row['query']} vs key {row['key']}: {row['closed']}")
    print("## discrepancy (target logit minus a competitor's, stable form)")
    for line in doc["discrepancy"]:
        print(f"  {line}")
    if doc["bound"] is not None:
        print("## Theorem 3.2 as reported")
        print(f"  {doc['bound']['statement']}")
        for t in doc["bound"]["terms"]:
            print(f"  term {t['name']}: stable form {t['stable']}")
    return 0

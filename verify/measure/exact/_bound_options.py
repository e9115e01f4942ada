"""The readings and relations a bound stated on a head may use (``ropeproof sweep --head DIR --bound``);
a module of its own, without numpy, sympy or torch, so the command line can offer them as choices
without importing :mod:`~ropeproof.verify.measure.exact._stated_bound`, which re-exports them."""

from __future__ import annotations

READINGS = ("margin_inf", "gap_inf", "gap_sup")
"""The readings a bound may be stated on (``gap_sup`` is [A]'s ``Delta(n)``)."""
RELATIONS = ("<=", ">=")
"""``"<="``: the reading is at most the bound (an upper bound); ``">="``: at least (a guarantee)."""

"""The readings and relations a bound stated on a head may use (``ropeproof sweep --head DIR --bound``);
a module of its own, without numpy, sympy or torch, so the command line can offer them as choices
without importing :mod:`~ropeproof.verify.measure.exact._stated_bound`, which re-exports them."""

from __future__ import annotations

READINGS = ("margin_inf", "gap_inf", "gap_sup", "logit_inf", "logit_sup")
"""The readings a bound may be stated on (``gap_sup`` is [A]'s ``Delta(n)``); the first three by length
``n``, the logit readings by offset ``m`` (:data:`OFFSET_READINGS`)."""
OFFSET_READINGS = ("logit_inf", "logit_sup")
"""Readings whose rows are offsets ``m`` (a bound on them is stated in ``m``)."""
RELATIONS = ("<=", ">=", "<", ">")
"""``"<="``: the reading is at most the bound (an upper bound); ``">="``: at least (a guarantee);
``"<"`` / ``">"``: strictly (a row equal to the bound violates them)."""

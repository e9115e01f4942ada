"""The bound options the command line offers are the ones stated_bound judges, and importing them needs
no numerical library."""

from __future__ import annotations

import subprocess
import sys

from ropeproof.verify.measure.exact import _bound_options as bound_options
from ropeproof.verify.measure.exact import _stated_bound as stated_bound


def test_the_options_are_stated_bounds_own() -> None:
    assert (
        stated_bound.READINGS is bound_options.READINGS and stated_bound.RELATIONS is bound_options.RELATIONS
    )
    assert bound_options.READINGS == ("margin_inf", "gap_inf", "gap_sup", "logit_inf", "logit_sup")
    assert bound_options.RELATIONS == ("<=", ">=", "<", ">")


def test_importing_the_options_loads_no_numerical_library() -> None:
    code = (
        "import sys; import ropeproof.verify.measure.exact._bound_options; "
        "print(sorted(m for m in ('numpy', 'sympy', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

"""Public names loaded on first use: a package's ``__getattr__`` imports the defining module only when a
name is asked for, keeps the value, and refuses other names as a module does."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from ropeproof.machinery._lazy import lazy_exports


@pytest.fixture
def package(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("lazy_demo")
    monkeypatch.setitem(sys.modules, "lazy_demo", module)
    module.__getattr__, module.__dir__ = lazy_exports("lazy_demo", {"sqrt": "math", "Fraction": "fractions"})
    return module


def test_a_name_loads_from_its_module_and_is_kept(package: types.ModuleType) -> None:
    import fractions
    import math

    assert "sqrt" not in vars(package)
    assert package.sqrt is math.sqrt and vars(package)["sqrt"] is math.sqrt  # kept: the next look-up is plain
    from lazy_demo import Fraction  # `from package import name` asks the same __getattr__

    assert Fraction is fractions.Fraction


def test_another_name_is_an_attribute_error(package: types.ModuleType) -> None:
    with pytest.raises(AttributeError, match="'lazy_demo' has no attribute 'cos'"):
        _ = package.cos
    assert not hasattr(package, "cos")


def test_dir_lists_every_exported_name(package: types.ModuleType) -> None:
    assert {"sqrt", "Fraction"} <= set(dir(package))


def test_a_layer_package_loads_nothing_until_asked() -> None:
    """``import ropeproof.verify.measure.exact`` imports none of its modules; asking for one name
    imports its module, not torch's whole layer."""
    code = (
        "import sys, ropeproof.verify.measure.exact as e\n"
        "print(sorted(m for m in sys.modules if m.startswith('ropeproof.verify.measure.exact._')))\n"
        "e.family_for\n"
        "print('ropeproof.verify.measure.exact._families' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.split("\n")[:2] == ["[]", "True"]

"""Shapes in signatures: every public tensor-taking callable states its shapes in its docstring.

The convention (README, "Shapes"): a paragraph starting ``Shapes:`` lists ``NAME [dims]`` entries
separated by ``;`` (it may wrap onto indented lines), one for every parameter annotated as a tensor
or array (``Tensor``, ``ndarray``, ``ArrayLike``), optionally ``return [dims]`` or
``return.FIELD [dims]``, and a parenthesised note after the brackets. Dims are names, numbers,
expressions such as ``head_dim/2`` or ``N - 1``, or ``...``. For a class, the paragraph is in the
class docstring and covers ``__init__`` (a dataclass's fields).

The public API checked: the names in ``ropeproof.__all__`` and the public functions and classes
(with their public methods) of ``ropeproof.verify.kernel``, ``.exact`` and ``.ps``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable

import pytest

import ropeproof

TENSOR = re.compile(r"\b(Tensor|ndarray|ArrayLike)\b")
ENTRY = re.compile(r"^(?P<name>return(\.\w+)?|\w+) \[(?P<dims>[^\[\]]+)\]( \([^()]*\))?$")
DIM = re.compile(r"^(\.\.\.|[\w/+\-* ]+)$")
PACKAGES = ("ropeproof.verify.kernel", "ropeproof.verify.measure.exact", "ropeproof.verify.measure.ps")


def shapes_of(doc: str | None) -> dict[str, list[str]] | None:
    """The ``Shapes:`` paragraph of ``doc`` as ``{name: dims}``; ``None`` if there is none.
    Raises ``ValueError`` on an entry that does not follow the convention."""
    if not doc:
        return None
    text = inspect.cleandoc(doc)
    match = re.search(r"^Shapes: (.*?)(?:\n\s*\n|\Z)", text, re.M | re.S)
    if match is None:
        return None
    out = {}
    for raw in match.group(1).split(";"):
        entry = " ".join(raw.split())
        m = ENTRY.match(entry)
        if m is None:
            raise ValueError(f"malformed Shapes entry {entry!r}")
        dims = [d.strip() for d in m.group("dims").split(",")]
        if not all(DIM.match(d) for d in dims):
            raise ValueError(f"malformed dims in {entry!r}")
        out[m.group("name")] = dims
    return out


def public_callables() -> dict[str, tuple[Callable, object]]:
    """``qualified name -> (function, object whose docstring holds its Shapes)``."""
    roots: dict[str, object] = {
        f"ropeproof.{n}": getattr(ropeproof, n) for n in ropeproof.__all__ if n != "__version__"
    }
    for package in PACKAGES:
        pkg = importlib.import_module(package)
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.startswith("__"):
                continue
            module = importlib.import_module(f"{package}.{info.name}")
            for name, obj in vars(module).items():
                own = getattr(obj, "__module__", None) == module.__name__
                if own and not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)):
                    roots[f"{module.__name__}.{name}"] = obj
    out: dict[str, tuple[Callable, object]] = {}
    for qual, obj in roots.items():
        if inspect.isfunction(obj):
            out[qual] = (obj, obj)
        elif inspect.isclass(obj):
            for name, member in vars(obj).items():
                fn = member.__func__ if isinstance(member, classmethod | staticmethod) else member
                if not inspect.isfunction(fn):
                    continue
                if name == "__init__":
                    out[f"{qual}.__init__"] = (fn, obj)
                elif not name.startswith("_"):
                    out[f"{qual}.{name}"] = (fn, fn)
    return out


def tensor_params(fn: Callable) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values() if TENSOR.search(str(p.annotation))]


CALLABLES = public_callables()
TENSOR_TAKING = sorted(q for q, (fn, _) in CALLABLES.items() if tensor_params(fn))


def test_the_api_has_tensor_taking_callables() -> None:
    assert len(TENSOR_TAKING) >= 40  # the check below is not vacuous
    for name in (
        "ropeproof.verify.kernel._rope.apply_rope",
        "ropeproof.RopeAttention.forward",
        "ropeproof.ps_scores",
    ):
        assert name in TENSOR_TAKING


@pytest.mark.parametrize("qualname", TENSOR_TAKING)
def test_every_tensor_parameter_has_a_stated_shape(qualname: str) -> None:
    fn, holder = CALLABLES[qualname]
    shapes = shapes_of(inspect.getdoc(holder))
    assert shapes is not None, f"{qualname}: no 'Shapes:' paragraph in its docstring"
    params = set(inspect.signature(fn).parameters)
    missing = [p for p in tensor_params(fn) if p not in shapes]
    assert not missing, f"{qualname}: Shapes lacks {missing}"
    unknown = [n for n in shapes if n.split(".")[0] != "return" and n not in params]
    assert not unknown, f"{qualname}: Shapes names {unknown}, which are not parameters"


def test_the_parser_rejects_what_the_convention_does_not_allow() -> None:
    assert shapes_of("Does x.\n\nShapes: x [batch, n, d_model]; return.out [n - 1] (note)") == {
        "x": ["batch", "n", "d_model"],
        "return.out": ["n - 1"],
    }
    assert shapes_of("Shapes: x [a, b];\n    y [...]\n\nMore text.") == {"x": ["a", "b"], "y": ["..."]}
    assert shapes_of("No shapes here.") is None
    for bad in ("Shapes: x batch", "Shapes: x [a, [b]]", "Shapes: x [a]; [b]", "Shapes: x [a, (b)]"):
        with pytest.raises(ValueError, match="malformed"):
            shapes_of(bad)

"""Griffe extension for the API reference: every documented callable shows its parameters.

Most docstrings describe their parameters in prose and have no numpy ``Parameters`` section, so the
reference would show no parameter list for them. When the package is loaded (after the roles of
``sphinx_roles.py`` became links), each public function, method and class (its ``__init__``) whose
docstring has no ``Parameters`` section gets one, written from the signature:

- one item per parameter a caller passes (``self``, ``cls`` and a hypothesis composite's ``draw``
  aside), by name (``*args`` and ``**kwargs`` with their stars); the section parser takes its annotation
  and default from the signature, so both are shown as the code states them;
- as its description, the first sentence of the docstring's prose that names the parameter as code
  (````name````, or ````name=value````), whole; no sentence names it: no description (nothing is made up);
- a callable that takes no parameter says so (:data:`NO_PARAMETERS`) instead.

A function whose return is annotated (and not ``None``), a property aside, likewise gets a ``Returns``
section with the annotation and no description when its docstring has neither ``Returns`` nor
``Yields``. A docstring that has a section keeps it as written. A class whose ``__init__`` is not in the
package nor ``object``'s (an exception taking ``Exception``'s) is left as it is: its signature is not
known here.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

NO_PARAMETERS = "Takes no parameters."
"""The sentence added to a callable that takes none."""

SECTION = re.compile(r"^([A-Z]\w*(?: \w+)*)\n-{3,}[ \t]*$", re.M)
"""A numpy section heading: its title over a line of dashes."""
SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\.\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bcf\.)\s+(?=[A-Z`(\[*\x00])")
"""Where one sentence of a paragraph ends and the next begins (code spans aside)."""
CODE = re.compile(r"``.+?``|`[^`]+`", re.S)
"""A code span, in which no sentence ends (and no list item begins)."""
HOLE = re.compile(r"\x00(\d+)\x00")
"""A code span set aside while a paragraph is split."""
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s", re.M)
"""The first line of an item of a Markdown list: each item is a sentence of its own at least."""


def sections(text: str) -> list[tuple[str, int]]:
    """The numpy sections of a docstring, as ``(title, offset of the heading)``, in order."""
    return [(m.group(1), m.start()) for m in SECTION.finditer(text)]


def sentences(text: str) -> list[str]:
    """The sentences of a docstring's prose (the text before its first section), each on one line;
    code blocks and doctest lines are not prose, and no sentence ends inside a code span."""
    found = sections(text)
    prose = text[: found[0][1]] if found else text
    prose = re.sub(r"^```.*?^```[ \t]*$", "", prose, flags=re.M | re.S)
    out = []
    for paragraph in re.split(r"\n[ \t]*\n", prose):
        lines = [line for line in paragraph.splitlines() if not line.lstrip().startswith(">>>")]
        if not lines or lines[0].startswith((" ", "\t")):
            continue
        out += _paragraph_sentences("\n".join(lines))
    return out


def _paragraph_sentences(paragraph: str) -> list[str]:
    spans = CODE.findall(paragraph)
    holes = iter(range(len(spans)))
    masked = CODE.sub(lambda m: f"\x00{next(holes)}\x00", paragraph)
    out = []
    for item in LIST_ITEM.split(masked):
        out += [s for s in SENTENCE_END.split(" ".join(item.split())) if s]
    return [HOLE.sub(lambda m: " ".join(spans[int(m.group(1))].split()), s) for s in out]


def describing(name: str, prose: list[str]) -> str:
    """The first sentence naming ``name`` as code (````name````, ````*name```` or ````name=value````),
    or ``""``."""
    mark = re.compile(rf"``\*{{0,2}}{re.escape(name.lstrip('*'))}(?:=[^`]*)?``")
    return next((s for s in prose if mark.search(s)), "")


def _is_property(obj: Any) -> bool:
    return "property" in {str(label) for label in obj.labels}


def _bases_known(cls: Any) -> bool:
    """Whether every ancestor of ``cls`` is a class of the loaded package (none inherits an
    ``__init__`` from elsewhere)."""
    resolved = cls.resolved_bases
    return len(resolved) == len(cls.bases) and all(_bases_known(base) for base in resolved)


def _parameters(obj: Any) -> list[str] | None:
    """The names a caller passes to ``obj`` (a function, method or class), or ``None`` when they are
    not known."""
    if obj.is_class:
        if "__init__" not in obj.all_members:  # object's, which takes none, when every base is known
            return [] if _bases_known(obj) else None
        params = list(obj.all_members["__init__"].parameters)
        drop_first = True
    else:
        params = list(obj.parameters)
        drop_first = obj.parent is not None and obj.parent.is_class and "staticmethod" not in obj.labels
        if any(str(d.value).rsplit(".", 1)[-1] == "composite" for d in obj.decorators):
            params = params[1:]  # hypothesis passes a composite strategy's ``draw`` itself
    if drop_first and params and params[0].name in {"self", "cls"}:
        params = params[1:]
    stars = {"variadic positional": "*", "variadic keyword": "**"}
    return [stars.get(p.kind.value, "") + p.name for p in params]


def _returns(obj: Any) -> bool:
    """Whether ``obj`` is a function with an annotated return other than ``None``."""
    if not obj.is_function or _is_property(obj) or obj.name == "__init__":
        return False
    returns = obj.returns
    return returns is not None and str(returns) != "None"


def with_sections(text: str, obj: Any) -> str:
    """``text`` (``obj``'s docstring) with a ``Parameters`` and a ``Returns`` section where it has
    none and ``obj``'s signature gives one."""
    found = sections(text)
    titles = {title for title, _ in found}
    names = None if "Parameters" in titles or NO_PARAMETERS in text else _parameters(obj)
    returns = not titles & {"Returns", "Yields"} and _returns(obj)
    if names is None and not returns:
        return text
    prose = sentences(text)
    before = after = ""
    if names == []:
        before = NO_PARAMETERS
    elif names:
        items = []
        for name in names:
            sentence = describing(name, prose)
            items.append(f"{name}\n    {sentence}" if sentence else name)
        before = "Parameters\n----------\n" + "\n".join(items)
    if returns:
        after = "Returns\n-------\n:"
    # a new Parameters section goes before every existing section; Returns after Parameters
    if found and before and "Parameters" not in titles:
        head, tail = text[: found[0][1]].rstrip(), text[found[0][1] :]
        text = f"{head}\n\n{before}\n\n{tail}" if head else f"{before}\n\n{tail}"
    elif before:
        text = f"{text.rstrip()}\n\n{before}"
    if after:
        rest = [offset for title, offset in sections(text) if title not in {"Parameters", "Other Parameters"}]
        if rest:
            text = f"{text[: rest[0]].rstrip()}\n\n{after}\n\n{text[rest[0] :]}"
        else:
            text = f"{text.rstrip()}\n\n{after}"
    return text


class ParameterSections(Extension):
    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
        for obj in self._callables(pkg):
            obj.docstring.value = with_sections(obj.docstring.value, obj)

    def _callables(self, obj: Any) -> Any:
        """Every public function, method and class of ``obj``'s tree that has a docstring, in the order
        of the source (aliases are documented where they are defined)."""
        for member in list(obj.members.values()):
            if member.is_alias:
                continue
            public = (member.is_function or member.is_class) and not member.name.startswith("_")
            if public and member.docstring is not None and not (member.is_function and _is_property(member)):
                yield member
            if member.is_module or member.is_class:
                yield from self._callables(member)

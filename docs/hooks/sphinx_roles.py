"""Griffe extension for the API reference: Sphinx cross-reference roles become links.

The docstrings write cross-references as Sphinx roles (``:func:`~ropeproof.theory._family.token_family```,
``:mod:`.errors```, ``:class:`Claim```, ``:meth:`CompiledHead.answer```); Markdown would print them as
literal text. When the package is loaded, before any docstring is parsed, each role is rewritten as an
mkdocstrings cross-reference to the public entry of its target, or as plain code where the target has no
entry:

- the target is looked up as Python would see it from the docstring: absolute
  (``ropeproof.theory._bounds.index_bound``), relative to the module (``.placement.spectrum_rtol``), or a
  name of the enclosing class, module or packages (``Claim``, ``CompiledHead.answer``); a module renamed
  private is still found under its old name (``.rope`` is ``._rope``); a name found nowhere else is
  looked for among the public objects by its last components (``RopeSpec``);
- the object found is linked at its home in the public API (``public_api.homes``: the defining path
  ``ropeproof.theory._bounds.index_bound`` links to ``ropeproof.theory.index_bound``), a documented
  member of a public class at that class's entry, a public package at its own entry;
- anything else (a private module, a private helper, another library's object) is shown as code, so no
  link is left broken and no role is left as text. ``~`` shows the last component only; ``title
  <target>`` shows the title.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from griffe import AliasResolutionError, CyclicAliasError, Extension

sys.path.insert(0, str(Path(__file__).resolve().parent))

from public_api import homes, public_packages

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):`([^`]+)`")
"""A Sphinx Python role and its content."""


def _final(obj: Any) -> Any:
    if obj is None or not getattr(obj, "is_alias", False):
        return obj
    try:
        return obj.final_target
    except (AliasResolutionError, CyclicAliasError):
        return None


class SphinxRoles(Extension):
    ROLE = ROLE

    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
        if pkg.path != "ropeproof":
            return
        self.root = pkg
        self.homes = homes()
        self.packages = set(public_packages())
        by_tail: dict[str, set[str]] = {}
        for defined, home in self.homes.items():
            parts = defined.split(".")
            for k in range(1, len(parts)):
                tail = ".".join(p.lstrip("_") for p in parts[-k:])
                by_tail.setdefault(tail, set()).add(home)
        self.by_tail = by_tail
        for obj in self._objects(pkg):
            doc = obj.docstring
            if doc is not None and ":" in doc.value:
                doc.value = self.rewrite(doc.value, obj)

    def rewrite(self, text: str, obj: Any) -> str:
        """``text`` (written in ``obj``'s docstring) with every role a link or code."""
        return ROLE.sub(lambda m: self._rewrite(m.group(1), obj), text)

    def _objects(self, obj: Any) -> Any:
        yield obj
        for member in obj.members.values():
            if not member.is_alias:
                yield from self._objects(member)

    # ------------------------------------------------------------------ resolving a role's target

    def _find(self, dotted: str) -> Any:
        parts = dotted.split(".")
        if parts[0] != "ropeproof":
            return None
        obj = self.root
        for part in parts[1:]:
            obj = _final(obj)
            if obj is None:
                return None
            members = obj.members
            obj = members.get(part) or members.get("_" + part)
            if obj is None:
                return None
        return _final(obj)

    def _candidates(self, target: str, obj: Any) -> list[str]:
        module = obj if obj.is_module else obj.module
        if target.startswith("."):
            out = [module.path + target]
            if module.parent is not None:
                out.append(module.parent.path + target)
            return out
        scopes = []
        scope = obj
        while scope is not None:
            if not scope.is_function and not scope.is_attribute:
                scopes.append(scope.path)
            scope = scope.parent
        return [target, *(f"{s}.{target}" for s in scopes)]

    def _link(self, found: Any) -> str | None:
        if found is None:
            return None
        if found.path in self.homes:
            return self.homes[found.path]
        parent = found.parent
        if (
            parent is not None
            and parent.is_class
            and parent.path in self.homes
            and not found.name.startswith("_")
            and found.docstring is not None
        ):
            return f"{self.homes[parent.path]}.{found.name}"
        return None

    def resolve(self, target: str, obj: Any) -> str | None:
        """The identifier of the reference entry for ``target`` as written in ``obj``'s docstring, or
        ``None`` when it has none."""
        for dotted in self._candidates(target, obj):
            link = self._link(self._find(dotted))
            if link is not None:
                return link
        tail = ".".join(p.lstrip("_") for p in target.lstrip(".").split("."))
        if len(found := self.by_tail.get(tail, set())) == 1:
            return next(iter(found))
        return None

    def _rewrite(self, content: str, obj: Any) -> str:
        title = None
        if m := re.fullmatch(r"(.*?)\s*<(.+)>", content, flags=re.S):
            title, content = m.group(1), m.group(2)
        short = content.startswith("~")
        target = content.lstrip("~").strip()
        text = title or (target.rsplit(".", 1)[-1] if short else target.lstrip("."))
        link = self.resolve(target, obj)
        return f"[`{text}`][{link}]" if link else f"`{text}`"

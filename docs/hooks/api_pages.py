"""MkDocs hook: the API reference pages are generated from the packages' ``__all__`` lists.

A reference page names a package on a line of its own, ``<!-- api: ropeproof.theory -->``; the hook puts
there the package's own documentation and one entry per public object at home in it
(``public_api.entries``: signatures with their annotations, the Parameters and Returns sections), then
one line of links for the names it re-exports from another home. Nothing is listed by hand, so a name
added to an ``__all__`` appears in the reference and a name removed disappears.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from public_api import entries, public_packages

MARKER = re.compile(r"^<!-- api: ([\w.]+) -->$", re.M)


def package_markdown(package: str) -> str:
    """The reference of one public package, as mkdocstrings directives."""
    if package not in public_packages():
        raise ValueError(f"the API reference names {package!r}, which is not a public package")
    own, elsewhere = entries(package)
    parts = [f"::: {package}\n    options:\n      members: false\n      heading_level: 2\n"]
    parts += [f"::: {package}.{name}\n    options:\n      heading_level: 3\n" for name in own]
    if elsewhere:
        links = ", ".join(f"[`{name}`][{home}]" for name, home in elsewhere)
        parts.append(f"Also exported here: {links}.\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    return MARKER.sub(lambda m: package_markdown(m.group(1)), markdown)

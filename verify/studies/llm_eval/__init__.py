"""[A]'s frontier-LLM protocol as a harness for any model (``docs/theory.md`` section 3, "[A]'s 1-hop
protocol for chat models"): 1-hop number and letter tasks, zero-shot, accuracy against length.
:func:`evaluate` runs all of it in one call on a provider (a Python callable: :class:`PythonCallable`);
:func:`answer` is the protocol's right answer to a sequence. The modules are private."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "evaluate": "ropeproof.verify.studies.llm_eval._harness",
    "PythonCallable": "ropeproof.verify.studies.llm_eval._local",
    "answer": "ropeproof.verify.studies.llm_eval._protocol",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.studies.llm_eval._harness import evaluate
    from ropeproof.verify.studies.llm_eval._local import PythonCallable
    from ropeproof.verify.studies.llm_eval._protocol import answer

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

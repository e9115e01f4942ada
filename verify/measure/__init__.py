"""What is measured and how it is judged (``verify/``'s second layer, above the kernel): [A]'s tasks
(:func:`number_task`, :func:`letter_task`) and long task inputs (:func:`long_task`,
:func:`long_inputs`), the task tokenizer's prompt text, the random heads the positional/symbolic checks
score (:func:`random_subject`), intervals of sampled numbers (:func:`confidence_sequence`,
:class:`SequentialProportion`) and outcomes of checks (:class:`Outcome`). Exact and certified sweeps are
in :mod:`ropeproof.verify.measure.exact`, positional/symbolic scores in
:mod:`ropeproof.verify.measure.ps`. The modules are private."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "number_task": "ropeproof.verify.measure._tasks",
    "letter_task": "ropeproof.verify.measure._tasks",
    "long_inputs": "ropeproof.verify.measure._task_lengths",
    "long_task": "ropeproof.verify.measure._task_lengths",
    "prompt_text": "ropeproof.verify.measure._tokenizer",
    "random_subject": "ropeproof.verify.measure._subjects",
    "SequentialProportion": "ropeproof.verify.measure._statistics",
    "confidence_sequence": "ropeproof.verify.measure._statistics",
    "look_sizes": "ropeproof.verify.measure._statistics",
    "Outcome": "ropeproof.verify.measure._outcome",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.measure._outcome import Outcome
    from ropeproof.verify.measure._statistics import SequentialProportion, confidence_sequence, look_sizes
    from ropeproof.verify.measure._subjects import random_subject
    from ropeproof.verify.measure._task_lengths import long_inputs, long_task
    from ropeproof.verify.measure._tasks import letter_task, number_task
    from ropeproof.verify.measure._tokenizer import prompt_text

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

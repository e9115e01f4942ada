"""Training [A]'s models on the toolkit's tasks (``docs/theory.md`` section 6): configurations
(:data:`SMALL`), balanced on-the-fly data (:class:`TaskEncoder`), the seeded, resumable training loop
(:func:`train`), evaluation (:func:`decided_accuracy_per_hop`), the trained head read against the
theory (:func:`dominant_plane`, :func:`frequency_profile`) and the shipped small checkpoints
(:func:`load_shipped`, :func:`shipped_seeds`). The modules are private."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "SMALL": "ropeproof.verify.studies.training._config",
    "SCORING": "ropeproof.verify.studies.training._data",
    "TaskEncoder": "ropeproof.verify.studies.training._data",
    "train": "ropeproof.verify.studies.training._trainer",
    "decided_accuracy_per_hop": "ropeproof.verify.studies.training._evaluation",
    "dominant_plane": "ropeproof.verify.studies.training._head_theory",
    "frequency_profile": "ropeproof.verify.studies.training._head_theory",
    "load_shipped": "ropeproof.verify.studies.training._shipped",
    "shipped_seeds": "ropeproof.verify.studies.training._shipped",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.studies.training._config import SMALL
    from ropeproof.verify.studies.training._data import SCORING, TaskEncoder
    from ropeproof.verify.studies.training._evaluation import decided_accuracy_per_hop
    from ropeproof.verify.studies.training._head_theory import dominant_plane, frequency_profile
    from ropeproof.verify.studies.training._shipped import load_shipped, shipped_seeds
    from ropeproof.verify.studies.training._trainer import train

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

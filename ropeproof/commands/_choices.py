"""The values the subcommands' parsers show (choices, defaults, help text) as literals.

Building a subcommand's parser (``ropeproof SUB --help``) imports this module instead of the library
modules these values come from, which import torch, sympy, matplotlib or the claims; those are
imported when a run starts. ``tests/ropeproof/commands/test_choices.py`` asserts that every value here
equals its source, so a change there fails until it is made here too.
"""

from __future__ import annotations

CONSTRUCTION_NAMES: tuple[str, ...] = ("index", "reflexive", "retrieval")
"""``sorted(ropeproof.constructions._paper.CONSTRUCTIONS)``."""

CONSTRUCTION_DEFAULTS: dict[str, str] = {
    "theta": "index 0.866, reflexive 0.5, retrieval 0.0",
    "max_int": "index 16, reflexive 0, retrieval 8",
    "letters": "index 120, reflexive 8",
    "alphabet_size": "retrieval 8",
}
"""Each construction's default of a parameter, as ``ropeproof compile --help`` lists it (read from the
signatures of the functions in :data:`~ropeproof.constructions._paper.CONSTRUCTIONS`)."""

TASKS: tuple[str, ...] = ("number", "letter")
""":data:`ropeproof.constructions._paper.TASKS`."""

INDEX_THETA = 0.8660
""":data:`ropeproof.constructions._paper.INDEX_THETA`."""

TASK_LENGTH = 17
""":data:`ropeproof.constructions._paper.TASK_LENGTH`."""

LOGIT_SCALE = 1000.0
""":data:`ropeproof.constructions._multihop_programs.LOGIT_SCALE`."""

ARCHITECTURE_NAMES: tuple[str, ...] = ("gptj", "llama")
"""The keys of :data:`ropeproof.theory._architectures.ARCHITECTURES`."""

INDEX_TERMS: tuple[str, ...] = ("min", "one-minus-cos", "pi2-over-2n2")
""":data:`ropeproof.verify.measure.exact._certified.INDEX_TERMS`."""

EXECUTORS: tuple[str, ...] = ("local", "dask")
""":data:`ropeproof.verify.sweep_runs._shard_runner.EXECUTORS`."""

DEFAULT_SHARD_ROOT = ".ropeproof-shards"
""":data:`ropeproof.verify.sweep_runs._shard_runner.DEFAULT_SHARD_ROOT`, as text."""

MAX_EXACT_N = 8
""":data:`ropeproof.verify.measure.ps._exact.MAX_EXACT_N`."""

FIGURE_NAMES: tuple[str, ...] = (
    "a_theory_bounds",
    "b_loglog_discrepancy",
    "c_accuracy",
    "d_softmax_scale",
    "e_geometry",
    "ps_plane",
    "per_frequency",
    "ps_scale",
    "many_plane_margin",
    "letter_codes",
    "partial_induction",
    "multihop_length",
    "multihop_ps_layers",
    "training_accuracy",
    "training_ps_paths",
    "training_ps_final",
    "training_length",
    "training_frequencies",
    "training_theory",
    "errata_index_fixed_theta",
    "errata_index_best_theta",
    "errata_index_largest_gap",
    "errata_retrieval_margin",
    "errata_retrieval_largest_gap",
    "errata_remark31_readout",
    "errata_partial_induction",
    "llm_eval_local",
)
""":func:`ropeproof.paper_figures.figure_names`, in report order."""

STORE_DIR = "store"
""":data:`ropeproof._report.STORE_DIR`: a report's saved results, inside its directory."""

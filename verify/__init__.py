"""Checking: run heads in torch and measure them against the theory.

Its folders are its layers, in import order (a module imports only its own folder or the ones before
it; ``tests/test_layering.py`` reads the order from :data:`LAYERS`):

1. :mod:`~ropeproof.verify.kernel`: the torch kernel (RoPE rotation, the attention module, devices and
   dtypes, rounding-error bounds, an independent numpy reference, running compiled heads);
2. :mod:`~ropeproof.verify.measure`: what is measured and how it is judged: [A]'s tasks and long
   inputs, the task tokenizer, the heads the positional/symbolic checks score, exact and certified
   sweeps (:mod:`~ropeproof.verify.measure.exact`), positional/symbolic scores
   (:mod:`~ropeproof.verify.measure.ps`), per-layer scores, intervals of sampled numbers, outcomes;
3. :mod:`~ropeproof.verify.sweep_runs`: sweeps as runs on disk: file formats, shards, verified merges
   and the shard runner (local processes or Dask);
4. :mod:`~ropeproof.verify.interop`: exchange with HF ``transformers`` (:mod:`~ropeproof.verify.interop.hf`)
   and TransformerLens (:mod:`~ropeproof.verify.interop.tl`), imported heads;
5. :mod:`~ropeproof.verify.studies`: studies built on the layers below: results past the papers
   (:mod:`~ropeproof.verify.studies.beyond`), the corrected statements
   (:mod:`~ropeproof.verify.studies.errata`), training [A]'s models
   (:mod:`~ropeproof.verify.studies.training`) and the frontier-LLM harness
   (:mod:`~ropeproof.verify.studies.llm_eval`);
6. :mod:`~ropeproof.verify.testing`: hypothesis strategies and the property battery (imported only by
   tests, benchmarks and the command line).
"""

LAYERS = ("kernel", "measure", "sweep_runs", "interop", "studies", "testing")
"""``verify/``'s folders from the bottom layer to the top."""

__all__ = ["LAYERS"]

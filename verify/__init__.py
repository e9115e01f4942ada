"""Checking: run heads in torch and measure them against the theory.

Subpackages, one job each:

- :mod:`~ropeproof.verify.runtime`: the torch kernel (RoPE rotation, the attention module, devices
  and dtypes, rounding-error bounds, an independent numpy reference, running compiled heads);
- :mod:`~ropeproof.verify.exact`: exact discrepancy over whole input families, length sweeps,
  streaming, bound comparisons and interval-certified checks;
- :mod:`~ropeproof.verify.ps`: positional/symbolic deviations, scores and per-frequency profiles;
- :mod:`~ropeproof.verify.beyond`: results past the papers (many planes, search, letter codes,
  partial induction, Remark 3.1's impossibilities);
- :mod:`~ropeproof.verify.interop`: exchange with HF ``transformers``;
- :mod:`~ropeproof.verify.testing`: hypothesis strategies, the property battery and a loopback chat
  server (for tests and the command line);
- :mod:`~ropeproof.verify.llm_eval`: [A]'s frontier-LLM 1-hop protocol as a harness for any model.

Top-level modules: :mod:`~ropeproof.verify.tasks` ([A]'s number and letter tasks),
:mod:`~ropeproof.verify.subjects` (the heads the positional/symbolic checks score),
:mod:`~ropeproof.verify.task_lengths` (long task inputs, built three ways),
:mod:`~ropeproof.verify.tokenizer` (the word-level task tokenizer of exported checkpoints) and
:mod:`~ropeproof.verify.layer_scores` ([A]'s per-layer scores of compiled multi-hop models).
"""

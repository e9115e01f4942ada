"""[A]'s frontier-LLM protocol as a harness for any model (``docs/theory.md`` section 3, "[A]'s 1-hop
protocol for chat models"): 1-hop number and letter tasks, zero-shot, accuracy against length.

- :mod:`.protocol`: [A]'s prompts verbatim, the layout, the answer rules, defaults, reported thresholds;
- :mod:`.sequences`: the seeded, balanced 1-hop sequences (chat format, and the controlled tasks' raw
  format for task-trained checkpoints); :mod:`.plan`: every prompt of a run, with its key;
- :mod:`.parsing`: reading the answer out of a raw reply;
- :mod:`.providers`: the provider interface, replies, redaction of secrets;
  :mod:`.remote` (OpenAI-compatible endpoints, Anthropic, through the official clients),
  :mod:`.local` (Python callables, HF causal LMs), :mod:`.choose_provider` (by name);
- :mod:`.run_log`: the run directory, its append-only JSONL log and resume;
  :mod:`.runner`: sending what has no reply yet, concurrently, Ctrl-C safe;
- :mod:`.statistics`: accuracy per length, mean ± std over draws, Clopper-Pearson intervals, the
  readings against [A]; :mod:`.results`: a run's summary and its JSON;
- :mod:`.harness`: :func:`~ropeproof.verify.studies.llm_eval._harness.evaluate`, all of the above in one call;
- :mod:`.local_models`: the models on this machine (shipped trained, compiled checkpoints) under the
  same protocol; :mod:`.local_ordering`: [A]'s ordering judged on them.
"""

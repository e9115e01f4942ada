"""What is measured and how it is judged (``verify/``'s second layer, above the kernel): [A]'s tasks
(:mod:`.tasks`), long task inputs (:mod:`.task_lengths`), the task tokenizer (:mod:`.tokenizer`), the heads
the positional/symbolic checks score (:mod:`.subjects`), exact and certified sweeps (:mod:`.exact`),
positional/symbolic scores (:mod:`.ps`), [A]'s per-layer scores of compiled multi-hop models
(:mod:`.layer_scores`), intervals of sampled numbers (:mod:`.statistics`), outcomes of checks
(:mod:`.outcome`) and tables for notebooks (:mod:`.display`)."""

"""Training [A]'s models on the toolkit's tasks (``docs/theory.md`` section 6): configurations
(:mod:`.config`), balanced on-the-fly data (:mod:`.data`), the HF ``GPTJForCausalLM`` (:mod:`.model`),
the seeded, resumable training loop (:mod:`.trainer`), evaluation and learning dynamics
(:mod:`.evaluation`, :mod:`.dynamics`) and the shipped small checkpoint (:mod:`.shipped`)."""

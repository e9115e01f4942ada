"""Studies built on the kernel, the measurements and interop (``verify/``'s fourth layer): results past
the papers (:mod:`.beyond`), the corrected statements (:mod:`.errata`), training [A]'s models
(:mod:`.training`) and the frontier-LLM harness (:mod:`.llm_eval`)."""

__all__: list[str] = []

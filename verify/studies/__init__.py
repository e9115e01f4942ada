"""Studies built on the kernel, the measurements, sweep runs and interop (``verify/``'s fifth layer):
results past the papers (:mod:`.beyond`), the corrected statements (:mod:`.errata`), training [A]'s
models (:mod:`.training`) and the frontier-LLM harness (:mod:`.llm_eval`).

The four are ordered like ``verify/``'s layers (:data:`ORDER`, bottom first): a study imports only its
own folder and the ones before it, so no two studies import each other (``tests/test_layering.py``)."""

ORDER = ("beyond", "errata", "training", "llm_eval")
"""The studies' folders from the bottom to the top."""

__all__: list[str] = []

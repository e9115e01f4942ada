"""Exchange with other libraries: compiled heads and models exported to HF ``transformers`` (:mod:`.hf`:
GPT-J, LLaMA; the optional ``hf`` extra) and TransformerLens (:mod:`.tl`; the ``tl`` extra), and trained
heads imported back (:mod:`.imported`).

Shared by both libraries: the export skeleton (:mod:`.head_export`: the record, the model wrapper, the
matrices), the tokenizer a single-head export ships (:mod:`.head_tokenizer`), the errors
(:mod:`.errors`), and the replay of a family's worst cases through a saved export
(:mod:`.worst_case_replay`). User guide: ``docs/guides/exports.md``.
"""

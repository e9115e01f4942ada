"""Exchange with other libraries: :mod:`.hf` exports compiled heads to HF ``transformers`` models
(GPT-J, LLaMA) and imports trained heads back (the optional ``hf`` extra)."""

"""Tools for property-testing heads and constructions: hypothesis strategies
(:mod:`.strategies`), the standard property battery ``check_construction`` (:mod:`.properties`) and the
one generator of random heads (:mod:`.random_heads`); and a loopback chat server speaking the OpenAI and
Anthropic APIs, with faults on purpose (:mod:`.chat_server`)."""

"""Tools for property-testing heads and constructions: hypothesis strategies (:mod:`.strategies`), the
standard property battery ``check_construction`` (:mod:`.properties`), and a loopback chat server speaking
the OpenAI and Anthropic APIs, with faults on purpose (:mod:`.chat_server`). Only tests, benchmarks and the
command line import this package (the random heads that production code scores live in
:mod:`ropeproof.verify.kernel.random_heads`)."""

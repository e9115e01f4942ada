"""Tools for property-testing heads and constructions: hypothesis strategies (:mod:`.strategies`), the
standard property battery ``check_construction`` (:mod:`.properties`). Only tests, benchmarks and the
command line import this package (the random heads that production code scores live in
:mod:`ropeproof.verify.kernel._random_heads`)."""

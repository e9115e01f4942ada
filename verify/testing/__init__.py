"""Tools for property-testing heads and constructions: hypothesis strategies (:mod:`.strategies`) and the
standard property battery ``check_construction`` (:mod:`.properties`). Only tests and the command line's
property-test entry points import this package (the random heads that production code scores live in
:mod:`ropeproof.verify.runtime.random_heads`)."""

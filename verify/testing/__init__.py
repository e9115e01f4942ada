"""Tools for property-testing heads and constructions: hypothesis strategies
(:mod:`.strategies`), the standard property battery ``check_construction`` (:mod:`.properties`) and the
one generator of random heads (:mod:`.random_heads`)."""

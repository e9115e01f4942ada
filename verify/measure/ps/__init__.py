"""Positional and symbolic heads: [B]'s exact deviations and the exclusion principle
(:mod:`.exact`), [A]'s practical scores S_pos and S_sym (:mod:`.scores`) and per-frequency profiles
(:mod:`.per_frequency`), sharing their input and row plumbing in :mod:`._rows`."""

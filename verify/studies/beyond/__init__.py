"""Results past the papers: many-plane T_Index and its rate (:mod:`.many_plane`), the search for the
best K-plane construction and its stored results (:mod:`.index_search`, ``best_known.json``), letter
codes for Retrieval (:mod:`.letter_codes`), [B]'s partial induction (:mod:`.partial_induction`) and
searches for [A]'s Remark 3.1 impossibilities (:mod:`.impossibility`), and the length generalisation
of compiled multi-hop models (:mod:`.multihop_length`)."""

__all__: list[str] = []

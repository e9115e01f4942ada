"""Corrected statements: each refuted statement of [A] or [B] against what is true instead, computed and
checked (docs/theory.md section 9).

- :mod:`.correction_data`: what a correction is checked against (exact quantity, reported and corrected
  statements per length, witness, proof steps) and the status that establishes;
- :mod:`.index`: Theorem 3.2 for T_Index (fixed angle, best angle, largest gap);
- :mod:`.retrieval`: Theorem 3.2 for T_Retrieval (worst margin, largest gap);
- :mod:`.readout`: Remark 3.1 read at the output (the positional readout bound);
- :mod:`.partial_induction`: [B]'s one-plane partial induction;
- :mod:`.proofs`: every correction's proof steps, by correction id.
"""

"""The symbolic layer and the mathematical facts everything else builds on (no torch).

- :mod:`.errors`: the exceptions every layer raises on bad input;
- :mod:`.rope_spec`: the numeric RoPE specification ``RopeSpec`` (numpy);
- :mod:`.rope_symbolic`: rotations, a symbolic spec and closed-form logits of two vectors;
- :mod:`.construction`: constructions declared token by token;
- :mod:`.derive`: a construction's closed-form logits, proved equal to the raw product;
- :mod:`.stable`: numerically stable rewrites of cosine differences;
- :mod:`.bounds`: [A]'s reported Theorem 3.2 bounds in stable form;
- :mod:`.dirichlet`: Theorems D and R for many planes, with their proof steps;
- :mod:`.multihop`: multi-hop programs (labelled residual stream, per-layer heads) and the in-place
  recursion; :mod:`.multihop_bound`: from per-layer margins to a bound on their readout margin.
"""

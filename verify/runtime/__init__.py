"""The torch kernel every check runs on: :mod:`.rope` rotates (``apply_rope``, ``rope_logits``),
:mod:`.attention` is the causal single-head module ``RopeAttention``, :mod:`.devices` resolves
``device``/``dtype`` arguments, :mod:`.resolution` bounds rounding errors per dtype, :mod:`.reference`
is an independent numpy reference for RoPE logits, :mod:`.compiled` runs compiled heads
(module, embeddings, answers), :mod:`.multilayer` runs compiled multi-hop models layer by layer and
:mod:`.chain_readout` gives their last-position readout on long inputs."""

"""The torch kernel every check runs on: :mod:`.rope` rotates (``apply_rope``, ``rope_logits``),
:mod:`.attention` is the causal single-head module ``RopeAttention`` (full path and
``need_weights=False`` fast path), :mod:`.finite` is the finiteness policy of both (``check=``),
:mod:`.threads` the thread policy of the toolkit's workloads, :mod:`.devices` resolves
``device``/``dtype`` arguments, :mod:`.resolution` bounds rounding errors per dtype, :mod:`.reference`
is an independent numpy reference for RoPE logits, :mod:`.compiled` runs compiled heads
(module, embeddings, answers), :mod:`.multilayer` runs compiled multi-hop models layer by layer and
:mod:`.chain_readout` gives their last-position readout on long inputs."""

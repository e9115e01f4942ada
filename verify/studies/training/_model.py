"""The HF ``GPTJForCausalLM`` a configuration describes (``docs/theory.md`` section 6): ``n_layer``
blocks of one head, ``n_embd`` = head dimension = ``rotary_dim`` (RoPE over the whole head, GPT-J's
base 10000), an MLP of width ``n_inner`` with the configuration's ``activation``, dropout everywhere,
eager attention (the layer-swap scores read attention weights), untied embeddings, and the task
vocabulary plus ``[UNK]``."""

from __future__ import annotations

from typing import Any

import torch

from ropeproof.verify.interop.hf._library import require_transformers
from ropeproof.verify.studies.training._config import TrainConfig


def gptj_config(config: TrainConfig, vocab_size: int) -> Any:
    """The ``GPTJConfig`` of ``config`` for a vocabulary of ``vocab_size`` ids (the last is ``[UNK]``)."""
    tf = require_transformers()
    return tf.GPTJConfig(
        vocab_size=vocab_size,
        n_positions=config.n_positions,
        n_embd=config.n_embd,
        n_layer=config.n_layer,
        n_head=1,
        rotary_dim=config.n_embd,
        n_inner=config.n_inner,
        activation_function=config.activation,
        resid_pdrop=config.dropout,
        embd_pdrop=config.dropout,
        attn_pdrop=config.dropout,
        layer_norm_epsilon=config.layer_norm_epsilon,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=vocab_size - 1,
        attn_implementation="eager",
    )


def build_model(config: TrainConfig, vocab_size: int, seed: int) -> Any:
    """A freshly initialised ``GPTJForCausalLM`` (HF's initialisation after ``torch.manual_seed(seed)``)."""
    tf = require_transformers()
    torch.manual_seed(seed)
    model = tf.GPTJForCausalLM(gptj_config(config, vocab_size))
    model.generation_config.pad_token_id = vocab_size - 1
    model.generation_config.eos_token_id = None
    return model


def last_token_logits(model: Any, input_ids: torch.Tensor) -> torch.Tensor:
    """The model's logits at the last position ``[batch, vocab]`` (the answer is the next token)."""
    return model(input_ids=input_ids, use_cache=False).logits[:, -1]

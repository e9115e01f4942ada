"""[A]'s layer-input swap on HF ``GPTJForCausalLM`` / ``LlamaForCausalLM``: the adapter and the
one-call scorer (the generic procedure is :mod:`ropeproof.verify.measure.ps._layer_swap`).

- *Block input*: a forward pre-hook on decoder layer ``l`` records the hidden states it receives
  while the model runs on the token ids (position ids ``0 .. n-1``, no padding); the run stops there.
- *Re-running block l*: the whole decoder layer module is called on the (swapped) hidden states,
  with position ids ``0 .. n-1``, HF's rotary embeddings for them and an additive causal mask
  (``finfo.min`` above the diagonal), as :func:`ropeproof.verify.interop.hf._run.hf_attention_forward`
  does for the attention alone. GPT-J's block is parallel (one LayerNorm feeding attention and MLP),
  LLaMA's sequential (RMSNorm, attention, residual, RMSNorm, MLP); either way the attention weights
  are read with a forward hook on the block's attention module, so the norms run exactly as in the
  model. The MLP runs too (it is part of the block) though it cannot change the weights. For GPT-J
  (sin/cos passed in by the model, no hooks on the block) only what the weights depend on runs (the
  LayerNorm, the q and k projections, HF's rotary embedding and eager attention weights), the same
  operations on the same operands.
- The model must use eager attention (``attn_implementation="eager"``): SDPA and flash kernels do
  not return weights. HF's eager softmax runs in float32 (then casts to the model's dtype), which sets
  the tolerance of the probability check.
"""

from __future__ import annotations

from typing import Any

import torch

from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop.hf._converters import model_converter
from ropeproof.verify.measure.ps._layer_swap import LayerSwapScores, layer_swap_scores
from ropeproof.verify.measure.ps._swap_stream import DEFAULT_MEMORY_BUDGET

QUERY_ROWS = 4
"""Query rows the GPT-J attention-row path computes (the last ones; the last is read): float32 matrix
products of fewer rows round differently from the same rows in the block's full product."""


class _StopAtBlock(Exception):
    """Raised by the pre-hook once block ``l``'s input is recorded (nothing after it needs to run)."""


class HFLayerSwap:
    """A :class:`~ropeproof.verify.measure.ps._layer_swap.LayerSwapAdapter` for an HF GPT-J or LLaMA model
    (causal LM or base model) loaded with ``attn_implementation="eager"``, in eval mode (dropout
    would make rows random; a model in training mode is refused). Runs on the model's device and
    dtype."""

    def __init__(
        self, model: Any, arch: str | None = None, known: tuple[Any, dict[int, torch.Tensor]] | None = None
    ) -> None:
        self.converter = model_converter(model, arch)
        self.arch = self.converter.name
        impl = getattr(model.config, "_attn_implementation", None) or "eager"
        if impl != "eager":
            raise HeadImportError(
                f"the model uses attn_implementation={impl!r}, which returns no attention weights; load it "
                "with attn_implementation='eager' (e.g. from_pretrained(path, attn_implementation='eager'))"
            )
        self.model = model
        conv, cfg = self.converter, model.config
        self.base = conv.base(model)
        self.layers = conv.layers(model)
        self.n_layers = len(self.layers)
        self.n_heads = conv.heads(cfg)
        self.hidden_size = conv.width(cfg)
        self.inner = conv.inner(cfg)
        self.softmax_dtype: torch.dtype | None = torch.float32
        self.known = known

    def _layer(self, layer: int) -> Any:
        return self.converter.block(self.model, layer)

    def input_norm(self, layer: int) -> Any:
        """Block ``layer``'s pre-attention norm module."""
        return self.converter.input_norm(self._layer(layer))

    def _check_eval(self) -> None:
        if self.model.training:
            raise HeadImportError(
                "the model is in training mode (dropout would make rows random); call model.eval()"
            )

    def layer_inputs(self, tokens: Any, layer: int) -> torch.Tensor:
        """Hidden states entering block ``layer`` for token ids ``tokens`` ``[batch, n]`` (those given as
        ``known = (token ids, {layer: states})`` when ``tokens`` are those ids)."""
        block = self._layer(layer)
        self._check_eval()
        ids = torch.as_tensor(tokens).to(next(self.model.parameters()).device)
        if self.known is not None and layer in self.known[1]:
            known_ids = torch.as_tensor(self.known[0]).to(ids.device)
            if known_ids.shape == ids.shape and torch.equal(known_ids, ids):
                return self.known[1][layer].clone()
        seen: list[torch.Tensor] = []

        def record(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            hidden = args[0] if args else kwargs["hidden_states"]
            seen.append(hidden.detach().clone())
            raise _StopAtBlock

        handle = block.register_forward_pre_hook(record, with_kwargs=True)
        try:
            with torch.no_grad():
                self.model(input_ids=ids, use_cache=False)
        except _StopAtBlock:
            pass
        finally:
            handle.remove()
        if not seen:
            raise HeadImportError(f"block {layer} never ran; is the model a GPT-J / LLaMA decoder?")
        return seen[0]

    def attention_rows(self, hidden: torch.Tensor, layer: int) -> torch.Tensor:
        """Block ``layer`` re-run on ``hidden``; each head's last-token attention row ``[batch, H, n]``."""
        block = self._layer(layer)
        self._check_eval()
        attn = self.converter.attention(block)
        param = next(self.model.parameters())
        hidden = hidden.to(device=param.device, dtype=param.dtype)
        batch, n, _ = hidden.shape
        pos = torch.arange(n, device=hidden.device).unsqueeze(0).expand(batch, n)
        future = torch.ones(n, n, dtype=torch.bool, device=hidden.device).triu(1)
        mask = torch.zeros(1, 1, n, n, dtype=hidden.dtype, device=hidden.device)
        mask = mask.masked_fill(future, torch.finfo(hidden.dtype).min)
        seen: list[Any] = []

        def record(module: Any, args: Any, output: Any) -> None:
            seen.append(output[1] if isinstance(output, tuple) and len(output) > 1 else None)

        shortcut = self.converter.last_rows_shortcut and not self.converter.rotary_inside_attention(attn)
        if shortcut and self._plain(block):
            with torch.no_grad():
                return self._gptj_rows(block, hidden, mask, pos)
        handle = attn.register_forward_hook(record)
        try:
            with torch.no_grad():
                if self.converter.rotary_inside_attention(attn):
                    block(hidden, attention_mask=mask, position_ids=pos, output_attentions=True)
                else:
                    pe = self.converter.rotary_embeddings(self.model, hidden, pos)
                    block(
                        hidden,
                        attention_mask=mask,
                        position_ids=pos,
                        position_embeddings=pe,
                        output_attentions=True,
                    )
        finally:
            handle.remove()
        if not seen or not isinstance(seen[-1], torch.Tensor) or seen[-1].ndim != 4:
            raise HeadImportError(
                "the attention module returned no weights; load the model with attn_implementation='eager'"
            )
        return seen[-1][:, :, -1, :]

    @staticmethod
    def _plain(block: Any) -> bool:
        """Whether no hook sits on ``block`` or its modules (hooks would see only the full block run)."""
        return not any(m._forward_hooks or m._forward_pre_hooks for m in block.modules())

    def _gptj_rows(self, block: Any, hidden: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor) -> Any:
        """GPT-J block ``block``'s attention weights' last row on ``hidden`` ``[batch, H, n]``, computed
        with only what it depends on: the block's LayerNorm, the k projection at every position and the
        q projection at the last :data:`QUERY_ROWS` (fewer rows would round differently in float32), HF's
        rotary embedding (``x * cos + rotate_every_two(x) * sin`` on the first ``rotary_dim`` features,
        the position table repeated once for the batch) and HF's eager attention weights of those rows
        (float32 ``q k^T`` times the scaling, the additive mask, softmax, cast to the model's dtype):
        the same operations on the same operands as the whole block's run, whose v, out projection and
        MLP cannot change the weights."""
        from transformers.models.gptj.modeling_gptj import rotate_every_two

        attn = block.attn
        x = block.ln_1(hidden)
        n = x.shape[1]
        rows = min(n, QUERY_ROWS)
        sin, cos = self.converter.rotary_embeddings(self.model, x[:1], pos[:1])
        sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
        cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)

        def rotated(t: torch.Tensor, at: slice) -> torch.Tensor:
            t = t.view(*t.shape[:-1], -1, attn.head_dim)
            r = attn.rotary_dim if attn.rotary_dim is not None else attn.head_dim
            turned = (t[..., :r] * cos[:, at]) + (rotate_every_two(t[..., :r]) * sin[:, at])
            return torch.cat([turned, t[..., r:]], dim=-1).transpose(1, 2)

        key = rotated(attn.k_proj(x), slice(None))
        query = rotated(attn.q_proj(x[:, n - rows :]), slice(n - rows, None))
        weights = torch.matmul(query.to(torch.float32), key.to(torch.float32).transpose(2, 3)) * attn.scaling
        weights = torch.nn.functional.softmax(weights + mask[..., n - rows :, :], dim=-1).to(x.dtype)
        return weights[:, :, -1, :]

    def bytes_per_sequence(self, n: int, layer: int) -> int:
        """Block ``layer`` on one sequence of ``n`` tokens: about ten ``[n, hidden]`` activations (norm,
        q, k, v and their rotations, outputs), two ``[n, intermediate]`` (MLP) in the model's dtype,
        and three float32 ``[heads, n, n]`` score/weight tensors."""
        item = next(self.model.parameters()).element_size()
        return n * (10 * self.hidden_size + 2 * self.inner) * item + 3 * 4 * self.n_heads * n * n


def hf_layer_swap_scores(
    model: Any,
    input_ids: Any,
    layer: int,
    heads: Any = None,
    tau: float = 1e-4,
    block_size: int = 1,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    max_skipped_weight: float | None = 0.0,
    per_swap: bool = False,
    chunk_size: int | None = None,
    arch: str | None = None,
    inputs: torch.Tensor | None = None,
) -> LayerSwapScores:
    """[A]'s layer-input swap scores of block ``layer`` of an HF GPT-J / LLaMA model.

    ``model``: a ``GPTJForCausalLM`` / ``LlamaForCausalLM`` (or base model) with eager attention;
    ``input_ids``: ``[batch, n]`` token ids, the query last; ``arch``: a registered converter
    (default: ``model.config.model_type``). Every other argument and the result are those of
    :func:`ropeproof.verify.measure.ps._layer_swap.layer_swap_scores`: the hidden states entering block
    ``layer`` are swapped at each pair of non-query positions (or blocks), the block alone is re-run
    with the position ids unchanged, and each head's last-token attention row gives its score.
    ``inputs``: the hidden states entering block ``layer`` on ``input_ids``, if already computed (the
    model's forward up to the block is then not run).
    """
    adapter = HFLayerSwap(model, arch, None if inputs is None else (input_ids, {layer: inputs}))
    return layer_swap_scores(
        adapter,
        input_ids,
        layer,
        heads,
        tau,
        block_size,
        memory_budget,
        max_skipped_weight,
        per_swap,
        chunk_size,
    )

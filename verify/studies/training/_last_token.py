"""The trained GPT-J models' answer at the last position, computed with only what that answer needs.

The claims about trained models read one thing from a forward: the argmax of the last position's logits.
:class:`LastToken` runs an HF ``GPTJForCausalLM`` for exactly that, from its own weights and in its own
attention implementation (``config._attn_implementation``: ``"sdpa"``, PyTorch's
:func:`~torch.nn.functional.scaled_dot_product_attention` with ``is_causal``, as the length study loads
its models; ``"eager"``, the explicit softmax of HF's eager attention, as :func:`load_shipped` does), op
for op as HF's GPT-J block computes (layer norm; q, k, v; GPT-J's interleaved rotary embedding from the
model's sin/cos table; attention; out projection; the parallel MLP; ``attn + mlp + residual``), except:

- the last block computes its out projection and MLP at the last position only (at least
  :data:`MIN_ROWS` rows: the last few positions of a batch of fewer than 4 inputs), and the final layer
  norm and ``lm_head`` run on the last position only (what HF's ``logits_to_keep=1`` already does);
- the MLP runs on :data:`MLP_ROWS` positions at a time, so its ``n_inner``-wide intermediate stays in
  the cache, and the ``gelu_new`` activation is evaluated in place in HF's order of operations;
- a block whose attention output is zeroed (``zero``, the claims' ablations) skips its attention;
- :meth:`LastToken.states` returns the hidden states entering a block, and :meth:`LastToken.logits`
  starts from them, so ablations of a block reuse the unchanged blocks below it.

Every operation is HF's, in HF's order and on the same operands, with matrix products of at least
:data:`MIN_ROWS` rows, so the logits are HF's bit for bit on this machine's float32 kernels (tests
check it on the shipped models, ablations and both attention implementations included).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F

from ropeproof.machinery._errors import InputError

MLP_ROWS = 512
"""Positions per MLP call (module docstring): the ``[rows, n_inner]`` intermediate fits the cache."""
MIN_ROWS = 4
"""The last block's out projection and MLP run on at least this many rows (the last positions of each
input): the float32 matrix products of fewer rows round differently from the same rows in a larger
product, which HF's full forward computes."""
_GELU_C = math.sqrt(2.0 / math.pi)


def _gelu_new_(x: torch.Tensor) -> torch.Tensor:
    """HF's ``gelu_new`` (``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))))``, the same
    operations in the same order, overwriting ``x``."""
    y = torch.pow(x, 3.0)
    y.mul_(0.044715).add_(x).mul_(_GELU_C).tanh_().add_(1.0)
    return x.mul_(0.5).mul_(y)


class LastToken:
    """An HF ``GPTJForCausalLM``'s last-position logits (module docstring). Holds references to the
    model's weights (no copies); the model is not modified."""

    def __init__(self, model: Any) -> None:
        tr = getattr(model, "transformer", None)
        if (
            tr is None
            or not hasattr(tr, "h")
            or not hasattr(tr, "rotary_emb")
            or not hasattr(model, "lm_head")
        ):
            raise InputError(f"model must be an HF GPTJForCausalLM; got {type(model).__name__}")
        cfg = model.config
        self.impl = getattr(cfg, "_attn_implementation", "eager")
        if self.impl not in ("sdpa", "eager"):
            raise InputError(f"model attention {self.impl!r} is not supported; accepted: 'sdpa', 'eager'")
        self.model = model
        self.heads = int(cfg.n_head)
        self.head_dim = int(cfg.n_embd) // self.heads
        self.rotary = int(cfg.rotary_dim or self.head_dim)
        self.table = tr.rotary_emb.embed_positions
        if cfg.activation_function == "gelu_new":
            self.act = _gelu_new_
        else:
            from transformers.activations import ACT2FN

            self.act = ACT2FN[cfg.activation_function]
        self.wte, self.ln_f, self.lm_head = tr.wte, tr.ln_f, model.lm_head
        self.blocks = [
            (
                b.ln_1, b.attn.q_proj.weight.T, b.attn.k_proj.weight.T, b.attn.v_proj.weight.T,
                b.attn.out_proj.weight.T, b.mlp.fc_in.weight.T, b.mlp.fc_in.bias, b.mlp.fc_out.weight.T,
                b.mlp.fc_out.bias, float(b.attn.scaling),
            )
            for b in tr.h
        ]  # fmt: skip

    @property
    def layers(self) -> int:
        return len(self.blocks)

    def _zero(self, zero: Iterable[int]) -> set[int]:
        out = {int(z) for z in zero}
        for z in out:
            if not 0 <= z < self.layers:
                raise InputError(f"ablate={z} is out of range; the model has layers 0..{self.layers - 1}")
        return out

    def _rotate(self, x: torch.Tensor, sin: torch.Tensor, cos: torch.Tensor) -> torch.Tensor:
        """GPT-J's rotary embedding of ``x [batch, n, heads, head_dim]`` (HF's ``apply_rotary_pos_emb``:
        ``x * cos + rotate_every_two(x) * sin`` on the first ``rotary_dim`` features of each head)."""
        r = x[..., : self.rotary]
        x1, x2 = r[..., ::2], r[..., 1::2]
        out = torch.stack((x1 * cos + (-x2) * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)
        return out if self.rotary == self.head_dim else torch.cat([out, x[..., self.rotary :]], dim=-1)

    def _attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> Any:
        """Causal attention of ``q, k, v [b, heads, n, d]`` (query ``i`` sees keys ``0..i``), in the
        model's implementation."""
        if self.impl == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
        w = torch.matmul(q, k.transpose(2, 3)) * scale  # HF's eager attention, HF's additive mask
        n = k.shape[2]
        above = torch.ones(n, n, dtype=torch.bool, device=w.device).triu(1)
        mask = torch.zeros(n, n, dtype=w.dtype, device=w.device).masked_fill(above, torch.finfo(w.dtype).min)
        return torch.matmul(F.softmax(w + mask, dim=-1), v)

    def _mlp(self, x: torch.Tensor, w1: Any, b1: Any, w2: Any, b2: Any) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        out = torch.empty(flat.shape[0], w2.shape[1], dtype=flat.dtype, device=flat.device)
        for s in range(0, flat.shape[0], MLP_ROWS):
            torch.addmm(
                b2, self.act(torch.addmm(b1, flat[s : s + MLP_ROWS], w1)), w2, out=out[s : s + MLP_ROWS]
            )
        return out.view(*x.shape[:-1], w2.shape[1])

    def _block(self, i: int, h: torch.Tensor, zeroed: bool, last: bool) -> torch.Tensor:
        ln, wq, wk, wv, wo, w1, b1, w2, b2, scale = self.blocks[i]
        b, n, _ = h.shape
        x = ln(h)
        keep = min(n, -(-MIN_ROWS // b)) if last else n
        if zeroed:
            a = torch.zeros(b, keep, wo.shape[1], dtype=h.dtype, device=h.device)
        else:
            sin, cos = self.table[:n].to(h.dtype).chunk(2, dim=-1)
            sin, cos = sin[None, :, None], cos[None, :, None]
            q = self._rotate((x @ wq).view(b, n, self.heads, self.head_dim), sin, cos)
            k = self._rotate((x @ wk).view(b, n, self.heads, self.head_dim), sin, cos)
            v = (x @ wv).view(b, n, self.heads, self.head_dim)
            a = self._attend(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale)
            if last:  # every query's attention, as HF's kernel computes it, then the kept rows
                a = a[:, :, n - keep :]
            a = a.transpose(1, 2).reshape(b, a.shape[2], -1) @ wo
        if last:  # only the last position's output is read after this block
            h, x = h[:, n - keep :], x[:, n - keep :]
        return a + self._mlp(x, w1, b1, w2, b2) + h

    def states(self, input_ids: torch.Tensor, layer: int) -> torch.Tensor:
        """The hidden states ``[batch, n, n_embd]`` entering block ``layer`` (``0``: the embeddings), no
        block ablated."""
        if not 0 <= layer < self.layers:
            raise InputError(f"layer={layer} is out of range; the model has layers 0..{self.layers - 1}")
        with torch.inference_mode():
            h = self.wte(input_ids)
            for i in range(layer):
                h = self._block(i, h, False, False)
        return h

    def states_after(self, states: torch.Tensor, layer: int) -> torch.Tensor:
        """The hidden states leaving block ``layer`` (not ablated), given ``states`` entering it."""
        if not 0 <= layer < self.layers - 1:
            raise InputError(
                f"layer={layer} must be in 0..{self.layers - 2} (the last block keeps one position)"
            )
        with torch.inference_mode():
            return self._block(layer, states, False, False)

    def logits(
        self,
        input_ids: torch.Tensor | None = None,
        zero: Iterable[int] = (),
        states: torch.Tensor | None = None,
        start: int = 0,
    ) -> torch.Tensor:
        """The last position's logits ``[batch, vocab]`` with the attention outputs of the blocks in
        ``zero`` set to zero: from ``input_ids``, or from ``states`` entering block ``start``
        (:meth:`states`; every block in ``zero`` must be at or above ``start``)."""
        zeroed = self._zero(zero)
        if (input_ids is None) == (states is None):
            raise InputError("give exactly one of input_ids and states")
        if states is None:
            start = 0
        elif not 0 <= start < self.layers or any(z < start for z in zeroed):
            raise InputError(
                f"start={start} must be in 0..{self.layers - 1} and at or below every zeroed block"
            )
        with torch.inference_mode():
            h = self.wte(input_ids) if states is None else states
            for i in range(start, self.layers):
                h = self._block(i, h, i in zeroed, i == self.layers - 1)
            return self.lm_head(self.ln_f(h[:, -1]))

    def answers(
        self, input_ids: torch.Tensor, zero: Iterable[int] = (), batch_tokens: int = 4096
    ) -> torch.Tensor:
        """The greedy answers ``[batch]`` (argmax of :meth:`logits`), about ``batch_tokens`` tokens per
        forward."""
        step = max(1, batch_tokens // max(1, int(input_ids.shape[1])))
        out = [
            self.logits(input_ids[s : s + step], zero).argmax(-1) for s in range(0, input_ids.shape[0], step)
        ]
        return torch.cat(out) if out else torch.zeros(0, dtype=torch.long)

"""HF ``transformers`` interop: export compiled heads into GPT-J / LLaMA layers, import trained heads.

Needs the optional ``hf`` extra (``transformers``). The placement arithmetic below works without it;
building or reading a model imports ``transformers`` on first use.

**Export** (:func:`export_head`). A :class:`~ropeproof.constructions._compile.CompiledHead` becomes a
one-layer
``GPTJForCausalLM`` or ``LlamaForCausalLM`` (built from a config, nothing downloaded) whose layer-0
attention computes exactly the head's logits, pattern and output:

- *Frequencies are placed, never approximated.* Every plane that carries query/key weight is moved
  onto a distinct plane of the target spectrum with the same frequency (a negative frequency onto
  ``|theta|`` with the plane's two dims swapped). "Same" means equal up to float64 rounding of the
  spectrum formula (relative ``FREQ_RTOL = 1e-12``); a 4-digit value such as ``0.8660`` is *not*
  ``10000^(-2/128) = 0.86596432...`` and is refused with an explanation.
- *GPT-J* (interleaved planes, partial rotary, base fixed at 10000): spectrum
  ``10000^(-2k/rotary_dim)``, ``k = 0 .. rotary_dim/2 - 1``, plus pass-through planes (``theta = 0``)
  beyond ``rotary_dim``. The smallest even ``rotary_dim`` that holds every frequency is chosen.
  T_Index at ``theta = 10000^(-2/128)`` lands on ``k = 1`` (dims 2, 3) of ``rotary_dim = 128`` -- [A]'s
  "frequency id 2" counts from 1 (``id = k + 1``; Retrieval's id 42 is ``k = 41``, ``0.00274``).
- *LLaMA* (half layout, every dim rotates, configurable ``rope_theta``): spectrum
  ``rope_theta^(-2k/head_dim)``. Base 10000 is tried first; otherwise ``rope_theta`` is derived so
  that every frequency is an integer power of one ratio (one plane at ``theta``: ``k = 1`` and
  ``rope_theta = theta^(-head_dim/2)``). A ``theta = 0`` plane has an exact home only at
  ``rope_theta = inf``, whose spectrum is ``(1, 0, 0, ...)`` exactly (``inf ** x = inf``, ``1/inf = 0``
  in every precision); that leaves plane 0 at frequency 1 as the only rotating plane, so a head mixing
  zero and other frequencies has no LLaMA placement (``LlamaAttention`` has no partial rotary).
- *Scale*: HF multiplies ``q . k`` by ``head_dim^(-1/2)``; ``q_proj`` carries
  ``sqrt(head_dim) * head.scale * logit_scale``.
- *Residual layout*: the head reads hidden dims ``[0, d_model)`` and writes ``[d_model, 2 d_model)``,
  so the LM head sees only the attention output, as :meth:`CompiledHead.answer` does. Value dims keep
  their indices (``v_proj``/``o_proj`` are separate projections), so ``head_dim`` is at least the
  compiled head's last used value dim + 1.
- *Norm bypass* (the LM wrapper): every norm gets ``eps = 2^80`` and gain ``2^40``. While the
  stream's (mean-square) variance stays below ``2^55`` (float32 norms) or ``2^27`` (GPT-J float64),
  ``var + eps`` rounds to ``eps``, the normaliser is exactly ``2^-40``, so RMSNorm (LLaMA) is the
  identity and LayerNorm (GPT-J) is ``x - mean(x)``; for GPT-J every matrix reading a LayerNorm
  output gets one extra column on a spare, always-zero hidden dim equal to minus its row sum, which
  cancels the mean exactly in real arithmetic. MLPs are zero. The LM's logits therefore equal
  ``output @ W_U`` of our head up to rounding (not only in argmax).

**Precision of the HF modules** (checked with transformers 4.45 to 5.24). Even in a float64 model,
GPT-J's sin/cos table and its eager ``q . k`` are float32, and LLaMA's rotary angles, RMSNorm and
eager softmax are float32. Float64 parity is therefore at float32 level except where those steps
are exact (``theta = 0`` planes: LLaMA's eager scores, SDPA outputs); the tests report the measured
differences. HF also evaluates the spectrum in float32, so "exact" frequencies are exact in float64
arithmetic and agree with HF's within :func:`~.placement.spectrum_rtol` (relative ``2 (|ln rope_theta| +
4)`` float32 roundings, tested against mpmath); a placement whose frequency HF's float32 spectrum does not
hold (a ``rope_theta`` past float32's range) is refused, and a small frequency moves to a higher plane
whose base float32 holds.

**Converters** (:mod:`.converters`): everything architecture-specific -- module paths, state-dict keys,
configs, head geometry, norm numerics, which placement search applies -- sits in one converter per
architecture (:mod:`.gptj`, :mod:`.llama`); the code below asks the registry and never names an
architecture. :func:`register_converter` adds one.

**Import** (:func:`import_head`): one head of a GPT-J or LLaMA layer (state dict + config, GQA
aware) as a :class:`~ropeproof.verify.kernel._attention.RopeAttention` with the architecture's layout,
``rotary_dim``,
frequencies (computed in float64 from the formula; HF evaluates them in float32) and scale.

**Multi-hop models**: :mod:`.model_export` writes a whole compiled multi-hop model as a checkpoint with
its tokenizer (``ropeproof export-model``), :mod:`.model_parity` compares it layer by layer with the
ropeproof module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "GPTJ_BASE": "ropeproof.theory._architectures",
    "ExportError": "ropeproof.verify.interop._errors",
    "HeadImportError": "ropeproof.verify.interop._errors",
    "EXPORT_INFO_FILE": "ropeproof.verify.interop._head_export",
    "ExportInfo": "ropeproof.verify.interop._head_export",
    "load_export_info": "ropeproof.verify.interop._head_export",
    "HFConverter": "ropeproof.verify.interop.hf._converter",
    "CONVERTERS": "ropeproof.verify.interop.hf._converters",
    "converter": "ropeproof.verify.interop.hf._converters",
    "register_converter": "ropeproof.verify.interop.hf._converters",
    "HFExport": "ropeproof.verify.interop.hf._export",
    "HFExportInfo": "ropeproof.verify.interop.hf._export",
    "export_head": "ropeproof.verify.interop.hf._export",
    "place_head": "ropeproof.verify.interop.hf._export",
    "import_head": "ropeproof.verify.interop.hf._head_import",
    "import_hf_head": "ropeproof.verify.interop.hf._head_import",
    "import_model_head": "ropeproof.verify.interop.hf._head_import",
    "hf_layer_swap_scores": "ropeproof.verify.interop.hf._layer_swap",
    "export_model": "ropeproof.verify.interop.hf._model_export",
    "FREQ_RTOL": "ropeproof.verify.interop.hf._placement",
    "Placement": "ropeproof.verify.interop.hf._placement",
    "place_gptj": "ropeproof.verify.interop.hf._placement",
    "place_llama": "ropeproof.verify.interop.hf._placement",
    "same_freq": "ropeproof.verify.interop.hf._placement",
    "spectrum_freq": "ropeproof.verify.interop.hf._placement",
    "HFAttentionResult": "ropeproof.verify.interop.hf._run",
    "attention_module": "ropeproof.verify.interop.hf._run",
    "capture_softmax_inputs": "ropeproof.verify.interop.hf._run",
    "hf_attention_forward": "ropeproof.verify.interop.hf._run",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.theory._architectures import GPTJ_BASE
    from ropeproof.verify.interop._errors import ExportError, HeadImportError
    from ropeproof.verify.interop._head_export import EXPORT_INFO_FILE, ExportInfo, load_export_info
    from ropeproof.verify.interop.hf._converter import HFConverter
    from ropeproof.verify.interop.hf._converters import CONVERTERS, converter, register_converter
    from ropeproof.verify.interop.hf._export import HFExport, HFExportInfo, export_head, place_head
    from ropeproof.verify.interop.hf._head_import import import_head, import_hf_head, import_model_head
    from ropeproof.verify.interop.hf._layer_swap import hf_layer_swap_scores
    from ropeproof.verify.interop.hf._model_export import export_model
    from ropeproof.verify.interop.hf._placement import (
        FREQ_RTOL,
        Placement,
        place_gptj,
        place_llama,
        same_freq,
        spectrum_freq,
    )
    from ropeproof.verify.interop.hf._run import (
        HFAttentionResult,
        attention_module,
        capture_softmax_inputs,
        hf_attention_forward,
    )

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

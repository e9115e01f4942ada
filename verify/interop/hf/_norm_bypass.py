"""The constants that make an exported LM's norms exact: LayerNorm computes ``x - mean(x)``, RMSNorm the
identity.

Every norm of an exported model gets ``eps = NORM_EPS = 2^80`` and gain ``NORM_GAIN = 2^40``. While the
stream's (mean-square) variance stays below ``2^55`` (float32 norms) or ``2^27`` (float64 norms),
``var + eps`` rounds to ``eps``, the normaliser is exactly ``2^-40`` and the gain undoes it exactly
(powers of two). GPT-J's LayerNorm still subtracts the mean; every matrix that reads a LayerNorm output
gets one extra column on a spare, always-zero hidden dim equal to minus its row sum, which cancels the
mean in real arithmetic (:mod:`ropeproof.verify.interop.hf._export`,
:mod:`ropeproof.verify.interop.hf._model_export`).
"""

from __future__ import annotations

NORM_EPS = 2.0**80
"""Norm epsilon of the exported LM: dominates any variance the stream reaches, exactly in float32."""

NORM_GAIN = 2.0**40
"""Norm gain of the exported LM: ``sqrt(NORM_EPS)``, so normalise-then-scale is exact."""

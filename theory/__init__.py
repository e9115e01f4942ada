"""Symbolic layer: sympy statements of RoPE heads, their closed-form logits and bounds."""

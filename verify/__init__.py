"""Checking: the torch RoPE attention module, discrepancy measurement, scores and strategies."""

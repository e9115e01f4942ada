"""Compilation: symbolic constructions become explicit attention weights."""

"""Remark 3.1's identities: they hold for generic weights, and the checker can fail."""

from __future__ import annotations

import sympy as sp

from ropeproof.theory._impossibility import (
    positional_logits_ignore_key_content,
    symbolic_output_is_permutation_invariant,
)


def test_symbolic_heads_are_blind_to_order() -> None:
    assert symbolic_output_is_permutation_invariant(2)
    assert symbolic_output_is_permutation_invariant(3)


def test_a_rotating_plane_breaks_the_symmetry() -> None:
    # the same identity at a symbolic angle is false: RoPE is what lets a head see positions
    assert not symbolic_output_is_permutation_invariant(2, sp.Symbol("theta", real=True))


def test_constant_keys_ignore_content() -> None:
    assert positional_logits_ignore_key_content(2)

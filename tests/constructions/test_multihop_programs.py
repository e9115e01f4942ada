"""The multi-hop program builders: [A]'s constants by default, vocabularies, layer programs."""

from __future__ import annotations

import sympy as sp

from ropeproof.constructions._multihop_programs import (
    LETTER_CODES,
    LOGIT_SCALE,
    letter_program,
    number_program,
)
from ropeproof.constructions._paper import (
    ALPHABET_SIZE,
    INDEX_THETA,
    LETTER_TASK_MAX_INT,
    NUMBER_TASK_LETTERS,
    NUMBER_TASK_MAX_INT,
    RETRIEVAL_THETA,
)


def test_number_program_defaults_follow_the_paper() -> None:
    p = number_program()
    assert len(p.tokens) == NUMBER_TASK_LETTERS + NUMBER_TASK_MAX_INT
    assert [layer.label for layer in p.layers] == ["index"] * 4 + ["reflexive-positional"] * 8
    assert p.parameters[sp.Symbol("theta_I0", real=True)] == INDEX_THETA
    assert p.numeric(p.logit_scale) == LOGIT_SCALE
    assert p.answer_count == NUMBER_TASK_LETTERS and p.hop_pattern == (True,) * 4 + (False,) * 8


def test_letter_program_defaults_follow_the_paper() -> None:
    p = letter_program()
    assert len(p.tokens) == ALPHABET_SIZE * (ALPHABET_SIZE + LETTER_TASK_MAX_INT)
    assert p.answer_count == ALPHABET_SIZE * LETTER_TASK_MAX_INT
    assert p.parameters[sp.Symbol("theta_R", real=True)] == RETRIEVAL_THETA
    assert p.layers[0].code == "one-plane" and p.layers[0].alphabet == ALPHABET_SIZE
    assert set(LETTER_CODES) == {"one-plane", "orthogonal"}


def test_symbolic_reflexive_defaults_to_nope_and_reads_self() -> None:
    p = number_program(hops=2, layers=3, reflexive="symbolic", letters=4, max_int=2)
    refl = p.layers[-1]
    assert refl.variant == "symbolic" and refl.query[0].feature == "self"
    assert p.numeric(refl.planes[0].freq) == 0.0


def test_orthogonal_code_takes_one_frequency_per_plane() -> None:
    import pytest

    from ropeproof.machinery._errors import ConstructionError

    p = letter_program(code="orthogonal", retrieval_theta=(1e-9, 2e-9, 3e-9, 4e-9))
    freqs = [p.numeric(plane.freq) for plane in p.layers[0].planes]
    assert freqs == [1e-9, 2e-9, 3e-9, 4e-9]  # 8 letters: 4 planes, each on its own frequency
    same = letter_program(code="orthogonal", retrieval_theta=0.0)
    assert {same.numeric(plane.freq) for plane in same.layers[0].planes} == {0.0}
    with pytest.raises(ConstructionError, match="retrieval_theta has 2 frequencies; the orthogonal code"):
        letter_program(code="orthogonal", retrieval_theta=(0.1, 0.2))

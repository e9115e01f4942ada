"""[A]'s per-layer scores of the compiled models: Index layers positional, Retrieval layers symbolic,
checked against a slow swap loop written here."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ropeproof.constructions._multihop_compile import compile_program
from ropeproof.constructions._multihop_programs import checkpoint_program
from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._multilayer import model_module
from ropeproof.verify.measure._layer_scores import CLASS_THRESHOLD, LayerScore, layer_ps_scores
from ropeproof.verify.measure._tasks import letter_task, number_task


def _slow_scores(model, insts, layer: int, tau: float = 1e-4) -> tuple[float, float]:
    """One re-run of the block per swap of the hidden states entering it; [A]'s weighted scores."""
    module = model_module(model, device="cpu")
    res = module.run([i.tokens for i in insts])
    pos_all, sym_all = [], []
    for b in range(len(insts)):
        x = res.residual[layer, b : b + 1]
        n = x.shape[1]
        d = module.layers[layer](x).pattern[0, -1].numpy()
        pos, sym, w = [], [], []
        for i in range(n - 1):
            for j in range(i + 1, n - 1):
                y = x.clone()
                y[0, [i, j]] = x[0, [j, i]]
                e = module.layers[layer](y).pattern[0, -1].numpy()
                new, old, swapped = np.array([e[i], e[j]]), np.array([d[i], d[j]]), np.array([d[j], d[i]])

                def cos(u, v):
                    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
                    return 1.0 if nu == nv == 0 else (0.0 if nu * nv == 0 else float(u @ v / (nu * nv)))

                pos.append(cos(new, old))
                sym.append(cos(new, swapped))
                w.append(abs(d[i] - d[j]) / tau)
        w = np.exp(np.array(w) - max(w))
        w /= w.sum()
        pos_all.append(float(w @ pos))
        sym_all.append(float(w @ sym))
    return float(np.mean(pos_all)), float(np.mean(sym_all))


@pytest.mark.parametrize("task", ["number", "letter"])
def test_hop_layers_score_as_predicted(task: str) -> None:
    model = compile_program(checkpoint_program(task))
    insts = (number_task if task == "number" else letter_task)(3, seed=2)
    scores = layer_ps_scores(model, insts, layers=[0, 4])
    hop = [s for s in scores if s.kind in ("index", "retrieval")]
    want = "positional" if task == "number" else "symbolic"
    assert [s.label for s in hop] == [want]
    for s in hop:
        slow = _slow_scores(model, insts, s.layer)
        assert s.S_pos == pytest.approx(slow[0], abs=1e-9) and s.S_sym == pytest.approx(slow[1], abs=1e-9)
    reflexive = scores[-1]
    assert reflexive.kind == "reflexive-positional"
    # its row sits on the query: most key entries underflow to 0, and the swap weights, nearly uniform over
    # entries of at most 1e-17, fall mostly on pairs of two such zeros (0/0, which the slow loop reads as 1)
    module = model_module(model, device="cpu")
    row = module.layers[4](module.run([i.tokens for i in insts]).residual[4]).pattern[:, -1, :-1]
    assert float(row.max()) < 1e-17
    zero = row < torch.finfo(torch.float64).tiny
    pairs = (zero[:, :, None] & zero[:, None, :]).triu(1).sum((1, 2))
    m = row.shape[1]
    # gaps |d_i - d_j| / tau below 1e-12 make the weights uniform, so these pairs carry over 40% of them
    assert float(row.max()) / 1e-4 < 1e-12 and bool((pairs > 0.4 * m * (m - 1) / 2).all())
    assert reflexive.label == "unresolved" and np.isnan(reflexive.S_pos) and np.isnan(reflexive.S_sym)


def test_labels_and_errors() -> None:
    def score(p: float, s: float) -> LayerScore:
        return LayerScore(0, "index", p, s, p, s, s, p)

    assert score(0.9, 0.1).label == "positional" and score(0.1, 0.9).label == "symbolic"
    assert score(0.9, 0.9).label == "mixed" and CLASS_THRESHOLD == 0.5
    assert score(0.9, 0.1).as_dict()["label"] == "positional"
    model = compile_program(checkpoint_program("number", hops=1, layers=2))
    with pytest.raises(InputError, match="empty"):
        layer_ps_scores(model, [])
    with pytest.raises(InputError, match="layer"):
        layer_ps_scores(model, number_task(2, hops=(1,)), layers=[5])
    assert torch.get_default_dtype() == torch.float32  # nothing here changes global torch state

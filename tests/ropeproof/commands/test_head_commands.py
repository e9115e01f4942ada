"""``sweep --head``, ``ps-score --head``, ``import hf|tl`` and ``export tl``, run in process."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ropeproof._cli import main
from ropeproof.commands import _head_dir as head_dir
from ropeproof.commands._import_head import parse_token_ids
from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._head import load_head
from ropeproof.constructions._paper import index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.theory._family import Family, FamilyCase
from ropeproof.verify.measure.exact._sweep import sweep_index, sweep_retrieval


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


def test_sweep_head_of_a_compiled_index_matches_the_closed_form(tmp_path: Path, capsys) -> None:
    """The head directory is swept over T_Index's family from its tables; sweep_index evaluates the
    stable closed form 2 sin^2: the two agree to float64 rounding of unit-vector logits."""
    assert main(["compile", "index", "--theta", "0.5", "--out", str(tmp_path / "h")]) == 0
    assert load_head(tmp_path / "h").metadata["construction_args"] == {"theta": 0.5}
    capsys.readouterr()
    assert main(["sweep", "--head", str(tmp_path / "h"), "--lengths", "2:17", "--json"]) == 0
    out = _json(capsys)
    assert out["family"] == "index" and [r["n"] for r in out["rows"]] == list(range(2, 18))
    ref = sweep_index(0.5, 17)
    for q in ("gap_sup", "gap_inf", "margin_inf"):
        got = np.array([r[q] for r in out["rows"]])
        assert np.allclose(got, ref.columns[q], rtol=0, atol=1e-14), q


def test_sweep_head_of_a_compiled_retrieval(tmp_path: Path, capsys) -> None:
    assert main(["compile", "retrieval", "--theta", "0.0027", "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    assert main(["sweep", "--head", str(tmp_path / "r"), "--lengths", "2:30:7", "--json"]) == 0
    rows = _json(capsys)["rows"]
    ref = sweep_retrieval(8, 0.0027, 30).select(2, 30, 7)
    assert np.allclose([r["margin_inf"] for r in rows], ref.columns["margin_inf"], rtol=0, atol=1e-15)
    assert main(["sweep", "--head", str(tmp_path / "r"), "--lengths", "2:5"]) == 0
    text = capsys.readouterr().out
    assert "retrieval family" in text and "worst target margin" in text and len(text.splitlines()) == 6
    # --out writes the same text to a file (it used to be ignored), under the sweep's output rule
    out = tmp_path / "table.txt"
    assert main(["sweep", "--head", str(tmp_path / "r"), "--lengths", "2:5", "--out", str(out)]) == 0
    assert out.read_text() == text and capsys.readouterr().out == ""
    assert main(["sweep", "--head", str(tmp_path / "r"), "--lengths", "2:5", "--out", str(out)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err


def test_ps_score_head_places_the_constructions(tmp_path: Path, capsys) -> None:
    """T_Index's keys are all the same vector (positional, S_pos = 1); T_Retrieval at theta = 0 is
    a NoPE head (symbolic, S_sym = 1): both exactly, so 1e-12 only absorbs float64 rounding."""
    main(["compile", "index", "--out", str(tmp_path / "i")])
    main(["compile", "retrieval", "--theta", "0", "--out", str(tmp_path / "r")])
    capsys.readouterr()
    assert main(["ps-score", "--head", str(tmp_path / "i"), "--n-inputs", "6", "--json"]) == 0
    index = _json(capsys)
    assert index["source"] == "head directory" and abs(index["scores"]["S_pos"] - 1) < 1e-12
    assert index["exclusion"]["holds_on_all_inputs"]
    assert (
        main(["ps-score", "--head", str(tmp_path / "r"), "--n-inputs", "6", "--length", "8", "--json"]) == 0
    )
    assert abs(_json(capsys)["scores"]["S_sym"] - 1) < 1e-12


def test_head_option_errors_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["sweep", "--head", str(tmp_path / "missing")]) == 2
    assert "head.json" in capsys.readouterr().err
    assert main(["sweep", "index"]) == 2  # no --theta
    assert main(["sweep", "index", "--theta", "0.5", "--head", str(tmp_path)]) == 2  # both
    assert main(["ps-score", "index", "--head", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "ropeproof ps-score: error: give one head: index, retrieval, random, or --head DIR"
    main(["compile", "index", "--out", str(tmp_path / "i")])
    assert main(["ps-score", "--head", str(tmp_path / "i"), "--length", "18"]) == 2  # family covers 17
    assert main(["sweep", "--head", str(tmp_path / "i"), "--lengths", "2:40"]) == 2
    with pytest.raises(InputError, match=r"head\.json"):
        head_dir.read_head(tmp_path / "missing")


def _previous_token_head(tmp_path: Path, with_family: bool) -> tuple[Path, Family]:
    """A previous-token head (the index rule with the one integer s = 1) saved with or without its
    one-case family (target one position back)."""
    base = index_construction(theta=0.9, letters=3, max_int=1)
    letters = tuple(t.name for t in base.tokens if t.kind == "letter")
    family = Family("previous", (FamilyCase("prev", ("1",), letters, tuple(base.token_names), 1),), "prev")
    head = compile_construction(base.with_family(family if with_family else None))
    return head.save(tmp_path / ("with" if with_family else "without")), family


def test_sweep_head_uses_the_recorded_family_and_prints_a_summary(tmp_path: Path, capsys) -> None:
    """Over its recorded family the previous-token head's worst margin at length n is
    min_{1 <= j <= max(1, n - 2)} (1 - cos(j 0.9)): the key one back scores 1 and the key j further
    from it cos(j 0.9) (the query itself is j = 1); --json carries the promised summary."""
    path, family = _previous_token_head(tmp_path, True)
    assert main(["sweep", "--head", str(path), "--lengths", "2:40", "--json"]) == 0
    out = _json(capsys)
    assert out["family"] == "previous" and out["summary"]["family_source"] == "recorded"
    assert out["summary"]["first_nonpositive_margin_n"] is None
    margins = np.array([r["margin_inf"] for r in out["rows"]])
    n = np.arange(2, 41)
    g = 2 * np.sin(np.arange(1, 40) * 0.9 / 2) ** 2
    expected = np.minimum.accumulate(g)[np.maximum(1, n - 2) - 1]
    assert np.allclose(margins, expected, rtol=0, atol=1e-15)
    assert out["summary"]["min_margin_inf"] == pytest.approx(expected.min(), abs=1e-15)
    # --family is only for a head that records none
    family.save(tmp_path / "fam.json")
    assert main(["sweep", "--head", str(path), "--family", str(tmp_path / "fam.json")]) == 2
    assert "records its family 'previous'" in capsys.readouterr().err
    assert main(["sweep", "index", "--theta", "0.5", "--family", "tokens"]) == 2
    assert "--family only apply with --head" in capsys.readouterr().err


def test_a_head_without_a_family_says_all_sequences_out_loud(tmp_path: Path, capsys) -> None:
    path, _family = _previous_token_head(tmp_path, False)
    family_file = _family.save(tmp_path / "fam.json")
    assert main(["sweep", "--head", str(path), "--lengths", "2:6"]) == 0
    text = capsys.readouterr().out
    assert "ALL token sequences" in text.splitlines()[0]
    assert main(["sweep", "--head", str(path), "--lengths", "2:6", "--json"]) == 0
    summary = _json(capsys)["summary"]
    assert summary["all_sequences"] is True and "ALL token sequences" in summary["note"]
    assert (
        main(["sweep", "--head", str(path), "--lengths", "2:6", "--family", str(family_file), "--json"]) == 0
    )
    out = _json(capsys)
    assert out["family"] == "previous" and out["summary"]["family_source"] == "given"
    assert main(["sweep", "--head", str(path), "--family", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_sweep_head_bound_finds_the_first_violation(tmp_path: Path, capsys) -> None:
    """--bound judges every length of --lengths (the STEP only thins the printed rows): T_Index's
    margin first exceeds pi^2/(2 n^2) at n = 4, float64 and certified alike."""
    assert main(["compile", "index", "--theta", "0.866", "--letters", "2", "--out", str(tmp_path / "h")]) == 0
    capsys.readouterr()
    argv = ["sweep", "--head", str(tmp_path / "h"), "--lengths", "2:17:5", "--bound", "pi^2/(2*n^2)"]
    for extra in ([], ["--certified"]):
        assert main([*argv, *extra, "--json"]) == 0
        out = _json(capsys)
        assert [r["n"] for r in out["rows"]] == [2, 7, 12, 17]
        summary = out["summary"]
        assert summary["first_violation"]["n"] == 4 and summary["certified"] == bool(extra)
        assert sum(summary["rows"].values()) == 16  # every length 2..17 judged
        assert summary["first_violation"]["witness"]["excerpt"]["n"] == 4
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "first violation: n = 4" in text and "verdict: violated" in text
    assert main([*argv[:-2], "--bound", "0.01", "--relation", ">=", "--json"]) == 0
    assert _json(capsys)["summary"]["statement"] == "margin_inf(n) >= 0.01"
    for bad, message in (
        (["--reading", "gap_sup"], "--reading only apply with --bound"),
        (["--bound", "1", "--dtype", "float32"], "--bound judges the exact float64 sweep"),
        (["--bound", "1", "--certified", "--prec", "30"], "too low for --certified"),
        (["--bound", "import os"], "'import' is not allowed"),
    ):
        assert main(["sweep", "--head", str(tmp_path / "h"), *bad]) == 2
        assert message in capsys.readouterr().err


def test_a_bound_names_its_own_symbols_and_the_head_its_finite_parameters(tmp_path: Path, capsys) -> None:
    """A head parameter named like a bound's own symbol (n, pi, a function) is refused, naming it, never
    substituted; a parameter that is NaN, infinite or a string is refused when the head is loaded; a
    bound undefined at a length (0/0, log of 0) is refused with the length, never simplified away."""
    import json

    head = tmp_path / "h"
    assert main(["compile", "index", "--theta", "0.866", "--letters", "2", "--out", str(head)]) == 0
    capsys.readouterr()
    meta_path = head / "head.json"
    original = meta_path.read_text()

    def with_parameters(text: str) -> None:
        meta = json.loads(original)
        meta["metadata"]["parameters"] = "PARAMETERS"
        meta_path.write_text(json.dumps(meta).replace('"PARAMETERS"', text))  # NaN, 1e999 as typed

    argv = ["sweep", "--head", str(head), "--lengths", "2:6", "--bound", "pi^2/(2*n^2)"]
    for params, message in (
        ('{"theta": 0.866, "n": 5}', "parameter 'n' has the name of a bound's own symbol"),
        ('{"pi": 3}', "parameter 'pi' has the name of a bound's own symbol"),
        ('{"cos": 3}', "parameter 'cos' has the name of a bound's own symbol"),
        ('{"theta": NaN}', "parameter 'theta' = nan; accepted: a finite real number"),
        ('{"theta": 1e999}', "parameter 'theta' = inf; accepted: a finite real number"),
        ('{"theta": "abc"}', "parameter 'theta' = 'abc'; accepted: a finite real number"),
    ):
        with_parameters(params)
        assert main(argv) == 2, params
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    with_parameters('{"theta": 0.866}')
    assert main([*argv[:-1], "1 - cos(theta)", "--json"]) == 0
    assert _json(capsys)["summary"]["statement"] == "margin_inf(n) <= 1 - cos(theta)"
    for bound, lengths, message in (
        ("(n-5)/(n-5)", "4:6", "undefined at n=5: a division by zero"),
        ("log(n, 0)", "2:6", "a logarithm to a base that is not positive or is 1"),
        ("1/log(0)", "2:6", "the logarithm of a number that is not positive"),
        ("n/log(0)", "2:6", "the logarithm of a number that is not positive"),
        ("10**10**10", "2:6", "the limit is 4194304 bits"),
        ("2**2**2**2**2**2", "2:6", "the limit is 4194304 bits"),
        ("n**n**n", "2:9", "at n=8"),
    ):
        assert main(["sweep", "--head", str(head), "--lengths", lengths, "--bound", bound]) == 2, bound
        assert message in capsys.readouterr().err, bound


def test_a_legacy_heads_rebuild_is_sized_before_it_is_built(tmp_path: Path, capsys) -> None:
    """A head that records no family is swept over its construction's family, rebuilt from
    construction_args: a vocabulary past the limit is refused before any token is built (it allocated
    7.5 GB first)."""
    import json

    assert main(["compile", "index", "--theta", "0.866", "--letters", "2", "--out", str(tmp_path / "h")]) == 0
    capsys.readouterr()
    meta = json.loads((tmp_path / "h" / "head.json").read_text())
    meta.pop("family")
    meta["metadata"]["construction_args"]["max_int"] = 10**8
    (tmp_path / "h" / "head.json").write_text(json.dumps(meta))
    assert main(["sweep", "--head", str(tmp_path / "h"), "--lengths", "2:5"]) == 2
    assert "needs about 1e+08 tokens; the limit is 32768 tokens" in capsys.readouterr().err


def test_parse_token_ids() -> None:
    assert parse_token_ids(None) is None
    assert parse_token_ids("2:5") == [2, 3, 4]
    assert parse_token_ids("7,1,3") == [7, 1, 3]
    for bad in ("5:2", "a:b", "1;2", "-1:3"):
        with pytest.raises(InputError, match="--tokens"):
            parse_token_ids(bad)


def test_import_hf_writes_a_head_directory(tmp_path: Path, capsys) -> None:
    transformers = pytest.importorskip("transformers")
    from ropeproof.verify.interop.hf._head_import import import_model_head

    state = torch.random.get_rng_state()
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=12, hidden_size=16, intermediate_size=8, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=32, rope_theta=100.0,
    )  # fmt: skip
    model = transformers.LlamaForCausalLM(config).eval()
    torch.random.set_rng_state(state)
    model.save_pretrained(tmp_path / "llama")
    argv = ["import", "hf", str(tmp_path / "llama"), "--layer", "1", "--head", "1", "--tokens", "0:6"]
    assert main([*argv, "--out", str(tmp_path / "head")]) == 0
    head = load_head(tmp_path / "head")
    assert head.tokens == tuple(str(i) for i in range(6)) and head.spec.layout == "half"
    ref = import_model_head(model.double(), "llama", 1, 1, device="cpu")
    assert np.array_equal(head.W_Q, ref.W_Q.numpy()) and head.metadata["imported"]["layer"] == 1
    capsys.readouterr()
    assert main(["sweep", "--head", str(tmp_path / "head"), "--lengths", "2:6", "--json"]) == 0
    rows = _json(capsys)["rows"]
    assert all(r["gap_sup"] >= r["gap_inf"] >= 0 for r in rows)
    assert main(["import", "hf", str(tmp_path / "nothing"), "--layer", "0", "--head", "0", "--out", "x"]) == 2
    assert main([*argv[:-2], "--tokens", "0:99", "--out", str(tmp_path / "h2")]) == 2
    assert "distinct ids in 0..11" in capsys.readouterr().err


@pytest.mark.xdist_group("tl")  # transformer_lens imported by one pytest worker, not both
def test_export_and_import_tl(tmp_path: Path, capsys) -> None:
    pytest.importorskip("transformer_lens")
    from ropeproof.verify.interop.tl._checkpoint import load_hooked_transformer
    from ropeproof.verify.interop.tl._model_head import compiled_from_hooked_transformer

    argv = ["export", "tl", "index", "--theta", "0.8660", "--layout", "half", "--max-positions", "64"]
    assert main([*argv, "--out", str(tmp_path / "tl")]) == 0
    assert "tl plane k=1" in capsys.readouterr().out
    assert main(["import", "tl", str(tmp_path / "tl"), "--layer", "0", "--head", "0", "--tokens", "100:136",
                 "--out", str(tmp_path / "h")]) == 0  # fmt: skip
    head = load_head(tmp_path / "h")
    ref = compiled_from_hooked_transformer(
        load_hooked_transformer(tmp_path / "tl"), 0, 0, list(range(100, 136))
    )
    assert np.array_equal(head.W_K, ref.W_K) and head.metadata["imported"]["library"] == "tl"
    assert main(["export", "tl", "index", "--theta", "0.8660", "--rope-theta", "10000", "--out", "x"]) == 2
    assert "not on GPT-J's spectrum" in capsys.readouterr().err


def test_every_file_of_an_output_directory_follows_the_umask(tmp_path: Path, capsys) -> None:
    # weights.safetensors was written 0600 (safetensors' own temporary file) while head.json was 0644
    import os
    import stat

    umask = os.umask(0o027)
    try:
        assert main(["compile", "index", "--out", str(tmp_path / "h")]) == 0
    finally:
        os.umask(umask)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "h").iterdir()}
    assert modes == {"head.json": 0o640, "weights.safetensors": 0o640}
    assert stat.S_IMODE((tmp_path / "h").stat().st_mode) == 0o750


def test_lengths_with_a_step_always_end_at_b(tmp_path: Path, capsys) -> None:
    """``--lengths 2:17:4`` prints n = 2, 6, 10, 14 and 17 (B itself), with and without --bound."""
    assert main(["compile", "index", "--theta", "0.866", "--letters", "2", "--out", str(tmp_path / "h")]) == 0
    capsys.readouterr()
    argv = ["sweep", "--head", str(tmp_path / "h"), "--lengths", "2:17:4", "--json"]
    for extra in ([], ["--bound", "1"]):
        assert main([*argv, *extra]) == 0
        assert [r["n"] for r in _json(capsys)["rows"]] == [2, 6, 10, 14, 17]


def test_the_logit_reading_by_offset(tmp_path: Path, capsys) -> None:
    """--reading logit_inf prints rows by offset m (every STEP-th of --offsets and B), the least logit
    with its offset and pair; with --bound in m (strictly >) the first violation is an offset, found
    among every offset; offsets without a logit reading, or a bound in n, are refused (exit 2)."""
    assert main(["compile", "index", "--theta", "0.866", "--letters", "2", "--out", str(tmp_path / "h")]) == 0
    capsys.readouterr()
    head = ["sweep", "--head", str(tmp_path / "h"), "--lengths", "2:17"]
    assert main([*head, "--reading", "logit_inf", "--offsets", "0:16:5", "--json"]) == 0
    out = _json(capsys)
    assert [r["m"] for r in out["rows"]] == [0, 5, 10, 15, 16]
    # T_Index: a letter m back scores cos((m - s) theta) for the query s, so the least is min_k cos(k theta)
    assert out["summary"]["rows"] == 17 and out["summary"]["min_logit_inf"] == pytest.approx(
        np.cos(0.866 * np.arange(1, 17)).min(), abs=1e-15
    )
    witness = out["summary"]["min_logit_inf_witness"]
    assert witness["offset"] == out["summary"]["min_logit_inf_m"]
    bound = [*head, "--reading", "logit_sup", "--bound", "cos(m*theta) + 2", "--relation", ">", "--json"]
    assert main(bound) == 0
    summary = _json(capsys)["summary"]
    assert summary["statement"] == "logit_sup(m) > cos(m*theta) + 2" and summary["first_violation"]["m"] == 0
    plot = tmp_path / "logits.png"
    assert main([*head, "--reading", "logit_sup", "--offsets", "2:16", "--plot", str(plot)]) == 0
    caption = (tmp_path / "logits.caption.txt").read_text()
    assert "against offset (index: m = 2..16)" in caption and plot.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main([*head, "--offsets", "0:3"]) == 2
    assert "--offsets only applies with --reading" in capsys.readouterr().err
    assert main([*head, "--reading", "logit_inf", "--bound", "1/n"]) == 2
    assert "state the bound in m, not n" in capsys.readouterr().err


def test_the_budgets_are_options_of_a_bound(tmp_path: Path, capsys) -> None:
    """--max-refine / --max-identities reach check_bound (its summary counts what was spent against
    them), and apply only with --bound."""
    assert main(["compile", "index", "--theta", "0.866", "--letters", "2", "--out", str(tmp_path / "h")]) == 0
    capsys.readouterr()
    argv = ["sweep", "--head", str(tmp_path / "h"), "--lengths", "2:12", "--bound", "1", "--json"]
    assert main([*argv, "--max-refine", "3", "--max-identities", "0"]) == 0
    summary = _json(capsys)["summary"]
    assert summary["refinements"].endswith("of max_refine=3")
    assert summary["identities_tried"] == "0 of max_identities=0"
    assert main([*argv[:5], "--max-refine", "3"]) == 2
    assert "--max-refine only apply with --bound" in capsys.readouterr().err

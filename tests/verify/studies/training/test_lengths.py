"""The trained models' length study: SDPA answers equal eager ones, the rebuilt position table keeps the
stored rows, rows stop when decided and use the same inputs whatever the cap, and readings flip where
their intervals say."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.training._evaluation import forward_batch, last_predictions
from ropeproof.verify.studies.training._lengths import (
    READINGS,
    decided_length_row,
    encoded,
    length_model,
    reading,
    reading_finding,
    study_plan,
)

pytest.importorskip("transformers")


def _eager(path: Path, rows: int) -> object:
    import transformers as tf

    return tf.GPTJForCausalLM.from_pretrained(
        path, dtype=torch.float32, attn_implementation="eager", n_positions=rows
    ).eval()


@pytest.mark.parametrize(("task", "config"), [("letter", "small"), ("number", "paper")])
def test_sdpa_answers_equal_eager_answers(task: str, config: str) -> None:
    """The study's forwards (SDPA, inference mode, last position only, token-sized batches) give the same
    greedy answers as eager attention over the full logits, on 24 inputs at 17 and 300 tokens."""
    from ropeproof.verify.studies.training._shipped import shipped_path

    path = shipped_path(task, config)
    fast, eager = length_model(path), _eager(path, 2048)
    for n in (17, 300):
        batch = encoded(task, n, 0, 24, "distractors", 0, (1, 2, 3, 4))
        with torch.no_grad():
            slow = eager(input_ids=batch.input_ids).logits[:, -1].argmax(-1)
        assert torch.equal(last_predictions(fast, batch.input_ids), slow)
    assert forward_batch(17) == 240 and forward_batch(850) == 4 and forward_batch(5000) == 1


def test_a_short_table_is_rebuilt_longer_and_keeps_its_rows(tmp_path: Path) -> None:
    """A checkpoint stored with n_positions 128 ([A]'s, as the corrected paper models ship) is loaded with
    2,048 sin/cos rows; the first 128 are bit-identical to the stored table, the answers at 17 tokens do
    not change, and a row past 128 tokens says the table was rebuilt."""
    from ropeproof.verify.studies.training._shipped import shipped_path

    short = tmp_path / "short"
    shutil.copytree(shipped_path("letter"), short)
    config = json.loads((short / "config.json").read_text())
    config["n_positions"] = 128
    (short / "config.json").write_text(json.dumps(config))
    stored = _eager(short, 128)
    model = length_model(short)
    table = model.transformer.rotary_emb.embed_positions
    assert table.shape[0] == 2048 and model.config.stored_n_positions == 128
    assert torch.equal(table[:128], stored.transformer.rotary_emb.embed_positions)
    batch = encoded("letter", 17, 0, 16, "distractors", 0, (1, 2, 3, 4))
    with torch.no_grad():
        assert torch.equal(
            last_predictions(model, batch.input_ids),
            stored(input_ids=batch.input_ids).logits[:, -1].argmax(-1),
        )
    assert decided_length_row(model, "letter", 17, 0.5, 8, 8)["table_rebuilt"] is False
    assert decided_length_row(model, "letter", 200, 0.5, 8, 8)["table_rebuilt"] is True
    assert length_model(short, rows=4096).transformer.rotary_emb.embed_positions.shape[0] == 4096


def test_rows_stop_when_decided_and_use_the_same_inputs_whatever_the_cap() -> None:
    """A row far from its threshold stops at the first look; a row's inputs are the first ``count`` of the
    generator's, so a larger cap changes nothing once decided; the counts add up per hop."""
    from ropeproof.verify.studies.training._shipped import shipped_path

    model = length_model(shipped_path("letter", "paper"))
    far = decided_length_row(model, "letter", 850, 0.9, 8, 512)  # about 0.3 against 0.9
    assert far["count"] == 8 and far["side"] == "below" and far["ci_high"] < 0.9
    assert far["interval"].startswith("beta-binomial confidence sequence")
    assert sum(c for c, _ in far["per_hop"].values()) == far["correct"]
    assert sum(n for _, n in far["per_hop"].values()) == far["count"]
    assert decided_length_row(model, "letter", 850, 0.9, 8, 8) == {**far, "cap": 8}
    batch = encoded("letter", 850, 0, 8, "distractors", 0, (1, 2, 3, 4))
    right = (last_predictions(model, batch.input_ids) == batch.answers).sum()
    assert far["correct"] == int(right)


def test_a_row_stops_at_the_first_forward_batch_that_decides_it() -> None:
    """A row looked at after every forward batch (4 inputs at 850 tokens) draws the first count at which
    the confidence sequence of its own answers decides, rounded up to the batch: no more."""
    from ropeproof.verify.measure._statistics import first_decided
    from ropeproof.verify.studies.training._shipped import shipped_path

    model = length_model(shipped_path("letter", "paper"))
    batch = encoded("letter", 850, 0, 32, "distractors", 0, (1, 2, 3, 4))
    right = (last_predictions(model, batch.input_ids) == batch.answers).numpy()
    k = first_decided(right, 0.9)
    assert k is not None
    row = decided_length_row(model, "letter", 850, 0.9, cap=1024)
    assert row["look"] == forward_batch(850) == 4
    assert row["count"] == -(-k // 4) * 4 and row["side"] != "undecided"
    assert row["correct"] == int(right[: row["count"]].sum())


def test_rows_refuse_what_the_model_cannot_read() -> None:
    from ropeproof.verify.studies.training._shipped import shipped_path

    model = length_model(shipped_path("number"))
    with pytest.raises(InputError, match="vocabulary"):
        decided_length_row(model, "number", 40, 0.5, 8, 8, build="window")
    with pytest.raises(InputError, match="sin/cos table of 2048 rows"):
        decided_length_row(model, "number", 4096, 0.5, 8, 8)
    with pytest.raises(InputError, match="build='wide'"):
        decided_length_row(model, "number", 40, 0.5, 8, 8, build="wide")
    with pytest.raises(InputError, match="reading='x'"):
        reading("x")


def _row(n: int, low: float, high: float, side: str) -> dict:
    return {
        "n": n, "accuracy": (low + high) / 2, "ci_low": low, "ci_high": high, "count": 16, "correct": 8,
        "side": side,
    }  # fmt: skip


def test_readings_say_where_they_flip() -> None:
    """An above-reading holds at thresholds up to its lowest interval end over the lengths it judges (850
    and below) and fails above the lowest upper end; a below-reading the reverse, with the least length
    from which every measured length is decided below."""
    rows = [_row(17, 0.95, 1.0, "above"), _row(850, 0.91, 0.99, "above"), _row(1024, 0.1, 0.4, "below")]
    found = reading_finding("letter-distractors", rows)
    assert found["finding"] == "shows" and found["lengths"] == 2 and found["not_decided"] == []
    assert found["holds_up_to"] == 0.91 and found["fails_above"] == 0.99 and found["worst"]["n"] == 850
    assert found["holds_up_to_row"] == {**_row(850, 0.91, 0.99, "above")}
    rows[1] = _row(850, 0.2, 0.6, "below")
    rows[0] = {**rows[0], "judged": False}  # one look after the contradiction: never a flip point
    found = reading_finding("letter-distractors", rows)
    assert found["finding"] == "contradicts" and found["not_decided"] == [17]
    assert found["holds_up_to"] is None and found["fails_above"] == 0.6 and found["lengths"] == 1
    # what the check computes: the contradicting length alone; the study's other lengths are not decided
    found = reading_finding("letter-distractors", rows[1:2], [17, 64, 850, 1024])
    assert found["not_decided"] == [17, 64] and found["holds_up_to"] is None and found["fails_above"] == 0.6
    number = [_row(17, 0.9, 1.0, "above"), _row(64, 0.6, 0.9, "above"), _row(128, 0.1, 0.4, "below")]
    found = reading_finding("number-distractors", number)
    assert found["finding"] == "contradicts" and found["fails_up_to"] == 0.6 and found["holds_above"] == 0.9
    assert found["decided_below_from"] == 128
    number.append({**_row(256, 0.1, 0.3, "below"), "judged": False})
    found = reading_finding("number-distractors", number)
    assert found["decided_below_from"] is None and found["not_decided"] == [256]
    assert found["holds_above"] is None
    found = reading_finding("number-distractors", number[:3], [17, 64, 128, 512])  # 512 has no row
    assert found["decided_below_from"] is None and found["not_decided"] == [512]
    number[1] = _row(64, 0.3, 0.55, "undecided")
    assert reading_finding("number-distractors", number[:3])["finding"] == "undecided"


def test_readings_measure_first_where_a_contradiction_is_likeliest() -> None:
    """An above-reading measures its longest length first, a below-reading its shortest; once a judged
    length contradicts the reading, every remaining row gets one look, as do lengths it does not judge."""
    from ropeproof.verify.studies.training._lengths import reading_rows

    asked: list[tuple[int, int]] = []

    def measure(accuracy: dict[int, str]):  # type: ignore[no-untyped-def]
        def row(n: int, cap: int) -> dict:
            asked.append((n, cap))
            return {"n": n, "side": accuracy[n]}

        return row

    lengths = [17, 64, 850, 1024]
    sides = {17: "above", 64: "above", 850: "below", 1024: "below"}
    rows = reading_rows("letter-distractors", lengths, 1024, measure(sides), full=True)
    assert [r["n"] for r in rows] == lengths and [r["judged"] for r in rows] == [False, False, True, False]
    assert asked == [(1024, 4), (850, 1024), (64, 64), (17, 240)]  # 1024 is not judged; 850 contradicts
    asked.clear()
    rows = reading_rows("letter-distractors", lengths, 1024, measure(sides))  # what the check computes
    assert asked == [(850, 1024)] and [r["n"] for r in rows] == [850]
    asked.clear()
    reading_rows("letter-near", lengths, 1024, measure(dict.fromkeys(lengths, "above")))
    assert asked == [(850, 1024), (64, 1024), (17, 1024)]  # it measures 17, 64, 256 and 850 only
    asked.clear()
    sides = {17: "above", 64: "above", 850: "undecided", 1024: "below"}
    rows = reading_rows("number-distractors", lengths, 1024, measure(sides), full=True)
    # 64 contradicts "below 0.5 from 64", but from which length every length is decided below reads them all
    assert asked == [(17, 240), (64, 1024), (850, 1024), (1024, 1024)]
    assert [r["judged"] for r in rows] == [False, True, True, True]
    asked.clear()
    assert [r["n"] for r in reading_rows("number-distractors", lengths, 1024, measure(sides))] == [
        64,
        850,
        1024,
    ]
    plan = study_plan(False)
    assert plan["readings"] == [r.key for r in READINGS] and plan["cap"] == 1024 and not plan["full"]
    assert reading("letter-near").hops == (1,) and reading("letter-near").build == "near"

"""Local providers: Python callables (as callables and by name on the command line) and HF causal LMs
(the shipped trained checkpoints and the compiled exports), checked against the toolkit's own
evaluation paths."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import torch

from ropeproof._cli import main
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._tokenizer import task_vocabulary, word
from ropeproof.verify.studies.llm_eval._choose_provider import make_provider
from ropeproof.verify.studies.llm_eval._harness import evaluate
from ropeproof.verify.studies.llm_eval._local import HFCausalLM, load_callable, task_of_tokenizer
from ropeproof.verify.studies.llm_eval._local_models import (
    LocalModel,
    compiled,
    evaluate_local,
    local_results,
)
from ropeproof.verify.studies.llm_eval._plan import build_plan

pytest.importorskip("transformers")

SOLVER = textwrap.dedent(
    """
    def solve(text):
        tokens = text.splitlines()[-1].removeprefix("Sequence: ").split()
        if tokens[-1].isdigit():
            return tokens[-1 - int(tokens[-1])] if int(tokens[-1]) < 5 else "?"
        return next(t for t in tokens[:-1] if t[0] == tokens[-1][1]) + "."


    def broken(text):
        return 3
    """
)


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_python_function_named_on_the_command_line(tmp_path: Path, capsys) -> None:
    module = tmp_path / "my_model.py"
    module.write_text(SOLVER)
    argv = ["llm-eval", "--provider", "python", "--model", f"{module}:solve", "--lengths", "6,12",
            "--prompts", "5", "--draws", "2", "--no-progress"]  # fmt: skip
    code, out, _ = run_cli([*argv, "--out", str(tmp_path / "run"), "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["model"] == f"{module}:solve"
    acc = {(r["task"], r["length"]): r["accuracy_mean"] for r in doc["results"]}
    expected = {}  # the solver is right on every letter prompt and on number prompts counting back < 5
    for key in acc:
        plan = build_plan([key[0]], [key[1]], 5, 2)
        expected[key] = sum(p.task == "letter" or int(p.tokens[-1]) < 5 for p in plan) / 10
    assert acc == pytest.approx(expected, abs=1e-15)
    assert expected[("number", 6)] == 4 / 5 and expected[("letter", 12)] == 1.0  # balanced: counts 1..5 once
    argv[4] = f"{module}:broken"
    code, out, err = run_cli([*argv, "--out", str(tmp_path / "broken"), "--max-failures", "3"], capsys)
    # stopped by failures, it leaves prompts without a reply: exit 1 (rerun), not 2 (bad input)
    assert code == 1 and "3 requests in a row got no reply (last: the callable returned int, not str)" in err
    assert "rerun the same command to continue" in err and err.count("\n") == 1


def test_callables_that_cannot_be_loaded_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="must look like module:function"):
        load_callable("nofunction")
    with pytest.raises(InputError, match="cannot import no_such_module_xyz"):
        load_callable("no_such_module_xyz:f")
    with pytest.raises(InputError, match="has no callable 'nope'"):
        load_callable("json:nope")
    assert load_callable("json:dumps") is json.dumps
    with pytest.raises(InputError, match="--base-url applies to the openai and anthropic providers"):
        make_provider("python", "json:dumps", base_url="http://127.0.0.1:1/v1")


def test_the_shipped_number_model_answers_as_the_training_evaluation_reads_it() -> None:
    from ropeproof.verify.studies.training._data import TaskEncoder
    from ropeproof.verify.studies.training._evaluation import predictions
    from ropeproof.verify.studies.training._shipped import load_shipped

    shipped = load_shipped("number")
    provider = HFCausalLM(shipped.model, shipped.tokenizer, "task", source="number-small")
    assert provider.task == "number" and task_of_tokenizer(shipped.tokenizer) == "number"
    summary = evaluate(provider, ["number"], [8, 40], prompts=16, draws=2, fmt="task")
    plan = build_plan(["number"], [8, 40], 16, 2, 0, "task")
    enc = TaskEncoder("number")
    name_of = {word(t): t for t in task_vocabulary("number")}
    for result in summary.results:
        group = [p for p in plan if p.length == result.length]
        ids = torch.tensor([[enc.index[name_of[w]] for w in p.tokens] for p in group])
        top = predictions(shipped.model, ids).tolist()
        right = sum(word(enc.tokens[t]) == p.answer for t, p in zip(top, group, strict=True))
        assert result.n_prompts == 32 and result.accuracy_mean == pytest.approx(right / 32, abs=1e-15)
    with pytest.raises(InputError, match="tokenizer is the number task's"):
        evaluate(provider, ["number", "letter"], [8], 2, 1, fmt="task")
    with pytest.raises(InputError, match="number-task checkpoint: its tokenizer knows only"):
        evaluate(provider, ["number"], [8], 2, 1, fmt="chat")
    with pytest.raises(
        InputError, match="a prompt of 4096 tokens \\(\\+ 0 to generate\\) exceeds the model's 2048"
    ):
        evaluate(provider, ["number"], [4096], 1, 1, fmt="task")


def test_the_chat_format_runs_greedy_generation() -> None:
    from ropeproof.verify.studies.training._shipped import load_shipped

    shipped = load_shipped("letter")
    provider = HFCausalLM(shipped.model, shipped.tokenizer, "chat", max_tokens=3)
    (prompt,) = build_plan(["letter"], [6], 1, 1)
    reply = provider.ask(prompt)
    ids = shipped.tokenizer(prompt.text, return_tensors="pt")["input_ids"]
    with torch.no_grad():  # the greedy loop by hand
        for _ in range(3):
            ids = torch.cat([ids, shipped.model(input_ids=ids).logits[:, -1:].argmax(-1)], dim=1)
    expected = shipped.tokenizer.decode(ids[0, -3:], skip_special_tokens=True)
    assert reply.text == expected and reply.completion_tokens == 3 and reply.finish_reason == "length"


def test_the_hf_provider_on_the_command_line_picks_the_task_format(tmp_path: Path, capsys) -> None:
    from ropeproof.verify.studies.training._shipped import shipped_path

    path = shipped_path("letter")
    argv = ["llm-eval", "--provider", "hf", "--model", str(path), "--lengths", "8,17", "--prompts", "6",
            "--draws", "1", "--no-progress"]  # fmt: skip
    code, out, _ = run_cli([*argv, "--out", str(tmp_path / "run"), "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["format"] == "task" and doc["label"] == "letter-small"
    assert doc["model"] == str(path.resolve())
    assert [(r["task"], r["length"], r["n_prompts"]) for r in doc["results"]] == [
        ("letter", 8, 6),
        ("letter", 17, 6),
    ]
    code, _, err = run_cli([*argv, "--out", str(tmp_path / "other"), "--task", "number"], capsys)
    assert code == 2 and "tokenizer is the letter task's" in err


def test_compiled_exports_answer_as_the_export_reads_them() -> None:
    from ropeproof.constructions._multihop_compile import compile_program
    from ropeproof.constructions._multihop_programs import checkpoint_program
    from ropeproof.verify.interop.hf._model_export import export_model

    (summary,) = evaluate_local(
        [LocalModel("compiled", "letter", compiled("letter"))], [8, 24], prompts=8, draws=1
    )
    export = export_model(compile_program(checkpoint_program("letter", 4, 12)), "gptj")
    name_of = {word(t): t for t in task_vocabulary("letter")}
    for result in summary.results:
        group = [p for p in build_plan(["letter"], [result.length], 8, 1, 0, "task")]
        names = export.answer([[name_of[w] for w in p.tokens] for p in group])
        right = sum(word(n) == p.answer for n, p in zip(names, group, strict=True))
        assert result.accuracy_mean == pytest.approx(right / 8, abs=1e-15)
    assert summary.label == "compiled" and {r.task for r in summary.results} == {"letter"}


def test_local_results_are_computed_once_per_store_and_copied() -> None:
    from ropeproof.machinery._result_store import ResultStore
    from ropeproof.verify.studies.llm_eval._local_models import LOCAL_SUMMARIES

    store = ResultStore()
    first = local_results([8], prompts=2, draws=1, store=store)
    second = local_results([8], prompts=2, draws=1, store=store)
    assert [s.label for s in first] == ["trained small", "compiled 12-layer"]
    assert all({r.task for r in s.results} == {"number", "letter"} for s in first)
    assert first is not second and first[0].results == second[0].results
    assert [k for k in store.computed if k.startswith(LOCAL_SUMMARIES.name)] == [
        'llm-eval.local-summaries{"draws":1,"lengths":[8],"prompts":2,"seed":0}'
    ]
    # what the store hands out is what a direct evaluation gives
    direct = evaluate_local(lengths=[8], prompts=2, draws=1)
    assert [s.to_json() for s in first] == [s.to_json() for s in direct]


@pytest.mark.parametrize(
    ("task", "sizes"),
    [
        ("number", {}),
        ("number", {"max_int": 199}),  # export-model --max-length 200
        ("number", {"letters": 26, "max_int": 9}),
        ("letter", {}),
        ("letter", {"alphabet": 26, "max_int": 9}),
        ("letter", {"alphabet": 2, "max_int": 1}),
    ],
)
def test_task_tokenizers_are_recognised_at_any_size(task: str, sizes: dict[str, int]) -> None:
    from ropeproof.verify.measure._tokenizer import build_tokenizer

    tokens = task_vocabulary(task, **sizes)
    assert task_of_tokenizer(build_tokenizer(tokens)) == task
    # not a task vocabulary: a word more, a word less, two words swapped (ids are model rows)
    assert task_of_tokenizer(build_tokenizer([*tokens, "extra"])) is None
    assert task_of_tokenizer(build_tokenizer(tokens[:-1] if task == "letter" else tokens[1:])) is None
    assert task_of_tokenizer(build_tokenizer([tokens[1], tokens[0], *tokens[2:]])) is None


def test_a_compiled_checkpoint_of_any_max_length_is_asked_only_its_task(tmp_path: Path, capsys) -> None:
    # case 4 of issue 32: a checkpoint exported with --max-length 200 was asked both tasks in the chat
    # format (letter 0.000, "does not show [A]'s ordering", exit 0): its vocabulary has the integers
    # 1..199, not the 17-token task's 1..16
    model = tmp_path / "number200"
    export = ["export-model", "gptj", "number", "--solver", "smallest", "--width", "6", "--max-length", "200",
              "--hops", "1", "--layers", "1", "--out", str(model)]  # fmt: skip
    assert main(export) == 0
    capsys.readouterr()
    argv = ["llm-eval", "--provider", "hf", "--model", str(model), "--lengths", "8,17,40", "--prompts", "5",
            "--draws", "1", "--no-progress"]  # fmt: skip
    code, out, _ = run_cli([*argv, "--out", str(tmp_path / "run"), "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["format"] == "task"
    assert [(r["task"], r["length"], r["accuracy_mean"]) for r in doc["results"]] == [
        ("number", 8, 1.0),  # certified: every 1-hop input up to 44 tokens is answered correctly
        ("number", 17, 1.0),
        ("number", 40, 1.0),
    ]
    from ropeproof.verify.measure._tokenizer import build_tokenizer
    from ropeproof.verify.studies.llm_eval._local import checkpoint_task

    with pytest.raises(
        InputError, match="compiled number-task checkpoint, but the tokenizer's vocabulary is not"
    ):
        checkpoint_task(model, build_tokenizer(task_vocabulary("number")))  # the record's words are 1..199
    for extra, message in (
        (["--task", "both"], "the model is a number-task checkpoint"),
        (["--task", "letter"], "use --task number"),
        (["--format", "chat"], "use --format task"),
    ):
        code, _, err = run_cli([*argv, "--out", str(tmp_path / "other"), *extra], capsys)
        assert code == 2 and message in err and not (tmp_path / "other").exists()


def test_a_checkpoint_that_contradicts_its_record_is_refused(tmp_path: Path) -> None:
    from ropeproof.verify.measure._tokenizer import build_tokenizer
    from ropeproof.verify.studies.llm_eval._local import checkpoint_task
    from ropeproof.verify.studies.training._config import SMALL
    from ropeproof.verify.studies.training._trainer import RECORD_FILE

    number = build_tokenizer(task_vocabulary("number"))
    record = {"format": "ropeproof-training", "version": 1, "task": "letter", "seed": 0, "losses": [],
              "evaluations": [], "config": SMALL.to_json()}  # fmt: skip
    (tmp_path / RECORD_FILE).write_text(json.dumps(record))
    with pytest.raises(InputError, match="records a letter-task training run, but the tokenizer is not"):
        checkpoint_task(tmp_path, number)
    assert checkpoint_task(tmp_path / "absent", number) == "number"  # no record: the vocabulary decides
    assert checkpoint_task(tmp_path / "absent", build_tokenizer(["hello", "world"])) is None


def test_a_vocabulary_without_the_prompts_words_is_refused() -> None:
    from ropeproof.verify.measure._tokenizer import build_tokenizer

    small = build_tokenizer(task_vocabulary("number", max_int=9))  # export-model --max-length 10
    with pytest.raises(
        InputError, match=r"lacks 7 words of \[A\]'s task prompts \(10, 11, 12, 13, 14, ...\)"
    ):
        HFCausalLM(torch.nn.Linear(1, 1), small, "task")


def test_a_one_head_export_is_refused_by_name(tmp_path: Path, capsys) -> None:
    """``llm-eval --provider hf`` on a ``ropeproof export`` directory (one construction head, a word-level
    tokenizer of that head's tokens and no unknown token) stopped with an internal error from the
    tokenizers library on the chat prompt's first word; it is refused up front with exit 2."""
    model = tmp_path / "index"
    assert main(["export", "gptj", "index", "--theta", "0.8659643233600653", "--out", str(model)]) == 0
    capsys.readouterr()
    argv = ["llm-eval", "--provider", "hf", "--model", str(model), "--lengths", "8", "--prompts", "2",
            "--draws", "1", "--no-progress", "--out", str(tmp_path / "run")]  # fmt: skip
    for extra in ([], ["--format", "chat"], ["--format", "task"]):
        code, _, err = run_cli([*argv, *extra], capsys)
        assert code == 2 and "is a one-head export ('ropeproof export'" in err and err.count("\n") == 1, err
        assert not (tmp_path / "run").exists()


def test_a_tokenizer_that_cannot_encode_the_chat_prompt_is_an_input_error() -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(vocab={"hello": 0, "world": 1}))  # no unknown token
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    provider = HFCausalLM(torch.nn.Linear(1, 1), PreTrainedTokenizerFast(tokenizer_object=tok), "chat")
    (prompt,) = build_plan(["number"], [8], 1, 1)
    with pytest.raises(InputError, match="the model's tokenizer cannot encode \\[A\\]'s chat prompts"):
        provider.ask(prompt)

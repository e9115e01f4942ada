"""Local models: :class:`PythonCallable` (any function from prompt text to reply text) and
:class:`HFCausalLM` (a causal LM that ``transformers`` loads, the ``hf`` extra).

:class:`HFCausalLM` answers in one of two formats (:mod:`.sequences`):

- ``task``: the prompt is the raw token sequence of the controlled task and the reply is the greedy
  next token (the argmax of the last position's logits over the whole vocabulary, as the toolkit's
  training evaluation reads it), in batches of equal-length prompts. This is the format of the
  checkpoints trained or compiled on [A]'s tasks; :func:`checkpoint_task` decides from what a checkpoint
  directory says it is (its export record, its training record, else its tokenizer's vocabulary being
  a task vocabulary of any size), and such a model is asked only its own task.
- ``chat``: [A]'s prompt as one user message (through the tokenizer's chat template when it has one,
  else the plain text), greedy decoding of up to ``max_tokens`` tokens, special tokens dropped.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from ropeproof.constructions._paper import check_task
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.measure._tokenizer import UNK, task_vocabulary, word
from ropeproof.verify.studies.llm_eval._plan import Prompt, check_format
from ropeproof.verify.studies.llm_eval._providers import Provider, Reply

HF_DTYPES = ("float32", "bfloat16", "float16")
BATCH_SIZE = 64
"""Prompts per forward pass in the ``task`` format."""


def load_callable(spec: str) -> Callable[[str], Any]:
    """The function named by ``module:function`` or ``path/to/file.py:function``."""
    source, sep, name = spec.rpartition(":")
    if not sep or not source or not name.isidentifier():
        raise InputError(f"model={spec!r} must look like module:function or path/to/file.py:function")
    if source.endswith(".py"):
        path = Path(source)
        if not path.is_file():
            raise InputError(f"model={spec!r}: {source} is not a file")
        mod_spec = importlib.util.spec_from_file_location(f"_ropeproof_llm_{path.stem}", path)
        if mod_spec is None or mod_spec.loader is None:
            raise InputError(f"model={spec!r}: cannot load {source}")
        module = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(source)
        except ImportError as exc:
            raise InputError(f"model={spec!r}: cannot import {source}: {exc}") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise InputError(f"model={spec!r}: {source} has no callable {name!r}")
    return fn


class PythonCallable(Provider):
    """A Python function ``fn(prompt_text) -> reply_text``, given as a callable or as
    ``module:function`` / ``file.py:function``; ``name`` is the model name in the run's settings
    (default: that spelling). An exception it raises, or a reply that is not a string, is recorded as
    that prompt's error (the run continues)."""

    name = "python"

    def __init__(self, fn: str | Callable[[str], Any], name: str | None = None) -> None:
        if isinstance(fn, str):
            self.spec, self.fn = name or fn, load_callable(fn)
        elif callable(fn):
            self.spec = name or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
            self.fn = fn
        else:
            raise InputError(f"fn={fn!r} must be a callable or a 'module:function' string")

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.spec}

    def ask(self, prompt: Prompt) -> Reply:
        start = time.perf_counter()
        try:
            out = self.fn(prompt.text)
        except Exception as exc:
            return Reply.failed(
                f"the callable raised {type(exc).__name__}: {exc}", time.perf_counter() - start
            )
        latency = time.perf_counter() - start
        if not isinstance(out, str):
            return Reply.failed(f"the callable returned {type(out).__name__}, not str", latency)
        return Reply(out, latency_s=latency)


def _vocabulary(tokenizer: Any) -> dict[str, int] | None:
    try:
        vocab = tokenizer.get_vocab()
    except (AttributeError, TypeError):
        return None
    return dict(vocab) if isinstance(vocab, dict) else None


def _is_vocabulary(vocab: dict[str, int], tokens: list[str]) -> bool:
    """``vocab`` is exactly ``tokens``' words in order, then ``[UNK]`` (the task tokenizers' layout)."""
    expected = {word(t): i for i, t in enumerate(tokens)}
    expected[UNK] = len(tokens)
    return vocab == expected


def task_of_tokenizer(tokenizer: Any) -> str | None:
    """The task whose word-level tokenizer this is, at any size, else ``None``: its vocabulary is, in
    order, a number-task vocabulary (``L`` letters, then the integers ``1..M``) or a letter-task
    vocabulary (``A`` left letters each with its letter pairs and ``1..M`` integer pairs), then
    ``[UNK]``. [A]'s 17-token tokenizers and the ``export-model`` checkpoints of any ``--max-length``
    are such vocabularies."""
    vocab = _vocabulary(tokenizer)
    if not vocab or vocab.get(UNK) != len(vocab) - 1:
        return None
    size = len(vocab) - 1
    integers = sum(w.isdigit() for w in vocab)
    if 1 <= integers < size and _is_vocabulary(
        vocab, task_vocabulary("number", letters=size - integers, max_int=integers)
    ):
        return "number"
    for alphabet in range(2, 27):
        max_int, rest = divmod(size, alphabet)
        max_int -= alphabet
        letter = rest == 0 and max_int >= 1
        if letter and _is_vocabulary(vocab, task_vocabulary("letter", alphabet=alphabet, max_int=max_int)):
            return "letter"
    return None


def checkpoint_task(path: str | Path, tokenizer: Any) -> str | None:
    """The task the checkpoint directory ``path`` was built for, from what it says it is, else ``None``:

    1. an ``export-model`` checkpoint's record (``ropeproof_model.json``) names its task and its words;
    2. a ``ropeproof train`` run directory's record (``training.json``) names its task;
    3. otherwise the tokenizer's vocabulary is a task vocabulary of some size (:func:`task_of_tokenizer`).

    A one-head export (``ropeproof export``: its record ``ropeproof_export.json``) is refused with an
    :class:`InputError`: it computes one construction head over that head's own tokens, and answers
    neither [A]'s chat prompts nor its task sequences.

    Where a record names the task, the tokenizer must be that task's (the record's words, in order, for
    an export; a vocabulary of that task for a training run): an :class:`InputError` otherwise, since the
    directory would contradict itself."""
    path = Path(path)
    vocab = _vocabulary(tokenizer) or {}
    from ropeproof.verify.interop._head_export import EXPORT_INFO_FILE
    from ropeproof.verify.interop.hf._model_export import MODEL_INFO_FILE, load_model_info

    if (path / EXPORT_INFO_FILE).is_file() and not (path / MODEL_INFO_FILE).is_file():
        raise InputError(
            f"model={str(path)!r} is a one-head export ('ropeproof export', {EXPORT_INFO_FILE}): one "
            "construction head over its own tokens, which answers none of [A]'s prompts; export a model of "
            "a task with 'ropeproof export-model gptj number|letter'"
        )
    if (path / MODEL_INFO_FILE).is_file():
        try:
            info = load_model_info(path)
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"model={str(path)!r}: {MODEL_INFO_FILE} cannot be read ({exc})") from None
        check_task(info.task)
        if not _is_vocabulary(vocab, list(info.tokens)):
            raise InputError(
                f"model={str(path)!r}: {MODEL_INFO_FILE} describes a compiled {info.task}-task checkpoint, "
                "but the tokenizer's vocabulary is not the one it records"
            )
        return info.task
    from ropeproof.verify.studies.training._trainer import RECORD_FILE, load_record

    if (path / RECORD_FILE).is_file():
        try:
            task = load_record(path).task
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"model={str(path)!r}: {RECORD_FILE} cannot be read ({exc})") from None
        if task_of_tokenizer(tokenizer) != task:
            raise InputError(
                f"model={str(path)!r}: {RECORD_FILE} records a {task}-task training run, but the tokenizer "
                f"is not a {task}-task tokenizer"
            )
        return task
    return task_of_tokenizer(tokenizer)


def _missing_words(tokenizer: Any, task: str) -> list[str]:
    """The words of [A]'s ``task`` vocabulary (what the task-format prompts use) missing from the
    tokenizer's vocabulary."""
    vocab = _vocabulary(tokenizer) or {}
    return [word(t) for t in task_vocabulary(task) if word(t) not in vocab]


class HFCausalLM(Provider):
    """A loaded causal LM and its tokenizer (module docstring). ``fmt`` is ``task`` or ``chat``;
    :attr:`task` is the task the model was built for (``task``, default: the task of a task tokenizer,
    :func:`task_of_tokenizer`; ``None`` for a general model)."""

    name = "hf"
    concurrent = False

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        fmt: str,
        max_tokens: int = 16,
        source: str = "",
        dtype: str = "float32",
        task: str | None = None,
    ) -> None:
        self.model, self.tokenizer, self.dtype = model.eval(), tokenizer, dtype
        self.format = check_format(fmt)
        self.max_tokens, self.source = integer(max_tokens, "max_tokens", low=1), source
        self.task = check_task(task) if task is not None else task_of_tokenizer(tokenizer)
        if self.format == "task" and self.task is not None:
            missing = _missing_words(tokenizer, self.task)
            if missing:
                shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
                raise InputError(
                    f"the model's {self.task}-task vocabulary lacks {len(missing)} words of [A]'s task "
                    f"prompts ({shown}), which it would read as {UNK}; export it with a larger vocabulary "
                    "(e.g. a larger --max-length)"
                )
        self.batch_size = BATCH_SIZE if self.format == "task" else 1

    @classmethod
    def from_directory(
        cls,
        path: str | Path,
        fmt: str = "auto",
        max_tokens: int = 16,
        device: Any = "cpu",
        dtype: str = "float32",
    ) -> HFCausalLM:
        """Load ``path`` with ``AutoModelForCausalLM`` and ``AutoTokenizer`` in ``dtype`` on ``device``;
        the model's task is :func:`checkpoint_task`'s, and ``fmt="auto"`` is ``task`` for a model of a
        task, else ``chat``."""
        from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers

        tf = require_transformers()
        path = Path(path)
        if not (path / "config.json").is_file():
            raise InputError(f"model={str(path)!r} is not a model directory (no config.json)")
        if dtype not in HF_DTYPES:
            raise InputError(f"dtype={dtype!r} is unknown; accepted: {list(HF_DTYPES)}")
        with quiet_progress():
            tokenizer = tf.AutoTokenizer.from_pretrained(path)
            model = tf.AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype))
        task = checkpoint_task(path, tokenizer)
        if fmt == "auto":
            fmt = "task" if task else "chat"
        source = str(path.resolve())
        return cls(model.to(device), tokenizer, fmt, max_tokens, source=source, dtype=dtype, task=task)

    def identity(self) -> dict[str, Any]:
        out = {"provider": self.name, "model": self.source, "format": self.format, "dtype": self.dtype}
        if self.format == "chat":
            out["max_tokens"] = self.max_tokens
        return out

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def max_positions(self) -> int | None:
        """The longest input the model's position table covers (``n_positions`` or
        ``max_position_embeddings`` of its config), if it states one."""
        config = getattr(self.model, "config", None)
        for name in ("n_positions", "max_position_embeddings"):
            value = getattr(config, name, None)
            if isinstance(value, int):
                return value
        return None

    def _check_fits(self, tokens: int, new: int) -> None:
        limit = self.max_positions
        if limit is not None and tokens + new > limit:
            raise InputError(
                f"a prompt of {tokens} tokens (+ {new} to generate) exceeds the model's {limit} positions; "
                "use shorter --lengths"
            )

    def ask(self, prompt: Prompt) -> Reply:
        return self.ask_batch([prompt])[0]

    def ask_batch(self, prompts: Sequence[Prompt]) -> list[Reply]:
        if self.format == "chat":
            return [self._generate(p) for p in prompts]
        start = time.perf_counter()
        ids = [self.tokenizer(p.text)["input_ids"] for p in prompts]
        if len({len(i) for i in ids}) > 1:  # not one length: one forward pass each
            return [self.ask_batch([p])[0] for p in prompts]
        self._check_fits(len(ids[0]), 0)
        with torch.no_grad():
            batch = torch.tensor(ids, dtype=torch.long, device=self.device)
            top = self.model(input_ids=batch, use_cache=False).logits[:, -1].argmax(-1).tolist()
        latency = (time.perf_counter() - start) / len(prompts)
        return [
            Reply(self.tokenizer.decode([t]).strip(), None, len(i), 1, latency, "length")
            for t, i in zip(top, ids, strict=True)
        ]

    def _chat_ids(self, text: str) -> torch.Tensor:
        """The chat prompt's token ids; an :class:`InputError` where the tokenizer cannot encode it (a
        word-level vocabulary without an unknown token raises on the first word it lacks)."""
        try:
            if getattr(self.tokenizer, "chat_template", None):
                out = self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": text}], add_generation_prompt=True, return_tensors="pt"
                )
                return out["input_ids"] if not isinstance(out, torch.Tensor) else out
            return self.tokenizer(text, return_tensors="pt")["input_ids"]
        except Exception as exc:  # the tokenizers library raises a bare Exception
            raise InputError(
                f"the model's tokenizer cannot encode [A]'s chat prompts ({str(exc).splitlines()[0][:200]}); "
                "is it a model of one task (then --format task), or a chat model?"
            ) from None

    def _generate(self, prompt: Prompt) -> Reply:
        start = time.perf_counter()
        ids = self._chat_ids(prompt.text).to(self.device)
        self._check_fits(int(ids.shape[1]), self.max_tokens)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        with torch.no_grad():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=self.max_tokens,
                do_sample=False,
                pad_token_id=pad,
            )
        new = out[0, ids.shape[1] :]
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        finish = "length" if new.shape[0] >= self.max_tokens else "stop"
        return Reply(text, None, int(ids.shape[1]), int(new.shape[0]), time.perf_counter() - start, finish)

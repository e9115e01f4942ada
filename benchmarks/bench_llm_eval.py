"""Benchmark: ``ropeproof llm-eval``'s throughput, measured in one invocation against in-run baselines.

Run ``python3 benchmarks/bench_llm_eval.py [--rounds 3] [--latency 0.05] [--prompts 20]``.

- **Remote**: an OpenAI-compatible server on 127.0.0.1 (:class:`ropeproof.verify.testing.chat_server.
  ChatServer`) that answers every prompt correctly after ``--latency`` seconds (a model's latency);
  both tasks at lengths 8 and 32, ``--prompts`` x 2 draws, through the official ``openai`` client
  (the ``llm`` extra), at concurrency 1 (the baseline), 4 and 16. Prints the median seconds per run
  and prompts per second, and the speed-up over concurrency 1.
- **Local**: the shipped small number model in the ``task`` format (``hf`` extra), lengths
  8..100, 50 prompts x 2 draws, one forward pass per prompt (the baseline) against batches of
  equal-length prompts (what the harness does). Prints the medians and the speed-up.

Rounds alternate the settings (round robin), so load on the machine affects each alike. Torch runs
under the toolkit's thread policy (one intra-op thread unless ``--threads``), as ``ropeproof`` does.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

from ropeproof.verify.kernel._threads import thread_policy
from ropeproof.verify.studies.llm_eval._choose_provider import make_provider
from ropeproof.verify.studies.llm_eval._harness import evaluate
from ropeproof.verify.studies.llm_eval._protocol import answer


def _chat_server_class() -> type:
    """The test suite's loopback chat server (a test fixture, not part of the package), loaded by path."""
    tests = Path(__file__).resolve().parents[1] / "tests"
    path = tests / "verify" / "studies" / "llm_eval" / "chat_server.py"
    spec = importlib.util.spec_from_file_location("ropeproof_tests_chat_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.ChatServer


ChatServer = _chat_server_class()


def solve(prompt: str) -> str:
    tokens = prompt.splitlines()[-1].removeprefix("Sequence: ").split()
    return answer("number" if tokens[-1].isdigit() else "letter", tokens)


def remote(rounds: int, latency: float, prompts: int) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
    times: dict[int, list[float]] = {1: [], 4: [], 16: []}
    with ChatServer(solve, delay=latency) as server:
        provider = make_provider("openai", "bench", base_url=server.url, max_retries=0)
        total = 0
        for _ in range(rounds):
            for c in times:
                start = time.perf_counter()
                summary = evaluate(provider, lengths=[8, 32], prompts=prompts, draws=2, concurrency=c)
                times[c].append(time.perf_counter() - start)
                assert summary.complete and all(r.accuracy_mean == 1.0 for r in summary.results)
                total = sum(r.n_prompts for r in summary.results)
    base = statistics.median(times[1])
    print(f"remote: {total} prompts per run, server latency {latency} s, {rounds} rounds")
    for c, ts in times.items():
        med = statistics.median(ts)
        rate = total / med
        print(f"  concurrency {c:>2}: median {med:.3f} s ({rate:.1f} prompts/s), speed-up {base / med:.2f}x")


def local(rounds: int) -> None:
    from ropeproof.verify.studies.llm_eval._local import HFCausalLM
    from ropeproof.verify.studies.training._shipped import load_shipped

    shipped = load_shipped("number")
    batched = HFCausalLM(shipped.model, shipped.tokenizer, "task")
    single = HFCausalLM(shipped.model, shipped.tokenizer, "task")
    single.batch_size = 1
    lengths = [8, 16, 32, 64, 100]
    times: dict[str, list[float]] = {"one prompt per pass": [], "batched (64)": []}
    accuracy: dict[str, list[float | None]] = {}
    for _ in range(rounds):
        for name, provider in (("one prompt per pass", single), ("batched (64)", batched)):
            start = time.perf_counter()
            summary = evaluate(provider, ["number"], lengths, prompts=50, draws=2, fmt="task")
            times[name].append(time.perf_counter() - start)
            accuracy[name] = [r.accuracy_mean for r in summary.results]
    assert accuracy["one prompt per pass"] == accuracy["batched (64)"]  # the same answers either way
    base = statistics.median(times["one prompt per pass"])
    print(f"local: shipped number-small, task format, lengths {lengths}, 100 prompts each, {rounds} rounds")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:>20}: median {med:.3f} s ({500 / med:.0f} prompts/s), speed-up {base / med:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05, help="server seconds per reply")
    parser.add_argument("--prompts", type=int, default=20, help="prompts per draw and length (remote)")
    parser.add_argument("--threads", default=None, help="torch threads (default: the toolkit's policy, 1)")
    args = parser.parse_args()
    with thread_policy(args.threads) as threads:
        print(f"torch threads: {threads}")
        remote(args.rounds, args.latency, args.prompts)
        local(args.rounds)


if __name__ == "__main__":
    main()

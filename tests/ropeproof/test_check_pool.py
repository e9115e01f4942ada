"""check's claims and figures shared by two processes sharing the run's store give what one process gives,
byte for byte; the work is taken longest first; a saved report's figures are drawn again from its results
alone."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch

from ropeproof import _check_pool as check_pool
from ropeproof._check_pool import CheckPool, Task, draw_figures
from ropeproof._cli import main
from ropeproof.machinery._result_store import ResultStore
from ropeproof.paper_figures import make_all

NAMES = ["e_geometry", "ps_plane", "a_theory_bounds"]
BOTH = ("png", "pdf")


def _pool(claims: list, names: list[str], out: Path, store: ResultStore, formats: tuple[str, ...], **kw):
    from ropeproof.claims import CheckContext, run_claim
    from ropeproof.verify.kernel._devices import resolve_dtype

    ctx = CheckContext(torch.device("cpu"), resolve_dtype("float64"), quick=True, store=store)
    return CheckPool(claims, names, out, store, True, formats, 1, run_here=lambda c: run_claim(c, ctx), **kw)


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_two_processes_draw_what_one_draws(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "store")
    longest = {"figure:a_theory_bounds": 9.0}
    pool = _pool([], NAMES, tmp_path / "split", store, BOTH, seconds=longest)
    claims, split = pool.finish()
    assert claims == [] and pool.order[0] == Task("figure", "a_theory_bounds")  # the longest first
    drawn_by_worker = [t.name for t in pool.ran_by_worker]
    alone = make_all(tmp_path / "alone", quick=True, only=NAMES, formats=BOTH)
    assert list(split) == NAMES and set(alone) == set(NAMES)  # report order, whoever drew what
    for name in NAMES:
        assert [p.name for p in split[name]] == [p.name for p in alone[name]]
        assert [p.suffix for p in split[name]] == [".png", ".pdf", ".csv", ".txt"]
    assert _files(tmp_path / "split") == _files(tmp_path / "alone")
    # each figure was drawn by one side; what either side computed is in the shared directory
    here = [n for n in NAMES if n not in drawn_by_worker]
    assert sorted(here + drawn_by_worker) == sorted(NAMES)
    assert set(pool.seconds) == {f"figure:{n}" for n in NAMES}
    assert len(store.saved_keys()) == len(NAMES)  # one data product per figure, written once


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_a_figure_that_raises_in_either_process_costs_only_itself(tmp_path: Path) -> None:
    # the first process may take the failing name itself, or the second may meet it: the same record
    names = ["nosuch", "e_geometry", "alsonot"]
    pool = _pool([], names, tmp_path / "f", ResultStore(tmp_path / "s"), ("png",))
    _, drawn = pool.finish()
    assert list(drawn) == ["e_geometry"] and all(p.is_file() for p in drawn["e_geometry"])
    assert sorted(pool.failed) == ["alsonot", "nosuch"]
    assert "InputError: unknown figure 'nosuch'" in pool.failed["nosuch"]
    assert pool.failed["nosuch"].startswith("Traceback")
    pool.cancel()
    made, failed = draw_figures(names, tmp_path / "one", ResultStore(), True, ("png",))
    assert list(made) == ["e_geometry"] and list(failed) == ["nosuch", "alsonot"]


def test_check_writes_its_report_when_a_figure_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in one figure used to discard a whole run (an 18-minute check included): now the claims,
    the corrections and the other figures are written, the failure is in the report, and check exits 3
    with one line naming the figure."""
    import ropeproof.paper_figures as paper_figures

    real = paper_figures.draw_figure

    def broken(name: str, quick: bool, store: ResultStore):
        if name == "e_geometry":
            raise ZeroDivisionError("planted")
        return real(name, quick, store)

    monkeypatch.setattr(paper_figures, "draw_figure", broken)  # one process: --jobs 1
    out = tmp_path / "rep"
    args = ["check", "--quick", "--only", "thm3.1.*", "--jobs", "1", "--no-progress", "--out", str(out)]
    assert main(args) == 3
    report = json.loads((out / "report.json").read_text())
    assert report["claims"] and all(c["verdict"] != "error" for c in report["claims"])
    assert list(report["figure_errors"]) == ["e_geometry"]
    assert "ZeroDivisionError: planted" in report["figure_errors"]["e_geometry"]
    assert "e_geometry" not in report["figures"] and report["figures"]  # the others were drawn
    md = (out / "report.md").read_text()
    assert "## Figure errors" in md and "ZeroDivisionError: planted" in md


def test_cancel_stops_the_second_process(tmp_path: Path) -> None:
    pool = _pool([], NAMES, tmp_path / "f", ResultStore(tmp_path / "s"), ("png",))
    start = time.perf_counter()
    pool.cancel()
    assert time.perf_counter() - start < 10
    with pytest.raises(ValueError, match="through its directory"):
        _pool([], NAMES, tmp_path / "f", ResultStore(), ("png",))


def test_a_selection_draws_only_its_claims_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check --claims FILE --only 'mine.*' used to draw every paper figure (146 s for two 1-second
    claims); a selection draws the figures its claims name, and every built-in topic names real figures.
    Claims of yours alone, with no figure, start no second process (it could take none of them)."""
    from ropeproof.claims import registered_claims
    from ropeproof.commands._check import figures_of
    from ropeproof.paper_figures import figure_names

    claims = registered_claims()
    named = {name for c in claims for name in c.report_figures}
    assert named <= set(figure_names())
    assert named == set(figure_names())  # every figure illustrates some claim
    thm32 = [c for c in claims if c.id.startswith("thm3.2.")]
    assert figures_of(thm32, whole=False) == [
        "a_theory_bounds",
        "b_loglog_discrepancy",
        "d_softmax_scale",
        *(f"errata_{x}" for x in ("index_fixed_theta", "index_best_theta", "index_largest_gap")),
        *(f"errata_{x}" for x in ("retrieval_margin", "retrieval_largest_gap")),
    ]
    assert figures_of(thm32, whole=True) is None
    claims_file = tmp_path / "mine.py"
    claims_file.write_text(
        "from ropeproof.claims import ClaimSet, Outcome\nCLAIMS = ClaimSet('mine')\n"
        "@CLAIMS.claim(id='mine.one', statement='s', reference='r')\n"
        "def _(ctx):\n    return Outcome.judge(ok=True, figures={})\n"
    )
    out = tmp_path / "rep"
    args = ["check", "--claims", str(claims_file), "--only", "mine.*", "--no-progress", "--out", str(out)]
    assert main([*args, "--jobs", "1"]) == 0
    assert not (out / "figures").exists() or list((out / "figures").iterdir()) == []

    started = []

    def no_second_process(*args: object, **kwargs: object) -> None:
        started.append(args)
        raise RuntimeError("no second process in this test")

    monkeypatch.setattr(check_pool, "CheckPool", no_second_process)
    assert main([*args, "--jobs", "2", "--force"]) == 0 and started == []
    builtin = ["check", "--only", "rope.relative-position", "--no-figures", "--no-progress", "--jobs", "2"]
    assert main([*builtin, "--out", str(tmp_path / "b")]) == 3 and len(started) == 1  # shared: it starts


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_a_saved_report_draws_its_figures_again_without_computing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two processes or one write the same report and figures; ``figures --from-report`` draws the same
    bytes from the report's store alone (a store that may not compute: anything missing would raise)."""
    select = ["--quick", "--only", "rope.*", "--only", "thm3.1.index", "--no-progress"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["check", *select, "--jobs", "1", "--out", str(one)]) == 0
    assert main(["check", *select, "--jobs", "2", "--out", str(two)]) == 0
    assert sorted(p.stem for p in (one / "figures").glob("*.png")) == ["c_accuracy", "e_geometry"]
    assert _files(one / "figures") == _files(two / "figures")
    assert _files(one / "store") == _files(two / "store")  # the same values, whichever process computed
    assert not (one / "store" / ".locks").exists()
    again = tmp_path / "again"
    assert main(["figures", "--from-report", str(one), "--out", str(again)]) == 0
    assert _files(again) == _files(one / "figures")
    capsys.readouterr()
    # what cannot be drawn from a saved report is refused in one line, exit 2
    for argv, message in [
        (["--from-report", str(tmp_path / "none")], "no readable report.json"),
        (["--from-report", str(one), "--only", "a_theory_bounds"], "do not hold figure.a-theory-bounds"),
    ]:
        assert main(["figures", *argv, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    report = json.loads((one / "report.json").read_text())
    report["run"]["flags"]["quick"] = False
    (one / "report.json").write_text(json.dumps(report))
    assert main(["figures", "--from-report", str(one), "--quick", "--out", str(tmp_path / "y")]) == 2
    assert "the report ran without --quick" in capsys.readouterr().err


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_a_claim_and_a_figure_in_two_processes_compute_a_shared_result_once(tmp_path: Path) -> None:
    """The Theorem 3.2 claims and the theory figure read one Index sweep table, the PS claim and the PS
    figure one scored head (object products); with the figures in a second process, each is computed once
    in the run (the store's computation log, reported as ``run.computations``)."""
    select = ["--quick", "--only", "thm3.2.index.pi2-over-2n2.*", "--only", "ps.index-positional"]
    out = tmp_path / "two"
    assert main(["check", *select, "--jobs", "2", "--no-progress", "--out", str(out)]) == 0
    computations = json.loads((out / "report.json").read_text())["run"]["computations"]
    assert computations["computed_more_than_once"] == {}
    assert computations["values"] >= 4
    assert not [p for p in (out / "store").iterdir() if p.name.startswith(".")]  # no pickles left behind


def _claim_entries(results: list) -> list[dict]:
    """The report's entries of ``results`` without their timings (what two runs of the same claims share)."""
    from ropeproof._report import report_dict, without_timings
    from ropeproof.claims import CheckContext
    from ropeproof.verify.kernel._devices import resolve_dtype

    ctx = CheckContext(torch.device("cpu"), resolve_dtype("float64"), quick=True)
    return without_timings(report_dict(results, ctx))["claims"]


def test_both_processes_run_claims_and_give_what_one_process_gives(tmp_path: Path) -> None:
    """The second process runs built-in claims too (the longest first: it takes the first task when it
    starts), a claim of yours only in the first process, and a claim whose outcome could not be sent back
    is run again in the first; the results are those of running every claim here, in the claims' order."""
    from ropeproof.claims import CheckContext, Claim, Outcome, registered_claims, run_claim
    from ropeproof.verify.kernel._devices import resolve_dtype

    chosen = ["rope.relative-position", "thm3.1.index", "remark3.1.symbolic-cannot-index"]
    builtin = [c for c in registered_claims() if c.id in chosen]
    yours = Claim(
        "mine.one", "A claim of yours.", "test", {}, lambda ctx: Outcome.judge(True, {"x": 2.0}, "x")
    )
    claims = [*builtin, yours]
    assert [c.id for c in builtin] == chosen and not yours.builtin
    store = ResultStore(tmp_path / "store")
    longest = {"claim:mine.one": 99.0, "claim:thm3.1.index": 50.0}  # the second process skips mine.one
    pool = _pool(claims, [], tmp_path / "f", store, ("png",), seconds=longest)
    pool._returned(
        Task("claim", "remark3.1.symbolic-cannot-index"), False, None, 0.0
    )  # "could not be sent back"
    results, figures = pool.finish()
    assert figures == {}
    assert [r.claim for r in results] == claims  # the first process's claim objects, in order
    by_worker = [t.name for t in pool.ran_by_worker]
    assert by_worker[0] == "thm3.1.index" and "mine.one" not in by_worker
    assert set(pool.seconds) == {f"claim:{c.id}" for c in claims}
    ctx = CheckContext(torch.device("cpu"), resolve_dtype("float64"), quick=True, store=ResultStore())
    alone = [run_claim(c, ctx) for c in claims]
    assert _claim_entries(results) == _claim_entries(alone)
    assert all(r.outcome.verdict != "error" for r in results)


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_check_with_two_processes_writes_the_report_of_one(tmp_path: Path) -> None:
    """``check --jobs 2`` (claims and figures shared) and ``--jobs 1`` write the same report and figures,
    and both record the seconds of every task (``run.task_seconds``), which order the next run."""
    from ropeproof._report import without_timings
    from ropeproof._work_order import expected_seconds

    select = ["--quick", "--only", "thm3.1.*", "--only", "rope.*", "--no-progress"]
    reports = {}
    for jobs in ("1", "2"):
        out, history = tmp_path / f"jobs{jobs}", tmp_path / f"history{jobs}"
        assert main(["check", *select, "--jobs", jobs, "--out", str(out), "--cache-dir", str(history)]) == 0
        reports[jobs] = json.loads((out / "report.json").read_text())
        tasks = reports[jobs]["run"]["task_seconds"]
        assert {k.split(":")[0] for k in tasks} == {"claim", "figure"}  # these claims have no correction
        assert expected_seconds(history, quick=True) | tasks == expected_seconds(history, quick=True)
    one, two = (without_timings(reports[j]) for j in ("1", "2"))
    for report in (one, two):
        report["run"].pop("command")
    assert one == two
    assert _files(tmp_path / "jobs1" / "figures") == _files(tmp_path / "jobs2" / "figures")


def test_a_task_that_meets_a_value_being_computed_elsewhere_goes_last_then_waits(tmp_path: Path) -> None:
    """While another process holds a value's lock, a task asking for it is put at the end of the list
    (other work first) instead of waiting; taken again, it waits, and gets the value."""
    import threading

    from filelock import FileLock

    from ropeproof.claims import Claim, Outcome
    from ropeproof.machinery._result_store import LOCKS, data_product, result_file

    @data_product("test.slow-value")
    def slow_value(store: ResultStore) -> float:
        return 3.5

    asked: list[str] = []

    def needs(tag: str):
        def check(ctx):
            asked.append(tag)
            return Outcome.judge(True, {"v": ctx.store.get(slow_value) if tag == "needs" else 1.0}, "v")

        return check

    claims = [Claim(f"mine.{t}", "s", "r", {}, needs(t)) for t in ("needs", "free")]
    store = ResultStore(tmp_path / "store")
    (store.directory / LOCKS).mkdir()
    lock = store.directory / LOCKS / (Path(result_file(slow_value, {})).stem + ".lock")
    taken = threading.Event()

    def other_process() -> None:  # holds the value's lock for a second, as a process computing it would
        with FileLock(str(lock)):
            taken.set()
            time.sleep(1.0)

    holder = threading.Thread(target=other_process)
    holder.start()
    taken.wait()
    pool = _pool(claims, [], tmp_path / "f", store, ("png",))
    results, _ = pool.finish()
    holder.join()
    assert asked == ["needs", "free", "needs"]  # deferred once, the other claim first, then it waited
    assert [r.outcome.figures["v"] for r in results] == [3.5, 1.0]
    assert store.get(slow_value) == 3.5


def test_corrections_run_here_among_the_tasks_and_the_second_process_starts_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose claims are all built in starts its second process before it imports the claims, and
    its pool takes that process; the corrections are jobs of the first process, ordered with the other
    tasks (their seconds recorded as ``correction:ID``), and the report is the one process's report."""
    import os

    from ropeproof._report import without_timings

    started, taken = [], []
    real_start, real_pool = check_pool.start_second_process, check_pool.CheckPool

    def start(figures: bool):
        started.append(figures)
        return real_start(figures)

    class Pool(real_pool):
        def __init__(self, *args, process=None, **kwargs):
            taken.append(process)
            super().__init__(*args, process=process, **kwargs)

    monkeypatch.setattr(check_pool, "start_second_process", start)
    monkeypatch.setattr(check_pool, "CheckPool", Pool)
    select = ["--quick", "--only", "remark3.1.positional-cannot-retrieve.*", "--no-figures", "--no-progress"]
    reports = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        cache = ["--cache-dir", str(tmp_path / f"cache{jobs}")]
        assert main(["check", *select, "--jobs", jobs, "--out", str(out), *cache]) == 0
        reports[jobs] = json.loads((out / "report.json").read_text())
        assert "correction:remark3.1.positional-readout" in reports[jobs]["run"]["task_seconds"]
    assert started == [False] and len(taken) == 1 and taken[0] is not None  # --jobs 1 starts none
    one, two = (without_timings(reports[j]) for j in ("1", "2"))
    for report in (one, two):
        report["run"].pop("command")
    assert one == two and [c["id"] for c in one["corrections"]] == ["remark3.1.positional-readout"]

    ran_in: list[int] = []
    with pytest.raises(ValueError, match="KIND:NAME"):
        _pool([], [], tmp_path / "f", ResultStore(tmp_path / "s"), ("png",), here_jobs={"figure:x": print})
    pool = _pool(
        [], [], tmp_path / "f", ResultStore(tmp_path / "s"), ("png",),
        here_jobs={"correction:x": lambda: ran_in.append(os.getpid())},
        seconds={"correction:x": 5.0},
    )  # fmt: skip
    assert pool.order == [Task("correction", "x")] and pool.finish() == ([], {})
    assert ran_in == [os.getpid()] and set(pool.seconds) == {"correction:x"}


class _Recorder:
    """Stands in for the second process: records what it is sent and runs nothing."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, tuple]] = []

    def apply_async(self, fn, args=(), callback=None, error_callback=None) -> None:
        self.sent.append((fn.__name__, args))

    def terminate(self) -> None:
        pass

    def join(self) -> None:
        pass


@pytest.mark.parametrize(
    ("grouped", "apart", "second_takes", "first_takes"),
    [
        ({"f3", "f4"}, True, "f3", ["f1", "f2", "f4"]),  # 15 s of 34: the second process takes them first
        ({"f1", "f2", "f3"}, False, "f1", ["f2", "f3", "f4"]),  # 27 s of 34: longest first, as without
    ],
)
def test_the_second_process_takes_the_grouped_tasks_first_while_they_are_at_most_half(
    tmp_path: Path, grouped: set[str], apart: bool, second_takes: str, first_takes: list[str]
) -> None:
    """``second_first`` tasks (those that import ``transformers``) go to the second process before any
    other, and to the first only when nothing else is left, while their expected seconds are at most
    half of the run's; otherwise the order is longest first for both."""
    seconds = {"figure:f1": 10.0, "figure:f2": 9.0, "figure:f3": 8.0, "figure:f4": 7.0}
    second = _Recorder()
    pool = _pool(
        [], ["f1", "f2", "f3", "f4"], tmp_path / "f", ResultStore(tmp_path / "s"), ("png",),
        seconds=seconds, process=second, second_first={f"figure:{n}" for n in grouped} | {"claim:absent"},
    )  # fmt: skip
    assert pool.kept_apart is apart
    assert [name for name, _ in second.sent] == ["_start_worker", "_run_in_worker"]
    assert second.sent[1][1][0] == Task("figure", second_takes)
    taken = []
    while (task := pool._take(here=True)) is not None:
        taken.append(task.name)
    assert taken == first_takes
    pool.cancel()


def test_the_transformers_tasks_are_the_claims_and_figures_that_run_models() -> None:
    from ropeproof._work_order import TRANSFORMERS_CLAIMS, transformers_tasks
    from ropeproof.claims import registered_claims
    from ropeproof.paper_figures import NEEDS_HF, figure_names

    ids = [c.id for c in registered_claims() if c.builtin]
    keys = transformers_tasks(ids, figure_names())
    assert {"claim:training.length", "claim:multihop.hf-lengths", "claim:llm-eval.local-ordering"} <= keys
    assert {f"figure:{n}" for n in NEEDS_HF} <= keys and "figure:training_length" in keys
    assert not keys & {"claim:thm3.1.index", "claim:multihop.length", "figure:c_accuracy"}
    for glob in TRANSFORMERS_CLAIMS:  # no stale pattern
        assert transformers_tasks([i for i in ids if i.startswith(glob.rstrip("*"))], []), glob

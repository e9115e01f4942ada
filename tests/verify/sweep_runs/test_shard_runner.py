"""Shards as Dask tasks on a real local cluster: the same bytes as one process (issue 28, items 1-2).

One cluster serves the module: the one ``--executor dask --workers 2`` starts (two worker processes,
one thread each, loopback only, no dashboard), made by the same code; the command line reaches it with
``--scheduler``. It lives for the test session (under pytest-xdist the worker running this module may
run other modules' tests between these, which closed and restarted a module-scoped cluster).
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# distributed is imported by the cluster fixture, not at collection (every pytest worker collects this)
pytestmark = [
    pytest.mark.xdist_group("dask-cluster"),  # one pytest worker, so one cluster for the module
    pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="needs distributed (dask)"),
]

from ropeproof._cli import main  # noqa: E402
from ropeproof.verify.sweep_runs import _shard_runner as shard_runner  # noqa: E402
from ropeproof.verify.sweep_runs._shard_runner import (  # noqa: E402
    ShardFailure,
    SweepSpec,
    records_shard_text,
    run_certified_index,
    run_sweep,
    sweep_shard_text,
)


@pytest.fixture(scope="session")
def client() -> Iterator[Any]:  # a distributed.Client
    with shard_runner._client("dask", 2, None) as c:
        assert len(c.scheduler_info()["workers"]) == 2
        http = c.cluster.scheduler.http_server  # health routes only: no dashboard, loopback, a free port
        assert {s.getsockname()[0] for s in http._sockets.values()} == {"127.0.0.1"}
        assert c.cluster.scheduler.http_server.port != 8787
        c.run(lambda: __import__("ropeproof.verify.sweep_runs._shard_runner"))  # warm the workers' imports
        yield c


def _local(spec: SweepSpec) -> str:
    out = io.StringIO()
    run_sweep(spec, out)
    return out.getvalue()


@pytest.mark.parametrize(
    "spec",
    [
        SweepSpec("index", 0.866, (2, 5000, 7)),
        SweepSpec("retrieval", 0.0027, (2, 3000, 1), alphabet=8),
        SweepSpec("retrieval", 1e-4, (2, 120, 3), alphabet=1000),
    ],
    ids=["index", "retrieval-8", "retrieval-1000"],
)
def test_sweeps_on_the_cluster_equal_one_process(spec: SweepSpec, client, tmp_path: Path) -> None:
    out = io.StringIO()
    summary = run_sweep(spec, out, executor=client, shards=3, shard_root=tmp_path)
    assert out.getvalue() == _local(spec)
    assert summary.rows == spec.rows()
    assert list(tmp_path.iterdir()) == []  # the shard directory goes once merged


@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_row_sweeps_on_the_command_line(dtype: str | None, client, tmp_path: Path, monkeypatch) -> None:
    """``sweep index ... --jsonl --executor dask`` stopped with "dtype='float64' is not supported"
    (issue 32, case 10): the command line's dtype name reached a function that took torch dtypes."""
    monkeypatch.chdir(tmp_path)
    # 200 rows in 3 shards: the dtype name crosses to the shards whatever their size (float32 measures
    # the compiled head's logits, seconds per thousand rows)
    argv = ["sweep", "index", "--theta", "0.866", "--lengths", "2:600:3", "--jsonl"]
    argv += ["--dtype", dtype] if dtype else []
    assert main([*argv, "--out", "one.jsonl"]) == 0
    dask = ["--executor", "dask", "--scheduler", client.scheduler.address, "--shards", "3"]
    assert main([*argv, *dask, "--out", "dask.jsonl"]) == 0
    assert Path("dask.jsonl").read_bytes() == Path("one.jsonl").read_bytes()
    assert json.loads(Path("one.jsonl").read_text().splitlines()[0])["dtype"] == (dtype or "float64")


def test_certified_index_on_the_cluster_equals_one_process(
    client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's command at a small size, through the command line; the shard directory is the
    default one in the working directory, gone once merged."""
    monkeypatch.chdir(tmp_path)
    argv = ["sweep", "certified-index", "--theta", "0.866", "--lengths", "2:30000"]
    assert main([*argv, "--out", "one.json"]) == 0
    dask = ["--executor", "dask", "--scheduler", client.scheduler.address, "--shards", "5"]
    assert main([*argv, *dask, "--out", "dask.json"]) == 0
    assert Path("dask.json").read_bytes() == Path("one.json").read_bytes()
    assert json.loads(Path("one.json").read_text())["readings"]["margin_inf"]["verdict"] == "violated"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask.json", "one.json"]


def test_a_worker_killed_mid_run(client, tmp_path: Path) -> None:
    """A shard's task kills its own worker process once (SIGKILL); the scheduler reruns it on the other
    worker and the verdict is complete and equal."""
    marker = tmp_path / "killed"

    def killer(theta: float, prec: int, first: int, last: int, m_last: int) -> str:
        if first > 1 and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return records_shard_text(theta, prec, first, last, m_last)

    got = run_certified_index(0.866, 20000, executor=client, shards=3, shard_root=tmp_path / "s", task=killer)
    assert marker.exists()
    assert json.dumps(got.to_dict()) == json.dumps(run_certified_index(0.866, 20000).to_dict())


def test_a_shard_that_fails_for_good_names_its_range_and_the_rest_are_reused(client, tmp_path: Path) -> None:
    spec = SweepSpec("index", 0.5, (2, 3000, 1))
    root = tmp_path / "shards"
    ran = tmp_path / "ran"
    ran.mkdir()

    def failing(spec: SweepSpec, shard: tuple[int, int]) -> str:
        if shard[0] == 2:
            raise RuntimeError("boom")
        return sweep_shard_text(spec, shard)

    message = r"shard 2/3 \(n = 1001\.\.2000\) \(RuntimeError: boom\) failed for good after 1 retries; 2 of 3"
    with pytest.raises(ShardFailure, match=message):
        run_sweep(spec, io.StringIO(), executor=client, shards=3, retries=1, shard_root=root, task=failing)
    kept = sorted(p.name for d in root.iterdir() for p in d.iterdir())
    assert kept == ["shard-000001.jsonl", "shard-000003.jsonl"]

    def counting(spec: SweepSpec, shard: tuple[int, int]) -> str:
        (ran / f"shard-{shard[0]}").touch()
        return sweep_shard_text(spec, shard)

    out = io.StringIO()
    run_sweep(spec, out, executor=client, shards=3, shard_root=root, task=counting)
    assert sorted(p.name for p in ran.iterdir()) == ["shard-2"]  # only the missing shard ran again
    assert out.getvalue() == _local(spec)


def test_dask_options_are_checked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cases = [
        (["index", "--theta", "0.5", "--executor", "dask"], "add --jsonl"),
        (["index", "--theta", "0.5", "--jsonl", "--executor", "dask", "--shard", "1/2"], "--shard picks one"),
        (["index", "--theta", "0.5", "--workers", "2"], "only apply with --executor dask"),
        (["certified-index", "--theta", "0.5", "--executor", "dask", "--workers", "2", "--scheduler", "x"],
         "not both"),
        (["certified-index", "--theta", "0.5", "--executor", "dask", "--scheduler", "x"], "cannot connect"),
    ]  # fmt: skip
    for argv, message in cases:
        assert main(["sweep", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []  # no shard directory left by a refused run


def test_dask_will_not_pay_below_the_measured_size_or_without_spare_cores() -> None:
    """Issue 46 item 7: the reasons a new local cluster will not pay, at the edges of each."""
    from ropeproof.verify.sweep_runs._shard_runner import DASK_PAYS_FROM, dask_will_not_pay

    pays = DASK_PAYS_FROM["certified-index"]
    assert pays is not None
    assert dask_will_not_pay("certified-index", pays, workers=2, cores=2) is None
    assert dask_will_not_pay("certified-index", pays, workers=None, cores=8) is None
    assert f"only from {pays}" in (dask_will_not_pay("certified-index", pays - 1, 2, 2) or "")
    assert "side by side" in (dask_will_not_pay("certified-index", 10 * pays, None, cores=1) or "")
    assert "side by side" in (dask_will_not_pay("certified-index", 10 * pays, 1, cores=4) or "")
    assert "share them" in (dask_will_not_pay("certified-index", 10 * pays, 3, cores=2) or "")
    if DASK_PAYS_FROM["sweep"] is None:
        assert "at any size" in (dask_will_not_pay("sweep", 10**9, 2, 2) or "")


def test_the_command_warns_before_starting_a_cluster_that_will_not_pay(monkeypatch, capsys) -> None:
    """One warning line on stderr before the cluster starts (here it cannot: the stand-in refuses); a
    cluster given by ``--scheduler`` is not judged."""
    from ropeproof.machinery._errors import InputError

    def no_cluster(*args: object) -> Any:
        raise InputError("no cluster in this test")

    monkeypatch.setattr(shard_runner, "_client", no_cluster)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    argv = ["sweep", "certified-index", "--theta", "0.866", "--lengths", "2:1000", "--no-progress"]
    assert main([*argv, "--executor", "dask", "--workers", "2"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith(
        "ropeproof sweep: warning: --executor dask will likely be slower"
    )
    assert "only from" in err[0] and err[1].startswith("ropeproof sweep: error: no cluster")
    assert main([*argv, "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "warning" not in capsys.readouterr().err

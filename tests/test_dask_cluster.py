"""The Dask runner on a real cluster of separate processes (issue 34): `dask scheduler` and `dask worker`
started as subprocesses on 127.0.0.1, the worker in another working folder, where the rule files do not
exist. The jobs carry the rule texts (and every file they extend), so the worker needs no shared file
system: `rulelang simulate games/station.rules --scheduler tcp://...` gives the summary and the rows of a
run in this process, and so does a house-rule file that extends another. The worker refuses texts that do
not match their digest."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed")  # a guard for machines without rulelang[dask]; CI has it

import rulelang  # noqa: E402
from interpreter.runner import RunnerError, WorkerError, rules_bundle, run_games  # noqa: E402
from rulelang.cli import cli  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATION = "games/station.rules"


def _wait_for(path, proc, what, limit=120):
    """Wait for a file a subprocess writes (a hang back-stop, not a speed test)."""
    start = time.monotonic()
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        if time.monotonic() - start > limit:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A `dask scheduler` and one `dask worker` (one thread) as subprocesses on 127.0.0.1; the worker's
    working folder is an empty folder of its own. The worker imports this checkout's code (PYTHONPATH):
    the code is installed on every machine, the rule files are not."""
    base = tmp_path_factory.mktemp("dask")
    info = str(base / "scheduler.json")
    elsewhere = base / "worker-folder"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    logs = open(base / "dask.log", "w")
    scheduler = subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", info],
                                 cwd=str(base), env=env, stdout=logs, stderr=subprocess.STDOUT)
    worker = None
    try:
        _wait_for(info, scheduler, "the scheduler")
        worker = subprocess.Popen([sys.executable, "-m", "dask", "worker", "--scheduler-file", info, "--nthreads", "1",
                                   "--nworkers", "1", "--no-dashboard", "--host", "127.0.0.1",
                                   "--local-directory", str(elsewhere)],
                                  cwd=str(elsewhere), env=env, stdout=logs, stderr=subprocess.STDOUT)
        with open(info) as fh:
            address = json.load(fh)["address"]
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=120)
            assert client.run(os.getcwd) and all(d == str(elsewhere) for d in client.run(os.getcwd).values())
            assert not os.path.exists(elsewhere / STATION)
        yield address, elsewhere
    finally:
        for proc in (worker, scheduler):
            if proc is not None:
                proc.terminate()
        for proc in (worker, scheduler):
            if proc is not None:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        logs.close()


@pytest.fixture(autouse=True)
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the rule path as a user gives it, relative to the project folder


def test_simulate_station_on_a_worker_in_another_folder(cluster, tmp_path):
    address, _ = cluster
    args = ["simulate", STATION, "--players", "3", "--games", "3", "--seed", "2", "--json"]
    here = CliRunner().invoke(cli, args + ["--out", str(tmp_path / "here.jsonl")])
    there = CliRunner().invoke(cli, args + ["--scheduler", address, "--out", str(tmp_path / "there.jsonl")])
    assert here.exit_code == 0, here.output
    assert there.exit_code == 0, there.output
    a, b = json.loads(here.stdout), json.loads(there.stdout)
    a.pop("seconds"), b.pop("seconds"), a.pop("out"), b.pop("out")
    assert a == b and a["games"] == 3
    assert (tmp_path / "here.jsonl").read_text() == (tmp_path / "there.jsonl").read_text()


def test_a_house_rule_file_and_the_file_it_extends_travel_with_the_job(cluster, tmp_path, monkeypatch):
    address, _ = cluster
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "base.rules").write_text(open(os.path.join(ROOT, "games/examples/tictactoe.rules")).read())
    (folder / "house.rules").write_text('extends "base.rules"\n\n'
                                        '# a house rule: a full board is not the end; the game stops one mark earlier\n'
                                        'override ending "board full" when count(marks) == 8\n')
    monkeypatch.chdir(tmp_path)
    rs = rulelang.load("rules/house.rules")
    assert len(rules_bundle(rs)["files"]) == 2
    here = run_games(rs, rules="rules/house.rules", players=2, games=12, seed=1)
    there = run_games(rs, rules="rules/house.rules", players=2, games=12, seed=1, scheduler=address)
    assert here == there
    assert any(r["end_reason"] == "board full" for r in there)  # the house rule's ending, as changed


def test_the_worker_plays_the_rules_as_loaded_not_the_file_as_it_is_now(cluster, tmp_path, monkeypatch):
    address, _ = cluster
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "ttt.rules"
    text = open(os.path.join(ROOT, "games/examples/tictactoe.rules")).read()
    path.write_text(text)
    rs = rulelang.load("ttt.rules")
    path.write_text("this is not a rule file any more\n")  # changed after the load: the job carries the texts
    rows = run_games(rs, rules="ttt.rules", players=2, games=4, seed=3, scheduler=address)
    assert all(r["ok"] for r in rows) and rows == run_games(rs, players=2, games=4, seed=3)


def test_texts_that_do_not_match_their_digest_are_refused():
    from interpreter.runner import _worker_ruleset

    bundle = rules_bundle(rulelang.load(os.path.join(ROOT, "games/examples/tictactoe.rules")))
    top = bundle["top"]
    bundle["files"][top] = bundle["files"][top].replace("line_length(grid, (r, c), where: cell => owns(me, cell)) >= 3",
                                                        "false")
    with pytest.raises(WorkerError, match="do not match their digest"):
        _worker_ruleset(bundle, ())
    bundle = rules_bundle(rulelang.load(os.path.join(ROOT, "games/examples/tictactoe.rules")))
    bundle["files"] = {"../outside.rules": bundle["files"][top]}
    bundle["top"] = "../outside.rules"
    with pytest.raises(WorkerError, match="outside their folder"):
        _worker_ruleset(bundle, ())
    assert issubclass(WorkerError, RunnerError)

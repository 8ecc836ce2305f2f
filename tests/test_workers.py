"""``simulate`` with worker processes: the rules are loaded and compiled once, in the parent; the
workers (forked after the load) receive only ranges of game indexes; the summary is the same for
any number of workers; the worker count is checked (1 to ``MAX_WORKERS``).  Where ``fork`` does not
exist the workers load the rules once each, in their initializer (tested by forcing that path).

The fake "race" core of test_agents_simulate stands in for a real game where the game does not
matter; Station checks the real thing.
"""
from __future__ import annotations

import concurrent.futures
import functools
import multiprocessing
import os

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import interpreter.runner as simulate_module  # the pool lives in the runner
from interpreter.runner import Job
from interpreter.simulate import WorkerError, simulate
from rulelang.cli import cli

try:  # the module pytest already imported (rootdir-relative "prepend" import mode)
    from test_agents_simulate import Ruleset, fake_load
except ImportError:  # tests/ is a package
    from tests.test_agents_simulate import Ruleset, fake_load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_WORKERS = 64  # the documented limit (docs/language.md, "Run-time limits and errors")
HAS_FORK = getattr(simulate_module, "_can_fork", lambda: "fork" in multiprocessing.get_all_start_methods())()
needs_fork = pytest.mark.skipif(not HAS_FORK, reason="workers are not forked on this platform")


def counting_load(log, path, variants=()):
    """``fake_load`` that appends the id of the loading process to ``log`` (a file: the workers
    are other processes)."""
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()}\n")
    return fake_load(path, variants)


def loads(log) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def race_file(tmp_path):
    p = tmp_path / "race.rules"
    p.write_text("race 10\n")
    return str(p)


def without_seconds(summary):
    summary = dict(summary)
    summary.pop("seconds")
    return summary


# --- the same results for any number of workers ---------------------------------------------------

def test_one_two_and_three_workers_agree(race_file):
    runs = [without_seconds(simulate(race_file, 2, 37, seed=4, workers=w, loader=fake_load, variants=("trap",)))
            for w in (1, 2, 3)]
    assert runs[0]["games"] == 37 and 0 < runs[0]["errors"] < 37  # failing games are in it too
    assert runs[0] == runs[1] == runs[2]


@settings(deadline=None, max_examples=6)
@given(games=st.integers(2, 150), workers=st.integers(2, 3), seed=st.integers(0, 10 ** 6),
       players=st.sampled_from([2, 3]))
def test_workers_agree_with_one_worker(games, workers, seed, players):
    rules = Ruleset("race.rules", 9, ("trap",))
    one = simulate(rules, players, games, seed=seed)
    many = simulate(rules, players, games, seed=seed, workers=workers)
    assert without_seconds(one) == without_seconds(many)


def test_station_two_workers_agree():
    path = os.path.join(ROOT, "games", "station.rules")
    one = simulate(path, 3, 4, seed=2)
    two = simulate(path, 3, 4, seed=2, workers=2)
    assert one["completed"] == 4 and one["errors"] == 0
    assert without_seconds(one) == without_seconds(two)


def test_progress_with_workers(race_file):
    calls = []
    s = simulate(race_file, 2, 50, workers=2, loader=fake_load, progress=lambda d, t: calls.append((d, t)))
    assert s["completed"] == 50
    assert calls[0] == (0, 50) and calls[-1] == (50, 50)
    done = [d for d, _ in calls]
    assert done == sorted(done) and all(t == 50 for _, t in calls)


# --- the rules are loaded once, and never sent to the workers -----------------------------------

@needs_fork
def test_rules_are_loaded_once_in_the_parent(race_file, tmp_path):
    log = tmp_path / "loads.txt"
    loader = functools.partial(counting_load, str(log))
    s = simulate(race_file, 2, 60, workers=2, loader=loader)
    assert s["completed"] == 60
    assert loads(log) == [str(os.getpid())]  # this process only: no worker loaded the rules


@needs_fork
def test_an_already_loaded_ruleset_is_not_loaded_again(race_file, tmp_path):
    """The command line's way: it loads the rules (to check them and the player count) and passes
    them as ``ruleset``; nothing loads them again."""
    log = tmp_path / "loads.txt"
    loader = functools.partial(counting_load, str(log))
    s = simulate(race_file, 2, 60, workers=2, loader=loader, ruleset=fake_load(race_file))
    assert s["completed"] == 60 and loads(log) == []


@needs_fork
def test_workers_receive_no_path_and_no_rules(race_file, monkeypatch):
    """What goes to the pool: no initializer arguments but this process's id (the workers end if
    it dies), and tasks of a range of game indexes and a ``Job`` of plain values (the seed, the
    player count, the agent specs, the limit, the chance mode, the variants' names)."""
    seen = {"init": [], "tasks": []}
    real_init = concurrent.futures.ProcessPoolExecutor.__init__
    real_submit = concurrent.futures.ProcessPoolExecutor.submit

    def spy_init(self, *args, **kwargs):
        seen["init"].append(kwargs.get("initargs", ()))
        real_init(self, *args, **kwargs)

    def spy_submit(self, fn, *args, **kwargs):
        seen["tasks"].append(args)
        return real_submit(self, fn, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures.ProcessPoolExecutor, "__init__", spy_init)
    monkeypatch.setattr(concurrent.futures.ProcessPoolExecutor, "submit", spy_submit)
    s = simulate(race_file, 2, 100, seed=5, workers=2, loader=fake_load, ruleset=fake_load(race_file))
    assert s["completed"] == 100
    assert seen["init"] == [(os.getpid(),)]
    assert seen["tasks"]
    for args in seen["tasks"]:
        start, stop, job = args
        assert type(start) is int and type(stop) is int and isinstance(job, Job), args
        assert job.chance == "sampled" and job.agents == ("random", "random") and job.seed == 5
        plain = (int, str, tuple, type(None))
        assert all(isinstance(v, plain) for v in job) and all(type(a) is str for a in job.agents + job.variants)
    # the ranges cover every game once, in small tasks
    covered = sorted(i for args in seen["tasks"] for i in range(args[0], args[1]))
    assert covered == list(range(100))
    assert len(seen["tasks"]) >= 4


@needs_fork
def test_the_rule_file_may_be_gone_once_loaded(race_file, tmp_path):
    """Workers play with the parent's rules: a rule file deleted after the load does not matter."""
    ruleset = fake_load(race_file)
    os.unlink(race_file)
    s = simulate(race_file, 2, 20, workers=2, loader=fake_load, ruleset=ruleset)
    assert s["completed"] == 20


# --- without fork: one load per worker, in its initializer --------------------------------------

def test_without_fork_each_worker_loads_once(race_file, tmp_path, monkeypatch):
    monkeypatch.setattr(simulate_module, "_can_fork", lambda: False)
    log = tmp_path / "loads.txt"
    loader = functools.partial(counting_load, str(log))
    one = simulate(race_file, 2, 40, seed=3, loader=fake_load, variants=("trap",))
    two = simulate(race_file, 2, 40, seed=3, workers=2, loader=loader, variants=("trap",))
    assert without_seconds(one) == without_seconds(two)
    pids = loads(log)
    assert pids[0] == str(os.getpid())
    workers = pids[1:]
    assert 1 <= len(workers) <= 2 and len(set(workers)) == len(workers)  # once per worker
    assert str(os.getpid()) not in workers


def test_without_fork_a_worker_load_failure_is_clean(race_file, tmp_path, monkeypatch):
    monkeypatch.setattr(simulate_module, "_can_fork", lambda: False)
    with pytest.raises(WorkerError, match="could not load the rules: FileNotFoundError"):
        simulate(str(tmp_path / "gone.rules"), 2, 8, workers=2, loader=fake_load, ruleset=fake_load(race_file))


# --- the worker count ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0, -1, -5, MAX_WORKERS + 1, 10 ** 30, True, 2.5, "2"])
def test_bad_worker_counts_are_refused(race_file, bad):
    with pytest.raises(ValueError, match=f"from 1 to {MAX_WORKERS}"):
        simulate(race_file, 2, 10, workers=bad, loader=fake_load)


def test_worker_count_bounds():
    from interpreter.simulate import check_workers

    assert simulate_module.MAX_WORKERS == MAX_WORKERS
    assert check_workers(1) == 1 and check_workers(MAX_WORKERS) == MAX_WORKERS
    assert 1 <= check_workers(None) <= MAX_WORKERS


def test_more_workers_than_games_is_fine(race_file):
    s = simulate(race_file, 2, 3, workers=MAX_WORKERS, loader=fake_load)
    assert s["completed"] == 3


def cli_run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


@pytest.mark.parametrize("bad", ["0", "-1", "-99", "65", "99999999999999999999999999", "1" * 5000, "abc", "",
                                 "2.5", "1e3"])
def test_cli_bad_workers_is_a_one_line_usage_error(bad):
    r = cli_run("simulate", "games/examples/tictactoe.rules", "--games", "4", "--workers", bad)
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("rulelang: --workers") and f"from 1 to {MAX_WORKERS}" in r.stderr
    assert len(r.stderr) < 300


def test_cli_workers_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    one = cli_run("simulate", "games/examples/tictactoe.rules", "--games", "30", "--json", "--workers", "1")
    two = cli_run("simulate", "games/examples/tictactoe.rules", "--games", "30", "--json", "-w", "3")
    assert one.exit_code == two.exit_code == 0
    import json

    assert without_seconds(json.loads(one.stdout)) == without_seconds(json.loads(two.stdout))

"""Hostile input to ``simulate`` with worker processes, each case in a bounded child process: huge,
zero and negative worker counts are one-line usage errors; a huge game count neither allocates its
tasks up front nor keeps the run going once the caller stops it."""
from __future__ import annotations

import os
import signal
import time

import pytest

from tests.hostile.bounded import run_bounded, run_cli_bounded

TICTACTOE = "games/examples/tictactoe.rules"


@pytest.mark.parametrize("workers", ["0", "-3", "65", "1" + "0" * 40, "9" * 4400, "many"])
def test_cli_worker_counts(workers):
    out = run_cli_bounded(["simulate", TICTACTOE, "--games", "1000000", "--workers", workers], seconds=20)
    assert not out.timed_out and not out.traceback and not out.out_of_memory, out.explain()
    assert out.returncode == 2, out.explain()
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("rulelang: --workers"), out.explain()
    assert len(out.stderr) < 300


def test_huge_game_count_is_not_split_up_front():
    out = run_bounded("""
        import itertools
        from interpreter.runner import _chunks
        first = list(itertools.islice(_chunks(10 ** 15, 2), 3))
        assert first == [(0, 64), (64, 128), (128, 192)], first
        print("ok")
    """, seconds=20)
    assert out.ok and out.stdout.strip() == "ok", out.explain()


def test_stopping_a_huge_run_stops_the_workers():
    """A caller that stops the run (here its progress callback raises, as a Ctrl-C would) gets its
    exception back at once: the queued tasks are cancelled, nothing keeps playing."""
    out = run_bounded("""
        from interpreter.simulate import simulate
        from tests.test_agents_simulate import Ruleset

        class Stop(Exception):
            pass

        def progress(done, total):
            if done:
                raise Stop(done)

        try:
            simulate(Ruleset("race.rules", 10, ()), 2, 10 ** 12, workers=2, progress=progress)
        except Stop as e:
            print("stopped after", e.args[0])
    """, seconds=30)
    assert out.ok and out.stdout.startswith("stopped after"), out.explain()


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc to see the workers")
def test_workers_end_when_the_simulation_is_killed():
    """A killed ``rulelang simulate`` (SIGKILL: no clean-up at all) leaves no worker behind."""
    out = run_bounded("""
        import multiprocessing, os, signal, sys
        from interpreter.simulate import simulate
        from tests.test_agents_simulate import Ruleset

        def progress(done, total):
            if done:
                print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
                os.kill(os.getpid(), signal.SIGKILL)

        simulate(Ruleset("race.rules", 10, ()), 2, 10 ** 12, workers=2, progress=progress)
    """, seconds=15)
    # (a worker left running also holds the output pipes open: the run then ends at its time limit)
    pids = [int(p) for p in out.stdout.split() if p.isdigit()]
    try:
        assert out.returncode == -signal.SIGKILL, out.explain()
        assert len(pids) == 2, out.explain()
        deadline = time.monotonic() + 10
        while any(_running(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _running(p)], "workers still running after their parent was killed"
    finally:
        for p in pids:  # never leave them to the rest of the run
            if _running(p):
                os.kill(p, signal.SIGKILL)

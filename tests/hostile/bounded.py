"""Run one hostile case in a child process with hard limits, so that a case which would hang or eat
memory fails the test instead of the test run.

`run_bounded(code)` runs a Python snippet in a fresh interpreter (the project root on sys.path) under
an address-space limit and a limit on CPU time (`seconds`), and returns an `Outcome`. The CPU limit is
what bounds a runaway case: on a loaded machine (load 10 on 2 cores) a child may get a fifth of a core,
so the wall-clock limit is only a generous back-stop for a child that waits without computing
(`wall`, by default ten times `seconds` plus a minute). The snippet reports what it
wants the test to see by printing; a traceback, a timeout or a memory error is visible in the outcome.

    out = run_bounded('''
        import rulelang
        try:
            rulelang.loads(TEXT)
        except rulelang.RuleError as e:
            print("diagnostics", e.diagnostics[0].code)
    ''', env={"TEXT": text})
    assert out.ok, out.explain()
"""
from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import attrs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SECONDS = 10.0
DEFAULT_MEMORY = 2 * 1024 ** 3  # the bound: every hostile case within 2 GB

_PRELUDE = """\
import json, os, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu} + 1))  # SIGXCPU at the soft limit, SIGKILL one later
sys.path.insert(0, {root!r})
ARGS = json.loads(os.environ.get("BOUNDED_ARGS", "{{}}"))
"""


@attrs.frozen
class Outcome:
    returncode: int | None  # None: killed at the wall-clock back-stop
    stdout: str
    stderr: str
    seconds: float

    @property
    def timed_out(self):
        """Stopped by a limit: its CPU time ran out (SIGXCPU, or SIGKILL past the hard limit) or the
        wall-clock back-stop killed it."""
        return self.returncode is None or self.returncode in (-signal.SIGXCPU, -signal.SIGKILL)

    @property
    def traceback(self):
        return "Traceback (most recent call last)" in self.stderr or "Traceback" in self.stdout

    @property
    def out_of_memory(self):
        return "MemoryError" in self.stderr or "MemoryError" in self.stdout

    @property
    def ok(self):
        """Finished in time, with exit code 0, without a traceback or a memory error."""
        return self.returncode == 0 and not self.traceback and not self.out_of_memory

    def explain(self):
        state = ("killed at the wall-clock back-stop" if self.returncode is None else
                 "out of CPU time" if self.timed_out else f"exit {self.returncode}")
        return (f"{state} after {self.seconds:.1f}s\n--- stdout\n{self.stdout[-2000:]}\n"
                f"--- stderr\n{self.stderr[-3000:]}")


def wall_limit(seconds):
    """The wall-clock back-stop for a child allowed `seconds` of CPU time."""
    return 10 * seconds + 60


def run_bounded(code, args=None, seconds=DEFAULT_SECONDS, memory=DEFAULT_MEMORY, cwd=None, wall=None):
    """Run `code` (a Python snippet; `ARGS` holds `args`, passed as JSON) in a limited child process:
    at most `seconds` of CPU time, `memory` bytes of address space, `wall` seconds of real time."""
    import json

    cpu = max(1, math.ceil(seconds))
    script = _PRELUDE.format(memory=int(memory), root=ROOT, cpu=cpu) + textwrap.dedent(code)
    env = dict(os.environ)
    env["BOUNDED_ARGS"] = json.dumps(args or {})
    env.setdefault("PYTHONHASHSEED", "0")
    start = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=wall if wall is not None else wall_limit(seconds),
                           env=env, cwd=cwd or ROOT, errors="replace")
        return Outcome(p.returncode, p.stdout, p.stderr, time.monotonic() - start)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Outcome(None, out, err, time.monotonic() - start)


def run_cli_bounded(args, seconds=DEFAULT_SECONDS, memory=DEFAULT_MEMORY, cwd=None, stdin=None, wall=None):
    """Run `rulelang ARGS...` (as `python -m rulelang`) in a limited child process."""
    code = ("import sys\nsys.argv = ['rulelang'] + ARGS['argv']\n"
            "from rulelang.__main__ import main\nmain()\n")  # the entry point (rulelang.__main__:main)
    return run_bounded(code, {"argv": [str(a) for a in args]}, seconds, memory, cwd, wall)

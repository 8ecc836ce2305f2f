#!/usr/bin/env python
"""Python bytecodes executed per random game: a speed measure that does not depend on the machine's load.

    python benchmarks/ops.py RULES PLAYERS [GAMES]

    python benchmarks/ops.py --instructions RULES PLAYERS [GAMES]

Plays GAMES seeded random games (seeds 0.., each decision a random legal action from random.Random(seed))
and counts the bytecodes Python runs for them (sys.settrace with opcode events), setup included and the
first game's code generation left out. Timings on a shared machine move by tens of percent; this count
does not move at all, so it shows a change of 1% in the code a game runs. It is not time: a bytecode
that calls a function or builds a list costs more than one that adds two numbers, so confirm a change
with benchmarks/run.py. Runs about 50 times slower than a plain game.

`--instructions` counts the machine instructions instead (valgrind's cachegrind, without its cache
model, and PYTHONHASHSEED=0): the count of a run of GAMES + 1 games less that of a run of one game, per
game, so loading, code generation and the first game are left out. It weighs what each bytecode costs
(a change that removes calls shows), and is the same from run to run within about 0.1%. It still
counts fewer savings than time shows for changes that remove Python calls (a change measured at -3% of
instructions ran 8% faster), so it tells small changes apart rather than how much time they save.
Needs valgrind (Debian: apt install valgrind); a run under it is about 50 times slower.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def bytecodes_per_game(path: str, players: int, games: int) -> int:
    import rulelang

    rs = rulelang.load(path)
    rs.new_game(players, seed=0)  # code is generated at the first game: not counted
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return tracer

    for seed in range(games):
        rng = random.Random(seed)
        sys.settrace(tracer)
        try:
            g = rs.new_game(players, seed=seed)
            while not g.is_over():
                g.apply(rng.choice(g.legal_actions()))
        finally:
            sys.settrace(None)
    return count // games


def play(path: str, players: int, games: int) -> None:
    """The games counted by --instructions: seeds 0 to games - 1, as bytecodes_per_game plays them."""
    import rulelang

    rs = rulelang.load(path)
    for seed in range(games):
        rng = random.Random(seed)
        g = rs.new_game(players, seed=seed)
        while not g.is_over():
            g.apply(rng.choice(g.legal_actions()))


def instructions_of(valgrind_output: str) -> int:
    """The instruction count (`I refs`) in what cachegrind writes to stderr."""
    m = re.search(r"I\s+refs:\s+([\d,]+)", valgrind_output)
    if m is None:
        raise ValueError("valgrind gave no instruction count")
    return int(m.group(1).replace(",", ""))


def instructions_per_game(path: str, players: int, games: int) -> int:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("ops.py: --instructions needs valgrind (Debian: apt install valgrind)")
    # both runs load the same way (no cache of rules or of Python's bytecode read in one and written by the
    # other), so that only the games differ
    env = {**os.environ, "PYTHONHASHSEED": "0", "RULELANG_NO_CACHE": "1", "PYTHONDONTWRITEBYTECODE": "1"}

    def run(n):
        proc = subprocess.run([valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                               sys.executable, os.path.abspath(__file__), "--play", path, str(players), str(n)],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"ops.py: the games stopped: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        return instructions_of(proc.stderr)

    # first a plain run (not counted): it writes what a first start writes (Python's bytecode), so that the
    # two counted runs start alike
    subprocess.run([sys.executable, os.path.abspath(__file__), "--play", path, str(players), "1"],
                   capture_output=True, env=env)
    return (run(games + 1) - run(1)) // games


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rules")
    p.add_argument("players", type=int)
    p.add_argument("games", type=int, nargs="?", default=5)
    p.add_argument("--instructions", action="store_true", help="count machine instructions (needs valgrind)")
    p.add_argument("--play", action="store_true", help=argparse.SUPPRESS)  # (the games --instructions counts)
    a = p.parse_args(argv)
    if a.games < 1:
        p.error("GAMES must be 1 or more")
    if a.play:
        play(a.rules, a.players, a.games)
    elif a.instructions:
        n = instructions_per_game(a.rules, a.players, a.games)
        print(f"{a.rules} {a.players}p: {n:,} instructions per game")
    else:
        print(f"{a.rules} {a.players}p: {bytecodes_per_game(a.rules, a.players, a.games):,} bytecodes per game")


if __name__ == "__main__":
    main()

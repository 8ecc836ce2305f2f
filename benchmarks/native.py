#!/usr/bin/env python
"""The native path (interpreter/native.py, RULELANG_NATIVE=1) against the pure-Python path, paired.

    python benchmarks/native.py [--seconds S] [--pairs N] [--only TEXT] [--json PATH]

For each example game that has an OpenSpiel C++ counterpart (the six of issue 35, tic-tac-toe and connect
four), random playouts are timed in alternating short chunks: the Python path, OpenSpiel, the native path,
OpenSpiel again; each pair gives a ratio ours / OpenSpiel's playouts per second, and the median of the pairs
is reported for both paths, with native / Python. For the rulebook games under games/ (no OpenSpiel
counterpart) only native / Python is measured, the same way. The same loops as benchmarks/run.py
(bench_playouts_ours, bench_playouts_openspiel). The first load of a game compiles it (minutes for the
largest rulebooks); later runs take the module from the cache folder. The figures are in benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.run import (NEW_GAME_PAIRS, _load_openspiel, bench_playouts_ours,  # noqa: E402
                            bench_playouts_openspiel, openspiel_key)

PAIRS = NEW_GAME_PAIRS + (
    ("games/examples/tictactoe.rules", "tic_tac_toe", {}),
    ("games/examples/connect4.rules", "connect_four", {}),
)
RULEBOOKS = (("games/station.rules", 3), ("games/vega.rules", 3), ("games/mars.rules", 2))


def load_both(rel):
    """(the Python ruleset, the native ruleset, its note, seconds the native load took)."""
    import rulelang

    old = os.environ.pop("RULELANG_NATIVE", None)
    try:
        py = rulelang.load(str(ROOT / rel))
        py.new_game(min(py.player_counts), seed=0)
        os.environ["RULELANG_NATIVE"] = "1"
        t = time.perf_counter()
        nat = rulelang.load(str(ROOT / rel))
        native = nat.native
        took = time.perf_counter() - t
    finally:
        os.environ.pop("RULELANG_NATIVE", None)
        if old is not None:
            os.environ["RULELANG_NATIVE"] = old
    return py, nat, (None if native else nat.native_note), took


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def measure_pair(rel, short, params, seconds, pairs):
    py, nat, note, took = load_both(rel)
    ref = _load_openspiel(short, params)
    chunk = seconds / pairs
    r_py, r_nat, r_gain = [], [], []
    for _ in range(pairs):
        a = bench_playouts_ours(py, 2, chunk)["playouts_per_s"]
        b = bench_playouts_openspiel(ref, chunk)["playouts_per_s"]
        c = bench_playouts_ours(nat, 2, chunk)["playouts_per_s"]
        d = bench_playouts_openspiel(ref, chunk)["playouts_per_s"]
        r_py.append(a / b)
        r_nat.append(c / d)
        r_gain.append(c / a)
    return {"rules": rel, "reference": openspiel_key(short, params), "python_ratio": _median(r_py),
            "native_ratio": _median(r_nat), "native_over_python": _median(r_gain), "pairs": pairs,
            "native": note is None, "note": note, "native_load_s": round(took, 2)}


def measure_rulebook(rel, players, seconds, pairs):
    py, nat, note, took = load_both(rel)
    chunk = seconds / pairs
    gains = []
    for _ in range(pairs):
        a = bench_playouts_ours(py, players, chunk)["playouts_per_s"]
        c = bench_playouts_ours(nat, players, chunk)["playouts_per_s"]
        gains.append(c / a)
    return {"rules": rel, "players": players, "native_over_python": _median(gains), "pairs": pairs,
            "native": note is None, "note": note, "native_load_s": round(took, 2)}


def _geo(xs):
    import math
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=4.0, help="time of each game's measurement per path (default 4)")
    p.add_argument("--pairs", type=int, default=5, help="alternating chunks per game (default 5)")
    p.add_argument("--only", help="only the games whose path contains this text")
    p.add_argument("--no-rulebooks", action="store_true", help="leave out Station, Vega and Mars")
    p.add_argument("--json", type=Path, help="write the rows here")
    args = p.parse_args(argv)
    rows = []
    print(f"{'game':42} {'python/OS':>10} {'native/OS':>10} {'native/py':>10}  load")
    for rel, short, params in PAIRS:
        if args.only and args.only not in rel:
            continue
        r = measure_pair(rel, short, params, args.seconds, args.pairs)
        rows.append(r)
        print(f"{rel + ' vs ' + short:42} {r['python_ratio']:10.3f} {r['native_ratio']:10.3f} "
              f"{r['native_over_python']:10.2f}  {r['native_load_s']:.1f}s {r['note'] or ''}", flush=True)
    six = [r for r in rows if r["rules"] in {x[0] for x in NEW_GAME_PAIRS}]
    if six:
        print(f"{'geo mean of the six':42} {_geo([r['python_ratio'] for r in six]):10.3f} "
              f"{_geo([r['native_ratio'] for r in six]):10.3f} {_geo([r['native_over_python'] for r in six]):10.2f}")
    if not args.no_rulebooks:
        for rel, players in RULEBOOKS:
            if args.only and args.only not in rel:
                continue
            r = measure_rulebook(rel, players, args.seconds, args.pairs)
            rows.append(r)
            print(f"{rel + f' ({players}p)':42} {'':10} {'':10} {r['native_over_python']:10.2f}  "
                  f"{r['native_load_s']:.1f}s {r['note'] or ''}", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                         "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Speed benchmarks of the rulelang interpreter (run on demand, not in CI).

    python benchmarks/run.py [--seconds S] [--json PATH] [--compare benchmarks/baseline.json]
                             [--players N] [--only TEXT]

For every ``*.rules`` file under ``games/`` (recursively) it measures:

* parse+check time: ``rulelang.load(path)``, best of several runs;
* random playouts per second: full games from ``new_game`` to the end, every
  decision chosen uniformly at random from ``legal_actions()`` with a seeded
  ``random.Random`` (chance decisions, if any, by their probabilities);
* decisions per second: ``legal_actions()`` + ``apply()`` in those playouts,
  setup (``new_game``) time excluded;
* clones per second: ``game.clone()`` of mid-game states (search needs cheap copies).

In the same run it measures OpenSpiel's pure-Python tic-tac-toe
("python_tic_tac_toe") and its C++ "tic_tac_toe" with the same loops, and prints
the ratio of our tictactoe playouts per second to python_tic_tac_toe's.

Results go to a table on stdout and to JSON (default ``benchmarks/results/latest.json``).
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_JSON = ROOT / "benchmarks" / "results" / "latest.json"
MAX_DECISIONS = 20_000  # a playout longer than this is cut off and counted as truncated
REFERENCE = "openspiel:python_tic_tac_toe"
OUR_TICTACTOE = "games/examples/tictactoe.rules"

# Which direction is "better" for each measured number (for --compare).
HIGHER_IS_BETTER = {
    "playouts_per_s": True,
    "decisions_per_s": True,
    "clones_per_s": True,
    "load_ms": False,
}


# --------------------------------------------------------------------------- timing loops


def _pick_chance(game, rng):
    outcomes = game.chance_outcomes()
    r = rng.random()
    acc = 0.0
    for action, p in outcomes:
        acc += p
        if r < acc:
            return action
    return outcomes[-1][0]


def bench_load(path: Path, seconds: float, repeats: int = 7) -> float:
    """Best-of-N wall time of rulelang.load in milliseconds."""
    import rulelang

    best = float("inf")
    t_end = time.perf_counter() + seconds
    for i in range(repeats):
        t0 = time.perf_counter()
        rulelang.load(str(path))
        dt = time.perf_counter() - t0
        best = min(best, dt)
        if i >= 1 and time.perf_counter() > t_end:
            break
    return best * 1000.0


def best_of(fn, seconds: float, chunks: int = 3) -> dict:
    """Runs fn(seconds / chunks) `chunks` times; keeps the fastest chunk (less noise on a busy machine)."""
    results = [fn(seconds / chunks) for _ in range(chunks)]
    return max(results, key=lambda r: r["playouts_per_s"])


def bench_playouts_ours(rules, players: int, seconds: float, seed: int = 12345) -> dict:
    rng = random.Random(seed)
    games = decisions = truncated = 0
    setup = 0.0
    clock = time.perf_counter
    t_start = clock()
    deadline = t_start + seconds
    while True:
        t0 = clock()
        game = rules.new_game(players, seed=games)
        setup += clock() - t0
        n = 0
        while not game.is_over():
            if n >= MAX_DECISIONS:
                truncated += 1
                break
            if game.current_player == -1:
                game.apply(_pick_chance(game, rng))
            else:
                game.apply(rng.choice(game.legal_actions()))
            n += 1
        decisions += n
        games += 1
        if clock() >= deadline:
            break
    elapsed = clock() - t_start
    return _rates(games, decisions, elapsed, setup, truncated)


def bench_playouts_openspiel(os_game, seconds: float, seed: int = 12345) -> dict:
    rng = random.Random(seed)
    games = decisions = 0
    setup = 0.0
    clock = time.perf_counter
    t_start = clock()
    deadline = t_start + seconds
    while True:
        t0 = clock()
        state = os_game.new_initial_state()
        setup += clock() - t0
        n = 0
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(actions, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            n += 1
        decisions += n
        games += 1
        if clock() >= deadline:
            break
    elapsed = clock() - t_start
    return _rates(games, decisions, elapsed, setup, 0)


def _rates(games, decisions, elapsed, setup, truncated) -> dict:
    play_time = max(elapsed - setup, 1e-9)
    return {
        "games": games,
        "playouts_per_s": games / elapsed,
        "ms_per_game": 1000.0 * elapsed / games,
        "decisions_per_s": decisions / play_time,
        "mean_length": decisions / games,
        "setup_ms": 1000.0 * setup / games,
        "truncated": truncated,
    }


def _mid_game_states_ours(rules, players, mean_length, count=16, seed=99):
    rng = random.Random(seed)
    target = max(1, int(mean_length // 2))
    states = []
    for i in range(count):
        game = rules.new_game(players, seed=i)
        n = 0
        while not game.is_over() and n < target:
            if game.current_player == -1:
                game.apply(_pick_chance(game, rng))
            else:
                game.apply(rng.choice(game.legal_actions()))
            n += 1
        states.append(game)
    return states


def _mid_game_states_openspiel(os_game, mean_length, count=16, seed=99):
    rng = random.Random(seed)
    target = max(1, int(mean_length // 2))
    states = []
    for _ in range(count):
        state = os_game.new_initial_state()
        n = 0
        while not state.is_terminal() and n < target:
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(actions, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            n += 1
        states.append(state)
    return states


def bench_clones(states, seconds: float, chunks: int = 3) -> float:
    """Copies per second of mid-game states (`clone()` on ours and OpenSpiel's), best chunk."""
    return max(_clone_rate(states, seconds / chunks) for _ in range(chunks))


def _clone_rate(states, seconds: float) -> float:
    clock = time.perf_counter
    copies = 0
    t_start = clock()
    deadline = t_start + seconds
    while True:
        for s in states:
            s.clone()
        copies += len(states)
        if clock() >= deadline:
            break
    return copies / (clock() - t_start)


# --------------------------------------------------------------------------- runners


def find_rules_files(only: str | None) -> list[Path]:
    files = sorted((ROOT / "games").rglob("*.rules"))
    if only:
        files = [f for f in files if only in str(f.relative_to(ROOT))]
    return files


def measure_rules_file(path: Path, seconds: float, players_override: int | None) -> dict:
    import rulelang

    rel = str(path.relative_to(ROOT))
    rules = rulelang.load(str(path))  # raises on a broken file: reported by the caller
    counts = sorted(rules.player_counts)
    if players_override is not None and players_override in counts:
        players = players_override
    else:
        players = counts[0]
    row = {"key": rel, "kind": "rulelang", "name": rules.name, "players": players}
    row["load_ms"] = bench_load(path, seconds)
    row.update(best_of(lambda s: bench_playouts_ours(rules, players, s), seconds))
    states = _mid_game_states_ours(rules, players, row["mean_length"])
    row["clones_per_s"] = bench_clones(states, seconds / 2)
    return row


def measure_openspiel(seconds: float) -> tuple[list[dict], list[dict]]:
    rows, failed = [], []
    try:
        import pyspiel
        from open_spiel.python.games import tic_tac_toe  # noqa: F401  registers python_tic_tac_toe
    except Exception as e:  # pragma: no cover - depends on the machine
        failed.append({"key": "openspiel", "error": f"OpenSpiel not available: {e}"})
        return rows, failed
    for short in ("python_tic_tac_toe", "tic_tac_toe"):
        try:
            game = pyspiel.load_game(short)
            row = {"key": f"openspiel:{short}", "kind": "openspiel", "name": short, "players": 2, "load_ms": None}
            row.update(best_of(lambda s: bench_playouts_openspiel(game, s), seconds))
            states = _mid_game_states_openspiel(game, row["mean_length"])
            row["clones_per_s"] = bench_clones(states, seconds / 2)
            rows.append(row)
        except Exception as e:
            failed.append({"key": f"openspiel:{short}", "error": f"{type(e).__name__}: {e}"})
    return rows, failed


def paired_ratio(seconds: float, pairs: int = 5) -> dict | None:
    """Ours / python_tic_tac_toe playouts per second, measured in alternating short chunks.

    On a shared machine the speed drifts between measurements; alternating the two
    loops and taking the median of the per-pair ratios cancels most of that drift.
    """
    path = ROOT / OUR_TICTACTOE
    if not path.exists():
        return None
    try:
        import pyspiel
        import rulelang
        from open_spiel.python.games import tic_tac_toe  # noqa: F401

        rules = rulelang.load(str(path))
        ref = pyspiel.load_game("python_tic_tac_toe")
    except Exception:
        return None
    chunk = seconds / pairs
    ratios = []
    for _ in range(pairs):
        ours = bench_playouts_ours(rules, 2, chunk)["playouts_per_s"]
        theirs = bench_playouts_openspiel(ref, chunk)["playouts_per_s"]
        ratios.append(ours / theirs)
    ratios.sort()
    return {"median": ratios[len(ratios) // 2], "min": ratios[0], "max": ratios[-1], "pairs": pairs}


def machine_info() -> dict:
    info = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        from importlib.metadata import version

        info["open_spiel"] = version("open_spiel")
    except Exception:
        pass
    return info


# --------------------------------------------------------------------------- output


def _fmt_rate(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:,.1f}"


def _fmt_ms(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 1 else f"{x:,.1f}"


def compare_rows(rows: list[dict], baseline: dict) -> dict[str, dict]:
    """Per row and per number: how many times better than the baseline (>1 = faster now)."""
    base_rows = {r["key"]: r for r in baseline.get("rows", [])}
    out = {}
    for row in rows:
        b = base_rows.get(row["key"])
        if b is None:
            continue
        ratios = {}
        for field, higher in HIGHER_IS_BETTER.items():
            now, then = row.get(field), b.get(field)
            if now and then:
                ratios[field] = (now / then) if higher else (then / now)
        out[row["key"]] = ratios
    return out


def print_report(result: dict, comparison: dict | None) -> None:
    rows = result["rows"]
    headers = ["game", "players", "parse+check ms", "playouts/s", "ms/game", "decisions/s", "mean length", "clones/s"]
    if comparison is not None:
        headers += ["vs baseline (playouts, decisions, clones, load)"]
    table = []
    for r in rows:
        label = r["key"] if r["kind"] == "openspiel" else f'{r["name"]} ({r["key"]})'
        cells = [
            label,
            str(r["players"]),
            _fmt_ms(r.get("load_ms")),
            _fmt_rate(r["playouts_per_s"]),
            _fmt_ms(r["ms_per_game"]),
            _fmt_rate(r["decisions_per_s"]),
            f'{r["mean_length"]:.1f}' + (f' ({r["truncated"]} cut)' if r.get("truncated") else ""),
            _fmt_rate(r.get("clones_per_s")),
        ]
        if comparison is not None:
            c = comparison.get(r["key"])
            if c is None:
                cells.append("not in baseline")
            else:
                cells.append(
                    "  ".join(
                        f"{c[f]:.2f}x" if f in c else "-"
                        for f in ("playouts_per_s", "decisions_per_s", "clones_per_s", "load_ms")
                    )
                )
        table.append(cells)

    try:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=f"rulelang benchmarks ({result['seconds']} s per measure)")
        for i, h in enumerate(headers):
            t.add_column(h, justify="left" if i == 0 else "right")
        for cells in table:
            t.add_row(*cells)
        console = Console() if sys.stdout.isatty() else Console(width=200)
        console.print(t)
    except ImportError:
        widths = [max(len(h), *(len(c[i]) for c in table)) if table else len(h) for i, h in enumerate(headers)]
        print(" | ".join(h.ljust(w) for h, w in zip(headers, widths)))
        print("-+-".join("-" * w for w in widths))
        for cells in table:
            print(" | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))))

    for f in result["failed"]:
        print(f"SKIPPED {f['key']}: {f['error']}")
    ratio = result.get("ratio_ours_vs_python_tic_tac_toe")
    if ratio is not None:
        verdict = "meets" if ratio >= 2.0 else "BELOW"
        paired = result.get("ratio_paired")
        spread = f", {paired['pairs']} alternating pairs, range {paired['min']:.2f}-{paired['max']:.2f}" if paired else ""
        print(
            f"tictactoe random playouts: ours / OpenSpiel python_tic_tac_toe = {ratio:.2f}x "
            f"({verdict} the 2x target{spread})"
        )
    else:
        print("tictactoe ratio not available (need both games/examples/tictactoe.rules and OpenSpiel)")
    if comparison is not None:
        print("vs baseline: ratio > 1 means faster than the baseline (for load: baseline ms / current ms)")


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=1.0, help="time budget of each measurement (default 1.0)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"where to write results (default {DEFAULT_JSON.relative_to(ROOT)})")
    p.add_argument("--compare", type=Path, help="a results JSON (e.g. benchmarks/baseline.json) to compare against")
    p.add_argument("--players", type=int, help="player count to use where the game allows it (default: the smallest)")
    p.add_argument("--only", help="only .rules files whose path contains this text")
    p.add_argument("--no-openspiel", action="store_true", help="skip the OpenSpiel reference rows")
    args = p.parse_args(argv)

    rows, failed = [], []
    try:
        import rulelang  # noqa: F401
    except Exception as e:
        print(f"cannot import rulelang: {e}", file=sys.stderr)
        return 2

    for path in find_rules_files(args.only):
        rel = str(path.relative_to(ROOT))
        try:
            rows.append(measure_rules_file(path, args.seconds, args.players))
        except Exception as e:
            msg = str(e).splitlines()[0] if str(e) else ""
            failed.append({"key": rel, "error": f"{type(e).__name__}: {msg}"})
            if os.environ.get("BENCH_DEBUG"):
                traceback.print_exc()

    if not args.no_openspiel:
        os_rows, os_failed = measure_openspiel(args.seconds)
        rows += os_rows
        failed += os_failed

    by_key = {r["key"]: r for r in rows}
    ratio = paired = None
    if OUR_TICTACTOE in by_key and REFERENCE in by_key:
        paired = paired_ratio(2 * args.seconds)
        ratio = paired["median"] if paired else by_key[OUR_TICTACTOE]["playouts_per_s"] / by_key[REFERENCE]["playouts_per_s"]

    result = {
        "when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": args.seconds,
        "machine": machine_info(),
        "rows": rows,
        "failed": failed,
        "ratio_ours_vs_python_tic_tac_toe": ratio,
        "ratio_paired": paired,
    }

    comparison = None
    if args.compare:
        baseline = json.loads(args.compare.read_text())
        comparison = compare_rows(rows, baseline)
        result["compared_with"] = str(args.compare)
        result["ratio_to_baseline"] = comparison

    print_report(result, comparison)

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

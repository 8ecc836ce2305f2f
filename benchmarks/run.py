#!/usr/bin/env python
"""Speed benchmarks of the rulelang interpreter (run on demand, not in CI).

    python benchmarks/run.py [--seconds S] [--json PATH] [--compare benchmarks/baseline.json]
                             [--players N[,N...]] [--only TEXT] [--no-openspiel]
                             [--check-runs N] [--workers-games N]

For every ``*.rules`` file under ``games/`` (recursively), at every player count it allows (or
those of ``--players``), it measures:

* parse+check time: ``rulelang.load(path)``, best of several runs, in this process;
* random playouts per second: full games from ``new_game`` to the end, every
  decision chosen uniformly at random from ``legal_actions()`` with a seeded
  ``random.Random`` (chance decisions, if any, by their probabilities);
* decisions per second: ``legal_actions()`` + ``apply()`` in those playouts,
  setup (``new_game``) time excluded;
* clones per second: ``game.clone()`` of mid-game states (search needs cheap copies).

In the same run it measures OpenSpiel's pure-Python tic-tac-toe ("python_tic_tac_toe"),
its C++ "tic_tac_toe" and C++ "connect_four" with the same loops, and prints paired
ratios (ours / theirs, alternating short runs): tic-tac-toe against python_tic_tac_toe,
connect four against the C++ connect_four.  Then ``rulelang check`` of the seeded games
in fresh processes (cold: ``RULELANG_NO_CACHE=1``; warm: after a first run), and the
speed-up of ``simulate`` with 2 worker processes over 1.  Every target of the speed
issue gets a line saying ``meets`` or ``BELOW``.

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
OUR_CONNECT4 = "games/examples/connect4.rules"
SEEDED_GAMES = ("games/station.rules", "games/vega.rules")  # the rulebooks: `rulelang check` timed for these
WORKERS_RULES = "games/station.rules"  # `simulate --workers` is measured on this game ...
WORKERS_PLAYERS = 3                    # ... at this player count

# The targets of the speed issue (issue 8).  Each prints one line, `meets` or `BELOW`.
TARGET_TICTACTOE_RATIO = 3.0      # ours / OpenSpiel python_tic_tac_toe, random playouts, at least
TARGET_CONNECT4_RATIO = 0.1       # ours / OpenSpiel C++ connect_four, random playouts, at least
TARGET_STATION_MS = 20.0          # a random 3-player Station game, setup included, at most
TARGET_CHECK_COLD_MS = 250.0      # `rulelang check` of a seeded game in a fresh process, cache off, at most
TARGET_CHECK_WARM_MS = 50.0       # the same, run a second time (cache warm), at most
TARGET_WORKERS_SPEEDUP = 1.8      # simulate with 2 workers / with 1, on 2 free cores ("approaching 2x"), at least

# The newer example games (issue 35), each beside the OpenSpiel C++ game it follows: the rule file, and
# OpenSpiel's name and parameters for the same board as the file's base rules.  Each gets an OpenSpiel
# row in the table and a paired ratio (ours / OpenSpiel's playouts per second), whose goal is below.
NEW_GAME_PAIRS = (
    ("games/examples/oware.rules", "oware", {}),
    ("games/examples/checkers.rules", "checkers", {}),
    ("games/examples/hex.rules", "hex", {"board_size": 7}),
    ("games/examples/dots_and_boxes.rules", "dots_and_boxes", {}),
    ("games/examples/leduc_poker.rules", "leduc_poker", {}),
    ("games/examples/breakthrough.rules", "breakthrough", {}),
)
TARGET_NEW_GAMES_RATIO = 0.25     # ours / the OpenSpiel C++ game of the same name, random playouts, at least

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


def parse_players(text: str | None) -> list[int] | None:
    """``--players``: one count or a comma-separated list ("2,3,4"); None means every count."""
    if text is None:
        return None
    counts = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise argparse.ArgumentTypeError(f"--players takes player counts such as 3 or 2,3,4, not {text!r}")
        counts.append(int(part))
    return sorted(set(counts))


def counts_to_measure(allowed, requested: list[int] | None) -> list[int]:
    """The player counts to measure a game at: every count it allows, or those of ``requested``
    that it allows (its smallest when it allows none of them)."""
    allowed = sorted(allowed)
    if requested is None:
        return allowed
    chosen = [n for n in requested if n in allowed]
    return chosen or allowed[:1]


def row_key(rel: str, players: int, allowed) -> str:
    """A row's key: the path for a game with one player count (as in older results files),
    ``path@Np`` for a game measured at one of several counts."""
    return rel if len(set(allowed)) == 1 else f"{rel}@{players}p"


def measure_rules_file(path: Path, seconds: float, requested: list[int] | None) -> list[dict]:
    import rulelang

    rel = str(path.relative_to(ROOT))
    rules = rulelang.load(str(path))  # raises on a broken file: reported by the caller
    allowed = sorted(rules.player_counts)
    load_ms = bench_load(path, seconds)
    rows = []
    for players in counts_to_measure(allowed, requested):
        row = {"key": row_key(rel, players, allowed), "file": rel, "kind": "rulelang", "name": rules.name,
               "players": players, "load_ms": load_ms}
        row.update(best_of(lambda s: bench_playouts_ours(rules, players, s), seconds))
        states = _mid_game_states_ours(rules, players, row["mean_length"])
        row["clones_per_s"] = bench_clones(states, seconds / 2)
        rows.append(row)
    return rows


OPENSPIEL_GAMES = ("python_tic_tac_toe", "tic_tac_toe", "connect_four")


def openspiel_key(short: str, params: dict | None = None) -> str:
    """A row's key for an OpenSpiel game: ``openspiel:NAME``, with its parameters when it has some
    (``openspiel:hex(board_size=7)``)."""
    if not params:
        return f"openspiel:{short}"
    return f"openspiel:{short}(" + ",".join(f"{k}={v}" for k, v in sorted(params.items())) + ")"


def _load_openspiel(short: str, params: dict | None = None):
    import pyspiel

    if short == "python_tic_tac_toe":
        from open_spiel.python.games import tic_tac_toe  # noqa: F401  registers python_tic_tac_toe
    return pyspiel.load_game(short, params or {})


def measure_openspiel(seconds: float, extra=()) -> tuple[list[dict], list[dict]]:
    """The OpenSpiel reference rows: OPENSPIEL_GAMES, then each ``(name, params)`` of ``extra``."""
    rows, failed = [], []
    try:
        import pyspiel  # noqa: F401
    except Exception as e:  # pragma: no cover - depends on the machine
        failed.append({"key": "openspiel", "error": f"OpenSpiel not available: {e}"})
        return rows, failed
    for short, params in [(g, {}) for g in OPENSPIEL_GAMES] + list(extra):
        key = openspiel_key(short, params)
        try:
            game = _load_openspiel(short, params)
            row = {"key": key, "kind": "openspiel", "name": short, "players": game.num_players(), "load_ms": None}
            row.update(best_of(lambda s: bench_playouts_openspiel(game, s), seconds))
            states = _mid_game_states_openspiel(game, row["mean_length"])
            row["clones_per_s"] = bench_clones(states, seconds / 2)
            rows.append(row)
        except Exception as e:
            failed.append({"key": key, "error": f"{type(e).__name__}: {e}"})
    return rows, failed


def paired_ratio(seconds: float, pairs: int = 5, ours: str = OUR_TICTACTOE,
                 reference: str = "python_tic_tac_toe", params: dict | None = None) -> dict | None:
    """Ours / OpenSpiel's ``reference`` playouts per second, measured in alternating short chunks
    (2-player games, the same loops as the table).

    On a shared machine the speed drifts between measurements; alternating the two
    loops and taking the median of the per-pair ratios cancels most of that drift.
    """
    path = ROOT / ours
    if not path.exists():
        return None
    try:
        import rulelang

        rules = rulelang.load(str(path))
        ref = _load_openspiel(reference, params)
    except Exception:
        return None
    chunk = seconds / pairs
    ratios = []
    for _ in range(pairs):
        mine = bench_playouts_ours(rules, 2, chunk)["playouts_per_s"]
        theirs = bench_playouts_openspiel(ref, chunk)["playouts_per_s"]
        ratios.append(mine / theirs)
    ratios.sort()
    return {"median": ratios[len(ratios) // 2], "min": ratios[0], "max": ratios[-1], "pairs": pairs,
            "ours": ours, "reference": openspiel_key(reference, params)}


# --- `rulelang check` in fresh processes ----------------------------------------------------------


def rulelang_command() -> list[str]:
    """How to run the `rulelang` command: the console script next to this Python when it is
    installed there (what a user types), else ``python -m rulelang``."""
    script = Path(sys.executable).parent / "rulelang"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "rulelang"]


def _timed_run(argv: list[str], env: dict) -> tuple[float, str | None]:
    """Wall milliseconds of one fresh process, and its error (None when it exited with 0)."""
    import subprocess

    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)
    ms = 1000.0 * (time.perf_counter() - t0)
    if proc.returncode != 0:
        out = (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}").splitlines()
        return ms, f"exit status {proc.returncode}: {out[0] if out else ''}"
    return ms, None


def bench_check(rel: str, runs: int) -> dict:
    """``rulelang check REL`` in fresh processes, best of ``runs``: cold (``RULELANG_NO_CACHE=1``,
    every run) and warm (one untimed run to fill any cache, then ``runs`` timed runs).

    Both use Python's own bytecode cache (``__pycache__``) as a user's machine does: the processes run
    without ``PYTHONDONTWRITEBYTECODE`` (some sandboxes set it, and then every start compiles rulelang's
    own sources again, ~0.1-0.2 s), and one untimed run writes the bytecode first."""
    argv = rulelang_command() + ["check", rel]
    warm_env = {k: v for k, v in os.environ.items() if k not in ("RULELANG_NO_CACHE", "PYTHONDONTWRITEBYTECODE")}
    cold_env = {**warm_env, "RULELANG_NO_CACHE": "1"}
    row = {"key": rel, "command": " ".join(["rulelang", "check", rel]), "runs": runs,
           "cold_ms": None, "warm_ms": None, "error": None}
    try:
        _timed_run(argv, cold_env)  # writes Python's bytecode of rulelang, if it is not there yet
        cold = []
        for _ in range(runs):
            ms, err = _timed_run(argv, cold_env)
            if err:
                row["error"] = err
                return row
            cold.append(ms)
        _timed_run(argv, warm_env)  # fills the cache, if there is one
        warm = []
        for _ in range(runs):
            ms, err = _timed_run(argv, warm_env)
            if err:
                row["error"] = err
                return row
            warm.append(ms)
    except Exception as e:  # a hang (timeout) or a missing command
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return row
    row.update(cold_ms=min(cold), warm_ms=min(warm))
    return row


def bench_python_startup(runs: int) -> float | None:
    """A bare ``python -c pass`` in a fresh process, best of ``runs`` (the floor of every check time)."""
    try:
        return min(_timed_run([sys.executable, "-c", "pass"], dict(os.environ))[0] for _ in range(runs))
    except Exception:
        return None


# --- simulate --workers -----------------------------------------------------------------------------


def _cpu_seconds() -> float:
    """CPU seconds used so far by this process and its ended children (the pool's workers)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return float("nan")
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def bench_workers(rel: str, players: int, games: int, workers: int = 2, runs: int = 2, seed: int = 0) -> dict:
    """``interpreter.simulate.simulate`` of ``games`` games with 1 worker and with ``workers``, as
    the command line calls it (the rules loaded once in this process and passed as ``ruleset``),
    alternating ``runs`` times; best wall time of each, and the least CPU time of each (this
    process and its workers: the cost of running in parallel, which a busy machine does not
    hide).  ``identical``: the two summaries agree."""
    import rulelang
    from interpreter.simulate import simulate

    path = str(ROOT / rel)
    rules = rulelang.load(path)
    if players not in rules.player_counts:
        players = min(rules.player_counts)
    best = {1: float("inf"), workers: float("inf")}
    cpu = {1: float("inf"), workers: float("inf")}
    summaries = {}
    for _ in range(runs):
        for w in (1, workers):
            c0, t0 = _cpu_seconds(), time.perf_counter()
            s = simulate(path, players, games, seed=seed, workers=w, ruleset=rules)
            best[w] = min(best[w], time.perf_counter() - t0)
            cpu[w] = min(cpu[w], _cpu_seconds() - c0)
            s.pop("seconds", None)
            summaries[w] = s
    return {
        "key": rel, "players": players, "games": games, "workers": workers, "runs": runs,
        "seconds_1": best[1], f"seconds_{workers}": best[workers], "seconds_n": best[workers],
        "cpu_seconds_1": cpu[1], "cpu_seconds_n": cpu[workers],
        "speedup": best[1] / best[workers],
        "identical": summaries[1] == summaries[workers],
        "errors": summaries[1].get("errors"),
        "load_average_after": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }


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
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        pass
    try:
        from importlib.metadata import version

        info["open_spiel"] = version("open_spiel")
    except Exception:
        pass
    return info


# --------------------------------------------------------------------------- targets


def targets(result: dict) -> list[dict]:
    """One entry per target of the speed issue that this run measured:
    ``{"name", "value", "unit", "target", "better" ("higher" | "lower"), "meets"}``."""
    out = []

    def add(name, value, unit, target, better):
        if value is None:
            return
        meets = value >= target if better == "higher" else value <= target
        out.append({"name": name, "value": value, "unit": unit, "target": target, "better": better,
                    "meets": meets})

    add("tictactoe playouts / OpenSpiel python_tic_tac_toe", result.get("ratio_ours_vs_python_tic_tac_toe"),
        "x", TARGET_TICTACTOE_RATIO, "higher")
    add("connect4 playouts / OpenSpiel C++ connect_four", result.get("ratio_connect4_vs_cpp_connect_four"),
        "x", TARGET_CONNECT4_RATIO, "higher")
    for ours, pair in (result.get("new_game_ratios") or {}).items():
        add(f"{ours} playouts / OpenSpiel C++ {pair['reference'].removeprefix('openspiel:')}", pair["median"], "x",
            TARGET_NEW_GAMES_RATIO, "higher")
    for row in result.get("rows", []):
        if row.get("file", row["key"]) == WORKERS_RULES and row["players"] == 3:
            add("Station, 3 players, ms per random game", row["ms_per_game"], "ms", TARGET_STATION_MS, "lower")
    for c in result.get("check_times", []):
        add(f"rulelang check {c['key']}, fresh process, cold", c.get("cold_ms"), "ms", TARGET_CHECK_COLD_MS, "lower")
        add(f"rulelang check {c['key']}, fresh process, warm", c.get("warm_ms"), "ms", TARGET_CHECK_WARM_MS, "lower")
    w = result.get("workers")
    if w:
        add(f"simulate {w['key']} ({w['games']} games): {w['workers']} workers / 1", w.get("speedup"), "x",
            TARGET_WORKERS_SPEEDUP, "higher")
    return out


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
    """Per row and per number: how many times better than the baseline (>1 = faster now).

    Rows are matched by key, else by file and player count (so ``games/station.rules@2p`` matches
    an older file's ``games/station.rules`` row measured at 2 players)."""
    base_rows = {r["key"]: r for r in baseline.get("rows", [])}
    by_file = {(r.get("file", r["key"]), r.get("players")): r for r in baseline.get("rows", [])}
    out = {}
    for row in rows:
        b = base_rows.get(row["key"]) or by_file.get((row.get("file", row["key"]), row.get("players")))
        if b is None or b.get("players") != row.get("players"):
            continue
        ratios = {}
        for field, higher in HIGHER_IS_BETTER.items():
            now, then = row.get(field), b.get(field)
            if now and then:
                ratios[field] = (now / then) if higher else (then / now)
        out[row["key"]] = ratios
    return out


def compare_extras(result: dict, baseline: dict) -> dict:
    """Check times and the workers speed-up against the baseline's, when it has them
    (check: baseline ms / current ms; workers, when both ran the same games: current speed-up /
    baseline speed-up)."""
    out = {}
    base_checks = {c["key"]: c for c in baseline.get("check_times", [])}
    for c in result.get("check_times", []):
        b = base_checks.get(c["key"])
        if not b:
            continue
        for field in ("cold_ms", "warm_ms"):
            if c.get(field) and b.get(field):
                out[f"check {c['key']} {field[:4]}"] = b[field] / c[field]
    w, bw = result.get("workers"), baseline.get("workers")
    same = w and bw and all(w.get(k) == bw.get(k) for k in ("key", "players", "games", "workers"))
    if same and w.get("speedup") and bw.get("speedup"):
        out["workers speed-up"] = w["speedup"] / bw["speedup"]
    return out


def print_report(result: dict, comparison: dict | None) -> None:
    rows = result["rows"]
    headers = ["game", "players", "parse+check ms", "playouts/s", "ms/game", "decisions/s", "mean length", "clones/s"]
    if comparison is not None:
        headers += ["vs baseline (playouts, decisions, clones, load)"]
    table = []
    for r in rows:
        label = r["key"] if r["kind"] == "openspiel" else f'{r["name"]} ({r.get("file", r["key"])})'
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
    _print_table(f"rulelang benchmarks ({result['seconds']} s per measure)", headers, table)

    for f in result["failed"]:
        print(f"SKIPPED {f['key']}: {f['error']}")

    checks = result.get("check_times") or []
    if checks:
        startup = result.get("python_startup_ms")
        title = f"rulelang check in fresh processes (best of {checks[0]['runs']}"
        title += f"; bare `python -c pass`: {startup:.0f} ms)" if startup else ")"
        _print_table(title, ["command", "cold ms (RULELANG_NO_CACHE=1)", "warm ms (second run)"],
                     [[c["command"], _fmt_ms(c.get("cold_ms")), _fmt_ms(c.get("warm_ms"))] for c in checks])
        for c in checks:
            if c.get("error"):
                print(f"check FAILED {c['key']}: {c['error']}")
    w = result.get("workers")
    if w:
        print(f"simulate {w['key']} --players {w['players']} --games {w['games']}: "
              f"1 worker {w['seconds_1']:.2f} s, {w['workers']} workers {w['seconds_n']:.2f} s "
              f"(best of {w['runs']}, cpu_count {result['machine'].get('cpu_count')}); CPU seconds "
              f"{w.get('cpu_seconds_1', float('nan')):.2f} and {w.get('cpu_seconds_n', float('nan')):.2f}; "
              f"summaries {'identical' if w['identical'] else 'DIFFER'}")
    elif result.get("workers_error"):
        print(f"workers speed-up not measured: {result['workers_error']}")

    measured = {r["key"] for r in rows}
    for ours, reference, key in ((OUR_TICTACTOE, "python_tic_tac_toe", "ratio_ours_vs_python_tic_tac_toe"),
                                 (OUR_CONNECT4, "connect_four", "ratio_connect4_vs_cpp_connect_four")):
        if ours in measured and result.get(key) is None:
            print(f"{ours} / OpenSpiel {reference}: ratio not measured (needs OpenSpiel)")
    for t in result.get("targets", []):
        verdict = "meets" if t["meets"] else "BELOW"
        op = ">=" if t["better"] == "higher" else "<="
        if t["unit"] == "x":
            value = f"{t['value']:.2f}x" if t["value"] >= 0.5 or t["value"] <= 0 else \
                f"{t['value']:.3f}x (1/{1 / t['value']:.0f})"
        else:
            value = f"{t['value']:.1f} ms"
        target = f"{t['target']:g}x" if t["unit"] == "x" else f"{t['target']:g} ms"
        extra = ""
        for key, pkey in (("tictactoe", "ratio_paired"), ("connect4", "ratio_connect4_paired")):
            p = result.get(pkey)
            if t["name"].startswith(key) and p:
                extra = f", {p['pairs']} alternating pairs, range {p['min']:.2f}-{p['max']:.2f}"
        for ours, p in (result.get("new_game_ratios") or {}).items():
            if t["name"].startswith(ours + " "):
                extra = f", {p['pairs']} alternating pairs, range {p['min']:.3f}-{p['max']:.3f}"
        print(f"target: {t['name']} = {value} ({verdict} the target {op} {target}{extra})")
    if comparison is not None:
        extras = result.get("ratio_to_baseline_extra") or {}
        for name, r in extras.items():
            print(f"vs baseline: {name}: {r:.2f}x")
        print("vs baseline: ratio > 1 means faster than the baseline (for load and check: baseline ms / current ms)")


def _print_table(title: str, headers: list[str], table: list[list[str]]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title)
        for i, h in enumerate(headers):
            t.add_column(h, justify="left" if i == 0 else "right")
        for cells in table:
            t.add_row(*cells)
        console = Console() if sys.stdout.isatty() else Console(width=200)
        console.print(t)
    except ImportError:
        print(title)
        widths = [max(len(h), *(len(c[i]) for c in table)) if table else len(h) for i, h in enumerate(headers)]
        print(" | ".join(h.ljust(w) for h, w in zip(headers, widths)))
        print("-+-".join("-" * w for w in widths))
        for cells in table:
            print(" | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))))


# --------------------------------------------------------------------------- main


def _positive_or_zero(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, not {text!r}")
    return int(text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=1.0, help="time budget of each measurement (default 1.0)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"where to write results (default {DEFAULT_JSON.relative_to(ROOT)})")
    p.add_argument("--compare", type=Path, help="a results JSON (e.g. benchmarks/baseline.json) to compare against")
    p.add_argument("--players", type=parse_players, metavar="N[,N...]",
                   help="player counts to measure where the game allows them (default: every count it allows)")
    p.add_argument("--only", help="only .rules files whose path contains this text (also filters the paired "
                                  "ratios, the check times and the workers measurement)")
    p.add_argument("--no-openspiel", action="store_true", help="skip the OpenSpiel reference rows and ratios")
    p.add_argument("--check-runs", type=_positive_or_zero, default=5, metavar="N",
                   help="fresh `rulelang check` processes per seeded game, cold and warm, best kept (default 5; 0 skips)")
    p.add_argument("--workers-games", type=_positive_or_zero, default=60, metavar="N",
                   help=f"games of {WORKERS_RULES} ({WORKERS_PLAYERS} players) simulated with 1 and with 2 workers "
                        "(default 60; 0 skips)")
    args = p.parse_args(argv)
    if not args.seconds > 0:
        p.error("--seconds must be a positive number")

    baseline = None
    if args.compare:
        try:
            baseline = json.loads(args.compare.read_text())
        except (OSError, ValueError) as e:
            print(f"cannot read {args.compare}: {e}", file=sys.stderr)
            return 2

    rows, failed = [], []
    try:
        import rulelang  # noqa: F401
    except Exception as e:
        print(f"cannot import rulelang: {e}", file=sys.stderr)
        return 2

    def wanted(rel: str) -> bool:
        return not args.only or args.only in rel

    for path in find_rules_files(args.only):
        rel = str(path.relative_to(ROOT))
        try:
            rows.extend(measure_rules_file(path, args.seconds, args.players))
        except Exception as e:
            msg = str(e).splitlines()[0] if str(e) else ""
            failed.append({"key": rel, "error": f"{type(e).__name__}: {msg}"})
            if os.environ.get("BENCH_DEBUG"):
                traceback.print_exc()

    new_pairs = [(rel, short, params) for rel, short, params in NEW_GAME_PAIRS
                 if wanted(rel) and (ROOT / rel).exists()]
    if not args.no_openspiel:
        os_rows, os_failed = measure_openspiel(args.seconds, [(short, params) for _, short, params in new_pairs])
        rows += os_rows
        failed += os_failed

    by_key = {r["key"]: r for r in rows}
    ratio = paired = c4_ratio = c4_paired = None
    if OUR_TICTACTOE in by_key and REFERENCE in by_key:
        paired = paired_ratio(2 * args.seconds)
        ratio = paired["median"] if paired else by_key[OUR_TICTACTOE]["playouts_per_s"] / by_key[REFERENCE]["playouts_per_s"]
    if OUR_CONNECT4 in by_key and "openspiel:connect_four" in by_key:
        c4_paired = paired_ratio(2 * args.seconds, ours=OUR_CONNECT4, reference="connect_four")
        c4_ratio = (c4_paired["median"] if c4_paired else
                    by_key[OUR_CONNECT4]["playouts_per_s"] / by_key["openspiel:connect_four"]["playouts_per_s"])

    new_game_ratios = {}
    for rel, short, params in new_pairs:
        if rel in by_key and openspiel_key(short, params) in by_key:
            pair = paired_ratio(2 * args.seconds, ours=rel, reference=short, params=params)
            if pair:
                new_game_ratios[rel] = pair

    result = {
        "when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": args.seconds,
        "machine": machine_info(),
        "rows": rows,
        "failed": failed,
        "ratio_ours_vs_python_tic_tac_toe": ratio,
        "ratio_paired": paired,
        "ratio_connect4_vs_cpp_connect_four": c4_ratio,
        "ratio_connect4_paired": c4_paired,
        "new_game_ratios": new_game_ratios,
    }

    if args.check_runs:
        checks = [bench_check(rel, args.check_runs) for rel in SEEDED_GAMES if wanted(rel) and (ROOT / rel).exists()]
        if checks:
            result["check_times"] = checks
            result["python_startup_ms"] = bench_python_startup(args.check_runs)
    if args.workers_games and wanted(WORKERS_RULES) and (ROOT / WORKERS_RULES).exists():
        try:
            result["workers"] = bench_workers(WORKERS_RULES, WORKERS_PLAYERS, args.workers_games)
        except Exception as e:
            result["workers_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if os.environ.get("BENCH_DEBUG"):
                traceback.print_exc()
    result["targets"] = targets(result)

    comparison = None
    if args.compare:
        comparison = compare_rows(rows, baseline)
        result["compared_with"] = str(args.compare)
        result["ratio_to_baseline"] = comparison
        result["ratio_to_baseline_extra"] = compare_extras(result, baseline)

    print_report(result, comparison)

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

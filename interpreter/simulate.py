"""The simulator: many games between random agents, summarised.

``simulate(rules, players, games, seed=0, workers=1, ...)`` plays ``games`` games of a rule file
(or an already loaded ``Ruleset``) with one ``RandomAgent`` per seat and returns a summary dict.

Determinism: game ``i`` is played with the game seed ``game_seed(seed, i) = seed * 1_000_003 + i``
and the agent of seat ``s`` is seeded with ``agent_seed(game seed, s)`` (see ``interpreter.agents``),
so ``rulelang play --seed <game seed>`` replays that very game, and the summary is the same for any
number of workers: results are gathered by game index before anything is added up.

With ``workers > 1`` the games run in a ``ProcessPoolExecutor``.  On Linux (``fork``) the rules
are loaded and compiled once, in this process, and the pool is forked after: the workers inherit
the ``Ruleset`` and receive only ranges of game indexes (and the seed, player count and limits),
never the rules.  Elsewhere (``spawn``) each worker process loads the rule file once, by path and
variants, in its initializer.  A worker ends by itself if this process dies.  Games go to the workers in chunks
of consecutive indexes (small enough to keep the workers evenly busy to the end, large enough that
the cost of a task is small next to its games), a bounded number at a time.  ``progress(0,
games)`` is called once the workers are started, so a caller may start a progress display (and its
thread) only then.

``play_game(game, agents, ...)`` is the decision loop shared with the command line.
"""
from __future__ import annotations

import concurrent.futures
import gc
import math
import multiprocessing
import os
import sys
import time

from interpreter.agents import CHANCE, AgentError, ChanceAgent, RandomAgent, agent_seed

__all__ = [
    "DecisionLimitExceeded",
    "WorkerError",
    "game_seed",
    "play_game",
    "play_one",
    "simulate",
    "summarize",
    "MAX_ERROR_MESSAGES",
    "MAX_WORKERS",
    "check_workers",
]

MAX_ERROR_MESSAGES = 5
MAX_WORKERS = 64  # worker processes of one simulation (see docs/language.md, "Run-time limits")


class DecisionLimitExceeded(Exception):
    """A game took more decisions than allowed (``max_decisions``)."""


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of a simulation run with ``seed``."""
    return seed * 1_000_003 + index


def play_game(game, agents, *, chance_agent=None, max_decisions: int = 100_000, on_decision=None) -> int:
    """Let ``agents`` (one per seat) play ``game`` until it is over; returns how many decisions
    this loop applied. Each decision is ``agent.choose(game, seat)`` (docs/agents.md).

    Chance decisions (``current_player == -1``) go to ``chance_agent``.  ``on_decision(seat, agent,
    action, new_log_entries)`` is called after each applied decision; ``new_log_entries`` are the
    entries that ``game.log`` gained (the decision itself, then any chance events the game resolved
    on its own).  Raises ``DecisionLimitExceeded`` after ``max_decisions`` decisions, and lets the
    game's own errors (``GameError``, ``IllegalAction``) and ``AgentError`` through."""
    applied = 0
    while not game.is_over():
        if applied >= max_decisions:
            raise DecisionLimitExceeded(f"the game did not end within {max_decisions} decisions")
        seat = game.current_player
        if seat == CHANCE:
            if chance_agent is None:
                raise AgentError("a chance decision is pending but no chance agent was given")
            agent = chance_agent
        elif isinstance(seat, int) and 0 <= seat < len(agents):
            agent = agents[seat]
        else:
            raise AgentError(f"the game is not over but its current player is {seat!r}")
        action = agent.choose(game, seat)
        before = len(game.log)
        game.apply(action)
        applied += 1
        if on_decision is not None:
            on_decision(seat, agent, action, list(game.log[before:]))
    return applied


def _known_errors() -> tuple:
    """The exception types that mean "this game failed", as opposed to a bug."""
    from interpreter.errors import GameError, IllegalAction

    return (AgentError, DecisionLimitExceeded, GameError, IllegalAction)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def play_one(ruleset, index: int, seed: int, players: int, max_decisions: int, chance: str = "sampled") -> dict:
    """Play game ``index`` of a simulation with random agents; never raises for a failing game.

    Returns ``{"index", "seed", "ok", "decisions", "scores", "winners", "end_reason", "error",
    "internal"}`` where ``internal`` marks an unexpected exception (a bug rather than a rule error)."""
    gseed = game_seed(seed, index)
    result = {"index": index, "seed": gseed, "ok": False, "decisions": 0, "scores": None,
              "winners": None, "end_reason": None, "error": None, "internal": False}
    game = None
    try:
        game = ruleset.new_game(players, seed=gseed, chance=chance)
        agents = [RandomAgent(agent_seed(gseed, s)) for s in range(players)]
        play_game(game, agents, chance_agent=ChanceAgent(agent_seed(gseed, "chance")),
                  max_decisions=max_decisions)
        result.update(ok=True, decisions=len(game.log), scores=list(game.scores()),
                      winners=list(game.winners()), end_reason=game.end_reason)
    except _known_errors() as exc:
        result["error"] = _first_line(exc)
    except Exception as exc:  # a bug in the rules engine: record it, keep the run going
        result.update(error=f"internal error: {type(exc).__name__}: {_first_line(exc)}", internal=True)
    if not result["ok"] and game is not None:
        try:
            result["decisions"] = len(game.log)
        except Exception:
            pass
    return result


def summarize(results: list, players: int, endings=()) -> dict:
    """Add up per-game results (from ``play_one``) in game order.

    Means and rates are over the completed games (0.0 when none completed).  A shared victory
    counts ``1/len(winners)`` for each winner.  ``ended_by`` lists every declared ending (possibly
    with 0) plus any other reason seen; a completed game without a reason counts as ``"(none)"``."""
    results = sorted(results, key=lambda r: r["index"])
    done = [r for r in results if r["ok"]]
    wins = [0.0] * players
    score_sum = [0.0] * players
    ended_by = {str(e): 0 for e in endings}
    draws = 0
    for r in done:
        winners = r["winners"] or []
        for w in winners:
            if 0 <= w < players:
                wins[w] += 1.0 / len(winners)
        if not winners:
            draws += 1
        for s, v in enumerate((r["scores"] or [])[:players]):
            score_sum[s] += float(v)
        reason = "(none)" if r["end_reason"] is None else str(r["end_reason"])
        ended_by[reason] = ended_by.get(reason, 0) + 1
    n = len(done)
    messages, examples = [], []
    for r in results:
        if r["ok"] or r["error"] in messages:
            continue
        if len(messages) < MAX_ERROR_MESSAGES:
            messages.append(r["error"])
            examples.append({"game": r["index"], "seed": r["seed"], "message": r["error"]})
    return {
        "games": len(results),
        "completed": n,
        "errors": len(results) - n,
        "internal_errors": sum(1 for r in results if r["internal"]),
        "error_messages": messages,
        "error_examples": examples,
        "mean_decisions": (sum(r["decisions"] for r in done) / n) if n else 0.0,
        "win_rate": [w / n if n else 0.0 for w in wins],
        "draws": draws,
        "mean_score": [s / n if n else 0.0 for s in score_sum],
        "ended_by": ended_by,
    }


# --- worker processes -------------------------------------------------------------------------

# The Ruleset the games of a worker process are played with.  Under ``fork`` the parent sets it
# just before the pool forks, so the children inherit it (nothing is loaded or pickled); under
# ``spawn`` ``_init_worker`` loads it once per worker.  A ``WorkerError`` in its place reports a
# failed load with the first chunk.
_WORKER_RULESET = None


def _load(rules, variants, loader):
    """A Ruleset from a path (with ``loader``, default ``rulelang.load``) or the object itself."""
    if isinstance(rules, (str, os.PathLike)):
        if loader is None:
            import rulelang

            loader = rulelang.load
        return loader(os.fspath(rules), variants=tuple(variants))
    return rules


class WorkerError(Exception):
    """A worker process could not load the rules (the file changed or is unreadable there)."""


def check_workers(workers) -> int:
    """``workers`` as a count of worker processes: ``None`` means one per CPU (at most
    ``MAX_WORKERS``); anything but a whole number from 1 to ``MAX_WORKERS`` is a ``ValueError``
    with a one-line message."""
    if workers is None:
        return max(1, min(os.cpu_count() or 1, MAX_WORKERS))
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"the number of worker processes must be a whole number from 1 to {MAX_WORKERS}, "
                         f"not {workers!r}")
    return workers


def _init_worker(parent, rules, variants, loader) -> None:
    """The ``spawn`` initializer: load the rules once in this worker."""
    global _WORKER_RULESET
    _watch_parent(parent)
    try:
        _WORKER_RULESET = _load(rules, variants, loader)
    except Exception as exc:  # reported by the first chunk, as a clean picklable error
        _WORKER_RULESET = WorkerError(f"a worker process could not load the rules: "
                                      f"{type(exc).__name__}: {_first_line(exc)}")


def _watch_parent(parent: int) -> None:
    """Every worker's initializer: a daemon thread ends the worker once the process that started
    it is gone (killed, say), instead of leaving it waiting for tasks forever."""
    import threading

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="rulelang-parent-watch", daemon=True).start()


def _init_forked(parent: int) -> None:
    """The ``fork`` initializer: the rules are already here (inherited); only watch the parent."""
    _watch_parent(parent)


def _run_chunk(start, stop, seed, players, max_decisions, chance) -> list:
    """Games ``start`` to ``stop - 1`` in a worker, with the worker's Ruleset (no rules are sent)."""
    ruleset = _WORKER_RULESET
    if isinstance(ruleset, WorkerError):
        raise ruleset
    if ruleset is None:
        raise WorkerError("a worker process has no rules (internal error: the pool was started without them)")
    return [play_one(ruleset, i, seed, players, max_decisions, chance) for i in range(start, stop)]


def _can_fork() -> bool:
    """``fork`` on Linux only: elsewhere (macOS) forking a process that has loaded system libraries
    is unsafe, and Python defaults to ``spawn`` there."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _mp_context(fork: bool):
    return multiprocessing.get_context("fork" if fork else "spawn")


def _chunks(games: int, workers: int):
    """Ranges ``(start, stop)`` of game indexes, in order: about 16 per worker (so the last ones
    leave little idle time at the end), at most 64 games each (a task's cost stays small next to
    its games, and so does the memory of its results)."""
    size = max(1, min(64, math.ceil(games / (workers * 16))))
    for start in range(0, games, size):
        yield start, min(games, start + size)


def _run_pool(ruleset, rules, variants, loader, games, seed, players, max_decisions, chance,
              workers, progress, results, fork=None) -> None:
    """Play the games in ``workers`` processes, adding each result to ``results``."""
    global _WORKER_RULESET
    if fork is None:
        fork = _can_fork()
    size = next(_chunks(games, workers))[1]
    processes = min(workers, math.ceil(games / size))
    if fork:
        initializer, initargs = _init_forked, (os.getpid(),)
    else:
        initializer, initargs = _init_worker, (os.getpid(), rules, tuple(variants), loader)
    previous = _WORKER_RULESET
    chunks = _chunks(games, workers)
    in_flight = processes * 4  # tasks queued at once: the pool never holds every game's task
    if fork:
        _WORKER_RULESET = ruleset  # inherited by the children, which fork at the first submit
        gc.freeze()  # the inherited objects stay out of the children's collections (fewer copied pages)
    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=processes, mp_context=_mp_context(fork),
                                                    initializer=initializer, initargs=initargs) as pool:
            pending = set()

            def fill():
                while len(pending) < in_flight:
                    chunk = next(chunks, None)
                    if chunk is None:
                        return
                    pending.add(pool.submit(_run_chunk, *chunk, seed, players, max_decisions, chance))

            try:
                fill()
                if progress is not None:
                    progress(0, games)
                while pending:
                    done, pending = concurrent.futures.wait(
                        pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    for fut in done:
                        results.extend(fut.result())
                    fill()
                    if progress is not None:
                        progress(len(results), games)
            except BaseException:
                for fut in pending:
                    fut.cancel()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        if fork:
            gc.unfreeze()
            _WORKER_RULESET = previous


def simulate(rules, players: int, games: int, seed: int = 0, workers: int = 1, variants=(),
             max_decisions: int = 100_000, progress=None, chance: str = "sampled", loader=None,
             ruleset=None) -> dict:
    """Play ``games`` games of ``rules`` (a rule file path, or a loaded ``Ruleset``) between
    ``players`` random agents and summarise them (see ``summarize`` for the keys; also ``seconds``,
    ``players``, ``seed``, ``variants``, ``game``; everything but ``seconds`` is the same for any
    number of workers).

    ``workers > 1`` runs the games in that many processes (at most ``MAX_WORKERS``; ``None`` means
    one per CPU; 0, negative or larger counts are a ``ValueError``).  The rules are loaded once,
    here; on Linux the workers inherit them (``fork``), elsewhere each worker re-loads them by
    path with ``variants`` (a ``Ruleset`` object is pickled to them instead).  ``progress(done,
    total)`` is called in this process: first with ``done == 0`` once the workers run, then as
    games finish.
    ``loader(path, variants=...)`` replaces ``rulelang.load`` (without ``fork`` it must be picklable).
    ``ruleset`` is an already loaded ``Ruleset`` of ``rules`` to use (saves a load).
    Loading errors (``RuleError``, ``OSError``) are raised; failing games are counted, not raised."""
    start = time.perf_counter()
    workers = check_workers(workers)
    if ruleset is None:
        ruleset = _load(rules, variants, loader)  # fail early, in this process, on a bad rule file
    endings = tuple(getattr(ruleset, "endings", ()) or ())
    results: list = []
    if workers == 1 or games <= 1:
        if progress is not None:
            progress(0, games)
        for i in range(games):
            results.append(play_one(ruleset, i, seed, players, max_decisions, chance))
            if progress is not None:
                progress(len(results), games)
    else:
        _run_pool(ruleset, rules, variants, loader, games, seed, players, max_decisions, chance,
                  workers, progress, results)
    summary = summarize(results, players, endings)
    summary.update(
        game=getattr(ruleset, "name", None),
        players=players,
        seed=seed,
        variants=list(getattr(ruleset, "active_variants", variants) or ()),
        seconds=round(time.perf_counter() - start, 3),
    )
    return summary

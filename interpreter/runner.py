"""The runner: many games of one rule file, one row per game, in this process, in a pool of worker
processes, or on a Dask ``distributed`` cluster.

``run_games(ruleset, players=..., games=...)`` returns a list of rows (plain dicts, see ``ROW_KEYS``
and docs/results.md), one per game, in game-index order; ``iter_games`` yields the same rows one at a
time, in the same order, without keeping them (what ``simulate`` uses, so that a long run's memory
stays small).

Determinism: game ``i`` is played with the game seed ``game_seed(seed, i) = seed * 1_000_003 + i``,
the agent of seat ``s`` is ``make_agent(agents[s], agent_seed(game seed, s))`` and chance decisions
are sampled by ``ChanceAgent(agent_seed(game seed, "chance"))`` (see ``interpreter.agents``), so
``rulelang play --seed <game seed> --agents <the same agents>`` replays that very game.  A row depends
on nothing but the rules, the game index and these arguments: the rows are the same for every runner
and any number of workers (they hold no timing).

Runners:

* in this process (``workers=1``, the default);
* a process pool (``workers > 1``).  On Linux (``fork``) the rules are loaded and compiled once, in this
  process, and the pool is forked after: the workers inherit the ``Ruleset`` and receive only ranges
  of game indexes and a small ``Job`` of plain values (seed, players, agent specs, ...), never the
  rules.  Elsewhere (``spawn``) each worker loads the rule file once, by path and variants, in its
  initializer.  A worker ends by itself if this process dies.
* Dask (``scheduler="tcp://HOST:PORT"`` for a running cluster, or ``"local:N"`` to start a
  ``LocalCluster`` of N worker processes here for the run).  The job carries the rules themselves
  (``rules_bundle``: the text of every file the rules were read from, as loaded here, with their SHA-256,
  scattered to the cluster once), the variants and index ranges, so workers need no shared file system;
  each worker process loads the texts once (from a private temporary folder; a per-process cache keyed by
  the digests and variants) and refuses texts that do not match their digests.  The optional dependency
  is ``pip install 'rulelang[dask]'``; it is imported only when a scheduler is given.

Games go to the workers in chunks of consecutive indexes (about 16 per worker, at most 64 games
each), a bounded number at a time, so a huge game count never allocates its tasks up front.
``progress(0, games)`` is called once the workers run (a caller may start a progress display, and
its thread, only then), then ``progress(done, games)`` as games finish.

``restrict="ACTION"``: in game ``i`` the seat ``i % players`` never takes an offered action named
ACTION (``RestrictedAgent``): its agent chooses among the legal actions without it, unless that leaves
none (then the restriction does not apply to that decision).  Choices inside an action and chance are
never restricted.  ``restricted_seat`` in the row says which seat it was.
"""
from __future__ import annotations

import concurrent.futures
import gc
import hashlib
import math
import multiprocessing
import os
import re
import sys
import threading
import time
from typing import NamedTuple

import rulelang
from interpreter.agents import AgentError, ChanceAgent, agent_seed, make_agent
from interpreter.errors import GameError, IllegalAction

__all__ = [
    "DecisionLimitExceeded",
    "Job",
    "RestrictedAgent",
    "RunnerError",
    "WorkerError",
    "ROW_KEYS",
    "MAX_WORKERS",
    "DASK_CONNECT_TIMEOUT",
    "action_name",
    "check_workers",
    "game_seed",
    "is_draw",
    "iter_games",
    "play_row",
    "run_games",
    "run_metadata",
    "rules_bundle",
]

MAX_WORKERS = 64  # worker processes of one run (see docs/language.md, "Run-time limits")
MAX_SEED = (1 << 64) - 1  # game seeds are 0 to 2^64-1 (Ruleset.new_game)
DASK_CONNECT_TIMEOUT = 10.0  # seconds to reach a Dask scheduler (or start a local cluster's) before giving up
CHANCE = -1

#: the keys of a row, in this order (docs/results.md; interpreter/compare.py reads them)
ROW_KEYS = ("index", "seed", "players", "variants", "agents", "restricted_seat", "ok", "winners", "draw",
            "scores", "decisions", "rounds", "end_reason", "error", "internal", "actions", "branching")


class DecisionLimitExceeded(Exception):
    """A game took more decisions than allowed (``max_decisions``)."""


class RunnerError(Exception):
    """The run could not go on (Dask is missing or unreachable, a worker could not load the rules);
    the message is one line for the person running it."""


class WorkerError(RunnerError):
    """A worker process could not load the rules (the file changed or is unreadable there)."""


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of a run with ``seed``."""
    return seed * 1_000_003 + index


def action_name(action_id: str) -> str:
    """The name of the action an offered action's id stands for: ``place(0,2)`` -> ``place``."""
    return action_id.partition("(")[0]


def is_draw(winners, players: int) -> bool:
    """A finished game is a draw when it has no winner or when every seat shares the win (two or more
    players).  In a one-player game no winner is a loss, not a draw."""
    if players < 2:
        return False
    return not winners or len(set(winners)) >= players


class Job(NamedTuple):
    """What a worker needs besides the rules and a range of game indexes: plain values only."""

    seed: int
    players: int
    agents: tuple  # one agent spec per seat
    restrict: str | None
    max_decisions: int
    chance: str
    variants: tuple  # the active variants, for the rows


# --- the restricted agent --------------------------------------------------------------------------

class _Offered:
    """The game as the inner agent of a ``RestrictedAgent`` sees it: the same game, but
    ``legal_actions()`` lists only the allowed actions.  Everything else is the game's own (``clone()``
    gives a real, unrestricted copy: a search agent only loses the action at the decisions it takes)."""

    __slots__ = ("_game", "_actions")

    def __init__(self, game, actions):
        object.__setattr__(self, "_game", game)
        object.__setattr__(self, "_actions", actions)

    def legal_actions(self):
        return list(self._actions)

    def chance_outcomes(self):
        return []

    def __getattr__(self, name):
        return getattr(self._game, name)


class RestrictedAgent:
    """``inner`` that never takes an offered action whose name is in ``names``: at an action decision
    it chooses among the legal actions without them, unless none would be left (then among all).
    Choices inside an action and chance decisions go to ``inner`` unchanged.  An inner agent that
    answers with a forbidden action anyway is an ``AgentError``."""

    def __init__(self, inner, names):
        self.inner = inner
        self.names = frozenset(names)
        self.name = f"{getattr(inner, 'name', 'agent')} without {', '.join(sorted(self.names))}"

    def choose(self, game, seat=None):
        if seat is None:
            seat = game.current_player
        if getattr(game, "decision_kind", "action") != "action":
            return self.inner.choose(game, seat)
        legal = game.legal_actions()
        names = self.names
        allowed = [a for a in legal if action_name(a.id) not in names]
        if not allowed or len(allowed) == len(legal):
            return self.inner.choose(game, seat)
        action = self.inner.choose(_Offered(game, allowed), seat)
        aid = getattr(action, "id", action)
        if isinstance(aid, str) and action_name(aid) in names:
            raise AgentError(f"the agent {getattr(self.inner, 'name', 'agent')!r} took '{aid}', which it may not take")
        return action

    def __repr__(self) -> str:
        return f"RestrictedAgent({self.inner!r}, {sorted(self.names)!r})"


# --- one game ----------------------------------------------------------------------------------------

def _known_errors() -> tuple:
    """The exception types that mean "this game failed", as opposed to a bug."""
    return (AgentError, DecisionLimitExceeded, GameError, IllegalAction)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def play_row(ruleset, index: int, job: Job) -> dict:
    """Play game ``index`` of a run and return its row (``ROW_KEYS``); never raises for a failing
    game: its row has ``ok`` false and the first line of the error (``internal`` marks an unexpected
    exception, a bug rather than a rule error).

    ``decisions`` counts player decisions (not chance); ``actions`` how often each offered action (by
    name) was taken; ``branching`` the mean number of legal actions at the player decisions (None
    without any); ``rounds`` the most turns any one seat took, counting the turns (``turn`` blocks of
    the flow) in which a decision was taken (None when the game has no turns).  For a failed game these
    count the game up to its error."""
    players = job.players
    gseed = game_seed(job.seed, index)
    restricted = index % players if job.restrict is not None else None
    row = {"index": index, "seed": gseed, "players": players, "variants": list(job.variants),
           "agents": list(job.agents), "restricted_seat": restricted, "ok": False, "winners": [], "draw": False,
           "scores": None, "decisions": 0, "rounds": None, "end_reason": None, "error": None, "internal": False,
           "actions": {}, "branching": None}
    decisions = 0  # player decisions
    options = 0  # legal actions summed over them
    counts = {}  # action name -> times taken
    turns_of = [0] * players  # turns with a decision, by the seat whose turn it was
    try:
        game = ruleset.new_game(players, seed=gseed, chance=job.chance)
        agents = [make_agent(spec, agent_seed(gseed, s)) for s, spec in enumerate(job.agents)]
        if restricted is not None:
            agents[restricted] = RestrictedAgent(agents[restricted], (job.restrict,))
        chance_agent = ChanceAgent(agent_seed(gseed, "chance"))
        has_turns = hasattr(game, "turns")
        has_kind = hasattr(game, "decision_kind")
        is_over, legal, apply = game.is_over, game.legal_actions, game.apply  # (bound once: this loop is hot)
        last_turn = 0
        applied = 0
        limit = job.max_decisions
        while not is_over():
            if applied >= limit:
                raise DecisionLimitExceeded(f"the game did not end within {limit} decisions")
            seat = game.current_player
            if has_turns:
                t = game.turns
                if t != last_turn:
                    last_turn = t
                    whose = game.current
                    if 0 <= whose < players:
                        turns_of[whose] += 1
            if seat == CHANCE:
                action = chance_agent.choose(game, seat)
            elif seat.__class__ is int and 0 <= seat < players:
                options += len(legal())
                action = agents[seat].choose(game, seat)
                decisions += 1
                if not has_kind or game.decision_kind == "action":
                    aid = getattr(action, "id", action)
                    name = aid.partition("(")[0] if aid.__class__ is str else str(aid)  # action_name, inline
                    counts[name] = counts.get(name, 0) + 1
            else:
                raise AgentError(f"the game is not over but its current player is {seat!r}")
            apply(action)
            applied += 1
        winners = list(game.winners())
        row.update(ok=True, scores=list(game.scores()), winners=winners, draw=is_draw(winners, players),
                   end_reason=game.end_reason)
    except _known_errors() as exc:
        row["error"] = _first_line(exc)
    except Exception as exc:  # a bug in the rules engine or an agent: record it, keep the run going
        row.update(error=f"internal error: {type(exc).__name__}: {_first_line(exc)}", internal=True)
    row["decisions"] = decisions
    row["actions"] = dict(sorted(counts.items()))
    row["branching"] = options / decisions if decisions else None
    most = max(turns_of) if turns_of else 0
    row["rounds"] = most if most else None
    return row


def _play_range(ruleset, start: int, stop: int, job: Job) -> list:
    return [play_row(ruleset, i, job) for i in range(start, stop)]


# --- checking the arguments ----------------------------------------------------------------------------

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


def check_agents(agents, players: int) -> tuple:
    """The agent spec of each seat: one spec for every seat, or one per seat.  Each is tried once
    (``make_agent``), so that an unknown one is a ``ValueError`` before any game runs; an agent that
    asks a person (``human``) cannot play a batch of games."""
    if isinstance(agents, str):
        agents = (agents,)
    specs = tuple(str(a).strip() for a in agents)
    if not specs or not all(specs):
        raise ValueError("give an agent for every seat (e.g. random)")
    if len(specs) == 1:
        specs = specs * players
    if len(specs) != players:
        raise ValueError(f"{len(specs)} agents were given for {players} players (give one, or one per seat)")
    for spec in dict.fromkeys(specs):
        agent = make_agent(spec, 0)  # ValueError for an unknown one, with the known ones
        if getattr(agent, "name", "") == "human":
            raise ValueError(f"the agent '{spec}' asks a person for every decision: it cannot play a batch of games")
    return specs


def action_names(ruleset):
    """The names of the actions the rules declare (sorted), or None if the ruleset does not say."""
    actions = getattr(ruleset, "actions", None)
    return sorted(actions) if isinstance(actions, dict) else None


def check_restrict(ruleset, restrict):
    """``restrict`` if the rules declare an action of that name; else a one-line ``ValueError``."""
    if restrict is None:
        return None
    if not isinstance(restrict, str) or not restrict:
        raise ValueError(f"the action to restrict is a name, not {restrict!r}")
    known = action_names(ruleset)
    if known is not None and restrict not in known:
        game = getattr(ruleset, "name", None) or "the rules"
        shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
        raise ValueError(f"{game} has no action '{restrict}' (its actions: {shown or 'none'})")
    return restrict


def check_seeds(seed, games) -> None:
    """Every game seed ``game_seed(seed, i)`` must be a seed (0 to 2^64-1)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"the seed is a whole number, not {seed!r}")
    if seed < 0:
        raise ValueError(f"the seed is a whole number from 0, not {seed}")
    if game_seed(seed, games - 1) > MAX_SEED:
        raise ValueError(f"the seed {seed} is too large: with {games} games the game seeds would pass 2^64-1 "
                         f"(the largest seed is {(MAX_SEED - games + 1) // 1_000_003:,})")


# --- loading the rules -------------------------------------------------------------------------------

def _load(rules, variants, loader):
    """A Ruleset from a path (with ``loader``, default ``rulelang.load``) or the object itself."""
    if isinstance(rules, (str, os.PathLike)):
        if loader is None:
            loader = rulelang.load
        return loader(os.fspath(rules), variants=tuple(variants))
    return rules


def rules_digest(ruleset, rules=None) -> tuple:
    """The SHA-256 (hex) of every file the rules were read from, sorted: two rulesets with the same
    digest were read from the same texts (what a Dask worker checks before it plays)."""
    sources = getattr(getattr(ruleset, "program", None), "sources", None)
    if isinstance(sources, dict) and sources:
        return tuple(sorted(hashlib.sha256(s.text.encode("utf-8")).hexdigest() for s in sources.values()))
    if isinstance(rules, (str, os.PathLike)):
        with open(rules, "rb") as fh:
            return (hashlib.sha256(fh.read()).hexdigest(),)
    return ()


def run_metadata(ruleset, *, rules=None, players, games, seed, agents, max_decisions=100_000,
                 chance="sampled", variants=()) -> dict:
    """What a rows file says about the run that made it (``interpreter.results.write_rows(metadata=...)``):
    the rulelang version, the game, the rule file's path, the SHA-256 of every file the rules were read
    from and one digest of them all (``rules_digest``), the variants, players, run seed, number of games,
    agents, decision limit and chance mode.  Plain JSON values."""
    files = rules_digest(ruleset, rules)
    specs = check_agents(agents, players) if players else tuple(agents)
    return {
        "format": "rulelang-rows",
        "rulelang_version": rulelang.__version__,
        "game": getattr(ruleset, "name", None),
        "rules": os.fspath(rules) if isinstance(rules, (str, os.PathLike)) else
        getattr(getattr(ruleset, "program", None), "path", None),
        "rules_sha256": list(files),
        "rules_digest": hashlib.sha256("\n".join(files).encode()).hexdigest(),
        "variants": [str(v) for v in (getattr(ruleset, "active_variants", None) or variants or ())],
        "players": players,
        "run_seed": seed,
        "games": games,
        "agents": list(specs),
        "max_decisions": max_decisions,
        "chance": chance,
    }


# --- the process pool ---------------------------------------------------------------------------------

# The Ruleset the games of a worker process are played with.  Under ``fork`` the parent sets it
# just before the pool forks, so the children inherit it (nothing is loaded or pickled); under
# ``spawn`` ``_init_worker`` loads it once per worker.  A ``WorkerError`` in its place reports a
# failed load with the first chunk.
_WORKER_RULESET = None


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

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="rulelang-parent-watch", daemon=True).start()


def _init_forked(parent: int) -> None:
    """The ``fork`` initializer: the rules are already here (inherited); only watch the parent."""
    _watch_parent(parent)


def _run_chunk(start, stop, job) -> list:
    """Games ``start`` to ``stop - 1`` in a worker, with the worker's Ruleset (no rules are sent)."""
    ruleset = _WORKER_RULESET
    if isinstance(ruleset, WorkerError):
        raise ruleset
    if ruleset is None:
        raise WorkerError("a worker process has no rules (internal error: the pool was started without them)")
    return _play_range(ruleset, start, stop, job)


def _can_fork() -> bool:
    """``fork`` on Linux only: elsewhere (macOS) forking a process that has loaded system libraries
    is unsafe, and Python defaults to ``spawn`` there."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _chunks(games: int, workers: int):
    """Ranges ``(start, stop)`` of game indexes, in order: about 16 per worker (so the last ones
    leave little idle time at the end), at most 64 games each (a task's cost stays small next to
    its games, and so does the memory of its rows)."""
    size = max(1, min(64, math.ceil(games / (workers * 16))))
    for start in range(0, games, size):
        yield start, min(games, start + size)


def _in_order(chunks_done, next_start):
    """Pop the finished chunks that continue at ``next_start``: ``(rows, new next_start)``."""
    rows = []
    while next_start in chunks_done:
        part = chunks_done.pop(next_start)
        rows.extend(part)
        next_start += len(part)
    return rows, next_start


def _pool_rows(ruleset, rules, variants, loader, games, job, workers, progress, fork=None):
    """Yield the rows of the games, in index order, played by ``workers`` processes."""
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
    context = multiprocessing.get_context("fork" if fork else "spawn")
    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=processes, mp_context=context,
                                                    initializer=initializer, initargs=initargs) as pool:
            pending = {}

            def fill():
                while len(pending) < in_flight:
                    chunk = next(chunks, None)
                    if chunk is None:
                        return
                    pending[pool.submit(_run_chunk, *chunk, job)] = chunk[0]

            try:
                fill()
                if progress is not None:
                    progress(0, games)
                done_count = 0
                finished = {}
                next_start = 0
                while pending:
                    done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    for fut in done:
                        start = pending.pop(fut)
                        finished[start] = fut.result()
                        done_count += len(finished[start])
                    fill()
                    if progress is not None:
                        progress(done_count, games)
                    rows, next_start = _in_order(finished, next_start)
                    yield from rows
            except BaseException:
                for fut in pending:
                    fut.cancel()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        if fork:
            gc.unfreeze()
            _WORKER_RULESET = previous


# --- Dask -------------------------------------------------------------------------------------------

_DASK_LOADED: dict = {}  # in a Dask worker process: (digest, variants, top file) -> (Ruleset, paths)
_DASK_LOCK = threading.Lock()  # one load, and one game, at a time in a worker process
_DASK_LOADS = [0]  # how many times this process loaded rules for Dask tasks (tests read it)
_DASK_CACHE_SIZE = 4  # rulesets a worker keeps (a comparison plays two)

_TCP = re.compile(r"^(tcp|tls)://[^\s/:]+(:\d{1,5})$|^(tcp|tls)://\[[0-9A-Fa-f:.]+\](:\d{1,5})$")


def parse_scheduler(scheduler: str):
    """``("local", n)`` for ``local:N`` or ``("address", text)`` for ``tcp://HOST:PORT``; a
    ``ValueError`` (one line) for anything else."""
    text = scheduler.strip() if isinstance(scheduler, str) else ""
    shown = text if len(text) <= 60 else text[:57] + "..."
    if text.startswith("local:"):
        n = text[len("local:"):]
        if n.isdigit() and len(n) <= 3 and 1 <= int(n) <= MAX_WORKERS:
            return "local", int(n)
        raise ValueError(f"scheduler {shown!r}: local:N starts N worker processes, N from 1 to {MAX_WORKERS}")
    if _TCP.match(text):
        return "address", text
    raise ValueError(f"scheduler {shown!r}: give tcp://HOST:PORT (a running Dask scheduler) or local:N "
                     "(start N local workers)")


def _dask():
    try:
        import distributed
    except ImportError:
        raise RunnerError("running on a Dask cluster needs Dask: pip install 'rulelang[dask]'") from None
    return distributed


def rules_bundle(ruleset, rules=None) -> dict:
    """The rule texts a Dask task carries, so that workers need no shared file system: every file the rules
    were read from (the top file and each file it extends, as they were read when the ruleset was loaded),
    by its path relative to a common folder, with the top file, the `extends` root and each file's path as
    given here (the workers show it in error messages).  ``{"top", "root", "files": {relative path: text},
    "names": {relative path: path as given}, "digest"}``; ``digest`` is ``rules_digest(ruleset)``, which
    a worker checks the texts against."""
    program = getattr(ruleset, "program", None)
    sources = getattr(program, "sources", None)
    if isinstance(sources, dict) and sources:
        texts = {os.fspath(p): s.text for p, s in sources.items()}
        top = os.fspath(getattr(program, "path", None) or next(iter(texts)))
        root = getattr(program, "root", None) or os.path.dirname(os.path.abspath(top))
    elif isinstance(rules, (str, os.PathLike)):
        top = os.fspath(rules)
        with open(top, "rb") as fh:
            texts = {top: fh.read().decode("utf-8")}
        root = os.path.dirname(os.path.abspath(top))
    else:
        raise ValueError("a Dask run needs the rules' texts: give a loaded ruleset or the rule file's path")
    absolute = {p: os.path.abspath(p) for p in texts}
    base = os.path.commonpath(list(absolute.values()) + [os.path.abspath(root)])
    if os.path.isfile(base):
        base = os.path.dirname(base)
    rel = {p: os.path.relpath(a, base) for p, a in absolute.items()}
    return {"top": rel.get(top) or os.path.relpath(os.path.abspath(top), base),
            "root": os.path.relpath(os.path.abspath(root), base),
            "files": {rel[p]: t for p, t in texts.items()},
            "names": {rel[p]: p for p in texts},
            "digest": tuple(sorted(hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts.values()))}


def _safe_relative(path) -> bool:
    return (isinstance(path, str) and path and not os.path.isabs(path)
            and ".." not in path.replace("\\", "/").split("/") and "\0" not in path)


def _worker_ruleset(bundle, variants, loader=None):
    """The rules in this Dask worker process, from the texts the task carries: written to a private
    temporary folder, loaded (``rulelang.load``; the workers need no file of the rules), checked against
    the digest, kept for the next tasks.  Returns ``(ruleset, {temporary path: path as given})``."""
    import shutil
    import tempfile

    digest = tuple(bundle.get("digest") or ())
    key = (digest, tuple(variants), bundle.get("top"))
    got = _DASK_LOADED.get(key)
    if got is not None:
        return got
    files = bundle.get("files") or {}
    texts = tuple(sorted(hashlib.sha256(t.encode("utf-8")).hexdigest() for t in files.values()))
    if texts != digest or not files:
        raise WorkerError("a Dask worker received rule texts that do not match their digest (the job was "
                          "changed on its way)")
    if not all(_safe_relative(p) for p in list(files) + [bundle.get("top")]) or \
            not (bundle.get("root") == "." or _safe_relative(bundle.get("root"))):
        raise WorkerError("a Dask worker received rule files with paths outside their folder")
    folder = tempfile.mkdtemp(prefix="rulelang-rules-")
    try:
        for rel, text in files.items():
            path = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        top = os.path.join(folder, bundle["top"])
        try:
            ruleset = rulelang.load(top, variants=tuple(variants), root=os.path.normpath(os.path.join(folder, bundle["root"])))
        except Exception as exc:
            raise WorkerError(f"a Dask worker could not load the rules sent with the job: {type(exc).__name__}: "
                              f"{_first_line(exc)}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if rules_digest(ruleset) != digest:
        raise WorkerError("a Dask worker loaded other rules than the texts sent with the job")
    names = {os.path.join(folder, rel): bundle.get("names", {}).get(rel, rel) for rel in files}
    if len(_DASK_LOADED) >= _DASK_CACHE_SIZE:
        _DASK_LOADED.clear()
    _DASK_LOADED[key] = got = (ruleset, names)
    _DASK_LOADS[0] += 1
    return got


def _dask_chunk(bundle, variants, start, stop, job) -> list:
    """A Dask task: games ``start`` to ``stop - 1`` with this worker's copy of the rules.  Error texts name
    the rule files by their paths on the machine that started the run (as the other runners do)."""
    with _DASK_LOCK:
        ruleset, names = _worker_ruleset(bundle, variants)
        rows = _play_range(ruleset, start, stop, job)
    for row in rows:
        if row.get("error"):
            for tmp in sorted(names, key=len, reverse=True):
                row["error"] = row["error"].replace(tmp, names[tmp])
    return rows


def dask_loads() -> int:
    """How many times this process loaded rules for Dask tasks (``client.run(dask_loads)`` asks the
    workers; each loads a given rule file once)."""
    return _DASK_LOADS[0]


def _dask_client(scheduler, timeout):
    """``(client, cluster or None)``, or a one-line ``RunnerError``."""
    import logging
    import warnings

    distributed = _dask()
    kind, value = parse_scheduler(scheduler)
    cluster = None
    try:
        if kind == "local":
            with warnings.catch_warnings():  # e.g. "Port 8787 is already in use": nothing the user must act on
                warnings.simplefilter("ignore")
                cluster = distributed.LocalCluster(n_workers=value, threads_per_worker=1, processes=True,
                                                   dashboard_address=None, silence_logs=logging.ERROR,
                                                   timeout=max(timeout, 30.0))
            client = distributed.Client(cluster, timeout=timeout)
        else:
            client = distributed.Client(value, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        if cluster is not None:
            cluster.close()
        where = f"the Dask scheduler at {value}" if kind == "address" else "a local Dask cluster"
        raise RunnerError(f"cannot reach {where} within {timeout:g} s: {_first_line(exc)}") from None
    except Exception as exc:
        if cluster is not None:
            cluster.close()
        hint = (" (a Python script that starts local Dask workers must run its code under "
                "`if __name__ == \"__main__\":`, as for multiprocessing)" if kind == "local" else "")
        raise RunnerError(f"cannot start Dask ({scheduler}): {type(exc).__name__}: {_first_line(exc)}{hint}") from None
    return client, cluster


def _dask_rows(ruleset, rules, variants, loader, games, job, scheduler, progress, timeout):
    """Yield the rows of the games, in index order, played on a Dask cluster."""
    bundle = rules_bundle(ruleset, rules)
    client, cluster = _dask_client(scheduler, timeout)
    distributed = _dask()
    pending = {}
    try:
        try:  # a scheduler without workers would hold the tasks for ever
            client.wait_for_workers(1, timeout=timeout)
        except (TimeoutError, OSError):
            raise RunnerError(f"the Dask scheduler at {scheduler} has no workers (none joined within "
                              f"{timeout:g} s)") from None
        workers = max(1, sum(client.nthreads().values()))
        chunks = _chunks(games, workers)
        in_flight = workers * 4
        sent = client.scatter(bundle, hash=False)  # once to the cluster, not with every task
        active = tuple(getattr(ruleset, "active_variants", None) or variants or ())

        def fill():
            while len(pending) < in_flight:
                chunk = next(chunks, None)
                if chunk is None:
                    return
                fut = client.submit(_dask_chunk, sent, active, chunk[0], chunk[1], job, pure=False)
                pending[fut] = chunk[0]

        fill()
        if progress is not None:
            progress(0, games)
        done_count = 0
        finished = {}
        next_start = 0
        while pending:
            done = distributed.wait(list(pending), return_when="FIRST_COMPLETED").done
            for fut in done:
                start = pending.pop(fut)
                try:
                    finished[start] = fut.result()
                except RunnerError:
                    raise
                except Exception as exc:  # a worker died, a task could not run there
                    raise RunnerError(f"a Dask task failed: {type(exc).__name__}: {_first_line(exc)}") from None
                done_count += len(finished[start])
            fill()
            if progress is not None:
                progress(done_count, games)
            rows, next_start = _in_order(finished, next_start)
            yield from rows
    finally:
        for fut in pending:
            fut.cancel()
        client.close()
        if cluster is not None:
            cluster.close()


# --- the interface -----------------------------------------------------------------------------------

def iter_games(ruleset, *, rules=None, variants=(), players, games, seed=0, agents=("random",), restrict=None,
               max_decisions=100_000, chance="sampled", workers=1, scheduler=None, progress=None, loader=None,
               connect_timeout=None):
    """The rows of ``run_games``, yielded in game-index order as the games finish (see ``run_games``).
    The arguments are checked before anything runs; a generator that is closed early stops the
    workers."""
    if ruleset is None:
        if rules is None:
            raise ValueError("give the rules: a loaded ruleset or the rule file's path (rules=...)")
        ruleset = _load(rules, variants, loader)  # fail early, in this process, on a bad rule file
    if isinstance(games, bool) or not isinstance(games, int) or games < 0:
        raise ValueError(f"the number of games is a whole number, not {games!r}")
    if isinstance(players, bool) or not isinstance(players, int) or players < 1:
        raise ValueError(f"the number of players is a whole number from 1, not {players!r}")
    if isinstance(max_decisions, bool) or not isinstance(max_decisions, int) or max_decisions < 1:
        raise ValueError(f"the decision limit is a whole number from 1, not {max_decisions!r}")
    if chance not in ("sampled", "explicit"):
        raise ValueError(f"chance is 'sampled' or 'explicit', not {chance!r}")
    if games:
        check_seeds(seed, games)
    if scheduler is not None:
        parse_scheduler(scheduler)
        if workers not in (1, None):
            raise ValueError("give either a number of worker processes or a Dask scheduler, not both")
    else:
        workers = check_workers(workers)
    specs = check_agents(agents, players)
    restrict = check_restrict(ruleset, restrict)
    if connect_timeout is None:
        connect_timeout = DASK_CONNECT_TIMEOUT
    active = tuple(getattr(ruleset, "active_variants", None) or variants or ())
    job = Job(seed, players, specs, restrict, max_decisions, chance, tuple(str(v) for v in active))
    return _rows(ruleset, rules, variants, loader, games, job, workers, scheduler, progress, connect_timeout)


def _rows(ruleset, rules, variants, loader, games, job, workers, scheduler, progress, connect_timeout):
    if scheduler is not None and games:
        yield from _dask_rows(ruleset, rules, variants, loader, games, job, scheduler, progress, connect_timeout)
    elif workers == 1 or games <= 1:
        if progress is not None:
            progress(0, games)
        for i in range(games):
            yield play_row(ruleset, i, job)
            if progress is not None:
                progress(i + 1, games)
    else:
        yield from _pool_rows(ruleset, rules, variants, loader, games, job, workers, progress)


def run_games(ruleset, *, rules=None, variants=(), players, games, seed=0, agents=("random",), restrict=None,
              max_decisions=100_000, chance="sampled", workers=1, scheduler=None, progress=None, loader=None,
              connect_timeout=None) -> list:
    """Play ``games`` games of ``ruleset`` (a loaded ``Ruleset``; ``None`` loads ``rules``) and return
    one row per game, in game-index order (``ROW_KEYS``; docs/results.md).

    ``rules``: the rule file's path, which worker processes without ``fork`` and Dask workers load
    (with ``variants``; ``loader(path, variants=...)`` in place of ``rulelang.load``, picklable).
    ``agents``: agent specs (``make_agent``), one for every seat or one per seat.  ``restrict``: an
    action name that seat ``i % players`` of game ``i`` never takes.  ``workers``: processes of the
    pool (1: in this process; ``None``: one per CPU).  ``scheduler``: ``"tcp://HOST:PORT"`` or
    ``"local:N"`` to run on Dask instead (``connect_timeout`` seconds to reach it, default
    ``DASK_CONNECT_TIMEOUT``).
    ``progress(done, total)`` is called in this process as games finish.

    Bad arguments (worker count, agents, an unknown action, seeds past 2^64-1, a malformed scheduler)
    are a ``ValueError``; Dask missing or unreachable, or a worker that cannot load the rules, a
    ``RunnerError``; both with one-line messages, before any game runs where possible.  Loading errors
    of ``rules`` (``RuleError``, ``OSError``) are raised; failing games are rows, never raised."""
    return list(iter_games(ruleset, rules=rules, variants=variants, players=players, games=games, seed=seed,
                           agents=agents, restrict=restrict, max_decisions=max_decisions, chance=chance,
                           workers=workers, scheduler=scheduler, progress=progress, loader=loader,
                           connect_timeout=connect_timeout))

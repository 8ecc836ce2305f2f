"""The simulator: many games between agents, summarised.

``simulate(rules, players, games, seed=0, workers=1, ...)`` plays ``games`` games of a rule file
(or an already loaded ``Ruleset``) through the runner (``interpreter.runner.iter_games``: in this
process, a process pool or a Dask cluster, one row per game) and adds the rows up as they come
(``Summary``), so the memory of a long run stays small; with ``out=`` the rows are also written to a
file (``interpreter.results``).  The summary is the same for any runner and number of workers.

Draws (docs/results.md): a completed game is a *draw* when it has no winner or when every seat
shares the win (two or more players); a *shared win* is a win shared by some seats but not all.
``win_rate[s]`` is seat ``s``'s sole wins over the completed games; shared wins are counted apart
(``shared_wins[s]``), never as a fraction of a win.

``play_game(game, agents, ...)`` is the decision loop shared with the command line.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Sequence, Union

from interpreter.agents import CHANCE, AgentError
from interpreter.results import write_rows
from interpreter.runner import (  # noqa: F401  (re-exported: the names this module has always had)
    MAX_WORKERS, DecisionLimitExceeded, Job, RunnerError, WorkerError, _load, check_workers, game_seed, is_draw,
    iter_games, play_row, run_metadata,
)

if TYPE_CHECKING:
    from interpreter.agent_protocol import Agent
    from interpreter.game import Action, Game
    from interpreter.ruleset import Ruleset

Row = dict[str, Any]  # one game's row (interpreter.runner.ROW_KEYS)

__all__ = [
    "DecisionLimitExceeded",
    "RunnerError",
    "Summary",
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


def play_game(game: Game, agents: Sequence[Agent], *, chance_agent: Optional[Agent] = None,
              max_decisions: int = 100_000,
              on_decision: Optional[Callable[[int, Agent, Action, list[Any]], None]] = None) -> int:
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


def play_one(ruleset: Ruleset, index: int, seed: int, players: int, max_decisions: int,
             chance: str = "sampled") -> Row:
    """Play game ``index`` of a simulation with random agents; never raises for a failing game.
    Returns its row (``interpreter.runner.ROW_KEYS``: ``ok``, ``error``, ``internal``, ``seed``, ...)."""
    job = Job(seed, players, ("random",) * players, None, max_decisions, chance,
              tuple(getattr(ruleset, "active_variants", ()) or ()))
    return play_row(ruleset, index, job)


class Summary:
    """Adds up rows (``interpreter.runner``) given in game order; ``result()`` is the summary dict.

    Means and rates are over the completed games (0.0 when none completed; ``mean_rounds`` and
    ``mean_branching`` None when no completed game had rounds or decisions).  ``ended_by`` lists
    every declared ending (possibly with 0) plus any other reason seen; a completed game without a
    reason counts as ``"(none)"``."""

    def __init__(self, players: int, endings: Iterable[Any] = ()) -> None:
        self.players = players
        self.games = 0
        self.completed = 0
        self.internal = 0
        self.wins = [0] * players  # sole wins
        self.shared = [0] * players  # shared wins (some seats, not all)
        self.shared_games = 0
        self.draws = 0
        self.score_sum = [0.0] * players
        self.decisions = 0
        self.rounds = [0, 0]  # sum, games with rounds
        self.branching = [0.0, 0]  # sum of per-game means, games with decisions
        self.ended_by = {str(e): 0 for e in endings}
        self.messages: list[str] = []
        self.examples: list[dict[str, Any]] = []

    def add(self, r: Row) -> None:
        self.games += 1
        if r.get("internal"):
            self.internal += 1
        if not r["ok"]:
            if r["error"] not in self.messages and len(self.messages) < MAX_ERROR_MESSAGES:
                self.messages.append(r["error"])
                self.examples.append({"game": r["index"], "seed": r["seed"], "message": r["error"]})
            return
        players = self.players
        self.completed += 1
        winners = [w for w in (r["winners"] or []) if 0 <= w < players]
        draw = r["draw"] if "draw" in r else is_draw(winners, players)
        if draw:
            self.draws += 1
        elif len(winners) == 1:
            self.wins[winners[0]] += 1
        elif winners:
            self.shared_games += 1
            for w in set(winners):
                self.shared[w] += 1
        for s, v in enumerate((r["scores"] or [])[:players]):
            self.score_sum[s] += float(v)
        self.decisions += r["decisions"]
        if r.get("rounds") is not None:
            self.rounds[0] += r["rounds"]
            self.rounds[1] += 1
        if r.get("branching") is not None:
            self.branching[0] += r["branching"]
            self.branching[1] += 1
        reason = "(none)" if r["end_reason"] is None else str(r["end_reason"])
        self.ended_by[reason] = self.ended_by.get(reason, 0) + 1

    def result(self) -> dict[str, Any]:
        n = self.completed
        return {
            "games": self.games,
            "completed": n,
            "errors": self.games - n,
            "internal_errors": self.internal,
            "error_messages": list(self.messages),
            "error_examples": list(self.examples),
            "mean_decisions": self.decisions / n if n else 0.0,
            "mean_rounds": self.rounds[0] / self.rounds[1] if self.rounds[1] else None,
            "mean_branching": self.branching[0] / self.branching[1] if self.branching[1] else None,
            "wins": list(self.wins),
            "win_rate": [w / n if n else 0.0 for w in self.wins],
            "shared_wins": list(self.shared),
            "shared_win_games": self.shared_games,
            "draws": self.draws,
            "draw_rate": self.draws / n if n else 0.0,
            "mean_score": [s / n if n else 0.0 for s in self.score_sum],
            "ended_by": dict(self.ended_by),
        }


def summarize(results: Iterable[Row], players: int, endings: Iterable[Any] = ()) -> dict[str, Any]:
    """The summary of rows (from ``interpreter.runner``), added up in game order (see ``Summary``)."""
    summary = Summary(players, endings)
    for r in sorted(results, key=lambda r: r["index"]):
        summary.add(r)
    return summary.result()


def simulate(rules: Union[str, Ruleset], players: int, games: int, seed: int = 0, workers: Optional[int] = 1,
             variants: Sequence[str] = (), max_decisions: int = 100_000,
             progress: Optional[Callable[[int, int], None]] = None, chance: str = "sampled",
             loader: Optional[Callable[..., Ruleset]] = None, ruleset: Optional[Ruleset] = None,
             agents: Union[str, Sequence[str]] = ("random",), scheduler: Optional[str] = None, out: Any = None,
             out_format: Optional[str] = None) -> dict[str, Any]:
    """Play ``games`` games of ``rules`` (a rule file path, or a loaded ``Ruleset``) between
    ``players`` agents (``agents``: specs, one for every seat or one per seat) and summarise them
    (see ``Summary`` for the keys; also ``seconds``, ``players``, ``seed``, ``variants``, ``agents``,
    ``game``; everything but ``seconds`` is the same for any runner and number of workers).

    ``workers > 1`` runs the games in that many processes (at most ``MAX_WORKERS``; ``None`` means
    one per CPU; 0, negative or larger counts are a ``ValueError``); ``scheduler`` (``tcp://HOST:PORT``
    or ``local:N``) on a Dask cluster.  The rules are loaded once, here; on Linux the pool's workers
    inherit them (``fork``), elsewhere each worker re-loads them by path with ``variants``.
    ``progress(done, total)`` is called in this process: first with ``done == 0`` once the workers
    run, then as games finish.  ``loader(path, variants=...)`` replaces ``rulelang.load`` (without
    ``fork`` it must be picklable).  ``ruleset`` is an already loaded ``Ruleset`` of ``rules`` to use
    (saves a load).  ``out``: a file the rows are written to as they come (``out_format``: ``jsonl``,
    ``csv`` or ``parquet``; by default from its extension; see ``interpreter.results.write_rows``).
    Loading errors (``RuleError``, ``OSError``) are raised; failing games are counted, not raised."""
    start = time.perf_counter()
    if ruleset is None:
        ruleset = _load(rules, variants, loader)  # fail early, in this process, on a bad rule file
    rows = iter_games(ruleset, rules=rules, variants=variants, players=players, games=games, seed=seed,
                      agents=agents, max_decisions=max_decisions, chance=chance, workers=workers,
                      scheduler=scheduler, progress=progress, loader=loader)
    summary = Summary(players, tuple(getattr(ruleset, "endings", ()) or ()))
    specs = None

    def counted() -> Iterator[Row]:
        nonlocal specs
        for row in rows:
            summary.add(row)
            specs = row["agents"]
            yield row

    if out is not None:
        meta = run_metadata(ruleset, rules=rules, players=players, games=games, seed=seed, agents=agents,
                            max_decisions=max_decisions, chance=chance, variants=variants)
        write_rows(counted(), out, out_format, metadata=meta)
    else:
        for _ in counted():
            pass
    result = summary.result()
    result.update(
        game=getattr(ruleset, "name", None),
        players=players,
        seed=seed,
        variants=list(getattr(ruleset, "active_variants", variants) or ()),
        agents=specs if specs is not None else _specs(agents, players),
        seconds=round(time.perf_counter() - start, 3),
    )
    if out is not None:
        result["out"] = str(out)
    return result


def _specs(agents: Union[str, Sequence[str]], players: int) -> list[str]:
    specs = [agents] if isinstance(agents, str) else list(agents)
    return specs * players if len(specs) == 1 else specs

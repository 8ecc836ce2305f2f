"""Monte Carlo tree search: UCT over determinizations (single-observer information-set MCTS).

``MCTSAgent(playouts=200, seed=None, ...)`` is the agent behind ``--agents mcts`` / ``mcts:400``
(``ismcts`` is the same agent under the name the literature gives it). For each decision it runs
``playouts`` playouts from the current position and plays the action it tried most often.

One playout:

1. **Determinize.** A fresh sample of the state as the deciding seat knows it
   (``Game.determinize(seat, rng)``, interpreter/determinize.py): every value hidden from the seat
   dealt out again at random, and future chance drawn afresh. So the search never uses what its
   seat may not see (nor the future draws of the real game). In a game without hidden information
   the sample is the position itself, and the search is plain UCT.
2. **Select.** From the root, while every legal action of the sample already has a node, take
   the action maximising ``mean + c * sqrt(ln(available) / visits)`` (UCB1 as in Kocsis and
   Szepesvári, 2006, with the availability count of information-set MCTS, Cowling, Powley and
   Whitehouse, 2012: how often the action was legal when its node was passed). ``mean`` is the
   average reward of the seat that takes the action, so each node maximises its mover's return,
   for any number of players. Chance decisions are sampled from ``chance_outcomes()`` by their
   probabilities (each outcome has its own node).
3. **Expand** one untried legal action (chosen at random), unless the tree holds ``max_nodes``.
4. **Roll out**: uniformly random legal actions (chance by its probabilities) until the game is
   over or ``max_rollout`` decisions were taken after the tree.
5. **Back up** the rewards per seat, from ``Game.returns("legacy")``: a sole win 1, a shared win 0.5, a
   loss 0 (returns +1 / 0 / -1, mapped to [0, 1]; the rules' own payoffs, if declared, are not used:
   UCT's exploration constant assumes rewards in [0, 1]). A rollout cut at ``max_rollout`` is scored as
   the game stands: the seats with the highest current score share the win (a sole leader gets 1).
   A playout that hits an error of the rules (``GameError``) scores 0.5 for every seat and is
   counted in ``stats["errors"]``, as is a determinization that fails (that playout is skipped).

Exploration constant: ``c = sqrt(2)`` (UCB1's constant for rewards in [0, 1]) unless given.

Bounds: ``playouts`` per decision (at most ``MAX_PLAYOUTS``); at most ``max_nodes`` nodes in the
tree (``DEFAULT_MAX_NODES``; the tree is built anew for each decision, so memory is bounded by it);
at most ``max_rollout`` random decisions per rollout after the tree; each decision also runs under
the rules' own step and time budgets. ``max_seconds`` (off by default) stops a search early — the
choice then depends on the machine's speed, so it is not reproducible.

Deterministic: the agent draws everything (samples, expansions, rollouts) from its own
``random.Random(seed)``; the same seed and the same sequence of positions give the same choices,
with either backend.
"""
from __future__ import annotations

import math
import random
import time
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from .game import Action, Game

from .agent_protocol import Agent, AgentError, seat_name
from .errors import GameError, IllegalAction

__all__ = ["MCTSAgent", "DEFAULT_PLAYOUTS", "DEFAULT_MAX_NODES", "DEFAULT_MAX_ROLLOUT", "EXPLORATION",
           "MAX_PLAYOUTS", "search"]

CHANCE = -1
DEFAULT_PLAYOUTS = 200
DEFAULT_MAX_NODES = 100_000
DEFAULT_MAX_ROLLOUT = 300
MAX_PLAYOUTS = 1_000_000
EXPLORATION = math.sqrt(2)


class _Node:
    __slots__ = ("children", "visits", "total", "avail", "mover")

    def __init__(self, mover: Optional[int]) -> None:
        self.children: dict[str, _Node] = {}  # action id -> _Node
        self.visits = 0
        self.total = 0.0  # the sum of the rewards of `mover`, the seat that took the action leading here
        self.avail = 0  # how often this node's action was legal when its parent was passed
        self.mover = mover


def _sample_chance(game: Game, rng: random.Random) -> Action:
    outcomes = list(game.chance_outcomes() or [])
    if not outcomes:
        return rng.choice(game.legal_actions())  # (callers make sure there is one)
    weights = [float(p) for _, p in outcomes]
    if sum(weights) <= 0:
        return rng.choice([a for a, _ in outcomes])
    return rng.choices([a for a, _ in outcomes], weights=weights, k=1)[0]


def _rewards(game: Game, n: int) -> list[float]:
    """Reward per seat in [0, 1]: from returns() at the end, from the current scores otherwise."""
    if game.is_over():
        return [(float(r) + 1.0) / 2.0 for r in game.returns("legacy")]
    try:
        scores = game.scores()
    except GameError:
        return [0.5] * n
    best = max(scores)
    leaders = [p for p in range(n) if scores[p] == best]
    if len(leaders) == 1:
        return [1.0 if p == leaders[0] else 0.0 for p in range(n)]
    return [0.5 if p in leaders else 0.0 for p in range(n)]


def search(game: Game, seat: int, rng: random.Random, playouts: int = DEFAULT_PLAYOUTS,
           exploration: float = EXPLORATION, max_nodes: int = DEFAULT_MAX_NODES, max_rollout: int = DEFAULT_MAX_ROLLOUT,
           max_seconds: Optional[float] = None) -> tuple[_Node, dict[str, int]]:
    """Runs the search for `seat`, to decide at `game` (``game.current_player == seat``); returns
    ``(root, stats)``: the root node (its ``children`` by action id, with ``visits`` and ``total``) and
    ``{"playouts", "nodes", "errors", "cut"}``."""
    n = game.n
    root = _Node(None)
    nodes = 1
    errors = cut = 0
    deadline = time.monotonic() + max_seconds if max_seconds is not None else None
    done = 0
    for done in range(1, playouts + 1):
        try:
            g = game.determinize(seat, rng)
        except GameError:  # no sample could be made (DeterminizeError): counted, and the next one tried
            errors += 1
            continue
        node = root
        path = []
        steps = 0
        try:
            # selection and expansion
            while not g.is_over():
                p = g.current_player
                legal = g.legal_actions()
                if not legal:  # a position where nobody can move: scored as it stands
                    break
                if p == CHANCE:
                    a = _sample_chance(g, rng)
                    child = node.children.get(a.id)
                    if child is None:
                        if nodes >= max_nodes:
                            g.apply(a)
                            break
                        child = node.children[a.id] = _Node(CHANCE)
                        nodes += 1
                    child.avail += 1
                    g.apply(a)
                    node = child
                    path.append(node)
                    continue
                kids = node.children
                untried = []
                best = None
                best_value = -1.0
                for a in legal:
                    child = kids.get(a.id)
                    if child is None:
                        untried.append(a)
                        continue
                    child.avail += 1
                    if child.visits == 0:
                        value = math.inf
                    else:
                        value = (child.total / child.visits
                                 + exploration * math.sqrt(math.log(child.avail) / child.visits))
                    if best is None or value > best_value:
                        best, best_value = a, value
                if untried and nodes < max_nodes:
                    a = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
                    child = kids[a.id] = _Node(p)
                    child.avail = 1
                    nodes += 1
                    g.apply(a)
                    path.append(child)
                    break
                if best is None:  # the tree is full and nothing here has a node: roll out from here
                    break
                g.apply(best)
                node = kids[best.id]
                path.append(node)
            # rollout
            while not g.is_over() and steps < max_rollout:
                legal = g.legal_actions()
                if not legal:  # a position where nobody can move: scored as it stands
                    break
                if g.current_player == CHANCE:
                    a = _sample_chance(g, rng)
                else:
                    a = legal[rng.randrange(len(legal))]
                g.apply(a)
                steps += 1
            if not g.is_over():
                cut += 1
            rewards = _rewards(g, n)
        except (GameError, IllegalAction):
            errors += 1
            rewards = [0.5] * n
        for node in path:
            node.visits += 1
            if node.mover is not None and node.mover >= 0:
                node.total += rewards[node.mover]
        if deadline is not None and time.monotonic() >= deadline:
            break
    return root, {"playouts": done, "nodes": nodes, "errors": errors, "cut": cut}


def _check_int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}, not {value!r}")
    return value


class MCTSAgent(Agent):
    """UCT over determinizations; see the module docstring. ``choose(game, seat)`` returns the action
    of ``game.legal_actions()`` whose node the search visited most (ties: the higher mean reward,
    then the first listed). ``last_stats`` holds the numbers of the last search."""

    name = "mcts"

    def __init__(self, playouts: int = DEFAULT_PLAYOUTS, seed: Any = None, *, exploration: float = EXPLORATION,
                 max_nodes: int = DEFAULT_MAX_NODES, max_rollout: int = DEFAULT_MAX_ROLLOUT,
                 max_seconds: Optional[float] = None) -> None:
        self.playouts = _check_int("playouts", playouts, 1, MAX_PLAYOUTS)
        self.max_nodes = _check_int("max_nodes", max_nodes, 1, 100_000_000)
        self.max_rollout = _check_int("max_rollout", max_rollout, 0, 100_000_000)
        if isinstance(exploration, bool) or not isinstance(exploration, (int, float)) or not \
                0 <= exploration < math.inf:
            raise ValueError(f"exploration must be a number from 0, not {exploration!r}")
        self.exploration = float(exploration)
        if max_seconds is not None and (isinstance(max_seconds, bool) or not isinstance(max_seconds, (int, float))
                                        or not 0 < max_seconds < math.inf):
            raise ValueError(f"max_seconds must be a positive number, not {max_seconds!r}")
        self.max_seconds = max_seconds
        self.seed = seed
        self.rng = random.Random(seed)
        self.last_stats: Optional[dict[str, int]] = None

    def choose(self, game: Game, seat: Optional[int] = None) -> Action:
        if seat is None:
            seat = game.current_player
        legal = game.legal_actions()
        if not legal:
            raise AgentError(f"{seat_name(seat)} has no legal action")
        if seat == CHANCE or game.current_player == CHANCE:
            return _sample_chance(game, self.rng)
        if seat != game.current_player:
            raise AgentError(f"{seat_name(seat)} was asked to decide, but {seat_name(game.current_player)} is to "
                             "decide now")
        if len(legal) == 1:
            return legal[0]
        root, self.last_stats = search(game, seat, self.rng, self.playouts, self.exploration, self.max_nodes,
                                       self.max_rollout, self.max_seconds)
        best, key = legal[0], None
        for a in legal:
            child = root.children.get(a.id)
            k = (child.visits, child.total / child.visits) if child is not None and child.visits else (0, 0.0)
            if key is None or k > key:
                best, key = a, k
        return best

    def __repr__(self) -> str:
        return f"MCTSAgent(playouts={self.playouts}, seed={self.seed!r})"

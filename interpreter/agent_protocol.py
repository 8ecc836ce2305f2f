"""What every agent shares (docs/agents.md): the Agent base class of the ``choose(game, seat) -> Action``
protocol, CHANCE (the seat of a chance decision), AgentError, the names of seats, the legal actions of
the seat deciding, and sampling a chance outcome by its probability.

interpreter/agents.py has the agents themselves and builds one from a spec (``make_agent``); the search
agents (interpreter/mcts.py, interpreter/heuristic.py) build on this module.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from .game import Action, Game

CHANCE = -1



class AgentError(Exception):
    """An agent could not take a decision (no legal action, end of input, the player quit)."""


def seat_name(seat: int) -> str:
    """``P0``, ``P1``... for seats 0, 1... (the numbers the rules and the API use); ``chance`` for chance."""
    return "chance" if seat == CHANCE else f"P{seat}"


def _legal(game: Game) -> list[Action]:
    actions = list(game.legal_actions())
    if not actions:
        raise AgentError(f"{seat_name(game.current_player)} has no legal action")
    return actions


class Agent:
    """Base class. Subclasses implement ``choose(game, seat)``; ``name`` is what the narration shows."""

    name = "agent"

    def choose(self, game: Game, seat: Optional[int] = None) -> Action:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _sample_chance(game: Game, rng: random.Random) -> Action:
    outcomes = list(game.chance_outcomes() or [])
    if not outcomes:
        return rng.choice(_legal(game))
    actions = [a for a, _ in outcomes]
    weights = [float(p) for _, p in outcomes]
    if sum(weights) <= 0:
        return rng.choice(actions)
    return rng.choices(actions, weights=weights, k=1)[0]

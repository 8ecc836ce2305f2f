"""Agents: the things that take decisions in a game.

Every agent has ``choose(game) -> Action``, picking one of ``game.legal_actions()`` for the
seat that must decide now (``game.current_player``).  Agents never change the game: the caller
applies the action it gets back.

* ``RandomAgent(seed)`` picks uniformly at random with its own ``random.Random(seed)``, so the
  same seed and the same positions give the same choices, whatever else runs in the process.
* ``FirstAgent()`` always picks the first legal action (handy for deterministic tests).
* ``HumanAgent(input=..., output=...)`` shows the boards and the numbered legal actions and reads a
  choice, or a command: ``help``, ``board``, ``undo`` (raises ``UndoRequest``), ``quit`` (docs/play.md).
* ``ChanceAgent(seed)`` resolves chance decisions (``current_player == -1``) by sampling
  ``game.chance_outcomes()`` with their probabilities.

``make_agent(name, seed)`` builds an agent from its name (``"random"``, ``"first"``,
``"human"``), and ``agent_seed(seed, seat)`` derives the per-seat seed used by the command line
and by the simulator, so ``rulelang play --seed S`` replays exactly the game that the simulator
played with game seed ``S``.
"""
from __future__ import annotations

import hashlib
import json
import random
import sys

__all__ = [
    "AgentError",
    "UndoRequest",
    "Agent",
    "RandomAgent",
    "FirstAgent",
    "HumanAgent",
    "ChanceAgent",
    "AGENTS",
    "make_agent",
    "agent_seed",
    "seat_name",
]

CHANCE = -1


class AgentError(Exception):
    """An agent could not take a decision (no legal action, end of input, the player quit)."""


class UndoRequest(AgentError):
    """A person typed `undo`: the loop of interpreter/narrate.py takes it back (a loop that cannot,
    such as simulate.play_game, ends the game with this one-line message)."""


def agent_seed(seed: int, seat) -> int:
    """A deterministic 63-bit seed for the agent in ``seat`` (an int, or ``"chance"``) of the game
    played with ``seed``.  Stable across processes and Python versions (it does not use ``hash``)."""
    digest = hashlib.sha256(f"rulelang-agent:{seed}:{seat}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seat_name(seat: int) -> str:
    """``P0``, ``P1``... for seats 0, 1... (the numbers the rules and the API use); ``chance`` for chance."""
    return "chance" if seat == CHANCE else f"P{seat}"


def _legal(game) -> list:
    actions = list(game.legal_actions())
    if not actions:
        raise AgentError(f"{seat_name(game.current_player)} has no legal action")
    return actions


class Agent:
    """Base class. Subclasses implement ``choose(game)``; ``name`` is what the narration shows."""

    name = "agent"

    def choose(self, game):  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomAgent(Agent):
    """Uniformly random among the legal actions, with its own deterministic RNG.

    At a chance decision it samples the chance outcomes by their probabilities instead."""

    name = "random"

    def __init__(self, seed=None):
        self.seed = seed
        self.rng = random.Random(seed)

    def choose(self, game):
        if game.current_player == CHANCE:
            return _sample_chance(game, self.rng)
        return self.rng.choice(_legal(game))

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed!r})"


class FirstAgent(Agent):
    """Always the first legal action."""

    name = "first"

    def choose(self, game):
        return _legal(game)[0]


class ChanceAgent(Agent):
    """Resolves chance decisions by sampling ``chance_outcomes()`` with a deterministic RNG."""

    name = "chance"

    def __init__(self, seed=None):
        self.seed = seed
        self.rng = random.Random(seed)

    def choose(self, game):
        return _sample_chance(game, self.rng)

    def __repr__(self) -> str:
        return f"ChanceAgent(seed={self.seed!r})"


def _sample_chance(game, rng: random.Random):
    outcomes = list(game.chance_outcomes() or [])
    if not outcomes:
        return rng.choice(_legal(game))
    actions = [a for a, _ in outcomes]
    weights = [float(p) for _, p in outcomes]
    if sum(weights) <= 0:
        return rng.choice(actions)
    return rng.choices(actions, weights=weights, k=1)[0]


class HumanAgent(Agent):
    """Asks a person: prints the state, the prompt and the numbered legal actions, then reads a
    number (1-based) or an action id.  Bad input is explained and asked again; end of input or
    ``quit`` raises ``AgentError``.

    ``input`` and ``output`` are text streams (default ``sys.stdin`` / ``sys.stdout``).
    ``show_view`` prints ``game.view(seat)`` before each question."""

    name = "human"
    #: view entries not shown (the prompt and the numbered choices already say it)

    def __init__(self, input=None, output=None, show_view: bool = True):
        self.input = input
        self.output = output
        self.show_view = show_view

    def _write(self, text: str) -> None:
        out = self.output if self.output is not None else sys.stdout
        out.write(text + "\n")
        out.flush()

    def _readline(self) -> str:
        stream = self.input if self.input is not None else sys.stdin
        return stream.readline()

    def choose(self, game):
        seat = game.current_player
        actions = _legal(game)
        if self.show_view and seat >= 0:
            self._show_view(game, seat)
        prompt = getattr(game, "prompt", "") or "choose an action"
        self._write(f"{seat_name(seat)} - {prompt}")
        for i, action in enumerate(actions, 1):
            self._write(f"  {i:>3}. {action}")
        while True:
            out = self.output if self.output is not None else sys.stdout
            out.write(f"choice [1-{len(actions)}, action id, or help]: ")
            out.flush()
            line = self._readline()
            if line == "":
                raise AgentError(f"{seat_name(seat)}: end of input while waiting for a choice")
            text = line.strip()
            if text.lower() in ("q", "quit", "exit"):
                raise AgentError(f"{seat_name(seat)} quit the game")
            if text.lower() in ("help", "?", "h", "board", "undo"):  # commands: interpreter/narrate.py
                from .narrate import HELP, _boards

                if text.lower() == "undo":
                    raise UndoRequest(f"{seat_name(seat)}: undo is not possible here")
                self._write(HELP if text.lower() != "board" else (_boards(game, seat) or "(no board)"))
                continue
            picked = self._match(text, actions)
            if picked is not None:
                return picked
            self._write(f"'{text}' is not one of the choices; type a number from 1 to "
                        f"{len(actions)} or an action id such as {actions[0].id}")

    @staticmethod
    def _match(text: str, actions: list):
        if not text:
            return None
        if text.isdigit():
            n = int(text)
            return actions[n - 1] if 1 <= n <= len(actions) else None
        for action in actions:
            if text == action.id:
                return action
        compact = text.replace(" ", "")
        for action in actions:
            if compact == str(action.id).replace(" ", "") or text == str(action):
                return action
        return None

    def _show_view(self, game, seat: int) -> None:
        """What this seat may see: the game's variables one per line (hidden values as the view gives them)."""
        try:
            view = game.view(seat)
        except Exception:  # a view is a courtesy; never fail a decision because of it
            return
        if not isinstance(view, dict):
            if view is not None:
                self._write(f"  {view}")
            return
        from .narrate import _boards  # the boards as this seat sees them (interpreter/render.py)

        drawn = _boards(game, seat)
        if drawn:
            self._write(drawn)
        for key, value in view.get("vars", {}).items():
            if value is None or value == [] or value == {}:
                continue
            self._write(f"  {key}: {json.dumps(value, default=str, separators=(', ', ': '))}")
        for kind, items in (view.get("pieces") or {}).items():  # one line per live piece
            for item in items if isinstance(items, list) else ():
                rest = {k: v for k, v in item.items() if k != "id"} if isinstance(item, dict) else item
                self._write(f"  {kind}#{item.get('id') if isinstance(item, dict) else '?'}: "
                            f"{json.dumps(rest, default=str, separators=(', ', ': '))}")
        for note in view.get("notes", [])[-3:]:
            self._write(f"  note: {note}")


AGENTS = {
    "random": RandomAgent,
    "first": FirstAgent,
    "human": HumanAgent,
}


def make_agent(name: str, seed=None, **options) -> Agent:
    """An agent by name: ``"random"`` (seeded with ``seed``), ``"first"`` or ``"human"``
    (``options`` go to ``HumanAgent``, e.g. ``input``/``output``).  Unknown names raise
    ``ValueError`` listing the known ones."""
    key = name.strip().lower()
    if key == "random":
        return RandomAgent(seed)
    if key == "first":
        return FirstAgent()
    if key == "human":
        return HumanAgent(**options)
    raise ValueError(f"unknown agent '{name}' (known: {', '.join(sorted(AGENTS))})")

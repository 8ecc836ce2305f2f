"""Agents: the things that take decisions in a game.

The protocol (docs/agents.md): an agent is any object with ``choose(game, seat) -> Action``,
returning one of ``game.legal_actions()`` for ``seat``, the seat that must decide now
(``game.current_player``; ``-1`` for a chance decision). Agents never change the game: the caller
applies the action it gets back. ``name`` (optional) is what the narration shows. The agents here
also accept ``choose(game)`` (the seat is then ``game.current_player``).

* ``RandomAgent(seed)`` picks uniformly at random with its own ``random.Random(seed)``, so the
  same seed and the same positions give the same choices, whatever else runs in the process.
* ``FirstAgent()`` always picks the first legal action (handy for deterministic tests).
* ``HumanAgent(input=..., output=...)`` shows the boards and the numbered legal actions and reads a
  choice, or a command: ``help``, ``board``, ``undo`` (raises ``UndoRequest``), ``quit`` (docs/play.md).
* ``ChanceAgent(seed)`` resolves chance decisions (``current_player == -1``) by sampling
  ``game.chance_outcomes()`` with their probabilities.
* ``MCTSAgent(playouts, seed)`` (interpreter/mcts.py): Monte Carlo tree search over
  determinizations, so it never uses what its seat may not see.

Agent specs (``--agents`` of the command line): ``parse_agent_specs(text, players)`` splits
``"mcts:400,random"`` into one spec per seat, and ``make_agent(spec, seed)`` builds the agent of a
spec: ``random``, ``first``, ``human``, ``mcts`` / ``mcts:N`` (N playouts per decision),
``ismcts`` / ``ismcts:N`` (the same agent), ``heuristic`` / ``heuristic:P`` / ``heuristic:P:F`` /
``heuristic:P:F:B`` (interpreter/heuristic.py: a greedy lookahead to the end of the action on the rules'
``heuristic p = EXPR``, P% of decisions random among the near-best, at most F choices followed inside an
action, planned with a beam of width B when B is above 1; ``Bi``: only the choices inside an action), or ``module:Class`` / ``module:Class:ARG`` (a class
importable from Python, constructed as ``Class([ARG], seed=seed)``; ``seed`` only when it takes
one). ``agent_seed(seed, seat)`` derives the per-seat seed used by the command line and by the
simulator, so ``rulelang play --seed S`` replays exactly the game that the simulator played with
game seed ``S``.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import random
import sys

from .agent_protocol import CHANCE, Agent, AgentError, _legal, _sample_chance, seat_name
from .heuristic import MAX_BEAM, HeuristicAgent
from .mcts import DEFAULT_PLAYOUTS, MAX_PLAYOUTS, MCTSAgent
from .render import seat_boards_text

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
    "parse_agent_specs",
    "check_agent_spec",
    "agent_names",
    "agent_seed",
    "seat_name",
]

class UndoRequest(AgentError):
    """A person typed `undo`: the loop of interpreter/narrate.py takes it back (a loop that cannot,
    such as simulate.play_game, ends the game with this one-line message)."""


def agent_seed(seed: int, seat) -> int:
    """A deterministic 63-bit seed for the agent in ``seat`` (an int, or ``"chance"``) of the game
    played with ``seed``.  Stable across processes and Python versions (it does not use ``hash``)."""
    digest = hashlib.sha256(f"rulelang-agent:{seed}:{seat}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class RandomAgent(Agent):
    """Uniformly random among the legal actions, with its own deterministic RNG.

    At a chance decision it samples the chance outcomes by their probabilities instead."""

    name = "random"

    def __init__(self, seed=None):
        self.seed = seed
        self.rng = random.Random(seed)

    def choose(self, game, seat=None):
        if game.current_player == CHANCE:
            return _sample_chance(game, self.rng)
        return self.rng.choice(_legal(game))

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed!r})"


class FirstAgent(Agent):
    """Always the first legal action."""

    name = "first"

    def choose(self, game, seat=None):
        return _legal(game)[0]


class ChanceAgent(Agent):
    """Resolves chance decisions by sampling ``chance_outcomes()`` with a deterministic RNG."""

    name = "chance"

    def __init__(self, seed=None):
        self.seed = seed
        self.rng = random.Random(seed)

    def choose(self, game, seat=None):
        return _sample_chance(game, self.rng)

    def __repr__(self) -> str:
        return f"ChanceAgent(seed={self.seed!r})"


HELP = """commands:
  NUMBER or ACTION-ID  take that action (e.g. 3, or place(1,2))
  board                draw the board(s) again, as you see them
  undo                 take back your previous decision (only while nothing hidden came out since:
                       no die rolled, no card drawn, nothing revealed to you)
  help                 this list
  quit                 stop the game"""


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

    def choose(self, game, seat=None):
        seat = game.current_player if seat is None else seat
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
            if text.lower() in ("help", "?", "h", "board", "undo"):  # commands: HELP
                if text.lower() == "undo":
                    raise UndoRequest(f"{seat_name(seat)}: undo is not possible here")
                self._write(HELP if text.lower() != "board" else (seat_boards_text(game, seat) or "(no board)"))
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
        drawn = seat_boards_text(game, seat)  # the boards as this seat sees them
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
    "mcts": None,  # interpreter.mcts.MCTSAgent, made by _known_agent
    "ismcts": None,  # the same agent: information-set MCTS (determinizing) is what "mcts" does
    "heuristic": None,  # interpreter.heuristic.HeuristicAgent: lookahead to the end of the action on `heuristic p = EXPR`
}

#: what each known agent takes after its name, for the messages
_TAKES = {"mcts": "N", "ismcts": "N", "heuristic": "P"}
MAX_FOLLOW_SPEC = 64  # heuristic:P:F: at most this many choices followed inside an action
# heuristic:P:F:B: the beam width, 1 (greedy completion) to MAX_BEAM; a trailing i plans only inner choices
MAX_SPEC_CHARS = 300


def agent_names() -> str:
    """The known agent names, for messages: ``random, first, human, mcts[:N], ismcts[:N], module:Class[:ARG]``."""
    return ", ".join(f"{n}[:{_TAKES[n]}]" if n in _TAKES else n for n in AGENTS) + ", module:Class[:ARG]"


def _bad(spec, why: str):
    return ValueError(f"agent {str(spec)[:80]!r}: {why} (known agents: {agent_names()})")


def _split(spec):
    """(known name or None, the parts of the spec); raises ValueError for an empty or bad spec."""
    if not isinstance(spec, str):
        raise _bad(spec, f"an agent spec is text, not {type(spec).__name__}")
    text = spec.strip()
    if not text:
        raise _bad(spec, "the spec is empty")
    if len(text) > MAX_SPEC_CHARS:
        raise _bad(spec, f"a spec is at most {MAX_SPEC_CHARS} characters")
    if any(c.isspace() or c == "," for c in text) or not text.isprintable():
        raise _bad(spec, "a spec is one word such as mcts:400 (no spaces or commas)")
    parts = text.split(":")
    head = parts[0].lower()
    return (head if head in AGENTS else None), parts


def _known_agent(head, parts, spec, seed, options):
    args = parts[1:]
    if head in ("mcts", "ismcts"):
        if len(args) > 1:
            raise _bad(spec, f"{head} takes one number, the playouts per decision ({head}:400)")
        playouts = DEFAULT_PLAYOUTS
        if args:
            if not (args[0].isascii() and args[0].isdigit()) or not 1 <= int(args[0]) <= MAX_PLAYOUTS:
                raise _bad(spec, f"the playouts per decision are a whole number from 1 to {MAX_PLAYOUTS:,}, "
                                 f"not {args[0][:20]!r}")
            playouts = int(args[0])
        agent = MCTSAgent(playouts, seed, **options)
        agent.name = head if not args else f"{head}:{playouts}"
        return agent
    if head == "heuristic":
        if len(args) > 3 or (args and not (args[0].isascii() and args[0].isdigit() and 0 <= int(args[0]) <= 100)):
            raise _bad(spec, "heuristic takes one whole percentage from 0 to 100, the share of random decisions "
                             "(heuristic:10), and optionally how many choices inside an action it follows "
                             "(heuristic:10:0) and the beam width planning them (heuristic:10:8:4)")
        if len(args) >= 2:
            if not (args[1].isascii() and args[1].isdigit() and int(args[1]) <= MAX_FOLLOW_SPEC):
                raise _bad(spec, f"the choices followed inside an action are a whole number from 0 to "
                                 f"{MAX_FOLLOW_SPEC}, not {args[1][:20]!r}")
            options = {**options, "follow": int(args[1])}
        if len(args) == 3:
            width, inner = (args[2][:-1], True) if args[2][-1:].lower() == "i" else (args[2], False)
            if not (width.isascii() and width.isdigit() and 1 <= int(width) <= MAX_BEAM):
                raise _bad(spec, f"the beam width is a whole number from 1 to {MAX_BEAM}, optionally followed by "
                                 f"i (plan only the choices inside an action), not {args[2][:20]!r}")
            options = {**options, "beam": int(width), "inner": inner}
        agent = HeuristicAgent(int(args[0]) if args else 0, seed, **options)
        agent.name = spec.lower() if args else "heuristic"
        return agent
    if args:
        raise _bad(spec, f"{head} takes nothing after its name")
    if head == "random":
        return RandomAgent(seed)
    if head == "first":
        return FirstAgent()
    return HumanAgent(**options)


def _import_class(spec, parts):
    """The class named by module:Class[:ARG] (it must have a ``choose`` method), and ARG (or None)."""
    if len(parts) not in (2, 3) or not all(parts[:2]):
        raise ValueError(f"unknown agent {str(spec)[:80]!r} (known agents: {agent_names()}; your own agent is "
                         "module:Class or module:Class:ARG, see docs/agents.md)")
    module_name, attr = parts[0], parts[1]
    if not all(p.isidentifier() for p in module_name.split(".")) or not all(
            p.isidentifier() for p in attr.split(".")):
        raise _bad(spec, "unknown agent; in module:Class, both are Python names (my_bots:Greedy)")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # the current folder too, as `python -m` would search it (a console script does not)
        if exc.name != module_name.split(".")[0] or os.getcwd() in sys.path:
            raise _bad(spec, f"cannot import {module_name}: {exc}") from None
        sys.path.append(os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except Exception as exc2:
            raise _bad(spec, f"cannot import {module_name}: {type(exc2).__name__}: {exc2}") from None
        finally:
            if os.getcwd() in sys.path:
                sys.path.remove(os.getcwd())
    except Exception as exc:
        text = str(exc).strip().splitlines()
        raise _bad(spec, f"importing {module_name} failed: {type(exc).__name__}"
                         + (f": {text[0][:120]}" if text else "")) from None
    obj = module
    for name in attr.split("."):
        obj = getattr(obj, name, None)
        if obj is None:
            raise _bad(spec, f"{module_name} has no {attr}")
    if not inspect.isclass(obj):
        raise _bad(spec, f"{module_name}.{attr} is not a class")
    if not callable(getattr(obj, "choose", None)):
        raise _bad(spec, f"{module_name}.{attr} has no choose(game, seat) method")
    return obj, (parts[2] if len(parts) == 3 else None)


def _takes_seed(factory) -> bool:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "seed" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or p.kind == p.VAR_KEYWORD
               for p in params)


def _user_agent(spec, parts, seed):
    factory, arg = _import_class(spec, parts)
    args = () if arg is None else (arg,)
    kwargs = {"seed": seed} if _takes_seed(factory) else {}
    try:
        agent = factory(*args, **kwargs)
    except Exception as exc:
        text = str(exc).strip().splitlines()
        raise _bad(spec, f"{parts[1]}({', '.join(map(repr, args))}) failed: {type(exc).__name__}"
                         + (f": {text[0][:120]}" if text else "")) from None
    if not callable(getattr(agent, "choose", None)):
        raise _bad(spec, f"{parts[1]}(...) gave an object without a choose(game, seat) method")
    if not isinstance(getattr(agent, "name", None), str):
        try:
            agent.name = ":".join(parts[:2])
        except (AttributeError, TypeError):
            pass
    return agent


def make_agent(spec: str, seed=None, **options) -> Agent:
    """The agent of an agent spec (see the module docstring): ``"random"`` (seeded with ``seed``),
    ``"first"``, ``"human"`` (``options`` go to ``HumanAgent``, e.g. ``input``/``output``),
    ``"mcts"`` / ``"mcts:400"`` / ``"ismcts:400"`` (``options`` go to ``MCTSAgent``, e.g.
    ``max_rollout``), or ``"module:Class"`` / ``"module:Class:ARG"``. A known agent name wins over
    a module of the same name. Raises ``ValueError`` with a one-line message listing the known
    agents for a bad spec."""
    head, parts = _split(spec)
    if head is not None:
        try:
            return _known_agent(head, parts, spec, seed, options)
        except TypeError as exc:  # options the agent does not take
            raise _bad(spec, f"{exc}") from None
    if options:
        raise _bad(spec, f"options {sorted(options)} are only for the built-in agents")
    return _user_agent(spec, parts, seed)


def check_agent_spec(spec: str) -> str:
    """The spec, normalised (known names in lower case), once it is known to make an agent; a user's
    class is imported (not constructed). Raises ``ValueError`` (one line) otherwise."""
    head, parts = _split(spec)
    if head is None:
        _import_class(spec, parts)
        return ":".join(parts)
    if head in ("mcts", "ismcts", "heuristic"):
        _known_agent(head, parts, spec, 0, {})
    elif len(parts) > 1:
        raise _bad(spec, f"{head} takes nothing after its name")
    return ":".join([head] + parts[1:])


def parse_agent_specs(text: str, players: int) -> list:
    """One agent spec per seat from ``"mcts:400,random"``: one spec is for every seat, otherwise there
    must be exactly ``players``. Each spec is checked (``check_agent_spec``) and normalised. Raises
    ``ValueError`` with a one-line message."""
    if isinstance(players, bool) or not isinstance(players, int) or players < 1:
        raise ValueError(f"the number of players must be a whole number from 1, not {players!r}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"no agents given: name one per seat separated by commas, e.g. mcts:200,random "
                         f"(known agents: {agent_names()})")
    specs = [s.strip() for s in text.split(",")]
    if not all(specs):
        raise ValueError(f"agents {text[:80]!r}: an agent name is empty (give names separated by commas, "
                         "e.g. mcts:200,random)")
    if len(specs) == 1:
        specs = specs * players
    elif len(specs) != players:
        raise ValueError(f"agents {text[:80]!r} name {len(specs)} agents for {players} players (give one, for "
                         "every seat, or one per seat)")
    return [check_agent_spec(s) for s in specs]

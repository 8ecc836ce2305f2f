"""Playing a game that people can follow: narration in words, boards drawn, `undo` for a human.

`Session(game, agents, chance_agent=..., say=print).run()` is the decision loop of `rulelang play`
(the same order of decisions as `interpreter.simulate.play_game`, so a bot game is the same game);
on top of it:

* each decision is narrated: `P0 (random): mark row 1, column 2`; a chance decision in words
  (`chance: rolled 5`; a draw is `chance: drew 2` in a game of bots only, and `chance: an item is drawn
  (hidden)` when a person plays, since the view of a draw's outcome belongs to whoever may see it);
  when people play, a decision that one of them may not know (another seat's secret pick, a roll into
  a hidden place: interpreter/who_knows.py, the rule the browser's log follows too) is told without
  the option taken: `P1 (random): choose a card (hidden)`, `chance: a roll (hidden)`;
  the lines the rules `log` are narrated as `  log: ...`;
* boards (interpreter/render.py) are drawn as text after each decision: with one human, as that seat
  sees them (never more), skipped when the human decides next (their prompt draws them); with
  `boards="all"` (a game of bots, `play --boards`) the whole state;
* a human's `undo` (HumanAgent raises `UndoRequest`) goes back to that seat's previous decision, unless
  something the seat had not known came out since: a chance event (a die rolled, an item drawn: a
  chance decision in the log, or the game's random state moved) or a `reveal` to that seat. A refused
  undo says why and asks again.

`narrate_chance(prompt, action, hidden)` and `new_notes(before, after)` are the pieces a web page
(issue 14) can reuse.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from .agents import CHANCE, AgentError, HumanAgent, UndoRequest, seat_name
from .render import seat_boards_text
from .simulate import DecisionLimitExceeded
from .who_knows import seats_that_know

if TYPE_CHECKING:
    from .agent_protocol import Agent
    from .game import Action, Game

KNOW_SECONDS = 0.5  # CPU seconds per decision spent at most on whether the people at the table may know it


HIDDEN_CHANCE = {"roll": "a roll", "draw": "an item is drawn"}


class _Hidden:
    """A decision narrated without the option taken (a person at the table may not know it)."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt


def narrate_chance(prompt: str, action: Any, hidden: bool) -> str:
    """A chance decision in words: `prompt` is the pending decision's prompt before it ("roll", "draw")."""
    if prompt == "roll":
        return f"chance: rolled {action}"
    if prompt == "draw":
        return "chance: an item is drawn (hidden)" if hidden else f"chance: drew {action}"
    return f"chance: {action}"


def new_notes(before: list[str], after: list[str]) -> list[str]:
    """The notes (lines the rules `log`) in `after` that were not in `before` (the list keeps its last
    lines only, so the old head may be gone)."""
    if len(after) >= len(before) and after[:len(before)] == before:
        return after[len(before):]
    for k in range(1, len(before) + 1):  # the head was cut: after starts with the tail of before
        tail = before[k:]
        if after[:len(tail)] == tail:
            return after[len(tail):]
    return list(after)


def revealed_since(old: Game, new: Game, seat: int) -> Optional[str]:
    """Why `seat` may not go back from `new` to the earlier state `old` (a one-line reason), or None."""
    for e in new.log[len(old.log):]:
        if e.get("player") == CHANCE:  # (which outcome is not said: a draw's may be hidden from this seat)
            return "a chance outcome (a roll or a draw) came out since your previous decision"
    if getattr(old, "rng", None) != getattr(new, "rng", None):
        return "a random event (a die rolled, an item drawn) was resolved since your previous decision"
    old_known = getattr(old, "known", {})
    for name, places in getattr(new, "known", {}).items():
        before = old_known.get(name, {})
        for path, seats in places.items():
            if (seat in seats or -1 in seats) and not (seat in before.get(path, ()) or -1 in before.get(path, ())):
                return f"something of {name.lstrip('#')} was revealed to you since your previous decision"
    return None


class Session:
    """One game played by `agents` (one per seat) with narration; `game` is the current state (a new
    object after an undo). `boards`: None (no drawings), "human" (the one human's view) or "all"."""

    def __init__(self, game: Game, agents: Sequence[Agent], *, chance_agent: Optional[Agent] = None,
                 max_decisions: int = 100_000, say: Callable[[str], Any] = print, boards: Optional[str] = None) -> None:
        self.game = game
        self.agents = list(agents)
        self.chance_agent = chance_agent
        self.max_decisions = max_decisions
        self.say = say
        self.humans = [s for s, a in enumerate(self.agents) if isinstance(a, HumanAgent)]
        self.boards = boards
        self.history: list[tuple[int, Game]] = []  # (seat, state before that seat's decision), one per decision a human took
        self.applied = 0
        self._drawn = 0  # hidden draws not narrated yet: told as one line ("3 items are drawn")

    def _view_seat(self) -> Union[int, None, bool]:
        if self.boards == "all":
            return None
        return self.humans[0] if len(self.humans) == 1 else False

    def run(self) -> Game:
        game = self.game
        while not game.is_over():
            if self.applied >= self.max_decisions:
                raise DecisionLimitExceeded(f"the game did not end within {self.max_decisions} decisions")
            seat = game.current_player
            if seat != CHANCE:
                self._flush()
            if seat == CHANCE:
                if self.chance_agent is None:
                    raise AgentError("a chance decision is pending but no chance agent was given")
                agent = self.chance_agent
            elif isinstance(seat, int) and 0 <= seat < len(self.agents):
                agent = self.agents[seat]
            else:
                raise AgentError(f"the game is not over but its current player is {seat!r}")
            prompt = getattr(game, "prompt", "")
            notes = list(getattr(game, "notes", ()))
            human = seat in self.humans
            state = game.clone() if human and hasattr(game, "clone") else None
            told = self._tellable(game, seat)
            try:
                action = agent.choose(game, seat)
            except UndoRequest:
                game = self._undo(agent, seat, game)
                continue
            if human and state is not None:
                self.history.append((seat, state))
            before = len(game.log)
            game.apply(action)
            self.applied += 1
            self._narrate(seat, agent, told(action, game) if told else action, prompt,
                          game.log[before + 1:], notes, game)
        self._flush()
        self.game = game
        return game

    def _tellable(self, game: Game, seat: int) -> Optional[Callable[[Action, Game], Union[Action, _Hidden]]]:
        """When people play and one of them (not the one deciding) may not know what is chosen now: a
        function of (the action, the game after it) giving what to narrate — the action, or a _Hidden
        in its place when a person at the table may not know it. None when nothing needs hiding."""
        others = [h for h in self.humans if h != seat]
        if not others or not hasattr(game, "clone"):
            return None
        before = game.clone()
        options = game.legal_actions()

        def told(action: Action, after: Game) -> Union[Action, _Hidden]:
            chosen = action if hasattr(action, "id") else next((a for a in options if a.id == action), None)
            if chosen is None:
                return _Hidden(getattr(before, "prompt", ""))
            know = seats_that_know(before, options, chosen, seat, after, seconds=KNOW_SECONDS)
            return action if all(h in know for h in others) else _Hidden(getattr(before, "prompt", ""))
        return told

    def _flush(self) -> None:
        if self._drawn:
            self.say(narrate_chance("draw", None, True) if self._drawn == 1
                     else f"chance: {self._drawn} items are drawn (hidden)")
            self._drawn = 0

    def _undo(self, agent: Agent, seat: int, game: Game) -> Game:
        tell = agent._write if hasattr(agent, "_write") else self.say
        for k in range(len(self.history) - 1, -1, -1):
            if self.history[k][0] == seat:
                break
        else:
            tell("undo: there is no earlier decision of yours to take back")
            return game
        old = self.history[k][1]
        why = revealed_since(old, game, seat)
        if why is not None:
            tell(f"undo refused: {why}, so going back would let you choose again knowing it")
            return game
        del self.history[k:]
        self.game = game = old.clone()
        tell(f"undo: your previous decision is taken back (the game is back after {len(game.log)} decisions)")
        return game

    def _narrate(self, seat: int, agent: Agent, action: Any, prompt: str, more: list[dict[str, Any]],
                 notes: list[str], game: Game) -> None:
        say = self.say
        hidden = bool(self.humans)
        added = new_notes(notes, list(getattr(game, "notes", ())))
        if seat == CHANCE and prompt == "draw" and hidden:
            self._drawn += 1  # told with the next line that is not a hidden draw
            if more or added:
                self._flush()
        else:
            self._flush()
            if isinstance(action, _Hidden):
                say(f"chance: {HIDDEN_CHANCE.get(prompt, 'a chance event')} (hidden)" if seat == CHANCE
                    else f"{seat_name(seat)} ({agent.name}): {prompt or 'a decision'} (hidden)")
            elif seat == CHANCE:
                say(narrate_chance(prompt, action, hidden))
            else:
                say(f"{seat_name(seat)} ({agent.name}): {action}")
        for e in more:  # chance events the game resolved on its own (the fake games of the tests log them)
            say(f"{seat_name(e['player'])}: {e['action']}")
        for note in added:
            say(f"  log: {note}")
        if not self.boards or (not game.is_over() and game.current_player == CHANCE):
            return  # another chance decision follows: the boards are drawn after it
        view = self._view_seat()
        if view is False:
            return
        if self.boards != "all" and not game.is_over() and game.current_player in self.humans:
            return  # the human decides next: their prompt draws the boards
        self._flush()
        text = seat_boards_text(game, view)
        if text:
            say(text)

"""Which seats may know the option a decision took: the rule of views (docs/language.md, "Hidden
information and views") applied to one decision, for whatever tells people of decisions one by one
(`rulelang play`'s narration, the browser's log of a table).

A seat knows the option taken when its view after the decision tells that option apart from every
other option that was offered (each applied to a copy of the game before). So a secret pick (`choose
... by p` into a place visible to its owner) is known to the one who chose only; a draw into a hand is
known to the hand's owner; a roll onto the table, or a card played face up, to everyone.
"""
from __future__ import annotations

import time
from typing import Any, Protocol, Sequence

SEEN_SECONDS = 2.0  # CPU seconds spent at most per decision working out which seats may know it
SEEN_OPTIONS = 5_000  # options compared at most per decision (beyond: the decision is hidden from the others)


class _Game(Protocol):  # what is used of interpreter.game.Game (typed here to keep the layers apart)
    n: int
    over: bool
    error: Any
    end_reason: Any

    def view(self, seat: int | None = ...) -> dict: ...
    def clone(self) -> "_Game": ...
    def apply(self, action: Any) -> Any: ...
    def is_over(self) -> bool: ...


def view_of(game: _Game, seat: int | None) -> dict:
    """``game.view(seat)``; of a finished game whose scoring fails (view() would raise the scoring's
    error), the view without scores and winners."""
    from .errors import GameError

    try:
        return game.view(seat)
    except GameError:
        if not game.is_over():
            raise
    over, game.over = game.over, False
    try:
        view = game.view(seat)
    finally:
        game.over = over
    view["over"] = True
    view["end_reason"] = game.end_reason
    return view


def seats_that_know(before: _Game, options: Sequence[Any], chosen: Any, actor: int, after: _Game,
                    seconds: float = SEEN_SECONDS) -> list[int]:
    """The seats that may know which of ``options`` (the legal options in ``before``) was ``chosen``,
    given the game ``after`` it: the one who chose (``actor``; -1 for chance: nobody in particular), and
    each other seat whose view after the decision tells the chosen option apart from every other. A
    seat not yet decided when ``seconds`` of process time have passed, or when there are more than
    SEEN_OPTIONS options to compare, is not told (hidden is the safe side)."""
    deadline = time.process_time() + seconds
    seen = {actor} if actor >= 0 else set()
    undecided = [t for t in range(after.n) if t not in seen]
    if not undecided:
        return sorted(seen)
    others = [a for a in options if a.id != chosen.id]
    if len(others) > SEEN_OPTIONS or after.error is not None:
        return sorted(seen)
    views = {t: view_of(after, t) for t in undecided}
    for alt in others:
        if not undecided:
            break
        if time.process_time() > deadline:
            return sorted(seen)  # not decided in time: hidden from whoever is left
        other = before.clone()
        try:
            other.apply(alt)
        except Exception:  # (GameError, IllegalAction, ...) that option would have stopped the game:
            continue  # an outcome different from the one taken, for everyone
        undecided = [t for t in undecided if view_of(other, t) != views[t]]
    return sorted(seen | set(undecided))

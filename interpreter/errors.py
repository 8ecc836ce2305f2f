"""Errors a running game raises. Both carry one-line messages written for the person at the table."""


class GameError(Exception):
    """The rules failed at run time (a step budget, a trigger cascade, a stuck position, a bad save file)."""


class IllegalAction(ValueError):
    """The action is not legal now; the game is unchanged."""

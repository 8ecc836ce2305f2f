"""The engine: a compiled Ruleset (interpreter/ruleset.py) and the Game it runs (interpreter/game.py).

This module keeps their names importable from one place (`from interpreter.engine import Ruleset`)."""
from __future__ import annotations

from .game import BACKENDS, DEFAULT_CASCADE_DEPTH, DEFAULT_STEP_BUDGET, TIME_CHECK_STEPS, Action, Game  # noqa: F401
from .runtime import MAX_FRAMES, Frame  # noqa: F401
from .saves import MAX_NOTE_CHARS, MAX_NOTES, SAVE_FORMAT  # noqa: F401
from .ruleset import Ruleset  # noqa: F401

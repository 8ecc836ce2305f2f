"""The engine: a compiled Ruleset (interpreter/ruleset.py) and the Game it runs (interpreter/game.py).

This module keeps their names importable from one place (`from interpreter.engine import Ruleset`)."""
from __future__ import annotations

from .game import (BACKENDS, DEFAULT_CASCADE_DEPTH, DEFAULT_STEP_BUDGET, MAX_FRAMES, MAX_NOTE_CHARS,  # noqa: F401
                   MAX_NOTES, SAVE_FORMAT, TIME_CHECK_STEPS, Action, Frame, Game, _default, _hidden, _load_known,
                   _shown)
from .ruleset import Ruleset  # noqa: F401

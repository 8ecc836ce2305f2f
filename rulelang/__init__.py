"""rulelang: a declarative rules language for board games, and its interpreter.

    import rulelang
    rules = rulelang.load("games/examples/connect4.rules")
    game = rules.new_game(players=2, seed=1)
    while not game.is_over():
        game.apply(game.legal_actions()[0])

See docs/api.md and docs/language.md.
"""
from .api import Placeholder, check, load, loads
from .diagnostics import Diagnostic, RuleError

from interpreter.errors import GameError, IllegalAction  # noqa: E402  (runtime errors are part of the API)

__all__ = ["load", "loads", "check", "RuleError", "Diagnostic", "GameError", "IllegalAction", "Placeholder"]
__version__ = "0.1.0"

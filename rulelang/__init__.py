"""rulelang: a declarative rules language for board games, and its interpreter.

    import rulelang
    rules = rulelang.load("games/examples/connect4.rules")
    game = rules.new_game(players=2, seed=1)
    while not game.is_over():
        game.apply(game.legal_actions()[0])

See docs/api.md and docs/language.md.
"""
__all__ = ["load", "loads", "check", "RuleError", "Diagnostic", "GameError", "IllegalAction", "Placeholder"]
__version__ = "0.1.0"

# The names of the API are imported on first use (PEP 562): `rulelang check` answered from the
# cache, and `rulelang --version`, need none of the parser, checker or interpreter.
_WHERE = {
    "load": "rulelang.api", "loads": "rulelang.api", "check": "rulelang.api", "Placeholder": "rulelang.api",
    "RuleError": "rulelang.diagnostics", "Diagnostic": "rulelang.diagnostics",
    "GameError": "interpreter.errors", "IllegalAction": "interpreter.errors",  # run-time errors are part of the API
}
_SUBMODULES = {"api", "ast", "cache", "checker", "checker_pieces", "cli", "diagnostics", "explore", "library",
               "lints", "parser", "program", "types"}


def __getattr__(name):
    import importlib

    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))

"""How a lint (a warning about rules that are legal but probably not what the author meant) is registered.

Each module of lints keeps its own list, in the order its functions are written:

    LINTS, lint = registry()

    @lint("W301")
    def can_end(checker, code): ...

rulelang/lints.py puts the lists together in the order `rulelang check` runs them.
"""
from __future__ import annotations


def registry():
    """A new, empty list of (code, function) pairs, and the decorator that appends a function to it."""
    lints = []

    def lint(code):
        def register(function):
            lints.append((code, function))
            return function
        return register
    return lints, lint

"""How a lint (a warning about rules that are legal but probably not what the author meant) is registered.

Each module of lints keeps its own list, in the order its functions are written:

    LINTS, lint = registry()

    @lint("W301")
    def can_end(checker, code): ...

rulelang/lints.py puts the lists together in the order `rulelang check` runs them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol

from .diagnostics import ERROR

if TYPE_CHECKING:
    from . import ast as A
    from . import types as T
    from .diagnostics import Diagnostic
    from .program import Program


class CheckResults(Protocol):
    """The finished checker (rulelang/checker.py), as the lints read it: the rules, what the check found,
    and its reporting. (A protocol, so that the lints, which the checker runs, do not import it back.)"""

    prog: Program
    diags: list[Diagnostic]
    globals: dict[str, tuple[str, T.Type]]  # name -> (what it refers to, its type)
    calls: dict[str, set[str]]  # caller -> the procedures (and "action:NAME") it calls or offers
    offered: set[str]  # the actions some offer lists
    emitted: set[str]  # the events some emit names
    ends: list[tuple[str, A.Span]]  # (reason, where) of every end_game and ending
    endless_loops: list[A.Stmt]  # loops with no break, return or end_game inside
    var_reads: set[str]
    var_writes: set[str]

    def err(self, span: A.Span, code: str, message: str, hint: str = "", severity: str = ERROR) -> None: ...

    def warn(self, span: A.Span, code: str, message: str, hint: str = "") -> None: ...


# a lint: given the finished checker and its code, it reports through checker.warn / checker.err
Lint = Callable[[CheckResults, str], None]


def registry() -> tuple[list[tuple[str, Lint]], Callable[[str], Callable[[Lint], Lint]]]:
    """A new, empty list of (code, function) pairs, and the decorator that appends a function to it."""
    lints: list[tuple[str, Lint]] = []

    def lint(code: str) -> Callable[[Lint], Lint]:
        def register(function: Lint) -> Lint:
            lints.append((code, function))
            return function
        return register
    return lints, lint

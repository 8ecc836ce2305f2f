"""Where the checker stands while it reads a rule: the names in scope (Scope), what a statement or
expression there may do (Context), and when an assigned value must be checked as it is stored (_loose)."""
from __future__ import annotations

from typing import Any

from . import types as T


class Scope:
    def __init__(self, parent: Scope | None = None):
        self.parent = parent
        # what each name means: the checker binds (kind, type), the symbol index (symbols.py) its symbols
        self.names: dict[str, Any] = {}

    def lookup(self, name: str) -> Any:
        s: Scope | None = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None

    def all_names(self) -> set[str]:
        out: set[str] = set()
        s: Scope | None = self
        while s is not None:
            out |= set(s.names)
            s = s.parent
        return out


def _loose(value_type: T.Type, target_type: T.Type, depth: int = 0) -> bool:
    """Whether a value of `value_type` stored where `target_type` is declared may not be one: the types
    are compatible only loosely (a value of unknown type, a number stored as a player, a node as a number
    or a text), so the runtime checks the value when it is stored (docs/language.md, "Types")."""
    if depth > 20:
        return True
    v, t = T.base(value_type), T.base(target_type)
    if t.name in ("any", "func", "none") or t.kind == "range":  # (a range has its own run-time check)
        return False
    if v.name == "any":
        return True
    if t.name == "player" and v.name == "int":
        return True
    if v.name == "node" and t.name in ("int", "str"):
        return True
    if v.args and t.args and len(v.args) == len(t.args):
        return any(_loose(a, b, depth + 1) for a, b in zip(v.args, t.args))
    return False


class Context:
    """Where a statement or expression stands: what it may do."""

    def __init__(self, kind: str, *, has_me: bool = False, in_loop: bool = False, scenario: bool = False,
                 pure: bool = False, name: str = ""):
        self.kind = kind  # setup flow phase procedure action trigger function scenario const ...
        self.has_me = has_me
        self.in_loop = in_loop
        self.scenario = scenario
        self.pure = pure
        self.name = name

    def but(self, **kw: Any) -> Context:
        c = Context(self.kind, has_me=self.has_me, in_loop=self.in_loop, scenario=self.scenario, pure=self.pure,
                    name=self.name)
        for k, v in kw.items():
            setattr(c, k, v)
        return c

"""Checking a value against a type of the checker (rulelang/types.py): the values of a save, and an
assignment the checker could vouch for only loosely (runtime.loose_check). A value that does not fit
raises Bad, naming where it is and what it should have been."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Collection, Mapping, NoReturn, Optional, Protocol

from rulelang import ast as A

from .builtins import MAX_INT
from .values import Pile, Value, fmt

if TYPE_CHECKING:
    from rulelang.program import Program
    from rulelang.types import Type


class _Nodes(Protocol):
    """A board (interpreter/boards.py), as far as the checks read it."""

    @property
    def nodes(self) -> Collection[Value]: ...


class CheckedRules(Protocol):
    """The compiled rules (interpreter/ruleset.py's Ruleset), as far as the checks read them: the declarations,
    each table's rows, each board's nodes. (A protocol: the ruleset stands above this module.)"""

    @property
    def program(self) -> Program: ...

    @property
    def table_rows(self) -> Mapping[str, Collection[str]]: ...

    @property
    def boards(self) -> Mapping[str, _Nodes]: ...


class Bad(Exception):
    """A value is wrong (a field of a save, or a value the rules store): `path` names it, `message` says
    what is wrong."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path} {message}" if path else message)


def _show(v: object) -> str:
    if isinstance(v, str):
        return json.dumps(v[:40] + ("..." if len(v) > 40 else ""), ensure_ascii=False)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        s = str(v)
        return s if len(s) <= 30 else s[:12] + f"... ({len(s)} digits)"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list):
        return f"a list of {len(v)}"
    if isinstance(v, dict):
        return "an object"
    return fmt(v)[:40]


def _bad(path: str, v: object, expected: str) -> NoReturn:
    raise Bad(path, f"is {_show(v)}, not {expected}")


def _int(path: str, v: Value, low: Optional[int] = None, high: Optional[int] = None,
         expected: Optional[str] = None) -> int:
    if v.__class__ is not int or (low is not None and v < low) or (high is not None and v > high):
        if expected is None:
            if low is None:
                expected = "a whole number"
            elif high is None:
                expected = f"a whole number of {low} or more"
            else:
                expected = f"a whole number from {low} to {high}"
        _bad(path, v, expected)
    return v


def _bool(path: str, v: Value) -> bool:
    if v is not True and v is not False:
        _bad(path, v, "true or false")
    return v


class ValueTypes:
    """Checks decoded values against the checker's types (rulelang/types.py)."""

    lenient = False

    def __init__(self, rs: CheckedRules, n: int) -> None:
        self.rs = rs
        self.n = n
        decls = rs.program.decls
        self.members = {name: frozenset(d.members) for name, d in decls.items() if isinstance(d, A.EnumDecl)}
        self.rows: dict[str, set[str]] = {}  # record -> the rows of its tables
        for tname, rows in rs.table_rows.items():
            self.rows.setdefault(decls[tname].record, set()).update(rows)
        self.nodes: set[Value] = set()
        for b in rs.boards.values():
            self.nodes.update(b.nodes)

    def check(self, ty: Type, v: Value, path: str, lenient: Optional[bool] = None) -> None:
        """`lenient`: a player or a range only needs to be a whole number (a local the checker typed so, which
        the rules could have given any number: `let q = if c then p else -1`). None: as the outer call."""
        if lenient is not None:
            old, self.lenient = self.lenient, lenient
            try:
                return self.check(ty, v, path)
            finally:
                self.lenient = old
        if v is None:
            return  # none fits every type
        name, kind = ty.name, ty.kind
        if self.lenient and (kind == "range" or name == "player"):
            _int(path, v, -MAX_INT + 1, MAX_INT - 1, expected="a whole number")
        elif kind == "range":
            _int(path, v, ty.low, ty.high)
        elif kind == "enum":
            if not isinstance(v, str) or v not in self.members.get(name, ()):
                _bad(path, v, f"a {name}")
        elif kind == "record":
            if not isinstance(v, str) or v not in self.rows.get(name, ()):
                _bad(path, v, f"a {name} (a row of its table)")
        elif name == "int":
            _int(path, v, expected="an int")
            if not -MAX_INT < v < MAX_INT:
                raise Bad(path, f"is {_show(v)}, beyond the numbers rules compute (less than 2^62 in size)")
        elif name == "bool":
            _bool(path, v)
        elif name == "str":
            if not isinstance(v, str):
                _bad(path, v, "a text")
        elif name == "player":
            _int(path, v, 0, self.n - 1, expected=f"a player (0 to {self.n - 1})")
        elif name == "node":
            try:
                ok = v in self.nodes and v.__class__ is not bool and not (
                    v.__class__ is tuple and any(x.__class__ is bool for x in v))  # (0, true) is not (0, 1)
            except TypeError:
                ok = False
            if not ok:
                _bad(path, v, "a node of a board")
        elif name == "board":
            if v.__class__.__name__ != "Board":
                _bad(path, v, "a board")
        elif name == "none":
            _bad(path, v, "none")
        elif name in ("list", "set", "deck", "bag", "tuple"):
            self._collection(ty, v, path)
        elif name == "map":
            if not isinstance(v, dict):
                _bad(path, v, "a map")
            if len(ty.args) == 2:
                for k, x in v.items():
                    self.check(ty.args[0], k, f"{path} key {fmt(k)[:40]}")
                    self.check(ty.args[1], x, f"{path}[{fmt(k)[:40]}]")
        # any, func: every value

    def check_kind(self, ty: Type, v: Value, path: str) -> None:
        """The kind of value `ty` describes (a whole number, a text, a list ...), not what is inside it."""
        if v is None:
            return
        name, kind = ty.name, ty.kind
        if kind == "range" or name in ("int", "player"):
            _int(path, v, -MAX_INT + 1, MAX_INT - 1, expected="a whole number")
        elif name == "bool":
            _bool(path, v)
        elif name == "str":
            if not isinstance(v, str):
                _bad(path, v, "a text")
        elif name in ("list", "set", "deck", "bag", "tuple"):
            if not isinstance(v, (tuple, frozenset, Pile)) and not (isinstance(v, dict) and not v):
                _bad(path, v, f"a {name}")
        elif name == "map":
            if not isinstance(v, dict):
                _bad(path, v, "a map")
        elif kind in ("enum", "record") or name in ("node", "board"):
            self.check(ty, v, path, lenient=True)

    def _collection(self, ty: Type, v: Value, path: str) -> None:
        name = ty.name
        if name == "tuple":
            if not isinstance(v, tuple) or (ty.args and len(v) != len(ty.args)):
                _bad(path, v, f"a tuple of {len(ty.args)}" if ty.args else "a tuple")
            for i, (t, x) in enumerate(zip(ty.args, v)):
                self.check(t, x, f"{path}[{i}]")
            return
        if name == "list":
            ok = isinstance(v, tuple)
        elif name == "set":
            ok = isinstance(v, (frozenset, tuple)) or (isinstance(v, dict) and not v)
        else:  # deck, bag: a pile of that kind, or a list (the rules fill a deck or bag with a list)
            ok = (isinstance(v, Pile) and v.kind == name) or isinstance(v, tuple)
        if not ok:
            _bad(path, v, f"a {name}")
        if ty.args and not isinstance(v, dict):
            items = sorted(v, key=lambda x: fmt(x)) if isinstance(v, frozenset) else list(v)
            for i, x in enumerate(items):
                self.check(ty.args[0], x, f"{path}[{i}]")

"""The checker's types. Values at run time are plain Python data; these describe them statically.

`any` is the escape hatch (unknown or mixed); `none` fits every type (an absent value).
"""
from __future__ import annotations

from typing import Sequence

import attrs


@attrs.frozen
class Type:
    name: str  # int bool str player node none any board func | enum/record name | list set map deck bag tuple range
    args: tuple[Type, ...] = ()
    low: int = 0
    high: int = 0
    kind: str = "basic"  # basic, enum, record, generic, range

    def __str__(self) -> str:
        if self.kind == "range":
            return f"{self.low}..{self.high}"
        if self.args:
            return f"{self.name}[{', '.join(str(a) for a in self.args)}]"
        return self.name


INT = Type("int")
BOOL = Type("bool")
STR = Type("str")
PLAYER = Type("player")
NODE = Type("node")
NONE = Type("none")
ANY = Type("any")
BOARD = Type("board")
FUNC = Type("func")

# the type of an expression that already has an error (an unknown name or function): it fits everywhere and
# behaves as `any`, so that one mistake gives one diagnostic and no follow-on errors
ERROR = Type("any", kind="error")

BASIC = {"int": INT, "bool": BOOL, "str": STR, "player": PLAYER, "node": NODE, "any": ANY}
GENERIC_ARITY = {"list": 1, "set": 1, "map": 2, "deck": 1, "bag": 1, "tuple": -1}


def list_of(t: Type) -> Type:
    return Type("list", (t,), kind="generic")


def set_of(t: Type) -> Type:
    return Type("set", (t,), kind="generic")


def map_of(k: Type, v: Type) -> Type:
    return Type("map", (k, v), kind="generic")


def tuple_of(*ts: Type) -> Type:
    return Type("tuple", tuple(ts), kind="generic")


def rng(lo: int, hi: int) -> Type:
    return Type("int", low=lo, high=hi, kind="range")


def base(t: Type) -> Type:
    """Forget bounds: 0..5 is an int."""
    return INT if t.kind == "range" else t


def is_int(t: Type) -> bool:
    return t.name in ("int", "any")


def is_any(t: Type) -> bool:
    return t.name == "any"


def element(t: Type) -> Type:
    """The element type of a collection (a map's keys), or any."""
    if t.name in ("list", "set", "deck", "bag") and t.args:
        return t.args[0]
    if t.name == "map" and t.args:
        return t.args[0]
    if t.name == "tuple":
        return join_all(t.args) if t.args else ANY
    return ANY


def is_collection(t: Type) -> bool:
    return t.name in ("list", "set", "map", "deck", "bag", "tuple", "any")


def compatible(a: Type, b: Type) -> bool:
    """Can a value of type a stand where b is expected (or be compared with b)?"""
    a, b = base(a), base(b)
    if a.name in ("any", "none") or b.name in ("any", "none"):
        return True
    if a.name == "node" or b.name == "node":
        # nodes are names of a graph board or coordinate tuples of a grid
        other = b if a.name == "node" else a
        return other.name in ("node", "str", "tuple", "int") or other.kind == "enum"
    if a.name == "player" and b.name == "int" or a.name == "int" and b.name == "player":
        return True
    if a.name == "list" and b.name in ("deck", "bag", "set"):
        # a list literal fills a deck (in order), a bag or a set
        return not a.args or not b.args or compatible(a.args[0], b.args[0])
    if a.name != b.name:
        return False
    if a.name == "tuple" and a.args and b.args and len(a.args) != len(b.args):
        return False  # a pair never stands for a triple
    if a.args and b.args and len(a.args) == len(b.args):
        return all(compatible(x, y) for x, y in zip(a.args, b.args))
    return True


def compatible_exact(a: Type, b: Type) -> bool:
    """compatible(), except that a list is not taken for a set, deck or bag (no conversion happens)."""
    a2, b2 = base(a), base(b)
    if a2.name == "list" and b2.name in ("deck", "bag", "set"):
        return False
    if a2.args and b2.args and a2.name == b2.name and len(a2.args) == len(b2.args):
        return all(compatible_exact(x, y) for x, y in zip(a2.args, b2.args))
    return compatible(a, b)


def join(a: Type, b: Type) -> Type:
    if a.name == "none":
        return b
    if b.name == "none":
        return a
    if a.name == "any" or b.name == "any":
        return ANY
    a2, b2 = base(a), base(b)
    if a2 == b2:
        return a2 if a != b else a
    if compatible(a2, b2):
        if a2.args and b2.args and len(a2.args) == len(b2.args):
            return Type(a2.name, tuple(join(x, y) for x, y in zip(a2.args, b2.args)), kind=a2.kind)
        return a2 if not a2.args else b2
    return ANY


def join_all(ts: Sequence[Type]) -> Type:
    out = NONE
    for t in ts:
        out = join(out, t)
    return ANY if out.name == "none" and ts else out

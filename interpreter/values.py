"""Run-time values: how the interpreter represents, orders, prints and serializes them.

Values are immutable Python data: int, bool, str (enum members, table rows, graph nodes), None,
tuple (lists and coordinates), frozenset (sets), dict (maps; never changed in place: every write
makes a new dict), and Pile (decks and bags). Players are ints (seats, 0-based).
"""
from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING, Any, Collection, Iterable, Iterator, Mapping, Optional

if TYPE_CHECKING:
    from rulelang.types import Type

# A run-time value: int, bool, str, None, tuple, frozenset, dict, Pile, Piece or a Board (the docstring
# above). Any, not their union: the hot paths tell the kinds apart by `v.__class__ is ...`, on which type
# checkers do not narrow, and a value is read whole by code that knows its kind from the rules' types.
Value = Any
# JSON data as json.loads gives it and json.dumps takes it (lists, dicts, str, int, bool, None)
Json = Any

MAX_SIZE = 1_000_000  # the most items one value may hold in all, shared parts counted each time they appear
MAX_DEPTH = 100  # the deepest a value may nest (a list in a list in a list ...)


class Pile:
    """A deck or a bag. `known` is an ordered part (top first); `pool` is an unordered part whose
    items come out in random order (a shuffled deck, or every bag). Immutable."""

    __slots__ = ("kind", "known", "pool")

    def __init__(self, kind: str, known: Iterable[Value] = (), pool: Iterable[Value] = ()) -> None:
        self.kind = kind
        self.known = tuple(known)
        self.pool = tuple(sort_values(tuple(pool)))

    def items(self) -> tuple[Value, ...]:
        return self.known + self.pool

    def __len__(self) -> int:
        return len(self.known) + len(self.pool)

    def __iter__(self) -> Iterator[Value]:
        return iter(self.known + self.pool)

    def __contains__(self, x: object) -> bool:
        return x in self.known or x in self.pool

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pile) and (self.kind, self.known, self.pool) == (other.kind, other.known, other.pool)

    def __hash__(self) -> int:
        return hash((self.kind, self.known, self.pool))

    def __repr__(self) -> str:
        return f"Pile({self.kind}, {self.known}, {self.pool})"


def ordered_pile(kind: str, known: tuple[Value, ...], pool: tuple[Value, ...]) -> Pile:
    """A Pile of parts already in a Pile's order (`known` a tuple, `pool` a tuple sorted as sort_values sorts):
    what Pile(kind, known, pool) makes, without sorting the pool again."""
    p = _new_object(Pile)
    p.kind = kind
    p.known = known
    p.pool = pool
    return p


_new_object = object.__new__


class Piece:
    """A reference to one piece (see `piece` declarations): its kind and its id. Equal and hashed by
    (kind, id); the piece's fields live in the game state (interpreter/pieces.py)."""

    __slots__ = ("kind", "id")

    def __init__(self, kind: str, id: int) -> None:
        self.kind = kind
        self.id = id

    def __eq__(self, other: Any) -> bool:  # (Any: read by its class first, as in the hot paths)
        return other.__class__ is Piece and other.kind == self.kind and other.id == self.id

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("$piece", self.kind, self.id))

    def __repr__(self) -> str:
        return f"{self.kind}#{self.id}"


def skey(v: Value) -> tuple[Any, ...]:
    """A total order over values of mixed kinds, used for every canonical sort."""
    c = v.__class__
    if c is int:  # the common kinds first (a bool's class is bool, not int)
        return (2, v)
    if c is str:
        return (3, v)
    if v is None:
        return (0,)
    if v is True or v is False:
        return (1, int(v))
    if isinstance(v, int):
        return (2, v)
    if isinstance(v, str):
        return (3, v)
    if isinstance(v, tuple):
        return (4, tuple(map(skey, v)))
    if isinstance(v, frozenset):
        return (5, tuple(sorted(map(skey, v))))
    if isinstance(v, dict):
        return (6, tuple(sorted((skey(k), skey(x)) for k, x in v.items())))
    if isinstance(v, Pile):
        return (7, v.kind, tuple(map(skey, v.known)), tuple(map(skey, v.pool)))
    if v.__class__ is Piece:
        return (8, v.kind, v.id)
    return (9, repr(v))


def sort_values(xs: Collection[Value]) -> list[Value]:
    """sorted(xs, key=skey) for a collection (walked twice: not an iterator). When every item is an int
    (no bool), or every item is a text, or every item a list of ints only (or of texts only), skey orders
    them as Python does, so they are sorted without it."""
    kinds = set(map(type, xs))
    if len(kinds) == 1:
        if int in kinds or str in kinds:
            return sorted(xs)
        if tuple in kinds:  # lists (coordinates) of ints only, or of texts only: compared item by item alike
            inner = set(map(type, chain.from_iterable(xs)))
            if len(inner) <= 1 and inner <= {int, str}:
                return sorted(xs)
    return sorted(xs, key=skey)


_INT_OR_STR = frozenset({int, str})


def fmt(v: Value) -> str:
    """The canonical compact text of a value, used in action ids: 3, teal, (0,2), {a,b}."""
    c = v.__class__
    if c is str:
        return v
    if c is int:
        return str(v)
    if c is tuple and _INT_OR_STR.issuperset(map(type, v)):  # numbers and texts are their own text
        return "(" + ",".join(map(str, v)) + ")" if len(v) != 1 else "(" + str(v[0]) + ",)"
    if v is None:
        return "none"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, str)):
        return str(v)
    if isinstance(v, tuple):
        return "(" + ",".join(fmt(x) for x in v) + ")" if len(v) != 1 else "(" + fmt(v[0]) + ",)"
    if isinstance(v, frozenset):
        return "{" + ",".join(map(fmt, sort_values(v))) + "}"
    if isinstance(v, dict):
        return "{" + ",".join(fmt(k) + ":" + fmt(x) for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))) + "}"
    if isinstance(v, Pile):
        return f"<{v.kind} of {len(v)}>"
    if v.__class__ is Piece:
        return f"{v.kind}#{v.id}"
    return str(v)


def readable(v: Value) -> str:
    """A human-readable text of a value (lists with spaces)."""
    if isinstance(v, tuple):
        return "(" + ", ".join(readable(x) for x in v) + ")" if len(v) != 1 else "(" + readable(v[0]) + ")"
    if isinstance(v, frozenset):
        return "{" + ", ".join(readable(x) for x in sorted(v, key=skey)) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(readable(k) + ": " + readable(x) for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))) + "}"
    return fmt(v)


def _in_order(items: list) -> tuple:
    """The items in one order that depends only on what they are: Python's own when they compare (the
    common case: ints, texts, lists of them), else by their repr (canonical for canonical() forms)."""
    try:
        return tuple(sorted(items))
    except TypeError:
        return tuple(sorted(items, key=repr))


_PLAIN = frozenset((int, str, bool, type(None)))  # values whose canonical form is themselves


def _plain_or_plain_lists(xs: Collection[Any]) -> bool:
    """Whether every item is an int, text, bool or none, or every item a list of those (a cell)."""
    kinds = set(map(type, xs))
    return kinds <= _PLAIN or (kinds == {tuple} and _PLAIN.issuperset(map(type, chain.from_iterable(xs))))


def canonical(v: Any) -> Any:
    """A value (or JSON-like data: lists, dicts with text keys) as nested tuples of ints, texts, bools and
    None whose repr is the same for equal values and different for different ones: what a position's key
    hashes (Game.position_key), quicker than encode() and JSON. Sets, maps, piles, pieces and boards are
    tagged with a float, which no value of the rules is (a float in the data is tagged too), so no list
    reads as one of them.
    Not a save format: the orders here need not be those of encode()."""
    c = v.__class__
    if c is int or c is str or v is None or c is bool:
        return v
    if c is tuple or c is list:
        if _PLAIN.issuperset(map(type, v)):  # (a list of ints or texts: a cell, a hand: as it is)
            return v if c is tuple else tuple(v)
        return tuple([canonical(x) for x in v])
    if c is frozenset or c is set:
        return (0.5, _in_order(list(v) if _plain_or_plain_lists(v) else [canonical(x) for x in v]))
    if c is dict:
        if _PLAIN.issuperset(map(type, v.values())):  # (a board of cells: the keys alone need a look)
            if _plain_or_plain_lists(v):
                return (1.5, _in_order(list(v.items())))
            return (1.5, _in_order([(k if k.__class__ in _PLAIN else canonical(k), x) for k, x in v.items()]))
        return (1.5, _in_order([(canonical(k), canonical(x)) for k, x in v.items()]))
    if c is Pile:
        return (2.5, v.kind, canonical(v.known), canonical(v.pool))
    if c is Piece:
        return (3.5, v.kind, v.id)
    if c.__name__ == "Board":
        return (4.5, v.name)
    if c is float:  # (the probabilities of a pending chance decision): tagged too, so every bare float is a tag
        return (5.5, v)
    raise TypeError(f"no canonical form for a {type(v).__name__}")


def encode(v: Value) -> Json:
    """Value -> JSON-ready data (tagged where JSON has no kind of its own)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, tuple):
        return [encode(x) for x in v]
    if isinstance(v, frozenset):
        return {"$set": [encode(x) for x in sort_values(v)]}
    if isinstance(v, dict):
        return {"$map": [[encode(k), encode(x)] for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))]}
    if isinstance(v, Pile):
        return {"$pile": v.kind, "known": [encode(x) for x in v.known], "pool": [encode(x) for x in v.pool]}
    if v.__class__ is Piece:
        return {"$piece": v.kind, "id": v.id}
    if v.__class__.__name__ == "Board":
        return {"$board": v.name}
    raise TypeError(f"cannot serialize a {type(v).__name__}")


def decode(d: Json, boards: Optional[Mapping[str, Value]] = None, depth: int = 0) -> Value:
    """JSON data -> value; raises ValueError on anything that is not an encoded value."""
    if d.__class__ in _PLAIN:
        return d
    if isinstance(d, float):
        raise ValueError("numbers in a save file are whole numbers")
    if depth >= MAX_DEPTH:
        raise ValueError(f"a value nested more than {MAX_DEPTH} deep")
    depth += 1
    if isinstance(d, list):
        return tuple([x if x.__class__ in _PLAIN else decode(x, boards, depth) for x in d])
    if isinstance(d, dict):
        if "$board" in d and len(d) == 1:
            name = d["$board"]
            if not boards or not isinstance(name, str) or name not in boards:
                raise ValueError(f"unknown board {str(name)[:40]!r}")
            return boards[name]
        if "$set" in d and len(d) == 1:
            return frozenset(_key(decode(x, boards, depth)) for x in _list(d["$set"]))
        if "$map" in d and len(d) == 1:
            out: dict[Value, Value] = {}
            for pair in _list(d["$map"]):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise ValueError("a map entry is a [key, value] pair")
                out[_key(decode(pair[0], boards, depth))] = decode(pair[1], boards, depth)
            return out
        if "$piece" in d:
            kind, pid = d["$piece"], d.get("id")
            if len(d) != 2 or not isinstance(kind, str) or pid.__class__ is not int or pid < 1:
                raise ValueError("a piece is {\"$piece\": KIND, \"id\": NUMBER from 1}")
            return Piece(kind, pid)
        if "$pile" in d and set(d) <= {"$pile", "known", "pool"}:
            kind = d["$pile"]
            if kind not in ("deck", "bag"):
                raise ValueError(f"unknown pile kind {str(kind)[:40]!r}")
            return Pile(kind, [decode(x, boards, depth) for x in _list(d.get("known", []))],
                        [decode(x, boards, depth) for x in _list(d.get("pool", []))])
    raise ValueError(f"not a rulelang value: {str(d)[:40]}")


_PLAIN = frozenset({type(None), bool, int, str})


def _key(v: Value) -> Value:
    """A value that can be a set item or a map key (maps cannot)."""
    try:
        hash(v)
    except TypeError:
        raise ValueError(f"a map cannot be a set item or a map key: {fmt(v)[:40]}") from None
    return v


def _list(x: Json) -> list[Json]:
    if not isinstance(x, list):
        raise ValueError("expected a list")
    return x


def to_plain(v: Value, full: bool = False) -> Json:
    """Value -> plain JSON data for views: maps become objects keyed by fmt(key), sets sorted lists.
    A pile shows its ordered part and the size of its shuffled part; with `full` (the view of the
    whole state) also what the shuffled part holds, sorted."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, tuple):
        return [to_plain(x, full) for x in v]
    if isinstance(v, frozenset):
        return [to_plain(x, full) for x in sort_values(v)]
    if isinstance(v, dict):
        return {fmt(k): to_plain(x, full) for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))}
    if isinstance(v, Pile):
        if full:
            return {"known": [to_plain(x, full) for x in v.known], "hidden": len(v.pool),
                    "shuffled": [to_plain(x, full) for x in v.pool]}
        return {"known": [to_plain(x) for x in v.known], "hidden": len(v.pool)}
    if v.__class__ is Piece:
        return f"{v.kind}#{v.id}"
    return str(v)


def default_value(ty: Type) -> Value:
    """The value a variable of type `ty` holds before anything sets it."""
    if ty.kind == "range":
        return ty.low
    n = ty.name
    if n == "int":
        return 0
    if n == "bool":
        return False
    if n in ("list", "tuple"):
        return ()
    if n == "set":
        return frozenset()
    if n == "map":
        return {}
    if n == "deck":
        return Pile("deck")
    if n == "bag":
        return Pile("bag")
    return None

"""Run-time values: how the interpreter represents, orders, prints and serializes them.

Values are immutable Python data: int, bool, str (enum members, table rows, graph nodes), None,
tuple (lists and coordinates), frozenset (sets), dict (maps; never changed in place: every write
makes a new dict), and Pile (decks and bags). Players are ints (seats, 0-based).
"""
from __future__ import annotations

MAX_SIZE = 1_000_000  # the most items one value may hold in all, shared parts counted each time they appear
MAX_DEPTH = 100  # the deepest a value may nest (a list in a list in a list ...)


class Pile:
    """A deck or a bag. `known` is an ordered part (top first); `pool` is an unordered part whose
    items come out in random order (a shuffled deck, or every bag). Immutable."""

    __slots__ = ("kind", "known", "pool")

    def __init__(self, kind: str, known=(), pool=()):
        self.kind = kind
        self.known = tuple(known)
        self.pool = tuple(sorted(pool, key=skey))

    def items(self):
        return self.known + self.pool

    def __len__(self):
        return len(self.known) + len(self.pool)

    def __iter__(self):
        return iter(self.known + self.pool)

    def __contains__(self, x):
        return x in self.known or x in self.pool

    def __eq__(self, other):
        return isinstance(other, Pile) and (self.kind, self.known, self.pool) == (other.kind, other.known, other.pool)

    def __hash__(self):
        return hash((self.kind, self.known, self.pool))

    def __repr__(self):
        return f"Pile({self.kind}, {self.known}, {self.pool})"


def skey(v):
    """A total order over values of mixed kinds, used for every canonical sort."""
    if v is None:
        return (0,)
    if v is True or v is False:
        return (1, int(v))
    if isinstance(v, int):
        return (2, v)
    if isinstance(v, str):
        return (3, v)
    if isinstance(v, tuple):
        return (4, tuple(skey(x) for x in v))
    if isinstance(v, frozenset):
        return (5, tuple(sorted(skey(x) for x in v)))
    if isinstance(v, dict):
        return (6, tuple(sorted((skey(k), skey(x)) for k, x in v.items())))
    if isinstance(v, Pile):
        return (7, v.kind, tuple(skey(x) for x in v.known), tuple(skey(x) for x in v.pool))
    return (9, repr(v))


def fmt(v) -> str:
    """The canonical compact text of a value, used in action ids: 3, teal, (0,2), {a,b}."""
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
        return "{" + ",".join(fmt(x) for x in sorted(v, key=skey)) + "}"
    if isinstance(v, dict):
        return "{" + ",".join(fmt(k) + ":" + fmt(x) for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))) + "}"
    if isinstance(v, Pile):
        return f"<{v.kind} of {len(v)}>"
    return str(v)


def readable(v) -> str:
    """A human-readable text of a value (lists with spaces)."""
    if isinstance(v, tuple):
        return "(" + ", ".join(readable(x) for x in v) + ")" if len(v) != 1 else "(" + readable(v[0]) + ")"
    if isinstance(v, frozenset):
        return "{" + ", ".join(readable(x) for x in sorted(v, key=skey)) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(readable(k) + ": " + readable(x) for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))) + "}"
    return fmt(v)


def encode(v):
    """Value -> JSON-ready data (tagged where JSON has no kind of its own)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, tuple):
        return [encode(x) for x in v]
    if isinstance(v, frozenset):
        return {"$set": [encode(x) for x in sorted(v, key=skey)]}
    if isinstance(v, dict):
        return {"$map": [[encode(k), encode(x)] for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))]}
    if isinstance(v, Pile):
        return {"$pile": v.kind, "known": [encode(x) for x in v.known], "pool": [encode(x) for x in v.pool]}
    if v.__class__.__name__ == "Board":
        return {"$board": v.name}
    raise TypeError(f"cannot serialize a {type(v).__name__}")


def decode(d, boards=None, depth=0):
    """JSON data -> value; raises ValueError on anything that is not an encoded value."""
    if depth > MAX_DEPTH:
        raise ValueError(f"a value nested more than {MAX_DEPTH} deep")
    depth += 1
    if isinstance(d, dict) and "$board" in d:
        if not boards or d["$board"] not in boards:
            raise ValueError(f"unknown board {d['$board']!r}")
        return boards[d["$board"]]
    if d is None or isinstance(d, (bool, int, str)):
        return d
    if isinstance(d, float):
        raise ValueError("numbers in a save file are whole numbers")
    if isinstance(d, list):
        return tuple(decode(x, boards, depth) for x in d)
    if isinstance(d, dict):
        if "$set" in d and len(d) == 1:
            return frozenset(decode(x, boards, depth) for x in _list(d["$set"]))
        if "$map" in d and len(d) == 1:
            out = {}
            for pair in _list(d["$map"]):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise ValueError("a map entry is a [key, value] pair")
                out[decode(pair[0], boards, depth)] = decode(pair[1], boards, depth)
            return out
        if "$pile" in d:
            kind = d["$pile"]
            if kind not in ("deck", "bag", "list"):
                raise ValueError(f"unknown pile kind {kind!r}")
            return Pile(kind, [decode(x, boards, depth) for x in _list(d.get("known", []))],
                        [decode(x, boards, depth) for x in _list(d.get("pool", []))])
    raise ValueError(f"not a rulelang value: {str(d)[:40]}")


def _list(x):
    if not isinstance(x, list):
        raise ValueError("expected a list")
    return x


def to_plain(v):
    """Value -> plain JSON data for views: maps become objects keyed by fmt(key), sets sorted lists."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, tuple):
        return [to_plain(x) for x in v]
    if isinstance(v, frozenset):
        return [to_plain(x) for x in sorted(v, key=skey)]
    if isinstance(v, dict):
        return {fmt(k): to_plain(x) for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))}
    if isinstance(v, Pile):
        return {"known": [to_plain(x) for x in v.known], "hidden": len(v.pool)}
    return str(v)

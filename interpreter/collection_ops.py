"""Adding to and removing from the rules' collections (lists, sets, decks and bags), the piles a list
written into a deck, bag or set becomes, and what copying or sorting them is charged on the work budget.
Both backends use these (the generated code through interpreter/runtime.py, which re-exports them)."""
from __future__ import annotations

from bisect import bisect_right
from typing import Iterable, Optional, Sized

from .builtins import CONTAINERS, RunningGame, RuleRuntimeError, charge, deep_cost, over
from .values import Pile, Value, fmt, ordered_pile, skey


def as_pile(kind: str, items: tuple[Value, ...]) -> Value:
    """A list written into a place of type deck, bag or set: the pile (a deck keeps the list's order, a bag's
    pool is sorted) or set of its items."""
    return Pile("deck", items, ()) if kind == "deck" else (Pile("bag", (), items) if kind == "bag" else frozenset(items))


def sorting_cost(items: Sized) -> int:
    """What sorting or hashing a list of items into a bag's pool or a set is charged."""
    return (len(items) + 1) * (len(items).bit_length() + 1)


def _copy_cost(coll: Value) -> int:
    """Adding to or removing from a collection copies it (a pile's pool is kept sorted)."""
    c = coll.__class__
    if c is Pile:
        return (len(coll) + 1) * (len(coll).bit_length() + 1)
    if c is tuple or c is frozenset:
        return len(coll) + 1
    return 1


def add_item(coll: Value, x: Value, G: Optional[RunningGame] = None) -> Value:
    if coll.__class__ is tuple and G is not None:  # the common case: charge(G, _copy_cost(coll)), inline
        G.work += len(coll) + 1
        if G.work > G.work_mark:
            over(G)
        return coll + (x,)
    if coll.__class__ is frozenset and G is not None:  # (the same for a set)
        G.work += len(coll) + 1
        if G.work > G.work_mark:
            over(G)
        return coll | {x}
    if G is not None:
        charge(G, _copy_cost(coll))
    if isinstance(coll, tuple):
        return coll + (x,)
    if isinstance(coll, frozenset):
        return coll | {x}
    if isinstance(coll, Pile):
        if coll.kind == "bag" or coll.pool:  # into the sorted pool at its place (as sorting it again would put it)
            pool = coll.pool
            i = bisect_right(pool, skey(x), key=skey)
            return ordered_pile(coll.kind, coll.known, pool[:i] + (x,) + pool[i:])
        return Pile(coll.kind, coll.known + (x,), ())
    raise RuleRuntimeError(f"cannot add to {fmt(coll)}")


def remove_item(coll: Value, x: Value, G: Optional[RunningGame] = None) -> Value:
    if coll.__class__ is tuple and x.__class__ not in CONTAINERS and G is not None:  # the common case, inline
        G.work += len(coll) + 1
        if G.work > G.work_mark:
            over(G)
        if x not in coll:
            raise RuleRuntimeError(f"cannot remove {fmt(x)}: it is not there")
        i = coll.index(x)
        return coll[:i] + coll[i + 1:]
    if G is not None:
        charge(G, _copy_cost(coll) * (deep_cost(x) if x.__class__ in CONTAINERS else 1))
    if isinstance(coll, tuple):
        if x not in coll:
            raise RuleRuntimeError(f"cannot remove {fmt(x)}: it is not there")
        i = coll.index(x)
        return coll[:i] + coll[i + 1:]
    if isinstance(coll, frozenset):
        if x not in coll:
            raise RuleRuntimeError(f"cannot remove {fmt(x)}: it is not there")
        return coll - {x}
    if isinstance(coll, Pile):
        if x in coll.known:  # (what is left stays in order: nothing to sort)
            i = coll.known.index(x)
            return ordered_pile(coll.kind, coll.known[:i] + coll.known[i + 1:], coll.pool)
        if x in coll.pool:
            i = coll.pool.index(x)
            return ordered_pile(coll.kind, coll.known, coll.pool[:i] + coll.pool[i + 1:])
        raise RuleRuntimeError(f"cannot remove {fmt(x)}: it is not there")
    raise RuleRuntimeError(f"cannot remove from {fmt(coll)}")


def distinct(xs: Iterable[Value]) -> list[Value]:
    seen = set()
    out = []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out

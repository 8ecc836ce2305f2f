"""What a seat sees of a value hidden from it (a view: Game.view, and the hidden fields of pieces).

A value the seat knows whole is shown as it is; positions in a list are public, so unknown items show as
"?"; the keys of a map are not, so unknown entries are only counted; anything else hidden shows as "?", or
as {"hidden": n} for a collection of n items.
"""
from __future__ import annotations

from typing import Any, Collection

from .values import Json, Pile, Value, fmt, skey, to_plain

# a place inside a hidden value: the positions and keys (seats, a piece's id and field) from its top down
Path = tuple[Any, ...]


def shown_value(v: Value, path: Path, seen: Collection[Path], inner: Collection[Path]) -> Json:
    """A value of a hidden variable at `path`, as a viewer who knows the places `seen` sees it."""
    if path in seen:
        return to_plain(v)
    if path not in inner:
        return hidden_form(v)
    if v.__class__ is tuple:  # positions are public: unknown items show as "?"
        return [shown_value(x, path + (i,), seen, inner) for i, x in enumerate(v)]
    if v.__class__ is dict:  # keys are not: unknown entries are only counted
        shown: dict[str, Json] = {}
        hidden = 0
        for k in sorted(v, key=skey):
            p = path + (k,)
            if p in seen or p in inner:
                shown[fmt(k)] = shown_value(v[k], p, seen, inner)
            else:
                hidden += 1
        return {"known": shown, "hidden": hidden}
    return hidden_form(v)


def hidden_form(v: Value) -> Json:
    """What a viewer who knows nothing of it sees of a value: its size if it is a collection, else "?"."""
    if isinstance(v, (tuple, frozenset, dict, Pile)):
        return {"hidden": len(v)}
    return "?"

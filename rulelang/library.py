"""The built-in library: names, signatures and result types of built-in functions and values.

The checker uses these signatures; `interpreter/builtins.py` implements exactly these names (a test
keeps the two in step); `docs/language.md` documents them. Every entry is general: none knows a game.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import attrs

from . import types as T

# a built-in function's result type from its arguments' types
Result = Callable[[Sequence[T.Type]], T.Type]


@attrs.frozen
class Builtin:
    name: str
    min_args: int
    max_args: int  # -1: any number
    kwargs: tuple[str, ...] = ()
    result: Optional[Result] = None  # function(arg_types) -> Type
    doc: str = ""
    functions: tuple[int | str, ...] = ()  # argument positions (ints) and option names that take a function value


def _elem(ts: Sequence[T.Type]) -> T.Type:
    return T.element(ts[0]) if ts else T.ANY


def _same(ts: Sequence[T.Type]) -> T.Type:
    return ts[0] if ts else T.ANY


def _minmax(ts: Sequence[T.Type]) -> T.Type:
    if len(ts) == 1:
        return T.element(ts[0])
    return T.join_all(ts)


def _list_of_elem(ts: Sequence[T.Type]) -> T.Type:
    return T.list_of(T.element(ts[0])) if ts else T.list_of(T.ANY)


def _map_values(ts: Sequence[T.Type]) -> T.Type:
    t = ts[0] if ts else T.ANY
    return T.list_of(t.args[1]) if t.name == "map" and len(t.args) == 2 else T.list_of(T.ANY)


def _map_get(ts: Sequence[T.Type]) -> T.Type:
    t = ts[0] if ts else T.ANY
    return t.args[1] if t.name == "map" and len(t.args) == 2 else T.ANY


def _const(t: T.Type) -> Result:
    return lambda ts: t


_FUNCTION_ARGS: dict[str, tuple[int | str, ...]] = {'count': (1,), 'any': (1,), 'all': (1,), 'first': (1,), 'max_by': (1,), 'min_by': (1,), 'sorted': ('key',), 'distance': ('through',), 'reachable': ('through',), 'path_exists': ('through',), 'group': ('where',), 'groups': ('where',), 'line_length': ('where',)}

FUNCTIONS = {b.name: b for b in [
    # collections
    Builtin("count", 1, 2, (), _const(T.INT), "count(xs) is the number of items; count(xs, x => test) counts those passing the test"),
    Builtin("count_of", 2, 2, (), _const(T.INT), "count_of(xs, x): how many times x occurs in xs"),
    Builtin("sum", 1, 1, (), _const(T.INT), "sum(xs): the total of a list of numbers (0 when empty)"),
    Builtin("max", 1, -1, (), _minmax, "max(xs) or max(a, b, ...): the largest (none for an empty list)"),
    Builtin("min", 1, -1, (), _minmax, "min(xs) or min(a, b, ...): the smallest (none for an empty list)"),
    Builtin("max_by", 2, 2, (), _elem, "max_by(xs, x => key): the first item with the largest key"),
    Builtin("min_by", 2, 2, (), _elem, "min_by(xs, x => key): the first item with the smallest key"),
    Builtin("sorted", 1, 1, ("key",), _list_of_elem, "sorted(xs, key: x => k): a sorted copy"),
    Builtin("reversed", 1, 1, (), _list_of_elem, "reversed(xs): the items in reverse order"),
    Builtin("any", 1, 2, (), _const(T.BOOL), "any(xs) / any(xs, x => test): whether some item is true / passes"),
    Builtin("all", 1, 2, (), _const(T.BOOL), "all(xs) / all(xs, x => test): whether every item is true / passes"),
    Builtin("first", 1, 2, (), _elem,
            "first(xs): the first item (none when empty); first(xs, x => test): the first item that passes (none when none does)"),
    Builtin("last", 1, 1, (), _elem, "last(xs): the last item (none when empty)"),
    Builtin("index_of", 2, 2, (), _const(T.INT), "index_of(xs, x): position of x (0-based), none when absent"),
    Builtin("keys", 1, 1, (), _list_of_elem, "keys(m): the keys of a map, sorted"),
    Builtin("values", 1, 1, (), _map_values, "values(m): the values of a map, in key order"),
    Builtin("get", 3, 3, (), _map_get, "get(m, k, default): m[k], or default when k is not a key"),
    Builtin("to_set", 1, 1, (), lambda ts: T.set_of(T.element(ts[0])), "to_set(xs): the distinct items as a set"),
    Builtin("to_list", 1, 1, (), _list_of_elem, "to_list(xs): the items as a list (a pile's items in order)"),
    Builtin("copies", 2, 2, (), lambda ts: T.list_of(ts[0]), "copies(x, n): a list of n times x"),
    Builtin("slice", 2, 3, (), _list_of_elem, "slice(xs, start, end): items from start up to (not including) end"),
    Builtin("flatten", 1, 1, (), lambda ts: T.list_of(T.element(T.element(ts[0]))),
            "flatten(xss): the items of each inner list in turn, as one list"),
    # numbers
    Builtin("abs", 1, 1, (), _const(T.INT), "abs(n)"),
    Builtin("clamp", 3, 3, (), _const(T.INT), "clamp(n, low, high)"),
    # players
    Builtin("next_player", 1, 1, (), _const(T.PLAYER), "next_player(p): the next seat still in the game, clockwise"),
    Builtin("previous_player", 1, 1, (), _const(T.PLAYER), "previous_player(p): the previous seat still in the game"),
    Builtin("players_from", 1, 1, (), _const(T.list_of(T.PLAYER)), "players_from(p): seats still in the game, clockwise, starting at p"),
    Builtin("is_eliminated", 1, 1, (), _const(T.BOOL), "is_eliminated(p)"),
    Builtin("seat", 1, 1, (), _const(T.INT), "seat(p): the 1-based seat number of p (1 = first player)"),
    # boards (graphs)
    Builtin("nodes", 1, 1, (), _const(T.list_of(T.NODE)), "nodes(b): every node of board b, sorted"),
    Builtin("neighbors", 2, 2, (), _const(T.list_of(T.NODE)), "neighbors(b, n): nodes adjacent to n"),
    Builtin("adjacent", 3, 3, (), _const(T.BOOL), "adjacent(b, n, m): whether n and m are adjacent"),
    Builtin("attr", 3, 4, (), _const(T.ANY), "attr(b, n, \"name\"[, default]): a node attribute"),
    Builtin("distance", 3, 3, ("through",), _const(T.INT),
            "distance(b, n, m, through: x => ok): steps of the shortest path from n to m whose inner nodes pass the test; none when there is none"),
    Builtin("reachable", 3, 3, ("through",), _const(T.list_of(T.NODE)),
            "reachable(b, n, steps, through: x => ok): nodes within that many steps of n, moving only through nodes that pass the test (n excluded)"),
    Builtin("path_exists", 3, 3, ("through",), _const(T.BOOL), "path_exists(b, n, m, through: x => ok)"),
    Builtin("group", 2, 2, ("where",), _const(T.list_of(T.NODE)),
            "group(b, n, where: x => same): the connected group of nodes around n that pass the test (empty if n does not)"),
    Builtin("groups", 1, 1, ("where",), _const(T.list_of(T.list_of(T.NODE))),
            "groups(b, where: x => test): every connected group of passing nodes"),
    Builtin("line_length", 2, 2, ("where",), _const(T.INT),
            "line_length(b, n, where: x => test): the longest straight line of passing nodes through n, along a grid direction"),
    # scoring
    Builtin("award_by_rank", 2, 2, ("ties",), lambda ts: T.map_of(T.element(ts[0]), T.INT),
            "award_by_rank(values, prizes, ties: \"split\"): prizes by rank of a map key -> value; "
            "tied keys share the prizes of the places they span (rounded down); zero values win nothing"),
    Builtin("text", 1, -1, (), _const(T.STR), "text(a, b, ...): the values written as one string"),
]}
FUNCTIONS = {name: attrs.evolve(b, functions=_FUNCTION_ARGS.get(name, ())) for name, b in FUNCTIONS.items()}

# Names that are values rather than functions.
VALUES = {
    "me": (T.PLAYER, "the player taking the current action or decision"),
    "current": (T.PLAYER, "the player whose turn it is"),
    "players": (T.list_of(T.PLAYER), "the players still in the game, in seat order"),
    "all_players": (T.list_of(T.PLAYER), "every seat, eliminated or not"),
    "player_count": (T.INT, "the number of players"),
    "end_triggered": (T.BOOL, "whether an end condition has fired (trigger_end)"),
}

# Values only scenarios can read.
SCENARIO_VALUES = {
    "legal": (T.list_of(T.STR), "the ids of the legal actions now"),
    "over": (T.BOOL, "whether the game is over"),
    "winners": (T.list_of(T.PLAYER), "the winners (empty before the end)"),
    "scores": (T.list_of(T.INT), "the scores by seat"),
    "end_reason": (T.STR, "the name of the end condition that ended the game"),
    "decider": (T.PLAYER, "the player who must decide now (-1: chance)"),
}

BOARD_GENERATORS = {
    "square_grid": (2, 2, ("diagonals", "row_zero_at_top"),
                    "square_grid(rows, columns, diagonals: false, row_zero_at_top: false): nodes (row, column)"),
    "hex_grid": (1, 1, (), "hex_grid(radius): a hexagon of hexes, nodes (q, r) in axial coordinates"),
    "hex_rect": (2, 2, (), "hex_rect(rows, columns): a rectangle of hexes (odd rows shifted right), nodes (row, column)"),
    "hex_rhombus": (2, 2, (), "hex_rhombus(rows, columns): a rhombus of hexes (each row shifted half a hex further), "
                              "nodes (row, column), as Hex is played on"),
    "line": (1, 1, (), "line(n): nodes 0..n-1 in a row (a track)"),
}

BUILTIN_EVENTS = {
    "game_start": [],
    "turn_start": [T.PLAYER],
    "turn_end": [T.PLAYER],
    "action_done": [T.PLAYER, T.STR],
}

"""Implementations of the built-in functions declared in rulelang/library.py.

Each takes the game state first (for players and boards), then the evaluated arguments; function
arguments (x => ...) arrive as Python callables. Errors raise RuleRuntimeError with a plain message;
the engine adds the rule-file position.
"""
from __future__ import annotations

from .values import Pile, fmt, readable, skey


class RuleRuntimeError(Exception):
    """A rule did something impossible at run time; the engine adds where."""


def _items(xs):
    if isinstance(xs, dict):
        return tuple(sorted(xs, key=skey))
    if isinstance(xs, (frozenset, set)):
        return tuple(sorted(xs, key=skey))
    if isinstance(xs, Pile):
        return xs.items()
    if isinstance(xs, tuple):
        return xs
    if xs is None:
        raise RuleRuntimeError("expected a list but found none")
    raise RuleRuntimeError(f"expected a list but found {fmt(xs)}")


def b_count(G, xs, pred=None):
    if pred is None:
        return len(xs) if not isinstance(xs, dict) else len(xs)
    return sum(1 for x in _items(xs) if pred(x))


def b_count_of(G, xs, x):
    return sum(1 for y in _items(xs) if y == x)


def b_sum(G, xs):
    total = 0
    for x in _items(xs):
        if not isinstance(x, int) or x is None:
            raise RuleRuntimeError(f"sum() of a list holding {fmt(x)}")
        total += x
    return total


def _minmax(fn, G, args):
    if len(args) == 1:
        xs = _items(args[0])
    else:
        xs = args
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return fn(xs, key=skey)


def b_max(G, *args):
    return _minmax(max, G, args)


def b_min(G, *args):
    return _minmax(min, G, args)


def b_max_by(G, xs, f):
    best = None
    best_k = None
    for x in _items(xs):
        k = skey(f(x))
        if best_k is None or k > best_k:
            best, best_k = x, k
    return best


def b_min_by(G, xs, f):
    best = None
    best_k = None
    for x in _items(xs):
        k = skey(f(x))
        if best_k is None or k < best_k:
            best, best_k = x, k
    return best


def b_sorted(G, xs, key=None):
    if key is None:
        return tuple(sorted(_items(xs), key=skey))
    return tuple(sorted(_items(xs), key=lambda x: skey(key(x))))


def b_reversed(G, xs):
    return tuple(reversed(_items(xs)))


def b_any(G, xs, pred=None):
    if pred is None:
        return any(x is True for x in _items(xs))
    return any(pred(x) for x in _items(xs))


def b_all(G, xs, pred=None):
    if pred is None:
        return all(x is True for x in _items(xs))
    return all(pred(x) for x in _items(xs))


def b_first(G, xs):
    it = _items(xs)
    return it[0] if it else None


def b_last(G, xs):
    it = _items(xs)
    return it[-1] if it else None


def b_index_of(G, xs, x):
    it = _items(xs)
    return it.index(x) if x in it else None


def b_keys(G, m):
    if not isinstance(m, dict):
        raise RuleRuntimeError("keys() needs a map")
    return tuple(sorted(m, key=skey))


def b_values(G, m):
    if not isinstance(m, dict):
        raise RuleRuntimeError("values() needs a map")
    return tuple(m[k] for k in sorted(m, key=skey))


def b_get(G, m, k, default):
    if isinstance(m, dict):
        return m.get(k, default)
    if isinstance(m, tuple) and isinstance(k, int) and 0 <= k < len(m):
        return m[k]
    return default


def b_to_set(G, xs):
    return frozenset(_items(xs))


def b_to_list(G, xs):
    return tuple(_items(xs))


def b_copies(G, x, n):
    if not isinstance(n, int) or n < 0 or n > 100_000:
        raise RuleRuntimeError(f"copies() needs a count from 0 to 100000, not {fmt(n)}")
    G.work += n
    return (x,) * n


def b_slice(G, xs, start, end=None):
    return tuple(_items(xs)[start:end])


def b_abs(G, n):
    return abs(n)


def b_clamp(G, n, lo, hi):
    return max(lo, min(hi, n))


def _seat(G, p):
    if p.__class__ is not int or not 0 <= p < G.n:
        raise RuleRuntimeError(f"{fmt(p)} is not a player of this {G.n}-player game")
    return p


def b_next_player(G, p):
    return G.next_active(_seat(G, p), 1)


def b_previous_player(G, p):
    return G.next_active(_seat(G, p), -1)


def b_players_from(G, p):
    n = G.n
    p = _seat(G, p)
    return tuple((p + i) % n for i in range(n) if not G.eliminated[(p + i) % n])


def b_is_eliminated(G, p):
    return bool(G.eliminated[_seat(G, p)])


def b_seat(G, p):
    return _seat(G, p) + 1


def _board(G, b):
    if b.__class__.__name__ != "Board":
        raise RuleRuntimeError("expected a board")
    return b


def b_nodes(G, b):
    return _board(G, b).nodes


def b_neighbors(G, b, n):
    return _board(G, b).adj.get(n, ())


def b_adjacent(G, b, n, m):
    return m in _board(G, b).adj.get(n, ())


def b_attr(G, b, n, name, default=None):
    return _board(G, b).attr(n, name, default)


def b_distance(G, b, n, m, through=None):
    return _board(G, b).distance(n, m, through)


def b_reachable(G, b, n, steps, through=None):
    return _board(G, b).reachable(n, steps, through)


def b_path_exists(G, b, n, m, through=None):
    return _board(G, b).distance(n, m, through) is not None


def b_group(G, b, n, where=None):
    return _board(G, b).group(n, where)


def b_groups(G, b, where=None):
    return _board(G, b).groups(where)


def b_line_length(G, b, n, where=None):
    return _board(G, b).line_length(n, where)


def b_award_by_rank(G, values, prizes, ties="split"):
    """Prizes by rank. values: map key -> number. Keys with value 0 (or less) win nothing.

    ties="split": tied keys share the sum of the prizes of the places they span, each getting the
    share rounded down. ties="full": each tied key gets the prize of the best place they span.
    ties="none": tied keys get nothing for those places.
    """
    if not isinstance(values, dict):
        raise RuleRuntimeError("award_by_rank() needs a map of key -> value")
    prizes = tuple(prizes)
    if ties not in ("split", "full", "none"):
        raise RuleRuntimeError(f"award_by_rank(): ties is \"split\", \"full\" or \"none\", not {ties!r}")
    out = {k: 0 for k in values}
    ranked = sorted((v, k) for k, v in values.items() if isinstance(v, int) and v > 0)
    ranked.sort(key=lambda vk: (-vk[0], skey(vk[1])))
    place = 0
    i = 0
    while i < len(ranked) and place < len(prizes):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        tied = [k for _, k in ranked[i:j]]
        spanned = prizes[place:place + len(tied)]
        if len(tied) == 1:
            out[tied[0]] = spanned[0]
        elif ties == "split":
            share = sum(spanned) // len(tied)
            for k in tied:
                out[k] = share
        elif ties == "full":
            for k in tied:
                out[k] = spanned[0]
        place += len(tied)
        i = j
    return out


def b_text(G, *args):
    out = " ".join(x if isinstance(x, str) else readable(x) for x in args)
    if len(out) > 1_000_000:
        raise RuleRuntimeError("text() would be longer than 1,000,000 characters")
    return out


IMPLS = {name[2:]: fn for name, fn in globals().items() if name.startswith("b_")}

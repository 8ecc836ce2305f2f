"""Implementations of the built-in functions declared in rulelang/library.py.

Each takes the game state first (for players and boards), then the evaluated arguments; function
arguments (x => ...) arrive as Python callables. Errors raise RuleRuntimeError with a plain message;
the engine adds the rule-file position.
"""
from __future__ import annotations

import time
from itertools import chain
from typing import Any, Callable, Collection, Iterable, Optional, Protocol, Sequence

from .values import MAX_DEPTH, MAX_SIZE, Pile, Value, fmt, readable, skey, sort_values

WORK_BUDGET = 1_000_000  # units of work (items handled) between two decisions
TIME_LIMIT = 10.0  # seconds of CPU time between two decisions (Ruleset.time_limit)
TIME_CHECK_EVERY = 20_000  # units of work between two looks at the clock
MAX_INT = 1 << 62  # the largest number (in size) a rule may compute


class RuleRuntimeError(Exception):
    """A rule did something impossible at run time; the engine adds where."""


class RunningGame(Protocol):
    """A game while its rules run (interpreter/game.py's Game), as far as the built-ins read it: its work
    budget and clock, and its seats. (A protocol: the game stands above this module.)"""

    work: int  # units of work since the last decision
    work_mark: int  # the next count of work at which over() looks at the budget and the clock
    deadline: Optional[float]  # the CPU time at which the rules stop (None: the clock is not read yet)
    memo: Optional[dict[Any, Any]]  # rule functions' values while a read-only evaluation runs (else None)

    @property
    def time_limit(self) -> float: ...

    @property
    def n(self) -> int: ...  # the number of seats

    @property
    def eliminated(self) -> tuple[bool, ...]: ...  # by seat

    def next_active(self, p: int, step: int) -> int: ...


# a function value of the rules (x => ...), as the built-ins receive it
Func = Callable[..., Value]


# ============================================================================ the work budget
# G.work counts units of work since the last decision; G.work_mark is the next count at which
# over() looks at the budget and the clock, so charging is one add and one compare.
def too_much() -> RuleRuntimeError:
    return RuleRuntimeError(f"more than {WORK_BUDGET:,} steps of computation before one decision, the work "
                            "budget (comprehensions, loops or built-ins over too much, or functions nested too deep?)")


def too_slow(G: RunningGame) -> RuleRuntimeError:
    return RuleRuntimeError(f"the rules computed for more than {G.time_limit:g} seconds of CPU time before one "
                            "decision, the time limit (an endless or very long computation?)")


def start_work(G: RunningGame) -> None:
    """Reset the work budget and the clock: called when the rules start running after a decision.
    The clock starts at the first look (a few thousand steps in), so that a quick decision never
    reads it."""
    G.work = 0
    G.work_mark = TIME_CHECK_EVERY
    G.deadline = None


def over(G: RunningGame) -> None:
    """G.work passed G.work_mark: stop if the budget or the time is spent, else set the next mark."""
    if G.work > WORK_BUDGET:
        raise too_much()
    check_time(G)
    G.work_mark = min(G.work + TIME_CHECK_EVERY, WORK_BUDGET)


def check_time(G: RunningGame) -> None:
    now = time.process_time()
    if G.deadline is None:
        G.deadline = now + G.time_limit
    elif now > G.deadline:
        raise too_slow(G)


def charge(G: Optional[RunningGame], n: int) -> None:
    """Count n units of work (G is None while constants are folded: nothing is counted then)."""
    if G is not None:
        G.work += n
        if G.work > G.work_mark:
            over(G)


_SCALARS = (int, str, bool, type(None))
_CONTAINERS = (tuple, frozenset, dict, Pile)
CONTAINERS = frozenset(_CONTAINERS)  # `x.__class__ in CONTAINERS` is the quick test


def measure(v: Value) -> tuple[int, int]:
    """(size, depth) of a value: size counts every item, a part shared n times counted n times; the walk
    is memoised by id() so shared parts are walked once. Stops early past the limits."""
    if v.__class__ not in CONTAINERS:
        return 1, 0
    size = _flat_size(v)
    if size is not None and size <= MAX_SIZE:
        return size, (1 if size > 1 else 0)
    got = _two_levels(v)
    if got is not None and got[0] <= MAX_SIZE:
        return got
    return _walked(v)


def _walked(v: Value) -> tuple[int, int]:
    """measure() of a value that is not flat: every part walked."""
    memo: dict[int, tuple[int, int]] = {}  # id(part) -> its (size, depth)

    # (hinted by a type comment: annotations on a nested def cost a bytecode each time _walked runs)
    def walk(x, d):  # type: (Value, int) -> tuple[int, int]
        if d > MAX_DEPTH:
            raise RuleRuntimeError(f"a value nested more than {MAX_DEPTH} deep, the depth limit (a list "
                                   "holding itself over and over?)")
        got = memo.get(id(x))
        if got is not None:
            return got
        c = x.__class__
        if c is dict:
            parts = [y for kv in x.items() for y in kv]
        elif c is Pile:
            parts = x.known + x.pool
        else:
            parts = x
        size = 1
        depth = 0
        for y in parts:
            c = y.__class__
            if c in CONTAINERS:
                if (c is tuple or c is frozenset) and d < MAX_DEPTH and CONTAINERS.isdisjoint(map(type, y)):
                    size += len(y) + 1  # a flat list or set (a coordinate): what its walk would find
                    if depth < 2:
                        depth = 2 if y else 1
                else:
                    s, dd = walk(y, d + 1)
                    size += s
                    if dd >= depth:
                        depth = dd + 1
            else:
                size += 1
                if depth == 0:
                    depth = 1
            if size > MAX_SIZE:
                raise RuleRuntimeError(f"a value of more than {MAX_SIZE:,} items in all, the size limit (parts "
                                       "that appear several times count each time)")
        memo[id(x)] = (size, depth)
        return size, depth

    return walk(v, 0)


_LISTS_OR_SETS = frozenset({tuple, frozenset})


def _parts_of_lists(xs: Collection[Value]) -> Optional[tuple[int, bool]]:
    """(items in all, whether one is not empty) of a collection of flat lists and sets, else None.

    Bounded by the size limit, never by the items walked: the parts' lengths are added up first (one step
    per part), and only when they stay within MAX_SIZE are their items looked at. Past the limit the total
    is returned as it is (the value is too large whatever its parts hold: its size is at least that)."""
    if not _LISTS_OR_SETS.issuperset(map(type, xs)):
        return None
    n = sum(map(len, xs))
    if n > MAX_SIZE:
        return n, True
    if not CONTAINERS.isdisjoint(map(type, chain.from_iterable(xs))):
        return None
    return n, n > 0


def _two_levels(v: Value) -> Optional[tuple[int, int]]:
    """measure() of a non-empty list or set of flat lists and sets (coordinates), or of a map whose keys
    and values are each all plain values or all flat lists and sets; None for any other value."""
    c = v.__class__
    if c is dict:
        if not v:
            return None
        size, depth = 2 * len(v) + 1, 1
        for part in (v.keys(), v.values()):
            if CONTAINERS.isdisjoint(map(type, part)):
                continue
            got = _parts_of_lists(part)
            if got is None:
                return None
            size += got[0]
            depth = 2 if got[1] else depth
        return size, depth
    if (c is tuple or c is frozenset) and v:
        got = _parts_of_lists(v)
        if got is None:
            return None
        return len(v) + 1 + got[0], 2 if got[1] else 1
    return None


def _flat_size(v: Value) -> Optional[int]:
    """The size of a list, set or map that holds no list, set, map or pile (None for any other value):
    what the walk of measure() finds for it, without the walk."""
    c = v.__class__
    if c is tuple or c is frozenset:
        if CONTAINERS.isdisjoint(map(type, v)):
            return len(v) + 1
    elif c is dict:
        if CONTAINERS.isdisjoint(map(type, v)) and CONTAINERS.isdisjoint(map(type, v.values())):
            return 2 * len(v) + 1
    return None


def check_value(G: Optional[RunningGame], v: Value) -> Value:
    """Stop a value that breaks the size or depth limit, and charge its size as work."""
    if v.__class__ in CONTAINERS:
        size, _ = measure(v)
        charge(G, size)
    return v


def check_items(G: Optional[RunningGame], items: Value) -> Value:
    """check_value for a freshly built list/set/map given its items: scalars only cost their number."""
    for x in items:
        if x.__class__ in CONTAINERS:
            return check_value(G, items)
    charge(G, len(items))
    return items


def deep_cost(v: Value) -> int:
    """The work of reading every part of a value (hashing, comparing, printing it)."""
    c = v.__class__
    if (c is tuple or c is frozenset) and len(v) < MAX_SIZE and CONTAINERS.isdisjoint(map(type, v)):
        return len(v) + 1  # a flat list or set: measure()'s size, without the call
    if c in CONTAINERS:
        return measure(v)[0]
    if v.__class__ is str:
        return 1 + len(v) // 64
    return 1


def _items(xs: Value) -> tuple[Value, ...]:
    c = xs.__class__
    if c is tuple:
        return xs
    if c is frozenset or c is dict:
        return tuple(sort_values(xs))
    if c is Pile:
        return xs.items()
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


def b_count(G: RunningGame, xs: Value, pred: Optional[Func] = None) -> int:
    if pred is None:
        return len(xs) if not isinstance(xs, dict) else len(xs)
    return sum(1 for x in _items(xs) if pred(x))


def b_count_of(G: RunningGame, xs: Value, x: Value) -> int:
    # (tuple.count: the same number, as no value of the rules differs from itself: no float is one)
    return _items(xs).count(x)


def b_sum(G: RunningGame, xs: Value) -> int:
    total = 0
    for x in _items(xs):
        if not isinstance(x, int) or x is None:
            raise RuleRuntimeError(f"sum() of a list holding {fmt(x)}")
        total += x
        if not -MAX_INT < total < MAX_INT:
            raise RuleRuntimeError("sum() is too large a number (numbers stay below 2^62 in size)")
    return total


_WHOLE = frozenset({int})


_LAST_SUM: tuple[Optional[dict[Value, Value]], int, int] = (None, 0, 0)  # (map, its sum, the work charged for it): the last map sum_of_values answered


def sum_of_values(G: RunningGame, m: Value, unset: Value) -> Value:
    """sum(values(m)) of a map whose values are all whole numbers, none so large that a running total
    could leave the range in any order: the same charges (values(), then sum()) and result as the two
    calls, without sorting the keys (the order cannot change the sum). `unset` for any other value,
    nothing charged: the two calls are made then.

    A map is never changed once made (a write makes a new one), so the same map asked again (a test made
    before every decision, at every turn's end) has the same answer and charge: the last one is kept (one
    tuple, read and written whole, so games run in threads never see half of one)."""
    global _LAST_SUM
    if m.__class__ is not dict:
        return unset
    last = _LAST_SUM
    if last[0] is m:
        G.work += last[2]
        if G.work > G.work_mark:
            over(G)
        return last[1]
    vs = m.values()
    if not _WHOLE.issuperset(map(type, vs)):
        return unset
    n = len(vs)
    if n and not (-MAX_INT < min(vs) * n and max(vs) * n < MAX_INT):
        return unset
    if CONTAINERS.isdisjoint(map(type, m)) and 2 * n + 1 <= MAX_SIZE:
        # keys and values plain: _sorting((m,)), with the map's size (2n + 1) known without measuring it
        d = 2 * n + 1
        bits = n.bit_length()
        w = (d * bits + 1 + d) * (bits + 1)
    else:
        w = _sorting((m,))
    charge(G, w)
    charge(G, n + 1)  # sum() of the list values() would have made
    total = sum(vs)
    _LAST_SUM = (m, total, w + n + 1)
    return total


def _minmax(fn: Callable[..., Value], G: RunningGame, args: Sequence[Value]) -> Value:
    xs: Sequence[Value]
    if len(args) == 1:
        xs = _items(args[0])
    else:
        xs = args
    if xs and _WHOLE.issuperset(map(type, xs)):  # whole numbers only: skey orders them as numbers do
        return fn(xs)
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return fn(xs, key=skey)


def b_max(G: RunningGame, *args: Value) -> Value:
    return _minmax(max, G, args)


def b_min(G: RunningGame, *args: Value) -> Value:
    return _minmax(min, G, args)


def b_max_by(G: RunningGame, xs: Value, f: Func) -> Value:
    best = None
    best_k = None
    for x in _items(xs):
        k = skey(f(x))
        if best_k is None or k > best_k:
            best, best_k = x, k
    return best


def b_min_by(G: RunningGame, xs: Value, f: Func) -> Value:
    best = None
    best_k = None
    for x in _items(xs):
        k = skey(f(x))
        if best_k is None or k < best_k:
            best, best_k = x, k
    return best


def b_sorted(G: RunningGame, xs: Value, key: Optional[Func] = None) -> tuple[Value, ...]:
    if key is None:
        return tuple(sort_values(_items(xs)))
    return tuple(sorted(_items(xs), key=lambda x: skey(key(x))))


def b_reversed(G: RunningGame, xs: Value) -> tuple[Value, ...]:
    return tuple(reversed(_items(xs)))


def b_any(G: RunningGame, xs: Value, pred: Optional[Func] = None) -> bool:
    if pred is None:
        return any(x is True for x in _items(xs))
    return any(pred(x) for x in _items(xs))


def b_all(G: RunningGame, xs: Value, pred: Optional[Func] = None) -> bool:
    if pred is None:
        return all(x is True for x in _items(xs))
    return all(pred(x) for x in _items(xs))


def b_first(G: RunningGame, xs: Value, pred: Optional[Func] = None) -> Value:
    it = _items(xs)
    if pred is None:
        return it[0] if it else None
    for x in it:  # the items after the first that passes are not tested (as any() stops at its answer)
        if pred(x):
            return x
    return None


def b_last(G: RunningGame, xs: Value) -> Value:
    it = _items(xs)
    return it[-1] if it else None


def b_index_of(G: RunningGame, xs: Value, x: Value) -> Optional[int]:
    it = _items(xs)
    return it.index(x) if x in it else None


def b_keys(G: RunningGame, m: Value) -> tuple[Value, ...]:
    if not isinstance(m, dict):
        raise RuleRuntimeError("keys() needs a map")
    return tuple(sort_values(m))


def b_values(G: RunningGame, m: Value) -> tuple[Value, ...]:
    if not isinstance(m, dict):
        raise RuleRuntimeError("values() needs a map")
    return tuple([m[k] for k in sort_values(m)])


def b_get(G: RunningGame, m: Value, k: Value, default: Value) -> Value:
    if isinstance(m, dict):
        return m.get(k, default)
    if isinstance(m, tuple) and isinstance(k, int) and 0 <= k < len(m):
        return m[k]
    return default


def b_to_set(G: RunningGame, xs: Value) -> frozenset[Value]:
    return frozenset(_items(xs))


def b_to_list(G: RunningGame, xs: Value) -> tuple[Value, ...]:
    return tuple(_items(xs))


def b_copies(G: RunningGame, x: Value, n: Value) -> Value:
    if not isinstance(n, int) or n < 0 or n > 100_000:
        raise RuleRuntimeError(f"copies() needs a count from 0 to 100000, not {fmt(n)}")
    return check_value(G, (x,) * n)


def b_slice(G: RunningGame, xs: Value, start: Optional[int], end: Optional[int] = None) -> tuple[Value, ...]:
    return tuple(_items(xs)[start:end])


def b_flatten(G: RunningGame, xss: Value) -> tuple[Value, ...]:
    out: list[Value] = []
    for xs in _items(xss):
        if xs.__class__ not in _CONTAINERS:
            raise RuleRuntimeError(f"flatten() needs a list of lists; one of its items is {fmt(xs)}, not a list")
        out.extend(_items(xs))
    return tuple(out)


def b_abs(G: RunningGame, n: int) -> int:
    return abs(n)


def b_clamp(G: RunningGame, n: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, n))


def _seat(G: RunningGame, p: Value) -> int:
    if p.__class__ is not int or not 0 <= p < G.n:
        raise RuleRuntimeError(f"{fmt(p)} is not a player of this {G.n}-player game")
    return p


def b_next_player(G: RunningGame, p: Value) -> int:
    return G.next_active(_seat(G, p), 1)


def b_previous_player(G: RunningGame, p: Value) -> int:
    return G.next_active(_seat(G, p), -1)


_FROM: dict[tuple[Value, tuple[bool, ...]], tuple[int, ...]] = {}  # (seat, eliminated flags) -> players_from's answer (few: a game has few seats)


def b_players_from(G: RunningGame, p: Value) -> tuple[int, ...]:
    el = G.eliminated
    got = _FROM.get((p, el)) if p.__class__ is int else None
    if got is None:
        n = G.n
        p = _seat(G, p)
        got = tuple((p + i) % n for i in range(n) if not el[(p + i) % n])
        if len(_FROM) > 4096:
            _FROM.clear()
        _FROM[(p, el)] = got
    return got


def b_is_eliminated(G: RunningGame, p: Value) -> bool:
    return bool(G.eliminated[_seat(G, p)])


def b_seat(G: RunningGame, p: Value) -> int:
    return _seat(G, p) + 1


def _board(G: RunningGame, b: Value) -> Value:
    if b.__class__.__name__ != "Board":
        raise RuleRuntimeError("expected a board")
    return b


def b_nodes(G: RunningGame, b: Value) -> tuple[Value, ...]:
    return _board(G, b).nodes


def b_neighbors(G: RunningGame, b: Value, n: Value) -> tuple[Value, ...]:
    return _board(G, b).adj.get(n, ())


def b_adjacent(G: RunningGame, b: Value, n: Value, m: Value) -> bool:
    return m in _board(G, b).adj.get(n, ())


def b_attr(G: RunningGame, b: Value, n: Value, name: str, default: Value = None) -> Value:
    return _board(G, b).attr(n, name, default)


def b_distance(G: RunningGame, b: Value, n: Value, m: Value, through: Optional[Func] = None) -> Optional[int]:
    return _board(G, b).distance(n, m, through, G)


def b_reachable(G: RunningGame, b: Value, n: Value, steps: int, through: Optional[Func] = None) -> tuple[Value, ...]:
    return _board(G, b).reachable(n, steps, through, G)


def b_path_exists(G: RunningGame, b: Value, n: Value, m: Value, through: Optional[Func] = None) -> bool:
    return _board(G, b).distance(n, m, through, G) is not None


def b_group(G: RunningGame, b: Value, n: Value, where: Optional[Func] = None) -> Value:
    return _board(G, b).group(n, where, G)


def b_groups(G: RunningGame, b: Value, where: Optional[Func] = None) -> Value:
    return _board(G, b).groups(where, G)


def b_line_length(G: RunningGame, b: Value, n: Value, where: Optional[Func] = None) -> int:
    return _board(G, b).line_length(n, where, G)


def b_award_by_rank(G: RunningGame, values: Value, prizes: Iterable[int], ties: str = "split") -> dict[Value, int]:
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


def b_text(G: RunningGame, *args: Value) -> str:
    out = " ".join(x if isinstance(x, str) else readable(x) for x in args)
    charge(G, len(out) // 16)
    if len(out) > 1_000_000:
        raise RuleRuntimeError("text() would be longer than 1,000,000 characters")
    return out


IMPLS: dict[str, Callable[..., Any]] = {name[2:]: fn for name, fn in globals().items() if name.startswith("b_")}


# ============================================================================ what each built-in costs
# COSTS[name](args) is the work charged before a built-in runs, in proportion to its input; calls of
# function arguments (x => ...) are charged as they happen, graph searches per node they visit.
def _cost_of(a: Value) -> int:
    """Walking a collection once: a list costs its length; a set or map is sorted (by every part of
    its items) before it is walked."""
    c = a.__class__
    if c is tuple:
        return len(a) + 1
    if c is frozenset or c is dict:
        return deep_cost(a) * len(a).bit_length() + 1
    if c is Pile:
        return len(a) + 1
    if c is str:
        return len(a) // 64 + 1
    return 1


def _shallow(args: Sequence[Value]) -> int:
    n = 0
    for a in args:
        n += _cost_of(a)
    return n


_LAST_FLAT: tuple[tuple, int] = ((), 2)  # the last flat list walked_and_read measured, and its charge


def walked_and_read(a: Value) -> int:
    """_cost_of(a) + deep_cost(a), with a set's or map's parts measured once (its walk is its sort). A
    flat list read again and again (the same argument in a loop: count_of(cost, g) for each g) is told
    at once by the last one's charge (the object itself is kept: a list is never changed in place, and
    one holding no list, set or map cannot change inside; the pair is swapped whole, so threads are safe)."""
    global _LAST_FLAT
    c = a.__class__
    if c is int or c is bool or a is None:  # (the common cases, without the calls)
        return 2
    if c is str:
        return 2 * (len(a) // 64 + 1)
    if c is tuple:
        last = _LAST_FLAT
        if a is last[0]:
            return last[1]
        if len(a) < MAX_SIZE and CONTAINERS.isdisjoint(map(type, a)):  # a flat list
            n = 2 * len(a) + 2
            _LAST_FLAT = (a, n)
            return n
        return len(a) + 1 + deep_cost(a)
    if c is frozenset or c is dict:
        d = deep_cost(a)
        return d * len(a).bit_length() + 1 + d
    return _cost_of(a) + deep_cost(a)


def charge_read(args: Sequence[Value]) -> int:
    """Items are hashed, compared or printed: every part of them counts."""
    n = 0
    for a in args:
        n += walked_and_read(a)
    return n


def _sorting(args: Sequence[Value]) -> int:
    """Sorting by skey: every part of every item, times log n comparisons."""
    n = 0
    for a in args:
        size = len(a) if a.__class__ in _CONTAINERS else 1
        n += walked_and_read(a) * (size.bit_length() + 1)
    return n


def _flattening(args: Sequence[Value]) -> int:
    """Every inner item is copied once (an inner set or map is sorted first)."""
    n = 1
    for outer in args:
        if outer.__class__ not in _CONTAINERS:
            continue
        n += len(outer).bit_length() * len(outer) if outer.__class__ in (frozenset, dict) else len(outer)
        for xs in outer:
            size = len(xs) if xs.__class__ in _CONTAINERS else 1
            n += size * (size.bit_length() + 1 if xs.__class__ in (frozenset, dict) else 1) + 1
    return n


def _boards(args: Sequence[Value]) -> int:
    return 1


COSTS: dict[str, Callable[[Sequence[Value]], int]] = {name: _shallow for name in IMPLS}
COSTS.update({name: charge_read for name in ("count_of", "index_of", "to_set", "max", "min", "text")})
COSTS.update({name: _sorting for name in ("sorted", "keys", "values", "award_by_rank")})
COSTS["count"] = lambda args: 1 if len(args) == 1 else _shallow(args)  # count(xs) is only a length
COSTS["get"] = lambda args: deep_cost(args[1]) + 1 if len(args) > 1 else 1  # one look-up by a key
COSTS["copies"] = lambda args: 1  # its result is measured (and charged) whole
COSTS["flatten"] = _flattening
COSTS.update({name: _boards for name in ("nodes", "neighbors", "adjacent", "attr", "distance", "reachable",
                                         "path_exists", "group", "groups", "line_length", "next_player",
                                         "previous_player", "players_from", "is_eliminated", "seat", "abs",
                                         "clamp")})
# the built-ins whose own work is constant (graph searches charge their visits themselves)
FLAT_COST = frozenset(name for name, cost in COSTS.items() if cost is _boards)
# results that may be bigger or deeper than their inputs are checked against the value limits
GROWS = frozenset({"copies", "award_by_rank", "groups"})

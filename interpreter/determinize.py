"""Determinization: a full game state consistent with what one seat knows.

``determinize(game, seat, rng) -> Game`` (also ``Game.determinize(seat, rng)``) returns an
independent copy of ``game`` in which every value hidden from ``seat`` has been dealt out again at
random among the hidden places it could stand in, and future chance has been drawn afresh. Search
agents (interpreter/mcts.py) play their playouts on such samples, so they never use what their
seat may not see.

What is hidden is exactly what ``Game.view(seat)`` hides (docs/language.md, "Hidden information
and views"), worked out from the same declarations and the same knowledge by place:

* a variable ``visible to none``; of a per-player variable ``visible to owner`` or ``known``, the
  other seats' values; of a ``known`` variable, its places not revealed to the seat (or to all);
  the same for piece fields (``owner`` fields are seen by the piece's owner);
* the shuffled part of every deck and bag, wherever it is (nobody knows what it holds and in which
  order it will come out);
* the game's random number generator (future draws and rolls), and the outcomes of chance
  decisions in the log.

How a sample is made. The hidden values are gathered into pools, one per declared type (``Card``,
``int``, ``1..6``, ``list[Card]`` ...): the items of a hidden list, deck, bag or set, the values of
a hidden map's entries, a hidden single value. Each pool is put in canonical order (so that the
sample does not depend on where each value stood), shuffled with ``rng``, and dealt back into the
same places. Everything a view shows is kept: the sizes of hidden collections, the positions of a
partly known list, the seat's own values and the places revealed to it, every public value, the
ordered (known) part of piles, pieces and their ids, the pending decision. An absent value
(``none``) only moves between single-value places that may hold one; a set never receives the same
item twice. The game's random generator is seeded anew from ``rng`` (and so is ``seed``), so the
sample's future chance is independent of the real game's; chance outcomes in the log read ``"?"``.

What it keeps, and so what it assumes (documented in docs/agents.md):

* components are moved, never invented: for a pool some deck or bag holds items of, or of table rows,
  the multiset of hidden values is kept. For things that are conserved — cards, tiles, tokens — that
  multiset is public (the components minus what the seat sees), so the sample uses nothing the seat
  does not know;
* values the rules make up in secret (a pool no pile holds: a secret number, a hidden roll) are drawn
  afresh from their declared type's values (a range, bool, an enum, player), never from the hidden
  values; a type without such a list (int, str) gets its default value;
* the keys of a map's hidden entries are kept (a view hides them): keep secret positions in
  values (``map[node, bool]`` with every node present), not in which keys exist;
* the locals of suspended rule code (``let`` values of a flow or an action waiting for a decision)
  are kept as they are; views do not show them either.

A sample is only made at ``seat``'s own decision (or for a finished game): the options of another
seat's pending decision, or of a pending draw, can depend on the hidden values themselves.
Deterministic: the same game, seat and ``rng`` state give the same sample, whatever the hidden
values are (for components only their multiset per type matters, and that is public).
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Collection, Optional, Protocol, Sequence, TypeVar, Union

from . import rng as R
from .errors import GameError
from .hidden import Path
from .values import Pile, Value, default_value, skey

if TYPE_CHECKING:
    from typing_extensions import Self

    from rulelang.program import Program
    from rulelang.types import Type

    from .pieces import PieceKind

__all__ = ["determinize", "hidden_count", "DeterminizeError"]

CHANCE = -1
MAX_SET_TRIES = 50  # reshuffles tried when a set would receive the same item twice
MAX_DOMAIN = 1_000  # a range type of at most this many values is drawn from (a larger one: its default)


class SampledRules(Protocol):
    """The compiled rules (interpreter/ruleset.py), as far as a sample reads them."""

    @property
    def program(self) -> Program: ...

    @property
    def vars(self) -> Sequence[tuple[str, bool, Any, Type, str]]: ...  # (name, per player, start, type, visibility)

    @property
    def pieces(self) -> dict[str, PieceKind]: ...


class SampledGame(Protocol):
    """A game (interpreter/game.py's Game), as far as a sample reads and makes one. (A protocol: the game
    stands above this module.)"""

    data: dict[str, Value]
    seed: int
    rng: int  # the state of its random generator (interpreter/rng.py)
    log: list[dict[str, Any]]

    @property
    def rs(self) -> SampledRules: ...

    @property
    def n(self) -> int: ...

    @property
    def current_player(self) -> int: ...

    def is_over(self) -> bool: ...

    def clone(self) -> Self: ...

    def _known_to(self, name: str, player: int) -> tuple[Collection[Path], Collection[Path]]: ...


GameT = TypeVar("GameT", bound=SampledGame)
Slot = tuple[str, bool, Optional[int]]  # (pool key, may hold none, the set it is an item of, or None)


class DeterminizeError(GameError):
    """No sample could be made (a one-line message): the seat is not the one deciding, or the hidden
    items of a type cannot be dealt out again without giving a set the same item twice."""


# ------------------------------------------------------------------------------------------ types
def _arg(ty: Optional[Type], i: int) -> Optional[Type]:
    args = getattr(ty, "args", ()) if ty is not None else ()
    return args[i] if i < len(args) else None


def _key(ty: Optional[Type]) -> str:
    """The pool a value of declared type `ty` goes into."""
    return str(ty) if ty is not None else "any"


def _may_hold_pile(ty: Optional[Type], depth: int = 0) -> bool:
    """Whether a value of type `ty` can hold a deck or a bag (whose shuffled part is hidden from all)."""
    if ty is None or depth > 50:
        return True
    if ty.name in ("deck", "bag", "any"):
        return True
    return any(_may_hold_pile(a, depth + 1) for a in getattr(ty, "args", ()))


# ------------------------------------------------------------------------------------------ the walk
class _Walk:
    """Walks the state the way views do; at each hidden value it calls ``self.slot``.

    In the collecting pass ``slot`` records the value and gives it back; in the dealing pass it gives
    the value dealt to that slot. Both passes visit the slots in the same order."""

    def __init__(self, game: SampledGame, seat: int) -> None:
        self.game = game
        self.seat = seat
        self.slots: list[Slot] = []  # (pool key, nullable, set group or None)
        self.items: list[Value] = []  # the value found at each slot (collecting pass)
        self.dealt: Optional[list[Value]] = None  # the value dealt to each slot (dealing pass)
        self.groups = 0
        self.types: dict[str, Optional[Type]] = {}  # pool key -> the declared type of its values
        self.conserved: set[str] = set()  # pool keys of components: a pile holds some of them (see _deal)

    def slot(self, ty: Optional[Type], v: Value, nullable: bool, group: Optional[int] = None,
             in_pile: bool = False) -> Value:
        i = len(self.slots) if self.dealt is None else self._next
        if self.dealt is None:
            key = _key(ty)
            self.slots.append((key, nullable or v is None, group))
            self.items.append(v)
            self.types.setdefault(key, ty)
            if in_pile:
                self.conserved.add(key)
            return v
        self._next += 1
        return self.dealt[i]

    def deal_pass(self, dealt: list[Value]) -> None:
        self.dealt = dealt
        self._next = 0
        self.groups = 0

    # -- values ---------------------------------------------------------------------------------
    def visible(self, v: Value, ty: Optional[Type]) -> Value:
        """A value the seat sees; only the shuffled parts of piles inside it are hidden."""
        c = v.__class__
        if c is Pile:
            et = _arg(ty, 0)
            known = tuple(self.visible(x, et) for x in v.known)
            pool = [self.slot(et, x, False, in_pile=True) for x in v.pool]
            return Pile(v.kind, known, pool)
        if c is tuple:
            if ty is not None and ty.name == "tuple":
                return tuple(self.visible(x, _arg(ty, i)) for i, x in enumerate(v))
            et = _arg(ty, 0)
            return tuple(self.visible(x, et) for x in v)
        if c is dict:
            vt = _arg(ty, 1)
            return {k: self.visible(x, vt) for k, x in v.items()}
        return v  # single values and sets (a set cannot hold a pile)

    def hidden(self, v: Value, ty: Optional[Type], nullable: bool) -> Value:
        """A value the seat does not see at all: a view shows "?" or {"hidden": size}."""
        c = v.__class__
        if c is tuple:
            if ty is not None and ty.name == "tuple":
                return tuple(self.slot(_arg(ty, i), x, False) for i, x in enumerate(v))
            et = _arg(ty, 0)
            return tuple(self.slot(et, x, False) for x in v)
        if c is frozenset:
            et = _arg(ty, 0)
            self.groups += 1
            g = self.groups
            return frozenset(self.slot(et, x, False, g) for x in sorted(v, key=skey))
        if c is dict:
            vt = _arg(ty, 1)
            return {k: self.slot(vt, x, False) for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))}
        if c is Pile:
            et = _arg(ty, 0)
            known = tuple(self.slot(et, x, False, in_pile=True) for x in v.known)
            pool = [self.slot(et, x, False, in_pile=True) for x in v.pool]
            return Pile(v.kind, known, pool)
        return self.slot(ty, v, nullable)

    def partial(self, v: Value, ty: Optional[Type], path: Path, seen: Collection[Path], inner: Collection[Path],
                nullable: bool) -> Value:
        """A value of a `known`/`owner` place at `path`, of which the seat knows the places `seen`."""
        if path in seen:
            return self.visible(v, ty)
        if path not in inner:
            return self.hidden(v, ty, nullable)
        c = v.__class__
        if c is tuple:
            fixed = ty is not None and ty.name == "tuple"
            return tuple(self.partial(x, _arg(ty, i) if fixed else _arg(ty, 0), path + (i,), seen, inner, False)
                         for i, x in enumerate(v))
        if c is dict:  # a hidden entry shows as nothing but a count: its value moves whole
            vt = _arg(ty, 1)
            out: dict[Value, Value] = {}
            for k, x in sorted(v.items(), key=lambda kv: skey(kv[0])):
                p = path + (k,)
                out[k] = self.partial(x, vt, p, seen, inner, False) if p in seen or p in inner else \
                    self.slot(vt, x, False)
            return out
        return self.hidden(v, ty, nullable)

    # -- the state ------------------------------------------------------------------------------
    def state(self, data: dict[str, Value]) -> dict[str, Value]:
        """The game's data with every hidden value passed through `slot`; returns the new data."""
        g = self.game
        rs = g.rs
        seat = self.seat
        out = dict(data)
        for name, per, _, ty, vis in rs.vars:
            value = data[name]
            if vis == "all":
                if not _may_hold_pile(ty):
                    continue
                out[name] = tuple(self.visible(x, ty) for x in value) if per else self.visible(value, ty)
            elif vis == "none":
                out[name] = tuple(self.hidden(x, ty, True) for x in value) if per else self.hidden(value, ty, True)
            else:
                seen, inner = g._known_to(name, seat)
                if per:
                    out[name] = tuple(self.visible(x, ty) if q == seat else
                                      self.partial(x, ty, (q,), seen, inner, True) for q, x in enumerate(value))
                else:
                    out[name] = self.partial(value, ty, (), seen, inner, True)
        for k in rs.pieces.values():
            if not k.hidden and not any(_may_hold_pile(t) for t in k.types):
                continue
            rows = data[k.key]
            seen, inner = g._known_to(k.key, seat) if k.hidden else ((), ())
            new_rows: dict[int, tuple[Value, ...]] = {}
            for pid in sorted(rows):
                row = rows[pid]
                fields: list[Value] = []
                for i, v in enumerate(row):
                    vis, ty = k.vis[i], k.types[i]
                    if vis == "all" or (vis == "owner" and k.owner is not None and row[k.owner] == seat):
                        fields.append(self.visible(v, ty))
                    elif vis == "none":
                        fields.append(self.hidden(v, ty, True))
                    else:
                        fields.append(self.partial(v, ty, (pid, i), seen, inner, True))
                new_rows[pid] = tuple(fields)
            out[k.key] = new_rows
        return out


# ------------------------------------------------------------------------------------------ dealing
def _domain(game: SampledGame, ty: Optional[Type]) -> Optional[list[Value]]:
    """The possible values of a declared type, in order, when they are few (a range, bool, an enum,
    player); None for a type without such a list (int, str, a record, a list ...)."""
    if ty is None:
        return None
    if ty.kind == "range" and ty.high - ty.low < MAX_DOMAIN:
        return list(range(ty.low, ty.high + 1))
    if ty.name == "bool":
        return [False, True]
    if ty.name == "player":
        return list(range(game.n))
    if ty.kind == "enum":
        decl = game.rs.program.decls.get(ty.name)
        members = getattr(decl, "members", None)
        return list(members) if members else None
    return None


def _free_values(game: SampledGame, walk: _Walk, idx: list[int], ty: Optional[Type], rng: random.Random,
                 dealt: list[Value]) -> None:
    """Deal values made up by the rules (no pile holds any of them; not table rows): each slot gets a
    value drawn from the declared type's possible values, without looking at the hidden ones, so the
    sample is the same whatever they are. A set's items are drawn without repeats. A type without a
    short list of values (int, str) gets its default value: declare a range or an enum to let search
    guess among the possible values."""

    domain = _domain(game, ty)
    groups: dict[int, list[int]] = {}  # set -> its slots
    for i in idx:
        g = walk.slots[i][2]
        if g is not None:
            groups.setdefault(g, []).append(i)
    for i in idx:
        if walk.slots[i][2] is not None:
            continue
        if domain is None:
            dealt[i] = default_value(ty) if ty is not None else None
        else:
            options = domain + [None] if walk.slots[i][1] else domain
            dealt[i] = options[rng.randrange(len(options))]
    for members in groups.values():
        if domain is not None and len(domain) >= len(members):
            for i, v in zip(members, rng.sample(domain, len(members))):
                dealt[i] = v
        else:  # (a set larger than the declared values: it holds what it holds, and that is seen by size)
            for i, v in zip(members, sorted((walk.items[i] for i in members), key=skey)):
                dealt[i] = v


def _deal(walk: _Walk, rng: random.Random) -> list[Value]:
    """The value dealt to each slot. Components (a pool some pile holds items of, or table rows): per
    pool, the hidden values in canonical order, shuffled, then dealt so that `none` only goes to slots
    that may hold it and no set gets an item twice. Values the rules made up (a secret number, a
    hidden roll): drawn afresh from their declared type's values (_free_values)."""
    pools: dict[str, list[int]] = {}  # pool key -> its slots
    for i, (key, _, _) in enumerate(walk.slots):
        pools.setdefault(key, []).append(i)
    dealt: list[Value] = [None] * len(walk.slots)
    for key in sorted(pools):
        idx = pools[key]
        ty = walk.types.get(key)
        if key not in walk.conserved and not (ty is not None and ty.kind == "record"):
            _free_values(walk.game, walk, idx, ty, rng, dealt)
            continue
        values = sorted((walk.items[i] for i in idx), key=skey)
        nones = sum(1 for v in values if v is None)
        things = [v for v in values if v is not None]
        nullable = [i for i in idx if walk.slots[i][1]]
        groups = any(walk.slots[i][2] is not None for i in idx)
        for attempt in range(MAX_SET_TRIES):
            empty: set[int] = set(rng.sample(nullable, nones)) if nones else set()
            order = list(things)
            rng.shuffle(order)
            it = iter(order)
            for i in idx:
                dealt[i] = None if i in empty else next(it)
            if not groups or _sets_distinct(walk, idx, dealt):
                break
        else:
            raise DeterminizeError(f"the hidden values of type {key} cannot be dealt out again without "
                                   "putting the same item twice in a set")
    return dealt


def _sets_distinct(walk: _Walk, idx: list[int], dealt: list[Value]) -> bool:
    seen: dict[int, set[Value]] = {}
    for i in idx:
        g = walk.slots[i][2]
        if g is not None:
            got = seen.setdefault(g, set())
            if dealt[i] in got:
                return False
            got.add(dealt[i])
    return True


def determinize(game: GameT, seat: int, rng: Union[random.Random, int, None] = None) -> GameT:
    """A copy of `game` with every value hidden from `seat` dealt out again at random (see the module
    docstring); `rng` is a ``random.Random`` (or an int seed), the only source of randomness."""
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < game.n:
        raise DeterminizeError(f"there is no player {seat!r} in a {game.n}-player game")
    if not game.is_over() and game.current_player != seat:
        who = "chance" if game.current_player == CHANCE else f"P{game.current_player}"
        raise DeterminizeError(f"a sample for P{seat} is made at P{seat}'s own decision; {who} is to decide now")
    g = game.clone()
    walk = _Walk(game, seat)
    walk.state(g.data)
    if walk.slots:
        walk.deal_pass(_deal(walk, rng))
        g.data = walk.state(g.data)  # the clone's own copies: the piece maps are changed in place by play
    new_seed = rng.getrandbits(64)
    g.seed = new_seed
    g.rng = R.seed_state(new_seed)
    if any(e.get("player") == CHANCE for e in game.log):
        g.log = [{"player": CHANCE, "action": "?"} if e.get("player") == CHANCE else dict(e) for e in game.log]
    return g


def hidden_count(game: SampledGame, seat: int) -> int:
    """How many values are hidden from `seat` now (the slots a sample deals out): 0 means the state is
    fully known to the seat apart from future chance."""
    walk = _Walk(game, seat)
    walk.state(game.data)
    return len(walk.slots)

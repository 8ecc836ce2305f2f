"""Pieces: objects with changing fields, created and destroyed during the game (`piece` declarations).

A piece value is a reference (values.Piece: kind and id). The live pieces of a kind are game state:
`G.data["#KIND"]` maps id -> tuple of field values in declaration order, and `G.data["#KIND.next"]` is
the next id (ids start at 1 and are never reused). Both keys start with "#", which no variable name
can, so they never clash with variables, and they save, load and copy with the rest of `G.data`.
The id -> fields map is changed in place (each field tuple is replaced whole); `clone()` copies it.

Knowledge by place extends to fields: the place of `s.f[k]` is ("#KIND", (id, field position, k)).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Collection, Optional, Protocol, Sequence

from rulelang import ast as A

from .builtins import RuleRuntimeError, RunningGame
from .builtins import charge, over
from .runtime import Frame, Pending, Place, _get, _set_path, index_chain, range_check
from .errors import GameError
from .hidden import Path, hidden_form, shown_value
from .values import Json, Pile, Piece, Value, default_value, fmt, to_plain

if TYPE_CHECKING:
    from rulelang.checker import Checker
    from rulelang.program import Program
    from rulelang.types import Type

MAX_PIECES = 100_000  # live pieces in one game (all kinds together)

Locals = dict[str, Value]  # the local names of a running procedure
Closure = Callable[[Any, Locals], Value]  # a compiled expression: (the game, the locals) -> its value


# What this module reads of the ruleset, the game and the expression compiler, which all stand above it
# (interpreter/ruleset.py, game.py, closures.py): protocols, so that it need not import them.
class PieceRules(Protocol):
    """The compiled rules' piece kinds."""

    @property
    def pieces(self) -> dict[str, PieceKind]: ...  # name -> kind

    @property
    def pieces_by_key(self) -> dict[str, PieceKind]: ...  # its key in the game's data ("#NAME") -> kind


class PiecesGame(RunningGame, Protocol):
    """A running game: its state (variables and pieces), its rules, what each seat knows."""

    data: dict[str, Value]

    @property
    def rs(self) -> PieceRules: ...

    def forget(self, name: str, keys: tuple[Value, ...]) -> None: ...

    def _known_to(self, name: str, player: int) -> tuple[Collection[Path], Collection[Path]]: ...


class LoadedGame(Protocol):
    """A game read from a save (interpreter/saves.py): its state, running procedures and pending decision."""

    @property
    def data(self) -> dict[str, Value]: ...

    @property
    def frames(self) -> Sequence[Frame]: ...

    @property
    def pending(self) -> Optional[Pending]: ...


class ExprCompiler(Protocol):
    """The compiler of expressions into closures (interpreter/closures.py)."""

    @property
    def rs(self) -> PieceRules: ...

    def compile(self, e: Optional[A.Expr]) -> Closure: ...


class PieceKind:
    def __init__(self, name: str, fields: list[str], types: list[Type], defaults: list[Optional[Closure]],
                 vis: list[str], checks: list[Optional[Callable[[Value], None]]]) -> None:
        self.name = name
        self.key = "#" + name
        self.next_key = "#" + name + ".next"
        self.fields = fields  # names, in declaration order
        self.types = types
        self.defaults = defaults  # compiled closure or None (must be given)
        self.vis = vis
        self.checks = checks  # range checks or None
        self.index = {f: i for i, f in enumerate(fields)}
        self.owner = self.index.get("owner")
        self.hidden = any(v in ("known", "owner") for v in vis)


def build_pieces(rs: PieceRules, program: Program, checker: Checker, xc: ExprCompiler) -> dict[str, PieceKind]:
    """The piece kinds of a program: name -> PieceKind."""
    out: dict[str, PieceKind] = {}
    for d in program.decls.values():
        if isinstance(d, A.PieceDecl):
            names = [f.name for f in d.fields]
            types = [checker.resolve_type(f.type) for f in d.fields]
            out[d.name] = PieceKind(
                d.name, names, types,
                [xc.compile(f.default) if f.default is not None else None for f in d.fields],
                [f.visibility for f in d.fields],
                [range_check(t, f"{d.name}.{f.name}") for t, f in zip(types, d.fields)])
    return out


def state_keys(rs: PieceRules) -> set[str]:
    """The keys of G.data that hold pieces."""
    out: set[str] = set()
    for k in rs.pieces.values():
        out.add(k.key)
        out.add(k.next_key)
    return out


def init_pieces(G: PiecesGame) -> None:
    for k in G.rs.pieces.values():
        G.data[k.key] = {}
        G.data[k.next_key] = 1


def copy_pieces(G: PiecesGame) -> None:
    """After a shallow copy of G.data: give the copy its own id -> fields maps."""
    for k in G.rs.pieces.values():
        G.data[k.key] = dict(G.data[k.key])


def _coerce(ty: Optional[Type], v: Value) -> Value:
    if v.__class__ is tuple and ty is not None:
        if ty.name == "deck":
            return Pile("deck", v, ())
        if ty.name == "bag":
            return Pile("bag", (), v)
        if ty.name == "set":
            return frozenset(v)
    if ty is not None and ty.name == "set" and v.__class__ is dict and not v:
        return frozenset()
    return v


def row_of(G: PiecesGame, ref: Value, kind: Optional[str] = None) -> tuple[Value, ...]:
    """The field values of a live piece, or a rule error naming it."""
    if ref.__class__ is not Piece:
        raise RuleRuntimeError(f"{fmt(ref)} is not a piece")
    if kind is not None and ref.kind != kind:
        raise RuleRuntimeError(f"{fmt(ref)} is not a {kind}")
    try:
        return G.data["#" + ref.kind][ref.id]
    except KeyError:
        raise RuleRuntimeError(f"{fmt(ref)} was destroyed") from None


def read_field(G: PiecesGame, ref: Value, name: str) -> Value:
    row = row_of(G, ref)
    if name == "id":
        return ref.id
    k = G.rs.pieces[ref.kind]
    i = k.index.get(name)
    if i is None:
        raise RuleRuntimeError(f"{fmt(ref)} has no field '{name}'")
    return row[i]


_LIVE: dict[tuple[str, tuple[int, ...]], tuple[Piece, ...]] = {}  # (kind, its live ids in creation order) -> their Pieces (shared: a Piece is never changed)
_LIVE_ITEMS = [0]  # ids held by _LIVE's keys: it starts again past MAX_LIVE_KEPT
MAX_LIVE_KEPT = 200_000


def live(G: PiecesGame, name: str) -> tuple[Piece, ...]:
    """The live pieces of a kind, in creation order; charges the work budget like a list of that size."""
    ids = G.data["#" + name]
    G.work += len(ids) + 1  # charge(G, len(ids) + 1), inline (G is a game here)
    if G.work > G.work_mark:
        over(G)
    key = (name, tuple(ids))
    got = _LIVE.get(key)
    if got is None:
        got = tuple([Piece(name, i) for i in ids])
        _LIVE_ITEMS[0] += len(got) + 1
        if _LIVE_ITEMS[0] > MAX_LIVE_KEPT:
            _LIVE.clear()
            _LIVE_ITEMS[0] = len(got) + 1
        _LIVE[key] = got
    return got


def count_live(G: PiecesGame) -> int:
    return sum(len(G.data[k.key]) for k in G.rs.pieces.values())


def compile_new(xc: ExprCompiler, e: A.New) -> Callable[[PiecesGame, Locals], Piece]:
    """`new KIND(field: value, ...)` -> a closure that creates the piece and returns its reference."""
    kind = xc.rs.pieces[e.kind]
    given = {a.name: xc.compile(a.value) for a in e.args}
    makers: list[tuple[Optional[Closure], bool]] = []  # per field: how it is made, and whether it is given
    for i, f in enumerate(kind.fields):
        if f in given:
            makers.append((given[f], True))
        elif kind.defaults[i] is not None:
            makers.append((kind.defaults[i], False))
        else:
            makers.append((None, False))
    key, next_key, name = kind.key, kind.next_key, kind.name

    def new(G: PiecesGame, L: Locals) -> Piece:
        charge(G, 1 + len(makers))
        if count_live(G) >= MAX_PIECES:
            raise RuleRuntimeError(f"more than {MAX_PIECES:,} pieces at once: destroy pieces that left the game")
        values = []
        for i, (f, _) in enumerate(makers):
            ty = kind.types[i]
            v = _coerce(ty, f(G, L) if f is not None else default_value(ty))
            if kind.checks[i] is not None:
                kind.checks[i](v)  # type: ignore[misc]  # (not None: tested above; mypy does not narrow an item)
            values.append(v)
        pid = G.data[next_key]
        G.data[next_key] = pid + 1
        G.data[key][pid] = tuple(values)
        return Piece(name, pid)
    return new


def compile_destroy(xc: ExprCompiler, e: A.Destroy) -> Callable[[PiecesGame, Locals], None]:
    f = xc.compile(e.piece)

    def destroy(G: PiecesGame, L: Locals) -> None:
        ref = f(G, L)
        row_of(G, ref)
        k = G.rs.pieces[ref.kind]
        if k.hidden:
            G.forget(k.key, (ref.id,))
        del G.data[k.key][ref.id]
    return destroy


def is_piece_place(target: A.Expr) -> bool:
    root: Optional[A.Expr] = target
    while isinstance(root, A.Index):
        root = root.target
    return (isinstance(root, A.Field) and root.target is not None and root.target.ty is not None
            and root.target.ty.kind == "piece")


def place(xc: ExprCompiler, target: A.Expr) -> Place:
    """The place an assignment's target names: a PieceFieldPlace for a field of a piece, else a Place."""
    return PieceFieldPlace(xc, target) if is_piece_place(target) else Place(xc, target)


class PieceFieldPlace(Place):
    """A field of a piece, with an optional chain of [index] steps: `s.f`, `s.f[0]`.
    Its keys (keys_now) are (id, field position, index...), the path of the place in G.data["#KIND"]."""

    def __init__(self, xc: ExprCompiler, target: A.Expr) -> None:
        self.keys, root = index_chain(xc, target)
        self.kind = kind = xc.rs.pieces[root.target.ty.name]
        self.ref = xc.compile(root.target)
        self.field = root.name
        self.fi = kind.index.get(root.name)
        self.name = kind.key
        self.is_var = False
        self.text = f"{kind.name}.{root.name}" + "[...]" * len(self.keys)
        self.typed(target.ty)
        self.watch = kind.vis[self.fi] in ("known", "owner") if self.fi is not None else False

    def _id(self, G: PiecesGame, L: Locals) -> int:
        ref = self.ref(G, L)
        if ref is None:
            raise RuleRuntimeError(f"cannot change {self.text}: the piece is none")
        row_of(G, ref, self.kind.name)
        if self.fi is None:
            raise RuleRuntimeError(f"cannot change {self.text}: a piece's id is fixed")
        return ref.id

    def root(self, G: PiecesGame, L: Locals) -> Value:
        return G.data[self.name][self._id(G, L)][self.fi]  # the field's value (the pieces are not copied)

    def get(self, G: PiecesGame, L: Locals) -> Value:
        c = G.data[self.name][self._id(G, L)][self.fi]
        for k in self.keys:
            c = _get(c, k(G, L))
        return c

    def keys_now(self, G: PiecesGame, L: Locals) -> tuple[Value, ...]:
        return (self._id(G, L), self.fi) + tuple(k(G, L) for k in self.keys)

    def set(self, G: PiecesGame, L: Locals, v: Value) -> None:
        if self.pile_kind is not None and v.__class__ is tuple:
            k = self.pile_kind
            v = Pile("deck", v, ()) if k == "deck" else (Pile("bag", (), v) if k == "bag" else frozenset(v))
        self.set_at(G, L, self.keys_now(G, L), v)

    def get_at(self, G: PiecesGame, L: Locals, ks: Sequence[Value]) -> Value:
        try:
            c = G.data[self.name][ks[0]]
        except KeyError:
            raise RuleRuntimeError(f"{self.kind.name}#{ks[0]} was destroyed") from None
        for k in ks[1:]:
            c = _get(c, k)
        return c

    def set_at(self, G: PiecesGame, L: Locals, ks: Sequence[Value], v: Value) -> None:
        if self.check is not None:
            self.check(v)
        rows = G.data[self.name]
        try:
            row = rows[ks[0]]
        except KeyError:
            raise RuleRuntimeError(f"{self.kind.name}#{ks[0]} was destroyed") from None
        fi = ks[1]
        new = _set_path(row[fi], list(ks[2:]), v) if len(ks) > 2 else v
        rows[ks[0]] = row[:fi] + (new,) + row[fi + 1:]
        if self.watch:
            G.forget(self.name, tuple(ks))


# ------------------------------------------------------------------------------------ views
def view_pieces(G: PiecesGame, player: Optional[int]) -> dict[str, list[dict[str, Json]]]:
    """view()["pieces"]: per kind, the live pieces in id order as {"id": n, field: value, ...}; a
    piece's existence, id and public fields are public, hidden fields show as for variables."""
    out: dict[str, list[dict[str, Json]]] = {}
    for k in G.rs.pieces.values():
        rows = G.data[k.key]
        seen, inner = G._known_to(k.key, player) if (k.hidden and player is not None) else ((), ())
        items: list[dict[str, Json]] = []
        for pid in sorted(rows):
            row = rows[pid]
            d: dict[str, Json] = {"id": pid}
            for i, f in enumerate(k.fields):
                v = row[i]
                vis = k.vis[i]
                if player is None:
                    d[f] = to_plain(v, full=True)
                elif vis == "all" or (vis == "owner" and k.owner is not None and row[k.owner] == player):
                    d[f] = to_plain(v)
                elif vis == "none":
                    d[f] = hidden_form(v)
                else:
                    d[f] = shown_value(v, (pid, i), seen, inner)
            items.append(d)
        out[k.name] = items
    return out


# ------------------------------------------------------------------------------------ save files
def load_pieces(rs: PieceRules, data: dict[str, Value], what: str) -> None:
    """Check the pieces of a loaded save (`data`: G.data decoded). Raises GameError naming the problem:
    unknown kinds in piece references, ids from 1 below the next id, one value per field, range types
    kept, piece references to kinds of these rules."""
    total = 0
    for k in rs.pieces.values():
        rows, nxt = data.get(k.key), data.get(k.next_key)
        if nxt.__class__ is not int or nxt < 1:
            raise GameError(f"{what}: the next id of {k.name} is {fmt(nxt)}, not a number from 1")
        if rows.__class__ is not dict:
            raise GameError(f"{what}: the pieces of {k.name} are not a map of id to fields")
        total += len(rows)
        if total > MAX_PIECES:
            raise GameError(f"{what}: more than {MAX_PIECES:,} pieces")
        for pid, row in rows.items():
            if pid.__class__ is not int or not 1 <= pid < nxt:
                raise GameError(f"{what}: {k.name} has id {fmt(pid)}, not a number from 1 to {nxt - 1}")
            if row.__class__ is not tuple or len(row) != len(k.fields):
                raise GameError(f"{what}: {k.name}#{pid} must have {len(k.fields)} field values")
            for i, v in enumerate(row):
                if not _fits(rs, k.types[i], v):
                    raise GameError(f"{what}: {k.name}#{pid}.{k.fields[i]} holds {fmt(v)[:40]}, "
                                    f"not a {k.types[i]}")
                if k.types[i].kind == "range" and v is not None and not k.types[i].low <= v <= k.types[i].high:
                    raise GameError(f"{what}: {k.name}#{pid}.{k.fields[i]} holds {v}, outside "
                                    f"{k.types[i].low}..{k.types[i].high}")
    for v in data.values():
        bad = _unknown_piece(rs, data, v)
        if bad is not None:
            raise GameError(f"{what}: it names the piece {fmt(bad)}, which these rules do not have or "
                            "which was never made")


def check_refs(rs: PieceRules, g: LoadedGame, what: str) -> None:
    """The pieces named by a loaded save's running procedures and pending decision must be of these
    rules and made before (a reference to a destroyed piece may stay)."""
    if not rs.pieces:
        return
    vals = [v for f in g.frames for v in f.locals.values()]
    p = g.pending
    if p is not None:
        vals += [v for _, v in p.options] + list(p.acc) + list(p.pool)
    for v in vals:
        bad = _unknown_piece(rs, g.data, v)
        if bad is not None:
            raise GameError(f"{what}: it names the piece {fmt(bad)}, which these rules do not have or "
                            "which was never made")


def known_place_ok(rs: PieceRules, key: str, keys: Json) -> bool:
    """Whether a `known` entry of a save names a field of a piece that can be revealed: [id, field, ...]."""
    k = rs.pieces_by_key.get(key)
    return (k is not None and isinstance(keys, list) and len(keys) >= 2 and keys[1].__class__ is int
            and 0 <= keys[1] < len(k.fields) and k.vis[keys[1]] in ("known", "owner"))


def _fits(rs: PieceRules, ty: Optional[Type], v: Value) -> bool:
    """Whether v is of the plain kind of type ty (only the kinds the save file can tell apart)."""
    if v is None or ty is None:
        return True
    n = ty.name
    if ty.kind == "range" or n == "int":
        return v.__class__ is int
    if n == "bool":
        return v.__class__ is bool
    if n == "str":
        return v.__class__ is str
    if n == "player":
        return v.__class__ is int
    if ty.kind == "piece":
        return v.__class__ is Piece and v.kind == n
    if n in ("list", "tuple"):
        return v.__class__ is tuple
    if n == "set":
        return v.__class__ is frozenset
    if n == "map":
        return v.__class__ is dict
    if n in ("deck", "bag"):
        return v.__class__ is Pile
    return True


def _unknown_piece(rs: PieceRules, data: dict[str, Value], v: Value, depth: int = 0) -> Optional[Piece]:
    if v.__class__ is Piece:
        k = rs.pieces.get(v.kind)
        return None if k is not None and v.id < data[k.next_key] else v
    if depth > 50:
        return None
    if v.__class__ in (tuple, frozenset, list):
        items = v
    elif v.__class__ is dict:
        items = list(v.keys()) + list(v.values())
    elif v.__class__ is Pile:
        items = v.items()
    else:
        return None
    for x in items:
        bad = _unknown_piece(rs, data, x, depth + 1)
        if bad is not None:
            return bad
    return None

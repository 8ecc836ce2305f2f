"""Run-time pieces shared by both backends: the op signals and limits, Code, Located, the value helpers
(index, set, contains, arithmetic with overflow checks), places (lvalues), collections, the decision ops
(choose, roll/draw, offer) and compiled actions.

An op is called as op(G, L) and returns None (go on), an int (jump there) or a signal:
  SUSPEND            stop for a decision (G.pending is set; op.resume continues it later)
  RETURN             leave the current procedure
  END                the game is over
  ("call", code, locals)        run a procedure, then come back
  ("push", [(code, locals), ...]) run these (triggers), first in the list first

The code that makes ops from the AST is in closures.py (the reference backend, and the op layout) and
generate.py (the generated backend); see docs/runtime.md.
"""
from __future__ import annotations

import re
import types
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Protocol, Sequence

from rulelang import ast as A

from .builtins import RunningGame
from .builtins import CONTAINERS, MAX_INT, RuleRuntimeError, _items, charge, check_items, check_value, deep_cost, measure, over
from .builtins import WORK_BUDGET, too_much  # noqa: F401  (re-exported: they used to live here)
from .collection_ops import _copy_cost, add_item, as_pile, distinct, remove_item, sorting_cost  # noqa: F401  (the backends read them here)
from .patterns import flat_text, pattern_items, unpacked  # noqa: F401  (unpacked: the backends import it here)
from .value_check import Bad, ValueTypes
from .values import MAX_SIZE, Json, Pile, Value, decode, encode, fmt, ordered_pile, readable, skey

if TYPE_CHECKING:
    from rulelang.types import Type

    from .value_check import CheckedRules

SUSPEND = "suspend"
# the locals of code that has none (an ending's condition): shared, read-only (an expression never writes its
# locals, so nothing should try to; if something did, it would fail instead of leaking into other games)
NO_LOCALS: Mapping[str, Value] = types.MappingProxyType({})
RETURN = "return"
END = "end"
MAX_FUNCTION_DEPTH = 200
MAX_PICKS = 10_000  # the most dice rolled or items drawn by one statement
MAX_ITEMS = 1_000_000  # the longest list, range or text a rule may build
# MAX_INT and WORK_BUDGET live in builtins.py (with the other run-time limits) and are imported above
# load-time limits (checked before the memory is taken; reported as E503 where the rule file asks for it)
MAX_FIXED_ITEMS = 4_000_000  # items of all the values computed when the rules load (constants, literal ranges)
MAX_ACTION_CHOICES = 100_000  # candidate choices of one action: the product of its parameter domains
MAX_ACTION_ID = 300  # characters of one action id, such as "place(0,1)"
MAX_FRAMES = 400  # procedures and triggers running at once (each a Frame on the game's stack)


Locals = dict[str, Value]  # the local names of a running procedure
Closure = Callable[[Any, Locals], Value]  # a compiled expression: (the game, the locals) -> its value
Legal = Callable[[Any, int], list[tuple[str, Value]]]  # (the game, the seat) -> the legal (id, value) options
# What an op returns to the game's loop (Game._run): None (go on), a position (jump there), SUSPEND (a decision
# is pending), RETURN, END, ("call", code, locals) or ("push", [(code, locals), ...][, position])
Signal = Any


# What the ops read of the game and its rules, which stand above this module (interpreter/game.py, ruleset.py):
# protocols, so that it need not import them.
if TYPE_CHECKING:
    class OpRules(CheckedRules, Protocol):
        """The compiled rules (interpreter/ruleset.py's Ruleset), as far as the ops read them."""

        _value_types: ValueTypes  # made at the first value loose_check checks

        @property
        def codes(self) -> Mapping[str, Code]: ...

        @property
        def actions(self) -> Mapping[str, CompiledAction]: ...

        @property
        def ending_checks(self) -> Sequence[Any]: ...

        @property
        def option_lists(self) -> dict[Any, Any]: ...


class OpGame(RunningGame, Protocol):
    """A running game (interpreter/game.py's Game), as far as the ops read and change it."""

    data: dict[str, Value]
    pending: Optional[Pending]
    frames: list[Frame]
    _actions: Any  # the Actions of the pending options (Game._list_actions)
    _lookup: Any

    @property
    def rs(self) -> OpRules: ...

    @property
    def chance_mode(self) -> str: ...

    def forget(self, name: str, keys: tuple[Value, ...]) -> None: ...

    def _check_endings(self) -> bool: ...

    def random_below(self, n: int) -> int: ...


class Frame:
    """A running procedure: its code, the position in it, its locals and how deep it was called."""

    __slots__ = ("code", "pc", "locals", "depth")

    def __init__(self, code: Code, pc: int, locals: Locals, depth: int) -> None:
        self.code = code
        self.pc = pc
        self.locals = locals
        self.depth = depth


class Code:
    __slots__ = ("id", "ops", "spans", "name", "whole")

    def __init__(self, id: str, name: str = "") -> None:
        self.id = id
        self.name = name or id
        self.ops: list[Any] = []  # each op(G, L) -> a Signal (the decision ops have more methods)
        self.spans: list[Optional[A.Span]] = []
        self.whole: Optional[Callable[[Any, Locals], Signal]] = None  # one generated op that runs the whole code (it cannot stop), if there is one

    def emit(self, op: Any, span: Optional[A.Span]) -> int:
        self.ops.append(op)
        self.spans.append(span)
        return len(self.ops) - 1


class Located(Exception):
    """A rule error with the rule-file position where it happened (at load: diagnostic `code`)."""

    def __init__(self, message: str, span: A.Span, code: str = "E501", hint: str = "",
                 where: Optional[str] = None) -> None:
        self.message = message
        self.span = span
        self.code = code
        self.hint = hint
        self.where = where  # the procedure to name in the error, when not the running frame's ("": none)
        self.frames: Optional[list[tuple[Code, int, Locals]]] = None  # procedures called without a frame that were running: [(code, pc, locals)]
        self.caller_pc: Optional[int] = None  # and the position after the call in the running frame
        super().__init__(f"{span.where()}: {message}" if span else message)


def _check_map(G: Optional[OpGame], m: dict[Value, Value]) -> Value:
    """A map just built: measured against the value limits when it holds lists, sets or maps."""
    for k, v in m.items():
        if k.__class__ in CONTAINERS or v.__class__ in CONTAINERS:
            return check_value(G, m)
    return m


def _equal(G: Optional[OpGame], a: Value, b: Value) -> bool:
    """a == b for a list, set, map or pile a: comparing two of one kind and length reads them whole."""
    if b.__class__ is a.__class__ and a is not b and len(a) == len(b):
        if a.__class__ is tuple and G is not None and len(a) < MAX_SIZE and CONTAINERS.isdisjoint(map(type, a)):
            # a flat list: charge(G, deep_cost(a)), inline
            G.work += len(a) + 1  # (deep_cost: a flat list's size)
            if G.work > G.work_mark:
                over(G)
        else:
            charge(G, deep_cost(a))
    return a == b


def _builtin_error(name: str, args: Sequence[Value], e: BaseException) -> RuleRuntimeError:
    shown = ", ".join(fmt(a) for a in args if not callable(a))
    if len(shown) > 200:
        shown = shown[:200] + "..."
    return RuleRuntimeError(f"{name}({shown}) cannot be computed: {e}")


def _size(v: Value) -> int:
    """Items held directly by a value (its elements were counted when they were computed)."""
    if v.__class__ in (tuple, frozenset, dict, str):
        return len(v)
    if isinstance(v, Pile):
        return len(v)
    return 1


def _contains(coll: Value, x: Value, G: Optional[OpGame] = None) -> bool:
    c = coll.__class__
    if c is tuple or c is Pile:  # a list is searched item by item
        n = len(coll)
        if n > 8:
            charge(G, n * (deep_cost(x) if x.__class__ in CONTAINERS else 1))
        return x in coll
    if c is frozenset or c is dict:  # one look-up by hash
        if x.__class__ in CONTAINERS:
            charge(G, deep_cost(x))
        return x in coll
    if c is str:
        charge(G, len(coll) // 64)
        return x in coll
    if coll is None:
        raise RuleRuntimeError("'in' on none")
    raise RuleRuntimeError(f"'in' needs a collection, not {fmt(coll)}")


def _arith(op: str, a: Value, b: Value, G: Optional[OpGame] = None) -> Value:
    if a.__class__ is int and b.__class__ is int and (op == "+" or op == "-"):  # the common case, as below
        r = a + b if op == "+" else a - b
        if not -MAX_INT < r < MAX_INT:
            raise RuleRuntimeError(f"{_short(a)} {op} {_short(b)} is too large a number")
        return r
    if a.__class__ in CONTAINERS or a.__class__ is str:  # list + list copies both
        n = len(a) + (len(b) if b.__class__ in CONTAINERS or b.__class__ is str else 1)  # type: ignore[arg-type]
        if a.__class__ is str:
            n //= 64
        charge(G, n)
    r = _arith_raw(op, a, b)
    if r.__class__ is int:
        if not -MAX_INT < r < MAX_INT:
            raise RuleRuntimeError(f"{_short(a)} {op} {_short(b)} is too large a number")
    elif r.__class__ in (tuple, str, frozenset) and len(r) > MAX_ITEMS:
        raise RuleRuntimeError(f"a list or text of more than {MAX_ITEMS:,} items")
    elif r.__class__ is not str:
        check_value(G, r)
    return r


def concat(G: Optional[OpGame], a: Value, b: Value) -> Value:
    """_arith("+", a, b, G), quicker for two lists of plain values (the common case): the same result and
    the same work, counted in the same two steps (the copy, then the size of the new list)."""
    if (a.__class__ is tuple and b.__class__ is tuple and len(a) + len(b) < MAX_ITEMS and G is not None
            and CONTAINERS.isdisjoint(map(type, a)) and CONTAINERS.isdisjoint(map(type, b))):
        n = len(a) + len(b)
        G.work += n
        if G.work > G.work_mark:
            over(G)
        G.work += n + 1  # (check_value: a flat list's size)
        if G.work > G.work_mark:
            over(G)
        return a + b
    return _arith("+", a, b, G)  # (a list holding lists or sets: nothing joined here first)


def _short(v: Value) -> str:
    t = fmt(v)
    return t if len(t) <= 60 else t[:60] + "..."


def _arith_raw(op: str, a: Value, b: Value) -> Value:
    if op == "+":
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(a, tuple) and isinstance(b, tuple):
            return a + b
        if isinstance(a, frozenset) and isinstance(b, frozenset):
            return a | b
        if isinstance(a, str) and isinstance(b, str):
            return a + b
    elif op == "-":
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if isinstance(a, frozenset) and isinstance(b, frozenset):
            return a - b
    elif isinstance(a, int) and isinstance(b, int) and a is not None and b is not None:
        if op == "*":
            return a * b
        if b == 0:
            raise RuleRuntimeError(f"division by zero ({a} {op} 0)")
        if op == "/":
            return a // b
        if op == "%":
            return a % b
    raise RuleRuntimeError(f"cannot compute {fmt(a)} {op} {fmt(b)}")


def _get(c: Value, k: Value) -> Value:
    if c.__class__ is tuple:
        if k.__class__ is int and 0 <= k < len(c):
            return c[k]
        raise RuleRuntimeError(f"position {fmt(k)} is outside a list of {len(c)}")
    if c.__class__ is dict:
        return c.get(k)
    if c is None:
        raise RuleRuntimeError(f"cannot look up [{fmt(k)}] in none")
    raise RuleRuntimeError(f"cannot look up [{fmt(k)}] in {fmt(c)}")


def _set(c: Value, k: Value, v: Value) -> Value:
    if c.__class__ is tuple:
        if k.__class__ is int and 0 <= k < len(c):
            return c[:k] + (v,) + c[k + 1:]
        raise RuleRuntimeError(f"position {fmt(k)} is outside a list of {len(c)}")
    if c.__class__ is dict:
        d = dict(c)
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
        return d
    if c is None:
        return {k: v} if v is not None else {}
    raise RuleRuntimeError(f"cannot set [{fmt(k)}] in {fmt(c)}")


# ============================================================================ places (lvalues)
def index_chain(xc: Any, target: Any) -> tuple[list[Closure], Any]:
    """`x[a][b]` -> ([compiled a, compiled b], x): the index steps of a place and what they index."""
    keys = []
    root = target
    while isinstance(root, A.Index):
        keys.append(xc.compile(root.index))
        root = root.target
    keys.reverse()
    return keys, root


class Place:
    """Something assignable: a variable or local, with an optional chain of [index] steps (a field of a
    piece is a PieceFieldPlace: pieces.place makes the one a target needs). Its methods take the game as Any:
    OpGame here, pieces.PiecesGame in PieceFieldPlace's."""

    def __init__(self, xc: Any, target: Any) -> None:
        self.keys, root = index_chain(xc, target)
        self.name = root.ident
        self.is_var = root.ref == "var"
        self.text = _expr_text(target)
        self.typed(target.ty)
        # a variable whose places can be revealed: writing a place forgets what was known of it
        self.watch = self.is_var and xc.rs.visibility.get(self.name) in ("known", "owner")

    def typed(self, ty: Optional[Type]) -> None:
        """The checks a write into a place of type `ty` needs."""
        self.check = range_check(ty, self.text)  # None when no bounded number is inside the type
        self.pile_kind = ty.name if ty is not None and ty.name in ("deck", "bag", "set") else None

    def root(self, G: Any, L: Locals) -> Value:
        """The whole value this place is part of (what a write into it copies)."""
        return G.data[self.name] if self.is_var else L[self.name]

    def get(self, G: Any, L: Locals) -> Value:
        c = G.data[self.name] if self.is_var else L[self.name]
        for k in self.keys:
            c = _get(c, k(G, L))
        return c

    def set(self, G: Any, L: Locals, v: Value) -> None:
        if self.pile_kind is not None and v.__class__ is tuple:
            v = as_pile(self.pile_kind, v)
        if self.check is not None:
            self.check(v)
        if not self.keys:
            if self.is_var:
                G.data[self.name] = v
                if self.watch:
                    G.forget(self.name, ())
            else:
                L[self.name] = v
            return
        root = G.data[self.name] if self.is_var else L[self.name]
        if len(self.keys) == 1:  # (what _set_path does with one key)
            ks: Sequence[Value] = (self.keys[0](G, L),)
            new = _set(root, ks[0], v)
        else:
            ks = [k(G, L) for k in self.keys]
            new = _set_path(root, ks, v)
        if self.is_var:
            G.data[self.name] = new
            if self.watch:
                G.forget(self.name, tuple(ks))
        else:
            L[self.name] = new


    def keys_now(self, G: Any, L: Locals) -> tuple[Value, ...]:
        """The index values of this place now (a draw keeps taking from the same pile)."""
        return tuple(k(G, L) for k in self.keys)

    def get_at(self, G: Any, L: Locals, ks: Sequence[Value]) -> Value:
        c = G.data[self.name] if self.is_var else L[self.name]
        for k in ks:
            c = _get(c, k)
        return c

    def set_at(self, G: Any, L: Locals, ks: Sequence[Value], v: Value) -> None:
        if self.check is not None:
            self.check(v)
        root = G.data[self.name] if self.is_var else L[self.name]
        new = _set_path(root, list(ks), v) if ks else v
        if self.is_var:
            G.data[self.name] = new
            if self.watch:
                G.forget(self.name, tuple(ks))
        else:
            L[self.name] = new


def loose_check(ty: Type, text: str) -> Callable[[OpGame, Value], Value]:
    """A function (G, value) -> value that stops a value that is not of the declared type `ty`, for an
    assignment the checker could vouch for only loosely (checker._loose): a value of unknown type, a
    number stored as a player, a node as a number. The value is checked as a save's is (value_check.py),
    its walk charged as work."""
    def check(G, v):
        # type: (OpGame, Value) -> Value
        if v is None:
            return v
        if v.__class__ in CONTAINERS:
            charge(G, measure(v)[0])
        types = G.rs.__dict__.get("_value_types")
        if types is None or types.n != G.n:
            types = G.rs._value_types = ValueTypes(G.rs, G.n)
        try:
            types.check(ty, v, text)
        except Bad as e:
            raise RuleRuntimeError(f"{e} ({text} is declared {ty}: a value of another type cannot be stored "
                                   "there)") from None
        return v
    return check


def range_check(ty: Optional[Type], text: str) -> Optional[Callable[[Value], None]]:
    """A function that stops a value breaking the bounds of a range type inside `ty`, or None."""
    if ty is None:
        return None
    if ty.kind == "range":
        lo, hi = ty.low, ty.high

        def check_one(v):
            # type: (Value) -> None
            if v is not None and (v.__class__ is not int or not lo <= v <= hi):
                raise RuleRuntimeError(f"{text} would hold {fmt(v)}, outside its range {lo}..{hi}")
        return check_one
    if ty.name in ("list", "set", "deck", "bag") and ty.args:
        inner = range_check(ty.args[0], text)
        if inner is None:
            return None

        def check_items(v):
            # type: (Value) -> None
            if v is not None and not isinstance(v, dict):
                for x in _items(v):
                    inner(x)  # type: ignore[misc]  # (not None: tested above)
        return check_items
    if ty.name == "map" and len(ty.args) == 2:
        inner = range_check(ty.args[1], text)
        if inner is None:
            return None

        def check_values(v):
            # type: (Value) -> None
            if isinstance(v, dict):
                for x in v.values():
                    inner(x)
        return check_values
    return None


def _set_path(c: Value, ks: Sequence[Value], v: Value) -> Value:
    if len(ks) == 1:
        return _set(c, ks[0], v)
    return _set(c, ks[0], _set_path(_get(c, ks[0]), ks[1:], v))


def _expr_text(e: Any) -> str:
    if isinstance(e, A.Name):
        return e.ident
    if isinstance(e, A.Index):
        return _expr_text(e.target) + "[...]"
    return "value"


# ============================================================================ collections
def _check_root(G: OpGame, L: Locals, place: Place, v: Value) -> None:
    """After a write of a list, set or map into part of a variable: the whole variable keeps to the
    value limits (size, depth)."""
    if v.__class__ in CONTAINERS:
        check_value(G, place.root(G, L))
    else:
        root = place.root(G, L)
        charge(G, len(root) if root.__class__ in CONTAINERS else 1)  # type: ignore[arg-type]  # the copy of the outer list or map


# ============================================================================ decision ops
_CHOICE_FIELDS = ("need", "single", "low", "start", "ordered", "pool", "same_pairs")  # Pending's own defaults


class Pending:
    """The decision the game waits for. Plain data (serializes as a dict)."""

    # what choose and roll/draw set for themselves: until then a decision reads these (an offer never sets them)
    need = 1
    single = True
    low = 1
    start = 0
    ordered = False
    pool: tuple[Value, ...] = ()
    same_pairs = False  # an offer's options are a list handed out again by its generated listing (_list_actions)

    def __init__(self, kind: str, player: int, options: list[tuple[str, Value]], prompt: str = "", target: str = "",
                 probs: Optional[list[float]] = None) -> None:
        self.kind = kind  # action | choose | chance
        self.player = player
        self.options = options  # list of (id, value)
        self.probs = probs
        self.prompt = prompt
        self.target = target
        self.acc: list[Value] = []

    def copy(self) -> Pending:
        if self.__class__ is not Pending:  # an offer's or a single pick's decision is never changed once made: shared
            return self
        # field by field, never through __dict__ (that would make both objects' attributes slower to read,
        # see Game.clone). The options list is shared: no code changes one in place (a decision gets a new one)
        p = Pending(self.kind, self.player, self.options, self.prompt, self.target, self.probs)
        if self.kind == "action":  # an offer sets only this one of the defaults
            if self.same_pairs:
                p.same_pairs = True
            return p
        p.acc = list(self.acc)
        for name in _CHOICE_FIELDS:
            if getattr(self, name) is not getattr(Pending, name):
                setattr(p, name, getattr(self, name))
        return p

    def to_dict(self) -> dict[str, Json]:
        return {
            "kind": self.kind, "player": self.player, "prompt": self.prompt, "target": self.target,
            "options": [[i, {"$done": True} if v is _DONE else encode(v)] for i, v in self.options],
            "probs": [float(p) for p in self.probs] if self.probs is not None else None,
            "need": self.need, "acc": [encode(x) for x in self.acc], "single": self.single, "low": self.low,
            "start": self.start, "ordered": self.ordered, "pool": [encode(x) for x in self.pool],
        }

    @classmethod
    def from_dict(cls, d: Json, boards: Optional[Mapping[str, Value]] = None) -> Pending:
        """A Pending from its saved dict; the fields must already have their JSON kinds (interpreter/saves.py
        checks them): anything else raises ValueError, never a half-built decision."""
        if not isinstance(d, dict) or d.get("kind") not in ("action", "choose", "chance"):
            raise ValueError("a pending decision is an object with kind action, choose or chance")
        for key in ("player", "need", "low", "start"):
            if d.get(key).__class__ is not int:
                raise ValueError(f"pending {key} is not a whole number")
        for key in ("single", "ordered"):
            if not isinstance(d.get(key), bool):
                raise ValueError(f"pending {key} is not true or false")
        for key in ("prompt", "target"):
            if not isinstance(d.get(key), str):
                raise ValueError(f"pending {key} is not a text")
        for key in ("options", "acc", "pool"):
            if not isinstance(d.get(key), list):
                raise ValueError(f"pending {key} is not a list")
        probs = d.get("probs")
        if probs is not None and (not isinstance(probs, list) or
                                  any(x.__class__ not in (int, float) or not 0 <= x <= 1 for x in probs)):
            raise ValueError("pending probs are not chances from 0 to 1")
        opts = []
        for o in d["options"]:
            if not isinstance(o, list) or len(o) != 2 or not isinstance(o[0], str):
                raise ValueError("a pending option is an [id, value] pair")
            opts.append((o[0], _DONE if o[1] == {"$done": True} else decode(o[1], boards)))
        p = cls(d["kind"], d["player"], opts, d["prompt"], d["target"],
                [float(x) for x in probs] if probs is not None else None)
        p.need = d["need"]
        p.acc = [decode(x, boards) for x in d["acc"]]
        p.single = d["single"]
        p.low = d["low"]
        p.start = d["start"]
        p.ordered = d["ordered"]
        p.pool = tuple(decode(x, boards) for x in d["pool"])
        return p


class Offer(Pending):
    """The decision an offer makes: the fields an offer never changes are the class's (fewer stores). Never
    changed once made (a decision that follows is a new object), so clones and games share one."""
    kind = "action"
    prompt = "take an action"
    target = ""
    probs = None
    acc = ()  # type: ignore[assignment]  # an offer collects nothing (choose and roll/draw have lists of their own)

    def __init__(self, player: int, options: list[tuple[str, Value]]) -> None:
        self.player = player
        self.options = options


class Pick(Pending):
    """The decision of a single pick (`choose one`): the fields it never sets are the class's, and it is never
    changed once made (its pick ends it), so clones and games share it."""
    kind = "choose"
    probs = None
    acc = ()  # type: ignore[assignment]  # a single pick collects nothing (finish() reads no pick: none)

    def __init__(self, player: int, prompt: str, target: str, pool: tuple[Value, ...],
                 options: list[tuple[str, Value]]) -> None:
        self.player = player
        self.prompt = prompt
        self.target = target
        self.pool = pool
        self.options = options


class SameOffer(Offer):
    """An offer whose options list is handed out again by its generated listing (see Game._list_actions)."""
    same_pairs = True


def _choice_options(values: Iterable[Value]) -> list[tuple[str, Value]]:
    """(id, value) per distinct id of a pool of choices, in order (the first of equal ids kept). A plain
    loop: for pools of a few items it is quicker than building sets of classes and ids in C."""
    out = []
    seen = set()
    for v in values:
        c = v.__class__
        i = v if c is str else str(v) if c is int else fmt(v)  # (fmt of a text is the text, of a number str())
        if i in seen:
            continue
        seen.add(i)
        out.append((i, v))
    return out


class ChooseOp:
    """let x = choose COUNT [ordered] of OPTIONS [by P] [optional] [prompt "..."]"""

    def __init__(self, target: str, options: Closure, player: Optional[Closure], count: Optional[Closure], ordered: bool,
                 optional: bool, prompt: str, span: Optional[A.Span], local: Optional[str] = None) -> None:
        self.target = target
        self.options = options
        self.player = player  # the chooser's expression, or None: then the local named `local`, else `me`
        self.local = local
        self.count = count
        self.ordered = ordered
        self.optional = optional
        self.prompt = prompt
        self.span = span

    def __call__(self, G: OpGame, L: Locals) -> Signal:
        if G.rs.ending_checks and G._check_endings():
            return END
        pool = self.options(G, L)
        if pool.__class__ is not tuple:  # (a list is its own items)
            pool = tuple(_items(pool))
        if self.local is not None or self.player is not None:
            who = L[self.local] if self.local is not None else self.player(G, L)  # type: ignore[misc]
            if who.__class__ is not int or not 0 <= who < G.n:
                raise RuleRuntimeError(f"choose by {fmt(who)}, which is not a player (seats are 0 to {G.n - 1})")
        elif "me" in L:
            who = L["me"]
        else:
            raise RuleRuntimeError("who chooses? 'me' is not known here (this procedure was not called from an "
                                   "action); say 'by PLAYER'")
        if self.count is None:  # choose one: the decision's defaults are a single pick's (need, low, single)
            if not pool:
                if self.optional:
                    L[self.target] = None
                    return None
                raise RuleRuntimeError("must choose 1 from only 0 options")
            opts = _choice_options(pool)
            p: Pending = Pick(who, self.prompt or "choose one", self.target, pool, opts)
            if self.ordered:
                p.ordered = True
            if self.optional:
                p.low = 0
                opts.append((DONE_ID, _DONE))
            G.pending = p
            return SUSPEND
        c = self.count(G, L)  # choose N or LOW..HIGH: a list of picks
        if isinstance(c, tuple):
            if not c:
                raise RuleRuntimeError("choose with an empty range of counts")
            low, high = c[0], c[-1]
        else:
            low = high = c
        if low.__class__ is not int or high.__class__ is not int or low < 0 or high < low:
            raise RuleRuntimeError(f"cannot choose {fmt(c)} items: give a count of 0 or more, or a range low..high")
        if self.optional:
            low = 0
        if low > len(pool):
            raise RuleRuntimeError(f"must choose {low} from only {len(pool)} option{'s' if len(pool) != 1 else ''}")
        high = min(high, len(pool))
        p = Pending("choose", who, [], self.prompt or f"choose {low} to {high}", self.target)
        p.need = high
        p.low = low
        p.single = False
        p.ordered = self.ordered
        p.pool = pool
        if high == 0:
            L[self.target] = ()
            return None
        _refresh_choose(p)
        if not p.options:
            raise RuleRuntimeError("nothing to choose from (an empty list of options)")
        G.pending = p
        return SUSPEND

    def resume(self, G: OpGame, L: Locals, value: Value) -> Signal:
        p: Pending = G.pending  # type: ignore[assignment]  # (its decision is pending)
        if value is _DONE:
            return self.finish(G, L, p)
        if p.single and p.need == 1:  # one pick: the choice is made
            G.pending = None
            L[self.target] = value
            return None
        p.acc.append(value)
        if p.ordered or p.single:
            i = p.pool.index(value)
            p.pool = p.pool[:i] + p.pool[i + 1:]
        else:
            p.start = p.pool.index(value, p.start) + 1
        if len(p.acc) >= p.need:
            return self.finish(G, L, p)
        _refresh_choose(p)
        if not p.options:
            return self.finish(G, L, p)
        return SUSPEND

    def finish(self, G: OpGame, L: Locals, p: Pending) -> None:
        G.pending = None
        if p.single:
            L[self.target] = p.acc[0] if p.acc else None
        else:
            L[self.target] = tuple(p.acc)
        return None


class _Done:
    def __repr__(self) -> str:
        return "done"


_DONE = _Done()
DONE_ID = "done"


def _refresh_choose(p: Pending) -> None:
    if p.ordered or p.single:
        opts = _choice_options(p.pool)
    else:
        # unordered: picks go left to right through the options, so a pick must leave enough
        # options after it to reach the least number still to choose
        still = max(0, p.low - len(p.acc) - 1)
        rest = p.pool[p.start:]
        opts = _choice_options(rest[:len(rest) - still] if still else rest)
    if len(p.acc) >= p.low:
        opts.append((DONE_ID, _DONE))
    p.options = opts


def _in_setup(G: OpGame) -> bool:
    """Whether setup is running (its frame stands on the flow's, at the bottom of the stack)."""
    frames = G.frames
    setup = G.rs.codes.get("setup")
    return any(fr.code is setup for fr in frames[:2])


class RandomOp:
    """let x = roll COUNT of FACES  /  let x = draw COUNT from PILE"""

    def __init__(self, target: str, source: Optional[Closure], count: Optional[Closure], is_draw: bool,
                 place: Optional[Place], span: Optional[A.Span]) -> None:
        self.target = target
        self.source: Closure = source  # type: ignore[assignment]  # (None for a draw, which reads place instead)
        self.count = count
        self.is_draw = is_draw
        self.place: Place = place  # type: ignore[assignment]  # (None for a roll, which reads source instead)
        self.span = span

    def __call__(self, G: OpGame, L: Locals) -> Signal:
        if G.rs.ending_checks and not _in_setup(G) and G._check_endings():
            return END  # a chance step of play, like a decision, waits on no ended game (setup is not play)
        n = 1 if self.count is None else self.count(G, L)
        if n.__class__ is not int or not 0 <= n <= MAX_PICKS:
            raise RuleRuntimeError(f"cannot {'draw' if self.is_draw else 'roll'} {fmt(n)} items "
                                   f"(from 0 to {MAX_PICKS:,} at once)")
        p = Pending("chance", -1, [], "draw" if self.is_draw else "roll", self.target)
        p.need = n
        p.single = self.count is None
        charge(G, n)
        faces = () if self.is_draw else tuple(_items(self.source(G, L)))
        charge(G, len(faces))
        if not self.is_draw and not faces:
            raise RuleRuntimeError("roll of an empty list of faces")
        p.pool = self.place.keys_now(G, L) if self.is_draw else faces
        return self.step(G, L, p)

    def step(self, G: OpGame, L: Locals, p: Pending) -> Signal:
        while len(p.acc) < p.need:
            if self.is_draw:
                pile = self.place.get_at(G, L, p.pool)
                if isinstance(pile, tuple):
                    if not pile:
                        break
                    self._take(G, L, p, pile[0])
                    continue
                if not isinstance(pile, Pile):
                    raise RuleRuntimeError(f"cannot draw from {fmt(pile)}")
                if pile.known:
                    self._take(G, L, p, pile.known[0])
                    continue
                if not pile.pool:
                    break
                faces = pile.pool
            else:
                faces = p.pool
            charge(G, len(faces) + 1)
            if faces[0] == faces[-1] and len(set(faces)) == 1:  # (all the same only if the ends are)
                self._take(G, L, p, faces[0])
                continue
            if G.chance_mode == "sampled":
                idx = G.random_below(len(faces))
                self._take(G, L, p, faces[idx], idx if self.is_draw else None)
                continue
            counts: dict[Value, int] = {}
            for f in faces:
                counts[f] = counts.get(f, 0) + 1
            vals = sorted(counts, key=skey)
            p.options = [(fmt(v), v) for v in vals]
            p.probs = [counts[v] / len(faces) for v in vals]
            G.pending = p
            return SUSPEND
        G.pending = None
        if p.single:
            L[self.target] = p.acc[0] if p.acc else None
        else:
            L[self.target] = check_items(G, tuple(p.acc))
        return None

    def _take(self, G: OpGame, L: Locals, p: Pending, value: Value, at: Optional[int] = None) -> None:
        """`value` drawn or rolled; `at`: its position in the pool of the pile, when step() has just picked it
        there (the pile has no known part then: the item taken is that one, equal to the first of its value
        that remove_item would take)."""
        p.acc.append(value)
        if self.is_draw:
            pile = self.place.get_at(G, L, p.pool)
            charge(G, _copy_cost(pile))
            if isinstance(pile, tuple):
                self.place.set_at(G, L, p.pool, pile[1:])
            elif at is not None:
                left = ordered_pile(pile.kind, pile.known, pile.pool[:at] + pile.pool[at + 1:])
                self.place.set_at(G, L, p.pool, left)
            else:
                self.place.set_at(G, L, p.pool, remove_item(pile, value))

    def resume(self, G: OpGame, L: Locals, value: Value) -> Signal:
        p: Pending = G.pending  # type: ignore[assignment]  # (its decision is pending)
        G.pending = None
        self._take(G, L, p, value)
        return self.step(G, L, p)


class OfferOp:
    """offer [a, b] to P"""

    def __init__(self, actions: Sequence[str], player: Optional[Closure], span: Optional[A.Span],
                 local: Optional[str] = None) -> None:
        self.actions = actions  # names
        self.player = player  # the seat's expression, or None: then the seat is the local named `local`
        self.local = local
        self.span = span
        self._rs: Any = None  # the ruleset whose CompiledActions `_acts` holds (looked up at the first offer)
        self._acts: tuple[CompiledAction, ...] = ()
        self._tests: tuple[Legal, ...] = ()  # their legal functions
        self._one: Optional[Legal] = None  # the legal function of the one action offered
        self.else_pc: Optional[int] = None  # `offer ... else { ... }`: where the else block starts (taken when none is legal)

    def __call__(self, G: OpGame, L: Locals) -> Signal:
        rs = G.rs
        if rs.ending_checks and G._check_endings():
            return END
        who = L[self.local] if self.player is None else self.player(G, L)  # type: ignore[index]  # (one is set)
        if who.__class__ is not int or not 0 <= who < G.n:
            raise RuleRuntimeError(f"offer to {fmt(who)}, which is not a player (seats are 0 to {G.n - 1})")
        if self._rs is not rs:
            self._acts = tuple(rs.actions[name] for name in self.actions)
            self._tests = tuple(act.fast_legal or act.legal for act in self._acts)
            one = self._acts[0] if len(self._acts) == 1 else None
            self._one = None if one is None else one.fast_legal or one.legal
            self._same = one is not None and one.same_pairs and one.fast_legal is not None
            self._rs = rs
        if self._one is not None:
            opts = self._one(G, who)  # a new list each time: it becomes the pending options
        else:
            opts = []
            for legal in self._tests:
                opts.extend(legal(G, who))
        if not opts:
            if self.else_pc is not None:
                return self.else_pc
            raise RuleRuntimeError(f"P{who} has no legal action among {', '.join(self.actions)}: the game is stuck "
                                   "(say what happens then: offer [...] to p else { ... })")
        if not self._same:
            G.pending = Offer(who, opts)
            return SUSPEND
        got = rs.option_lists.get((who, id(opts)))  # listed before: its decision and Actions at hand
        if got is None:
            G.pending = SameOffer(who, opts)
        else:  # (an Offer is never changed once made, so games share it; see Game._list_actions)
            G.pending = got[3]
            G._actions = got[0]
            G._lookup = got[1]  # (made from this very list: the key is its identity)
        return SUSPEND

    def resume(self, G: OpGame, L: Locals, value: Value) -> Signal:
        who = G.pending.player  # type: ignore[union-attr]  # (its decision is pending)
        G.pending = None
        name, args = value
        act = G.rs.actions[name]
        return ("call", act.code, act.make_locals(args, who))


# ============================================================================ actions
def _locals_maker(names: Sequence[str]) -> Callable[[Sequence[Value], int], Locals]:
    """(args, who) -> an action's locals: its parameters in order, then `me` (a dict display for up to three
    parameters, which Python builds faster than dict(zip(...)))."""
    names = tuple(names)
    if len(names) == 0:
        return lambda args, who: {"me": who}
    if len(names) == 1:
        a, = names
        return lambda args, who: {a: args[0], "me": who}
    if len(names) == 2:
        a, b = names
        return lambda args, who: {a: args[0], b: args[1], "me": who}
    if len(names) == 3:
        a, b, c = names
        return lambda args, who: {a: args[0], b: args[1], c: args[2], "me": who}

    def make(args, who):
        # type: (Sequence[Value], int) -> Locals
        L = dict(zip(names, args))
        L["me"] = who
        return L
    return make


class CompiledAction:
    def __init__(self, name: str, param_names: list[str], domains: list[Any], requires: list[tuple[Closure, A.Span]],
                 costs: list[tuple[Any, Closure]], code: Code, text: Optional[str], span: A.Span,
                 order: Optional[Sequence[str]] = None, shapes: Optional[Sequence[Any]] = None) -> None:
        self.name = name
        self.param_names = param_names
        # per parameter: None, or the shape of its tuple pattern (its value is written flat in the ids)
        self.shapes = list(shapes) if shapes is not None else [None] * len(param_names)
        self.has_patterns = any(self.shapes)
        self.make_locals = _locals_maker(param_names)
        self.domains = domains
        self.requires = requires  # list of (closure, span)
        self.require_fns = [r for r, _ in requires]
        self.fast_legal: Optional[Legal] = None  # a generated legal(G, who), see generate.ExprGenerator.legal_function
        self.same_pairs = False  # fast_legal hands out one list per set of legal candidates (never changed)
        self.fixed_options: Optional[list[tuple[str, tuple[Value, ...], Value]]] = None
        if param_names and all(d.__class__ is _Fixed for d in domains):
            import itertools
            # the longest id combines the longest value of each domain: check it before listing them all
            try:
                texts = [[self.arg_text(k, v) for v in d.values] for k, d in enumerate(domains)]
            except RuleRuntimeError as e:
                raise Located(f"while listing the choices of action '{name}': {e}", span) from None
            longest = len(name) + len(domains) + 1 + sum(max((len(t) for t in ts), default=0) for ts in texts)
            if longest > MAX_ACTION_ID:
                raise Located(_long_id(name, longest), span, code="E503",
                              hint="action ids are written into every log: use shorter values, such as row names")
            combos = itertools.product(*[list(zip(d.values, ts)) for d, ts in zip(domains, texts)])
            self.fixed_options = [(name + "(" + ",".join(t for _, t in c) + ")", vals, (name, vals))
                                  for c in combos for vals in (tuple(v for v, _ in c),)]
        self.costs = costs  # list of (Place, closure)
        # "require" or "cost" per test, in the order they are tested (as written); requires, then costs when
        # no order names each of them once (an action built without the parser)
        plain = ("require",) * len(requires) + ("cost",) * len(costs)
        self.order = tuple(order) if order is not None and sorted(order) == sorted(plain) else plain
        self.code = code
        self.text = text
        self.span = span

    def legal(self, G: OpGame, who: int) -> list[tuple[str, Value]]:
        if self.fast_legal is not None:
            return self.fast_legal(G, who)
        out = []
        L = {"me": who}
        names = self.param_names
        n = len(names)
        requires = self.require_fns
        costs = self.costs
        name = self.name

        order = self.order

        def ok():
            # type: () -> bool
            try:
                ri = ci = 0
                for kind in order:  # as written: a require, or a cost
                    if kind == "require":
                        ri += 1
                        if not requires[ri - 1](G, L):
                            return False
                    else:
                        place, amount = costs[ci]
                        ci += 1
                        if (place.get(G, L) or 0) < amount(G, L):
                            return False
            except (RuleRuntimeError, KeyError) as e:
                raise Located(f"while checking action '{name}': {e}", self.span) from None
            return True

        if n == 0:
            if ok():
                out.append((name, (name, ())))
            return out
        fixed = self.fixed_options
        if fixed is not None:  # every domain is known: the candidates and their ids were listed once
            charge(G, len(fixed))
            if not costs and len(requires) == 1 and n <= 2:
                # the common shape (one require, one or two parameters), without the general loop
                req = requires[0]
                p0 = names[0]
                p1 = names[1] if n == 2 else None
                try:
                    for aid, vals, opt in fixed:
                        L[p0] = vals[0]
                        if p1 is not None:
                            L[p1] = vals[1]
                        if req(G, L):
                            out.append((aid, opt))
                except (RuleRuntimeError, KeyError) as e:
                    raise Located(f"while checking action '{name}': {e}", self.span) from None
                return out
            for aid, vals, opt in fixed:
                for pn, v in zip(names, vals):
                    L[pn] = v
                if ok():
                    out.append((aid, opt))
            return out

        def rec(i, vals):
            # type: (int, list[Value]) -> None
            if i == n:
                if ok():
                    if self.has_patterns:
                        try:
                            aid = name + "(" + ",".join(self.arg_text(k, v) for k, v in enumerate(vals)) + ")"
                        except RuleRuntimeError as e:
                            raise Located(f"while listing the choices of action '{name}': {e}", self.span) from None
                    else:
                        aid = name + "(" + ",".join(fmt(v) for v in vals) + ")"
                    if len(aid) > MAX_ACTION_ID:
                        raise Located(_long_id(name, len(aid)), self.span)
                    out.append((aid, (name, tuple(vals))))
                return
            try:
                d = self.domains[i]
                dom = d.values if d.__class__ is _Fixed else distinct(_items(d(G, L)))
                charge(G, len(dom))  # every candidate is tried: a product of big domains is work
            except (RuleRuntimeError, KeyError) as e:
                raise Located(f"while listing the choices of action '{name}': {e}", self.span) from None
            pn = names[i]
            for v in dom:
                L[pn] = v
                vals.append(v)
                rec(i + 1, vals)
                vals.pop()
            L.pop(pn, None)
        rec(0, [])
        return out

    def arg_text(self, k: int, v: Value) -> str:
        """The k-th parameter's value v as its id writes it."""
        shape = self.shapes[k]
        return fmt(v) if shape is None else flat_text(v, shape)

    def named_values(self, args: Sequence[Value]) -> dict[str, Value]:
        """{name: value} of the parameters, and of the names their tuple patterns bind."""
        vals = dict(zip(self.param_names, args))
        if self.has_patterns:
            for shape, v in zip(self.shapes, args):
                if shape is not None:
                    vals.update(pattern_items(v, shape))
        return vals

    def describe(self, args: Sequence[Value]) -> str:
        if self.text:
            vals = self.named_values(args)
            return re.sub(r"\{(\w+)\}", lambda m: readable(vals[m.group(1)]) if m.group(1) in vals else m.group(0),
                          self.text)
        if not args:
            return self.name
        shown = list(zip(self.param_names, args))
        if self.has_patterns:  # the names of the patterns, in their places
            shown = [(n, v) for k, (shape, arg) in enumerate(zip(self.shapes, args))
                     for n, v in ([(self.param_names[k], arg)] if shape is None else pattern_items(arg, shape))
                     if n != A.DISCARD]
        return self.name + " " + ", ".join(f"{n}={readable(v)}" for n, v in shown)


def _long_id(name: str, length: int) -> str:
    return (f"an id of action '{name}' would be {length:,} characters long; "
            f"ids are at most {MAX_ACTION_ID} characters")


class _Fixed:
    """A parameter domain known when compiling (a literal range or list): listed once."""

    __slots__ = ("values",)

    def __init__(self, values: Value) -> None:
        self.values = distinct(_items(values))


class CompiledFunction:
    __slots__ = ("params", "body")

    def __init__(self, params: list[str], body: Any) -> None:
        self.params = params
        self.body = body


def span_of(G: Optional[OpGame], a: Value, b: Value) -> tuple[int, ...]:
    """a..b: the list of whole numbers from a to b, its length charged as work (both backends)."""
    if not isinstance(a, int) or not isinstance(b, int):
        raise RuleRuntimeError(f"a range needs numbers, not {fmt(a)}..{fmt(b)}")
    if b - a >= MAX_ITEMS:
        raise RuleRuntimeError(f"the range {a}..{b} has more than {MAX_ITEMS:,} items")
    if b >= a and G is not None:
        G.work += b - a + 1
        if G.work > G.work_mark:
            over(G)
    return tuple(range(a, b + 1))

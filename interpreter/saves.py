"""Loading a saved game. A save is untrusted input: it is checked completely against the program.

`load_game(cls, rs, text)` either returns a Game in a state the rules could have reached (in form: every
field of the right JSON kind, every variable of its declared type, seats within the players, the stack of
frames one the code builds (each frame below another waiting at the op that started it), each frame's
locals those of its position with their checked types, the pending decision exactly the one the op it
resumes would offer now), or raises a GameError with one line that names the field, e.g.
`not a saved game of Race: data.points[1] is "x", not an int`. docs/language.md ("Run-time limits and
errors") lists the checks.
"""
from __future__ import annotations

import json
import math
import re
import sys
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Protocol, Sequence, TypeVar

from rulelang import ast as A
from rulelang import types as T
from rulelang.library import BUILTIN_EVENTS
from rulelang.types import PLAYER

from . import pieces as P
from . import rng as R
from .runtime import (MAX_FRAMES, MAX_PICKS, SUSPEND, _DONE, ChooseOp, Frame, OfferOp, OpGame, Pending, RandomOp,
                      _get, _items)
from .builtins import RuleRuntimeError
from .errors import GameError
from .value_check import Bad, ValueTypes, _bad, _bool, _int, _show
from .values import Json, Value, decode, encode, fmt

if TYPE_CHECKING:
    from typing_extensions import Self

    from rulelang.checker_pieces import CheckerCore
    from rulelang.program import Program

    from .boards import Board
    from .pieces import PieceKind
    from .runtime import Code

SAVE_FORMAT = "rulelang/game-1"
MAX_NOTES = 500  # log lines a save holds (the game keeps the last ones)
MAX_NOTE_CHARS = 10_000  # the longest log line a save holds (the game cuts a longer one there)
MAX_SAVE_CHARS = 64 * 1024 * 1024  # the longest save text read at all
MAX_SAVE_VALUES = 1_000_000  # the most lists, objects and list items in a save (counted before parsing)
MAX_SAVE_DEPTH = 100  # the deepest nesting of JSON lists and objects in a save
MAX_TEXT_CHARS = 100_000  # the longest prompt or action id in a save
MAX_TURNS = 2 ** 63 - 1
MAX_INT_DIGITS = 4300  # the longest number in a save (Python's own default limit)

TOP_KEYS = ("format", "game", "variants", "players", "seed", "chance", "data", "frames", "pending", "current",
            "eliminated", "known", "over", "end_reason", "end_pending", "rng", "log", "notes", "turns", "error")
PENDING_KEYS = ("kind", "player", "prompt", "target", "options", "probs", "need", "acc", "single", "low", "start",
                "ordered", "pool")
_DIGITS = re.compile(r"[0-9]+")
_HIDDEN = re.compile(r"%(items|i|n|turn)[0-9]{1,9}\Z")
_OP_OF_KIND = {"action": OfferOp, "choose": ChooseOp, "chance": RandomOp}


# What a save reads of the compiled rules and of the game it fills, which both stand above this module
# (interpreter/ruleset.py, game.py): protocols, so that it need not import them.
class SavedRules(Protocol):
    """The compiled rules (interpreter/ruleset.py's Ruleset), as far as loading a save reads them."""

    @property
    def name(self) -> str: ...

    @property
    def program(self) -> Program: ...

    @property
    def checker(self) -> CheckerCore: ...

    @property
    def boards(self) -> dict[str, Board]: ...

    @property
    def table_rows(self) -> Mapping[str, Sequence[str]]: ...

    @property
    def pieces(self) -> dict[str, PieceKind]: ...

    @property
    def pieces_by_key(self) -> dict[str, PieceKind]: ...

    @property
    def active_variants(self) -> tuple[str, ...]: ...

    @property
    def player_counts(self) -> tuple[int, ...]: ...

    @property
    def consts(self) -> Sequence[tuple[str, Callable[[Any, dict[str, Value]], Value]]]: ...

    @property
    def vars(self) -> Sequence[tuple[str, bool, Any, T.Type, str]]: ...  # (name, per player, start, type, visibility)

    @property
    def visibility(self) -> Mapping[str, str]: ...  # variable -> its visibility

    @property
    def codes(self) -> Mapping[str, Code]: ...  # code id ("flow", "action:take", "trigger:0" ...) -> its ops

    @property
    def triggers(self) -> Mapping[str, Sequence[tuple[Any, ...]]]: ...  # event -> its triggers (code first)

    @property
    def cascade_depth(self) -> int: ...

    @property
    def endings(self) -> tuple[str, ...]: ...


class SavedGame(OpGame, Protocol):
    """A game (interpreter/game.py's Game), as far as loading a save fills and reads it."""

    consts: dict[str, Value]
    data: dict[str, Value]
    current: int
    eliminated: tuple[bool, ...]
    known: dict[str, dict[tuple[Value, ...], frozenset[int]]]  # variable -> place -> seats that know it (-1: all)
    over: bool
    end_reason: Optional[str]
    end_pending: Optional[str]
    rng: int
    turns: int
    log: list[dict[str, Any]]
    notes: list[str]
    error: Optional[str]
    frames: list[Frame]
    pending: Optional[Pending]
    work: int
    fdepth: int

    @property
    def n(self) -> int: ...

    @property
    def chance_mode(self) -> str: ...

    def clone(self) -> Self: ...


GameT = TypeVar("GameT", bound=SavedGame)
MakeGame = Callable[[Any, int, int, str], GameT]  # the game's class: (rules, players, seed, chance) -> a new game
Locals = dict[str, Value]
Succ = tuple[Optional[int], tuple[str, ...], tuple[str, ...]]  # (target op, names bound on the edge, names dropped)
Site = tuple[T.Type, bool]  # a binding site of a local: its type, and whether a value must be of it exactly


class _Constant(ValueError):
    pass


def _no_constant(name: str) -> float:
    raise _Constant(f"{name} is not a number a save can hold")


def _finite_float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise _Constant(f"{text[:20]} is too large a number")
    return x


# ============================================================================ parsing
def parse(rs: SavedRules, text: object) -> Json:
    """Save text -> JSON data, or a one-line GameError."""
    what = f"not a saved game of {rs.name}"
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_SAVE_CHARS:
            raise GameError(f"{what}: longer than {MAX_SAVE_CHARS:,} characters")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise GameError(f"{what}: not UTF-8 text") from None
    if not isinstance(text, str):
        raise GameError(f"{what}: a save is JSON text (str or bytes), not {type(text).__name__}")
    if len(text) > MAX_SAVE_CHARS:
        raise GameError(f"{what}: longer than {MAX_SAVE_CHARS:,} characters")
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit == 0 or limit > MAX_INT_DIGITS:  # the process allows longer numbers than a save may hold: look first
        if any(m.end() - m.start() > MAX_INT_DIGITS for m in _DIGITS.finditer(text)):
            raise GameError(f"{what}: a number has too many digits")
    values = text.count("[") + text.count("{") + text.count(",")
    if values > MAX_SAVE_VALUES:
        raise GameError(f"{what}: more than {MAX_SAVE_VALUES:,} values")
    try:
        d = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise GameError(f"{what}: nested too deeply") from None
    except _Constant as e:
        raise GameError(f"{what}: {e}") from None
    except ValueError as e:
        if "digits" in str(e):
            raise GameError(f"{what}: a number has too many digits") from None
        raise GameError(f"{what}: not JSON ({str(e).splitlines()[0] if str(e) else 'empty'})") from None
    _check_shape(d)
    return d


def _check_shape(d: Json) -> None:
    """No nesting deeper than MAX_SAVE_DEPTH, and no fractions outside the chances of a pending draw or roll.
    (The fields of fixed form, like the log and the notes, are checked field by field instead.)"""
    if not isinstance(d, dict):
        return
    stack = [(d.get(k), 2, k) for k in ("data", "frames", "pending", "known")]
    while stack:
        x, depth, where = stack.pop()
        if depth > MAX_SAVE_DEPTH:
            raise Bad(where, f"is nested more than {MAX_SAVE_DEPTH} deep")
        if x.__class__ is list:
            depth += 1
            for y in x:
                if y.__class__ in _LEAVES:
                    continue
                stack.append((y, depth, where))
        elif x.__class__ is dict:
            if depth == 2 and where == "pending":
                stack.extend((y, 3, "pending.probs" if k == "probs" else "pending") for k, y in x.items())
            else:
                depth += 1
                for y in x.values():
                    if y.__class__ in _LEAVES:
                        continue
                    stack.append((y, depth, where))
        elif x.__class__ is float and not (where == "pending.probs" and depth == 4):
            raise Bad(where, f"holds the fraction {x!r}: numbers in a save are whole numbers")


_LEAVES = frozenset({int, str, bool, type(None)})


def _str(path: str, v: Json, limit: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(v, str):
        _bad(path, v, "a text")
    if len(v) > limit:
        raise Bad(path, f"is longer than {limit:,} characters")
    return v


def _list(path: str, v: Json, limit: Optional[int] = None) -> list[Json]:
    if not isinstance(v, list):
        _bad(path, v, "a list")
    if limit is not None and len(v) > limit:
        raise Bad(path, f"has {len(v):,} items, more than {limit:,}")
    return v


def _obj(path: str, v: Json, keys: Sequence[str]) -> dict[str, Json]:
    if not isinstance(v, dict):
        _bad(path, v, "an object")
    missing = [k for k in keys if k not in v]
    extra = sorted(k for k in v if k not in keys)
    if missing:
        raise Bad(path, f"has no \"{missing[0]}\"")
    if extra:
        raise Bad(path, f"has an unknown field \"{extra[0][:40]}\"")
    return v


def _value(path: str, v: Json, rs: SavedRules) -> Value:
    try:
        return decode(v, rs.boards)
    except RecursionError:
        raise Bad(path, "is nested too deeply") from None
    except (ValueError, TypeError) as e:
        raise Bad(path, f"is not a value: {e}") from None


# ============================================================================ positions in the code
# The op list of every code is laid out from the rules' statements exactly as closures.StmtCompiler lays it
# out (which the generated backend keeps: docs/runtime.md), so a position in a save means one statement.
# _Layout walks the same statements the same way and notes, for every op: what it is (a decision, a call
# of a procedure, an event, an offer, anything else), where control goes from it and which locals it
# binds. A flow analysis over those edges gives, at every position, the locals a frame must have and may
# have; the binding sites give their types (from the checker). The layout is checked against the real op
# lists (their length and where the decision ops stand): a mismatch leaves that code to the plainer checks.
_UNIVERSE = None  # "every name" (the must-set of a position not reached yet)


class _OpInfo:
    __slots__ = ("kind", "data", "succ", "must", "may")

    def __init__(self, kind: str, data: Any = None) -> None:
        self.kind = kind  # "plain", "call", "emit", "turn", "offer", "choose", "random", "draw_into", "end"
        self.data = data
        self.succ: list[Succ] = []  # (target, names bound on that edge, names dropped on that edge)
        self.must: Optional[frozenset[str]] = _UNIVERSE
        self.may: frozenset[str] = frozenset()


class _CodeInfo:
    __slots__ = ("id", "name", "ops", "entry_must", "entry_may", "types", "binds_at", "written", "loops", "ok")

    def __init__(self, cid: str, name: str) -> None:
        self.id = cid
        self.name = name
        self.ops: list[_OpInfo] = []
        self.entry_must: frozenset[str] = frozenset()
        self.entry_may: frozenset[str] = frozenset()
        self.types: dict[str, list[Site]] = {}  # local -> [(type, strict)], one per binding site
        self.binds_at: dict[str, list[int]] = {}  # local -> the ops that bind or write it (a let, a choice, a for loop's start, x = ...)
        self.written: set[str] = set()  # locals that statements write in place (their types are not checked)
        self.loops: list[tuple[str, int, int, str, Any, tuple[str, ...]]] = []  # (5th: None but for a for loop)  # ("for", first body op, back jump, items name, index name, loop names) / ("repeat", ...)
        self.ok = True


class _Layout:
    stmt_methods = A.Dispatch("s_", fallback="s_other")  # s_Let(code, s) for a Let, ... (rulelang/ast.py)

    def __init__(self, rs: SavedRules) -> None:
        self.rs = rs
        self.counter = 0
        self.triggered = {t.event for t in rs.program.triggers}
        self.codes: dict[str, _CodeInfo] = {}
        self.loops: list[tuple[int, list[int]]] = []  # the loops around: (head, [break ops])

    def hidden(self, what: str) -> str:
        self.counter += 1
        return f"%{what}{self.counter}"

    def build(self) -> dict[str, _CodeInfo]:
        rs = self.rs
        prog = rs.program
        checker = rs.checker
        for d in prog.decls.values():
            if isinstance(d, A.ProcDecl):
                cid = d.proc_kind if d.proc_kind in ("setup", "flow") else "proc:" + d.name
                c = self.start(cid, d.name)
                for p in d.params:
                    self.bind(c, p.name, _resolve(checker, p.type), True)
                c.entry_must = frozenset(p.name for p in d.params)
                c.entry_may = c.entry_must | ({"me"} if d.proc_kind == "procedure" else set())
                if "me" in c.entry_may:
                    self.bind(c, "me", PLAYER, True)
                assert d.body is not None  # (a parsed procedure has a body)
                self.block(c, d.body)
                if d.proc_kind == "setup":
                    self.emit(c, "emit", "game_start" if "game_start" in self.triggered else None)
                self.finish(c)
        if "setup" not in self.codes:
            c = self.start("setup", "setup")
            self.emit(c, "emit", "game_start" if "game_start" in self.triggered else None)
            self.finish(c)
        for d in prog.decls.values():
            if isinstance(d, A.ActionDecl):
                c = self.start("action:" + d.name, d.name)
                for p in d.params:
                    strict = p.domain is None  # a typed domain: its values are of the type
                    self.bind(c, p.name, _resolve(checker, p.type) if p.type is not None else
                              _element(p.domain), strict)
                self.bind(c, "me", PLAYER, True)
                c.entry_must = c.entry_may = frozenset([p.name for p in d.params] + ["me"])
                body = list(d.effect.stmts) if d.effect is not None else []
                pays = [A.Assign(op="-=", target=x.target, value=x.amount, span=x.span) for x in d.costs]
                self.block(c, A.Block(stmts=pays + body, span=d.span))
                if "action_done" in self.triggered:
                    self.emit(c, "emit", "action_done")
                self.finish(c)
        for i, t in enumerate(prog.triggers):
            c = self.start(f"trigger:{i}", f"when {t.event}")
            if t.event in BUILTIN_EVENTS:
                types, strict = BUILTIN_EVENTS[t.event], True
            else:
                ev = prog.decls.get(t.event)
                types = [_resolve(checker, p.type) for p in ev.params] if isinstance(ev, A.EventDecl) else []
                strict = True
            for k, name in enumerate(t.params):
                self.bind(c, name, types[k] if k < len(types) else _ANY, strict)
            c.entry_must = c.entry_may = frozenset(t.params)
            if t.condition is not None:  # its test: on (or the trigger ends)
                self.emit(c, "plain")
            self.block(c, t.body)
            self.finish(c)
        return self.codes

    # ---- helpers
    def start(self, cid: str, name: str) -> _CodeInfo:
        c = _CodeInfo(cid, name)
        self.codes[cid] = c
        self.loops = []  # (head, [break ops])
        return c

    def finish(self, c: _CodeInfo) -> None:
        _flow(c, len(c.ops))

    def emit(self, c: _CodeInfo, kind: str, data: Any = None, fall: bool = True, binds: Iterable[str] = (),
             drops: Iterable[str] = ()) -> int:
        k = len(c.ops)
        op = _OpInfo(kind, data)
        if fall:
            op.succ.append((k + 1, tuple(binds), tuple(drops)))
        c.ops.append(op)
        return k

    def bind(self, c: _CodeInfo, name: str, ty: Optional[T.Type], strict: bool = False) -> None:
        c.types.setdefault(name, []).append((ty if ty is not None else _ANY, strict))
        c.binds_at.setdefault(name, []).append(len(c.ops))

    def written_by(self, c: _CodeInfo, *places: Optional[A.Expr]) -> None:
        for e in places:
            while isinstance(e, (A.Index, A.Field)):
                e = e.target
            if isinstance(e, A.Name):
                c.written.add(e.ident)
                c.binds_at.setdefault(e.ident, []).append(len(c.ops))  # (the op about to be emitted)

    def block(self, c: _CodeInfo, b: A.Block) -> None:
        for s in b.stmts:
            self.stmt_methods[s.__class__](self, c, s)

    # ---- statements (as closures.StmtCompiler lays them out). `s` is the statement of the method's name (A.Let for
    # s_Let ...), typed Any: their blocks are Optional in rulelang/ast.py though a parsed tree always has them
    def s_other(self, c: _CodeInfo, s: Any) -> None:
        self.emit(c, "plain")

    def s_Let(self, c: _CodeInfo, s: Any) -> None:
        v = s.value
        if isinstance(v, A.Choose):
            self.bind(c, s.name, _element(v.options) if v.count is None else _list_of(_element(v.options)))
            self.emit(c, "choose", s, binds=(s.name,))
        elif isinstance(v, (A.Roll, A.Draw)):
            src = v.faces if isinstance(v, A.Roll) else v.pile
            self.bind(c, s.name, _element(src) if v.count is None else _list_of(_element(src)))
            if isinstance(v, A.Draw):
                self.written_by(c, v.pile)
            self.emit(c, "random", s, binds=(s.name,))
        else:
            self.bind(c, s.name, None if isinstance(v, A.New) else getattr(v, "ty", None))
            self.emit(c, "plain", binds=(s.name,))

    def s_Assign(self, c: _CodeInfo, s: Any) -> None:
        self.written_by(c, s.target)
        self.emit(c, "plain")

    def s_Add(self, c: _CodeInfo, s: Any) -> None:
        self.written_by(c, s.target)
        self.emit(c, "plain")

    def s_Remove(self, c: _CodeInfo, s: Any) -> None:
        self.written_by(c, s.source)
        self.emit(c, "plain")

    def s_Move(self, c: _CodeInfo, s: Any) -> None:
        self.written_by(c, s.source, s.target)
        self.emit(c, "plain")

    def s_Shuffle(self, c: _CodeInfo, s: Any) -> None:
        self.written_by(c, s.pile, s.source)
        self.emit(c, "plain")

    def s_ExprStmt(self, c: _CodeInfo, s: Any) -> None:
        self.emit(c, "call", s.expr.func.ident)

    def s_Emit(self, c: _CodeInfo, s: Any) -> None:
        self.emit(c, "emit", s.event if s.event in self.triggered else None)

    def s_EndGame(self, c: _CodeInfo, s: Any) -> None:
        self.emit(c, "end", fall=False)

    def s_Return(self, c: _CodeInfo, s: Any) -> None:
        self.emit(c, "end", fall=False)

    def s_Offer(self, c: _CodeInfo, s: Any) -> None:
        i = self.emit(c, "offer", s)
        if s.orelse is not None:  # as closures.s_Offer lays it out: a jump past the else block, the block
            skip = self.emit(c, "plain", fall=False)
            c.ops[i].succ.append((len(c.ops), (), ()))
            self.block(c, s.orelse)
            c.ops[skip].succ.append((len(c.ops), (), ()))

    def s_If(self, c: _CodeInfo, s: Any) -> None:
        end_jumps = []
        for test, body in s.branches:
            i = self.emit(c, "plain")
            self.block(c, body)
            end_jumps.append(self.emit(c, "plain", fall=False))
            c.ops[i].succ.append((len(c.ops), (), ()))
        if s.orelse is not None:
            self.block(c, s.orelse)
        for j in end_jumps:
            c.ops[j].succ.append((len(c.ops), (), ()))

    def _loop_body(self, c: _CodeInfo, body: A.Block, head: int) -> tuple[int, int]:
        self.loops.append((head, []))
        self.block(c, body)
        back = self.emit(c, "plain", fall=False)
        c.ops[back].succ.append((head, (), ()))
        _, breaks = self.loops.pop()
        end = len(c.ops)
        for b in breaks:
            c.ops[b].succ.append((end, (), ()))
        return back, end

    def s_For(self, c: _CodeInfo, s: Any) -> None:
        items, idx = self.hidden("items"), self.hidden("i")
        st = getattr(s.source, "ty", None) or _ANY
        if len(s.names) == 2:
            if st.name == "map" and len(st.args) == 2:
                self.bind(c, s.names[0], st.args[0])
                self.bind(c, s.names[1], st.args[1])
            else:
                self.bind(c, s.names[0], INT)
                self.bind(c, s.names[1], T.element(st))
        else:
            self.bind(c, s.names[0], T.element(st))
        self.emit(c, "plain", binds=(items, idx))
        head = self.emit(c, "plain", fall=False)
        c.ops[head].succ.append((head + 1, tuple(s.names), ()))
        back, end = self._loop_body(c, s.body, head)
        c.ops[head].succ.append((end, (), ()))
        c.loops.append(("for", head + 1, back, items, idx, tuple(s.names)))

    def s_While(self, c: _CodeInfo, s: Any) -> None:
        head = self.emit(c, "plain")
        _, end = self._loop_body(c, s.body, head)
        c.ops[head].succ.append((end, (), ()))

    def s_Repeat(self, c: _CodeInfo, s: Any) -> None:
        left = self.hidden("n")
        self.emit(c, "plain", binds=(left,))
        head = self.emit(c, "plain")
        back, end = self._loop_body(c, s.body, head)
        c.ops[head].succ.append((end, (), ()))
        c.loops.append(("repeat", head + 1, back, left, None, ()))

    def s_Loop(self, c: _CodeInfo, s: Any) -> None:
        self._loop_body(c, s.body, len(c.ops))

    def s_Break(self, c: _CodeInfo, s: Any) -> None:
        i = self.emit(c, "plain", fall=False)
        self.loops[-1][1].append(i)

    def s_Continue(self, c: _CodeInfo, s: Any) -> None:
        i = self.emit(c, "plain", fall=False)
        c.ops[i].succ.append((self.loops[-1][0], (), ()))

    def s_Turn(self, c: _CodeInfo, s: Any) -> None:
        who = self.hidden("turn")
        first = self.emit(c, "turn", ("turn_start" if "turn_start" in self.triggered else None, who), fall=False)
        c.ops[first].succ.append((first + 1, (who,), ()))
        self.block(c, s.body)
        finish = self.emit(c, "emit", "turn_end" if "turn_end" in self.triggered else None)
        c.ops[first].succ.append((len(c.ops), (), ()))
        seat = _plain_local(s.player)
        if seat is not None:  # `turn p`: while it runs, its seat is p (unless the turn binds p again)
            c.loops.append(("turn", first, finish, who, None, (seat,)))

    def s_DrawInto(self, c: _CodeInfo, s: Any) -> None:
        drawn = self.hidden("items")
        self.written_by(c, s.pile, s.target)
        self.emit(c, "draw_into", drawn, binds=(drawn,))
        self.emit(c, "plain", drops=(drawn,))


def _flow(c: _CodeInfo, n: int) -> None:
    """The locals every path brings to each op (must) and those some path may bring (may)."""
    if not c.ops:
        return
    c.ops[0].must = c.entry_must
    c.ops[0].may = c.entry_may
    work = [0]
    queued = {0}
    while work:
        i = work.pop()
        queued.discard(i)
        op = c.ops[i]
        assert op.must is not None  # (an op on the work list has been reached)
        for t, binds, drops in op.succ:
            if t is None or t >= n:
                continue
            must = (op.must | set(binds)) - set(drops)
            may = (op.may | set(binds)) - set(drops)
            nxt = c.ops[t]
            new_must = must if nxt.must is _UNIVERSE else nxt.must & must
            new_may = nxt.may | may
            if new_must != nxt.must or new_may != nxt.may:
                nxt.must, nxt.may = frozenset(new_must), frozenset(new_may)
                if t not in queued:
                    queued.add(t)
                    work.append(t)


_ANY = T.ANY
INT = T.INT


def _resolve(checker: CheckerCore, t: Any) -> T.Type:
    if t is None:
        return _ANY
    try:
        return checker.resolve_type(t)
    except Exception:  # noqa: BLE001 - a type the checker cannot name again: no check
        return _ANY


def _element(e: Optional[A.Expr]) -> T.Type:
    return T.element(getattr(e, "ty", None) or _ANY) if e is not None else _ANY


def _list_of(t: T.Type) -> T.Type:
    return T.list_of(t)


_LAYOUTS: weakref.WeakKeyDictionary[Any, dict[str, _CodeInfo]] = weakref.WeakKeyDictionary()


def _layout(rs: SavedRules) -> dict[str, _CodeInfo]:
    """code id -> _CodeInfo of every code of the ruleset (made once per Ruleset), checked against the real ops."""
    got = _LAYOUTS.get(rs)
    if got is not None:
        return got
    try:
        got = _Layout(rs).build()
    except Exception:  # noqa: BLE001 - rules the walk does not know: every code left to the plainer checks
        got = {}
    for cid, info in got.items():
        code = rs.codes.get(cid)
        info.ok = code is not None and len(code.ops) == len(info.ops) and all(
            isinstance(op, _DECISION_OPS[o.kind]) if o.kind in _DECISION_OPS
            else not isinstance(op, (OfferOp, ChooseOp, RandomOp)) for op, o in zip(code.ops, info.ops))
        if info.ok and code is not None:  # the hidden local a `draw ... into` draws into is the name the compiler gave it
            info.ok = all(code.ops[k].target == o.data for k, o in enumerate(info.ops) if o.kind == "draw_into")
    _LAYOUTS[rs] = got
    return got


_DECISION_OPS = {"offer": OfferOp, "choose": ChooseOp, "random": RandomOp, "draw_into": RandomOp}


# ============================================================================ the frame stack
def _check_stack(g: SavedGame, rs: SavedRules, types: ValueTypes) -> None:
    """The frames of a game in progress, against the code: which frames can stand where, the position of
    each (a frame below another waits at the op that started the one above it: a call, an event, an offer;
    the top one at its decision, checked with the pending decision), its locals there and their types."""
    layout = _layout(rs)
    F = g.frames
    if not F:
        return  # (the pending decision says that nothing runs)
    bottom = "flow" if "flow" in rs.codes else "setup"
    if F[0].code.id != bottom:
        raise Bad("frames[0][0]", f"is {_show(F[0].code.id)}, but the bottom frame of a game in progress is "
                                  f"the {bottom}")
    k = 0
    if bottom == "flow" and F[0].pc == 0:  # setup runs above the flow, which has not started
        if len(F) < 2 or F[1].code.id != "setup":
            raise Bad("frames[0][1]", "is 0 (the flow has not started), but setup is not running above it")
        k = 1
    for i, f in enumerate(F):
        if i > k and f.code.id in ("flow", "setup"):
            raise Bad(f"frames[{i}][0]", f"is \"{f.code.id}\", which nothing calls")
        if i <= k and f.depth != 0:
            raise Bad(f"frames[{i}][3]", f"is {f.depth}, but the {f.code.id} runs at depth 0")

    while k < len(F) - 1:
        lo, above = F[k], F[k + 1]
        info = layout.get(lo.code.id)
        if info is None or not info.ok:
            k += 1
            continue
        if lo.pc == 0:
            raise Bad(f"frames[{k}][1]", f"is 0, but {lo.code.name} has not started: no frame can run above it")
        op = info.ops[lo.pc - 1]
        event = op.data if op.kind == "emit" else op.data[0] if op.kind == "turn" else None
        if op.kind == "call":
            want = rs.codes.get("proc:" + op.data)
            if above.code is not want:
                raise Bad(f"frames[{k + 1}][0]", f"is {_show(above.code.id)}, but {lo.code.name} calls "
                                                 f"{op.data} at frames[{k}][1] = {lo.pc}")
            _same_depth(lo, above, k)
            if ("me" in lo.locals) != ("me" in above.locals) or not _same(lo.locals.get("me"), above.locals.get("me")):
                raise Bad(f"frames[{k + 1}][2]", f"has me {_show(above.locals.get('me'))}, but its caller "
                                                 f"(frames[{k}]) has me {_show(lo.locals.get('me'))}")
            k += 1
        elif op.kind == "offer":
            names = op.data.actions
            if not above.code.id.startswith("action:") or above.code.id[7:] not in names:
                raise Bad(f"frames[{k + 1}][0]", f"is {_show(above.code.id)}, but {lo.code.name} offers "
                                                 f"{', '.join(names)} at frames[{k}][1] = {lo.pc}")
            _same_depth(lo, above, k)
            seat = _plain_local(op.data.player)
            if seat is not None and seat in lo.locals and above.locals.get("me") != lo.locals[seat]:
                raise Bad(f"frames[{k + 1}][2].me", f"is {_show(above.locals.get('me'))}, but the action was "
                                                    f"offered to {_show(lo.locals[seat])}")
            k += 1
        elif event is not None:
            trig = rs.triggers.get(event, [])
            j = len(trig) - 1
            m = k + 1
            while True:  # the triggers of the event, the last one lowest; all but the running one not started
                f = F[m]
                if j < 0 or f.code is not trig[j][0]:
                    raise Bad(f"frames[{m}][0]", f"is {_show(f.code.id)}, but {lo.code.name} set off '{event}' at "
                                                 f"frames[{k}][1] = {lo.pc}: its triggers run above it, in order")
                if f.depth != lo.depth + 1:
                    raise Bad(f"frames[{m}][3]", f"is {f.depth}, but a trigger set off at depth {lo.depth} runs "
                                                 f"at depth {lo.depth + 1}")
                if f.pc == 0 and m < len(F) - 1:
                    j -= 1
                    m += 1
                    continue
                break
            k = m
        else:
            raise Bad(f"frames[{k}][1]", f"is {lo.pc}: {lo.code.name} does not start another frame there, but "
                                         f"frames[{k + 1}] runs above it")
    for i, f in enumerate(F):
        info = layout.get(f.code.id)
        if i == len(F) - 1 and info is not None and info.ok and (
                f.pc == 0 or info.ops[f.pc - 1].kind not in _DECISION_OPS):
            break  # the top frame waits at no decision: the pending decision says so
        _check_locals(g, rs, info, f, i, i == len(F) - 1, types)


def _same_depth(lo: Frame, above: Frame, k: int) -> None:
    if above.depth != lo.depth:
        raise Bad(f"frames[{k + 1}][3]", f"is {above.depth}, but what frames[{k}] calls or offers runs at its "
                                         f"depth, {lo.depth}")


def _plain_local(e: Optional[A.Expr]) -> Optional[str]:
    return e.ident if isinstance(e, A.Name) and e.ref == "local" else None


def _check_locals(g: SavedGame, rs: SavedRules, info: Optional[_CodeInfo], f: Frame, i: int, top: bool,
                  types: ValueTypes) -> None:
    if info is None or not info.ok:
        return
    path = f"frames[{i}][2]"
    where = f"{info.name} at position {f.pc}"
    if f.pc == 0:
        must, may, pos, op = info.entry_must, info.entry_may, -1, None
    else:
        pos = f.pc - 1
        op = info.ops[pos]
        must, may = op.must, op.may  # type: ignore[assignment]  # (None: never reached, said below)
        if must is None:  # (_UNIVERSE)
            raise Bad(f"frames[{i}][1]", f"is {f.pc}: {info.name} never gets there")
        if not top and op.kind == "turn":  # a turn's start sets off turn_start once it has its player
            must = must | {op.data[1]}
            may = may | {op.data[1]}
    held = set(f.locals)
    for x in sorted(must - held):
        raise Bad(path, f"has no local \"{x}\", which {where} always has")
    for x in sorted(held - may):
        raise Bad(path, f"has a local \"{x[:40]}\" that {where} does not have")
    written = info.written
    for name, v in f.locals.items():
        p = f"{path}.{name}"
        if name == "me":
            types.check(PLAYER, v, p) if v is not None else _bad(p, v, "a player")
        elif name[0] == "%":
            _hidden_value(g, name, v, p)
        else:
            sites = info.types.get(name)
            if sites:
                _one_of(types, sites, v, p, name in written)
    for kind, first, last, a, b, names in info.loops:
        if kind == "for" and isinstance(f.locals.get(a), tuple) and f.locals.get(b).__class__ is int \
                and not 0 <= f.locals[b] <= len(f.locals[a]):
            _bad(f"{path}.{b}", f.locals[b], f"a position from 0 to {len(f.locals[a])} in the loop's list")
        if not first <= pos < last:
            continue
        if kind == "for":
            items, idx = f.locals.get(a), f.locals.get(b)
            if not isinstance(items, tuple):
                _bad(f"{path}.{a}", items, "the list a for loop walks")
            if not (idx.__class__ is int and 1 <= idx <= len(items)):
                _bad(f"{path}.{b}", idx, f"a position from 1 to {len(items)} in the loop's list")
            if not any(any(first <= at < last for at in info.binds_at.get(n, ())) for n in names):
                got = tuple(f.locals.get(n) for n in names)
                want = items[idx - 1] if len(names) == 2 else (items[idx - 1],)
                if len(names) == 2 and not (isinstance(want, tuple) and len(want) == 2):
                    _bad(f"{path}.{a}[{idx - 1}]", want, "a pair (the loop names two values)")
                if not _same(got, want):
                    raise Bad(f"{path}.{names[0]}", f"is {_show(got[0])}, not the loop's item at {path}.{a}[{idx - 1}]")
        elif kind == "repeat":
            left = f.locals.get(a)
            if not (left.__class__ is int and left >= 0):
                _bad(f"{path}.{a}", left, "the count of rounds left (0 or more)")
        elif kind == "turn" and (pos > first or not top):  # (at its start only once it has set off turn_start)
            seat = names[0]
            if seat in f.locals and a in f.locals and not any(
                    first <= at < last for at in info.binds_at.get(seat, ())) and not _same(f.locals[seat], f.locals[a]):
                raise Bad(f"{path}.{a}", f"is {_show(f.locals[a])}, but the turn running there is {seat}'s "
                                         f"({_show(f.locals[seat])})")


def _hidden_value(g: SavedGame, name: str, v: Value, path: str) -> None:
    m = _HIDDEN.match(name)
    kind = m.group(1) if m else ""
    if kind == "items":
        if not isinstance(v, tuple):
            _bad(path, v, "a list")
    elif kind in ("i", "n"):
        _int(path, v, expected="a whole number")
    elif kind == "turn":
        _int(path, v, 0, g.n - 1, expected=f"a player (0 to {g.n - 1})")


def _one_of(types: ValueTypes, sites: Sequence[Site], v: Value, path: str, written: bool = False) -> None:
    """`v` fits the type of one of the local's binding sites; a local the rules write in place (`x = ...`,
    `add y to x`) only needs to be of that type's kind (a number, a text, a list, a map ...)."""
    first = None
    for ty, strict in sites:
        try:
            if written:
                types.check_kind(ty, v, path)
            else:
                types.check(ty, v, path, lenient=not strict)
            return
        except Bad as e:
            first = first or e
    assert first is not None  # (a local has one binding site or more)
    raise first


def _same(a: Value, b: Value) -> bool:
    """Equal as values, and of the same kinds (true is not 1)."""
    return a == b and encode(a) == encode(b)


def _eliminates(rs: SavedRules) -> bool:
    """Whether any rule can eliminate a player (an `eliminate` statement anywhere)."""
    got = _ELIMINATES.get(rs)
    if got is None:
        prog = rs.program
        got = _ELIMINATES[rs] = any(isinstance(x, A.Eliminate) for d in list(prog.decls.values()) + list(prog.triggers)
                                    for x in A.walk(d))
    return got


_ELIMINATES: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


# ============================================================================ locals of each code
_LOCALS: weakref.WeakKeyDictionary[Any, dict[str, set[str]]] = weakref.WeakKeyDictionary()


def _local_names(rs: SavedRules) -> dict[str, set[str]]:
    """code id -> the names its frames can hold (besides the compiler's hidden `%` names); once per Ruleset."""
    got = _LOCALS.get(rs)
    if got is not None:
        return got
    out: dict[str, set[str]] = {}
    _LOCALS[rs] = out
    for d in rs.program.decls.values():
        if isinstance(d, A.ProcDecl):
            cid = d.proc_kind if d.proc_kind in ("setup", "flow") else "proc:" + d.name
            out[cid] = {"me"} | {p.name for p in d.params} | _bound(d.body)
        elif isinstance(d, A.ActionDecl):
            out["action:" + d.name] = {"me"} | {p.name for p in d.params} | _bound(d.effect)
    for i, t in enumerate(rs.program.triggers):
        out[f"trigger:{i}"] = set(t.params) | _bound(t.body)
    return out


def _bound(node: Any) -> set[str]:
    """Every name a `let` or `for` binds anywhere inside an AST node."""
    names: set[str] = set()
    for x in A.walk(node):
        if isinstance(x, A.Let):
            names.add(x.name)
        elif isinstance(x, A.For):
            names.update(x.names)
    return names


# ============================================================================ the game
def _load_known(rs: SavedRules, g: SavedGame, raw: Json, what: str
                ) -> dict[str, dict[tuple[Value, ...], frozenset[int]]]:
    """The "known" field of a save: [[variable, [key, ...], [seat, ...]], ...], each a place that exists."""
    if not isinstance(raw, list):
        raise GameError(f"{what}: known is not a list")
    vis = rs.visibility
    out: dict[str, dict[tuple[Value, ...], frozenset[int]]] = {}
    for entry in raw:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[1], list) and isinstance(entry[2], list)):
            raise GameError(f"{what}: known holds {str(entry)[:40]}, not [variable, [keys], [seats]]")
        name, keys, seats = entry
        if vis.get(name) not in ("known", "owner") and not P.known_place_ok(rs, name, entry[1]):
            raise GameError(f"{what}: known names {name!r}, which is not a variable visible to known or owner")
        if not seats or any(s.__class__ is not int or not -1 <= s < g.n for s in seats):
            raise GameError(f"{what}: known seats of {name} must be seats of this game or -1, not {seats[:5]}")
        path = tuple(decode(k, rs.boards) for k in keys)
        c = g.data[name]
        try:
            for k in path:
                if c.__class__ is dict and k not in c:
                    raise RuleRuntimeError("no such key")
                c = _get(c, k)
        except (RuleRuntimeError, TypeError):
            raise GameError(f"{what}: known names a place of {name} that does not exist") from None
        out.setdefault(name, {})[path] = frozenset({-1}) if -1 in seats else frozenset(seats)
    return out


def load_game(cls: MakeGame[GameT], rs: SavedRules, text: object) -> GameT:
    what = f"not a saved game of {rs.name}"
    try:
        d = parse(rs, text)
        return _build(cls, rs, d)
    except GameError:
        raise
    except Bad as e:
        raise GameError(f"{what}: {e}") from None
    except RecursionError:
        raise GameError(f"{what}: nested too deeply") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as e:
        raise GameError(f"{what}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None


def _build(cls: MakeGame[GameT], rs: SavedRules, d: Json) -> GameT:

    what = f"not a saved game of {rs.name}"
    if not isinstance(d, dict) or d.get("format") != SAVE_FORMAT:
        raise GameError(f"{what}: missing or unknown \"format\" (expected {SAVE_FORMAT})")
    if d.get("game") != rs.name:
        raise GameError(f"{what}: it is a saved game of {_show(d.get('game'))}")
    if d.get("variants") != list(rs.active_variants):
        raise GameError(f"{what} with variants {list(rs.active_variants)}: it was saved with "
                        f"{_show(d.get('variants'))}")
    _obj("", d, TOP_KEYS)
    n = d["players"]
    if n.__class__ is not int or n not in rs.player_counts:
        raise GameError(f"{what}: {_show(n)} players")
    seed = _int("seed", d["seed"])
    chance = d["chance"]
    if chance not in ("sampled", "explicit"):
        _bad("chance", chance, "\"sampled\" or \"explicit\"")
    g = cls(rs, n, seed, chance)
    try:
        for name, f in rs.consts:
            g.consts[name] = f(g, {})
    except Exception as e:  # noqa: BLE001 - the rules' own constants fail: not the save's fault, but no game
        raise GameError(f"{what}: the constants of the rules cannot be computed ({e})") from None

    # ---- variables, each against its declared type
    types = ValueTypes(rs, n)
    data = d["data"]
    if not isinstance(data, dict):
        _bad("data", data, "an object")
    names = [v[0] for v in rs.vars]
    piece_keys = sorted(P.state_keys(rs))
    for name in data:
        if name not in rs.visibility and name not in piece_keys:
            raise Bad("data", f"has a variable \"{name[:40]}\" the rules do not declare")
    for name, per, _, ty, _ in rs.vars:
        path = f"data.{name}"
        if name not in data:
            raise Bad("data", f"has no variable \"{name}\"")
        v = _value(path, data[name], rs)
        if per:
            if not isinstance(v, tuple) or len(v) != n:
                _bad(path, data[name], f"a list of {n} values (one per player)")
            for p, x in enumerate(v):
                types.check(ty, x, f"{path}[{p}]")
        else:
            types.check(ty, v, path)
        g.data[name] = v
    g.data = {name: g.data[name] for name in names}
    for key in piece_keys:  # the live pieces of each kind and its next id (interpreter/pieces.py)
        if key not in data:
            raise Bad("data", f"has no \"{key}\" (pieces)")
        g.data[key] = _value(f"data.{key}", data[key], rs)
    P.load_pieces(rs, g.data, what)

    # ---- seats and counters
    g.current = _int("current", d["current"], 0, n - 1, expected=f"a player (0 to {n - 1})")
    el = _list("eliminated", d["eliminated"])
    if len(el) != n:
        raise Bad("eliminated", f"has {len(el)} seats, not {n}")
    g.eliminated = tuple(_bool(f"eliminated[{i}]", x) for i, x in enumerate(el))
    g.known = _load_known(rs, g, d["known"], what)
    g.over = _bool("over", d["over"])
    ends = set(rs.endings) | {"end_game", "end of flow", "all players eliminated"}
    for key, allowed in (("end_reason", ends), ("end_pending", set(rs.endings))):
        v = d[key]
        if v is not None and (not isinstance(v, str) or v not in allowed):
            _bad(key, v, "null or an ending of the rules")
    g.end_reason = d["end_reason"]
    g.end_pending = d["end_pending"]
    if g.end_reason is not None and not g.over:
        raise Bad("end_reason", "is set in a game that is not over")
    g.rng = _int("rng", d["rng"], 0, R.MASK)
    g.turns = _int("turns", d["turns"], 0, MAX_TURNS)
    log = _list("log", d["log"])
    g.log = []
    for i, x in enumerate(log):
        if x.__class__ is not dict or len(x) != 2 or x.get("player").__class__ is not int \
                or x.get("action").__class__ is not str or not -1 <= x["player"] < n \
                or len(x["action"]) > MAX_TEXT_CHARS:
            _obj(f"log[{i}]", x, ("player", "action"))
            _int(f"log[{i}].player", x["player"], -1, n - 1, expected=f"a player (0 to {n - 1}) or -1 for chance")
            _str(f"log[{i}].action", x["action"])
        g.log.append({"player": x["player"], "action": x["action"]})
    notes = _list("notes", d["notes"], MAX_NOTES)
    g.notes = [_str(f"notes[{i}]", x, MAX_NOTE_CHARS) for i, x in enumerate(notes)]
    err = d["error"]
    if err is not None:
        _str("error", err, MAX_SAVE_CHARS)
        if not g.over:
            raise Bad("error", "is set in a game that is not over")
    g.error = err
    if g.over and g.end_reason is None and err is None:
        raise Bad("over", "is true, but the save has neither an end_reason nor an error")
    if err is not None and g.end_reason is not None:
        raise Bad("end_reason", "is set in a game that stopped on an error")
    if not g.over and all(g.eliminated):
        raise Bad("eliminated", "holds every player in a game that is not over")

    # ---- frames
    frames = _list("frames", d["frames"], MAX_FRAMES)
    local_names = _local_names(rs)
    g.frames = []
    for i, fr in enumerate(frames):
        path = f"frames[{i}]"
        _list(path, fr)
        if len(fr) != 4:
            raise Bad(path, f"has {len(fr)} items, not 4 (code, position, locals, depth)")
        code_id, pc, locs, depth = fr
        code = rs.codes.get(code_id) if isinstance(code_id, str) else None
        if code is None:
            raise Bad(f"{path}[0]", f"is {_show(code_id)}, not a procedure, action or trigger of the rules")
        _int(f"{path}[1]", pc, 0, len(code.ops))
        _int(f"{path}[3]", depth, 0, rs.cascade_depth)
        if not isinstance(locs, dict):
            _bad(f"{path}[2]", locs, "an object")
        allowed = local_names.get(code_id, set())
        L = {}
        for k, v in locs.items():
            if k not in allowed and not _HIDDEN.match(k):
                raise Bad(f"{path}[2]", f"has a local \"{k[:40]}\" that {code.name} does not have")
            x = _value(f"{path}[2].{k}", v, rs)
            if k == "me":
                types.check(PLAYER, x, f"{path}[2].me")
            L[k] = x
        g.frames.append(Frame(code, pc, L, depth))

    if not g.over:
        if any(g.eliminated) and not _eliminates(rs):
            raise Bad("eliminated", "holds a player, but no rule of the game eliminates anyone")
        _check_stack(g, rs, types)

    # ---- the pending decision
    pend = d["pending"]
    if g.over:
        if pend is not None:
            _bad("pending", pend, "null in a game that is over")
        if g.error is None and g.frames:
            raise Bad("frames", f"holds {len(g.frames)} frame{'s' if len(g.frames) != 1 else ''} in a game that "
                                f"ended ({g.end_reason}): nothing runs after the end")
        return g
    if pend is None:
        raise Bad("pending", "is null: a game in progress must have a pending decision")
    g.pending = _pending(g, rs, pend)
    P.check_refs(rs, g, what)
    return g


def _pending(g: SavedGame, rs: SavedRules, pend: Json) -> Pending:
    _obj("pending", pend, PENDING_KEYS)
    kind = pend["kind"]
    if not isinstance(kind, str) or kind not in _OP_OF_KIND:
        _bad("pending.kind", kind, "\"action\", \"choose\" or \"chance\"")
    if kind == "chance":
        _int("pending.player", pend["player"], -1, -1, expected="-1 (chance)")
        if g.chance_mode != "explicit":
            raise Bad("pending.kind", "is \"chance\" in a game whose chance is sampled")
    else:
        _int("pending.player", pend["player"], 0, g.n - 1, expected=f"a player (0 to {g.n - 1})")
    _str("pending.prompt", pend["prompt"])
    _str("pending.target", pend["target"])
    opts = _list("pending.options", pend["options"])
    for i, o in enumerate(opts):
        if not isinstance(o, list) or len(o) != 2 or not isinstance(o[0], str):
            _bad(f"pending.options[{i}]", o, "an [id, value] pair")
        _str(f"pending.options[{i}][0]", o[0])
        if not (isinstance(o[1], dict) and o[1] == {"$done": True}):
            _value(f"pending.options[{i}][1]", o[1], rs)
    probs = pend["probs"]
    if kind == "chance":
        _list("pending.probs", probs)
        if len(probs) != len(opts):
            raise Bad("pending.probs", f"has {len(probs)} chances for {len(opts)} options")
        for i, x in enumerate(probs):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 < x <= 1:
                _bad(f"pending.probs[{i}]", x, "a chance above 0 and at most 1")
        if abs(math.fsum(probs) - 1) > 1e-9:
            raise Bad("pending.probs", "do not add up to 1")
    elif probs is not None:
        _bad("pending.probs", probs, "null (only chance has chances)")
    _int("pending.need", pend["need"], 0, MAX_PICKS)
    _int("pending.low", pend["low"], 0, MAX_PICKS)
    _int("pending.start", pend["start"], 0, MAX_PICKS)
    _bool("pending.single", pend["single"])
    _bool("pending.ordered", pend["ordered"])
    for key in ("acc", "pool"):
        for i, x in enumerate(_list(f"pending.{key}", pend[key], MAX_PICKS)):
            _value(f"pending.{key}[{i}]", x, rs)
    p = Pending.from_dict(pend, rs.boards)

    # the op it resumes, and the decision that op would offer in this state
    if not g.frames:
        raise Bad("pending", "waits for a decision, but no procedure is running (frames is empty)")
    fr = g.frames[-1]
    op = fr.code.ops[fr.pc - 1] if fr.pc >= 1 else None
    want = _OP_OF_KIND[kind]
    if not isinstance(op, want):  # (coverage counts with subclasses of the decision ops)
        raise Bad("pending.kind", f"is \"{kind}\", but {fr.code.name} does not wait there for "
                  f"{'an action' if kind == 'action' else 'a choice' if kind == 'choose' else 'a draw or roll'} "
                  f"(frames[{len(g.frames) - 1}][1] is {fr.pc})")
    redo = _redo(g, fr, op, p)
    if redo is None or redo.to_dict() != p.to_dict():
        raise Bad("pending", f"is not the decision the rules offer here ({fr.code.name}, position {fr.pc})")
    return p


def _redo(g: SavedGame, fr: Frame, op: Any, saved: Pending) -> Optional[Pending]:
    """The pending decision `op` makes in this state (on a copy of the game), or None if it makes none."""
    c = g.clone()
    c.pending = None
    c.work = 0
    c.fdepth = 0
    L = dict(fr.locals)
    try:
        if isinstance(op, RandomOp):
            if saved.single != (op.count is None) or not len(saved.acc) < saved.need:
                return None
            if op.is_draw:
                if tuple(saved.pool) != op.place.keys_now(c, L):
                    return None
            else:
                if op.count is not None and op.count(c, L) != saved.need:
                    return None
                if tuple(_items(op.source(c, L))) != tuple(saved.pool):
                    return None
            p = Pending("chance", -1, [], "draw" if op.is_draw else "roll", op.target)
            p.need = saved.need
            p.single = saved.single
            p.pool = tuple(saved.pool)
            # draws already taken have left their pile; rolls do not change the state, so replay them
            if op.is_draw:
                p.acc = list(saved.acc)
                r = op.step(c, L, p)
            else:
                r = _replay_rolls(c, L, op, p, saved.acc)
            return c.pending if r is SUSPEND else None
        r = op(c, L)
        if r is not SUSPEND:
            return None
        if isinstance(op, ChooseOp):
            for x in saved.acc:
                if c.pending is None or x is _DONE or fmt(x) not in {i for i, _ in c.pending.options}:
                    return None
                if op.resume(c, L, x) is not SUSPEND:
                    return None
        elif saved.acc or saved.pool:
            return None
        return c.pending
    except GameError:
        return None
    except Exception:  # noqa: BLE001 - any failure of the rules here means the save does not fit them
        return None


def _replay_rolls(c: SavedGame, L: Locals, op: RandomOp, p: Pending, acc: Sequence[Value]) -> Any:
    r = op.step(c, L, p)
    for x in acc:
        if r is not SUSPEND or c.pending is None or fmt(x) not in {i for i, _ in c.pending.options}:
            return None
        r = op.resume(c, L, x)
    return r

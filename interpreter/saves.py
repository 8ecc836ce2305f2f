"""Loading a saved game. A save is untrusted input: it is checked completely against the program.

`load_game(cls, rs, text)` either returns a Game in a state the rules could have reached (in form: every
field of the right JSON kind, every variable of its declared type, seats within the players, positions
within the code, the pending decision exactly the one the op it resumes would offer now), or raises a
GameError with one line that names the field, e.g.
`not a saved game of Race: data.points[1] is "x", not an int`.
"""
from __future__ import annotations

import json
import math
import re
import sys
import weakref

from rulelang import ast as A
from rulelang.types import PLAYER

from . import pieces as P
from . import rng as R
from .runtime import MAX_INT, MAX_PICKS, SUSPEND, _DONE, ChooseOp, OfferOp, Pending, RandomOp, _items
from .errors import GameError
from .values import Pile, decode, fmt

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


class Bad(Exception):
    """A field of the save is wrong: `path` names it, `message` says what is wrong."""

    def __init__(self, path, message):
        super().__init__(f"{path} {message}" if path else message)


class _Constant(ValueError):
    pass


def _no_constant(name):
    raise _Constant(f"{name} is not a number a save can hold")


def _finite_float(text):
    x = float(text)
    if not math.isfinite(x):
        raise _Constant(f"{text[:20]} is too large a number")
    return x


# ============================================================================ parsing
def parse(rs, text):
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


def _check_shape(d):
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


# ============================================================================ messages
def _show(v):
    if isinstance(v, str):
        return json.dumps(v[:40] + ("..." if len(v) > 40 else ""), ensure_ascii=False)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        s = str(v)
        return s if len(s) <= 30 else s[:12] + f"... ({len(s)} digits)"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list):
        return f"a list of {len(v)}"
    if isinstance(v, dict):
        return "an object"
    return fmt(v)[:40]


def _bad(path, v, expected):
    raise Bad(path, f"is {_show(v)}, not {expected}")


def _int(path, v, low=None, high=None, expected=None):
    if v.__class__ is not int or (low is not None and v < low) or (high is not None and v > high):
        if expected is None:
            if low is None:
                expected = "a whole number"
            elif high is None:
                expected = f"a whole number of {low} or more"
            else:
                expected = f"a whole number from {low} to {high}"
        _bad(path, v, expected)
    return v


def _str(path, v, limit=MAX_TEXT_CHARS):
    if not isinstance(v, str):
        _bad(path, v, "a text")
    if len(v) > limit:
        raise Bad(path, f"is longer than {limit:,} characters")
    return v


def _bool(path, v):
    if v is not True and v is not False:
        _bad(path, v, "true or false")
    return v


def _list(path, v, limit=None):
    if not isinstance(v, list):
        _bad(path, v, "a list")
    if limit is not None and len(v) > limit:
        raise Bad(path, f"has {len(v):,} items, more than {limit:,}")
    return v


def _obj(path, v, keys):
    if not isinstance(v, dict):
        _bad(path, v, "an object")
    missing = [k for k in keys if k not in v]
    extra = sorted(k for k in v if k not in keys)
    if missing:
        raise Bad(path, f"has no \"{missing[0]}\"")
    if extra:
        raise Bad(path, f"has an unknown field \"{extra[0][:40]}\"")
    return v


def _value(path, v, rs):
    try:
        return decode(v, rs.boards)
    except RecursionError:
        raise Bad(path, "is nested too deeply") from None
    except (ValueError, TypeError) as e:
        raise Bad(path, f"is not a value: {e}") from None


# ============================================================================ types
class _Types:
    """Checks decoded values against the checker's types (rulelang/types.py)."""

    def __init__(self, rs, n):
        self.rs = rs
        self.n = n
        decls = rs.program.decls
        self.members = {name: frozenset(d.members) for name, d in decls.items() if isinstance(d, A.EnumDecl)}
        self.rows = {}
        for tname, rows in rs.table_rows.items():
            self.rows.setdefault(decls[tname].record, set()).update(rows)
        self.nodes = set()
        for b in rs.boards.values():
            self.nodes.update(b.nodes)

    def check(self, ty, v, path):
        if v is None:
            return  # none fits every type
        name, kind = ty.name, ty.kind
        if kind == "range":
            _int(path, v, ty.low, ty.high)
        elif kind == "enum":
            if not isinstance(v, str) or v not in self.members.get(name, ()):
                _bad(path, v, f"a {name}")
        elif kind == "record":
            if not isinstance(v, str) or v not in self.rows.get(name, ()):
                _bad(path, v, f"a {name} (a row of its table)")
        elif name == "int":
            _int(path, v, expected="an int")
            if not -MAX_INT < v < MAX_INT:
                raise Bad(path, f"is {_show(v)}, beyond the numbers rules compute (less than 2^62 in size)")
        elif name == "bool":
            _bool(path, v)
        elif name == "str":
            if not isinstance(v, str):
                _bad(path, v, "a text")
        elif name == "player":
            _int(path, v, 0, self.n - 1, expected=f"a player (0 to {self.n - 1})")
        elif name == "node":
            try:
                ok = v in self.nodes
            except TypeError:
                ok = False
            if not ok:
                _bad(path, v, "a node of a board")
        elif name == "board":
            if v.__class__.__name__ != "Board":
                _bad(path, v, "a board")
        elif name == "none":
            _bad(path, v, "none")
        elif name in ("list", "set", "deck", "bag", "tuple"):
            self._collection(ty, v, path)
        elif name == "map":
            if not isinstance(v, dict):
                _bad(path, v, "a map")
            if len(ty.args) == 2:
                for k, x in v.items():
                    self.check(ty.args[0], k, f"{path} key {fmt(k)[:40]}")
                    self.check(ty.args[1], x, f"{path}[{fmt(k)[:40]}]")
        # any, func: every value

    def _collection(self, ty, v, path):
        name = ty.name
        if name == "tuple":
            if not isinstance(v, tuple) or (ty.args and len(v) != len(ty.args)):
                _bad(path, v, f"a tuple of {len(ty.args)}" if ty.args else "a tuple")
            for i, (t, x) in enumerate(zip(ty.args, v)):
                self.check(t, x, f"{path}[{i}]")
            return
        if name == "list":
            ok = isinstance(v, tuple)
        elif name == "set":
            ok = isinstance(v, (frozenset, tuple)) or (isinstance(v, dict) and not v)
        else:  # deck, bag: a pile of that kind, or a list (the rules fill a deck or bag with a list)
            ok = (isinstance(v, Pile) and v.kind == name) or isinstance(v, tuple)
        if not ok:
            _bad(path, v, f"a {name}")
        if ty.args and not isinstance(v, dict):
            items = sorted(v, key=lambda x: fmt(x)) if isinstance(v, frozenset) else list(v)
            for i, x in enumerate(items):
                self.check(ty.args[0], x, f"{path}[{i}]")


# ============================================================================ locals of each code
_LOCALS = weakref.WeakKeyDictionary()


def _local_names(rs):
    """code id -> the names its frames can hold (besides the compiler's hidden `%` names); once per Ruleset."""
    out = _LOCALS.get(rs)
    if out is not None:
        return out
    out = _LOCALS[rs] = {}
    for d in rs.program.decls.values():
        if isinstance(d, A.ProcDecl):
            cid = d.proc_kind if d.proc_kind in ("setup", "flow") else "proc:" + d.name
            out[cid] = {"me"} | {p.name for p in d.params} | _bound(d.body)
        elif isinstance(d, A.ActionDecl):
            out["action:" + d.name] = {"me"} | {p.name for p in d.params} | _bound(d.effect)
    for i, t in enumerate(rs.program.triggers):
        out[f"trigger:{i}"] = set(t.params) | _bound(t.body)
    return out


def _bound(node):
    """Every name a `let` or `for` binds anywhere inside an AST node."""
    names = set()
    for x in A.walk(node):
        if isinstance(x, A.Let):
            names.add(x.name)
        elif isinstance(x, A.For):
            names.update(x.names)
    return names


# ============================================================================ the game
def load_game(cls, rs, text):
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


def _build(cls, rs, d):
    from .engine import MAX_FRAMES, MAX_NOTE_CHARS, MAX_NOTES, SAVE_FORMAT, Frame, _load_known

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
    types = _Types(rs, n)
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

    # ---- the pending decision
    pend = d["pending"]
    if g.over:
        if pend is not None:
            _bad("pending", pend, "null in a game that is over")
        return g
    if pend is None:
        raise Bad("pending", "is null: a game in progress must have a pending decision")
    g.pending = _pending(g, rs, pend)
    P.check_refs(rs, g, what)
    return g


def _pending(g, rs, pend):
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


def _redo(g, fr, op, saved):
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


def _replay_rolls(c, L, op, p, acc):
    r = op.step(c, L, p)
    for x in acc:
        if r is not SUSPEND or fmt(x) not in {i for i, _ in c.pending.options}:
            return None
        r = op.resume(c, L, x)
    return r

"""The run-time helpers the generated code calls (each does what the matching closure in closures.py
does), the names it may use, and the small tests of expressions the generators share."""
from __future__ import annotations

import builtins as _py_builtins
import re
import types
from itertools import compress

import attrs

from rulelang import ast as A
from ..boards import Board
from ..builtins import (CONTAINERS, RuleRuntimeError, _cost_of, _items, charge, check_items, check_value, deep_cost, over,
                        sum_of_values, walked_and_read)
from .. import runtime as C
from ..pieces import live, read_field
from ..runtime import span_of
from ..values import Piece, fmt, skey


# ============================================================================ run-time helpers
# (called by the generated code; each does what the matching closure in closures.py does)


def neg_error(v):
    return RuleRuntimeError(f"cannot negate {fmt(v)}")


def no_me():
    return RuleRuntimeError("'me' is not known here")


def compare(op, a, b):
    try:
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        return a >= b
    except TypeError:
        raise RuleRuntimeError(f"cannot compare {fmt(a)} {op} {fmt(b)}") from None


def field_slow(G, v, name, by_row, rows):
    """A field of a table row not yet in the field's cache (or a piece reached as `any`)."""
    try:
        hash(v)
    except TypeError:
        raise RuleRuntimeError(f"{fmt(v)} has no field '{name}'") from None
    if v.__class__ is Piece:
        return read_field(G, v, name)
    try:
        value = by_row[v] = rows[v][name]
    except (KeyError, TypeError):
        raise RuleRuntimeError(f"{fmt(v)} has no field '{name}'") from None
    return value


def field_counts(xs, by_row, name, rows):
    """{value: how many items of the list xs have it} of field `name` of table rows, read as field_slow
    reads it (by_row: the field's cache, row -> value, filled here too); False when an item is not a row
    with that field (a piece, a number, ...): the caller then counts item by item, as it always did, and
    says the error there."""
    counts = {}
    for x in xs:
        try:
            v = by_row[x]
        except KeyError:
            if x.__class__ is Piece:
                return False
            try:
                v = by_row[x] = rows[x][name]
            except (KeyError, TypeError):
                return False
        except TypeError:
            return False
        counts[v] = counts.get(v, 0) + 1
    return counts


MAX_MASKED = 60  # candidates of a legal function whose listings are kept per set of legal ones
MAX_KEPT_IDS = 20_000  # (id, value) pairs kept per action whose candidates are computed
MAX_LISTS = 4096  # listings kept per legal function (the table starts again when full)
_BIT_BYTES = bytes.maketrans(b"01", b"\0\1")  # the digits of a number written in binary -> bytes 0 and 1


def listed(pairs, mask, lists):
    """The (id, value) pairs of the candidates whose bits are set in mask, in order: a list made once per
    mask and kept (lists), handed out again for the same mask."""
    # (the mask's bits, lowest first, as bytes 0 and 1 picking the pairs: itertools.compress walks them in C,
    # some 3x quicker than testing each bit of the number in Python for a listing of 49 candidates)
    out = list(compress(pairs, f"{mask:b}".encode()[::-1].translate(_BIT_BYTES)))
    if len(lists) >= MAX_LISTS:
        lists.clear()
    lists[mask] = out
    return out


def line_rays(b, n):
    """The rays line_length walks from node n of board b, or None where the built-in must run."""
    return b.rays(n) if b.__class__ is Board else None


def board_adj(b):
    """The neighbours of every node of board b (node -> tuple), for group()'s walk written in generated code."""
    return b.adj


def group_order(b, found, G):
    """The nodes of a group found by that walk (a dict of them), in board order, charged as Board.group."""
    return b._in_order(found, None, G)


def check_list(G, t):
    """A list just built by a comprehension: measured when it holds lists, sets or maps."""
    for x in t:
        if x.__class__ in CONTAINERS:
            return check_value(G, t)
    return t


def pairs_of(s):
    """The (key, value) or (position, item) pairs a two-name comprehension or loop walks."""
    if isinstance(s, dict):
        return tuple((k, s[k]) for k in sorted(s, key=skey))
    return tuple(enumerate(_items(s)))


def _values_call(e):
    """Whether e is `values(m)` (one argument, not named)."""
    return (isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.ref == "builtin_func"
            and e.func.ident == "values" and len(e.args) == 1 and e.args[0].name is None)


_NO_REPEATS = {}  # id(list) -> a short list known to hold no item twice (kept alive here, so its id is its own)
_KEPT_LISTS = 4096  # at most this many (the table starts again when full), of at most 64 items each


def distinct_items(xs):
    """The items of a list, set or map without repeats, in order (runtime.distinct of items_of). A list
    is never changed once made: a short one found to hold no repeats is remembered (a listing walks the
    same lists again and again)."""
    c = xs.__class__
    if c is tuple:
        if len(xs) < 2 or _NO_REPEATS.get(id(xs)) is xs:
            return xs
        if len(set(xs)) == len(xs):  # no repeats (told as dict.fromkeys tells them)
            if len(xs) <= 64:
                if len(_NO_REPEATS) >= _KEPT_LISTS:
                    _NO_REPEATS.clear()
                _NO_REPEATS[id(xs)] = xs
            return xs
    elif c is frozenset or c is dict:  # sorted, and never twice
        return _items(xs)
    return list(dict.fromkeys(_items(xs)))  # the first of equal items kept, as distinct()


def depth_error(name, depth):
    return RuleRuntimeError(f"function '{name}' calls itself more than {depth} deep")


BUILTIN_ERRORS = (TypeError, ValueError, IndexError, AttributeError, KeyError)


_G_USE = re.compile(r"\bG\b(?!\.(?:data\[|consts\[|fdepth\b|n\b|active_players\(\)))")


_HEADS = ("if ", "elif ", "else:", "try:", "except")  # a one-line compound statement: `if TEST: STATEMENT`
_NOT_PLAIN = ("if ", "elif ", "else", "try", "except", "for ", "while ", "with ", "return", "raise", "def ",
              "class ", "yield", "break", "continue", "global", "nonlocal", "import", "from ")


def _synced(line):
    """A generated line whose one simple statement hands G to a call, written to give the call the work
    counted in a work region's local and take it back after: `G.work = W; S; W = G.work; M = G.work_mark`
    (W and M stand for the region's names). None when that cannot be done (G read elsewhere in the line, a
    block's header, a statement that leaves the line's block)."""
    head, stmt = "", line
    if line.startswith(_HEADS):
        depth = 0
        quote = None
        for i, ch in enumerate(line):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == ":" and depth == 0:
                head, stmt = line[:i + 1], line[i + 1:].strip()
                break
        else:
            return None
        if not stmt or not _G_READS_ONLY(head):
            return None
        head += " "
    if stmt.startswith(_NOT_PLAIN) or ";" in stmt or "G.work" in stmt:
        return None
    return f"{head}G.work = \0W; {stmt}; \0W = G.work; \0M = G.work_mark"


SMALL_INT = 2 ** 40  # two numbers below this either way add or subtract far inside the range (MAX_INT)


def _G_READS_ONLY(line):
    """A generated line that uses the game only to read variables, constants, the depth, the player count
    or the seats still playing (never the work, nor handing G to a call)."""
    return _G_USE.search(line) is None


class Scalar:
    """In Fn.known: a value surely not a list, set, map or pile (a number, text, bool or none), its class
    not known."""


class Unhoisted(Exception):
    """A loop-invariant part computed before its loop met a case that charges work: it is left to the loop."""


class Unset:
    """The value of a loop-invariant part that could not be computed before its loop (UNSET)."""

    def __repr__(self):
        return "UNSET"


UNSET = Unset()


def _runtime_names():
    return {
        "RuleRuntimeError": RuleRuntimeError, "CONTAINERS": CONTAINERS, "charge": charge, "over": over,
        "check_items": check_items, "check_value": check_value, "deep_cost": deep_cost, "walked_and_read": walked_and_read, "cost_of": _cost_of,
        "items_of": _items, "skey": skey, "fmt": fmt, "line_rays": line_rays, "listed": listed,
        "board_adj": board_adj, "group_order": group_order,
        "neg_error": neg_error, "no_me": no_me, "compare": compare, "span_of": span_of, "field_slow": field_slow,
        "field_counts": field_counts,
        "check_list": check_list, "pairs_of": pairs_of, "distinct_items": distinct_items, "depth_error": depth_error,
        "BUILTIN_ERRORS": BUILTIN_ERRORS,
        "arith": C._arith, "concat": C.concat, "equal": C._equal, "contains": C._contains, "get": C._get,
        "check_map": C._check_map,
        "builtin_error": C._builtin_error, "read_field": read_field, "live": live, "Piece": Piece,
        "MAX_FUNCTION_DEPTH": C.MAX_FUNCTION_DEPTH, "Located": C.Located, "str": str, "distinct": C.distinct,
        "long_id": C._long_id, "set_path": C._set_path, "UNSET": UNSET, "Unhoisted": Unhoisted,
        "sum_of_values": sum_of_values, "add_item": C.add_item, "remove_item": C.remove_item,
        "as_pile": C.as_pile, "sorting_cost": C.sorting_cost, "unpacked": C.unpacked,
        "flat_text": C.flat_text,
    }


# the only built-ins the generated code can name
SAFE_BUILTINS = {n: getattr(_py_builtins, n) for n in (
    "int", "str", "bool", "len", "tuple", "frozenset", "range", "isinstance", "dict", "sorted", "enumerate", "list",
    "KeyError", "Exception",
    "TypeError", "ValueError", "IndexError", "AttributeError", "hash", "None", "True", "False")
    if hasattr(_py_builtins, n)}


def _stub_code():
    def stub(*args):
        raise RuntimeError("generated code called before its module was compiled")
    return stub.__code__


_STUB = _stub_code()


def _code_of(src):
    module = compile(src, "<rulelang generated>", "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


# an expression's function before its source is generated (at its first call): see ExprGenerator.compile
_LAZY = _code_of("def lazy(G, L, _key=None):\n    return materialize(_key)(G, L)\n")
# an expression Python could not compile: its closure runs instead
_FALLBACK = _code_of("def fallback(G, L, _f=None):\n    return _f(G, L)\n")


class GenerationFailed(Exception):
    """The generated source did not compile (e.g. Python's nesting limits): the caller falls back."""


_OPERAND = r"(?:[A-Za-z_][A-Za-z_0-9]*|\(-?[0-9]+\)|-?[0-9]+)"
_PLAIN_COMPARISON = re.compile(rf"{_OPERAND} (?:==|!=|<|<=|>|>=|is|is not) {_OPERAND}")

# rule names whose reads are plain look-ups (no work, nothing changed)
_PURE_REFS = frozenset({"local", "var", "const", "member", "enum_values", "table", "board"})
_PURE_BUILTINS = frozenset({"me", "current", "player_count", "end_triggered", "players"})


def _item_kind(v):
    """The one class of all the items of a constant non-empty list (int, str or bool), or None."""
    if v.__class__ is tuple and v:
        c = v[0].__class__
        if c in (int, str, bool) and all(x.__class__ is c for x in v):
            return c
    return None


def _loop_call(e):
    """any(xs, x => test) / all(...): written as a loop in the calling function (see any_all_loop)."""
    return (e.func.ident in ("any", "all") and e.func.ref != "func" and len(e.args) == 2
            and all(a.name is None for a in e.args) and isinstance(e.args[1].value, A.Lambda))


def _children(e):
    """The expressions directly inside e."""
    for f in attrs.fields(e.__class__):
        v = getattr(e, f.name)
        if isinstance(v, A.Expr):
            yield v
        elif isinstance(v, (list, tuple)):
            for item in v:
                if isinstance(item, A.Arg):
                    yield item.value
                elif isinstance(item, A.Expr):
                    yield item
                elif isinstance(item, tuple):
                    yield from (x for x in item if isinstance(x, A.Expr))




def _size_of(e):
    return sum(1 for _ in A.walk(e))


def _calls(e):
    return {x.func.ident for x in A.walk(e) if isinstance(x, A.Call) and x.func.ref == "func"}


def _blocks(st):
    """The blocks inside a statement (each is fused on its own when the statement as a whole cannot be)."""
    if isinstance(st, A.If):
        return [b for _, b in st.branches] + ([st.orelse] if st.orelse is not None else [])
    body = getattr(st, "body", None)
    return [body] if isinstance(body, A.Block) else []


def emit_read_charge(mod, pos, fn):
    """Write out the charge of a built-in that reads every part of its arguments (builtins.charge_read:
    count_of, index_of, to_set, max, min, text): a constant's part counted now, a number's (2) without a
    call, a text's without the walk; the same work as the call."""
    constant = 0
    for a in pos:
        kind = mod.kind(a, fn)
        if a in mod.values:
            constant += walked_and_read(mod.values[a])
        elif kind is int or kind is bool:
            constant += 2
        else:
            fn.emit(f"G.work += 2 * (len({a}) // 64 + 1) if {a}.__class__ is str else walked_and_read({a})")
    if constant:
        fn.emit(f"G.work += {constant}")
    fn.emit("if G.work > G.work_mark: over(G)")


def emit_memo_lookup(fn, ident, pys, decl):
    """The start of a rule function that may answer from memory (G.memo: a dict while a read-only evaluation
    runs, as Game.heuristics; None otherwise). A call made before in the same evaluation with the same
    arguments (their classes too: `true` is not `1`) returns the value it computed, and charges the work
    it counted then, so the budget sees the same total; an argument that cannot be a key (a map) is
    computed afresh. Never a function that can call itself: its depth check must see every nesting.
    `pys`: the generated names of the parameters of `decl` (the function's declaration): one declared a
    number, a seat or a text holds no `true` that `1` could be mistaken for, so its class is left out of
    the key. Writes `memo_`, `key_`, `start_`; the function's end stores the value (define_function)."""
    plain = {p.name for p in getattr(decl, "params", ()) if p.type.__class__ is A.TypeName
             and p.type.name in ("int", "player", "text")}
    names = [p.name for p in getattr(decl, "params", ())]
    if len(names) != len(pys):  # (never: every parameter is a generated one)
        names = [None] * len(pys)
    key = ", ".join([ident] + [py if rule in plain else f"{py}.__class__, {py}" for py, rule in zip(pys, names)])
    fn.emit("memo_ = G.memo")
    fn.emit("if memo_ is not None:")
    fn.emit(f"    key_ = ({key},)")
    fn.emit("    try:")
    fn.emit("        hit_ = memo_.get(key_)")
    fn.emit("    except TypeError:")
    fn.emit("        memo_ = None")  # (an argument that cannot be a key)
    fn.emit("    else:")
    fn.emit("        if hit_ is not None:")
    fn.emit("            G.work += hit_[1]")
    fn.emit("            if G.work > G.work_mark: over(G)")
    fn.emit("            return hit_[0]")
    fn.emit("        start_ = G.work")

"""Checked AST -> Python source -> compile() -> functions: the generated backend.

Every expression an op or the engine needs becomes one generated function `e_N(G, L)` (G: the game,
L: the frame's locals), and every rule function `function f(a, b) = ...` becomes `fn_N(G, v_1, v_2)`
with its parameters as Python locals. Comprehension variables, lambda parameters and `Bind` names are
Python locals too. The generated functions do exactly what the closures of interpreter/closures.py do
(that backend stays as the reference the generated code is tested against): same results, same work
charges, same rule-error messages.

Safety: nothing from a rule file becomes Python code except through this module, and only as
  * generated identifiers (`v_3`, `fn_2`, `k_17`): a rule name is never spliced into the source;
  * `repr` of an int, a bool or None;
  * everything else (texts, lists, rows, boards, messages naming rule things) is a constant in the
    table `K` of the generated module, read through a module global `k_N`.
Messages and names shown in errors go through the table as well. `Ruleset.generated_source` holds the
source for inspection.

The functions are handed out before the module that defines them is compiled: each is first a stub
(a function object whose code is replaced when its batch compiles, see Module.finish), so callers keep
the final function object and call it with no indirection.
"""
from __future__ import annotations

import builtins as _py_builtins
import linecache
import re
import types
import warnings

import attrs

from rulelang import ast as A

from .optimise import tree as X
from .reuse_names import reuse_names
from .runtime import span_of
from .boards import Board
from .builtins import (CONTAINERS, COSTS, FLAT_COST, GROWS, IMPLS, MAX_INT, RuleRuntimeError, _cost_of, _items,
                       charge, check_items, check_value, deep_cost, over, sum_of_values)
from .values import Piece, fmt, skey

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
        from .pieces import read_field
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


def listed(pairs, mask, lists):
    """The (id, value) pairs of the candidates whose bits are set in mask, in order: a list made once per
    mask and kept (lists), handed out again for the same mask."""
    out = [pair for i, pair in enumerate(pairs) if mask >> i & 1]
    if len(lists) >= MAX_LISTS:
        lists.clear()
    lists[mask] = out
    return out


def line_rays(b, n):
    """The rays line_length walks from node n of board b, or None where the built-in must run."""
    return b.rays(n) if b.__class__ is Board else None


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
    from . import runtime as C
    from .pieces import live, read_field
    return {
        "RuleRuntimeError": RuleRuntimeError, "CONTAINERS": CONTAINERS, "charge": charge, "over": over,
        "check_items": check_items, "check_value": check_value, "deep_cost": deep_cost, "cost_of": _cost_of,
        "items_of": _items, "skey": skey, "fmt": fmt, "line_rays": line_rays, "listed": listed,
        "neg_error": neg_error, "no_me": no_me, "compare": compare, "span_of": span_of, "field_slow": field_slow,
        "field_counts": field_counts,
        "check_list": check_list, "pairs_of": pairs_of, "distinct_items": distinct_items, "depth_error": depth_error,
        "BUILTIN_ERRORS": BUILTIN_ERRORS,
        "arith": C._arith, "concat": C.concat, "equal": C._equal, "contains": C._contains, "get": C._get,
        "check_map": C._check_map,
        "builtin_error": C._builtin_error, "read_field": read_field, "live": live,
        "MAX_FUNCTION_DEPTH": C.MAX_FUNCTION_DEPTH, "Located": C.Located, "str": str, "distinct": C.distinct,
        "long_id": C._long_id, "set_path": C._set_path, "UNSET": UNSET, "Unhoisted": Unhoisted,
        "sum_of_values": sum_of_values, "add_item": C.add_item, "remove_item": C.remove_item,
        "as_pile": C.as_pile, "sorting_cost": C.sorting_cost,
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


# ============================================================================ the module
class Module:
    """The generated code of one Ruleset: a namespace, batches of source, and the constants table."""

    def __init__(self, label):
        self.label = label  # shown in tracebacks as the file name: never rule text
        self.K = []
        self._kid = {}
        self.ns = {"__builtins__": SAFE_BUILTINS, "K": self.K}
        self.ns.update(_runtime_names())
        self.pending = []  # (name, source) of this batch
        self.stubs = []  # (name, stub function) of this batch
        self.sources = []  # every compiled batch, in order
        self.counter = 0
        self.values = {}  # a generated expression that is a constant -> its value

    def is_const(self, expr):
        return expr in self.values

    def class_test(self, expr, cls, fn=None):
        """A condition `expr.__class__ is cls` (cls: int or dict or tuple), decided now for a constant or a
        name whose class is known in `fn`."""
        if expr in self.values:
            return "True" if self.values[expr].__class__ is cls else "False"
        if fn is not None and expr in fn.known and fn.known[expr] is not Scalar:
            return "True" if fn.known[expr] is cls else "False"
        return f"{expr}.__class__ is {cls.__name__}"

    def kind(self, expr, fn=None):
        """The class the value of a generated expression surely has (a constant's, or known in fn), or None."""
        if expr in self.values:
            return self.values[expr].__class__
        if fn is not None:
            return fn.known.get(expr)
        return None

    def name(self, prefix):
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def const(self, v):
        """A Python expression for the value v: repr for ints, bools and None, else a table entry."""
        if v is None or v is True or v is False:
            self.values[repr(v)] = v
            return repr(v)
        if v.__class__ is int:
            self.values[f"({v!r})"] = v
            return f"({v!r})"
        try:
            # (1, 2) == (True, 2): lists and sets are told apart by skey, which orders kinds apart
            key = (str, v) if v.__class__ is str else (
                ("skey", skey(v)) if v.__class__ in (tuple, frozenset) else ("id", id(v)))
            hash(key)
        except TypeError:
            key = ("id", id(v))
        got = self._kid.get(key)
        if got is not None:
            return got
        i = len(self.K)
        self.K.append(v)
        name = f"k_{i}"
        self.ns[name] = v
        self.values[name] = v
        self._kid[key] = name
        return name

    def add(self, name, source, stub=True):
        """Queue the source of a top-level function; returns its stub (the final function object)."""
        self.pending.append((name, source))
        if not stub:
            return None
        f = types.FunctionType(_STUB, self.ns, name)
        self.stubs.append((name, f))
        self.ns[name] = f
        return f

    def finish(self):
        """Compile the queued functions as one batch and give every stub its code."""
        if not self.pending:
            return
        src = "\n".join(s for _, s in self.pending)
        filename = f"<rulelang generated {len(self.sources) + 1}: {self.label}>"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                code = compile(src, filename, "exec")
        except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError) as e:
            self.pending = []
            self.stubs = []
            raise GenerationFailed(str(e)) from None
        stubs = self.stubs
        self.pending = []
        self.stubs = []
        fresh = {}
        ns = self.ns
        for name, f in stubs:  # the new definitions must not replace the stubs others hold
            fresh[name] = f
        exec(code, ns)  # noqa: S102 - our own generated source: rule text only reaches it as constants
        for name, f in fresh.items():
            real = ns[name]
            f.__code__ = real.__code__
            f.__defaults__ = real.__defaults__
            ns[name] = f
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        self.sources.append(src)

    @property
    def source(self):
        return "\n".join(self.sources + [s for _, s in self.pending])


# ============================================================================ one generated function
# UNCHECKED charges. Work is only ever added, so whether a run passes the budget depends on its total, not
# on when the total is compared with it. The 1 per round of an `any`/`all` loop is therefore counted
# without a look at the budget: the loop charged its list's length, and looked, before it started, and
# looks again when it ends (a call or built-in inside it looks as it charges, with these rounds counted).
# The rounds between two looks are at most the list's length, so the budget and the time limit still stop
# every run, in the same expression and with the same message, at the loop's end rather than at the round
# that passed the budget. The same for the 1 per cell of a `line_length` walk, which looks when the walk
# ends: a walk follows the rays of one node, at most 8 rays as long as the board (whose size is limited).
class Fn:
    """The body of one generated function being written: lines, indentation, temporaries, and which rule
    locals are Python locals here (`env`: rule name -> generated identifier)."""

    def __init__(self, mod, has_L, env=None):
        self.mod = mod
        self.lines = []
        self.cache = {}  # what a generated name already holds here: key -> (name, depth where it was set)
        self._depth = 1
        self.n = 0
        self.has_L = has_L
        self.env = dict(env or {})
        self.inlined = 0  # rule function bodies being written inline here
        self.known = {}  # a generated name -> the class its value surely has (from how it was made)
        self.small = set()  # generated names holding a whole number far inside the range (a count, a length)
        self.items_kind = {}  # a generated name holding a list -> the class every item of it has
        self.hoisted = {}  # id(AST) -> the name holding its value computed before the loop (or UNSET)
        self.sure = set()  # hoisted names that never hold UNSET (their value was at hand before the loop)
        self.in_guards = {}  # a hoisted collection searched by `in` -> its class tests made before the loop
        self.memo = {}  # id(AST) -> (name of its value or UNSET, name of its work): computed at its first use
        self.speculating = False  # writing a hoisted part: a path that would charge work raises Unhoisted
        self.guards = {}  # a name indexed in a loop -> (tuple or dict, the local holding its class test)
        self.local_kinds = {}  # a rule local (in L) -> the class its value surely has (an action's parameter)
        self.stable = frozenset()  # cache keys no statement changes (an action's parameters, `me`): kept
        self.me_known = False  # `me` is surely in L (an action's code)
        self.present = frozenset()  # rule locals surely in L all along, unchanged (an action's parameters)
        self._in_region = False  # inside a loop counting its work in a local (see work_region)
        self.tuple_alias = {}  # (generated names,) -> a name holding the list of those values (see g_TupleLit)
        self.count_memo = {}  # id(a hoisted list's AST) -> the name of its counts per field value (count_sum_loop)

    # The cache of values already computed (a variable read, an index, a field of a row): a name set at
    # some indentation holds its value for every line written after it at that indentation or deeper,
    # until the block ends (going back out forgets what was set inside: the other branch of an `if`,
    # the lines after a loop, must not use a name that may not be set there). Statements clear it all
    # (they write variables and locals): only the reads of one statement's expressions are shared.
    @property
    def depth(self):
        return self._depth

    @depth.setter
    def depth(self, d):
        if d < self._depth and self.cache:
            self.cache = {key: v for key, v in self.cache.items() if v[1] <= d}
        self._depth = d

    def cached(self, key):
        got = self.cache.get(key)
        return got[0] if got is not None else None

    def remember(self, key, name):
        self.cache[key] = (name, self._depth)

    def emit(self, line):
        self.lines.append("    " * self._depth + line)

    def reusable(self, name):
        """A temporary that nothing will read again but its one user (not remembered, not bound)."""
        if not (name[:1] == "t" and name[1:].isdigit()):
            return False
        if name in self.env.values():
            return False
        for key, (held, _) in self.cache.items():
            if held == name or name in key:
                return False
        return True

    def tmp(self, prefix="t"):
        self.n += 1
        return f"{prefix}{self.n}"

    def bind(self, rule_name, prefix="v"):
        """A Python local for a rule name bound here (comprehension variable, lambda parameter, Bind)."""
        py = self.tmp(prefix)
        self.env[rule_name] = py
        return py

    def charge(self, amount, check=True):
        """Inline `charge(G, amount)` (G is always a game in generated code). `check=False`: the charge
        only, where the budget is surely looked at again after a bounded amount of work (UNCHECKED)."""
        self.emit(f"G.work += {amount}")
        if check:
            self.emit("if G.work > G.work_mark: over(G)")

    # A loop that charges work as it goes (1 per test of an any/all, per cell of a line) may count in a
    # Python local instead of G.work, written back after the loop, and before every look at the budget
    # (over(G) sees the same total). A statement that hands G to a call (a rule function, a built-in that
    # charges) is given the count first and hands it back after (with the budget's next mark): the work
    # counted is the same, in the same order. Not where something else reads the work or could charge it
    # (G given in an if's test, a function defined inside): then the same budget stops it at the same
    # test. An error raised inside the loop leaves its count unwritten; an error ends the run.
    def work_region(self):
        """Mark the start of such a loop; None inside another one (the outer one takes it)."""
        if self._in_region:
            return None
        self._in_region = True
        return (len(self.lines), self._depth)

    def end_work_region(self, mark):
        if mark is None:
            return
        self._in_region = False
        start, depth = mark
        if self._depth != depth:
            return
        region = self.lines[start:]
        out = []
        for line in region:
            body = line.lstrip()
            if body.startswith("G.work += "):
                line = line[:len(line) - len(body)] + "\0W += " + body[len("G.work += "):]
            elif body == "if G.work > G.work_mark: over(G)":
                line = line[:len(line) - len(body)] + "if \0W > \0M: G.work = \0W; over(G); \0M = G.work_mark"
            elif body.startswith(("def ", "lambda")) or " lambda " in body:
                return  # something else reads or charges the work here: left as written
            elif not _G_READS_ONLY(body):
                synced = _synced(body)
                if synced is None:
                    return
                line = line[:len(line) - len(body)] + synced
            out.append(line)
        if not any(line.lstrip().startswith("\0W += ") for line in out):
            return
        w, m = self.tmp("w"), self.tmp("m")
        pad = "    " * depth
        self.lines[start:] = [pad + f"{w} = G.work", pad + f"{m} = G.work_mark"] + [
            line.replace("\0W", w).replace("\0M", m) for line in out]
        self.emit(f"G.work = {w}")


# ============================================================================ expressions
class ExprGenerator:
    """Compiles expressions to generated functions; the same interface as closures.ExprCompiler (which it
    uses for the values computed when the rules load: constant folding stays as it is)."""

    backend = "generated"

    def __init__(self, rs, closure_compiler, label="rules"):
        self.rs = rs
        self.cl = closure_compiler  # folds constants, computes fixed data, is the reference
        self.mod = Module(label)
        self.functions = {}  # rule function name -> (generated identifier, params)
        self.auto_finish = False
        self._fields = {}  # field name -> its by-row cache (a dict in the constants table)
        self._field_kinds = None  # field name -> the one class of its values in every row (int, str, bool)
        self._leaf = {}  # id(function body) -> whether it calls no rule function
        self._inline = {}  # rule function -> whether calls of it are written inline
        self._lazy = []  # (AST, name, function) of every expression compiled, generated at its first call
        self.mod.ns["materialize"] = self.materialize

    # ---- the ExprCompiler interface
    @property
    def fixed_items(self):
        return self.cl.fixed_items

    def charge(self, n, span, what="values computed when the rules load"):
        self.cl.charge(n, span, what)

    def is_constant(self, e):
        return self.cl.is_constant(e)

    def const_is_fixed(self, name):
        return self.cl.const_is_fixed(name)

    def const_value(self, name):
        if self.cl.const_is_fixed(name):
            return self.cl.const_value(name)
        return self.compile(self.rs.program.decls[name].value)

    def closure(self, e):
        """A closure for a value needed now (tables, boards: fixed data computed when the rules load)."""
        return self.cl.compile(e)

    def finish(self):
        self.mod.finish()

    @property
    def source(self):
        """The whole generated source (expressions not yet called are generated now)."""
        waiting = [x for x in self._lazy if x[2].__code__ is _LAZY]
        if waiting:
            self._materialize(waiting)
        return self.mod.source

    def compile(self, e):
        """A function f(G, L) computing e."""
        if self.cl.is_constant(e):
            v = e.value if isinstance(e, A.Literal) else self.cl.compile(e)(None, {})
            return lambda G, L: v
        # generated at its first call: an expression the fused ops and legality functions write inline is
        # never called through here, and costs nothing
        name = self.mod.name("e")
        f = types.FunctionType(_LAZY, self.mod.ns, name, (len(self._lazy),))
        self._lazy.append((e, name, f))
        return f

    def materialize(self, key):
        """Generate and compile the function of a lazy expression (called by its first call)."""
        entry = self._lazy[key]
        if entry[2].__code__ is _LAZY:
            self._materialize([entry])
        return entry[2]

    def _materialize(self, entries):
        charge = self.cl.charge
        self.cl.charge = lambda *args, **kws: None  # fixed values were counted when the rules loaded
        try:
            for e, name, f in entries:
                fn = Fn(self.mod, True)
                r = self.expr(e, fn)
                fn.emit(f"return {r}")
                self.mod.pending.append((name, self._def(name, "G, L", fn, e.span)))
                self.mod.stubs.append((name, f))
            self.mod.finish()
        except (GenerationFailed, RecursionError):
            self.mod.pending = []
            self.mod.stubs = []
            for e, name, f in entries:  # Python's own limits: the closures compute these
                if f.__code__ is _LAZY:
                    f.__code__ = _FALLBACK
                    f.__defaults__ = (self.cl.compile(e),)
        finally:
            self.cl.charge = charge

    def declare_function(self, name, params):
        """Name the generated function of a rule function before any body is generated (calls may come
        first, or recursively)."""
        ident = self.mod.name("fn")
        self.functions[name] = (ident, list(params))
        return ident

    def define_function(self, name, body, span):
        """Generate `def fn_N(G, v_1, ...)`: the +1 work charge of a call (and, for a function that can call
        itself, the depth check), then the body."""
        ident, params = self.functions[name]
        fn = Fn(self.mod, False)
        pys = [fn.bind(p, "p") for p in params]
        counted = name in self.recursive()  # only calls that can nest without end count (closures.x_Call)
        if counted:
            fn.emit("if G.fdepth > MAX_FUNCTION_DEPTH:")
            fn.emit(f"    raise depth_error({self.mod.const(name)}, MAX_FUNCTION_DEPTH)")
        fn.charge(1)
        counted = counted and not self.calls_none(body)
        if counted:
            fn.emit("G.fdepth += 1")
        r = self.expr(body, fn)
        if counted:
            fn.emit("G.fdepth -= 1")
        fn.emit(f"return {r}")
        return self.mod.add(ident, self._def(ident, ", ".join(["G"] + pys), fn, span))

    def legal_function(self, act, requires, span):
        """`legal_N(G, who)`: the legal candidates of an action whose parameter domains are all known when
        loading and which has no costs; the parameters and `me` are Python locals, the requires inlined.
        Same candidates, order, work charge and errors as CompiledAction.legal. Returns the function and
        whether it hands out one list per set of legal candidates (CompiledAction.same_pairs)."""
        name = self.mod.name("legal")
        fn = Fn(self.mod, False, {"me": "who"})
        fn.known["who"] = int  # the seat an offer is made to (OfferOp checks it is one)
        pys = [fn.bind(p, "p") for p in act.param_names]
        for i, p in enumerate(pys):  # a parameter whose every candidate is a number
            if act.fixed_options and all(vals[i].__class__ is int for _, vals, _ in act.fixed_options):
                fn.known[p] = int
        k = self.mod.const
        # Up to MAX_MASKED candidates, the legal ones are noted as bits of a number, and the listing is a
        # list made once per set of legal candidates and handed out again (never changed: pending options
        # are only read), so Game._list_actions knows an offer seen before by the identity of its list.
        masked = 0 < len(pys) and len(act.fixed_options) <= MAX_MASKED
        fn.emit("mask = 0" if masked else "out = []")
        if pys:
            fn.emit(f"G.work += {len(act.fixed_options)}")
            fn.emit("if G.work > G.work_mark: over(G)")
        fn.emit("try:")
        fn.depth += 1
        if pys:
            self.preload(fn, *requires)  # read once for all the candidates
            self.hoist(fn, act.param_names, *requires, rounds=len(act.fixed_options))
            mark = fn.work_region()  # the loops of the requires, in all the candidates
            if masked:
                rows = tuple((vals, 1 << i) for i, (aid, vals, opt) in enumerate(act.fixed_options))
                fn.emit(f"for vals, bit in {k(rows)}:")
            else:
                rows = tuple((vals, (aid, opt)) for aid, vals, opt in act.fixed_options)
                fn.emit(f"for vals, pair in {k(rows)}:")
            fn.depth += 1
            fn.emit(f"{', '.join(pys)}, = vals")
            unpack = len(fn.lines) - 1
            fn.tuple_alias[tuple(pys)] = "vals"  # `(r, c)` of the parameters is the candidate's own list
            fn.known["vals"] = tuple
        for test in requires:
            for part in self.conjuncts(test, fn):
                t = self.test(part, fn)
                fn.emit(f"if not {t}: {'continue' if pys else 'return out'}")
        if pys and not any(re.search(rf"\b{p}\b", line) for line in fn.lines[unpack + 1:] for p in pys):
            del fn.lines[unpack]  # the tests read the candidate only as `vals` (or not at all)
        if not pys:
            fn.emit(f"out.append({k((act.name, (act.name, ())))})")
        else:
            fn.emit("mask |= bit" if masked else "out.append(pair)")
            fn.depth -= 1
            fn.end_work_region(mark)
        fn.depth -= 1
        fn.emit("except (RuleRuntimeError, KeyError) as err:")
        fn.emit(f"    raise Located({k('while checking action ' + chr(39) + act.name + chr(39) + ': ')} + str(err), "
                f"{k(act.span)}) from None")
        if masked:
            pairs = tuple((aid, opt) for aid, vals, opt in act.fixed_options)
            lists = {}  # mask -> its list (one table per action: see listed())
            fn.emit(f"out = {k(lists)}.get(mask)")
            fn.emit(f"if out is None: out = listed({k(pairs)}, mask, {k(lists)})")
        fn.emit("return out")
        f = self.mod.add(name, self._def(name, "G, who", fn, span))
        if self.auto_finish:
            self.finish()
        return f, masked

    def legal_general(self, act, specs, requires, costs, span, order=None):
        """`legal_N(G, who)` for any action: one loop per parameter over its domain (computed as the closures
        do: distinct items, charged as work, errors named as "while listing the choices"), the requires and
        costs inlined (errors named "while checking"). specs: per parameter ("fixed", values), ("expr", AST),
        ("players", None) (a seat) or ("fn", a function of (G, L) that ignores L). costs: (target AST, amount
        AST). order: "require" or "cost" per test, the order they are tested in (None: the requires, then the
        costs)."""
        from .runtime import MAX_ACTION_ID
        name = self.mod.name("legal")
        fn = Fn(self.mod, False, {"me": "who"})
        fn.known["who"] = int  # the seat an offer is made to (OfferOp checks it is one)
        k = self.mod.const
        listing = k(f"while listing the choices of action '{act.name}': ")
        checking = k(f"while checking action '{act.name}': ")
        errs = "(RuleRuntimeError, KeyError)"
        fn.emit("out = []")
        tests = list(requires) + [x for pair in costs for x in pair]
        if specs:  # what the candidates' tests read, before the loops
            self.preload(fn, *[what for kind, what in specs[1:] if kind == "expr"], *tests)
        pys = []
        for i, (kind, what) in enumerate(specs):
            d = fn.tmp("items")
            fn.emit("try:")
            fn.depth += 1
            if kind == "fixed":
                fn.emit(f"{d} = {k(tuple(what))}")
            elif kind == "players":  # the seats still playing, in order (never twice)
                fn.emit(f"{d} = G.active_players()")
            elif kind == "fn":
                fn.emit(f"{d} = distinct_items({k(what)}(G, {{}}))")
            else:
                v = self.expr(what, fn)
                fn.emit(f"{d} = distinct_items({v})")
            fn.emit(f"G.work += len({d})")
            fn.emit("if G.work > G.work_mark: over(G)")
            fn.depth -= 1
            fn.emit(f"except {errs} as err:")
            fn.emit(f"    raise Located({listing} + str(err), {k(act.span)}) from None")
            # what the tests compute alike for every value of this parameter and the next ones
            self.hoist(fn, act.param_names[i:], *[w for kind, w in specs[i + 1:] if kind == "expr"], *tests,
                       searches=True)
            if pys:
                self._skip_failed_start(fn, requires, order)
            p = fn.bind(act.param_names[i], "p")
            pys.append(p)
            if kind == "players" or kind == "fixed" and what and all(v.__class__ is int for v in what):
                fn.known[p] = int
            fn.emit(f"for {p} in {d}:")
            fn.depth += 1
        fn.emit("try:")
        fn.depth += 1
        fn.emit("pass")
        skip = "continue" if pys else "return out"
        held = iter(requires)
        pays = iter(costs)
        for kind in order or ("require",) * len(requires) + ("cost",) * len(costs):
            if kind == "require":
                for part in self.conjuncts(next(held), fn):
                    t = self.test(part, fn)
                    fn.emit(f"if not {t}: {skip}")
            else:
                target, amount = next(pays)
                have = self.expr(target, fn)
                need = self.expr(amount, fn)
                fn.emit(f"if ({have} or 0) < {need}: {skip}")
        fn.depth -= 1
        fn.emit(f"except {errs} as err:")
        fn.emit(f"    raise Located({checking} + str(err), {k(act.span)}) from None")
        if pys:
            # a candidate's (id, value) pair, kept per values when they are all texts and whole numbers
            # (equal such values are written alike; a bool, equal to 1 or 0, is never kept)
            ids = {}
            key, pair, aid = fn.tmp("w"), fn.tmp("w"), fn.tmp("w")
            ints = [(p, self.mod.class_test(p, int, fn)) for p in pys]
            plain = " and ".join(f"({p}.__class__ is str or {i})" for p, i in ints if i != "True") or "True"
            fn.emit(f"{key} = ({''.join(p + ', ' for p in pys)})")
            fn.emit(f"{pair} = {k(ids)}.get({key}) if {plain} else None")
            fn.emit(f"if {pair} is None:")
            fn.depth += 1
            shown = ", ".join("fmt(" + p + ")" for p in pys)
            fn.emit(f"{aid} = {k(act.name + '(')} + {k(',')}.join([{shown}]) + {k(')')}")
            fn.emit(f"if len({aid}) > {MAX_ACTION_ID}: "
                    f"raise Located(long_id({k(act.name)}, len({aid})), {k(act.span)})")
            fn.emit(f"{pair} = ({aid}, ({k(act.name)}, {key}))")
            fn.emit(f"if {plain} and len({k(ids)}) < {MAX_KEPT_IDS}: {k(ids)}[{key}] = {pair}")
            fn.depth -= 1
            fn.emit(f"out.append({pair})")
        else:
            fn.emit(f"out.append(({k(act.name)}, ({k(act.name)}, ())))")
        fn.depth -= len(pys)
        fn.emit("return out")
        f = self.mod.add(name, self._def(name, "G, who", fn, span))
        if self.auto_finish:
            self.finish()
        return f

    def _skip_failed_start(self, fn, requires, order):
        """Before the loop of a listing's next parameter (inside the loops of the ones before): the first
        parts of the first test, as long as they were computed before that loop (they read none of its
        parameters), each tested there; one that does not hold goes on to the next outer candidate. Every
        inner candidate would have failed on that part first (its tests run in order, the inner ones
        after it), so the same candidates are listed, with the same work (charged for the inner domain
        before) and no error skipped (a part that could not be computed is UNSET: the loop then runs)."""
        if not requires or (order and order[0] != "require"):
            return
        for part in self.conjuncts(requires[0], fn):
            h = fn.hoisted.get(id(part))
            if h is None:
                return
            if h in fn.sure:
                fn.emit(f"if not {h}: continue")
            else:
                fn.emit(f"if {h} is not UNSET and not {h}: continue")

    @staticmethod
    def _def(name, params, fn, span):
        where = f"  # line {int(span.line)}" if span is not None else ""
        return f"def {name}({params}):{where}\n" + "\n".join(reuse_names(fn.lines, params.split(", "))) + "\n"

    # ---- expressions: each returns a Python expression (a name or a constant) holding the value
    def expr(self, e, fn):
        if fn.hoisted:
            h = fn.hoisted.get(id(e))
            if h is not None:
                return self.use_hoisted(e, h, fn)
        if fn.memo:
            got = fn.memo.get(id(e))
            if got is not None:
                return self.use_remembered(e, got[0], got[1], fn)
        if self.cl.is_constant(e):
            if isinstance(e, A.Literal):
                return self.mod.const(e.value)
            return self.mod.const(self.cl.compile(e)(None, {}))
        return getattr(self, "g_" + type(e).__name__)(e, fn)

    def test(self, e, fn):
        """e as the test of an `if`: a Python condition with its truth (`x is None` written in the test
        itself, not kept in a name first), else the name holding e. A comparison whose last line is a
        plain `t = a OP b` is written in the test itself too (Python then compares and jumps in one
        step, and quickly for two whole numbers or texts)."""
        if (e.__class__ is A.Binary and e.op in ("==", "!=") and e.right.__class__ is A.Literal
                and e.right.value is None and not (fn.hoisted and id(e) in fn.hoisted) and not self.cl.is_constant(e)):
            a = self.expr(e.left, fn)
            return f"({a} {'is' if e.op == '==' else 'is not'} None)"
        n = len(fn.lines)
        r = self.expr(e, fn)
        if len(fn.lines) > n and r[:1] == "t" and r[1:].isdigit():
            head = "    " * fn.depth + r + " = "
            last = fn.lines[-1]
            if last.startswith(head) and _PLAIN_COMPARISON.fullmatch(last, len(head)):
                fn.lines.pop()  # (the name was made by that line for this test alone)
                return f"({last[len(head):]})"
        return r

    def g_Placeholder(self, e, fn):
        return self.expr(e.inner, fn)

    def g_Literal(self, e, fn):
        return self.mod.const(e.value)

    def local(self, n, fn):
        py = fn.env.get(n)
        if py is not None:
            return py
        if fn.has_L:
            got = fn.cached(("local", n))
            if got is not None:
                return got
        t = fn.tmp()
        if fn.has_L:
            fn.emit(f"{t} = L[{self.mod.const(n)}]")
            fn.remember(("local", n), t)
            kind = fn.local_kinds.get(n)
            if kind is not None:
                fn.known[t] = kind
        else:  # a rule function sees only its parameters (as the closures' dict of them)
            fn.emit(f"raise KeyError({self.mod.const(n)})")
        return t

    def read_var(self, n, fn):
        """The value of variable n: a name already holding it here, else a read (remembered). Reading a
        variable cannot fail (start values cannot read variables, so every one exists when rules run),
        and within one statement's expressions no variable changes."""
        got = fn.cached(("var", n))
        if got is not None:
            return got
        t = fn.tmp()
        fn.emit(f"{t} = G.data[{self.mod.const(n)}]")
        fn.remember(("var", n), t)
        return t

    def preload(self, fn, *trees):
        """Read, before a loop, every variable its body reads (once, instead of once per round), and every
        local that is surely there (an action's parameter no statement writes)."""
        for tree in trees:
            if tree is None:
                continue
            for x in A.walk(tree):
                if x.__class__ is A.Name:
                    if x.ref == "var" and not self.cl.is_constant(x):
                        self.read_var(x.ident, fn)
                    elif x.ref == "local" and fn.has_L and x.ident in fn.present and x.ident not in fn.env:
                        # (not in a function's body written inline: its names are its own, not the action's)
                        self.local(x.ident, fn)

    # ---- loop-invariant parts, computed once before their loop
    # A part of a loop's body (a comprehension's element or condition, the test of an any/all loop, the
    # requires of an action's candidates) that reads none of the names bound in the loop, and whose code
    # charges no work (names, constants, indexes, fields of rows, numbers added, compared, multiplied,
    # count(xs)), is computed once before the loop, inside a try. If that fails, or meets a case that
    # would charge work (`+` of two lists, `==` of two lists), the part holds UNSET and the loop computes
    # it in place as before: errors and charges stay where they were. Else the loop reads the value.
    def hoist(self, fn, names, *trees, rounds=0, searches=False):
        """Compute before a loop the invariant parts of its body; returns what to forget after the loop.
        rounds: how many times the loop surely runs, when known (a constant list): with 3 or more, the
        class tests of the variables it indexes are made before it too, and those of the collections
        it searches with `in` (searches: those tests are made whatever the rounds)."""
        bound = set(names)
        for tree in trees:
            if tree is not None:
                for x in A.walk(tree):
                    c = x.__class__
                    if c is A.Comprehension:
                        bound.update(x.names)
                    elif c is A.Lambda:
                        bound.add(x.param)
                    elif c is A.Bind:
                        bound.add(x.name)
        found = []
        for tree in trees:
            if tree is not None:
                self._find_invariant(tree, bound, fn, found)
        guarded = self._guard_targets(fn, bound, trees) if rounds >= 3 else []
        guarded += self._remember_invariants(fn, bound, trees, found)
        if not found:
            return guarded
        # one try for all (they share their reads; after one fails, the others are left to the loop too)
        hs = [fn.tmp("h") for _ in found]
        fn.emit(" = ".join(hs) + " = UNSET")
        fn.emit("try:")
        fn.depth += 1
        saved = fn.speculating
        fn.speculating = True
        start = len(fn.lines)
        for x, h in zip(found, hs):
            r = self.expr(x, fn)
            if len(fn.lines) == start + len(fn.sure & set(hs)):
                # nothing computed: the value was at hand (a name or a value already read), so the copy made
                # here cannot fail and the loop reads it without a test
                fn.sure.add(h)
                for facts in (fn.known, fn.items_kind):
                    if r in facts:
                        facts[h] = facts[r]
                if r in fn.small:
                    fn.small.add(h)
            fn.emit(f"{h} = {r}")
        fn.speculating = saved
        fn.depth -= 1
        fn.emit("except Exception:")
        fn.emit("    pass")
        for x, h in zip(found, hs):
            fn.hoisted[id(x)] = h
        memos = self._field_count_memos(fn, trees, found)
        if rounds >= 3 or searches:
            self._guard_searches(fn, trees, found, hs)
        return guarded + memos + [id(x) for x in found]

    def _field_count_memos(self, fn, trees, found):
        """A `count([x for x in xs if x.field == e])` in the loop whose xs was just hoisted: the counts of xs
        per value of the field are made once, at the first round that needs them (see count_sum_loop);
        their name is set to None here, before the loop."""
        hoisted = {id(x) for x in found}
        out = []
        for tree in trees:
            if tree is None:
                continue
            for e in A.walk(tree):
                if (e.__class__ is A.Call and e.func.ident == "count" and e.func.ref != "func" and len(e.args) == 1
                        and e.args[0].name is None and e.args[0].value.__class__ is A.Comprehension):
                    c = e.args[0].value
                    by_field = self._counted_field(c) if id(c.source) in hoisted else None
                    key = (id(c.source), by_field[0]) if by_field is not None else None
                    if (key is not None and key not in fn.count_memo and c.kind == "list"
                            and isinstance(c.element, A.Name) and c.element.ident == c.names[0]):
                        name = fn.tmp("w")
                        fn.emit(f"{name} = None")
                        fn.count_memo[key] = name  # (per list and field: one list may be counted by two fields)
                        out.append(("count_memo", key))
        return out

    def _guard_searches(self, fn, trees, found, hs):
        """`x in C` in a loop, C hoisted and of a class not known: the class tests that choose how C is
        searched (a short list, a set or map) are made once, before the loop, on the hoisted value (UNSET
        passes neither: the loop then tests as before)."""
        searched = {id(x.right) for tree in trees if tree is not None for x in A.walk(tree)
                    if x.__class__ is A.Binary and x.op in ("in", "not in")}
        for x, h in zip(found, hs):
            if id(x) in searched and self.mod.kind(h, fn) is None:
                short, hashed = fn.tmp("g"), fn.tmp("g")
                fn.emit(f"{short} = {h}.__class__ is tuple and len({h}) < 9")
                fn.emit(f"{hashed} = {h}.__class__ is frozenset or {h}.__class__ is dict")
                fn.in_guards[h] = (short, hashed)

    def _guard_targets(self, fn, bound, trees):
        """The class test of a variable or a parameter indexed in the loop, made once before it (only
        the test: the index is made in the loop as before)."""
        made = []
        for tree in trees:
            if tree is None:
                continue
            for x in A.walk(tree):
                if x.__class__ is not A.Index or x.target.__class__ is not A.Name:
                    continue
                target = x.target
                if target.ident in bound or self.cl.is_constant(target):
                    continue
                if target.ref == "var":
                    c = self.read_var(target.ident, fn)
                elif target.ref == "local" and target.ident in fn.env:
                    c = fn.env[target.ident]
                else:
                    continue
                if c in fn.guards or self.mod.kind(c, fn) is not None:
                    continue
                cls = tuple if self._likely_list(target) else dict
                g = fn.tmp("g")
                fn.emit(f"{g} = {c}.__class__ is {cls.__name__}")
                fn.guards[c] = (cls, g)
                made.append(("guard", c))
        return made

    def _rounds(self, source):
        """The number of items of a constant list, set or map (0 for any other value)."""
        v = self.mod.values.get(source) if source in self.mod.values else None
        return len(v) if v.__class__ in (tuple, frozenset, dict) else 0

    @staticmethod
    def unhoist(fn, ids):
        for i in ids:
            if i.__class__ is tuple:
                if i[0] == "memo":
                    fn.memo.pop(i[1], None)
                elif i[0] == "count_memo":
                    fn.count_memo.pop(i[1], None)
                else:
                    fn.guards.pop(i[1], None)
            else:
                fn.hoisted.pop(i, None)

    # A part of a loop's body that reads none of the loop's names but charges work (a call of a rule
    # function, a built-in over a list, a comprehension) cannot be computed before the loop: the loop may
    # be empty, or stop before it. It is computed where the loop first needs it, as before, noting the work
    # it charged; later rounds take the same value and charge the same work (the same total, so the budget
    # stops the rules as before, with the same error). The rules' state does not change while a loop of an
    # expression or of a listing runs, and no expression changes anything, so the value is the same.
    def _remember_invariants(self, fn, bound, trees, pure):
        if fn.speculating:
            return []
        skip = {id(x) for x in pure}
        found = []
        for tree in trees:
            if tree is not None:
                self._find_remembered(tree, bound, fn, found, skip)
        made = []
        for x in found:
            h, w = fn.tmp("r"), fn.tmp("rw")
            fn.emit(f"{h} = UNSET")
            fn.memo[id(x)] = (h, w)
            made.append(("memo", id(x)))
        return made

    def _find_remembered(self, e, bound, fn, found, skip):
        if id(e) in skip or id(e) in fn.hoisted or id(e) in fn.memo or self.cl.is_constant(e):
            return
        c = e.__class__
        if c is A.Lambda:
            return
        if c is A.Call and _loop_call(e):
            self._find_remembered(e.args[0].value, bound, fn, found, skip)
            self._find_remembered(e.args[1].value.body, bound, fn, found, skip)
            return
        if (c is A.Call or c is A.Comprehension) and self._worth_remembering(e) and not (X.free_locals(e) & bound):
            found.append(e)
            return
        for child in _children(e):
            self._find_remembered(child, bound, fn, found, skip)

    def _worth_remembering(self, e):
        """A comprehension, a call of a built-in whose work grows with its input, or a call of a rule
        function whose body does more than a few steps."""
        if e.__class__ is A.Comprehension:
            return True
        if e.func.ref == "func":
            d = self.rs.program.decls.get(e.func.ident)
            return d is not None and _size_of(d.body) >= 6
        return e.func.ident not in FLAT_COST and X.size(e, 4) >= 3

    def use_remembered(self, e, h, w, fn):
        """A part remembered in its loop (see _remember_invariants): computed at its first use, with its work
        noted; then its value, and its work charged again."""
        t = fn.tmp()
        start = fn.tmp("w")
        fn.emit(f"{t} = {h}")
        fn.emit(f"if {t} is UNSET:")
        fn.depth += 1
        fn.emit(f"{start} = G.work")
        del fn.memo[id(e)]
        try:
            r = self.expr(e, fn)
        finally:
            fn.memo[id(e)] = (h, w)
        fn.emit(f"{t} = {h} = {r}")
        fn.emit(f"{w} = G.work - {start}")
        fn.depth -= 1
        fn.emit("else:")
        fn.emit(f"    G.work += {w}")
        fn.emit("    if G.work > G.work_mark: over(G)")
        if r in fn.known:
            fn.known[t] = fn.known[r]
        return t

    def use_hoisted(self, e, h, fn):
        """A hoisted part in its loop: the value computed before the loop, or (UNSET) computed here."""
        if h in fn.sure:
            return h
        t = fn.tmp()
        start = len(fn.lines)
        fn.emit(f"{t} = {h}")
        fn.emit(f"if {t} is UNSET:")
        fn.depth += 1
        del fn.hoisted[id(e)]
        try:
            r = self.expr(e, fn)
        finally:
            fn.hoisted[id(e)] = h
        fn.emit(f"{t} = {r}")
        fn.depth -= 1
        if not any(_G_USE.search(line) for line in fn.lines[start + 2:]):
            # computing it here charges no work and changes nothing: the value is kept in h itself, so
            # the next rounds (and the next reads in this one) take it without computing it again
            fn.lines[start:start + 2] = [fn.lines[start + 1].replace(f"if {t} is UNSET:", f"if {h} is UNSET:")]
            fn.lines[-1] = fn.lines[-1].replace(f"{t} = {r}", f"{h} = {r}", 1)
            t = h
        elif h in fn.in_guards:  # (read once, by the search this value is for)
            fn.in_guards[t] = fn.in_guards[h]
        # (made by the same code either way: what is known of r's value is known of t's)
        if r in fn.known:
            fn.known[t] = fn.known[r]
        if r in fn.items_kind:
            fn.items_kind[t] = fn.items_kind[r]
        return t

    def _find_invariant(self, e, bound, fn, found):
        """The largest parts of e worth hoisting (a function value's body is not searched: it runs as its
        own Python function, except the test of an any/all written as a loop)."""
        if id(e) in fn.hoisted or self.cl.is_constant(e):
            return
        c = e.__class__
        if c is A.Lambda:
            return
        if self._pure(e, bound):
            if self._worth(e):
                found.append(e)
            return
        if c is A.Call and _loop_call(e):
            self._find_invariant(e.args[0].value, bound, fn, found)
            self._find_invariant(e.args[1].value.body, bound, fn, found)
            return
        for child in _children(e):
            self._find_invariant(child, bound, fn, found)

    def _pure(self, e, bound):
        """e reads none of `bound`, and its generated code charges no work and changes nothing."""
        if self.cl.is_constant(e):
            return True
        c = e.__class__
        if c is A.Name:
            return e.ident not in bound and (e.ref in _PURE_REFS or e.ref == "builtin" and e.ident in _PURE_BUILTINS)
        if c is A.Placeholder:
            return self._pure(e.inner, bound)
        if c is A.Unary:
            return self._pure(e.operand, bound)
        if c is A.Binary:
            return e.op not in ("in", "not in", "..") and self._pure(e.left, bound) and self._pure(e.right, bound)
        if c is A.Cond:
            return self._pure(e.test, bound) and self._pure(e.then, bound) and self._pure(e.orelse, bound)
        if c is A.Index:
            return self._pure(e.target, bound) and self._pure(e.index, bound)
        if c is A.Field:
            return not (e.target.ty is not None and e.target.ty.kind == "piece") and self._pure(e.target, bound)
        if c is A.Call:  # count(xs): a length
            return (e.func.ref != "func" and e.func.ident == "count" and len(e.args) == 1 and e.args[0].name is None
                    and self._pure(e.args[0].value, bound))
        return False

    def _worth(self, e):
        """More work than reading a name: not a name, a constant, or a field or `not` of a name."""
        c = e.__class__
        if c is A.Placeholder:
            return self._worth(e.inner)
        if c is A.Name:  # `players` is a call (the seats still playing); other names are read at once
            return e.ref == "builtin" and e.ident == "players"
        if c is A.Literal or self.cl.is_constant(e):
            return False
        if c is A.Field or c is A.Unary:
            return self._worth(e.target if c is A.Field else e.operand)
        if c is A.Binary and e.op in ("and", "or"):
            return self._worth(e.left) or self._worth(e.right)
        return True

    def g_Name(self, e, fn):
        n = e.ident
        ref = e.ref
        k = self.mod.const
        if ref == "local":
            return self.local(n, fn)
        if ref == "var":
            return self.read_var(n, fn)
        t = fn.tmp()
        if ref == "const":
            if self.cl.const_is_fixed(n):
                return k(self.cl.const_value(n)(None, {}))
            fn.emit(f"{t} = G.consts[{k(n)}]")
        elif ref == "member":
            return k(n)
        elif ref == "enum_values":
            return k(tuple(self.rs.program.decls[n].members))
        elif ref == "table":
            return k(self.rs.table_rows[n])
        elif ref == "board":
            return k(self.rs.boards[n])
        elif ref == "builtin" and n == "me":
            if "me" in fn.env:
                return fn.env["me"]
            if not fn.has_L:
                fn.emit("raise no_me()")
            else:
                got = fn.cached(("me",))
                if got is not None:
                    return got
                if fn.me_known:
                    fn.emit(f"{t} = L['me']")
                else:
                    fn.emit(f"if 'me' in L: {t} = L['me']")
                    fn.emit("else: raise no_me()")
                fn.remember(("me",), t)
                fn.known[t] = Scalar  # a seat (offers, calls and saves put nothing else there)
        elif ref == "builtin" and n == "current":
            fn.emit(f"{t} = G.current")
        elif ref == "builtin" and n == "players":
            fn.emit(f"{t} = G.active_players()")
            fn.known[t], fn.items_kind[t] = tuple, int
        elif ref == "builtin" and n == "all_players":
            fn.emit(f"{t} = tuple(range(G.n))")
            fn.known[t], fn.items_kind[t] = tuple, int
        elif ref == "builtin" and n == "player_count":
            fn.emit(f"{t} = G.n")
        elif ref == "builtin" and n == "end_triggered":
            fn.emit(f"{t} = G.end_pending is not None")
        elif ref == "scenario":
            fn.emit(f"{t} = G.scenario_value({k(n)})")
        elif ref == "pieces":
            fn.emit(f"{t} = live(G, {k(n)})")
        else:
            raise RuleRuntimeError(f"cannot compile name '{n}' ({ref or 'unresolved'})")
        return t

    def g_Unary(self, e, fn):
        v = self.expr(e.operand, fn)
        t = fn.tmp()
        if e.op == "not":
            fn.emit(f"{t} = not {v}")
            fn.known[t] = bool
            return t
        fn.emit(f"if {v}.__class__ is not int: raise neg_error({v})")
        fn.emit(f"{t} = -{v}")
        return t

    def g_Binary(self, e, fn):
        op = e.op
        if op in ("and", "or"):
            a = self.expr(e.left, fn)
            if fn.reusable(a):  # the left value's own name holds the result (nothing else reads it)
                t = a
                fn.known.pop(t, None)
                fn.items_kind.pop(t, None)
                fn.small.discard(t)
                fn.in_guards.pop(t, None)
            else:
                t = fn.tmp()
                fn.emit(f"{t} = {a}")
            fn.emit(f"if {'' if op == 'and' else 'not '}{t}:")
            fn.depth += 1
            b = self.expr(e.right, fn)
            fn.emit(f"{t} = {b}")
            fn.depth -= 1
            return t
        if op in ("==", "!=") and self.cl.is_constant(e.right):
            a = self.expr(e.left, fn)
            v = e.right.value if isinstance(e.right, A.Literal) else self.cl.compile(e.right)(None, {})
            kv = self.mod.const(v)
            t = fn.tmp()
            fn.known[t] = bool
            if v is None:  # no value of the rules equals none but none
                fn.emit(f"{t} = {a} {'is' if op == '==' else 'is not'} None")
                return t
            ka = self.mod.kind(a, fn)
            if v.__class__ in CONTAINERS and ka in (None, v.__class__):  # a constant list: at most its size
                charging = "raise Unhoisted" if fn.speculating else f"charge(G, {deep_cost(v)})"
                fn.emit(charging if ka is not None else f"if {a}.__class__ is {self.mod.const(v.__class__)}: {charging}")
            fn.emit(f"{t} = {a} {op} {kv}")
            return t
        if op in ("in", "not in"):  # the collection is computed first
            c = self.expr(e.right, fn)
            x = self.expr(e.left, fn)
            t = fn.tmp()
            neg = "not " if op == "not in" else ""
            # a set or map and a plain value: one look-up by hash, no work to charge (as in contains)
            kc, kx = self.mod.kind(c, fn), self.mod.kind(x, fn)
            if kc is None:
                tests = [f"({c}.__class__ is frozenset or {c}.__class__ is dict)"]
            else:
                tests = [] if kc in (frozenset, dict) else ["False"]
            if kx is None:
                tests.append(f"{x}.__class__ not in CONTAINERS")
            elif kx in CONTAINERS:
                tests.append("False")
            fn.known[t] = bool
            # a list of at most 8 items: searched with no work to charge (as in contains)
            short = f"{c}.__class__ is tuple and len({c}) < 9" if kc in (None, tuple) else None
            guards = (fn.in_guards.get(c) if c in fn.sure else fn.in_guards.pop(c, None)) if kc is None else None
            if guards is not None:  # made before the loop (see _guard_searches)
                short, tests[0] = guards
            if kc is tuple:
                short = f"len({c}) < 9"
                if c in self.mod.values:
                    short = "True" if len(self.mod.values[c]) < 9 else None
            if short == "True":
                fn.emit(f"{t} = {neg}({x} in {c})")
            elif "False" in tests:
                if short:
                    fn.emit(f"if {short}: {t} = {neg}({x} in {c})")
                    fn.emit(f"else: {t} = {neg}contains({c}, {x}, G)")
                else:
                    fn.emit(f"{t} = {neg}contains({c}, {x}, G)")
            elif not tests:
                fn.emit(f"{t} = {neg}({x} in {c})")
            else:
                hashed = f"if {' and '.join(tests)}: {t} = {neg}({x} in {c})"
                if short and self._likely_list(e.right):  # the same tests, the likelier first
                    fn.emit(f"if {short}: {t} = {neg}({x} in {c})")
                    fn.emit("el" + hashed)
                else:
                    fn.emit(hashed)
                    if short:
                        fn.emit(f"elif {short}: {t} = {neg}({x} in {c})")
                fn.emit(f"else: {t} = {neg}contains({c}, {x}, G)")
            return t
        a = self.expr(e.left, fn)
        b = self.expr(e.right, fn)
        t = fn.tmp()
        if op in ("==", "!="):
            fn.known[t] = bool
            ka, kb = self.mod.kind(a, fn), self.mod.kind(b, fn)
            if ka is not None and ka not in CONTAINERS or kb is not None and kb not in CONTAINERS:
                # a number, text, ... on either side: compared by Python alone (equal() charges only two of a kind)
                fn.emit(f"{t} = {a} {op} {b}")
                return t
            slow = "raise Unhoisted" if fn.speculating else f"{t} = {'not ' if op == '!=' else ''}equal(G, {a}, {b})"
            if ka is not None:
                fn.emit(slow)
                return t
            fn.emit(f"if {a}.__class__ in CONTAINERS: {slow}")
            fn.emit(f"else: {t} = {a} {op} {b}")
            return t
        ints = self._both_int(a, b, fn)
        if op in ("<", "<=", ">", ">="):
            fn.known[t] = bool
            if ints == "True":
                fn.emit(f"{t} = {a} {op} {b}")
            elif ints == "False":
                fn.emit(f"{t} = compare({op!r}, {a}, {b})")
            else:
                fn.emit(f"if {ints}: {t} = {a} {op} {b}")
                fn.emit(f"else: {t} = compare({op!r}, {a}, {b})")
            return t
        if op == "..":
            fn.emit(f"{t} = span_of(G, {a}, {b})")
            return t
        slow = "raise Unhoisted" if fn.speculating else f"{t} = arith({op!r}, {a}, {b}, G)"
        if op == "+" and not fn.speculating:  # lists are joined by concat (arith's work, quicker)
            slow = f"{t} = concat(G, {a}, {b})"
        if op in ("+", "-", "*"):
            if ints == "False":
                fn.emit(slow)
                return t
            if op != "*" and self._small(a, fn) and self._small(b, fn):  # (the sum cannot leave the range)
                fn.emit(f"{t} = {a} {op} {b}")
                fn.known[t] = int
                return t
            if ints == "True":  # computed once, then its range tested
                fn.emit(f"{t} = {a} {op} {b}")
                fn.emit(f"if not {-MAX_INT} < {t} < {MAX_INT}: {slow}")
            else:
                fn.emit(f"if {ints} and {-MAX_INT} < ({a} {op} {b}) < {MAX_INT}: {t} = {a} {op} {b}")
                fn.emit(f"else: {slow}")
            if ints == "True" or op == "*":  # arith() multiplies numbers only
                fn.known[t] = int
            return t
        if op in ("/", "%"):  # two numbers, the divisor not 0: Python's // and %, as arith
            if ints == "False":
                fn.emit(slow)
                return t
            py = "//" if op == "/" else "%"
            tests = [] if ints == "True" else [ints]
            fixed = self.mod.values.get(b, 0) if b in self.mod.values else None
            if fixed.__class__ is not int or not fixed or abs(fixed) >= MAX_INT:
                tests.append(b)
            if not (op == "%" and fixed.__class__ is int and fixed and abs(fixed) < MAX_INT):
                tests.append(f"{-MAX_INT} < ({a} {py} {b}) < {MAX_INT}")  # (a % b is smaller than b)
            fn.emit(f"if {' and '.join(tests)}: {t} = {a} {py} {b}" if tests else f"{t} = {a} {py} {b}")
            if tests:
                fn.emit(f"else: {slow}")
            fn.known[t] = int  # arith() divides numbers only
            return t
        raise RuleRuntimeError(f"cannot compile operator {op!r}")

    def _small(self, x, fn):
        """A whole number far inside the range (below 2^40 either way): a count, a length, a small constant."""
        if x in self.mod.values:
            v = self.mod.values[x]
            return v.__class__ is int and -SMALL_INT < v < SMALL_INT
        return x in fn.small

    def _both_int(self, a, b, fn=None):
        ca = self.mod.class_test(a, int, fn)
        cb = self.mod.class_test(b, int, fn)
        if "False" in (ca, cb):
            return "False"
        conds = [c for c in (ca, cb) if c != "True"]
        return " and ".join(conds) if conds else "True"

    def g_Cond(self, e, fn):
        c = self.test(e.test, fn)
        t = fn.tmp()
        fn.emit(f"if {c}:")
        fn.depth += 1
        a = self.expr(e.then, fn)
        fn.emit(f"{t} = {a}")
        fn.depth -= 1
        fn.emit("else:")
        fn.depth += 1
        b = self.expr(e.orelse, fn)
        fn.emit(f"{t} = {b}")
        fn.depth -= 1
        return t

    def g_Lambda(self, e, fn):
        self.preload(fn, e.body)  # a function value is called once per item: its reads come first
        name = fn.tmp("lam")
        saved = fn.env
        fn.env = dict(saved)
        p = fn.bind(e.param, "x")
        fn.emit(f"def {name}({p}):")
        fn.depth += 1
        fn.charge(1)
        r = self.expr(e.body, fn)
        fn.emit(f"return {r}")
        fn.depth -= 1
        fn.env = saved
        return name

    def g_Bind(self, e, fn):
        v = self.expr(e.value, fn)
        saved = fn.env
        fn.env = dict(saved)
        if fn.reusable(v) or v in self.mod.values:  # the name or constant holding it is the bound name
            fn.env[e.name] = v
        else:
            b = fn.bind(e.name, "b")
            fn.emit(f"{b} = {v}")
            if v in fn.known:
                fn.known[b] = fn.known[v]
        r = self.expr(e.body, fn)
        fn.env = saved
        return r

    def g_Call(self, e, fn):
        name = e.func.ident
        if e.func.ref == "func":
            args = [self.expr(a.value, fn) for a in e.args]
            ident, params = self.functions[name]
            t = fn.tmp()
            if fn.inlined < 1 and len(args) == len(params) and self.inlinable(name):
                return self.inline_call(name, params, args, fn)
            fn.emit(f"{t} = {ident}({', '.join(['G'] + args)})")
            return t
        if _loop_call(e):
            mark = fn.work_region()
            t = self.any_all_loop(name, e.args[0].value, e.args[1].value, fn)
            fn.end_work_region(mark)
            return t
        if self._line_length_loop_call(e):
            return self.line_length_loop(e, fn)
        if name in ("count", "sum") and len(e.args) == 1 and e.args[0].name is None:
            c = e.args[0].value
            if (isinstance(c, A.Comprehension) and c.kind == "list" and len(c.names) == 1
                    and (name == "sum" or isinstance(c.element, A.Name) and c.element.ident == c.names[0])):
                return self.count_sum_loop(name, c, fn)
        if name == "sum" and len(e.args) == 1 and e.args[0].name is None and _values_call(e.args[0].value):
            return self.sum_of_values(e, fn)
        # positional arguments first, then the named ones (the closures' order)
        pos = [self.expr(a.value, fn) for a in e.args if a.name is None]
        kws = [(a.name, self.expr(a.value, fn)) for a in e.args if a.name is not None]
        return self.builtin_call(name, pos, kws, fn)

    def sum_of_values(self, e, fn):
        """sum(values(m)): answered by builtins.sum_of_values when m's values are small whole numbers (the
        same charges and result, the keys not sorted); else the two calls, as they are written."""
        inner = e.args[0].value
        m = self.expr(inner.args[0].value, fn)
        t = fn.tmp()
        fn.emit(f"{t} = sum_of_values(G, {m}, UNSET)")
        fn.emit(f"if {t} is UNSET:")
        fn.depth += 1
        v = self.builtin_call("values", [m], [], fn)
        fn.emit(f"{t} = {self.builtin_call('sum', [v], [], fn)}")
        fn.depth -= 1
        return t

    def builtin_call(self, name, pos, kws, fn):
        """A call of built-in `name` with its arguments computed (names holding them): its charge, the call,
        its errors said as the built-in's."""
        k = self.mod.const
        impl = k(IMPLS[name])
        call_args = ", ".join(["G"] + pos + (["**{" + ", ".join(f"{k(n)}: {v}" for n, v in kws) + "}"] if kws else []))
        argt = "(" + "".join(p + ", " for p in pos) + ")"
        t = fn.tmp()
        flat = name in FLAT_COST or (name == "count" and len(pos) + len(kws) == 1)
        cost = COSTS[name]
        if name == "get" and len(pos) == 3 and not kws:  # a map and a key: one look-up (the same charge)
            m, key, default = pos
            kk = self.mod.kind(key, fn)
            if kk is int or kk is bool or key in ("None", "True", "False"):
                fn.emit("G.work += 2")
            else:  # deep_cost(key) + 1, with a text (a row, a name) or a number told without the call
                fn.emit(f"if {key}.__class__ is str: G.work += 2 + len({key}) // 64")
                fn.emit(f"elif {key}.__class__ is int: G.work += 2")
                fn.emit(f"else: G.work += deep_cost({key}) + 1")
            fn.emit("if G.work > G.work_mark: over(G)")
            fn.emit("try:")
            fn.emit(f"    if {m}.__class__ is dict: {t} = {m}.get({key}, {default})")
            fn.emit(f"    else: {t} = {impl}({call_args})")
            fn.emit("except BUILTIN_ERRORS as err:")
            fn.emit(f"    raise builtin_error({k(name)}, {argt}, err) from None")
            return t
        if name == "abs" and len(pos) == 1 and not kws and self.mod.class_test(pos[0], int, fn) != "False":
            n = pos[0]  # a number: its size without the call (abs() charges no work of its own)
            test = self.mod.class_test(n, int, fn)
            fn.known[t] = int
            if test == "True":
                fn.emit(f"{t} = -{n} if {n} < 0 else {n}")
                return t
            fn.emit(f"if {test}: {t} = -{n} if {n} < 0 else {n}")
            fn.emit("else:")
            fn.emit("    try:")
            fn.emit(f"        {t} = {impl}({call_args})")
            fn.emit("    except BUILTIN_ERRORS as err:")
            fn.emit(f"        raise builtin_error({k(name)}, {argt}, err) from None")
            return t
        if name in ("max", "min") and len(pos) == 2 and not kws:
            # two numbers: the work and the result without the general call (same charge, same result)
            a, b = pos
            fn.emit(f"if {self._both_int(a, b, fn)}:")
            fn.emit(f"    G.work += {cost((0, 0))}")
            fn.emit("    if G.work > G.work_mark: over(G)")
            fn.emit(f"    {t} = {a} if {a} {'>=' if name == 'max' else '<='} {b} else {b}")
            fn.emit("else:")
            fn.depth += 1
        if not flat:
            fn.emit(f"G.work += {k(cost)}({argt})")
            fn.emit("if G.work > G.work_mark: over(G)")
        fn.emit("try:")
        if name == "count" and len(pos) == 1 and not kws:
            fn.emit(f"    {t} = len({pos[0]})")  # count(xs) is its length (a wrong kind: the same TypeError)
            fn.known[t] = int
            fn.small.add(t)
        else:
            fn.emit(f"    {t} = {impl}({call_args})")
        fn.emit("except BUILTIN_ERRORS as err:")
        fn.emit(f"    raise builtin_error({k(name)}, {argt}, err) from None")
        if name in GROWS and not flat:
            fn.emit(f"check_value(G, {t})")
        if name in ("max", "min") and len(pos) == 2 and not kws:
            fn.depth -= 1
        return t

    def any_all_loop(self, name, source, lam, fn):
        """`any(xs, x => test)` / `all(...)` as a loop that stops at the first answer, the test written in
        the loop: the same work (the built-in's charge, then 1 per test), result and errors as the call."""
        k = self.mod.const
        xs = self.expr(source, fn)
        self.preload(fn, lam.body)
        hoisted = self.hoist(fn, [lam.param], lam.body, rounds=self._rounds(xs))
        t = fn.tmp()
        fixed = self.mod.values.get(xs) if xs in self.mod.values else None
        if fixed.__class__ in CONTAINERS:  # a constant list: its cost and items are known now
            fn.emit(f"G.work += {_cost_of(fixed) + 1}")
            items = self.mod.const(_items(fixed))
        elif self.mod.kind(xs, fn) is tuple:  # a list just made
            fn.emit(f"G.work += len({xs}) + 2")
            items = xs
        else:  # COSTS[name]: the list walked once, plus the function value; then its items (which raises
            # nothing the try below catches: the same error either side of it)
            items = fn.tmp("items")
            fn.emit(f"if {xs}.__class__ is tuple:")
            fn.emit(f"    G.work += len({xs}) + 2")
            fn.emit("    if G.work > G.work_mark: over(G)")
            fn.emit(f"    {items} = {xs}")
            fn.emit("else:")
            fn.emit(f"    G.work += cost_of({xs}) + 1")
            fn.emit("    if G.work > G.work_mark: over(G)")
            fn.emit(f"    {items} = items_of({xs})")
        if fixed.__class__ in CONTAINERS or self.mod.kind(xs, fn) is tuple:
            fn.emit("if G.work > G.work_mark: over(G)")
        fn.emit(f"{t} = {name == 'all'}")
        fn.emit("try:")
        fn.depth += 1
        saved = fn.env
        fn.env = dict(saved)
        x = fn.bind(lam.param, "x")
        if _item_kind(fixed) is not None or xs in fn.items_kind:
            fn.known[x] = _item_kind(fixed) or fn.items_kind[xs]
        fn.emit(f"for {x} in {items}:")
        fn.depth += 1
        fn.charge(1, check=False)  # the budget is looked at when the loop ends (UNCHECKED, above class Fn)
        # the test part by part when it is `a and b and ...`: any: an `if` per part, nested; all: the item
        # fails at the first part that does not hold
        parts = self.conjuncts(lam.body, fn)
        for part in parts:
            r = self.test(part, fn)
            if name == "any":
                fn.emit(f"if {r}:")
                fn.depth += 1
            else:
                fn.emit(f"if not {r}:")
                fn.emit(f"    {t} = False")
                fn.emit("    break")
        if name == "any":
            fn.emit(f"{t} = True")
            fn.emit("break")
            fn.depth -= len(parts)
        fn.depth -= 2
        fn.env = saved
        fn.emit("except BUILTIN_ERRORS as err:")
        fn.emit(f"    raise builtin_error({k(name)}, ({xs}, ), err) from None")
        fn.emit("if G.work > G.work_mark: over(G)")
        self.unhoist(fn, hoisted)
        fn.known[t] = bool
        return t

    def _line_length_loop_call(self, e):
        """line_length(b, n, where: x => test) with b a board known when the rules load."""
        if not (e.func.ident == "line_length" and e.func.ref != "func" and len(e.args) == 3
                and e.args[0].name is None and e.args[1].name is None and e.args[2].name == "where"
                and isinstance(e.args[2].value, A.Lambda)):
            return False
        b = e.args[0].value
        return b.__class__ is A.Name and b.ref == "board"

    def line_length_loop(self, e, fn):
        """`line_length(b, n, where: x => test)` on a board of (x, y) nodes: the node's rays walked here,
        the test written in the loop (no call per cell): the same cells tested in the same order, the
        same work (1 per test, then the walk's charge), result and errors as the built-in, which runs
        instead when the node has no rays (not on the board, other nodes, no room kept for rays)."""
        k = self.mod.const
        b = self.expr(e.args[0].value, fn)
        n = self.expr(e.args[1].value, fn)
        lam = e.args[2].value
        t = fn.tmp()
        fn.known[t] = int
        rays = fn.tmp("rays")
        board = self.rs.boards.get(e.args[0].value.ident)
        if board.__class__ is Board:  # the rays listed before, else a look (the board is known here)
            fn.emit("try:")
            fn.emit(f"    {rays} = {b}.known_rays.get({n})")
            fn.emit("except TypeError:")
            fn.emit(f"    {rays} = None")
            fn.emit(f"if {rays} is None: {rays} = {b}.rays({n})")
        else:
            fn.emit(f"{rays} = line_rays({b}, {n})")
        fn.emit(f"if {rays} is None:")
        fn.depth += 1
        w = self.expr(lam, fn)
        fn.emit("try:")
        fn.emit(f"    {t} = {k(IMPLS['line_length'])}(G, {b}, {n}, **{{{k('where')}: {w}}})")
        fn.emit("except BUILTIN_ERRORS as err:")
        fn.emit(f"    raise builtin_error({k('line_length')}, ({b}, {n}, ), err) from None")
        fn.depth -= 1
        fn.emit("else:")
        fn.depth += 1
        mark = fn.work_region()
        self.preload(fn, lam.body)
        hoisted = self.hoist(fn, [lam.param], lam.body, rounds=3)  # the node, then the cells of its rays
        fn.emit("try:")
        fn.depth += 1
        saved = fn.env
        fn.env = dict(saved)
        x0 = fn.bind(lam.param, "x")  # the node itself is tested first
        fn.emit(f"{x0} = {n}")
        fn.charge(1, check=False)  # the budget is looked at when the walk ends (UNCHECKED, above class Fn)
        r = self.expr(lam.body, fn)
        fn.emit(f"if not {r}: {t} = 0")
        fn.emit("else:")
        fn.depth += 1
        best, walked, run = fn.tmp("n"), fn.tmp("n"), fn.tmp("n")
        ahead, behind = fn.tmp("x"), fn.tmp("x")
        x = fn.bind(lam.param, "x")  # a new name: what was remembered about the node is not about the cells
        fn.emit(f"{best} = 1")
        fn.emit(f"{walked} = 0")
        fn.emit(f"for {ahead}, {behind} in {rays}:")  # per direction: the cells ahead, then behind, to the first "no"
        fn.emit(f"    {run} = 0")
        for side in (ahead, behind):  # (the test written twice: one loop fewer per direction)
            fn.emit(f"    for {x} in {side}:")
            fn.depth += 2
            fn.charge(1, check=False)
            r = self.expr(lam.body, fn)
            fn.emit(f"if not {r}: break")
            fn.emit(f"{run} += 1")
            fn.depth -= 2
        fn.depth += 1
        fn.emit(f"{walked} += {run}")
        fn.emit(f"if {run} >= {best}: {best} = {run} + 1")
        fn.depth -= 1
        fn.emit(f"if {walked} > 8:")
        fn.emit(f"    G.work += {walked}")
        fn.emit("    if G.work > G.work_mark: over(G)")
        fn.emit(f"{t} = {best}")
        fn.depth -= 2
        fn.env = saved
        fn.emit("except BUILTIN_ERRORS as err:")
        fn.emit(f"    raise builtin_error({k('line_length')}, ({b}, {n}, ), err) from None")
        fn.emit("if G.work > G.work_mark: over(G)")
        self.unhoist(fn, hoisted)
        fn.end_work_region(mark)
        fn.depth -= 1
        return t

    def count_sum_loop(self, name, c, fn):
        """`count([x for x in xs if c])` / `sum([e for x in xs if c])` as one loop that counts or adds
        as it goes, without the list: the same work for the walk of xs, the same result, the same errors
        (a sum's elements are all computed; a sum that meets a non-number or grows too large is handed
        to the built-in with the list, which fails as it always did)."""
        k = self.mod.const
        s = self.expr(c.source, fn)
        self.preload(fn, c.element, c.condition)
        hoisted = self.hoist(fn, c.names, c.element, c.condition, rounds=self._rounds(s))
        saved = fn.env
        fn.env = dict(saved)
        items = self._walked_items(s, fn)
        acc = fn.tmp("n")
        fn.emit(f"{acc} = 0")
        by_field = self._counted_field(c) if name == "count" else None
        cnt = fn.count_memo.get((id(c.source), by_field[0])) if by_field is not None else None
        if cnt is None:
            by_field = None
        else:  # the list's counts per value of the field, made at the first round that needs them (hoist)
            field, other = by_field
            fn.emit(f"if {cnt} is None: {cnt} = field_counts({s}, {k(self._fields.setdefault(field, {}))}, "
                    f"{k(field)}, {k(self.rs.row_fields)}) if {s}.__class__ is tuple else False")
            fn.emit(f"if {cnt}:")  # (not for an empty list: e is not computed then, as by the loop)
            fn.depth += 1
            e = self.expr(other, fn)
            fn.emit(f"{acc} = {cnt}.get({e}, 0) if {e}.__class__ is not dict else 0")  # (a map equals no field)
            fn.depth -= 1
            fn.emit("else:")
            fn.depth += 1
        if name == "sum":
            out, bad = fn.tmp("out"), fn.tmp("w")
            fn.emit(f"{out} = []")
            fn.emit(f"{bad} = False")
        x0 = fn.bind(c.names[0], "x")
        fixed = self.mod.values.get(s) if s in self.mod.values else None
        if _item_kind(fixed) is not None or s in fn.items_kind:
            fn.known[x0] = _item_kind(fixed) or fn.items_kind[s]
        fn.emit(f"for {x0} in {items}:")
        fn.depth += 1
        opened = self._open_cond(c, fn)
        if name == "count":  # only [x for x in xs if c]: its items are xs's, so never measured
            fn.emit(f"{acc} += 1")
        else:
            x = self.expr(c.element, fn)
            fn.emit(f"{out}.append({x})")
            fn.emit(f"if {self.mod.class_test(x, int, fn)}:")
            fn.emit(f"    {acc} += {x}")
            fn.emit(f"    if not {-MAX_INT} < {acc} < {MAX_INT}: {bad} = True")
            fn.emit(f"else: {bad} = True")
        fn.depth -= 1 + opened + (by_field is not None)
        fn.env = saved
        self.unhoist(fn, hoisted)
        t = fn.tmp()
        fn.known[t] = int
        if name == "count":  # count of a list is only its length (no charge of its own)
            fn.emit(f"{t} = {acc}")
            fn.small.add(t)
            return t
        fn.emit(f"G.work += len({out}) + 1")  # the built-in's charge: its list walked once
        fn.emit("if G.work > G.work_mark: over(G)")
        fn.emit(f"if not {bad}: {t} = {acc}")
        fn.emit("else:")
        fn.depth += 1
        lst = fn.tmp()
        fn.emit(f"{lst} = check_list(G, tuple({out}))")
        fn.emit("try:")
        fn.emit(f"    {t} = {k(IMPLS[name])}(G, {lst})")
        fn.emit("except BUILTIN_ERRORS as err:")
        fn.emit(f"    raise builtin_error({k(name)}, ({lst}, ), err) from None")
        fn.depth -= 1
        return t

    def _counted_field(self, c):
        """(field, e) when `c` is `[x for x in xs if x.field == e]` (or `e == x.field`), `field` a field of
        table rows only (never a piece's: its values are plain, compared by Python alone, with no work),
        and `e` free of work and of x (_charge_free); else None."""
        e = c.condition
        if len(c.names) != 1 or e is None or e.__class__ is not A.Binary or e.op != "==":
            return None
        return self._field_equals(e, c.names[0])

    def _field_equals(self, e, x):
        """(field, other) when the test `e` is `x.field == other` (or `other == x.field`), `field` a field of
        table rows only (plain values, compared by Python alone, with no work) and `other` free of work and
        of x (_charge_free); else None."""
        for mine, other in ((e.left, e.right), (e.right, e.left)):
            if (mine.__class__ is A.Field and mine.target.__class__ is A.Name and mine.target.ident == x
                    and mine.target.ref == "local" and self.field_kind(mine.name) is not None):
                return (mine.name, other) if self._charge_free(other, {x}) else None
        return None

    def _charge_free(self, e, bound):
        """e reads none of `bound` and its code charges no work: a constant, a name, a field of table rows
        of one, whole numbers combined or compared."""
        if self.cl.is_constant(e):
            return True
        c = e.__class__
        if c is A.Name:
            return self._pure(e, bound) and not (e.ref == "builtin" and e.ident == "players")
        if c is A.Field:
            return self.field_kind(e.name) is not None and self._charge_free(e.target, bound)
        if c is A.Binary and e.op in ("+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">="):
            return all(side.ty is not None and side.ty.name in ("int", "player") and self._charge_free(side, bound)
                       for side in (e.left, e.right))
        return False

    def _walked_items(self, s, fn):
        """The items a comprehension walks, its source charged as walked once (len + 1)."""
        fixed = self.mod.values.get(s) if s in self.mod.values else None
        if fixed.__class__ is tuple:  # a constant list: its length is known now
            fn.emit(f"G.work += {len(fixed) + 1}")
            fn.emit("if G.work > G.work_mark: over(G)")
            return s
        items = fn.tmp("items")
        fn.emit(f"if {s}.__class__ is tuple:")
        fn.emit(f"    {items} = {s}")
        fn.emit(f"    G.work += len({s}) + 1")
        fn.emit("    if G.work > G.work_mark: over(G)")
        fn.emit("else:")
        fn.emit(f"    charge(G, cost_of({s}))")
        fn.emit(f"    {items} = items_of({s})")
        return items

    def inlinable(self, name):
        """A rule function that never calls itself (through others neither) and is small: its body is
        written where it is called (same depth check, work and result as the call)."""
        got = self._inline.get(name)
        if got is None:
            d = self.rs.program.decls[name]
            got = _size_of(d.body) <= 40 and name not in self.recursive()
            self._inline[name] = got
        return got

    def recursive(self):
        """The rule functions that can call themselves, directly or through others (closures.ExprCompiler)."""
        return self.cl.recursive()

    def inline_call(self, name, params, args, fn):
        d = self.rs.program.decls[name]  # (never a function that can call itself: see inlinable)
        fn.charge(1)
        saved = fn.env, fn.has_L
        fn.env = dict(zip(params, args))  # the body sees its parameters only, as in its own function
        fn.has_L = False
        fn.inlined += 1
        r = self.expr(d.body, fn)
        fn.inlined -= 1
        fn.env, fn.has_L = saved
        return r

    def calls_none(self, body):
        """A body that calls no rule function: nothing in it reads the depth, so a call of it need not count
        itself in G.fdepth (its own check of the depth stays). An error ends the run, and every run starts
        again at depth 0, so the depth left behind by an error is never read either."""
        got = self._leaf.get(id(body))
        if got is None:
            got = self._leaf[id(body)] = not _calls(body)
        return got

    def g_Index(self, e, fn):
        c = self.expr(e.target, fn)
        i = self.expr(e.index, fn)
        got = fn.cached(("index", c, i))
        if got is not None:  # the same look-up, already made here (it did not fail then)
            return got
        t = self.read_at(c, i, fn, e.target)
        fn.remember(("index", c, i), t)
        return t

    def read_at(self, c, i, fn, target=None):
        """`c[i]` (names of values made already) into a new name: tuple and dict in line, the rest (and every
        error) by get(), as the closures' _get. `target` (the indexed expression, if known) tells which test
        to make first. A tuple is indexed at once by a whole number of 0 or more: past its end, IndexError
        hands it to get(), which says the error."""
        t = fn.tmp()
        kc = self.mod.kind(c, fn)
        i_int = self.mod.class_test(i, int, fn)
        non_negative = f"{i} >= 0" if i_int == "True" else f"{i_int} and {i} >= 0"
        if i in self.mod.values and i_int == "True" and self.mod.values[i] >= 0:
            non_negative = "True"

        def tuple_branch(kw, test):
            """`kw test:` then c[i] (test: that c is a tuple, or "True")."""
            cond = " and ".join(x for x in (test, non_negative) if x != "True") or "True"
            fn.emit(f"{kw} {cond}:")
            fn.emit(f"    try: {t} = {c}[{i}]")
            fn.emit(f"    except IndexError: {t} = get({c}, {i})")

        guard = fn.guards.get(c) if kc is None else None
        if guard is not None:  # its class test made before the loop
            cls, g = guard
            if cls is tuple:
                if i_int != "False":
                    tuple_branch("if", g)
                    fn.emit(f"elif {c}.__class__ is dict: {t} = {c}.get({i})")
                else:
                    fn.emit(f"if {c}.__class__ is dict: {t} = {c}.get({i})")
            else:
                fn.emit(f"if {g}: {t} = {c}.get({i})")
                if i_int != "False":
                    tuple_branch("elif", f"{c}.__class__ is tuple")
            fn.emit(f"else: {t} = get({c}, {i})")
        elif kc is dict:
            fn.emit(f"{t} = {c}.get({i})")
        elif kc is tuple and i_int != "False":
            tuple_branch("if", "True")
            fn.emit(f"else: {t} = get({c}, {i})")
        elif kc is not None:
            fn.emit(f"{t} = get({c}, {i})")
        elif i_int != "False" and target is not None and self._likely_list(target):  # the likelier test first
            tuple_branch("if", f"{c}.__class__ is tuple")
            fn.emit(f"elif {c}.__class__ is dict: {t} = {c}.get({i})")
            fn.emit(f"else: {t} = get({c}, {i})")
        else:
            fn.emit(f"if {c}.__class__ is dict: {t} = {c}.get({i})")
            if i_int != "False":
                tuple_branch("elif", f"{c}.__class__ is tuple")
            fn.emit(f"else: {t} = get({c}, {i})")
        return t

    def _likely_list(self, target):
        """A list by its declaration (a variable per player, or typed a list): only which test comes first."""
        if target.__class__ is A.Name and target.ref == "var":
            d = self.rs.program.decls.get(target.ident)
            if getattr(d, "per_player", False):
                return True
        ty = target.ty
        return ty is not None and ty.name in ("list", "tuple")

    def g_Field(self, e, fn):
        v = self.expr(e.target, fn)
        t = fn.tmp()
        k = self.mod.const
        if e.target.ty is not None and e.target.ty.kind == "piece":
            fn.emit(f"{t} = read_field(G, {v}, {k(e.name)})")
            return t
        got = fn.cached(("field", v, e.name))
        if got is not None:
            return got
        fn.remember(("field", v, e.name), t)
        by_row = self._fields.get(e.name)
        if by_row is None:
            by_row = self._fields[e.name] = {}
        kb = k(by_row)
        fn.emit("try:")
        fn.emit(f"    {t} = {kb}[{v}]")
        fn.emit("except (KeyError, TypeError):")
        fn.emit(f"    {t} = field_slow(G, {v}, {k(e.name)}, {kb}, {k(self.rs.row_fields)})")
        kind = self.field_kind(e.name)
        if kind is not None:
            fn.known[t] = kind
            if kind is int and e.name in self._small_fields:
                fn.small.add(t)
        return t

    def field_kind(self, name):
        """The class of every value a read of field `name` can give, when it is one (int, str or bool), or
        Scalar when they are all numbers, texts, bools or none: the field of every table row that has it
        holds one, and no piece has a field of that name."""
        if self._field_kinds is None:
            pieces = [d for d in self.rs.program.decls.values() if isinstance(d, A.PieceDecl)]
            piece_fields = {f.name for d in pieces for f in d.fields} | ({"id"} if pieces else set())
            found = {}
            for fields in self.rs.row_fields.values():
                for f, v in fields.items():
                    found.setdefault(f, set()).add(v.__class__)
            plain = {int, str, bool, type(None)}
            self._field_kinds = {f: next(iter(cs)) if len(cs) == 1 and cs <= {int, str, bool} else Scalar
                                 for f, cs in found.items() if cs <= plain and f not in piece_fields}
            # whole-number fields whose every value is far inside the range (see _small)
            big = {f for fields in self.rs.row_fields.values() for f, v in fields.items()
                   if v.__class__ is int and not -SMALL_INT < v < SMALL_INT}
            self._small_fields = {f for f, kind in self._field_kinds.items() if kind is int and f not in big}
        return self._field_kinds.get(name)

    def g_TupleLit(self, e, fn):
        vs = [self.expr(x, fn) for x in e.items]
        alias = fn.tuple_alias.get(tuple(vs))
        if alias is not None and all(fn.known.get(v) in (int, str, bool) for v in vs):
            return alias  # the very values, already in a list of plain values (a candidate's `vals`)
        t = fn.tmp()
        fn.known[t] = tuple
        if len(vs) == 2:
            a, b = vs
            fn.emit(f"{t} = ({a}, {b})")
            # a list or set inside: measured (a value known to be a number or a constant list is not)
            maybe = [f"{v}.__class__ in CONTAINERS" for v in vs
                     if v not in self.mod.values and fn.known.get(v) not in (int, str, bool, Scalar)]
            if maybe:
                fn.emit(f"if {' or '.join(maybe)}: check_value(G, {t})")
            elif any(v in self.mod.values and self.mod.values[v].__class__ in CONTAINERS for v in vs):
                fn.emit(f"check_value(G, {t})")
            return t
        fn.emit(f"{t} = check_items(G, ({''.join(v + ', ' for v in vs)}))")
        return t

    g_ListLit = g_TupleLit

    def g_SetLit(self, e, fn):
        vs = [self.expr(x, fn) for x in e.items]
        t = fn.tmp()
        fn.emit(f"{t} = check_items(G, frozenset(({''.join(v + ', ' for v in vs)})))")
        return t

    def g_MapLit(self, e, fn):
        t = fn.tmp()
        fn.emit(f"{t} = {{}}")
        for ke, ve in e.entries:
            v = self.expr(ve, fn)
            if self.mod.is_const(v):
                if self.mod.values[v] is not None:
                    fn.emit(f"{t}[{self.expr(ke, fn)}] = {v}")
                continue
            fn.emit(f"if {v} is not None:")
            fn.depth += 1
            kk = self.expr(ke, fn)
            fn.emit(f"{t}[{kk}] = {v}")
            fn.depth -= 1
        fn.emit(f"{t} = check_map(G, {t})")
        return t

    def g_EmptyLit(self, e, fn):
        t = fn.tmp()
        if e.ty is not None and e.ty.name == "set":
            fn.emit(f"{t} = frozenset()")
        else:
            fn.emit(f"{t} = {{}}")
        return t

    def g_Comprehension(self, e, fn):
        s = self.expr(e.source, fn)
        if e.kind == "list" and len(e.names) == 1 and isinstance(e.element, A.Name) and e.element.ident == e.names[0]:
            index = self._row_index(e, self.mod.values.get(s) if s in self.mod.values else None)
            if index is not None:  # rows of a constant table picked by their fields: looked up (see _row_index)
                self._walked_items(s, fn)  # (T's walk charged as the loop charges it)
                return self.row_lookup(index, fn)
        self.preload(fn, e.element, e.condition, getattr(e, "value", None))
        hoisted = self.hoist(fn, e.names, e.element, e.condition, getattr(e, "value", None), rounds=self._rounds(s))
        names = e.names
        saved = fn.env
        fn.env = dict(saved)
        out = fn.tmp("out")
        t = fn.tmp()
        if e.kind == "map" or len(names) == 2:
            fn.emit(f"charge(G, cost_of({s}))")
            fn.emit(f"{out} = {{}}" if e.kind == "map" else f"{out} = []")
            if len(names) == 2:
                x0, x1 = fn.bind(names[0], "x"), fn.bind(names[1], "x")
                fn.emit(f"for {x0}, {x1} in pairs_of({s}):")
            else:
                x0 = fn.bind(names[0], "x")
                fn.emit(f"for {x0} in items_of({s}):")
            fn.depth += 1
            opened = self._open_cond(e, fn)
            if e.kind == "map":  # the value first: an entry whose value is none is left out
                v = self.expr(e.value, fn)
                fn.emit(f"if {v} is not None:")
                fn.depth += 1
                kx = self.expr(e.element, fn)
                fn.emit(f"{out}[{kx}] = {v}")
                fn.depth -= 1
            else:
                x = self.expr(e.element, fn)
                fn.emit(f"{out}.append({x})")
            fn.depth -= 1 + opened
            fn.env = saved
            self.unhoist(fn, hoisted)
            if e.kind == "map":
                fn.emit(f"{t} = check_map(G, {out})")
            else:
                fn.emit(f"{t} = check_items(G, tuple({out}))")
            return t
        # the common case, [f(x) for x in xs if test(x)]: a plain loop
        n0 = names[0]
        same_items = isinstance(e.element, A.Name) and e.element.ident == n0  # cannot outgrow its source
        fixed = self.mod.values.get(s) if s in self.mod.values else None
        items = self._walked_items(s, fn)
        fn.emit(f"{out} = []")
        x0 = fn.bind(n0, "x")
        if _item_kind(fixed) is not None or s in fn.items_kind:
            fn.known[x0] = _item_kind(fixed) or fn.items_kind[s]
        fn.emit(f"for {x0} in {items}:")
        fn.depth += 1
        opened = self._open_cond(e, fn)
        x = self.expr(e.element, fn)
        fn.emit(f"{out}.append({x})")
        fn.depth -= 1 + opened
        fn.env = saved
        self.unhoist(fn, hoisted)
        fn.emit(f"{t} = tuple({out})")
        if not same_items:
            fn.emit(f"{t} = check_list(G, {t})")
        fn.known[t] = tuple
        return t

    def _row_index(self, e, fixed):
        """For `[x for x in T if x.f == a and x.g == b ...]`, T a constant list of table rows that all have
        the fields, each field of table rows only (plain values, compared by Python alone, with no work)
        and each of a, b, ... charging no work and reading no x: ((a, b, ...), the rows of T by their
        values of f, then g, ...: {value of f: {value of g: (rows, in T's order)}}); else None."""
        if fixed.__class__ is not tuple or not fixed or e.condition is None:
            return None
        x = e.names[0]
        parts = []
        stack = [e.condition]
        while stack:  # the parts of a and b and ..., in order
            part = stack.pop(0)
            if part.__class__ is A.Binary and part.op == "and":
                stack[:0] = [part.left, part.right]
                continue
            got = self._field_equals(part, x) if part.__class__ is A.Binary and part.op == "==" else None
            if got is None:
                return None
            parts.append(got)
        rows = self.rs.row_fields
        index = {}
        found = []  # the lists of rows at the last level (made tuples at the end: one pass over T)
        try:
            for r in fixed:
                fields = rows.get(r) if r.__class__ is str else None
                if fields is None or any(f not in fields for f, _ in parts):
                    return None
                level = index
                for f, _ in parts[:-1]:
                    level = level.setdefault(fields[f], {})
                last = fields[parts[-1][0]]
                if last not in level:
                    level[last] = []
                    found.append((level, last))
                level[last].append(r)
        except TypeError:  # (a field value that cannot be a key)
            return None
        for level, last in found:
            level[last] = tuple(level[last])
        return [other for _, other in parts], index

    def row_lookup(self, index, fn):
        """The rows of `index` (_row_index) whose fields equal the values, each value computed only when a
        row has all the values before it, as the loop tests them; a value that cannot be a key (a map)
        equals no field of a row."""
        values, table = index
        k = self.mod.const
        t = fn.tmp()
        level = fn.tmp("w")
        fn.emit(f"{t} = ()")
        fn.emit(f"{level} = {k(table)}")
        depth = fn.depth
        for i, v in enumerate(values):
            e = self.expr(v, fn)
            fn.emit("try:")
            fn.emit(f"    {level} = {level}.get({e})")
            fn.emit("except TypeError:")
            fn.emit(f"    {level} = None")
            fn.emit(f"if {level} is not None:")
            fn.depth += 1
        fn.emit(f"{t} = {level}")
        fn.depth = depth
        fn.known[t] = tuple
        return t

    def _open_cond(self, e, fn):
        """A comprehension's condition: one `if` per part of an `a and b and ...` (the same parts tested in
        the same order, each only when those before hold); returns how many blocks it opened."""
        if e.condition is None:
            return 0
        parts = self.conjuncts(e.condition, fn)
        for part in parts:
            c = self.test(part, fn)
            fn.emit(f"if {c}:")
            fn.depth += 1
        return len(parts)

    def conjuncts(self, e, fn):
        """The parts of `a and b and ...` as a test (a test holds when each part holds, tested in turn, the
        next only when the one before held: what `and` does), unless the whole is computed before its loop
        or is a constant; else [e]."""
        if (e.__class__ is A.Binary and e.op == "and" and id(e) not in fn.hoisted and id(e) not in fn.memo
                and not self.cl.is_constant(e)):
            return self.conjuncts(e.left, fn) + self.conjuncts(e.right, fn)
        return [e]


# `a OP b` of two generated names or constants (the right side of a comparison's one line)
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


# ============================================================================ statements: fused ops
def relocate(err, span, where):
    """An error inside a fused op, as the engine reports it for the statement that raised it (`where`: the
    procedure, action or trigger the op belongs to, which need not be the running frame's)."""
    from .runtime import Located
    if isinstance(err, RuleRuntimeError):
        return Located(str(err), span, where=where)
    if isinstance(err, KeyError):
        return Located(f"{err} has no value here", span, where=where)
    if isinstance(err, RecursionError):
        return Located("the rules nest too deeply (a function calling itself without end?)", span, where="")
    if isinstance(err, (TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError, OverflowError)):
        return Located(f"a value of the wrong kind: {err}", span, where=where)
    return err


def called_from(err, code, L, pc):
    """An error inside a procedure called without a frame: note the frame it would have had (the engine
    puts these frames back, so the game's state after the error is the closures' state)."""
    err.frames = [(code, err.caller_pc if err.caller_pc is not None else 0, L)] + (err.frames or [])
    err.caller_pc = pc
    return err


def too_deep():
    from .engine import MAX_FRAMES
    return RuleRuntimeError(f"procedures call each other more than {MAX_FRAMES} deep")


def repeat_error(n):
    return RuleRuntimeError(f"repeat needs a number, not {fmt(n)}")


def _statement_names():
    from .runtime import END, RETURN, Located
    from .engine import MAX_FRAMES
    return {"relocate": relocate, "repeat_error": repeat_error, "Located": Located, "END": END,
            "too_deep": too_deep, "MAX_FRAMES": MAX_FRAMES, "called_from": called_from,
            "RETURN": RETURN, "Exception": Exception}


_WRITES = (A.Assign, A.Add, A.Remove, A.Move, A.Shuffle, A.DrawInto, A.Draw)  # what writes a place


def _bindings(block):
    """rule local -> how many statements of a block write or bind it (lets, loops, assignments, and the
    collections an add, remove, move, shuffle or draw changes), at any depth."""
    out = {}
    for x in A.walk(block):
        if isinstance(x, A.Let):
            names = (x.name,)
        elif isinstance(x, A.For):
            names = x.names
        elif isinstance(x, _WRITES):
            names = []
            for t in (getattr(x, "target", None), getattr(x, "source", None), getattr(x, "pile", None)):
                while isinstance(t, (A.Index, A.Field)):
                    t = t.target
                if isinstance(t, A.Name):
                    names.append(t.ident)
        else:
            continue
        for n in names:
            out[n] = out.get(n, 0) + 1
    return out


def make_stmt_generator(rs, xc):
    """A statement compiler that lays out the op list exactly as the closures' StmtCompiler (same positions,
    spans and hidden locals: saves and pcs mean the same), then puts one generated op at the start of each
    maximal run of statements that cannot stop; the run's own ops stay in place behind it."""
    from .closures import StmtCompiler, jump_target

    class StmtGenerator(StmtCompiler):
        def __init__(self, rs, xc):
            super().__init__(rs, xc)
            self.mod = xc.mod
            self.mod.ns.update(_statement_names())
            self.triggered = {t.event for t in rs.program.triggers}
            self.ranges = {}  # id(statement) -> (first op, end op, hidden locals made for it)
            self._plain = {}  # procedure name -> whether it cannot stop (is called without a frame)

        def hidden(self, what):
            name = super().hidden(what)
            self._made.append(name)
            return name

        def block(self, c, b):
            for st in b.stmts:
                start = len(c.ops)
                outer = getattr(self, "_made", None)
                self._made = []
                getattr(self, "s_" + type(st).__name__)(c, st)
                self.ranges[id(st)] = (start, len(c.ops), self._made)
                if outer is not None:
                    outer.extend(self._made)
                    self._made = outer

        # set by the engine while an action's code is made: (its parameters, parameter -> class of every value)
        action_locals = None

        def code(self, id, block, name="", prologue=None, epilogue=None):
            self._made = []
            c = super().code(id, block, name, prologue, epilogue)
            # what a statement cannot change, kept from one statement to the next: `me`, a let bound by one
            # statement only (once it has run), an action's parameter that no statement writes
            binds = _bindings(block)
            lets = {x.name for x in A.walk(block) if isinstance(x, A.Let)}
            stable = [("me",)] + [("local", n) for n in lets if binds[n] == 1]
            self._kinds, self._present = {}, frozenset()
            if self.action_locals is not None:
                params, kinds = self.action_locals
                self._kinds = {n: k for n, k in kinds.items() if n not in binds}
                self._present = frozenset(n for n in params if n not in binds)
                stable += [("local", n) for n in self._present]
            self._stable = frozenset(stable)
            self.fuse_block(c, list(c.ops), block)
            return c

        # ---- what can be fused
        def fusable(self, s, in_loop):
            if isinstance(s, A.Let):
                return not isinstance(s.value, (A.Choose, A.Roll, A.Draw))
            if isinstance(s, (A.Assign, A.Add, A.Remove, A.Move, A.Reveal, A.Log, A.Shuffle, A.TriggerEnd,
                              A.Destroy, A.EndGame, A.Eliminate, A.Return)):
                return True
            if isinstance(s, A.Emit):
                return s.event not in self.triggered  # an event with no trigger pushes nothing
            if isinstance(s, (A.Break, A.Continue)):
                return in_loop
            if isinstance(s, A.ExprStmt):  # a call of a procedure that cannot stop: a plain call, no frame
                return self.plain_proc(s.expr.func.ident)
            if isinstance(s, A.If):
                return (all(self.block_fusable(b, in_loop) for _, b in s.branches)
                        and (s.orelse is None or self.block_fusable(s.orelse, in_loop)))
            if isinstance(s, (A.For, A.Repeat)):
                return self.block_fusable(s.body, True)
            return False

        def plain_proc(self, name):
            got = self._plain.get(name)
            if got is None:
                self._plain[name] = False  # until shown otherwise (a call cycle stays with frames)
                d = self.rs.program.decls.get(name)
                got = isinstance(d, A.ProcDecl) and d.proc_kind not in ("setup", "flow") and \
                    self.block_fusable(d.body, False)
                self._plain[name] = got
            return got

        def block_fusable(self, b, in_loop):
            return all(self.fusable(s, in_loop) for s in b.stmts)

        def fuse_block(self, c, ops, b):
            run = []
            for st in b.stmts + [None]:
                if st is not None and self.fusable(st, False):
                    run.append(st)
                    continue
                if run:
                    self.fuse_run(c, ops, run, st if isinstance(st, (A.If, A.While)) else None)
                    run = []
                if st is None:
                    break
                if isinstance(st, A.ExprStmt):  # a call of a procedure that can stop: its frame made by an op
                    self.call_op_of(c, st)
                elif isinstance(st, (A.If, A.While)):  # an if or while that can stop: its tests made by one op
                    self.tests_op_of(c, ops, st)
                for sub in _blocks(st):  # the parts of a statement that can stop
                    self.fuse_block(c, ops, sub)

        # ---- one fused op
        def fuse_run(self, c, ops, run, then_if=None):
            """One op for the statements of `run`; when an `if` or a `while` that can stop follows them
            (then_if), the op also makes its tests and goes on where they lead (their own ops stay in place,
            for the jumps that reach them)."""
            start = self.ranges[id(run[0])][0]
            end = self.ranges[id(run[-1])][1]
            fn = self.op_fn()
            for st in run:
                self.stmt(st, fn, ops)
            goes_on = jump_target(ops, end)  # (past a plain jump there: see closures._thread_jumps)
            if then_if is not None and goes_on == end:
                goes_on = self.tests_after(then_if, fn, ops, end)
            self.end_op(c, fn, start, run[0].span, goes_on)
            if start == 0 and end == len(c.ops):  # the whole code: an offered action can call it without a frame
                c.whole = c.ops[0]

        def call_op_of(self, c, st):
            """The op of a call of a procedure that can stop, generated: the arguments computed in order into
            the new frame's locals (the closures' names and order, then `me`), handed to the engine as the
            closures' op hands them; an error in an argument is said at the call, as there."""
            k = self.mod.const
            fn = self.op_fn()
            self.at(fn, st.span)
            frame = fn.tmp("w")
            fn.emit(f"{frame} = {{{', '.join(self.frame_items(st.expr, fn))}}}")
            fn.emit(f"if {k('me')} in L: {frame}[{k('me')}] = L[{k('me')}]")
            code = f"{k(self.rs.codes)}[{k('proc:' + st.expr.func.ident)}]"
            self.end_op(c, fn, self.ranges[id(st)][0], st.span, f"({k('call')}, {code}, {frame})")

        def op_fn(self):
            """The function of a generated op being written: what the code's statements cannot change (see
            code()), `sp` (which statement it is in, for its errors) and its body in a try."""
            fn = Fn(self.mod, True)
            fn.local_kinds, fn.stable, fn.present = self._kinds, self._stable, self._present
            fn.me_known = self.action_locals is not None
            fn.spans = []
            fn.emit("sp = 0")
            fn.emit("try:")
            fn.depth += 1
            return fn

        def end_op(self, c, fn, pos, span, goes_on):
            """The end of op_fn()'s function: an error said at the statement the op was in, then `return
            goes_on`; the op takes position pos of code c."""
            k = self.mod.const
            fn.depth -= 1
            fn.emit("except Located:")
            fn.emit("    raise")
            fn.emit("except Exception as err:")
            fn.emit(f"    raise relocate(err, {k(tuple(fn.spans))}[sp], {k(c.name)}) from None")
            fn.emit(f"return {goes_on}")
            name = self.mod.name("op")
            c.ops[pos] = self.mod.add(name, ExprGenerator._def(name, "G, L", fn, span))

        def frame_items(self, e, fn):
            """The locals of the frame of procedure call e, computed in order: `key: value` texts (a positional
            argument under its parameter's name, a named one under its name: the closures' keys)."""
            k = self.mod.const
            pnames = [p.name for p in self.rs.program.decls[e.func.ident].params]
            items, i = [], 0
            for a in e.args:
                v = self.xc.expr(a.value, fn)
                if a.name is None:
                    items.append(f"{k(pnames[i])}: {v}")
                    i += 1
                else:
                    items.append(f"{k(a.name)}: {v}")
            return items

        def tests_op_of(self, c, ops, st):
            """The op of the first test of an `if` (or the test of a `while`) that can stop, generated: it makes
            the tests in turn and goes on at the branch they choose, or past them (the later tests' ops stay in
            place, unused)."""
            pc = self.ranges[id(st)][0]
            if getattr(ops[pc], "else_to", None) is None:
                return
            fn = self.op_fn()
            self.end_op(c, fn, pc, st.span, self.tests_after(st, fn, ops, pc))

        def tests_after(self, st, fn, ops, pc):
            """The tests of `if` statement st (or the test of a `while`), whose first test's op is at pc, made in
            the op being written: each as its op makes it (said at its place if it fails); returns where the op
            goes on when none holds."""
            # (each at its op's position: an if's test at the test, a while's at the statement)
            tests = [(st.test, st.span)] if isinstance(st, A.While) else [(t, t.span) for t, _ in st.branches]
            for test, span in tests:
                op = ops[pc] if pc < len(ops) else None
                if getattr(op, "else_to", None) is None:  # (not a test's op: the ops from here run as they are)
                    break
                if fn.cache:  # the statements before may have written what was read
                    fn.cache = {key: v for key, v in fn.cache.items() if key in fn.stable} if fn.stable else {}
                self.at(fn, span)
                t = self.xc.test(test, fn)
                fn.emit(f"if {t}: return {jump_target(ops, pc + 1)}")
                pc = op.else_to
            return jump_target(ops, pc)

        def at(self, fn, span):
            fn.spans.append(span)
            fn.emit(f"sp = {len(fn.spans) - 1}")

        def call_op(self, st, fn, ops, signals=False):
            op = ops[self.ranges[id(st)][0]]
            self.at(fn, st.span)
            if signals:
                r = fn.tmp("r")
                fn.emit(f"{r} = {self.mod.const(op)}(G, L)")
                fn.emit(f"if {r} is not None: return {r}")
            else:
                fn.emit(f"{self.mod.const(op)}(G, L)")

        def body(self, b, fn, ops):
            if not b.stmts:
                fn.emit("pass")
            for st in b.stmts:
                self.stmt(st, fn, ops)

        def stmt(self, st, fn, ops):
            k = self.mod.const
            x = self.xc
            if fn.cache:  # a statement may write what earlier ones read (not an action's parameters, nor `me`)
                fn.cache = {key: v for key, v in fn.cache.items() if key in fn.stable} if fn.stable else {}
            if isinstance(st, A.Let) and not isinstance(st.value, A.New):
                self.at(fn, st.span)
                v = x.expr(st.value, fn)
                fn.emit(f"L[{k(st.name)}] = {v}")
                if ("local", st.name) in fn.stable:  # the statements after it read the value from here
                    fn.remember(("local", st.name), v)
            elif isinstance(st, A.Assign) and self.plain_place(st.target):
                self.assign(st, fn, ops)
            elif isinstance(st, A.Assign) and self.indexed_place(st.target) and (
                    st.op == "=" or self.plain_keys(st.target)):
                self.assign_at(st, fn, ops)
            elif isinstance(st, (A.Add, A.Remove)) and self.keyed_place(st.target if isinstance(st, A.Add)
                                                                       else st.source):
                self.add_or_remove(st, fn)
            elif isinstance(st, (A.EndGame, A.Eliminate)):
                self.call_op(st, fn, ops, signals=True)
            elif isinstance(st, A.Return):
                self.at(fn, st.span)
                fn.emit("return RETURN")
            elif isinstance(st, A.Break):
                fn.emit("break")
            elif isinstance(st, A.Continue):
                fn.emit("continue")
            elif isinstance(st, A.If):
                self.if_(st, fn, ops)
            elif isinstance(st, A.ExprStmt):
                self.plain_call(st, fn)
            elif isinstance(st, A.For):
                self.for_(st, fn, ops)
            elif isinstance(st, A.Repeat):
                self.repeat(st, fn, ops)
            else:
                self.call_op(st, fn, ops)

        def plain_place(self, target):
            """A variable or local with no [index] steps (written in place here)."""
            return isinstance(target, A.Name) and target.ref in ("var", "local")

        def as_pile(self, target, v, fn, sorted_charge=False):
            """A list written into a place of type deck, bag or set becomes a pile or set, as Place.set makes it
            (sorted_charge: first the sorting or hashing charged, as the closures' plain `=` does); other
            values and places are written as they are."""
            ty = target.ty
            if ty is None or ty.name not in ("deck", "bag", "set"):
                return v
            if sorted_charge:
                fn.emit(f"if {v}.__class__ is tuple:")
                fn.emit(f"    G.work += sorting_cost({v})")
                fn.emit("    if G.work > G.work_mark: over(G)")
            new = fn.tmp()
            fn.emit(f"{new} = as_pile({self.mod.const(ty.name)}, {v}) if {v}.__class__ is tuple else {v}")
            return new

        def plain_call(self, st, fn):
            """The closures' call op and the callee's frame, without the frame: the arguments into a fresh
            locals dict (and `me`), then the callee's one fused op (its whole body)."""
            name = st.expr.func.ident
            k = self.mod.const
            proc = self.rs.program.decls[name]
            self.at(fn, st.span)
            fn.emit("if len(G.frames) >= MAX_FRAMES: raise too_deep()")
            l2 = fn.tmp("w")
            fn.emit(f"{l2} = {{{', '.join(self.frame_items(st.expr, fn))}}}")
            fn.emit(f"if 'me' in L: {l2}['me'] = L['me']")
            if proc.body.stmts:
                r = fn.tmp("r")
                code = f"{k(self.rs.codes)}[{k('proc:' + name)}]"
                fn.emit("try:")
                fn.emit(f"    {r} = {code}.ops[0](G, {l2})")
                fn.emit("except Located as err:")  # the frames the closures would show at the error
                fn.emit(f"    raise called_from(err, {code}, {l2}, {self.ranges[id(st)][0] + 1})")
                fn.emit(f"if {r} is END: return END")

        def indexed_place(self, target):
            """x[a][b] of a variable or local."""
            if not isinstance(target, A.Index):
                return False
            root = target
            while isinstance(root, A.Index):
                root = root.target
            return isinstance(root, A.Name) and root.ref in ("var", "local")

        @staticmethod
        def _index_keys(target):
            keys = []
            root = target
            while isinstance(root, A.Index):
                keys.append(root.index)
                root = root.target
            keys.reverse()
            return root, keys

        def plain_keys(self, target):
            """The keys of x[a][b] are names or constants: reading them twice (as the closures' `+=` does,
            once to read the place and once to write it) charges nothing and gives the same values, so
            the generated `+=` reads them once."""
            _, keys = self._index_keys(target)
            return all(self.xc.cl.is_constant(x) or (x.__class__ is A.Name and x.ref != "func") for x in keys)

        def keyed_place(self, target):
            """A variable or local, or x[a][b] of one with keys that are names or constants (read twice by the
            closures, as Place.get and Place.set read them)."""
            return self.plain_place(target) or (self.indexed_place(target) and self.plain_keys(target))

        def add_or_remove(self, st, fn):
            """add x to P / remove x from P, as the closures' ops: (add: the item first) the place read, (remove:
            then the item), add_item or remove_item (their charges and errors), the range check, the write
            (keys read once: they are plain), forget, then the limits of the whole variable (add of a list, set
            or map only: as _check_root; nothing more is charged for another item, as the closures' add)."""
            target = st.target if isinstance(st, A.Add) else st.source
            self.at(fn, st.span)
            if isinstance(st, A.Add):
                x = self.xc.expr(st.item, fn)
            place = self.place_of(target, fn)
            inside = self.read_path(place, fn, len(place[2]))
            cur = inside.pop()
            v = fn.tmp()
            if isinstance(st, A.Add):
                fn.emit(f"{v} = add_item({cur}, {x}, G)")
            else:
                x = self.xc.expr(st.item, fn)
                fn.emit(f"{v} = remove_item({cur}, {x}, G)")
            v = self.as_pile(target, v, fn)
            self.range_checked(target, v, fn)
            new = self.write_path(place, inside, v, fn)
            kx = self.mod.kind(x, fn) if isinstance(st, A.Add) else None
            if isinstance(st, A.Add) and (kx is None or kx in CONTAINERS):  # (as the closures' add)
                fn.emit(f"if {x}.__class__ in CONTAINERS: check_value(G, {place[0]})")

        def assign_at(self, st, fn, ops):
            """x[a][b] = v, as Place.set and the closures' assign: value, range check, keys, copy, forget,
            then the value limits of the whole variable. x[a][b] += v (plain keys only): the place read
            first, then the value, the sum or difference, and the same write; the limits as the closures'
            _check_root, from the value added."""
            self.at(fn, st.span)
            if st.op == "=":
                v = self.as_pile(st.target, self.loose_checked(st, self.xc.expr(st.value, fn), fn), fn)
                self.range_checked(st.target, v, fn)
                place = self.place_of(st.target, fn)
                inside = self.read_path(place, fn, len(place[2]) - 1)
            else:
                place = self.place_of(st.target, fn)
                inside = self.read_path(place, fn, len(place[2]))
                cur = inside.pop()
                val = self.xc.expr(st.value, fn)
                v = self.as_pile(st.target, self.sum_or_difference(st.op, cur, val, fn), fn)
                self.range_checked(st.target, v, fn)
            new = self.write_path(place, inside, v, fn)
            if st.op != "=":
                self.check_whole(place, new, val, fn)
                return
            kv = self.mod.kind(v, fn)
            store = place[0]
            if kv is None or kv in CONTAINERS:
                fn.emit(f"if {v}.__class__ in CONTAINERS: check_value(G, {store})")
                fn.emit(f"elif {new}.__class__ in CONTAINERS:")
            else:  # a number, text, seat...: the copy made is charged
                fn.emit(f"if {new}.__class__ in CONTAINERS:")
            fn.emit(f"    G.work += len({new})")
            fn.emit("    if G.work > G.work_mark: over(G)")

        # x[a][b] written in place: its variable read, its keys made once, the containers on the way in read as
        # _set_path reads them (the outer first), the new ones made from the inside out, as _set makes them
        def place_of(self, target, fn):
            """(where the variable is stored, its root name, the keys made now, what each key indexes)."""
            root, keys = self._index_keys(target)
            store = f"G.data[{self.mod.const(root.ident)}]" if root.ref == "var" else f"L[{self.mod.const(root.ident)}]"
            old = fn.tmp()
            fn.emit(f"{old} = {store}")
            ks = [self.xc.expr(x, fn) for x in keys]
            return store, root, ks, self._index_targets(target), old

        def read_path(self, place, fn, n):
            """The variable's value and the containers its first n keys lead to (as Place.get reads them)."""
            _, _, ks, targets, old = place
            inside = [old]
            for key, target in zip(ks[:n], targets):
                inside.append(self.xc.read_at(inside[-1], key, fn, target))
            return inside

        def write_path(self, place, inside, v, fn):
            """v written at the place (inside: the containers on the way in), stored, what was known of the place
            forgotten; the new value of the whole variable."""
            store, root, ks, targets, _ = place
            new = v
            for c, key, target in reversed(list(zip(inside, ks, targets))):
                new = self.write_at(c, key, new, fn, target)
            fn.emit(f"{store} = {new}")
            if root.ref == "var" and self.rs.visibility.get(root.ident) in ("known", "owner"):
                fn.emit(f"G.forget({self.mod.const(root.ident)}, ({''.join(x + ', ' for x in ks)}))")
            return new

        def loose_checked(self, st, v, fn):
            """The value of `x = v` checked against x's declared type where the checker could vouch for it
            only loosely (as the closures' s_Assign: runtime.loose_check)."""
            loose = getattr(st, "loose_type", None)
            if loose is None:
                return v
            from .runtime import _expr_text, loose_check
            fn.emit(f"{self.mod.const(loose_check(loose, _expr_text(st.target)))}(G, {v})")
            return v

        def range_checked(self, target, v, fn):
            from .runtime import _expr_text, range_check
            check = range_check(target.ty, _expr_text(target))
            if check is not None:
                fn.emit(f"{self.mod.const(check)}({v})")

        @staticmethod
        def check_whole(place, new, added, fn):
            """_check_root after a value was added into part of a variable: its limits measured when the value
            added is a list, set or map, else the copy of the outer list or map charged."""
            fn.emit(f"if {added}.__class__ in CONTAINERS: check_value(G, {place[0]})")
            fn.emit("else:")
            fn.emit(f"    G.work += len({new}) if {new}.__class__ in CONTAINERS else 1")
            fn.emit("    if G.work > G.work_mark: over(G)")

        @staticmethod
        def _index_targets(target):
            """What each [key] of x[a][b] indexes: x, then x[a]."""
            out = []
            while isinstance(target, A.Index):
                out.append(target.target)
                target = target.target
            out.reverse()
            return out

        def write_at(self, c, key, v, fn, target):
            """`c` with `v` at `key`, into a new name, as the closures' _set: a new tuple or dict in line, the
            rest (and every error) by set_path. `target` (what c is the value of) tells which test comes
            first."""
            new = fn.tmp()
            k_int = self.mod.class_test(key, int, fn)
            kv = self.mod.kind(v, fn)
            if kv is None or kv is Scalar or kv is type(None):
                to_dict = [f"    {new} = {c}.copy()", f"    if {v} is None: {new}.pop({key}, None)",
                           f"    else: {new}[{key}] = {v}"]
            else:  # (a value that is never none is stored)
                to_dict = [f"    {new} = {c}.copy()", f"    {new}[{key}] = {v}"]
            to_tuple = None if k_int == "False" else (
                f"{c}.__class__ is tuple and {'' if k_int == 'True' else k_int + ' and '}0 <= {key} < len({c})",
                f"    {new} = {c}[:{key}] + ({v},) + {c}[{key} + 1:]")
            if to_tuple is not None and self.xc._likely_list(target):
                fn.emit(f"if {to_tuple[0]}:")
                fn.emit(to_tuple[1])
                fn.emit(f"elif {c}.__class__ is dict:")
                for x in to_dict:
                    fn.emit(x)
            else:
                fn.emit(f"if {c}.__class__ is dict:")
                for x in to_dict:
                    fn.emit(x)
                if to_tuple is not None:
                    fn.emit(f"elif {to_tuple[0]}:")
                    fn.emit(to_tuple[1])
            fn.emit(f"else: {new} = set_path({c}, [{key}], {v})")
            return new

        def sum_or_difference(self, op, cur, val, fn):
            """`cur + val` (op "+=") or `cur - val` ("-="): plain for two numbers in range, else _arith."""
            op = "+" if op == "+=" else "-"
            v = fn.tmp()
            fn.emit(f"if {self.xc._both_int(cur, val, fn)} and {-MAX_INT} < ({cur} {op} {val}) < {MAX_INT}: "
                    f"{v} = {cur} {op} {val}")
            fn.emit(f"else: {v} = arith({op!r}, {cur}, {val}, G)")
            return v

        def assign(self, st, fn, ops):
            from .runtime import range_check
            k = self.mod.const
            t = st.target
            self.at(fn, st.span)
            store = f"G.data[{k(t.ident)}]" if t.ref == "var" else f"L[{k(t.ident)}]"
            check = range_check(t.ty, t.ident)
            if st.op == "=":
                v = self.as_pile(t, self.loose_checked(st, self.xc.expr(st.value, fn), fn), fn, sorted_charge=True)
            else:
                cur = fn.tmp()
                fn.emit(f"{cur} = {store}")
                val = self.xc.expr(st.value, fn)
                v = self.as_pile(t, self.sum_or_difference(st.op, cur, val, fn), fn)
            if check is not None:
                fn.emit(f"{k(check)}({v})")
            fn.emit(f"{store} = {v}")
            if t.ref == "var" and self.rs.visibility.get(t.ident) in ("known", "owner"):
                fn.emit(f"G.forget({k(t.ident)}, ())")

        def if_(self, st, fn, ops):
            done = fn.tmp("c")
            if len(st.branches) > 1 or st.orelse is not None:
                fn.emit(f"{done} = False")
            for i, (test, body) in enumerate(st.branches):
                if i:
                    fn.emit(f"if not {done}:")
                    fn.depth += 1
                self.at(fn, test.span)
                # a lone `if a and b and ...`: an `if` per part, nested
                parts = self.xc.conjuncts(test, fn) if len(st.branches) == 1 and st.orelse is None else [test]
                for part in parts:
                    fn.emit(f"if {self.xc.test(part, fn)}:")
                    fn.depth += 1
                if len(st.branches) > 1 or st.orelse is not None:
                    fn.emit(f"{done} = True")
                self.body(body, fn, ops)
                fn.depth -= len(parts)
                if i:
                    fn.depth -= 1
            if st.orelse is not None:
                fn.emit(f"if not {done}:")
                fn.depth += 1
                self.body(st.orelse, fn, ops)
                fn.depth -= 1

        def for_(self, st, fn, ops):
            k = self.mod.const
            items_n, idx_n = self.ranges[id(st)][2][:2]
            self.at(fn, st.span)
            v = self.xc.expr(st.source, fn)
            items = fn.tmp("items")
            fn.emit(f"if {v}.__class__ is tuple: G.work += len({v}) + 1")
            fn.emit(f"else: G.work += cost_of({v})")
            fn.emit("if G.work > G.work_mark: over(G)")
            fn.emit(f"{items} = {'pairs_of' if len(st.names) == 2 else 'items_of'}({v})")
            fn.emit(f"L[{k(items_n)}] = {items}")
            fn.emit(f"L[{k(idx_n)}] = 0")
            i, item = fn.tmp("w"), fn.tmp("x")
            fn.emit(f"for {i}, {item} in enumerate({items}, 1):")
            fn.depth += 1
            if len(st.names) == 2:
                fn.emit(f"L[{k(st.names[0])}], L[{k(st.names[1])}] = {item}")
            else:
                fn.emit(f"L[{k(st.names[0])}] = {item}")
            fn.emit(f"L[{k(idx_n)}] = {i}")
            self.body(st.body, fn, ops)
            fn.depth -= 1

        def repeat(self, st, fn, ops):
            k = self.mod.const
            left = self.ranges[id(st)][2][0]
            self.at(fn, st.span)
            n = self.xc.expr(st.times, fn)
            w = fn.tmp("w")
            fn.emit(f"if not isinstance({n}, int): raise repeat_error({n})")
            fn.emit(f"{w} = {n}")
            fn.emit(f"L[{k(left)}] = {w}")
            fn.emit(f"while {w} > 0:")
            fn.depth += 1
            fn.emit(f"{w} -= 1")
            fn.emit(f"L[{k(left)}] = {w}")
            fn.charge(1)  # a fused loop counts its rounds as work (the step budget does not see them)
            self.body(st.body, fn, ops)
            fn.depth -= 1

    return StmtGenerator(rs, xc)


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

"""The generated module of one Ruleset (a namespace, batches of source, the constants table) and one
generated function being written (Fn)."""
from __future__ import annotations

import linecache
import types
import warnings

from ..values import skey
from .helpers import GenerationFailed, SAFE_BUILTINS, Scalar, _G_READS_ONLY, _STUB, _runtime_names, _synced


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

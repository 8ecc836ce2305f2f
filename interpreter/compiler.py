"""AST -> executable code. Expressions become Python closures `f(G, L)` (G: the game, L: the frame's
locals); statements become flat lists of ops with jumps, so that a running procedure is just
(code id, position, locals) — plain data that serializes and copies cheaply.

An op is called as op(G, L) and returns None (go on), an int (jump there) or a signal:
  SUSPEND            stop for a decision (G.pending is set; op.resume continues it later)
  RETURN             leave the current procedure
  END                the game is over
  ("call", code, locals)        run a procedure, then come back
  ("push", [(code, locals), ...]) run these (triggers), first in the list first
"""
from __future__ import annotations

import re

from rulelang import ast as A

from .builtins import (CONTAINERS, COSTS, FLAT_COST, GROWS, IMPLS, MAX_INT, RuleRuntimeError, _cost_of, _items,
                       charge, check_items, check_value, deep_cost, over)
from .builtins import WORK_BUDGET, too_much  # noqa: F401  (re-exported: they used to live here)
from .values import MAX_SIZE, Pile, Piece, fmt, readable, skey

SUSPEND = "suspend"
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


class Code:
    __slots__ = ("id", "ops", "spans", "name")

    def __init__(self, id, name=""):
        self.id = id
        self.name = name or id
        self.ops = []
        self.spans = []

    def emit(self, op, span):
        self.ops.append(op)
        self.spans.append(span)
        return len(self.ops) - 1


class Located(Exception):
    """A rule error with the rule-file position where it happened (at load: diagnostic `code`)."""

    def __init__(self, message, span, code="E501", hint="", where=None):
        self.message = message
        self.span = span
        self.code = code
        self.hint = hint
        self.where = where  # the procedure to name in the error, when not the running frame's ("": none)
        self.frames = None  # procedures called without a frame that were running: [(code, pc, locals)]
        self.caller_pc = None  # and the position after the call in the running frame
        super().__init__(f"{span.where()}: {message}" if span else message)


# ============================================================================ expressions
class ExprCompiler:
    def __init__(self, rs):
        self.rs = rs  # the Ruleset being built: tables, boards, functions
        self._fixed_consts = {}
        self._const_values = {}  # a fixed constant's value, computed once
        self.fixed_items = 0  # items of the values computed at load (see MAX_FIXED_ITEMS)

    def compile(self, e):
        m = getattr(self, "x_" + type(e).__name__)
        f = m(e)
        if self.is_constant(e) and not isinstance(e, A.Literal):
            v = self.fold(f, e)
            f = _constant(v)
        return f

    def closure(self, e):
        """A closure for a value needed now (the same as compile here; see generate.ExprGenerator)."""
        return self.compile(e)

    def fold(self, f, e):
        """The value of a constant expression, computed now: an error in it is an error in the rule file."""
        try:
            v = f(None, {})
        except Located:
            raise
        except (RuleRuntimeError, ArithmeticError, TypeError, ValueError, KeyError, IndexError) as err:
            raise Located(f"this fixed value cannot be computed: {err}", e.span, code="E502",
                          hint="it uses only fixed values, so it is computed when the rules load") from None
        if not isinstance(e, (A.Name, A.Placeholder)):  # a name or a bracket shares a value already counted
            self.charge(_size(v), e.span)
        return v

    def charge(self, n, span, what="values computed when the rules load"):
        """Count `n` more items of fixed data kept by the ruleset; too many is a load error (E503)."""
        self.fixed_items += n
        if self.fixed_items > MAX_FIXED_ITEMS:
            raise Located(f"the {what} hold more than {MAX_FIXED_ITEMS:,} items in all", span, code="E503",
                          hint="use smaller ranges and lists, or compute them while the game runs")

    def const_value(self, name):
        """The compiled value of a constant: a fixed one is computed once and shared."""
        if self.const_is_fixed(name):
            if name not in self._const_values:
                self._const_values[name] = self.compile(self.rs.program.decls[name].value)(None, {})
            value = self._const_values[name]
            return lambda G, L: value
        return self.compile(self.rs.program.decls[name].value)

    def const_is_fixed(self, name):
        """Whether a constant's value is known when compiling (it does not use player_count)."""
        if name in self._fixed_consts:
            return self._fixed_consts[name]
        decl = self.rs.program.decls.get(name)
        self._fixed_consts[name] = False  # until shown otherwise (this also ends any cycle)
        fixed = isinstance(decl, A.ConstDecl) and self.is_constant(decl.value)
        self._fixed_consts[name] = fixed
        return fixed

    def is_constant(self, e):
        """Literals, and operators and brackets over literals: computed once, when compiling."""
        if isinstance(e, A.Literal):
            return True
        if isinstance(e, A.Name):
            if e.ref == "const":
                return self.const_is_fixed(e.ident)
            return e.ref in ("member", "enum_values")
        if isinstance(e, A.Binary):
            return e.op not in ("and", "or") and self.is_constant(e.left) and self.is_constant(e.right)
        if isinstance(e, A.Unary):
            return self.is_constant(e.operand)
        if isinstance(e, (A.TupleLit, A.ListLit, A.SetLit)):
            return all(self.is_constant(x) for x in e.items)
        if isinstance(e, A.Placeholder):
            return self.is_constant(e.inner)
        return False

    def x_Literal(self, e):
        v = e.value
        return lambda G, L: v

    def x_Placeholder(self, e):
        return self.compile(e.inner)

    def x_Name(self, e):
        n = e.ident
        ref = e.ref
        if ref == "local":
            return lambda G, L: L[n]  # a missing local raises KeyError; the engine reports it with the position
        if ref == "var":
            return lambda G, L: G.data[n]
        if ref == "const":
            if self.const_is_fixed(n):
                return self.const_value(n)
            return lambda G, L: G.consts[n]
        if ref == "member":
            return lambda G, L: n
        if ref == "enum_values":
            members = tuple(self.rs.program.decls[n].members)
            return lambda G, L: members
        if ref == "table":
            rows = self.rs.table_rows[n]
            return lambda G, L: rows
        if ref == "board":
            rs = self.rs
            return lambda G, L: rs.boards[n]
        if ref == "builtin":
            if n == "me":
                def f(G, L):
                    try:
                        return L["me"]
                    except KeyError:
                        raise RuleRuntimeError("'me' is not known here") from None
                return f
            if n == "current":
                return lambda G, L: G.current
            if n == "players":
                return lambda G, L: G.active_players()
            if n == "all_players":
                return lambda G, L: tuple(range(G.n))
            if n == "player_count":
                return lambda G, L: G.n
            if n == "end_triggered":
                return lambda G, L: G.end_pending is not None
        if ref == "scenario":
            return lambda G, L: G.scenario_value(n)
        if ref == "pieces":
            from .pieces import live
            return lambda G, L: live(G, n)
        raise RuleRuntimeError(f"cannot compile name '{n}' ({ref or 'unresolved'})")

    def x_Unary(self, e):
        f = self.compile(e.operand)
        if e.op == "not":
            return lambda G, L: not f(G, L)

        def neg(G, L):
            v = f(G, L)
            if v.__class__ is not int:
                raise RuleRuntimeError(f"cannot negate {fmt(v)}")
            return -v
        return neg

    def x_Binary(self, e):
        op = e.op
        lf = self.compile(e.left)
        rf = self.compile(e.right)
        if op == "and":
            return lambda G, L: lf(G, L) and rf(G, L)
        if op == "or":
            return lambda G, L: lf(G, L) or rf(G, L)
        if op in ("==", "!=") and self.is_constant(e.right):
            v = rf(None, {})
            if v.__class__ in CONTAINERS:  # comparing with a constant list: at most its size
                cost = deep_cost(v)
                if op == "==":
                    def eq_const(G, L):
                        a = lf(G, L)
                        if a.__class__ is v.__class__:
                            charge(G, cost)
                        return a == v
                    return eq_const

                def ne_const(G, L):
                    a = lf(G, L)
                    if a.__class__ is v.__class__:
                        charge(G, cost)
                    return a != v
                return ne_const
            if op == "==":
                return lambda G, L: lf(G, L) == v
            return lambda G, L: lf(G, L) != v
        if op == "==":
            def eq(G, L):
                a = lf(G, L)
                if a.__class__ in CONTAINERS:
                    return _equal(G, a, rf(G, L))
                return a == rf(G, L)
            return eq
        if op == "!=":
            def ne(G, L):
                a = lf(G, L)
                if a.__class__ in CONTAINERS:
                    return not _equal(G, a, rf(G, L))
                return a != rf(G, L)
            return ne
        if op in ("<", "<=", ">", ">="):
            import operator
            cmp = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]

            def compare(G, L):
                a = lf(G, L)
                b = rf(G, L)
                try:
                    return cmp(a, b)
                except TypeError:
                    raise RuleRuntimeError(f"cannot compare {fmt(a)} {op} {fmt(b)}") from None
            return compare
        if op == "in":
            return lambda G, L: _contains(rf(G, L), lf(G, L), G)
        if op == "not in":
            return lambda G, L: not _contains(rf(G, L), lf(G, L), G)
        if op == "..":
            def rng(G, L):
                a, b = lf(G, L), rf(G, L)
                if not isinstance(a, int) or not isinstance(b, int):
                    raise RuleRuntimeError(f"a range needs numbers, not {fmt(a)}..{fmt(b)}")
                if b - a >= MAX_ITEMS:
                    raise RuleRuntimeError(f"the range {a}..{b} has more than {MAX_ITEMS:,} items")
                if b >= a and G is not None:
                    G.work += b - a + 1
                    if G.work > G.work_mark:
                        over(G)
                return tuple(range(a, b + 1))
            return rng

        def arith(G, L):
            return _arith(op, lf(G, L), rf(G, L), G)
        if op == "+":
            def add(G, L):
                a = lf(G, L)
                b = rf(G, L)
                if a.__class__ is int and b.__class__ is int:
                    r = a + b
                    if -MAX_INT < r < MAX_INT:
                        return r
                return _arith("+", a, b, G)
            return add
        return arith

    def x_Cond(self, e):
        t, a, b = self.compile(e.test), self.compile(e.then), self.compile(e.orelse)
        return lambda G, L: a(G, L) if t(G, L) else b(G, L)

    def x_Lambda(self, e):
        body = self.compile(e.body)
        p = e.param

        def make(G, L):
            L2 = dict(L)  # one scope per function value: its body cannot bind names, so reuse is safe

            def fn(x):
                G.work += 1
                if G.work > G.work_mark:
                    over(G)
                L2[p] = x
                return body(G, L2)
            return fn
        return make

    def x_Call(self, e):
        name = e.func.ident
        args = [(a.name, self.compile(a.value)) for a in e.args]
        if e.func.ref == "func":
            rs = self.rs
            pos = [f for _, f in args]

            def run_body(G, fn, L2):
                # no try/finally: an error here ends the game, and each run starts again at depth 0
                if G.fdepth > MAX_FUNCTION_DEPTH:
                    raise RuleRuntimeError(f"function '{name}' calls itself more than {MAX_FUNCTION_DEPTH} deep")
                G.work += 1
                if G.work > G.work_mark:
                    over(G)
                G.fdepth += 1
                value = fn.body(G, L2)
                G.fdepth -= 1
                return value

            if len(pos) == 2:
                a0, a1 = pos

                def call_user2(G, L):
                    fn = rs.functions[name]
                    p0, p1 = fn.params
                    return run_body(G, fn, {p0: a0(G, L), p1: a1(G, L)})
                return call_user2

            def call_user(G, L):
                fn = rs.functions[name]
                return run_body(G, fn, {pname: f(G, L) for pname, f in zip(fn.params, pos)})
            return call_user
        impl = _guarded(name, IMPLS[name], len(e.args))
        pos = [f for n, f in args if n is None]
        kws = [(n, f) for n, f in args if n is not None]
        if not kws:
            if len(pos) == 1:
                a0 = pos[0]
                return lambda G, L: impl(G, a0(G, L))
            if len(pos) == 2:
                a0, a1 = pos
                return lambda G, L: impl(G, a0(G, L), a1(G, L))
            return lambda G, L: impl(G, *[f(G, L) for f in pos])
        return lambda G, L: impl(G, *[f(G, L) for f in pos], **{n: f(G, L) for n, f in kws})

    def x_Index(self, e):
        tf = self.compile(e.target)
        kf = self.compile(e.index)
        if isinstance(e.target, A.Name) and e.target.ref == "var":
            vname = e.target.ident

            def index_var(G, L):
                c = G.data[vname]
                if c.__class__ is dict:
                    return c.get(kf(G, L))
                return _get(c, kf(G, L))
            return index_var

        def index(G, L):
            c = tf(G, L)
            if c.__class__ is dict:
                return c.get(kf(G, L))
            return _get(c, kf(G, L))
        return index

    def x_Field(self, e):
        tf = self.compile(e.target)
        name = e.name
        if e.target.ty is not None and e.target.ty.kind == "piece":
            from .pieces import read_field
            return lambda G, L: read_field(G, tf(G, L), name)
        rows = self.rs.row_fields

        by_row = {}  # row -> this field's value, filled on first use (tables are complete by then)

        def field(G, L):
            v = tf(G, L)
            try:
                return by_row[v]
            except KeyError:
                pass
            except TypeError:
                raise RuleRuntimeError(f"{fmt(v)} has no field '{name}'") from None
            if v.__class__ is Piece:  # a piece reached through a value of type any
                from .pieces import read_field
                return read_field(G, v, name)
            try:
                value = by_row[v] = rows[v][name]
            except (KeyError, TypeError):
                raise RuleRuntimeError(f"{fmt(v)} has no field '{name}'") from None
            return value
        return field

    def x_TupleLit(self, e):
        # a list holding lists is measured against the value limits (size and depth) when built
        fs = [self.compile(x) for x in e.items]
        if len(fs) == 2:
            a, b = fs

            def pair(G, L):
                x = a(G, L)
                y = b(G, L)
                if x.__class__ is int is y.__class__:  # coordinates: the common case
                    return (x, y)
                if x.__class__ in CONTAINERS or y.__class__ in CONTAINERS:
                    return check_value(G, (x, y))
                return (x, y)
            return pair
        return lambda G, L: check_items(G, tuple([f(G, L) for f in fs]))

    x_ListLit = x_TupleLit

    def x_SetLit(self, e):
        fs = [self.compile(x) for x in e.items]
        return lambda G, L: check_items(G, frozenset([f(G, L) for f in fs]))

    def x_MapLit(self, e):
        fs = [(self.compile(k), self.compile(v)) for k, v in e.entries]

        def mk(G, L):
            out = {}
            for kf, vf in fs:
                v = vf(G, L)
                if v is not None:
                    out[kf(G, L)] = v
            return _check_map(G, out)
        return mk

    def x_EmptyLit(self, e):
        if e.ty is not None and e.ty.name == "set":
            return lambda G, L: frozenset()
        return lambda G, L: {}

    def x_Bind(self, e):
        vf = self.compile(e.value)
        bf = self.compile(e.body)
        name = e.name

        def bind(G, L):
            L2 = dict(L)
            L2[name] = vf(G, L)
            return bf(G, L2)
        return bind

    def x_Comprehension(self, e):
        src = self.compile(e.source)
        el = self.compile(e.element)
        val = self.compile(e.value) if e.value is not None else None
        cond = self.compile(e.condition) if e.condition is not None else None
        names = e.names

        def pairs(G, L):
            s = src(G, L)
            charge(G, _cost_of(s))
            L2 = dict(L)
            if len(names) == 2:
                if isinstance(s, dict):
                    seq = [(k, s[k]) for k in sorted(s, key=skey)]
                else:
                    seq = list(enumerate(_items(s)))
                for a, b in seq:
                    L2[names[0]] = a
                    L2[names[1]] = b
                    if cond is None or cond(G, L2):
                        yield L2
            else:
                n0 = names[0]
                for x in _items(s):
                    L2[n0] = x
                    if cond is None or cond(G, L2):
                        yield L2
        if e.kind == "map":
            def mk_map(G, L):
                out = {}
                for L2 in pairs(G, L):
                    v = val(G, L2)
                    if v is not None:
                        out[el(G, L2)] = v
                return _check_map(G, out)
            return mk_map
        if len(names) == 1:
            # the common case, [f(x) for x in xs if test(x)], without the generator: a plain loop
            n0 = names[0]
            # [x for x in xs if ...] holds items of xs only: it cannot outgrow its source
            same_items = isinstance(e.element, A.Name) and e.element.ident == n0

            def mk_list(G, L):
                s = src(G, L)
                if s.__class__ is tuple:
                    items = s
                    G.work += len(items) + 1
                    if G.work > G.work_mark:
                        over(G)
                else:
                    charge(G, _cost_of(s))
                    items = _items(s)
                L2 = dict(L)
                out = []
                if cond is None:
                    for x in items:
                        L2[n0] = x
                        out.append(el(G, L2))
                else:
                    for x in items:
                        L2[n0] = x
                        if cond(G, L2):
                            out.append(el(G, L2))
                if not same_items:
                    for x in out:
                        if x.__class__ in CONTAINERS:
                            return check_value(G, tuple(out))
                return tuple(out)
            return mk_list
        return lambda G, L: check_items(G, tuple([el(G, L2) for L2 in pairs(G, L)]))


def _check_map(G, m):
    """A map just built: measured against the value limits when it holds lists, sets or maps."""
    for k, v in m.items():
        if k.__class__ in CONTAINERS or v.__class__ in CONTAINERS:
            return check_value(G, m)
    return m


def _equal(G, a, b):
    """a == b for a list, set, map or pile a: comparing two of one kind and length reads them whole."""
    if b.__class__ is a.__class__ and a is not b and len(a) == len(b):
        charge(G, deep_cost(a))
    return a == b


def _guarded(name, impl, nargs=0):
    """A built-in whose Python errors (a wrong kind of value) become rule errors naming the built-in.
    It charges the work budget in proportion to its input first (builtins.COSTS); a result that can
    outgrow its input is measured against the value limits."""
    cost = COSTS[name]
    grows = name in GROWS
    if name in FLAT_COST or (name == "count" and nargs == 1):
        # constant work: a call repeats only inside a loop, comprehension or function, which count it
        def flat(G, *args, **kws):
            try:
                return impl(G, *args, **kws)
            except (TypeError, ValueError, IndexError, AttributeError, KeyError) as e:
                raise _builtin_error(name, args, e) from None
        return flat

    def call(G, *args, **kws):  # G is a game here: calls are never folded into constants
        G.work += cost(args)
        if G.work > G.work_mark:
            over(G)
        try:
            r = impl(G, *args, **kws)
        except (TypeError, ValueError, IndexError, AttributeError, KeyError) as e:
            raise _builtin_error(name, args, e) from None
        if grows:
            check_value(G, r)
        return r
    return call


def _builtin_error(name, args, e):
    shown = ", ".join(fmt(a) for a in args if not callable(a))
    if len(shown) > 200:
        shown = shown[:200] + "..."
    return RuleRuntimeError(f"{name}({shown}) cannot be computed: {e}")


def _constant(v):
    return lambda G, L: v


def _size(v):
    """Items held directly by a value (its elements were counted when they were computed)."""
    if v.__class__ in (tuple, frozenset, dict, str):
        return len(v)
    if isinstance(v, Pile):
        return len(v)
    return 1


def _contains(coll, x, G=None):
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


def _arith(op, a, b, G=None):
    if a.__class__ in CONTAINERS or a.__class__ is str:  # list + list copies both
        n = len(a) + (len(b) if b.__class__ in CONTAINERS or b.__class__ is str else 1)
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


def _short(v):
    t = fmt(v)
    return t if len(t) <= 60 else t[:60] + "..."


def _arith_raw(op, a, b):
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


def _get(c, k):
    if c.__class__ is tuple:
        if k.__class__ is int and 0 <= k < len(c):
            return c[k]
        raise RuleRuntimeError(f"position {fmt(k)} is outside a list of {len(c)}")
    if c.__class__ is dict:
        return c.get(k)
    if c is None:
        raise RuleRuntimeError(f"cannot look up [{fmt(k)}] in none")
    raise RuleRuntimeError(f"cannot look up [{fmt(k)}] in {fmt(c)}")


def _set(c, k, v):
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
def index_chain(xc, target):
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
    piece is a PieceFieldPlace, see pieces.py)."""

    def __new__(cls, xc, target):
        if cls is Place:
            from .pieces import PieceFieldPlace, is_piece_place
            if is_piece_place(target):
                cls = PieceFieldPlace
        return object.__new__(cls)

    def __init__(self, xc, target):
        self.keys, root = index_chain(xc, target)
        self.name = root.ident
        self.is_var = root.ref == "var"
        self.text = _expr_text(target)
        self.typed(target.ty)
        # a variable whose places can be revealed: writing a place forgets what was known of it
        self.watch = self.is_var and xc.rs.visibility.get(self.name) in ("known", "owner")

    def typed(self, ty):
        """The checks a write into a place of type `ty` needs."""
        self.check = range_check(ty, self.text)  # None when no bounded number is inside the type
        self.pile_kind = ty.name if ty is not None and ty.name in ("deck", "bag", "set") else None

    def root(self, G, L):
        """The whole value this place is part of (what a write into it copies)."""
        return G.data[self.name] if self.is_var else L[self.name]

    def get(self, G, L):
        c = G.data[self.name] if self.is_var else L[self.name]
        for k in self.keys:
            c = _get(c, k(G, L))
        return c

    def set(self, G, L, v):
        if self.pile_kind is not None and v.__class__ is tuple:
            k = self.pile_kind
            v = Pile("deck", v, ()) if k == "deck" else (Pile("bag", (), v) if k == "bag" else frozenset(v))
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
        ks = [k(G, L) for k in self.keys]
        new = _set_path(root, ks, v)
        if self.is_var:
            G.data[self.name] = new
            if self.watch:
                G.forget(self.name, tuple(ks))
        else:
            L[self.name] = new


    def keys_now(self, G, L):
        """The index values of this place now (a draw keeps taking from the same pile)."""
        return tuple(k(G, L) for k in self.keys)

    def get_at(self, G, L, ks):
        c = G.data[self.name] if self.is_var else L[self.name]
        for k in ks:
            c = _get(c, k)
        return c

    def set_at(self, G, L, ks, v):
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


def range_check(ty, text):
    """A function that stops a value breaking the bounds of a range type inside `ty`, or None."""
    if ty is None:
        return None
    if ty.kind == "range":
        lo, hi = ty.low, ty.high

        def check_one(v):
            if v is not None and (v.__class__ is not int or not lo <= v <= hi):
                raise RuleRuntimeError(f"{text} would hold {fmt(v)}, outside its range {lo}..{hi}")
        return check_one
    if ty.name in ("list", "set", "deck", "bag") and ty.args:
        inner = range_check(ty.args[0], text)
        if inner is None:
            return None

        def check_items(v):
            if v is not None and not isinstance(v, dict):
                for x in _items(v):
                    inner(x)
        return check_items
    if ty.name == "map" and len(ty.args) == 2:
        inner = range_check(ty.args[1], text)
        if inner is None:
            return None

        def check_values(v):
            if isinstance(v, dict):
                for x in v.values():
                    inner(x)
        return check_values
    return None


def _set_path(c, ks, v):
    if len(ks) == 1:
        return _set(c, ks[0], v)
    return _set(c, ks[0], _set_path(_get(c, ks[0]), ks[1:], v))


def _expr_text(e):
    if isinstance(e, A.Name):
        return e.ident
    if isinstance(e, A.Index):
        return _expr_text(e.target) + "[...]"
    return "value"


# ============================================================================ collections
def _check_root(G, L, place, v):
    """After a write of a list, set or map into part of a variable: the whole variable keeps to the
    value limits (size, depth)."""
    if v.__class__ in CONTAINERS:
        check_value(G, place.root(G, L))
    else:
        root = place.root(G, L)
        charge(G, len(root) if root.__class__ in CONTAINERS else 1)  # the copy of the outer list or map


def _copy_cost(coll):
    """Adding to or removing from a collection copies it (a pile's pool is kept sorted)."""
    c = coll.__class__
    if c is Pile:
        return (len(coll) + 1) * (len(coll).bit_length() + 1)
    if c is tuple or c is frozenset:
        return len(coll) + 1
    return 1


def add_item(coll, x, G=None):
    if G is not None:
        charge(G, _copy_cost(coll))
    if isinstance(coll, tuple):
        return coll + (x,)
    if isinstance(coll, frozenset):
        return coll | {x}
    if isinstance(coll, Pile):
        if coll.kind == "bag" or coll.pool:
            return Pile(coll.kind, coll.known, coll.pool + (x,))
        return Pile(coll.kind, coll.known + (x,), ())
    raise RuleRuntimeError(f"cannot add to {fmt(coll)}")


def remove_item(coll, x, G=None):
    if G is not None:
        charge(G, _copy_cost(coll) * (deep_cost(x) if x.__class__ in CONTAINERS else 1))
    if isinstance(coll, tuple):
        if x not in coll:
            raise RuleRuntimeError(f"cannot remove {fmt(x)}: it is not there")
        i = coll.index(x)
        return coll[:i] + coll[i + 1:]
    if isinstance(coll, frozenset):
        if x not in coll:
            raise RuleRuntimeError(f"cannot remove {fmt(x)}: it is not there")
        return coll - {x}
    if isinstance(coll, Pile):
        if x in coll.known:
            i = coll.known.index(x)
            return Pile(coll.kind, coll.known[:i] + coll.known[i + 1:], coll.pool)
        if x in coll.pool:
            i = coll.pool.index(x)
            return Pile(coll.kind, coll.known, coll.pool[:i] + coll.pool[i + 1:])
        raise RuleRuntimeError(f"cannot remove {fmt(x)}: it is not there")
    raise RuleRuntimeError(f"cannot remove from {fmt(coll)}")


def distinct(xs):
    seen = set()
    out = []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


# ============================================================================ decision ops
class Pending:
    """The decision the game waits for. Plain data (serializes as a dict)."""

    __slots__ = ("kind", "player", "options", "probs", "prompt", "target", "need", "acc", "single",
                 "low", "start", "ordered", "pool")

    def __init__(self, kind, player, options, prompt="", target="", probs=None):
        self.kind = kind  # action | choose | chance
        self.player = player
        self.options = options  # list of (id, value)
        self.probs = probs
        self.prompt = prompt
        self.target = target
        self.need = 1
        self.acc = []
        self.single = True
        self.low = 1
        self.start = 0
        self.ordered = False
        self.pool = ()

    def to_dict(self):
        from .values import encode
        return {
            "kind": self.kind, "player": self.player, "prompt": self.prompt, "target": self.target,
            "options": [[i, {"$done": True} if v is _DONE else encode(v)] for i, v in self.options],
            "probs": [float(p) for p in self.probs] if self.probs is not None else None,
            "need": self.need, "acc": [encode(x) for x in self.acc], "single": self.single, "low": self.low,
            "start": self.start, "ordered": self.ordered, "pool": [encode(x) for x in self.pool],
        }

    @classmethod
    def from_dict(cls, d, boards=None):
        """A Pending from its saved dict; the fields must already have their JSON kinds (interpreter/saves.py
        checks them): anything else raises ValueError, never a half-built decision."""
        from .values import decode
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


def _choice_options(values):
    out = []
    seen = set()
    for v in values:
        i = fmt(v)
        if i in seen:
            continue
        seen.add(i)
        out.append((i, v))
    return out


class ChooseOp:
    """let x = choose COUNT [ordered] of OPTIONS [by P] [optional] [prompt "..."]"""

    def __init__(self, target, options, player, count, ordered, optional, prompt, span):
        self.target = target
        self.options = options
        self.player = player
        self.count = count
        self.ordered = ordered
        self.optional = optional
        self.prompt = prompt
        self.span = span

    def __call__(self, G, L):
        if G.rs.ending_checks and G._check_endings():
            return END
        pool = tuple(_items(self.options(G, L)))
        if self.player is not None:
            who = self.player(G, L)
            if who.__class__ is not int or not 0 <= who < G.n:
                raise RuleRuntimeError(f"choose by {fmt(who)}, which is not a player (seats are 0 to {G.n - 1})")
        elif "me" in L:
            who = L["me"]
        else:
            raise RuleRuntimeError("who chooses? 'me' is not known here (this procedure was not called from an "
                                   "action); say 'by PLAYER'")
        if self.count is None:
            low = high = 1
            single = True
        else:
            c = self.count(G, L)
            single = False
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
        p = Pending("choose", who, [], self.prompt or ("choose one" if single else f"choose {low} to {high}"),
                    self.target)
        p.need = high
        p.low = low
        p.single = single
        p.ordered = self.ordered
        p.pool = pool
        if high == 0:
            L[self.target] = None if single else ()
            return None
        _refresh_choose(p)
        if not p.options:
            raise RuleRuntimeError("nothing to choose from (an empty list of options)")
        G.pending = p
        return SUSPEND

    def resume(self, G, L, value):
        p = G.pending
        if value is _DONE:
            return self.finish(G, L, p)
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

    def finish(self, G, L, p):
        G.pending = None
        if p.single:
            L[self.target] = p.acc[0] if p.acc else None
        else:
            L[self.target] = tuple(p.acc)
        return None


class _Done:
    def __repr__(self):
        return "done"


_DONE = _Done()
DONE_ID = "done"


def _refresh_choose(p):
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


class RandomOp:
    """let x = roll COUNT of FACES  /  let x = draw COUNT from PILE"""

    def __init__(self, target, source, count, is_draw, place, span):
        self.target = target
        self.source = source
        self.count = count
        self.is_draw = is_draw
        self.place = place
        self.span = span

    def __call__(self, G, L):
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

    def step(self, G, L, p):
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
            if len(set(faces)) == 1:
                self._take(G, L, p, faces[0])
                continue
            if G.chance_mode == "sampled":
                idx = G.random_below(len(faces))
                self._take(G, L, p, faces[idx])
                continue
            counts = {}
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

    def _take(self, G, L, p, value):
        p.acc.append(value)
        if self.is_draw:
            pile = self.place.get_at(G, L, p.pool)
            charge(G, _copy_cost(pile))
            if isinstance(pile, tuple):
                self.place.set_at(G, L, p.pool, pile[1:])
            else:
                self.place.set_at(G, L, p.pool, remove_item(pile, value))

    def resume(self, G, L, value):
        p = G.pending
        G.pending = None
        self._take(G, L, p, value)
        return self.step(G, L, p)


class OfferOp:
    """offer [a, b] to P"""

    def __init__(self, actions, player, span):
        self.actions = actions  # names
        self.player = player
        self.span = span

    def __call__(self, G, L):
        if G.rs.ending_checks and G._check_endings():
            return END
        who = self.player(G, L)
        if who.__class__ is not int or not 0 <= who < G.n:
            raise RuleRuntimeError(f"offer to {fmt(who)}, which is not a player (seats are 0 to {G.n - 1})")
        opts = []
        for name in self.actions:
            opts.extend(G.rs.actions[name].legal(G, who))
        if not opts:
            raise RuleRuntimeError(f"P{who} has no legal action among {', '.join(self.actions)}: the game is stuck")
        p = Pending("action", who, opts, "take an action")
        G.pending = p
        return SUSPEND

    def resume(self, G, L, value):
        who = G.pending.player
        G.pending = None
        name, args = value
        act = G.rs.actions[name]
        L2 = dict(zip(act.param_names, args))
        L2["me"] = who
        return ("call", act.code, L2)


# ============================================================================ actions
class CompiledAction:
    def __init__(self, name, param_names, domains, requires, costs, code, text, span):
        self.name = name
        self.param_names = param_names
        self.domains = domains
        self.requires = requires  # list of (closure, span)
        self.require_fns = [r for r, _ in requires]
        self.fast_legal = None  # a generated legal(G, who), see generate.ExprGenerator.legal_function
        self.fixed_options = None
        if param_names and all(d.__class__ is _Fixed for d in domains):
            import itertools
            # the longest id combines the longest value of each domain: check it before listing them all
            longest = len(name) + len(domains) + 1 + sum(max((len(fmt(v)) for v in d.values), default=0)
                                                         for d in domains)
            if longest > MAX_ACTION_ID:
                raise Located(_long_id(name, longest), span, code="E503",
                              hint="action ids are written into every log: use shorter values, such as row names")
            combos = itertools.product(*[d.values for d in domains])
            self.fixed_options = [(name + "(" + ",".join(fmt(v) for v in vals) + ")", vals, (name, tuple(vals)))
                                  for vals in combos]
        self.costs = costs  # list of (Place, closure)
        self.code = code
        self.text = text
        self.span = span

    def legal(self, G, who):
        if self.fast_legal is not None:
            return self.fast_legal(G, who)
        out = []
        L = {"me": who}
        names = self.param_names
        n = len(names)
        requires = self.require_fns
        costs = self.costs
        name = self.name

        def ok():
            try:
                for r in requires:
                    if not r(G, L):
                        return False
                for place, amount in costs:
                    have = place.get(G, L)
                    need = amount(G, L)
                    if (have or 0) < need:
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
            if i == n:
                if ok():
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

    def describe(self, args):
        if self.text:
            vals = dict(zip(self.param_names, args))
            return re.sub(r"\{(\w+)\}", lambda m: readable(vals[m.group(1)]) if m.group(1) in vals else m.group(0),
                          self.text)
        if not args:
            return self.name
        return self.name + " " + ", ".join(f"{n}={readable(v)}" for n, v in zip(self.param_names, args))


def _long_id(name, length):
    return (f"an id of action '{name}' would be {length:,} characters long; "
            f"ids are at most {MAX_ACTION_ID} characters")


class _Fixed:
    """A parameter domain known when compiling (a literal range or list): listed once."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = distinct(_items(values))


class CompiledFunction:
    __slots__ = ("params", "body")

    def __init__(self, params, body):
        self.params = params
        self.body = body


# ============================================================================ statements
class StmtCompiler:
    def __init__(self, rs, xc):
        self.rs = rs
        self.xc = xc
        self.loops = []  # stack of (continue_target, [break op indexes])
        self.counter = 0

    def code(self, id, block, name="", prologue=None, epilogue=None):
        c = Code(id, name)
        self.loops = []
        if prologue:
            prologue(c)
        self.block(c, block)
        if epilogue:
            epilogue(c)
        return c

    def block(self, c, b):
        for s in b.stmts:
            getattr(self, "s_" + type(s).__name__)(c, s)

    def hidden(self, what):
        self.counter += 1
        return f"%{what}{self.counter}"

    # ------------------------------------------------------------------
    def s_Let(self, c, s):
        v = s.value
        name = s.name
        if isinstance(v, A.Choose):
            c.emit(ChooseOp(name, self.xc.compile(v.options), self.xc.compile(v.player) if v.player else None,
                            self.xc.compile(v.count) if v.count is not None else None, v.ordered, v.optional,
                            v.prompt, v.span), s.span)
            return
        if isinstance(v, A.Roll):
            c.emit(RandomOp(name, self.xc.compile(v.faces), self.xc.compile(v.count) if v.count is not None else None,
                            False, None, v.span), s.span)
            return
        if isinstance(v, A.Draw):
            c.emit(RandomOp(name, None, self.xc.compile(v.count) if v.count is not None else None, True,
                            Place(self.xc, v.pile), v.span), s.span)
            return
        if isinstance(v, A.New):
            from .pieces import compile_new
            f = compile_new(self.xc, v)
        else:
            f = self.xc.compile(v)

        def let(G, L):
            L[name] = f(G, L)
        c.emit(let, s.span)

    def s_Destroy(self, c, s):
        from .pieces import compile_destroy
        c.emit(compile_destroy(self.xc, s), s.span)

    def s_Assign(self, c, s):
        place = Place(self.xc, s.target)
        f = self.xc.compile(s.value)
        if s.op == "=":
            if place.keys:
                def assign(G, L):
                    v = f(G, L)
                    place.set(G, L, v)
                    if v.__class__ in CONTAINERS:
                        _check_root(G, L, place, v)
                    else:  # the outer list or map was copied
                        root = place.root(G, L)
                        if root.__class__ in CONTAINERS:
                            G.work += len(root)
                            if G.work > G.work_mark:
                                over(G)
            elif place.pile_kind is not None:  # a list stored in a bag or set is sorted or hashed
                def assign(G, L):
                    v = f(G, L)
                    if v.__class__ is tuple:
                        charge(G, (len(v) + 1) * (len(v).bit_length() + 1))
                    place.set(G, L, v)
            else:
                def assign(G, L):
                    place.set(G, L, f(G, L))
        else:
            op = "+" if s.op == "+=" else "-"

            def assign(G, L):
                cur = place.get(G, L)
                val = f(G, L)
                place.set(G, L, _arith(op, cur, val, G))
                if place.keys:
                    _check_root(G, L, place, val)
        c.emit(assign, s.span)

    def s_ExprStmt(self, c, s):
        e = s.expr
        name = e.func.ident
        proc = self.rs.program.decls[name]
        args = [(a.name, self.xc.compile(a.value)) for a in e.args]
        pnames = [p.name for p in proc.params]
        rs = self.rs

        def call(G, L):
            L2 = {}
            i = 0
            for n, f in args:
                if n is None:
                    L2[pnames[i]] = f(G, L)
                    i += 1
                else:
                    L2[n] = f(G, L)
            if "me" in L:
                L2["me"] = L["me"]
            return ("call", rs.codes["proc:" + name], L2)
        c.emit(call, s.span)

    def s_If(self, c, s):
        end_jumps = []
        for test, body in s.branches:
            tf = self.xc.compile(test)
            i = c.emit(None, test.span)
            self.block(c, body)
            end_jumps.append(c.emit(None, s.span))
            target = len(c.ops)
            c.ops[i] = _jump_unless(tf, target)
        if s.orelse is not None:
            self.block(c, s.orelse)
        end = len(c.ops)
        for j in end_jumps:
            c.ops[j] = _jump(end)

    def _loop_body(self, c, body, head):
        self.loops.append((head, []))
        self.block(c, body)
        c.emit(_jump(head), body.span)
        _, breaks = self.loops.pop()
        end = len(c.ops)
        for b in breaks:
            c.ops[b] = _jump(end)
        return end

    def s_For(self, c, s):
        src = self.xc.compile(s.source)
        items_n = self.hidden("items")
        idx_n = self.hidden("i")
        names = s.names

        def init(G, L):
            v = src(G, L)
            G.work += len(v) + 1 if v.__class__ is tuple else _cost_of(v)
            if G.work > G.work_mark:
                over(G)
            if len(names) == 2:
                if isinstance(v, dict):
                    L[items_n] = tuple((k, v[k]) for k in sorted(v, key=skey))
                else:
                    L[items_n] = tuple(enumerate(_items(v)))
            else:
                L[items_n] = _items(v)
            L[idx_n] = 0
        c.emit(init, s.span)
        head = c.emit(None, s.span)
        end_holder = []
        if len(names) == 2:
            n0, n1 = names

            def step(G, L):
                i = L[idx_n]
                items = L[items_n]
                if i >= len(items):
                    return end_holder[0]
                L[n0], L[n1] = items[i]
                L[idx_n] = i + 1
        else:
            n0 = names[0]

            def step(G, L):
                i = L[idx_n]
                items = L[items_n]
                if i >= len(items):
                    return end_holder[0]
                L[n0] = items[i]
                L[idx_n] = i + 1
        c.ops[head] = step
        end = self._loop_body(c, s.body, head)
        end_holder.append(end)

    def s_While(self, c, s):
        tf = self.xc.compile(s.test)
        head = c.emit(None, s.span)
        end = self._loop_body(c, s.body, head)
        c.ops[head] = _jump_unless(tf, end)

    def s_Repeat(self, c, s):
        tf = self.xc.compile(s.times)
        left = self.hidden("n")

        def init(G, L):
            n = tf(G, L)
            if not isinstance(n, int):
                raise RuleRuntimeError(f"repeat needs a number, not {fmt(n)}")
            L[left] = n
        c.emit(init, s.span)
        head = c.emit(None, s.span)
        end_holder = []

        def step(G, L):
            if L[left] <= 0:
                return end_holder[0]
            L[left] -= 1
        c.ops[head] = step
        end_holder.append(self._loop_body(c, s.body, head))

    def s_Loop(self, c, s):
        head = len(c.ops)
        self._loop_body(c, s.body, head)

    def s_Break(self, c, s):
        i = c.emit(None, s.span)
        self.loops[-1][1].append(i)

    def s_Continue(self, c, s):
        c.emit(_jump(self.loops[-1][0]), s.span)

    def s_Return(self, c, s):
        c.emit(lambda G, L: RETURN, s.span)

    def s_Turn(self, c, s):
        pf = self.xc.compile(s.player)
        who = self.hidden("turn")
        end_holder = []

        def start(G, L):
            p = pf(G, L)
            if not isinstance(p, int) or not 0 <= p < G.n:
                raise RuleRuntimeError(f"turn of {fmt(p)}, which is not a player")
            if G.eliminated[p]:
                return end_holder[0]
            L[who] = p
            G.current = p
            G.turns += 1
            return G.emit_event("turn_start", (p,))
        c.emit(start, s.span)
        self.block(c, s.body)

        def finish(G, L):
            return G.emit_event("turn_end", (L[who],))
        c.emit(finish, s.span)
        end_holder.append(len(c.ops))

    def s_Offer(self, c, s):
        c.emit(OfferOp(list(s.actions), self.xc.compile(s.player), s.span), s.span)

    def s_Shuffle(self, c, s):
        place = Place(self.xc, s.pile)
        if s.source is not None:
            self._shuffle_into(c, s, place, Place(self.xc, s.source))
            return

        def shuffle(G, L):
            pile = place.get(G, L)
            if not isinstance(pile, Pile):
                raise RuleRuntimeError(f"cannot shuffle {fmt(pile)}")
            charge(G, _cost_of(pile) * (len(pile).bit_length() + 1))  # the pool is kept sorted
            place.set(G, L, Pile(pile.kind, (), pile.items()))
        c.emit(shuffle, s.span)

    def s_DrawInto(self, c, s):
        # `let %items = draw COUNT from PILE` (chance and budget exactly as there; `one` is a list of at
        # most one item), then every drawn item is added to the target as by `add`
        drawn = self.hidden("items")
        count = self.xc.compile(s.count) if s.count is not None else (lambda G, L: 1)
        c.emit(RandomOp(drawn, None, count, True, Place(self.xc, s.pile), s.span), s.span)
        place = Place(self.xc, s.target)

        def add_drawn(G, L):
            for x in L.pop(drawn):
                place.set(G, L, add_item(place.get(G, L), x, G))  # place.set checks ranges
                if x.__class__ in CONTAINERS:
                    _check_root(G, L, place, x)
        c.emit(add_drawn, s.span)

    def s_Add(self, c, s):
        place = Place(self.xc, s.target)
        f = self.xc.compile(s.item)

        def add(G, L):
            x = f(G, L)
            place.set(G, L, add_item(place.get(G, L), x, G))  # place.set checks ranges
            if x.__class__ in CONTAINERS:
                _check_root(G, L, place, x)
        c.emit(add, s.span)

    @staticmethod
    def _shuffle_into(c, s, place, src):
        """shuffle SOURCE into PILE: SOURCE's items join PILE, PILE is shuffled, SOURCE is left empty."""
        def shuffle_into(G, L):
            pile = place.get(G, L)
            if not isinstance(pile, Pile):
                raise RuleRuntimeError(f"cannot shuffle into {fmt(pile)}")
            if src.name == place.name and src.is_var == place.is_var and src.keys_now(G, L) == place.keys_now(G, L):
                moved = ()  # the same place: only shuffled
            else:
                old = src.get(G, L)
                if old.__class__ not in (tuple, frozenset, Pile):
                    raise RuleRuntimeError(f"cannot shuffle the items of {fmt(old)}")
                charge(G, _cost_of(old))
                moved = tuple(_items(old))
                src.set(G, L, Pile(old.kind) if old.__class__ is Pile else old.__class__())
                pile = place.get(G, L)
            n = len(pile) + len(moved)
            charge(G, (n + 1) * (n.bit_length() + 1))  # the pool is kept sorted
            if n > MAX_SIZE:
                raise RuleRuntimeError(f"a value of more than {MAX_SIZE:,} items in all, the size limit")
            place.set(G, L, Pile(pile.kind, (), pile.items() + moved))
            for x in moved:
                if x.__class__ in CONTAINERS:
                    _check_root(G, L, place, x)
                    break
        c.emit(shuffle_into, s.span)

    def s_Remove(self, c, s):
        place = Place(self.xc, s.source)
        f = self.xc.compile(s.item)
        c.emit(lambda G, L: place.set(G, L, remove_item(place.get(G, L), f(G, L), G)), s.span)

    def s_Move(self, c, s):
        src = Place(self.xc, s.source)
        dst = Place(self.xc, s.target)
        f = self.xc.compile(s.item)

        def move(G, L):
            x = f(G, L)
            src.set(G, L, remove_item(src.get(G, L), x, G))
            dst.set(G, L, add_item(dst.get(G, L), x, G))
            if x.__class__ in CONTAINERS:
                _check_root(G, L, dst, x)
        c.emit(move, s.span)

    def s_Reveal(self, c, s):
        place = Place(self.xc, s.item)  # the checker made sure it is a place in a hidden variable
        name = place.name
        if isinstance(s.to, A.Name) and s.to.ref == "all":
            c.emit(lambda G, L: G.reveal(name, place.keys_now(G, L), None), s.span)
        else:
            tf = self.xc.compile(s.to)
            c.emit(lambda G, L: G.reveal(name, place.keys_now(G, L), tf(G, L)), s.span)

    def s_Emit(self, c, s):
        fs = [self.xc.compile(a) for a in s.args]
        name = s.event
        c.emit(lambda G, L: G.emit_event(name, tuple(f(G, L) for f in fs)), s.span)

    def s_EndGame(self, c, s):
        reason = s.reason

        def end(G, L):
            G.finish(reason or G.end_pending or "end_game")
            return END
        c.emit(end, s.span)

    def s_TriggerEnd(self, c, s):
        reason = s.reason

        def trig(G, L):
            if G.end_pending is None:
                G.end_pending = reason
        c.emit(trig, s.span)

    def s_Eliminate(self, c, s):
        f = self.xc.compile(s.player)

        def elim(G, L):
            p = f(G, L)
            if not isinstance(p, int) or not 0 <= p < G.n:
                raise RuleRuntimeError(f"cannot eliminate {fmt(p)}: not a player")
            G.eliminated = G.eliminated[:p] + (True,) + G.eliminated[p + 1:]
            if not any(not x for x in G.eliminated):
                G.finish(G.end_pending or "all players eliminated")
                return END
        c.emit(elim, s.span)

    def s_Log(self, c, s):
        fs = [self.xc.compile(x) for x in s.items]

        def log(G, L):
            vals = [f(G, L) for f in fs]
            for v in vals:
                charge(G, deep_cost(v))
            text = " ".join(v if isinstance(v, str) else readable(v) for v in vals)
            charge(G, len(text) // 16)
            G.note(text)
        c.emit(log, s.span)

    def s_Play(self, c, s):
        f = self.xc.compile(s.action)
        c.emit(lambda G, L: G.scenario_step("play", f(G, L)), s.span)

    def s_ChanceStep(self, c, s):
        f = self.xc.compile(s.outcome)
        c.emit(lambda G, L: G.scenario_step("chance", f(G, L)), s.span)

    def s_Expect(self, c, s):
        f = self.xc.compile(s.test)
        msg = s.message
        t = s.test
        if isinstance(t, A.Binary) and t.op in ("==", "!=", "<", "<=", ">", ">=", "in", "not in"):
            lf, rf = self.xc.compile(t.left), self.xc.compile(t.right)

            def expect(G, L):
                ok = f(G, L)
                detail = "" if ok else f"left side is {readable(lf(G, L))}, right side is {readable(rf(G, L))}"
                return G.scenario_step("expect", (ok, msg, detail))
        else:
            def expect(G, L):
                return G.scenario_step("expect", (f(G, L), msg, ""))
        c.emit(expect, s.span)


def _jump(target):
    return lambda G, L: target


def _jump_unless(test, target):
    def op(G, L):
        if not test(G, L):
            return target
    return op

"""The closures backend: AST -> nested Python closures `f(G, L)` (G: the game, L: the frame's locals),
and statements -> flat lists of ops with jumps (StmtCompiler), so that a running procedure is just
(code id, position, locals) — plain data that serializes and copies cheaply.

The generated backend (generate.py) is the default; this one is the reference it is tested against
(tests/test_backends.py), and StmtCompiler's op layout is the layout both use (docs/runtime.md).
"""
from __future__ import annotations

from rulelang import ast as A

from . import pieces as P
from .builtins import (CONTAINERS, COSTS, FLAT_COST, GROWS, IMPLS, MAX_INT, RuleRuntimeError, _cost_of, _items, charge,
                       check_items, check_value, deep_cost, over)
from .runtime import (END, MAX_FIXED_ITEMS, MAX_FUNCTION_DEPTH, RETURN, ChooseOp, Code, Located,
                      OfferOp, RandomOp, _arith, _builtin_error, _check_map, _check_root, _contains,
                      _equal, _expr_text, _get, _size, add_item, loose_check, remove_item, sorting_cost,
                      span_of, unpacked)
from .values import MAX_SIZE, Pile, Piece, fmt, readable, skey



# ============================================================================ expressions
class ExprCompiler:
    # Coverage (interpreter/coverage.py) sets this on its own compiler only: `on_expr(e, f)` may return a
    # closure in place of `f`, the one compiled for expression `e`. None (the default) costs nothing.
    on_expr = None

    def __init__(self, rs):
        self.rs = rs  # the Ruleset being built: tables, boards, functions
        self._fixed_consts = {}
        self._const_values = {}  # a fixed constant's value, computed once
        self.fixed_items = 0  # items of the values computed at load (see MAX_FIXED_ITEMS)
        self._recursive = None  # the rule functions that can end up calling themselves (found once)

    def recursive(self):
        """The rule functions that can call themselves, directly or through others: those in a cycle of
        the call graph. Only their calls count against the depth limit: any other call nests no deeper
        than the chain of functions written in the file. One walk of each body (a per-function search was
        quadratic in the number of functions: 1,000 functions in a cycle took seconds)."""
        if self._recursive is None:
            import networkx as nx
            decls = self.rs.program.decls
            graph = nx.DiGraph()
            for name, d in decls.items():
                if isinstance(d, A.FuncDecl):
                    graph.add_node(name)
                    graph.add_edges_from((name, x.func.ident) for x in A.walk(d.body)
                                         if isinstance(x, A.Call) and x.func.ref == "func"
                                         and isinstance(decls.get(x.func.ident), A.FuncDecl))
            found = set()
            for part in nx.strongly_connected_components(graph):
                if len(part) > 1 or any(graph.has_edge(f, f) for f in part):
                    found |= part
            self._recursive = found
        return self._recursive

    expr_methods = A.Dispatch("x_")  # x_Binary(e) for a Binary, ... (rulelang/ast.py, Dispatch)

    def compile(self, e):
        f = self.expr_methods[e.__class__](self, e)
        if self.is_constant(e) and not isinstance(e, A.Literal):
            v = self.fold(f, e)
            f = _constant(v)
        if self.on_expr is not None:
            f = self.on_expr(e, f)
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
            return lambda G, L: P.live(G, n)
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
            return lambda G, L: span_of(G, lf(G, L), rf(G, L))

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

            def counted(G, fn, L2):
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

            def plain(G, fn, L2):  # a call that cannot nest without end: not counted against the depth limit
                G.work += 1
                if G.work > G.work_mark:
                    over(G)
                return fn.body(G, L2)

            def first(G, fn, L2):  # (the call graph is read at the first call: never while only checking)
                run[0] = counted if name in self.recursive() else plain
                return run[0](G, fn, L2)
            run = [first]

            if len(pos) == 2:
                a0, a1 = pos

                def call_user2(G, L):
                    fn = rs.functions[name]
                    p0, p1 = fn.params
                    return run[0](G, fn, {p0: a0(G, L), p1: a1(G, L)})
                return call_user2

            def call_user(G, L):
                fn = rs.functions[name]
                return run[0](G, fn, {pname: f(G, L) for pname, f in zip(fn.params, pos)})
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
            return lambda G, L: P.read_field(G, tf(G, L), name)
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
                return P.read_field(G, v, name)
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

    def x_Unpack(self, e):
        vf = self.compile(e.value)
        size, index, pattern = e.size, e.index, e.pattern

        def item(G, L):
            v = vf(G, L)
            if v.__class__ is tuple and len(v) == size:
                return v[index]
            return unpacked(v, size, pattern)[index]
        return item

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




def _constant(v):
    return lambda G, L: v




# ============================================================================ statements
class StmtCompiler:
    # Coverage (interpreter/coverage.py) sets these on its own compiler only; None (the default) costs
    # nothing. `on_stmt(code, stmt, start, end)` is told the ops [start, end) each statement became;
    # `back_jumps` (a list) receives (code, op index, target) for each jump back to a loop's head.
    on_stmt = None
    back_jumps = None
    _plain_finish = None  # (code, op index, hidden local) of the last turn end emitted without an event
    _plain_turn = None  # (code, start op index, finish op index, start) of the last turn with no event at all
    _whole_loop = None  # (code, op index) where a `loop` whose whole body is one `for` starts

    stmt_methods = A.Dispatch("s_")  # s_Let(code, s) for a Let, ... (rulelang/ast.py, Dispatch)

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
        if self.back_jumps is None:  # (coverage counts the jumps back: it keeps every jump)
            _thread_jumps(c)
        return c

    def block(self, c, b):
        hook = self.on_stmt
        for s in b.stmts:
            start = len(c.ops)
            self.stmt_methods[s.__class__](self, c, s)
            if hook is not None:
                hook(c, s, start, len(c.ops))

    def hidden(self, what):
        self.counter += 1
        return f"%{what}{self.counter}"

    # ------------------------------------------------------------------
    def s_Let(self, c, s):
        v = s.value
        name = s.name
        if isinstance(v, A.Choose):
            local = _local_name(v.player) if v.player else None  # `by q`: read from the locals, no call
            player = self.xc.compile(v.player) if v.player and local is None else None
            c.emit(ChooseOp(name, self.xc.compile(v.options), player,
                            self.xc.compile(v.count) if v.count is not None else None, v.ordered, v.optional,
                            v.prompt, v.span, local), s.span)
            return
        if isinstance(v, A.Roll):
            c.emit(RandomOp(name, self.xc.compile(v.faces), self.xc.compile(v.count) if v.count is not None else None,
                            False, None, v.span), s.span)
            return
        if isinstance(v, A.Draw):
            c.emit(RandomOp(name, None, self.xc.compile(v.count) if v.count is not None else None, True,
                            P.place(self.xc, v.pile), v.span), s.span)
            return
        if isinstance(v, A.New):
            f = P.compile_new(self.xc, v)
        else:
            f = self.xc.compile(v)

        def let(G, L):
            L[name] = f(G, L)
        c.emit(let, s.span)

    def s_Destroy(self, c, s):
        c.emit(P.compile_destroy(self.xc, s), s.span)

    def s_Assign(self, c, s):
        place = P.place(self.xc, s.target)
        f = self.xc.compile(s.value)
        loose = getattr(s, "loose_type", None)
        if loose is not None and s.op == "=":  # a value the checker could not vouch for: checked as stored
            check, value = loose_check(loose, _expr_text(s.target)), f

            def f(G, L):
                return check(G, value(G, L))
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
                        charge(G, sorting_cost(v))
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
        last = self._plain_finish
        if last is not None and last[0] is c and last[1] == len(c.ops) - 1 >= head and self.back_jumps is None:
            # the body ends with a turn whose end no trigger waits for: its last op goes on at the loop's head
            # itself (the jump back stays in its place, and is still taken by a seat's skipped turn)
            c.ops[-1] = _finish_then(last[2], head)
        self._plain_finish = None
        back = c.emit(_jump(head), body.span)
        if self.back_jumps is not None:
            self.back_jumps.append((c, back, head))
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
        first = c.emit(init, s.span)
        again = self._whole_loop == (c, first)  # the whole body of a `loop`: when it ends, it starts again
        self._whole_loop = None
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
            step.ends = end_holder  # (read by _thread_jumps)
        else:
            n0 = names[0]

            def step(G, L):
                i = L[idx_n]
                items = L[items_n]
                if i >= len(items):
                    return end_holder[0]
                L[n0] = items[i]
                L[idx_n] = i + 1
            step.ends = end_holder  # (read by _thread_jumps)
        c.ops[head] = step
        self._plain_turn = None
        end = self._loop_body(c, s.body, head)
        end_holder.append(end)
        turn = self._plain_turn
        if turn is not None and turn[0] is c and turn[1] == head + 1 and turn[2] == end - 2 \
                and c.ops[end - 2].__name__ == "finish" and self.back_jumps is None:
            # `for p in S { turn p { ... } }` with no turn event: the end of a turn takes the loop's next step and
            # starts the next turn itself, then goes on at the turn's first statement. The ops stay in place
            # (saves and positions are unchanged); the turn's start and end share the turn's span (its errors
            # are said at the same place); one op instead of three counts against the step budget
            if len(names) == 1 and turn[4] == names[0]:  # `for p in S { turn p { ... } }`: both at once
                c.ops[end - 2] = _next_turn_of(items_n, idx_n, names[0], end, turn[5], turn[3], head + 2,
                                               init if again else None, head)
            else:
                c.ops[end - 2] = _next_turn(step, turn[3], head + 2)
        self._plain_turn = None

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
        step.ends = end_holder  # (read by _thread_jumps)
        c.ops[head] = step
        end_holder.append(self._loop_body(c, s.body, head))

    def s_Loop(self, c, s):
        head = len(c.ops)
        if len(s.body.stmts) == 1 and isinstance(s.body.stmts[0], A.For):
            self._whole_loop = (c, head)  # (see s_For)
        self._loop_body(c, s.body, head)
        self._whole_loop = None

    def s_Break(self, c, s):
        i = c.emit(None, s.span)
        self.loops[-1][1].append(i)

    def s_Continue(self, c, s):
        back = c.emit(_jump(self.loops[-1][0]), s.span)
        if self.back_jumps is not None:
            self.back_jumps.append((c, back, self.loops[-1][0]))

    def s_Return(self, c, s):
        c.emit(lambda G, L: RETURN, s.span)

    def s_Turn(self, c, s):
        local = _local_name(s.player)  # the usual `turn p`: read from the locals here, no call
        pf = None if local is not None else self.xc.compile(s.player)
        who = self.hidden("turn")
        end_holder = []

        triggered = {t.event for t in self.rs.program.triggers}  # events with no trigger are not emitted

        def start(G, L):
            p = L[local] if local is not None else pf(G, L)
            if p.__class__ is not int and not isinstance(p, int) or not 0 <= p < G.n:
                raise RuleRuntimeError(f"turn of {fmt(p)}, which is not a player")
            if G.eliminated[p]:
                return end_holder[0]
            L[who] = p
            G.current = p
            G.turns += 1
            if announce_start:
                return G.emit_event("turn_start", (p,))
        announce_start = "turn_start" in triggered
        first = c.emit(start, s.span)
        self.block(c, s.body)

        if "turn_end" in triggered:
            def finish(G, L):
                return G.emit_event("turn_end", (L[who],))
        else:
            def finish(G, L):
                L[who]  # what emit_event would read
            self._plain_finish = (c, len(c.ops), who)  # see _loop_body
            if not announce_start:
                self._plain_turn = (c, first, len(c.ops), start, local, who)  # see s_For
        c.emit(finish, s.span)
        end_holder.append(len(c.ops))

    def s_Offer(self, c, s):
        local = _local_name(s.player)
        op = OfferOp(list(s.actions), None if local is not None else self.xc.compile(s.player), s.span, local)
        c.emit(op, s.span)
        if s.orelse is not None:  # [offer, jump past the else block, the else block]: none legal -> the block
            skip = c.emit(None, s.span)
            op.else_pc = len(c.ops)
            self.block(c, s.orelse)
            c.ops[skip] = _jump(len(c.ops))

    def s_Shuffle(self, c, s):
        place = P.place(self.xc, s.pile)
        if s.source is not None:
            self._shuffle_into(c, s, place, P.place(self.xc, s.source))
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
        c.emit(RandomOp(drawn, None, count, True, P.place(self.xc, s.pile), s.span), s.span)
        place = P.place(self.xc, s.target)

        def add_drawn(G, L):
            for x in L.pop(drawn):
                place.set(G, L, add_item(place.get(G, L), x, G))  # place.set checks ranges
                if x.__class__ in CONTAINERS:
                    _check_root(G, L, place, x)
        c.emit(add_drawn, s.span)

    def s_Add(self, c, s):
        place = P.place(self.xc, s.target)
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
        place = P.place(self.xc, s.source)
        f = self.xc.compile(s.item)
        c.emit(lambda G, L: place.set(G, L, remove_item(place.get(G, L), f(G, L), G)), s.span)

    def s_Move(self, c, s):
        src = P.place(self.xc, s.source)
        dst = P.place(self.xc, s.target)
        f = self.xc.compile(s.item)

        def move(G, L):
            x = f(G, L)
            src.set(G, L, remove_item(src.get(G, L), x, G))
            dst.set(G, L, add_item(dst.get(G, L), x, G))
            if x.__class__ in CONTAINERS:
                _check_root(G, L, dst, x)
        c.emit(move, s.span)

    def s_Reveal(self, c, s):
        place = P.place(self.xc, s.item)  # the checker made sure it is a place in a hidden variable
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

    def _reason(self, s):
        """The reason of an end_game / trigger_end: (G, L) -> text (its literal, or its expression's value,
        which must be a text)."""
        if s.reason_expr is None:
            reason = s.reason
            return lambda G, L: reason
        f = self.xc.compile(s.reason_expr)

        def computed(G, L):
            v = f(G, L)
            if v.__class__ is not str:
                raise RuleRuntimeError(f"the reason the game ends must be a text, not {fmt(v)[:100]}")
            return v[:200]
        return computed

    def s_EndGame(self, c, s):
        reason = self._reason(s)

        def end(G, L):
            G.finish(reason(G, L) or G.end_pending or "end_game")
            return END
        c.emit(end, s.span)

    def s_TriggerEnd(self, c, s):
        reason = self._reason(s)

        def trig(G, L):
            if G.end_pending is None:
                G.end_pending = reason(G, L)
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
                # both sides and their types: the scenario shows them as a rule file writes them
                detail = "" if ok else (lf(G, L), t.left.ty, rf(G, L), t.right.ty)
                return G.scenario_step("expect", (ok, msg, detail))
        else:
            def expect(G, L):
                return G.scenario_step("expect", (f(G, L), msg, ""))
        c.emit(expect, s.span)


def _jump(target):
    def jump(G, L):
        return target
    jump.jump_to = target  # (read by _thread_jumps)
    return jump


def jump_target(ops, t):
    """Where going on at op `t` of `ops` really goes on: past any plain jumps (a jump does nothing else)."""
    for _ in range(len(ops)):  # (a loop of jumps only, `loop { }`, stays where it is)
        to = getattr(ops[t], "jump_to", None) if t < len(ops) else None
        if to is None:
            break
        t = to
    return t


def _thread_jumps(c):
    """A jump, an if's or while's test, or a loop's step, whose target is a plain jump goes straight to where
    that one goes: one op fewer to run there (nothing else changes: a jump does nothing but go on elsewhere,
    and no decision is ever pending at one, so saved positions are the same)."""
    ops = c.ops
    for i, op in enumerate(ops):
        ends = getattr(op, "ends", None)
        if ends:  # a for's or repeat's step: where the loop ends
            ends[0] = jump_target(ops, ends[0])
            continue
        to = getattr(op, "jump_to", None)
        if to is not None:
            new = jump_target(ops, to)
            if new != to:
                ops[i] = _jump(new)
            continue
        to = getattr(op, "else_to", None)
        if to is not None:
            new = jump_target(ops, to)
            if new != to:
                ops[i] = _jump_unless(op.test, new)


def _local_name(e):
    """The name of a plain local (a loop's player, a parameter), read by the op itself from its locals (the
    same KeyError when it is not there as the compiled expression); else None."""
    return e.ident if isinstance(e, A.Name) and e.ref == "local" else None


def _finish_then(who, target):
    """The end of a turn that no trigger waits for, followed by a jump to `target` (see _loop_body)."""
    def finish(G, L):
        L[who]  # what emit_event would read
        return target
    return finish


def _next_turn(step, start, body):
    """A turn's end fused with its loop's next step and the next turn's start (see s_For): what the ops
    step and start do in a row, then the turn's first statement."""
    def next_turn(G, L):
        r = step(G, L)
        if r is None:
            r = start(G, L)
        return body if r is None else r
    return next_turn


def _next_turn_of(items_n, idx_n, name, end, who, start, body, init=None, step=None):
    """_next_turn of `for NAME in S { turn NAME { ... } }`: the loop's step and the usual start of the turn
    (a seat of the game still playing) in one function; any other seat's turn is started by the turn's own
    start (which skips the turn of an eliminated seat, or says what is wrong).

    `init`: the loop is the whole body of a `loop { }`: when it has run through S, the jump back and the
    loop's start (`init`) are taken here too, unless the start fails (what it charged is undone and the ops
    as they are say the error at their place) or S is empty (the loop's `step` ends it again)."""
    def next_turn(G, L):
        i = L[idx_n]
        items = L[items_n]
        if i >= len(items):
            if init is None:
                return end
            work, fdepth = G.work, G.fdepth
            try:
                init(G, L)
            except Exception:
                G.work, G.fdepth = work, fdepth
                return end
            items = L[items_n]
            if not items:
                return step
            i = 0
        p = L[name] = items[i]
        L[idx_n] = i + 1
        if p.__class__ is not int or not 0 <= p < G.n or G.eliminated[p]:
            r = start(G, L)
            return body if r is None else r
        L[who] = p
        G.current = p
        G.turns += 1
        return body
    return next_turn


def _jump_unless(test, target):
    def op(G, L):
        if not test(G, L):
            return target
    op.test = test  # (read by _thread_jumps)
    op.else_to = target
    return op

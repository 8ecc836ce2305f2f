"""Checked expressions -> generated Python functions: ExprGenerator (with Hoisting and Loops)."""
from __future__ import annotations

import re
import types

from rulelang import ast as A
from ..builtins import CONTAINERS, COSTS, FLAT_COST, GROWS, IMPLS, MAX_INT, RuleRuntimeError, charge_read, deep_cost
from ..reuse_names import reuse_names
from ..runtime import MAX_ACTION_ID
from .helpers import (emit_memo_lookup, emit_read_charge, GenerationFailed, MAX_KEPT_IDS, MAX_MASKED, SMALL_INT, Scalar, _FALLBACK, _LAZY, _PLAIN_COMPARISON, _calls, _item_kind, _loop_call, _size_of, _values_call)
from .hoisting import Hoisting
from .loops import Loops
from .module import Fn, Module


class ExprGenerator(Hoisting, Loops):
    """Compiles expressions to generated functions; the same interface as closures.ExprCompiler (which it
    uses for the values computed when the rules load: constant folding stays as it is)."""

    backend = "generated"
    gen_methods = A.Dispatch("g_")  # g_Binary(e, fn) for a Binary, ... (rulelang/ast.py, Dispatch)

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
        remembered = not counted  # (a call that can nest is never answered from memory: see emit_memo_lookup)
        if remembered:
            emit_memo_lookup(fn, self.mod.const(ident), pys, self.rs.program.decls.get(name))
        counted = counted and not self.calls_none(body)
        if counted:
            fn.emit("G.fdepth += 1")
        r = self.expr(body, fn)
        if counted:
            fn.emit("G.fdepth -= 1")
        if remembered:
            fn.emit(f"if memo_ is not None: memo_[key_] = ({r}, G.work - start_)")
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
        kept = None  # (list, its distinct items): of the next parameter's domain, computed before the loops
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
            elif kept is not None:
                # a domain that reads none of the parameters before: the same list in every round of their
                # loops (a list is never changed), so its distinct items are found once and taken again
                v = self.expr(what, fn)
                src, got = kept
                fn.emit(f"if {v} is {src}: {d} = {got}")
                fn.emit("else:")
                fn.emit(f"    {d} = distinct_items({v})")
                fn.emit(f"    {src} = {v}")
                fn.emit(f"    {got} = {d}")
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
            kept = None
            if i + 1 < len(specs) and specs[i + 1][0] == "expr" and id(specs[i + 1][1]) in fn.hoisted:
                kept = (fn.tmp("r"), fn.tmp("r"))
                fn.emit(f"{kept[0]} = {kept[1]} = UNSET")
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
            shown = ", ".join("fmt(" + p + ")" if shape is None else f"flat_text({p}, {k(shape)})"
                              for p, shape in zip(pys, act.shapes))
            if act.has_patterns:  # a pattern parameter's value that does not fit: said as the closures say it
                fn.emit("try:")
                fn.emit(f"    {aid} = {k(act.name + '(')} + {k(',')}.join([{shown}]) + {k(')')}")
                fn.emit("except RuleRuntimeError as err:")
                fn.emit(f"    raise Located({listing} + str(err), {k(act.span)}) from None")
            else:
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
        return self.gen_methods[e.__class__](self, e, fn)

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

    def g_Name(self, e, fn):
        n = e.ident
        ref = e.ref
        k = self.mod.const
        if ref == "local":
            return self.local(n, fn)
        if ref == "var":
            return self.read_var(n, fn)
        if ref == "const":
            if self.cl.const_is_fixed(n):
                return k(self.cl.const_value(n)(None, {}))
            # (a constant's value never changes once the game has it: read once, as a variable is within a
            # statement, so that `next_cell[x]` written three times is one look-up)
            got = fn.cached(("const", n))
            if got is not None:
                return got
            t = fn.tmp()
            fn.emit(f"{t} = G.consts[{k(n)}]")
            fn.remember(("const", n), t)
            return t
        if ref == "member":
            return k(n)
        if ref == "enum_values":
            return k(tuple(self.rs.program.decls[n].members))
        elif ref == "table":
            return k(self.rs.table_rows[n])
        elif ref == "board":
            return k(self.rs.boards[n])
        t = fn.tmp()
        if ref == "builtin" and n == "me":
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

    def g_Unpack(self, e, fn):
        """An item of a tuple pattern: v[i] when v is a tuple of the pattern's size, else unpacked() says why not."""
        v = self.expr(e.value, fn)
        if not v.isidentifier():
            held = fn.tmp()
            fn.emit(f"{held} = {v}")
            v = held
        t = fn.tmp()
        size, index = int(e.size), int(e.index)
        fn.emit(f"{t} = {v}[{index}] if {v}.__class__ is tuple and len({v}) == {size} "
                f"else unpacked({v}, {size}, {self.mod.const(str(e.pattern))})[{index}]")
        return t

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
        if self._group_loop_call(e):
            return self.group_loop(e, fn)
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
        if not flat and cost is charge_read and not kws:
            emit_read_charge(self.mod, pos, fn)
        elif not flat:
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
            kind = getattr(self.rs, "pieces", {}).get(e.target.ty.name)
            position = kind.index.get(e.name) if kind is not None and e.name != "id" else None
            if position is None:  # (`id`, or a kind not built yet: read_field says what is wrong)
                fn.emit(f"{t} = read_field(G, {v}, {k(e.name)})")
                return t
            # the row of a live piece of the declared kind, read in place; anything else (none, a piece
            # destroyed, another kind through `any`) goes to read_field, which raises the rule error
            fn.emit(f"if {v}.__class__ is Piece and {v}.kind == {k(kind.name)}:")
            fn.emit(f"    {t} = G.data.get({k(kind.key)}, {{}}).get({v}.id)")
            fn.emit(f"    {t} = read_field(G, {v}, {k(e.name)}) if {t} is None else {t}[{int(position)}]")
            fn.emit(f"else: {t} = read_field(G, {v}, {k(e.name)})")
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

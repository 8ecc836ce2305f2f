"""Statements -> fused generated ops: StmtGenerator lays out the op list as the closures' StmtCompiler
and puts one generated op at the start of each run of statements that cannot stop."""
from __future__ import annotations

from rulelang import ast as A
from ..builtins import CONTAINERS, MAX_INT, RuleRuntimeError
from ..closures import StmtCompiler, jump_target
from ..runtime import END, MAX_FRAMES, RETURN, Located, _expr_text, loose_check, range_check
from ..values import fmt
from .expressions import ExprGenerator
from .helpers import Scalar, _blocks
from .module import Fn


# ============================================================================ statements: fused ops
def relocate(err, span, where):
    """An error inside a fused op, as the engine reports it for the statement that raised it (`where`: the
    procedure, action or trigger the op belongs to, which need not be the running frame's)."""
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
    return RuleRuntimeError(f"procedures call each other more than {MAX_FRAMES} deep")


def repeat_error(n):
    return RuleRuntimeError(f"repeat needs a number, not {fmt(n)}")


def _statement_names():
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
                self.stmt_methods[st.__class__](self, c, st)
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
            self.write_path(place, inside, v, fn)
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
            fn.emit(f"{self.mod.const(loose_check(loose, _expr_text(st.target)))}(G, {v})")
            return v

        def range_checked(self, target, v, fn):
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



def make_stmt_generator(rs, xc):
    """A statement compiler that lays out the op list exactly as the closures' StmtCompiler (same positions,
    spans and hidden locals: saves and pcs mean the same), then puts one generated op at the start of each
    maximal run of statements that cannot stop; the run's own ops stay in place behind it."""
    return StmtGenerator(rs, xc)

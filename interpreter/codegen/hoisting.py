"""Hoisting in generated loops: what a loop can compute once before it (see ExprGenerator)."""
from __future__ import annotations

from rulelang import ast as A
from ..builtins import FLAT_COST
from ..optimise import tree as X
from .helpers import _G_USE, _PURE_BUILTINS, _PURE_REFS, _children, _loop_call, _size_of


class Hoisting:
    """ExprGenerator's hoisting: parts of a loop computed once before it, guarded searches, remembered
    invariants (a mixin: its methods run on the ExprGenerator)."""

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

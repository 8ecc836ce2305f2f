"""Loops the expression generator writes inline instead of calling a built-in (see ExprGenerator)."""
from __future__ import annotations

from rulelang import ast as A
from ..boards import Board
from ..builtins import CONTAINERS, IMPLS, MAX_INT, _cost_of, _items
from .helpers import _item_kind


class Loops:
    """ExprGenerator's loops written inline: any/all, line_length, count/sum, the walked items (a mixin:
    its methods run on the ExprGenerator)."""

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

    def _group_loop_call(self, e):
        """group(b, n, where: x => test) with b a board known when the rules load (a Board)."""
        if not (e.func.ident == "group" and e.func.ref != "func" and len(e.args) == 3
                and e.args[0].name is None and e.args[1].name is None and e.args[2].name == "where"
                and isinstance(e.args[2].value, A.Lambda)):
            return False
        b = e.args[0].value
        return (b.__class__ is A.Name and b.ref == "board"
                and self.rs.boards.get(b.ident).__class__ is Board)

    def group_loop(self, e, fn):
        """`group(b, n, where: x => test)` as Board.group's walk written here, the test in the loop (no call
        of a function per node): the same nodes tested in the same order (the node, then breadth first),
        the same work (1 per test, looked at as the function value charged it; the walk's charge per node
        taken; the nodes put in board order by Board._in_order), result and errors as the built-in."""
        k = self.mod.const
        b = self.expr(e.args[0].value, fn)
        n = self.expr(e.args[1].value, fn)
        lam = e.args[2].value
        t = fn.tmp()
        adj, seen, queue, near, at = fn.tmp("g"), fn.tmp("g"), fn.tmp("g"), fn.tmp("g"), fn.tmp("x")
        fn.emit(f"{t} = ()")
        fn.emit("try:")
        fn.depth += 1
        fn.emit(f"{adj} = board_adj({b})")
        fn.emit(f"if {n} in {adj}:")  # (a node that cannot be a key: the built-in's TypeError, said the same)
        fn.depth += 1
        self.preload(fn, lam.body)
        hoisted = self.hoist(fn, [lam.param], lam.body, rounds=3)  # the node, then its group's neighbours
        saved = fn.env
        fn.env = dict(saved)
        x0 = fn.bind(lam.param, "x")  # the node itself is tested first
        fn.emit(f"{x0} = {n}")
        fn.charge(1)
        r = self.expr(lam.body, fn)
        fn.emit(f"if {r}:")
        fn.depth += 1
        fn.emit(f"{seen} = {{{n}: True}}")
        fn.emit(f"{queue} = [{n}]")
        fn.emit(f"for {at} in {queue}:")  # (a list walked as it grows: the deque's order, first in first out)
        fn.depth += 1
        fn.emit(f"{near} = {adj}[{at}]")
        fn.charge(f"len({near}) + 1")
        x = fn.bind(lam.param, "x")  # a new name: what was remembered about the node is not about the others
        fn.emit(f"for {x} in {near}:")
        fn.emit(f"    if {x} in {seen}: continue")
        fn.depth += 1
        fn.charge(1)
        r = self.expr(lam.body, fn)
        fn.emit(f"if {r}:")
        fn.emit(f"    {seen}[{x}] = True")
        fn.emit(f"    {queue}.append({x})")
        fn.depth -= 2
        fn.emit(f"{t} = group_order({b}, {seen}, G)")
        fn.depth -= 2
        fn.env = saved
        self.unhoist(fn, hoisted)
        fn.depth -= 1
        fn.emit("except BUILTIN_ERRORS as err:")
        fn.emit(f"    raise builtin_error({k('group')}, ({b}, {n}, ), err) from None")
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

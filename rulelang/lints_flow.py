"""W316, variables read before anything assigned them: a flow analysis over setup, the flow, actions and
triggers (run after the other deeper checks, those of rulelang/lints_static.py: see lints.py)."""
from __future__ import annotations

from typing import Any, Iterator, Optional, cast

from . import ast as A
from .lint_registry import CheckResults, registry
from .lints_static import Node, _game_nodes, _runs, _scalar_type, _sccs, _var_root, _where

# a set of candidate variables, as a bit mask (bit i: the i-th candidate)
Mask = int


# ---------------------------------------------------------------------------------------------- W316
NONE_DEFAULT = ("str", "player", "node", "tuple", "any")
ARITH = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=", ".."}

LINTS, lint = registry()  # W316


class _ReadFlow:
    """Follows the rules in the order they run from setup (setup, the game_start triggers, the flow; the
    procedures, functions, triggers and offered actions they run, each where it runs) with the set of
    variables some statement may have assigned by then. A read of a variable that has no start value (and
    so holds none) in a place where none stops the game (a field, arithmetic, a comparison of order, whose
    turn, ...) when no statement on any path before it can have assigned the variable, and no condition
    around it looks at the variable, is a finding. Loops are followed once; the first round is a path.

    Sets of variables (assigned, and those a condition around looks at: the guard) are bit masks over the
    candidates (an int: bit i for the i-th), so that a step costs the same however many variables have been
    assigned; what a block or procedure may assign, and which candidates an expression mentions, are worked
    out once per check. Every step (a statement, an expression, a trigger fired, an action offered, an
    ending looked at) counts towards the bound: MAX_VISITS, or VISITS_PER_NODE per node of the game's rules
    when that is more (a big file is followed as far as a small one)."""

    MAX_DEPTH = 40  # procedures, functions and triggers followed one inside the other; deeper ones only assign
    MAX_VISITS = 100_000  # steps followed (at least); past the bound nothing more is reported (bounded time)
    VISITS_PER_NODE = 10

    def __init__(self, c: CheckResults, candidates: dict[str, bool]) -> None:
        self.c = c
        self.prog = c.prog
        self.cands = candidates
        self.bit = {name: 1 << i for i, name in enumerate(candidates)}
        self.findings: dict[int, A.Name] = {}  # id(name) -> a read before assignment
        self.stack: set[str] = set()
        self.visits = 0
        self.max_visits = max(self.MAX_VISITS, self.VISITS_PER_NODE * len(_game_nodes(c)))
        self.memo: dict[tuple[Any, ...], Mask] = {}  # (what, name, assigned, guard) -> assigned after: the same walk gives the same findings
        self.triggers: dict[str, list[A.TriggerDecl]] = {}
        for t in self.prog.triggers:
            self.triggers.setdefault(t.event, []).append(t)
        self.runs = _runs(c)
        self._mentions: dict[int, Mask] = {}  # id(node) -> mask of the candidates it mentions
        self._writes: dict[int, Mask] = {}  # id(root) -> mask of the candidates it (and what it calls) may assign
        self._proc_writes: Optional[dict[str, Mask]] = None  # procedure -> mask, through the procedures it calls
        self._fire_writes: dict[str, Mask] = {}  # event -> mask its triggers may assign
        self._offer_ids: dict[int, int] = {}  # id(offer statement) -> the number of its list of actions
        self._offer_lists: dict[tuple[str, ...], int] = {}  # list of actions offered (a tuple) -> its number

    def over(self) -> bool:
        self.visits += 1
        return self.visits > self.max_visits

    # -- masks
    def mentioned(self, e: Optional[A.Expr]) -> Mask:
        """The candidates an expression mentions (a mask), each node's worked out once."""
        if e is None:
            return 0
        masks = self._mentions
        got = masks.get(id(e))
        if got is not None:
            return got
        bit = self.bit
        todo: list[tuple[Node, bool]] = [(e, False)]
        while todo:
            n, ready = todo.pop()
            if ready:
                m = bit.get(n.ident, 0) if isinstance(n, A.Name) and n.ref == "var" else 0
                for k in A.iter_child_nodes(n):
                    m |= masks[id(k)]
                masks[id(n)] = m
                continue
            if id(n) in masks:
                continue
            todo.append((n, True))
            todo.extend((k, False) for k in A.iter_child_nodes(n) if id(k) not in masks)
        return masks[id(e)]

    def writes(self, root: Node) -> Mask:
        """The candidates a part of the rules may assign, through the procedures it calls (a mask)."""
        got = self._writes.get(id(root))
        if got is None:
            r = self.runs.of(root)
            got = self._names(r.writes)
            procs = self.proc_writes()
            for p in r.calls:
                got |= procs.get(p, 0)
            self._writes[id(root)] = got
        return got

    def _names(self, names: set[str]) -> Mask:
        m = 0
        for v in names:
            m |= self.bit.get(v, 0)
        return m

    def proc_writes(self) -> dict[str, Mask]:
        """procedure -> the candidates it may assign through every procedure it calls: the procedures'
        call graph in strongly connected components, callees first, each procedure walked once."""
        if self._proc_writes is None:
            runs = self.runs
            procs = [d.name for d in self.prog.decls.values() if isinstance(d, A.ProcDecl) and d.body is not None]
            out: dict[str, Mask] = {}
            def callees(p: str) -> list[str]:
                r = runs.proc(p)
                return r.calls if r is not None else []

            for comp in _sccs(procs, callees):
                m = 0
                for p in comp:
                    r = runs.proc(p)
                    if r is None:
                        continue
                    m |= self._names(r.writes)
                    for q in r.calls:
                        m |= out.get(q, 0)
                for p in comp:
                    out[p] = m
            self._proc_writes = out
        return self._proc_writes

    # -- expressions
    def expr(self, e: Optional[A.Expr], assigned: Mask, guard: Mask, strict: bool = False) -> None:
        if self.over() or e is None:
            return
        if isinstance(e, A.Name):
            if strict and e.ref == "var":
                self.read(e, assigned, guard)
            return
        if isinstance(e, A.Index):
            if isinstance(e.target, A.Name) and e.target.ref == "var" and self.cands.get(e.target.ident):
                if strict:
                    self.read(e.target, assigned, guard)  # a seat of a per-player variable
                self.expr(e.index, assigned, guard)
                return
            self.expr(e.target, assigned, guard, strict=True)
            self.expr(e.index, assigned, guard)
            return
        if isinstance(e, A.Field):
            self.expr(e.target, assigned, guard, strict=True)
            return
        if isinstance(e, A.Unary):
            self.expr(e.operand, assigned, guard, strict=e.op == "-")
            return
        if isinstance(e, A.Binary):
            if e.op in ("and", "or"):
                self.expr(e.left, assigned, guard)
                self.expr(e.right, assigned, guard | self.mentioned(e.left))
                return
            s = e.op in ARITH
            self.expr(e.left, assigned, guard, strict=s)
            self.expr(e.right, assigned, guard, strict=s)
            return
        if isinstance(e, A.Cond):
            self.expr(e.test, assigned, guard)
            g = guard | self.mentioned(e.test)
            self.expr(e.then, assigned, g)
            self.expr(e.orelse, assigned, g)
            return
        if isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.ref == "func":
            for a in e.args:
                self.expr(a.value, assigned, guard)
            d = self.prog.decls.get(e.func.ident)
            key = ("func", e.func.ident, assigned, guard)
            if isinstance(d, A.FuncDecl) and d.name not in self.stack and key not in self.memo \
                    and len(self.stack) < self.MAX_DEPTH:
                self.memo[key] = assigned
                self.stack.add(d.name)
                self.expr(d.body, assigned, guard)
                self.stack.discard(d.name)
            return
        if isinstance(e, A.Comprehension):
            self.expr(e.source, assigned, guard, strict=True)
            self.expr(e.condition, assigned, guard)
            g = guard | self.mentioned(e.condition)
            self.expr(e.element, assigned, g)
            self.expr(e.value, assigned, g)
            return
        for child in _children(e):
            self.expr(child, assigned, guard)

    def read(self, name: A.Name, assigned: Mask, guard: Mask) -> None:
        b = self.bit.get(name.ident)
        if b is not None and not (assigned | guard) & b and id(name) not in self.findings:
            self.findings[id(name)] = name

    # -- statements
    def block(self, b: Optional[A.Block], assigned: Mask, guard: Mask) -> Mask:
        if b is None:
            return assigned
        for st in b.stmts:
            assigned = self.stmt(st, assigned, guard)
        return assigned

    def stmt(self, s: A.Stmt, assigned: Mask, guard: Mask) -> Mask:
        if self.over():
            return assigned
        x = self.expr
        if isinstance(s, A.Assign):
            if isinstance(s.target, A.Index):
                x(s.target.index, assigned, guard)
            x(s.value, assigned, guard, strict=s.op != "=")
            root = _var_root(s.target)
            if root is None:
                return assigned
            if s.op != "=":
                self.read(cast(A.Name, _root_name(s.target)), assigned, guard)  # a root: a variable's name
            return assigned | self.bit.get(root, 0)
        if isinstance(s, A.Let):
            v = s.value
            if isinstance(v, A.Choose):
                self.decision(assigned)
                x(v.options, assigned, guard, strict=True)
                x(v.player, assigned, guard, strict=True)
            elif isinstance(v, A.Draw):
                x(v.pile, assigned, guard)
            elif isinstance(v, A.Roll):
                x(v.faces, assigned, guard)
            else:
                x(v, assigned, guard)
            return assigned
        if isinstance(s, A.If):
            out = assigned
            g = guard
            for test, body in s.branches:
                x(test, assigned, g)
                g |= self.mentioned(test)
                out |= self.block(body, assigned, g)
            if s.orelse is not None:
                out |= self.block(s.orelse, assigned, g)
            return out
        if isinstance(s, A.For):
            x(s.source, assigned, guard, strict=True)
            return assigned | self.block(s.body, assigned, guard)
        if isinstance(s, A.While):
            x(s.test, assigned, guard)
            return assigned | self.block(s.body, assigned, guard | self.mentioned(s.test))
        if isinstance(s, A.Repeat):
            x(s.times, assigned, guard, strict=True)
            return assigned | self.block(s.body, assigned, guard)
        if isinstance(s, A.Loop):
            return assigned | self.block(s.body, assigned, guard)
        if isinstance(s, A.Turn):
            x(s.player, assigned, guard, strict=True)
            assigned = self.fire("turn_start", assigned)
            assigned = self.block(s.body, assigned, guard)
            return self.fire("turn_end", assigned)
        if isinstance(s, A.Offer):
            x(s.player, assigned, guard, strict=True)
            return self.offer(s, assigned)
        if isinstance(s, A.Emit):
            for a in s.args:
                x(a, assigned, guard)
            return self.fire(s.event, assigned)
        if isinstance(s, A.ExprStmt):
            e = s.expr
            if isinstance(e, A.Call) and isinstance(e.func, A.Name):
                d = self.prog.decls.get(e.func.ident)
                if isinstance(d, A.ProcDecl):
                    for a in e.args:
                        x(a.value, assigned, guard)
                    if d.name in self.stack or len(self.stack) >= self.MAX_DEPTH:
                        return assigned | self.writes(d.body)
                    key = ("proc", d.name, assigned, guard)
                    if key not in self.memo:
                        self.stack.add(d.name)
                        self.memo[key] = self.block(d.body, assigned, guard)
                        self.stack.discard(d.name)
                    return self.memo[key]
            x(e, assigned, guard)
            return assigned
        if isinstance(s, A.Eliminate):
            x(s.player, assigned, guard, strict=True)
            return assigned
        if isinstance(s, A.Reveal):
            x(s.item, assigned, guard)
            if not (isinstance(s.to, A.Name) and s.to.ident == "all"):
                x(s.to, assigned, guard, strict=True)
            return assigned
        if isinstance(s, (A.Add, A.Remove, A.Move, A.DrawInto, A.Shuffle, A.Log, A.Destroy)):
            for child in _children(s):
                if isinstance(child, A.Expr):
                    x(child, assigned, guard)
            return assigned | self.writes(s)
        return assigned

    def decision(self, assigned: Mask) -> None:
        """Endings are checked before every decision."""
        key = ("decision", assigned)
        if key in self.memo:
            return
        self.memo[key] = assigned
        for e in self.prog.endings:
            self.expr(e.condition, assigned, 0)

    def offer(self, s: A.Offer, assigned: Mask) -> Mask:
        which = self._offer_ids.get(id(s))
        if which is None:  # offers of the same actions share their walks; an offer's list is read once
            lists = self._offer_lists
            which = self._offer_ids[id(s)] = lists.setdefault(tuple(s.actions), len(lists))
        key = ("offer", which, assigned)
        if key not in self.memo:
            self.memo[key] = self._offer(s, assigned)
        return self.memo[key]

    def _offer(self, s: A.Offer, assigned: Mask) -> Mask:
        self.decision(assigned)
        out = assigned
        for name in s.actions:
            if self.over():
                break
            d = self.prog.decls.get(name)
            if not isinstance(d, A.ActionDecl) or name in self.stack:
                continue
            if len(self.stack) >= self.MAX_DEPTH:
                out |= self.writes(d)
                continue
            self.stack.add(name)
            guard = 0
            for p in d.params:
                self.expr(p.domain, assigned, guard, strict=True)
            for r in d.requires:
                self.expr(r.test, assigned, guard)
                guard |= self.mentioned(r.test)
            for cost in d.costs:
                self.expr(cost.amount, assigned, guard, strict=True)
                self.expr(cost.target, assigned, guard, strict=True)
            after = self.block(d.effect, assigned, guard)
            after = self.fire("action_done", after)
            out |= after
            self.stack.discard(name)
        return out

    def fire(self, event: str, assigned: Mask) -> Mask:
        key = ("fire", event, assigned)
        if key not in self.memo:
            # a cascade back to this event while its triggers run: all they may assign counts as assigned
            w = self._fire_writes.get(event)
            if w is None:
                w = 0
                for t in self.triggers.get(event, ()):
                    w |= self.writes(t.body)
                self._fire_writes[event] = w
            self.memo[key] = assigned | w
            self.memo[key] = self._fire(event, assigned)
        return self.memo[key]

    def _fire(self, event: str, assigned: Mask) -> Mask:
        for t in self.triggers.get(event, ()):
            if self.over():
                break
            key = "trigger@" + _where(t.span) + t.event
            if key in self.stack or len(self.stack) >= self.MAX_DEPTH:
                assigned = assigned | self.writes(t.body)
                continue
            self.stack.add(key)
            guard = 0
            if t.condition is not None:
                self.expr(t.condition, assigned, guard)
                guard = self.mentioned(t.condition)
            assigned = assigned | self.block(t.body, assigned, guard)
            self.stack.discard(key)
        return assigned


def _children(n: Node) -> Iterator[A.Expr]:
    """The expressions right below an expression or statement (an argument's value for the argument)."""
    for child in A.iter_child_nodes(n):
        if isinstance(child, A.Arg):
            yield child.value
        elif isinstance(child, A.Expr):
            yield child


def _root_name(e: Optional[A.Expr]) -> Optional[A.Expr]:
    while isinstance(e, A.Index):
        e = e.target
    return e


@lint("W316")
def read_before_assignment(c: CheckResults, code: str) -> None:
    prog = c.prog
    cands: dict[str, bool] = {}  # variable -> per player
    for d in prog.of_kind("var"):
        if d.value is not None:
            continue
        t = _scalar_type(c, d)
        if t is None:
            continue
        if t.name in NONE_DEFAULT or t.kind in ("enum", "record", "piece"):
            cands[d.name] = d.per_player
    if not cands:
        return
    flow = _ReadFlow(c, cands)
    try:
        assigned = 0
        setup = prog.decls.get("setup")
        if isinstance(setup, A.ProcDecl):
            assigned = flow.block(setup.body, assigned, 0)
        assigned = flow.fire("game_start", assigned)
        main = prog.decls.get("flow")
        if isinstance(main, A.ProcDecl):
            flow.block(main.body, assigned, 0)
    except RecursionError:
        pass  # rules nested deeper than the walk can follow: what was found before still holds
    for name in sorted(flow.findings.values(), key=lambda n: (n.span.path, n.span.line, n.span.column)):
        c.warn(name.span, code, f"'{name.ident}' is read here before anything assigns it: it has no start value, "
                                "so it is none here",
               hint=f"give it a start value (var {name.ident}: ... = VALUE) or assign it in setup; "
                    f"or test {name.ident} != none first")

"""The checker: resolves every name and types every expression before anything runs.

It walks the merged Program (see program.py), records on each `Name` what it refers to (`ref`)
and on each expression its type (`ty`), and reports problems as diagnostics. All problems are
collected; none stops the walk. Lints (warnings) live in lints.py.

Error codes: E1xx declarations, E2xx names, E3xx types, E4xx statements in the wrong place.
"""
from __future__ import annotations

import difflib
import re
import sys
from types import FrameType
from typing import Any, Optional

from . import ast as A
from . import types as T
from .diagnostics import ERROR, WARNING, Source
from .checker_pieces import PieceChecks
from .checker_statements import StatementChecks
from .scopes import Context, Scope, _loose  # noqa: F401  (_loose: checked by its tests)
from .library import BOARD_GENERATORS, BUILTIN_EVENTS, FUNCTIONS, SCENARIO_VALUES, VALUES
from .lints import run_lints
from .program import Program

MAX_SUGGESTIONS = 100  # did-you-mean hints computed per file; later unknown names get the plain hint
MAX_SUGGESTED_NAME = 100  # longer names get no did-you-mean hint
MAX_INFER_DEPTH = 40  # functions checked early (for their result's type) one inside the other
MAX_SUGGEST_WORK = 200_000  # names compared for did-you-mean hints per file (then no more hints)
MAX_SCENARIO_CHAIN = 100  # scenarios one chain of `after` may hold (each replays the chain before it: n x 100 at most)

KEYWORD_HINTS = {"true", "false", "none"}


class Checker(StatementChecks, PieceChecks, A.NodeVisitor):
    expr_methods = A.Dispatch("e_")  # e_Binary(e, scope, ctx, expected) for a Binary, ...

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self.diags: list = []
        self._reported: set = set()  # (span, code, message) already reported: a part checked twice reports once
        self.types: dict[str, T.Type] = {}  # enum/record name -> Type
        self.globals: dict[str, Any] = {}  # name -> (ref, Type)
        self.calls: dict[str, set[str]] = {}  # caller decl name -> set of called procedure names
        self.me_uses: dict[str, A.Span] = {}  # procedure name -> span of its first use of 'me' (a name, or choose without 'by')
        self.me_free_calls: list = []  # (call span, procedure name, where): calls from places without 'me'
        self.offered: set[str] = set()
        self.emitted: set[str] = set()
        self.ends: list = []  # (reason, span)
        self.placeholders: list = []  # (span, what)
        self.var_reads: set = set()
        self.var_writes: set = set()
        self._current: Optional[str] = None
        self.endless_loops: list = []  # loops with no break/return/end_game inside (lints decide)
        self._placeholder_what = ""  # what a ?value inside a table row stands for
        self._lambda_ok = False  # a function value is being passed straight to a built-in
        self._suggestions = 0  # did-you-mean hints computed so far
        self._suggest_work = 0  # candidate names looked at for them
        self._decl_order: Optional[dict[str, int]] = None  # declaration name -> position in the file (built once)
        self._funcs_checked: dict[str, str] = {}  # function name -> "busy" / "done": results without a declared type are inferred
        self._infer_depth = 0  # functions being checked early, one inside the other, for their result's type

    # ------------------------------------------------------------------ reporting
    def err(self, span: Optional[A.Span], code: str, message: str, hint: str = "", severity: str = ERROR) -> None:
        assert span is not None  # (every node the checker reports on has its span)
        key = (span.path, span.line, span.column, span.end_line, span.end_column, code, message)
        if key in self._reported:  # e.g. a declared type resolved when declared and again when checked
            return
        self._reported.add(key)
        src = self.prog.sources.get(span.path) or Source("", span.path)
        self.diags.append(src.diag(code, message, span.line, span.column, severity=severity, hint=hint,
                                   end_line=span.end_line, end_column=span.end_column))

    def warn(self, span: Optional[A.Span], code: str, message: str, hint: str = "") -> None:
        self.err(span, code, message, hint, severity=WARNING)

    def suggest(self, name: str, candidates: Any) -> str:
        """A did-you-mean hint. `candidates` may be a function giving them (only called when needed).
        At most MAX_SUGGESTIONS per file are computed, so that a file of many unknown names checks fast."""
        if (self._suggestions >= MAX_SUGGESTIONS or self._suggest_work >= MAX_SUGGEST_WORK
                or len(name) > MAX_SUGGESTED_NAME):
            return ""
        self._suggestions += 1
        if callable(candidates):
            candidates = candidates()
        n = len(name)
        # difflib's ratio is at most 2*min(lengths)/(sum of lengths): skip names that cannot reach the cutoff
        pool = [c for c in candidates if 2 * min(n, len(c)) >= 0.69 * (n + len(c))]
        self._suggest_work += len(candidates) + len(pool)
        if self._suggest_work > MAX_SUGGEST_WORK:
            return ""
        pool.sort()
        close = difflib.get_close_matches(name, pool, n=1, cutoff=0.7)
        return f"did you mean '{close[0]}'?" if close else ""

    # ------------------------------------------------------------------ entry
    def run(self) -> Checker:
        p = self.prog
        for d in p.decls.values():
            if isinstance(d, A.EnumDecl):
                self.types[d.name] = T.Type(d.name, kind="enum")
            elif isinstance(d, A.RecordDecl):
                self.types[d.name] = T.Type(d.name, kind="record")
            elif isinstance(d, A.PieceDecl):
                self.types[d.name] = T.Type(d.name, kind="piece")
        for d in p.decls.values():
            self.declare(d)
            # a name that would hide a built-in value, or a callable that would hide a built-in function
            # (a variable may share a function's name: `first(xs)` then says 'first' is a variable)
            callable_decl = isinstance(d, (A.FuncDecl, A.ProcDecl, A.ActionDecl, A.EventDecl))
            if d.name in VALUES or (callable_decl and d.name in FUNCTIONS):
                what = "value" if d.name in VALUES else "function"
                self.err(getattr(d, "name_span", None) or d.span, "E205",
                         f"'{d.name}' is a built-in {what}; a {d.kind} cannot take its name",
                         hint=f"choose another name for this {d.kind}")
        for name, decl in p.members.items():
            if name in VALUES:
                self.err(decl.span, "E205", f"'{name}' is a built-in name; {'an enum member' if decl.kind == 'enum' else 'a row or node'} cannot take it",
                         hint="choose another name")
        for name, decl in p.members.items():
            if isinstance(decl, A.BoardDecl):
                t = T.NODE
            else:
                t = self.types.get(decl.name if isinstance(decl, A.EnumDecl) else decl.record, T.ANY)
            self.globals[name] = ("member", t)
        for d in p.decls.values():
            self._current = d.name
            self.check_decl(d)
        for t in p.triggers:
            self._current = t.name
            self.check_trigger(t)
        for e in p.endings:
            self._current = e.name
            self.expect_type(self.expr(e.condition, Scope(), Context("ending")), T.BOOL, e.condition, "an ending condition")
            self.ends.append((e.name, e.span))
        for inv in p.invariants:  # conditions on the state, checked only when asked (rulelang validate)
            self._current = f"invariant {inv.name}"
            t = self.expr(inv.condition, Scope(), Context("invariant"))
            if t.name == "none" or not T.compatible(t, T.BOOL):
                self.err(inv.condition.span, "E340", f"an invariant is a condition (true or false), not {t}",
                         hint="write a test of the state, e.g. invariant \"no debt\": all(players, p => coins[p] >= 0)")
        for s in (p.score, p.tiebreak, p.payoff, p.heuristic):
            if s is not None:
                self._current = s.name
                sc = Scope()
                sc.names[s.param] = ("local", T.PLAYER)
                assert s.value is not None  # (the grammar gives every score, payoff and heuristic its value)
                t = self.expr(s.value, sc, Context("score"))
                if s.payoff or s.heuristic:  # a utility, an estimate: a whole number
                    if t.name == "none" or not T.compatible(t, T.INT):
                        what = "a heuristic" if s.heuristic else "a payoff"
                        self.err(s.value.span, "E301", f"{what} is a number (what the seat wins or loses, "
                                                       f"or how well it stands), not {t}",
                                 hint=("write heuristic p = vp[p] + count(hand[p])" if s.heuristic else
                                       "write payoff p = chips_won(p) - chips_paid(p)"))
                elif not s.tiebreak:
                    self.expect_type(t, T.INT, s.value, "a score")
                elif t.name not in ("list", "tuple", "int", "any"):
                    self.err(s.value.span, "E301", f"a tiebreak is a number or a list of numbers, not {t}",
                             hint="write tiebreak p = [most_important(p), next(p)]")
        self.check_scenarios(p)
        self.check_me_reaches()
        return self

    def check_me_reaches(self) -> None:
        """E209 for a call, from a place without 'me' (setup, the flow, a phase, a trigger), of a procedure
        that uses 'me' itself or through the procedures it calls: it would fail when it runs."""
        if not self.me_free_calls:
            return
        needs = {}  # procedure -> (span of the 'me', the procedure holding it), for those that need 'me'
        for name, span in self.me_uses.items():
            needs[name] = (span, name)
        changed = True
        while changed:  # callers of a procedure that needs 'me' need it too (linear in calls per round)
            changed = False
            for caller, callees in self.calls.items():
                decl = self.prog.decls.get(caller)
                if caller in needs or not (isinstance(decl, A.ProcDecl) and decl.proc_kind == "procedure"):
                    continue
                for callee in sorted(callees):
                    if callee in needs:
                        needs[caller] = needs[callee]
                        changed = True
                        break
        where = {"setup": "setup", "flow": "the flow", "phase": "a phase", "trigger": "a trigger"}
        for span, name, kind in self.me_free_calls:
            if name in needs:
                me_span, holder = needs[name]
                through = "" if holder == name else f" (through '{holder}')"
                self.err(span, "E209", f"procedure '{name}' uses 'me'{through} at line {me_span.line}, but here it "
                                       f"is called from {where.get(kind, 'a place')} where there is no 'me'",
                         hint=f"give '{holder}' the player as a parameter (procedure {holder}(p: player)) and use "
                              "it instead of 'me', or call it only from actions")

    # ------------------------------------------------------------------ declarations
    def resolve_type(self, t: Any) -> T.Type:
        if t is None:
            return T.ANY
        if isinstance(t, A.TypeRange):
            if t.low > t.high:
                self.err(t.span, "E302", f"empty range type {t.low}..{t.high}", hint="write the lower bound first")
            return T.rng(t.low, t.high)
        if isinstance(t, A.TypeName):
            if t.name in T.BASIC:
                return T.BASIC[t.name]
            if t.name in self.types:
                return self.types[t.name]
            if t.name in T.GENERIC_ARITY:
                self.err(t.span, "E303", f"'{t.name}' needs its item type, e.g. {t.name}[int]")
                return T.ANY
            known = set(T.BASIC) | set(self.types) | set(T.GENERIC_ARITY)
            self.err(t.span, "E201", f"unknown type '{t.name}'", hint=self.suggest(t.name, known) or
                     "types are int, bool, str, player, node, list[T], set[T], map[K, V], deck[T], bag[T], "
                     "a range like 0..5, or an enum or record you declare")
            return T.ANY
        if isinstance(t, A.TypeGeneric):
            args = tuple(self.resolve_type(a) for a in t.args)
            arity = T.GENERIC_ARITY.get(t.name)
            if arity is None:
                self.err(t.span, "E201", f"unknown type '{t.name}[...]'",
                         hint="generic types are list, set, map, deck, bag and tuple")
                return T.ANY
            if arity != -1 and len(args) != arity:
                self.err(t.span, "E303", f"'{t.name}' takes {arity} type argument{'s' if arity > 1 else ''}, not {len(args)}")
                return T.ANY
            if t.name in ("set", "map", "bag", "deck") and args and args[0].name == "map":
                what = "keys of a map" if t.name == "map" else f"items of a {t.name}"
                self.err(t.span, "E324", f"maps cannot be the {what}",
                         hint="use a tuple or a name as the key, or a list of maps")
                return T.ANY
            return T.Type(t.name, args, kind="generic")
        return T.ANY

    def declare(self, d: A.Decl) -> None:
        if isinstance(d, A.ConstDecl):
            self.globals[d.name] = ("const", self.resolve_type(d.type) if d.type else T.ANY)
        elif isinstance(d, A.VarDecl):
            t = self.resolve_type(d.type)
            if d.per_player:
                t = T.list_of(t)  # one value per seat, indexed by a player: vp[me]
            self.globals[d.name] = ("var", t)
        elif isinstance(d, A.TableDecl):
            self.globals[d.name] = ("table", T.list_of(self.types.get(d.record, T.ANY)))
        elif isinstance(d, A.BoardDecl):
            self.globals[d.name] = ("board", T.BOARD)
        elif isinstance(d, A.FuncDecl):
            self.globals[d.name] = ("func", self.resolve_type(d.result) if d.result else T.ANY)
        elif isinstance(d, A.ProcDecl):
            self.globals[d.name] = ("proc", T.NONE)
        elif isinstance(d, A.ActionDecl):
            self.globals[d.name] = ("action", T.NONE)
        elif isinstance(d, A.EventDecl):
            self.globals[d.name] = ("event", T.NONE)
        elif isinstance(d, (A.EnumDecl, A.RecordDecl)):
            self.globals[d.name] = ("type", T.ANY)
        elif isinstance(d, A.PieceDecl):  # a piece kind's name is the list of its live pieces
            self.globals[d.name] = ("pieces", T.list_of(self.types[d.name]))

    def check_decl(self, d: A.Decl) -> None:
        if isinstance(d, A.FuncDecl) and self._funcs_checked.get(d.name):
            return  # checked already, when a call needed its result
        if isinstance(d, (A.ProcDecl, A.FuncDecl, A.ActionDecl)) and d.placeholder is not None:
            kind = d.proc_kind if isinstance(d, A.ProcDecl) else d.kind
            self.placeholders.append((d.span, f"{kind} {d.name} ({d.placeholder or 'invented rule'})"))
        if isinstance(d, A.ConstDecl):
            t = self.expr(d.value, Scope(), Context("const", pure=True))
            if self._decl_order is None:
                self._decl_order = {name: i for i, name in enumerate(self.prog.order)}
            order = self._decl_order
            for n in A.walk(d.value):
                if isinstance(n, A.Name) and n.ref == "const" and order.get(n.ident, -1) >= order.get(d.name, 0):
                    self.err(n.span, "E211", f"constant '{d.name}' uses '{n.ident}', which is declared "
                                             f"{'as itself' if n.ident == d.name else 'after it'}",
                             hint="constants are computed in the order they are declared")
            if d.type is not None:
                self.expect_exact(t, self.globals[d.name][1], d.value, f"constant '{d.name}'")
            else:
                self.globals[d.name] = ("const", t)
        elif isinstance(d, A.RecordDecl):
            seen = set()
            for f in d.fields:
                if f.name in seen:
                    self.err(f.span, "E101", f"field '{f.name}' is declared twice in record '{d.name}'")
                seen.add(f.name)
                ft = self.resolve_type(f.type)
                if f.default is not None:
                    self.expect_type(self.expr(f.default, Scope(), Context("const", pure=True)), ft, f.default,
                                     f"the default of field '{f.name}'")
        elif isinstance(d, A.TableDecl):
            self.check_table(d)
        elif isinstance(d, A.VarDecl):
            t = self.resolve_type(d.type)
            if d.value is not None:
                vt = self.expr(d.value, Scope(), Context("const", pure=True), expected=t)
                self.expect_type(vt, t, d.value, f"the start value of '{d.name}'")
            elif not d.per_player and t.name not in ("list", "set", "map", "deck", "bag") and t.kind != "range":
                pass
            if d.visibility == "owner" and not d.per_player:
                self.err(d.span, "E304", "'visible to owner' needs a per-player variable",
                         hint="write: per player var NAME: TYPE ... visible to owner")
        elif isinstance(d, A.BoardDecl):
            self.check_board(d)
        elif isinstance(d, A.FuncDecl):
            self._funcs_checked[d.name] = "busy"
            scope = self.param_scope(d.params, Context("function", pure=True), allow_domain=False)
            t = self.expr(d.body, scope, Context("function", pure=True, name=d.name))
            if d.result is not None:
                self.expect_type(t, self.globals[d.name][1], d.body, f"the result of function '{d.name}'")
            elif t.name != "none":  # no declared result: the body's type (a text given to a number is E301)
                self.globals[d.name] = ("func", t)
            self._funcs_checked[d.name] = "done"
        elif isinstance(d, A.ProcDecl):
            ctx = Context(d.proc_kind, has_me=d.proc_kind == "procedure", name=d.name)
            scope = self.param_scope(d.params, ctx, allow_domain=False)
            if d.proc_kind == "procedure":
                scope.names.setdefault("me", ("builtin", T.PLAYER))
            self.block(d.body, scope, ctx)
        elif isinstance(d, A.ActionDecl):
            self.check_action(d)
        elif isinstance(d, A.EventDecl):
            self.param_scope(d.params, Context("event"), allow_domain=False)
        elif isinstance(d, A.PieceDecl):
            self.check_piece_decl(d)

    def check_table(self, d: A.TableDecl) -> None:
        rec = self.prog.decls.get(d.record)
        if not isinstance(rec, A.RecordDecl):
            self.err(d.span, "E202", f"table '{d.name}' names '{d.record}', which is not a record",
                     hint=self.suggest(d.record, lambda: [r.name for r in self.prog.of_kind("record")]) or
                     "declare: record NAME { field: type, ... }")
            return
        fields = {f.name: f for f in rec.fields}
        order = [f.name for f in rec.fields]
        for row in d.rows:
            given = {}
            pos = 0
            for name, value in row.values:
                if name is None:
                    if pos >= len(order):
                        self.err(value.span, "E305", f"row '{row.name}' has more values than record '{rec.name}' has fields ({len(order)})")
                        break
                    name = order[pos]
                    pos += 1
                elif name not in fields:
                    self.err(value.span, "E203", f"record '{rec.name}' has no field '{name}'",
                             hint=self.suggest(name, fields) or "fields: " + ", ".join(order))
                    continue
                if name in given:
                    self.err(value.span, "E305", f"field '{name}' is given twice in row '{row.name}'")
                given[name] = value
                why = row.placeholder or d.placeholder or "invented value"
                self._placeholder_what = f"{d.name}.{row.name}.{name} ({why})"
                vt = self.expr(value, Scope(), Context("const", pure=True))
                self._placeholder_what = ""
                self.expect_type(vt, self.resolve_type(fields[name].type), value, f"field '{name}' of '{row.name}'")
                if d.placeholder is not None or row.placeholder is not None:
                    if not isinstance(value, A.Placeholder):
                        self.placeholders.append((value.span, f"{d.name}.{row.name}.{name} ({why})"))
            for f in rec.fields:
                if f.name not in given and f.default is None:
                    self.err(row.span, "E306", f"row '{row.name}' gives no value for field '{f.name}'",
                             hint=f"add {f.name}: VALUE, or give the field a default in record '{rec.name}'")

    def check_board(self, d: A.BoardDecl) -> None:
        if d.spec is not None:
            spec = d.spec
            if not (isinstance(spec, A.Call) and isinstance(spec.func, A.Name) and spec.func.ident in BOARD_GENERATORS):
                self.err(spec.span, "E307", "a board is a generator call or a { a -- b } graph",
                         hint="generators: " + ", ".join(sorted(BOARD_GENERATORS)))
                return
            lo, hi, kws, _ = BOARD_GENERATORS[spec.func.ident]
            spec.func.ref = "generator"
            pos = [a for a in spec.args if a.name is None]
            if not lo <= len(pos) <= hi:
                self.err(spec.span, "E308", f"{spec.func.ident} takes {lo} argument{'s' if lo != 1 else ''}, not {len(pos)}")
            for a in spec.args:
                if a.name is not None and a.name not in kws:
                    self.err(a.span, "E309", f"{spec.func.ident} has no option '{a.name}'",
                             hint=("options: " + ", ".join(kws)) if kws else "it takes no options")
                at = self.expr(a.value, Scope(), Context("const", pure=True))
                want = T.BOOL if a.name in ("diagonals", "row_zero_at_top") else T.INT
                self.expect_type(at, want, a.value, f"an argument of {spec.func.ident}()")
        if d.spec is not None and d.edges:
            self.err(d.span, "E307", f"board '{d.name}' is generated: its edges come from the generator",
                     hint="a generated board's block only sets node attributes: node (0, 3)(marked: true)")
        for name, args, span in d.nodes:
            if isinstance(name, A.Expr):
                self.expr(name, Scope(), Context("const", pure=True))
                if d.spec is None:
                    self.err(span, "E307", "a graph board names its nodes: node a(kind: x)")
            elif d.spec is not None:
                self.err(span, "E307", f"'{name}' is not a node of a generated board",
                         hint="name a generated board's node by its coordinates: node (0, 3)(marked: true)")
            for a in args:
                if a.name is None:
                    self.err(a.span, "E309", "node attributes are named: node a(kind: x)")
                self.expr(a.value, Scope(), Context("const", pure=True))

    def param_scope(self, params: list, ctx: Context, allow_domain: bool = True, scope: Optional[Scope] = None) -> Scope:
        scope = scope or Scope()
        for prm in params:
            t = self.resolve_type(prm.type) if prm.type is not None else None
            if prm.domain is not None:
                if not allow_domain:
                    self.err(prm.domain.span, "E401", "only action parameters take 'in DOMAIN'")
                dt = self.expr(prm.domain, scope, ctx)
                if not T.is_collection(dt):
                    self.err(prm.domain.span, "E310", f"the domain of '{A.param_text(prm)}' must be a list, set or "
                                                      f"range, not {dt}")
                et = T.element(dt)
                if t is None:
                    t = et
                elif not T.compatible(et, t):
                    self.err(prm.domain.span, "E311", f"the domain holds {et}, but '{prm.name}' is declared {t}")
            if t is None:
                t = T.ANY
            if prm.name in scope.names:
                self.err(prm.span, "E101", f"parameter '{prm.name}' is declared twice")
            scope.names[prm.name] = ("local", t)
        return scope

    def check_action(self, d: A.ActionDecl) -> None:
        ctx = Context("action", has_me=True, name=d.name)
        scope = Scope()
        scope.names["me"] = ("builtin", T.PLAYER)
        for prm in d.params:
            if prm.domain is None:
                t = self.resolve_type(prm.type) if prm.type is not None else None
                finite = t is not None and (t.kind in ("enum", "record", "range", "piece") or t.name in ("bool", "player"))
                if not finite:
                    self.err(prm.span, "E312", f"parameter '{prm.name}' needs a domain to choose from",
                             hint=f"write {prm.name} in LIST (or give it a finite type: an enum, a record, a range, bool or player)")
            self.param_scope([prm], ctx, allow_domain=True, scope=scope)
        self.check_pattern_names(d)
        for r in d.requires:
            self.expect_type(self.expr(r.test, scope, ctx), T.BOOL, r.test, "a require")
        for c in d.costs:
            tt = self.expr(c.target, scope, ctx)
            self.check_lvalue(c.target, scope, ctx)
            self.expect_type(tt, T.INT, c.target, "a cost")
            self.expect_type(self.expr(c.amount, scope, ctx), T.INT, c.amount, "a cost amount")
        if d.effect is not None:
            self.block(d.effect, Scope(scope), ctx)
        self.check_text_template(d)

    def check_pattern_names(self, d: A.ActionDecl) -> None:
        """The names of an action's parameters, those its tuple patterns bind included, are all different."""
        plain: set[str] = set()
        patterned: set[str] = set()  # (two plain parameters of one name: param_scope says so)
        for p in d.params:
            named = [(n, span) for _hidden, _text, bound in p.patterns for n, span in bound] if p.shape else \
                [(p.name, p.span)]
            for name, span in named:
                if name in patterned or (p.shape and name in plain):
                    self.err(span, "E101", f"parameter '{name}' is declared twice",
                             hint="give each name of the parameters and their patterns once")
                (patterned if p.shape else plain).add(name)

    def check_text_template(self, d: A.ActionDecl) -> None:
        """Each {name} in an action's text must name one of its parameters, or a name one of their tuple
        patterns binds (only those are filled in)."""
        names = list(dict.fromkeys(n for p in d.params for n in (A.shape_names(p.shape) if p.shape else [p.name])))
        for m in re.finditer(r"\{(\w+)\}", d.text or ""):
            if m.group(1) not in names:
                span = d.text_span or d.span
                self.err(span, "E328", f"'{{{m.group(1)}}}' in the text of action '{d.name}' is not one of its "
                                       "parameters",
                         hint=("the text can show the parameters: " + ", ".join("{" + n + "}" for n in names))
                         if names else f"action '{d.name}' has no parameters, so its text shows no values")

    def check_trigger(self, t: A.TriggerDecl) -> None:
        ctx = Context("trigger", name=t.name)
        scope = Scope()
        if t.event in BUILTIN_EVENTS:
            types = BUILTIN_EVENTS[t.event]
        elif isinstance(self.prog.decls.get(t.event), A.EventDecl):
            types = [self.resolve_type(p.type) for p in self.prog.decls[t.event].params]
        else:
            known = list(BUILTIN_EVENTS) + [e.name for e in self.prog.of_kind("event")]
            self.err(t.span, "E204", f"unknown event '{t.event}'",
                     hint=self.suggest(t.event, known) or "built-in events: " + ", ".join(BUILTIN_EVENTS) +
                     "; declare your own with: event NAME(params)")
            types = [T.ANY] * len(t.params)
        if len(types) != len(t.params):
            self.err(t.span, "E313", f"event '{t.event}' has {len(types)} parameter{'s' if len(types) != 1 else ''}, "
                                     f"the trigger names {len(t.params)}")
        for name, ty in zip(t.params, list(types) + [T.ANY] * len(t.params)):
            scope.names[name] = ("local", ty)
        if t.condition is not None:
            self.expect_type(self.expr(t.condition, scope, ctx), T.BOOL, t.condition, "a trigger condition")
        self.block(t.body, Scope(scope), ctx)

    def check_scenarios(self, p: Program) -> None:
        """Every scenario, each once; a scenario that continues another (`after`) after that one, in a
        scope below the scope its blocks ended in (its locals are known)."""
        by_name = p.scenarios_by_name()
        in_cycle = self.scenario_cycles(p.scenarios, by_name)
        scopes: dict = {}  # id(scenario) -> the scope its blocks ended in
        broken: set = set()  # id(scenario) of those whose chain does not reach a first scenario
        depths: dict = {}  # id(scenario) -> how many scenarios its chain holds, itself included
        for sc in p.scenarios:
            if sc.after is not None:
                self.err_scenario_after(sc, by_name, in_cycle.get(id(sc)))
            # up the chain to a scenario checked already, the first one, or where it breaks
            path, known, whole = p.scenario_walk(sc, by_name, scopes, broken)
            below = scopes[id(known)] if known is not None else None
            if not whole:  # a broken chain: the scenario on its own (the others when their turn comes)
                broken.update(id(part) for part in path)
                path, below = ([sc] if id(sc) not in scopes else []), None
            depth = depths.get(id(known), 0) if whole and known is not None else 0
            for part in reversed(path):  # the first scenario of the chain first
                self._current = f"scenario {part.name}"
                below = scopes[id(part)] = self.check_scenario(part, below)
                depth = depths[id(part)] = depth + 1 if whole else 1
                if depth == MAX_SCENARIO_CHAIN + 1:  # (said once, at the first scenario past the limit)
                    self.err(part.after_span, "E419", f"scenario \"{part.name}\" continues a chain of "
                                                      f"{MAX_SCENARIO_CHAIN} scenarios; a chain holds at most "
                                                      f"{MAX_SCENARIO_CHAIN}",
                             hint="each scenario of a chain replays the whole chain before it: start a new chain "
                                  "here (drop 'after' and set up the position again), or continue an earlier one")

    @staticmethod
    def scenario_cycles(scenarios: list, by_name: dict) -> dict:
        """id(scenario) -> the cycle it is on (its scenarios in `after` order, starting with it), for every
        scenario on a cycle of `after`s. Each scenario names at most one other, so following the names from
        every scenario once, and marking where each walk went, finds every cycle in time linear in the file."""
        walked: dict = {}  # id(scenario) -> the walk that first reached it
        cycles: dict = {}
        for walk, start in enumerate(scenarios):
            path, now = [], start
            while now is not None and id(now) not in walked:
                walked[id(now)] = walk
                path.append(now)
                now = by_name.get(now.after) if now.after is not None else None
            if now is not None and walked[id(now)] == walk:  # this walk came back onto itself: a new cycle
                ring = path[path.index(now):]
                for k, member in enumerate(ring):
                    cycles[id(member)] = ring[k:] + ring[:k]
        return cycles

    CYCLE_NAMES_SHOWN = 6  # scenarios of a cycle named in E418's message (a hostile file may chain thousands)

    def err_scenario_after(self, sc: A.ScenarioDecl, by_name: dict, cycle: Optional[list] = None) -> None:
        """E417 for `after` naming no scenario, E418 for a scenario on a cycle of `after`s (``cycle``: the
        cycle from it, as `scenario_cycles` found it)."""
        assert sc.after is not None  # (called for a scenario with `after`)
        if sc.after not in by_name:
            self.err(sc.after_span, "E417", f"there is no scenario \"{sc.after}\" for scenario \"{sc.name}\" "
                                            "to continue", hint=self.suggest(sc.after, by_name))
            return
        if cycle:
            shown = " after ".join(f'"{x.name}"' for x in cycle[:self.CYCLE_NAMES_SHOWN])
            more = len(cycle) - self.CYCLE_NAMES_SHOWN
            names = shown + (f" after ... ({more} more)" if more > 0 else "") + f' after "{sc.name}"'
            self.err(sc.after_span, "E418", f"scenarios continue each other in a cycle: {names}",
                     hint="the first scenario of a chain starts the game: one of these must not be 'after' another")

    def check_scenario(self, sc: A.ScenarioDecl, below: Optional[Scope] = None) -> Scope:
        """Check one scenario; returns the scope its blocks ended in. ``below``: the scope of the scenario it
        continues."""
        ctx = Context("scenario", scenario=True, has_me=False, name=sc.name)
        if sc.after is not None:
            for setting, span in sc.setting_spans:
                what = "with variant" if setting == "variant" else setting
                self.err(span, "E416", f"scenario \"{sc.name}\" continues scenario \"{sc.after}\" and cannot "
                                       f"set its own '{what}'",
                         hint=f"the players, seed, chance mode and variants come from \"{sc.after}\": "
                              f"drop '{what}' here, or set it there")
        counts = self.prog.game.player_counts if self.prog.game else ()
        if sc.players is not None and counts and sc.players not in counts:
            self.err(sc.span, "E314", f"scenario \"{sc.name}\" is for {sc.players} players; the game allows "
                                      f"{', '.join(map(str, counts))}")
        for v in sc.variants:
            if v not in self.prog.variants:
                self.err(sc.span, "E106", f"scenario \"{sc.name}\" uses unknown variant '{v}'",
                         hint=self.suggest(v, self.prog.variants))
        if not sc.then:
            self.warn(sc.span, "W401", f"scenario \"{sc.name}\" checks nothing", hint="add then { expect ... }")
        scope = Scope(below)
        for b in sc.given + sc.when + sc.then:
            self.block(b, scope, ctx, new_scope=False)
        return scope

    # ------------------------------------------------------------------ expressions
    def _max_players(self) -> int:
        counts = self.prog.game.player_counts if self.prog.game else ()
        return max(counts) if counts else 2

    def check_seat_literal(self, want: T.Type, node: Any) -> bool:
        """A number written where a player is expected must be a seat 0..n-1 for some allowed player count n."""
        if T.base(want).name != "player":
            return True
        v: Any = node
        sign = 1
        if isinstance(v, A.Unary) and v.op == "-":
            v, sign = v.operand, -1
        if not (isinstance(v, A.Literal) and type(v.value) is int):
            return True
        n = self._max_players()
        seat = sign * v.value
        if 0 <= seat < n:
            return True
        self.err(node.span, "E326", f"{seat} can never be a player: seats are numbered 0 to {n - 1}",
                 hint="a player is a seat number from 0 (the first player) to player_count - 1; "
                      "write none for no player")
        return False

    def expect_exact(self, got: T.Type, want: T.Type, node: Any, what: str) -> None:
        """Like expect_type, but a list does not stand for a set, deck or bag (only assignments convert)."""
        if not self.check_seat_literal(want, node):
            return
        if not T.compatible_exact(got, want):
            hint = "write to_set([...]) for a set" if got.name == "list" and want.name == "set" else ""
            self.err(node.span, "E301", f"{what} must be {want}, not {got}", hint=hint)

    def expect_type(self, got: T.Type, want: T.Type, node: Any, what: str) -> None:
        if not self.check_seat_literal(want, node):
            return
        if not T.compatible(got, want):
            self.err(node.span, "E301", f"{what} must be {want}, not {got}")

    def expr(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type] = None) -> T.Type:
        try:
            t = self.expr_methods[e.__class__](self, e, scope, ctx, expected)
        except RecursionError:
            self.err(e.span, "E006", "this expression is nested too deeply")
            t = T.ANY
        e.ty = t
        return t

    def e_Literal(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        v = e.value
        if v is None:
            return T.NONE
        if isinstance(v, bool):
            return T.BOOL
        if isinstance(v, int):
            return T.INT
        return T.STR

    def e_Placeholder(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        t = self.expr(e.inner, scope, ctx, expected)
        self.placeholders.append((e.span, self._placeholder_what or f"{self._current}: invented value"))
        return t

    def e_Name(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        n = e.ident
        if n == "me" and ctx.kind == "procedure" and ctx.name:
            self.me_uses.setdefault(ctx.name, e.span)
        local = scope.lookup(n)
        if local is not None:
            e.ref = local[0]
            return local[1]
        if n in self.globals:
            ref, t = self.globals[n]
            e.ref = ref
            if ref in ("var", "pieces"):
                self.var_reads.add(n)
                if ctx.kind == "const":
                    what = "the list of live pieces" if ref == "pieces" else "a variable"
                    self.err(e.span, "E207", f"'{n}' is {what}; start values and constants cannot read variables",
                             hint="set it in setup instead")
            if ref == "type" and isinstance(self.prog.decls.get(n), A.EnumDecl):
                e.ref = "enum_values"  # an enum's name stands for the list of its members, in order
                return T.list_of(self.types[n])
            if ref in ("proc", "action", "event", "type"):
                self.err(e.span, "E208", f"'{n}' is a {ref if ref != 'proc' else 'procedure'}, not a value")
                return T.ANY
            if ref == "func":
                self.err(e.span, "E208", f"'{n}' is a function: call it, {n}(...)")
                return T.ANY
            return t
        if n in VALUES:
            e.ref = "builtin"
            if n == "me" and not ctx.has_me and not ctx.scenario:
                self.err(e.span, "E209", "'me' is only known inside actions and the procedures they call",
                         hint="in triggers use the event's parameters; in flow use 'current' or a loop variable")
            if ctx.kind == "const" and n not in ("player_count", "all_players", "players"):
                self.err(e.span, "E207", f"'{n}' changes during the game; constants cannot use it")
            return VALUES[n][0]
        if ctx.scenario and n in SCENARIO_VALUES:
            e.ref = "scenario"
            return SCENARIO_VALUES[n][0]
        if n in FUNCTIONS:
            self.err(e.span, "E208", f"'{n}' is a built-in function: call it, {n}(...)")
            return T.ANY
        hint = self.suggest(n, lambda: scope.all_names() | set(self.globals) | set(VALUES))
        if not hint and n in SCENARIO_VALUES:
            hint = f"'{n}' is only known in scenarios"
        self.err(e.span, "E201", f"unknown name '{n}'", hint=hint or "declare it with const, var, enum, table or let")
        e.ref = "unknown"
        return T.ERROR

    def e_Unary(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        t = self.expr(e.operand, scope, ctx)
        if e.op == "not":
            self.expect_type(t, T.BOOL, e.operand, "'not'")
            return T.BOOL
        self.expect_type(t, T.INT, e.operand, "'-'")
        return T.INT

    def e_Binary(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        op = e.op
        if op in ("==", "!=") and isinstance(e.left, A.EmptyLit) and not isinstance(e.right, A.EmptyLit):
            rt = self.expr(e.right, scope, ctx)  # `{} == s`: the empty value is of s's kind (a set or a map)
            lt = self.expr(e.left, scope, ctx, expected=rt)
        else:
            lt = self.expr(e.left, scope, ctx)
            # `s == {}`: likewise (an empty set compared with `{}` was compared with an empty map: always false)
            rt = self.expr(e.right, scope, ctx, expected=lt if op in ("==", "!=") else None)
        if op in ("and", "or"):
            self.expect_type(lt, T.BOOL, e.left, f"'{op}'")
            self.expect_type(rt, T.BOOL, e.right, f"'{op}'")
            return T.BOOL
        if op in ("==", "!="):
            if not (T.compatible_exact(lt, rt) and T.compatible_exact(rt, lt)):
                self.err(e.span, "E318", f"comparing {lt} with {rt} is always {'false' if op == '==' else 'true'}")
            return T.BOOL
        if op in ("<", "<=", ">", ">="):
            self.expect_type(lt, T.INT, e.left, f"'{op}'")
            self.expect_type(rt, T.INT, e.right, f"'{op}'")
            return T.BOOL
        if op in ("in", "not in"):
            if not T.is_collection(rt):
                self.err(e.right.span, "E310", f"'{op}' needs a list, set, map or range on its right, not {rt}")
            elif not T.compatible(lt, T.element(rt)):
                self.err(e.span, "E318", f"a {T.element(rt)} collection never holds a {lt}")
            return T.BOOL
        if op == "..":
            self.expect_type(lt, T.INT, e.left, "a range")
            self.expect_type(rt, T.INT, e.right, "a range")
            return T.list_of(T.INT)
        bl, br = T.base(lt), T.base(rt)
        if op in ("+", "-") and (bl.name == "any" or br.name == "any"):
            # a value of unknown kind (a function without a declared result): it may be a list, set or text,
            # so the sum has the other side's kind, or stays unknown (checked when the rules run)
            other = br if bl.name == "any" else bl
            if other.name == "any" or other.name in ("int", "list", "set", "str"):
                return other
        if op == "+" and (bl.name in ("list", "set", "str") or br.name in ("list", "set", "str")):
            if not T.compatible(bl, br):
                self.err(e.span, "E301", f"cannot add {rt} to {lt}")
            return T.join(bl, br)
        if op == "-" and (bl.name == "set" or br.name == "set"):
            return bl
        self.expect_type(lt, T.INT, e.left, f"'{op}'")
        self.expect_type(rt, T.INT, e.right, f"'{op}'")
        return T.INT

    def e_Cond(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        self.expect_type(self.expr(e.test, scope, ctx), T.BOOL, e.test, "the condition of 'if'")
        a = self.expr(e.then, scope, ctx, expected)
        b = self.expr(e.orelse, scope, ctx, expected)
        if not T.compatible(a, b):
            self.err(e.orelse.span, "E301", f"the branches of this 'if' give different kinds of value: {a} after "
                                            f"'then', {b} after 'else'",
                     hint="both branches of if ... then ... else ... must give the same kind of value")
            return T.ERROR
        return T.join(a, b)

    def e_Lambda(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        if not self._lambda_ok:
            self.err(e.span, "E402", "a function value (x => ...) can only be passed to a built-in",
                     hint="built-ins such as count, any, all, sorted, reachable and group take one; "
                          "elsewhere declare a named function: function NAME(x) = ...")
        self._lambda_ok = False
        inner = Scope(scope)
        arg_t = expected if expected is not None else T.ANY
        inner.names[e.param] = ("local", arg_t)
        self.expr(e.body, inner, ctx.but(pure=True))
        return T.FUNC

    def e_Call(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        f = e.func
        if not isinstance(f, A.Name):
            self.err(e.span, "E319", "only named functions can be called")
            for a in e.args:
                self.expr(a.value, scope, ctx)
            return T.ANY
        n = f.ident
        if scope.lookup(n) is None and isinstance(self.prog.decls.get(n), A.FuncDecl):
            f.ref = "func"
            d = self.prog.decls[n]
            pos = [a for a in e.args if a.name is None]
            if len(pos) != len(d.params) or len(pos) != len(e.args):
                self.err(e.span, "E308", f"'{n}' takes {len(d.params)} argument{'s' if len(d.params) != 1 else ''}, not {len(e.args)}")
            for a, p in zip(pos, d.params):
                at = self.expr(a.value, scope, ctx)
                if p.type is not None:
                    self.expect_exact(at, self.resolve_type(p.type), a.value, f"argument '{p.name}' of '{n}'")
            for a in e.args[len(d.params):]:
                self.expr(a.value, scope, ctx)
            if d.result is None and n not in self._funcs_checked and self._infer_depth < MAX_INFER_DEPTH \
                    and _stack_room() > 400:
                # its result's type comes from its body (a chain of calls deeper than the bound stays untyped)
                saved = self._current, self._lambda_ok
                self._current, self._lambda_ok = d.name, False
                self._infer_depth += 1
                self.check_decl(d)
                self._infer_depth -= 1
                self._current, self._lambda_ok = saved
            return self.globals[n][1]
        if scope.lookup(n) is None and isinstance(self.prog.decls.get(n), A.ProcDecl):
            self.err(e.span, "E412", f"'{n}' is a procedure; call it as a statement of its own")
            return T.ANY
        if n in FUNCTIONS and scope.lookup(n) is None and n not in self.globals:
            b = FUNCTIONS[n]
            f.ref = "builtin_func"
            pos = [a for a in e.args if a.name is None]
            if len(pos) < b.min_args or (b.max_args != -1 and len(pos) > b.max_args):
                want = str(b.min_args) if b.min_args == b.max_args else (
                    f"{b.min_args} or more" if b.max_args == -1 else f"{b.min_args} to {b.max_args}")
                self.err(e.span, "E308", f"{n}() takes {want} argument{'s' if want != '1' else ''}, not {len(pos)}",
                         hint=b.doc)
            types = []
            first_elem: Optional[T.Type] = None
            for i, a in enumerate(e.args):
                if a.name is not None and a.name not in b.kwargs:
                    self.err(a.span, "E309", f"{n}() has no option '{a.name}'",
                             hint=("options: " + ", ".join(b.kwargs)) if b.kwargs else b.doc)
                exp = first_elem if isinstance(a.value, A.Lambda) else None
                takes_fn = (i if a.name is None else a.name) in b.functions
                self._lambda_ok = isinstance(a.value, A.Lambda) and takes_fn
                if takes_fn and not isinstance(a.value, A.Lambda):
                    self.err(a.value.span, "E325", f"{n}() takes a function here, such as x => test",
                             hint=b.doc)
                t = self.expr(a.value, scope, ctx, expected=exp)
                self._lambda_ok = False
                self.check_builtin_arg(n, i, a, t)
                if i == 0:
                    first_elem = T.element(t) if T.is_collection(t) else (T.NODE if t.name == "board" else None)
                if a.name is None:
                    types.append(t)
            try:
                return (b.result(types) if b.result is not None else None) or T.ANY
            except Exception:
                return T.ANY
        if n in BOARD_GENERATORS:
            self.err(e.span, "E307", f"{n}(...) makes a board; use it in a board declaration",
                     hint=f"board NAME = {n}(...)")
            return T.ANY
        if n in self.prog.decls and isinstance(self.prog.decls[n], A.ActionDecl):
            self.err(e.span, "E405", f"'{n}' is an action: players take actions through 'offer'")
            return T.ANY
        self.err(f.span, "E210", f"unknown function '{n}'",
                 hint=self.suggest(n, lambda: set(FUNCTIONS) | {d.name for d in self.prog.of_kind("function")}) or "declare it: function NAME(params) = EXPR")
        for a in e.args:
            self.expr(a.value, scope, ctx)
        return T.ERROR

    COLLECTION_FIRST = {"count", "count_of", "sum", "max_by", "min_by", "sorted", "reversed", "any", "all", "first",
                        "last", "index_of", "keys", "values", "to_set", "to_list", "slice", "award_by_rank", "get"}
    PLAYER_FIRST = {"next_player", "previous_player", "players_from", "is_eliminated", "seat"}
    BOARD_FIRST = {"nodes", "neighbors", "adjacent", "attr", "distance", "reachable", "path_exists", "group",
                   "groups", "line_length"}
    INT_ARGS = {"abs", "clamp"}

    def check_builtin_arg(self, n: str, i: int, a: Any, t: T.Type) -> None:
        """The kinds of value a built-in takes, where the kind is plain."""
        if a.name is not None:
            return
        if i == 0 and n in self.COLLECTION_FIRST and not T.is_collection(t):
            self.err(a.value.span, "E310", f"{n}() takes a list, set or map here, not {t}", hint=FUNCTIONS[n].doc)
        elif i == 0 and n in self.PLAYER_FIRST:
            self.expect_type(t, T.PLAYER, a.value, f"the player given to {n}()")
        elif i == 0 and n in self.BOARD_FIRST and t.name not in ("board", "any"):
            self.err(a.value.span, "E323", f"{n}() takes a board first, not {t}", hint=FUNCTIONS[n].doc)
        elif n in self.INT_ARGS:
            self.expect_type(t, T.INT, a.value, f"{n}()")
        elif n == "sum" and T.is_collection(t) and not T.is_int(T.element(t)):
            self.err(a.value.span, "E301", f"sum() adds numbers, not {T.element(t)}")

    def e_Index(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        tt = self.expr(e.target, scope, ctx)
        it = self.expr(e.index, scope, ctx)
        if tt.kind == "error":
            return T.ERROR
        b = T.base(tt)
        if b.name == "map" and len(b.args) == 2:
            if not T.compatible(it, b.args[0]):
                self.err(e.index.span, "E320", f"this map's keys are {b.args[0]}, not {it}")
            return b.args[1]
        if b.name in ("list", "tuple"):
            self.expect_type(it, T.INT, e.index, "a list position")
            return T.element(b)
        if b.name in ("any", "node"):
            # grid nodes are coordinate tuples: n[0] is the row (or q), n[1] the column (or r)
            self.expect_type(it, T.INT, e.index, "a coordinate position")
            return T.ANY
        self.err(e.span, "E321", f"a {tt} cannot be indexed", hint="lists take x[i], maps take x[key]")
        return T.ANY

    def e_Field(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        tt = self.expr(e.target, scope, ctx)
        if tt.kind == "error":
            return T.ERROR
        if tt.kind == "record":
            rec: Any = self.prog.decls.get(tt.name)
            for f in rec.fields:
                if f.name == e.name:
                    return self.resolve_type(f.type)
            self.err(e.span, "E203", f"record '{tt.name}' has no field '{e.name}'",
                     hint=self.suggest(e.name, [f.name for f in rec.fields]) or
                     "fields: " + ", ".join(f.name for f in rec.fields))
            return T.ANY
        if tt.kind == "piece":
            return self.piece_field_type(e, tt)
        if tt.name == "any":
            return T.ANY
        self.err(e.span, "E322", f"a {tt} has no fields", hint="only table rows (records) have fields, row.field")
        return T.ANY

    def e_TupleLit(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        return T.tuple_of(*[self.expr(x, scope, ctx) for x in e.items])

    def e_ListLit(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        et = T.join_all([self.expr(x, scope, ctx) for x in e.items]) if e.items else (
            T.element(expected) if expected is not None else T.ANY)
        return T.list_of(et)

    def e_SetLit(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        return T.set_of(T.join_all([self.expr(x, scope, ctx) for x in e.items]))

    def e_MapLit(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        kt = T.join_all([self.expr(k, scope, ctx) for k, _ in e.entries])
        vt = T.join_all([self.expr(v, scope, ctx) for _, v in e.entries])
        return T.map_of(kt, vt)

    def e_EmptyLit(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        if expected is not None and expected.name in ("set", "map"):
            return expected
        return T.ANY

    def e_Comprehension(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        st = self.expr(e.source, scope, ctx)
        if not T.is_collection(st):
            self.err(e.source.span, "E310", f"a comprehension needs a list, set, map or range, not {st}")
        inner = Scope(scope)
        if len(e.names) == 2:
            if st.name == "map" and len(st.args) == 2:
                inner.names[e.names[0]] = ("local", st.args[0])
                inner.names[e.names[1]] = ("local", st.args[1])
            else:
                inner.names[e.names[0]] = ("local", T.INT)
                inner.names[e.names[1]] = ("local", T.element(st))
        else:
            inner.names[e.names[0]] = ("local", T.element(st))
        if e.condition is not None:
            self.expect_type(self.expr(e.condition, inner, ctx), T.BOOL, e.condition, "a comprehension's 'if'")
        et = self.expr(e.element, inner, ctx)
        if e.kind == "map":
            return T.map_of(et, self.expr(e.value, inner, ctx))
        return T.list_of(et)

    def e_Bind(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        """A name of a tuple pattern in a comprehension (`[a + b for (a, b) in pairs]`): body with name bound."""
        inner = Scope(scope)
        inner.names[e.name] = ("local", self.expr(e.value, scope, ctx))
        return self.expr(e.body, inner, ctx)

    def e_Unpack(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        """An item of a tuple pattern: the type of that item of the tuple (tuple[A, B] gives A, then B). The
        checking item says when the value is not a tuple (E331) or has another number of items (E332)."""
        t = self.expr(e.value, scope, ctx)
        b = T.base(t)
        if t.kind == "error":
            return T.ERROR
        if b.name == "tuple" and b.args:
            if len(b.args) == e.size:
                return b.args[e.index]
            if e.check:
                names = "name" if e.size == 1 else "names"
                self.err(e.span, "E332", f"the pattern {e.pattern} has {e.size} {names}, but the value is "
                                         f"a tuple of {len(b.args)} items ({t})",
                         hint=f"write {len(b.args)} names (or _ for an item you do not need)")
            return T.ERROR
        if b.name in ("any", "node", "tuple"):  # grid nodes are coordinate tuples; checked when the rules run
            return T.ANY
        if e.check:
            self.err(e.span, "E331", f"the pattern {e.pattern} takes a tuple apart, but the value is {t}",
                     hint="only a tuple such as (row, column) can be taken apart: index a list (x[0]); a "
                          "loop over a map gives its keys (for k, v in MAP: keys and values)")
        return T.ERROR

    def e_Choose(self, e: Any, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        what = type(e).__name__.lower()
        example = {"choose": "choose one of ...", "roll": "roll one of 1..6", "draw": "draw one from PILE"}[what]
        if ctx.pure and ctx.kind == "function":
            self.err(e.span, "E403", f"a function cannot {what}: functions compute values without decisions "
                                     "or chance", hint=f"use a procedure, and in it: let x = {example}")
        else:
            self.err(e.span, "E413", f"'{what}' stands only on the right of 'let'",
                     hint=f"write: let x = {example}, then use x")
        return T.ERROR

    e_Roll = e_Choose
    e_Draw = e_Choose


def _stack_room() -> int:
    """How many more Python frames may be entered before the recursion limit (counted, not guessed)."""
    f: Optional[FrameType] = sys._getframe(1)
    depth = 0
    while f is not None:
        f, depth = f.f_back, depth + 1
    return sys.getrecursionlimit() - depth


def check_program(prog: Program, warnings: bool = True) -> Checker:
    """Run the checker and the lints. Returns the Checker (diagnostics in .diags). ``warnings=False``
    leaves out the lints that only warn (those with a W code), for a caller that keeps only errors."""
    c = Checker(prog).run()
    run_lints(c, warnings=warnings)
    return c

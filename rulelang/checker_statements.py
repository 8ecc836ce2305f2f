"""The checker's statements: what each statement of a rule may do and what it must hold (a mixin of
rulelang/checker.py's Checker)."""
from __future__ import annotations

from . import ast as A
from . import types as T
from .library import BUILTIN_EVENTS, FUNCTIONS, VALUES
from .scopes import Scope, _loose


class StatementChecks:
    """The Checker's statements (a mixin: its methods run on the Checker): let, assignment, control
    flow, decisions, collections, events and endings, scenario steps."""

    stmt_methods = A.Dispatch("s_")  # s_Let(s, scope, ctx) for a Let, ... (rulelang/ast.py, Dispatch)

    GAME_ONLY = {"Turn": "turn", "Offer": "offer", "Emit": "emit", "EndGame": "end_game",
                 "TriggerEnd": "trigger_end", "Eliminate": "eliminate", "Return": "return", "DrawInto": "draw"}

    # ------------------------------------------------------------------ statements
    def block(self, b, scope, ctx, new_scope=True):
        s = Scope(scope) if new_scope else scope
        for st in b.stmts:
            self.stmt(st, s, ctx)

    def stmt(self, s, scope, ctx):
        kind = type(s).__name__
        if ctx.scenario and (kind in self.GAME_ONLY or (isinstance(s, A.Let) and
                                                        isinstance(s.value, (A.Choose, A.Roll, A.Draw)))):
            what = self.GAME_ONLY.get(kind) or type(s.value).__name__.lower()
            self.err(s.span, "E414", f"'{what}' runs inside the game, not in a scenario block",
                     hint="a scenario sets variables (given), takes decisions with play and chance (when), "
                          "and checks with expect (then)")
            return
        self.stmt_methods[s.__class__](self, s, scope, ctx)

    def s_Let(self, s, scope, ctx):
        v = s.value
        if isinstance(v, A.Choose):
            t = self.check_choose(v, scope, ctx)
        elif isinstance(v, A.Roll):
            t = self.check_random(v, scope, ctx, v.faces, "roll")
        elif isinstance(v, A.New):
            t = self.check_new(v, scope, ctx)
        elif isinstance(v, A.Draw):
            t = self.check_random(v, scope, ctx, v.pile, "draw")
            self.check_lvalue(v.pile, scope, ctx)
            pt = v.pile.ty or T.ANY
            if pt.name not in ("list", "deck", "bag", "any"):
                self.err(v.pile.span, "E315", f"can only draw from a list, deck or bag, not {pt}")
        else:
            t = self.expr(v, scope, ctx)
            if isinstance(v, A.Lambda):
                self.err(v.span, "E402", "a function value (x => ...) can only be passed to a built-in",
                         hint="declare a named function instead: function NAME(x) = ...")
        if s.name in VALUES or s.name in FUNCTIONS:
            self.err(s.span, "E205", f"'{s.name}' is a built-in name; choose another name")
        scope.names[s.name] = ("local", t)

    def check_choose(self, v, scope, ctx):
        if ctx.pure:
            self.err(v.span, "E403", "a function cannot ask a player to choose")
        ot = self.expr(v.options, scope, ctx)
        if not T.is_collection(ot):
            self.err(v.options.span, "E310", f"choose needs a list, set or range of options, not {ot}")
        if v.count is not None:
            ct = self.expr(v.count, scope, ctx)
            if not (T.is_int(ct) or (ct.name == "list" and ct.args and T.is_int(ct.args[0]))):
                self.err(v.count.span, "E301", f"how many to choose must be a number or a range, not {ct}")
        if v.player is not None:
            self.expect_type(self.expr(v.player, scope, ctx), T.PLAYER, v.player, "the deciding player ('by')")
        elif ctx.kind == "procedure" and ctx.name:
            self.me_uses.setdefault(ctx.name, v.span)  # the procedure's 'me' chooses
        elif not ctx.has_me:
            self.err(v.span, "E404", "who chooses? add 'by PLAYER'",
                     hint="'me' is only known inside actions and procedures; elsewhere say who decides")
        et = T.element(ot)
        return et if v.count is None else T.list_of(et)

    def check_random(self, v, scope, ctx, source, what):
        if ctx.pure:
            self.err(v.span, "E403", f"a function cannot {what}")
        st = self.expr(source, scope, ctx)
        if not T.is_collection(st):
            self.err(source.span, "E310", f"{what} needs a list, range, deck or bag, not {st}")
        if v.count is not None:
            self.expect_type(self.expr(v.count, scope, ctx), T.INT, v.count, f"the number to {what}")
        et = T.element(st)
        return et if v.count is None else T.list_of(et)

    def s_ExprStmt(self, s, scope, ctx):
        e = s.expr
        if isinstance(e, A.Call) and isinstance(e.func, A.Name):
            target = self.prog.decls.get(e.func.ident)
            if isinstance(target, A.ProcDecl):
                self.check_proc_call(e, target, scope, ctx)
                return
            if isinstance(target, A.ActionDecl):
                self.err(e.span, "E405", f"'{target.name}' is an action: players take actions through 'offer'",
                         hint=f"write: offer [{target.name}] to PLAYER, or make a procedure for shared steps")
                return
        self.expr(e, scope, ctx)
        self.err(e.span, "E406", "this expression does nothing as a statement",
                 hint="assign it (x = ...), or call a procedure or phase")

    def check_proc_call(self, e, target, scope, ctx):
        e.func.ref = "proc"
        if ctx.pure:
            self.err(e.span, "E403", "a function cannot call a procedure")
        if target.proc_kind in ("setup", "flow"):
            self.err(e.span, "E407", f"'{target.name}' runs by itself; it cannot be called")
        self.calls.setdefault(self._current, set()).add(target.name)
        if not ctx.has_me and not ctx.scenario:
            self.me_free_calls.append((e.span, target.name, ctx.kind))
        pos = [a for a in e.args if a.name is None]
        named = {a.name: a for a in e.args if a.name is not None}
        if len(pos) > len(target.params):
            self.err(e.span, "E308", f"'{target.name}' takes {len(target.params)} argument{'s' if len(target.params) != 1 else ''}, not {len(pos)}")
        pnames = [p.name for p in target.params]
        for a in e.args:
            self.expr(a.value, scope, ctx)
        for n in named:
            if n not in pnames:
                self.err(named[n].span, "E309", f"'{target.name}' has no parameter '{n}'")
        given = set(pnames[:len(pos)]) | set(named)
        for p in target.params:
            if p.name not in given:
                self.err(e.span, "E308", f"'{target.name}' needs a value for '{p.name}'")

    def s_Assign(self, s, scope, ctx):
        tt = self.expr(s.target, scope, ctx)
        self.check_lvalue(s.target, scope, ctx)
        vt = self.expr(s.value, scope, ctx, expected=tt)
        if s.op == "=":
            self.expect_type(vt, tt, s.value, "this assignment")
            if _loose(vt, tt):  # the checker cannot vouch for the value: the run time checks it (E-free)
                s.loose_type = tt
        else:
            bt = T.base(tt)
            if bt.name in ("int", "any"):
                self.expect_type(vt, T.INT, s.value, f"'{s.op}'")
            elif bt.name == "list" and s.op == "-=":
                self.err(s.span, "E316", "'-=' takes items out of sets, not lists",
                         hint="to take one item out of a list write: remove ITEM from TARGET")
            elif bt.name in ("list", "set"):
                if not T.compatible(vt, tt):
                    self.err(s.value.span, "E316", f"'{s.op}' on a {bt.name} needs a {bt}, not {vt}",
                             hint="to add one item write: add ITEM to TARGET")
            else:
                self.err(s.span, "E316", f"'{s.op}' works on numbers, lists and sets, not {tt}")

    def check_lvalue(self, e, scope, ctx):
        root = e
        while isinstance(root, A.Index):
            root = root.target
        if isinstance(root, A.Field) and root.target.ty is not None and root.target.ty.kind == "piece":
            self.piece_lvalue(e, root, ctx)
            return
        if isinstance(root, A.Field) or not isinstance(root, A.Name):
            self.err(e.span, "E408", "only variables (and their items, x[k]) can be changed",
                     hint="record fields and table rows are fixed data")
            return
        ref = root.ref
        if ref == "var":
            self.var_writes.add(root.ident)
            if ctx.pure:
                self.err(e.span, "E403", "a function cannot change variables")
        elif ref in ("local", "unknown"):
            pass
        elif ref:
            self.err(root.span, "E408", f"'{root.ident}' is a {'constant' if ref == 'const' else ref}; it cannot be changed",
                     hint="declare it with 'var' to make it change during the game" if ref == "const" else "")

    def s_If(self, s, scope, ctx):
        for test, body in s.branches:
            self.expect_type(self.expr(test, scope, ctx), T.BOOL, test, "an if condition")
            self.block(body, scope, ctx)
        if s.orelse is not None:
            self.block(s.orelse, scope, ctx)

    def s_For(self, s, scope, ctx):
        st = self.expr(s.source, scope, ctx)
        inner = Scope(scope)
        if not T.is_collection(st):
            self.err(s.source.span, "E310", f"for needs a list, set, map or range, not {st}")
        if len(s.names) == 2:
            if st.name == "map" and len(st.args) == 2:
                inner.names[s.names[0]] = ("local", st.args[0])
                inner.names[s.names[1]] = ("local", st.args[1])
            else:
                inner.names[s.names[0]] = ("local", T.INT)
                inner.names[s.names[1]] = ("local", T.element(st))
        else:
            inner.names[s.names[0]] = ("local", T.element(st))
        self.block(s.body, inner, ctx.but(in_loop=True), new_scope=False)

    def s_While(self, s, scope, ctx):
        self.expect_type(self.expr(s.test, scope, ctx), T.BOOL, s.test, "a while condition")
        self.block(s.body, scope, ctx.but(in_loop=True))

    def s_Repeat(self, s, scope, ctx):
        self.expect_type(self.expr(s.times, scope, ctx), T.INT, s.times, "a repeat count")
        self.block(s.body, scope, ctx.but(in_loop=True))

    def s_Loop(self, s, scope, ctx):
        self.block(s.body, scope, ctx.but(in_loop=True))
        exits = any(isinstance(n, (A.Break, A.Return, A.EndGame)) for n in A.walk(s.body))
        if not exits:
            self.endless_loops.append(s)

    def s_Break(self, s, scope, ctx):
        if not ctx.in_loop:
            self.err(s.span, "E409", "'break' outside a loop")

    def s_Continue(self, s, scope, ctx):
        if not ctx.in_loop:
            self.err(s.span, "E409", "'continue' outside a loop")

    def s_Return(self, s, scope, ctx):
        if ctx.kind not in ("procedure", "phase", "action", "trigger", "setup", "flow"):
            self.err(s.span, "E409", "'return' outside a procedure")
        if s.value is not None:
            self.err(s.value.span, "E409", "procedures return no value",
                     hint="use a function (function f(x) = ...) to compute a value")

    def s_Turn(self, s, scope, ctx):
        self.expect_type(self.expr(s.player, scope, ctx), T.PLAYER, s.player, "whose turn")
        self.block(s.body, scope, ctx)

    def s_Offer(self, s, scope, ctx):
        if s.player is None:
            self.err(s.span, "E415", "offer needs 'to PLAYER'",
                     hint=f"say who decides: offer [{', '.join(s.actions)}] to PLAYER")
        else:
            self.expect_type(self.expr(s.player, scope, ctx), T.PLAYER, s.player, "the player offered actions")
        for name in s.actions:
            d = self.prog.decls.get(name)
            if not isinstance(d, A.ActionDecl):
                self.err(s.span, "E206", f"'{name}' is not an action",
                         hint=self.suggest(name, lambda: [a.name for a in self.prog.of_kind("action")]) or "declare it: action NAME(...) { ... }")
            else:
                self.offered.add(name)
                self.calls.setdefault(self._current, set()).add("action:" + name)
        if s.orelse is not None:
            self.block(s.orelse, scope, ctx)

    def s_Shuffle(self, s, scope, ctx):
        t = self.expr(s.pile, scope, ctx)
        self.check_lvalue(s.pile, scope, ctx)
        if t.name not in ("deck", "bag", "any"):
            self.err(s.pile.span, "E315", f"only a deck or bag can be shuffled, not {t}",
                     hint="declare it as deck[T]: its items are then drawn in random order")
        if s.source is not None:
            self._coll_target(s.source, scope, ctx, T.element(t) if t.name in ("deck", "bag") else T.ANY,
                              "shuffle the items of")

    def s_DrawInto(self, s, scope, ctx):
        self.check_random(s, scope, ctx, s.pile, "draw")
        self.check_lvalue(s.pile, scope, ctx)
        pt = s.pile.ty or T.ANY
        if pt.name not in ("list", "deck", "bag", "any"):
            self.err(s.pile.span, "E315", f"can only draw from a list, deck or bag, not {pt}")
        self._coll_target(s.target, scope, ctx, T.element(pt), "draw into")

    def _coll_target(self, target, scope, ctx, item_t, verb):
        tt = self.expr(target, scope, ctx)
        self.check_lvalue(target, scope, ctx)
        if tt.name not in ("list", "set", "deck", "bag", "any"):
            self.err(target.span, "E315", f"cannot {verb} a {tt}; only lists, sets, decks and bags hold items")
        elif not T.compatible(item_t, T.element(tt)):
            self.err(target.span, "E317", f"this holds {T.element(tt)}, not {item_t}")

    def s_Add(self, s, scope, ctx):
        self._coll_target(s.target, scope, ctx, self.expr(s.item, scope, ctx), "add to")

    def s_Remove(self, s, scope, ctx):
        self._coll_target(s.source, scope, ctx, self.expr(s.item, scope, ctx), "remove from")

    def s_Move(self, s, scope, ctx):
        it = self.expr(s.item, scope, ctx)
        self._coll_target(s.source, scope, ctx, it, "remove from")
        self._coll_target(s.target, scope, ctx, it, "add to")

    def s_Reveal(self, s, scope, ctx):
        self.expr(s.item, scope, ctx)
        root = s.item
        while isinstance(root, A.Index):
            root = root.target
        decl = self.prog.decls.get(root.ident) if isinstance(root, A.Name) and root.ref == "var" else None
        if isinstance(root, A.Field) and root.target.ty is not None and root.target.ty.kind == "piece":
            self.piece_reveal(s, root)
        elif decl is None:
            if not (isinstance(root, A.Name) and root.ref == "unknown"):
                self.err(s.item.span, "E420", "reveal shows a place of a variable: a variable, or an item of one (x[k])",
                         hint="knowledge belongs to places, not values: store the value in a variable "
                              "visible to known, then reveal that place, e.g. reveal secret[n] to me")
        elif decl.visibility not in ("known", "owner"):
            shown = "everybody already sees it" if decl.visibility == "all" else "nobody may ever see it"
            self.err(s.item.span, "E420", f"'{root.ident}' is visible to {decl.visibility}: {shown}, so it cannot be revealed",
                     hint="declare it 'visible to known' (or, per player, 'visible to owner') to reveal its places")
        if isinstance(s.to, A.Name) and s.to.ident == "all":
            s.to.ref = "all"
        else:
            self.expect_type(self.expr(s.to, scope, ctx), T.PLAYER, s.to, "who sees it ('to')")

    def s_Emit(self, s, scope, ctx):
        d = self.prog.decls.get(s.event)
        if s.event in BUILTIN_EVENTS:
            self.err(s.span, "E410", f"'{s.event}' is emitted by the engine itself")
            return
        if not isinstance(d, A.EventDecl):
            self.err(s.span, "E204", f"unknown event '{s.event}'",
                     hint=self.suggest(s.event, lambda: [e.name for e in self.prog.of_kind("event")]) or "declare it: event NAME(params)")
            return
        self.emitted.add(s.event)
        if len(s.args) != len(d.params):
            self.err(s.span, "E308", f"event '{s.event}' takes {len(d.params)} value{'s' if len(d.params) != 1 else ''}, not {len(s.args)}")
        for a, p in zip(s.args, d.params):
            self.expect_exact(self.expr(a, scope, ctx), self.resolve_type(p.type), a, f"'{p.name}' of event '{s.event}'")

    def s_EndGame(self, s, scope, ctx):
        for reason in self.reasons(s, scope, ctx):
            self.ends.append((reason or "", s.span))

    def s_TriggerEnd(self, s, scope, ctx):
        for reason in self.reasons(s, scope, ctx):
            self.ends.append((reason, s.span))

    def reasons(self, s, scope, ctx):
        """The reasons an end_game / trigger_end may give: its text, or the texts written in its
        expression (checked to be a text)."""
        if s.reason_expr is None:
            return [s.reason]
        t = self.expr(s.reason_expr, scope, ctx)
        if t.name not in ("str", "any", "none"):
            self.err(s.reason_expr.span, "E301", f"the reason the game ends is a text, not {t}",
                     hint='write end_game "reason", or end_game (an expression giving a text)')
        texts = [n.value for n in A.walk(s.reason_expr) if isinstance(n, A.Literal) and isinstance(n.value, str)]
        return texts or [""]

    def s_Eliminate(self, s, scope, ctx):
        self.expect_type(self.expr(s.player, scope, ctx), T.PLAYER, s.player, "who is eliminated")

    def s_Log(self, s, scope, ctx):
        for e in s.items:
            self.expr(e, scope, ctx)

    def _scenario_only(self, s, ctx, what):
        if not ctx.scenario:
            self.err(s.span, "E411", f"'{what}' is a scenario step; it only stands in scenario blocks")
            return False
        return True

    def s_Play(self, s, scope, ctx):
        if self._scenario_only(s, ctx, "play"):
            self.expr(s.action, scope, ctx)

    def s_ChanceStep(self, s, scope, ctx):
        if self._scenario_only(s, ctx, "chance"):
            self.expr(s.outcome, scope, ctx)

    def s_Expect(self, s, scope, ctx):
        if self._scenario_only(s, ctx, "expect"):
            self.expect_type(self.expr(s.test, scope, ctx), T.BOOL, s.test, "an expect")

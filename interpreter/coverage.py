"""Rulebook coverage: which cited sections (`@rule "S-7"`) the games actually exercised.

    cov = Coverage(ruleset)           # cov.ruleset: an instrumented copy (same rules, same variants)
    g = cov.ruleset.new_game(3, seed=1)
    ...                               # play games with cov.ruleset: they count into cov
    cov.table()                       # one row per section, in rulebook order
    cov.actions(); cov.triggers(); cov.endings()
    cov.render(console); cov.to_json()

Only the instrumented copy counts: it runs the closures backend with hooks (closures.StmtCompiler.on_stmt,
ExprCompiler.on_expr, Ruleset.compile_hooks and .observer) that are None in every other ruleset, so
normal play pays nothing. The copy is built from the program as checked (before the optimiser, so that
calls of small functions it would inline are counted), and plays every game exactly as the plain
ruleset does (same `to_json()` at every step).

What counts as a run of the code under a citation (see docs/coverage.md):
* an action: each time it is taken; it is also counted as offered at each decision where it had a legal
  option;
* a procedure, phase, setup, flow: each time it starts; a function: each call;
* a trigger: each time it fires (its `if` condition, if any, held and its body ran);
* an ending (`ending "x" when ...`): each time a game ends by it;
* a statement: each time it starts (a loop counts once per entry, not per round); statements in a row
  under the same citation, and statements inside code already under it, count once;
* a `require` clause: each time it is checked;
* the score and tie-break: each time they are computed; the `game` header: each game started;
* data (a table, constant, variable, board, piece kind, enum member): reads of its name by the running
  rules are added to the section's runs, but only as a hint (a value fixed when the rules load, and a
  variable read through an index or written, is not counted): a section cited only on data, records,
  events or variants is never flagged as "never exercised"; with no counted read it is "data only"
  ("variant only" when only variants cite it, citations inside variants not in play included).
"""
from __future__ import annotations

import json
import re

from rulelang import ast as A
from rulelang.program import read_rulebook

from .ruleset import Ruleset
from .errors import GameError
from .runtime import RETURN, SUSPEND, ChooseOp, OfferOp, RandomOp

SECTION_RE = re.compile(r"^## \[([A-Z]-[\d.]+(?:-en)?)\]", re.M)

# declarations whose names are read while the rules run (the Name.ref kinds that read them)
_DATA_REFS = {"var": "var", "const": "const", "table": "table", "board": "board", "pieces": "piece",
              "enum_values": "enum", "member": None}


class Site:
    """One place that carries citations: a declaration, a statement or a require clause."""
    __slots__ = ("kind", "name", "cites", "span", "counted")

    def __init__(self, kind, name, cites, span, counted=True):
        self.kind = kind
        self.name = name
        self.cites = list(dict.fromkeys(cites))
        self.span = span
        self.counted = counted


class CoverageRuleset(Ruleset):
    """A Ruleset whose games count into a Coverage (built by Coverage; not for direct use)."""

    def __init__(self, cov, base):
        self._cov = cov
        self.observer = cov
        self.compile_hooks = cov._hooks
        super().__init__(base.source_program if hasattr(base, "source_program") else base.program, base.checker,
                         base.step_budget, base.cascade_depth, base.time_limit, backend="closures", optimise=False)
        self.optimised = False
        for attr in ("placeholders", "warnings", "path", "reload"):
            if attr in base.__dict__:
                setattr(self, attr, getattr(base, attr))

    def new_game(self, players, seed=None, chance="sampled"):
        cov = self._cov
        if isinstance(players, int) and not isinstance(players, bool) and players in self.player_counts:
            cov._started()  # setup, flow and the game header run (before the first decision, inside new_game)
        return super().new_game(players, seed=seed, chance=chance)

    def load_game(self, json_text):
        cov = self._cov
        was, cov._live = cov._live, False  # checking a save re-runs its pending decision on a copy: not a run
        try:
            return super().load_game(json_text)
        finally:
            cov._live = was


class Coverage:
    def __init__(self, ruleset):
        self.base = ruleset
        self._live = False
        self.sites = []
        self.runs = []  # per site index
        self._incs = {}  # (id(code), op index) -> [(site, delta)]
        self._back = []  # (code, op index, head) jumps back to a loop's head
        self._back_seen = 0
        self._back_by_head = {}  # (id(code), head) -> op indexes of the jumps back to it
        self._entry_site = {}  # id(code) -> site index counted when the code starts
        self._action_of = {}  # id(code) -> action name
        self._trigger_of = {}  # id(code) -> trigger index
        self.offered = {}
        self.taken = {}
        self.fired_entries = {}
        self.rejected = {}
        self.reached = {}
        self.games = 0
        self._stmt_cites = {}  # id(stmt) -> the cites it counts (see _plan)
        self._data_site = {}  # declaration name -> site index
        program = getattr(ruleset, "source_program", None) or ruleset.program
        self.program = program
        self._plan(program)
        self.ruleset = CoverageRuleset(self, ruleset)
        self._instrument(self.ruleset)
        self._live = True

    # ------------------------------------------------------------------ planning (the AST)
    def _site(self, kind, name, cites, span, counted=True):
        self.sites.append(Site(kind, name, cites, span, counted))
        self.runs.append(0)
        return len(self.sites) - 1

    def _plan(self, prog):
        """Sites of the declarations, and for every statement the citations it counts."""
        self._decl_site = {}
        self._cost_site = {}  # action name -> the site of its cost clause's citations
        if prog.game is not None and prog.game.cites:
            self._game_site = self._site("game", prog.game.title, prog.game.cites, prog.game.span)
        else:
            self._game_site = None
        for d in prog.decls.values():
            kind = getattr(d, "proc_kind", None) or d.kind
            if isinstance(d, (A.ProcDecl, A.ActionDecl, A.FuncDecl)):
                if d.cites:
                    self._decl_site[d.name] = self._site(kind, d.name, d.cites, d.span)
                body = d.effect if isinstance(d, A.ActionDecl) else getattr(d, "body", None)
                if isinstance(body, A.Block):
                    self._plan_block(body, set(d.cites))
                if isinstance(d, A.ActionDecl):
                    for r in d.requires:
                        rest = [c for c in r.cites if c not in d.cites]
                        if rest:
                            self._req_site = getattr(self, "_req_site", {})
                            self._req_site[id(r)] = self._site("require", d.name, rest, r.span)
                    # a citation on the cost clause: its code runs each time the action is taken (paid)
                    cost_cites = [c for k in d.costs for c in k.cites if c not in d.cites]
                    if cost_cites:
                        self._cost_site[d.name] = self._site("cost", d.name, cost_cites, d.costs[0].span)
            elif d.cites:  # data: its reads count, but a section is never flagged for want of them
                self._data_site[d.name] = self._site(kind, d.name, d.cites, d.span, counted=False)
        self._trigger_site = {}
        for i, t in enumerate(prog.triggers):
            if t.cites:
                self._trigger_site[i] = self._site("trigger", _trigger_name(t), t.cites, t.span)
            if t.body is not None:
                self._plan_block(t.body, set(t.cites))
        self._ending_site = {}
        for e in prog.endings:
            if e.cites:
                self._ending_site[e.name] = self._site("ending", e.name, e.cites, e.span)
        self._score_site = {}
        for which in ("score", "tiebreak"):
            s = getattr(prog, which)
            if s is not None and s.cites:
                self._score_site[which] = self._site(which, which, s.cites, s.span)
        for v in prog.variants.values():
            # a variant's own citations; those inside a variant not in play (an active one's items are
            # merged into the rules above, and count there)
            cites = list(v.cites)
            if v.name not in prog.active_variants:
                for n in A.walk(v.items):
                    cites.extend(getattr(n, "cites", None) or ())
            if cites:
                self._site("variant", v.name, cites, v.span, counted=False)

    def _plan_block(self, block, active):
        todo = [(block, frozenset(active))]  # a stack, not recursion: blocks may nest deeply
        while todo:
            block, active = todo.pop()
            prev = ()
            for s in block.stmts:
                own = [c for c in s.cites if c not in active and c not in prev]
                if own:
                    self._stmt_cites[id(s)] = own
                prev = s.cites
                inner = active | set(s.cites)
                for b in _blocks(s):
                    todo.append((b, inner))

    # ------------------------------------------------------------------ compiling (the hooks)
    def _hooks(self, xc, sc):
        xc.on_expr = self._on_expr
        sc.on_stmt = self._on_stmt
        sc.back_jumps = self._back
        self._compilers = (xc, sc)

    def _on_stmt(self, code, s, start, end):
        own = self._stmt_cites.get(id(s))
        if not own or start >= end:
            return
        site = self._site("statement", type(s).__name__.lower(), own, s.span)
        self._incs.setdefault((id(code), start), []).append((site, 1))
        if isinstance(s, (A.While, A.Loop)):
            # its first op runs again on each round: every jump back to it from inside (its own, or those
            # of a loop that starts where it starts) takes one off, so that it counts entries
            back = self._back_by_head
            for c, i, head in self._back[self._back_seen:]:  # indexed as they come: no quadratic scan
                back.setdefault((id(c), head), []).append(i)
            self._back_seen = len(self._back)
            for i in back.get((id(code), start), ()):
                if start <= i < end:
                    self._incs.setdefault((id(code), i), []).append((site, -1))

    def _on_expr(self, e, f):
        if e.__class__ is not A.Name or e.ref not in _DATA_REFS:
            return f
        site = self._data_site.get(e.ident)
        if site is None and e.ref == "member":
            owner = self.program.members.get(e.ident)
            site = self._data_site.get(owner.name) if owner is not None else None
        if site is None:
            return f
        runs = self.runs

        def read(G, L):
            if self._live and G is not None:
                runs[site] += 1
            return f(G, L)
        return read

    def _instrument(self, rs):
        xc, sc = self._compilers
        xc.on_expr = None  # what is compiled later (scenario blocks) is not counted
        sc.on_stmt = None
        sc.back_jumps = None
        prog = rs.program
        for d in prog.decls.values():
            if isinstance(d, A.ProcDecl):
                cid = d.proc_kind if d.proc_kind in ("setup", "flow") else "proc:" + d.name
                if d.name in self._decl_site and cid in rs.codes:
                    self._entry_site[id(rs.codes[cid])] = self._decl_site[d.name]
            elif isinstance(d, A.ActionDecl):
                code = rs.codes["action:" + d.name]
                self._action_of[id(code)] = d.name
                self.offered[d.name] = 0
                self.taken[d.name] = 0
                if d.name in self._decl_site:
                    self._entry_site[id(code)] = self._decl_site[d.name]
                act = rs.actions[d.name]
                reqs = []
                for r, (fn, span) in zip(d.requires, act.requires):
                    site = getattr(self, "_req_site", {}).get(id(r))
                    reqs.append((self._counting(fn, site) if site is not None else fn, span))
                act.requires = reqs
                act.require_fns = [fn for fn, _ in reqs]
            elif isinstance(d, A.FuncDecl) and d.name in self._decl_site:
                fn = rs.functions[d.name]
                fn.body = self._counting(fn.body, self._decl_site[d.name])
        self._setup_sites = [self._entry_site[id(rs.codes[c])] for c in ("setup", "flow")
                             if c in rs.codes and id(rs.codes[c]) in self._entry_site]
        for i, t in enumerate(prog.triggers):
            code = rs.codes[f"trigger:{i}"]
            self._trigger_of[id(code)] = i
            self.fired_entries[i] = 0
            self.rejected[i] = 0
        self._triggers = list(prog.triggers)
        for name in rs.endings:
            self.reached[name] = 0
        for which, site in self._score_site.items():
            attr = which + "_fn"
            got = getattr(rs, attr)
            if got is not None:
                setattr(rs, attr, (got[0], self._counting(got[1], site)))
        for code in rs.codes.values():
            cond_op = None
            i = self._trigger_of.get(id(code))
            if i is not None and prog.triggers[i].condition is not None:
                cond_op = 0
            for k, op in enumerate(code.ops):
                code.ops[k] = self._wrap(op, tuple(self._incs.get((id(code), k), ())),
                                         i if k == cond_op else None)

    def _counting(self, fn, site):
        runs = self.runs

        def counted(G, L):
            if self._live and G is not None:
                runs[site] += 1
            return fn(G, L)
        return counted

    def _wrap(self, op, incs, trigger):
        cov = self
        runs = self.runs
        if isinstance(op, (OfferOp, ChooseOp, RandomOp)):
            op.__class__ = _COUNTED[op.__class__]
            op._cov = cov
            op._cov_incs = incs
            return op
        rejected = self.rejected

        def counted(G, L):
            if cov._live:
                for site, delta in incs:
                    runs[site] += delta
            r = op(G, L)
            if r is not None and cov._live:
                if r.__class__ is tuple:
                    cov._entered(r)
                elif r is RETURN and trigger is not None:
                    rejected[trigger] += 1
            return r
        return counted

    # ------------------------------------------------------------------ counting (while games run)
    def _entered(self, r):
        if r[0] == "call":
            self._enter(r[1])
        elif r[0] == "push":
            for code, _ in r[1]:
                self._enter(code)

    def _enter(self, code):
        k = id(code)
        site = self._entry_site.get(k)
        if site is not None:
            self.runs[site] += 1
        name = self._action_of.get(k)
        if name is not None:
            self.taken[name] += 1
            cost = self._cost_site.get(name)
            if cost is not None:
                self.runs[cost] += 1
            return
        i = self._trigger_of.get(k)
        if i is not None:
            self.fired_entries[i] += 1

    def _started(self):
        if not self._live:
            return
        self.games += 1
        if self._game_site is not None:
            self.runs[self._game_site] += 1
        for site in self._setup_sites:
            self.runs[site] += 1

    def _offered(self, G):
        p = G.pending
        if p is None or p.kind != "action":
            return
        for name in {v[0] for _, v in p.options}:
            self.offered[name] = self.offered.get(name, 0) + 1

    def finished(self, game, reason):
        """Told by the engine when a game of the instrumented ruleset ends (Ruleset.observer)."""
        if not self._live:
            return
        self.reached[reason] = self.reached.get(reason, 0) + 1
        site = self._ending_site.get(reason)
        if site is not None:
            self.runs[site] += 1

    # ------------------------------------------------------------------ results
    def fired(self, i):
        return self.fired_entries[i] - self.rejected[i]

    def section_ids(self):
        """The rulebook's section ids in its order, or None if the header names none that can be read."""
        prog = self.program
        if prog.game is None or not prog.game.rulebook:
            return None
        try:
            text, _ = read_rulebook(prog)
        except Exception:  # noqa: BLE001 - a rulebook that cannot be read: cited ids in first-cited order
            return None
        if text is None:
            return None
        return list(dict.fromkeys(SECTION_RE.findall(text)))

    def table(self):
        """One row per section: in rulebook order (every section of the rulebook, cited or not) when the
        header names a readable rulebook, then any cited id it does not hold; otherwise the cited ids in
        the order they are first cited. Keys: section, runs, offered, taken, fired, reached, cited_by
        (kinds of what cites it), status ("exercised", "never exercised", "data only", "not cited")."""
        rows = {}
        order = []

        def row(sid):
            if sid not in rows:
                rows[sid] = {"section": sid, "runs": 0, "offered": 0, "taken": 0, "fired": 0, "reached": 0,
                             "cited_by": [], "counted": False}
                order.append(sid)
            return rows[sid]
        book = self.section_ids()
        for sid in book or ():
            row(sid)
        trig_index = {site: i for i, site in self._trigger_site.items()}
        by_place = sorted(range(len(self.sites)), key=lambda k: _place(self.sites[k].span))
        for k in by_place:  # without a rulebook: the order in which the file first cites them
            s = self.sites[k]
            for sid in s.cites:
                r = row(sid)
                if s.kind not in r["cited_by"]:
                    r["cited_by"].append(s.kind)
                if s.counted:
                    r["counted"] = True
                if s.kind == "action":
                    r["offered"] += self.offered.get(s.name, 0)
                    r["taken"] += self.taken.get(s.name, 0)
                elif s.kind == "trigger":  # its body ran: it fired
                    r["fired"] += self.fired(trig_index[k])
                    r["runs"] += self.fired(trig_index[k])
                elif s.kind == "ending":
                    r["reached"] += self.reached.get(s.name, 0)
                r["runs"] += self.runs[k]
        out = []
        for sid in order:
            r = rows[sid]
            if not r["cited_by"]:
                status = "not cited"
            elif r["runs"] or r["taken"] or r["fired"] or r["reached"]:
                status = "exercised"
            elif not r["counted"]:
                status = "variant only" if r["cited_by"] == ["variant"] else "data only"
            else:
                status = "never exercised"
            del r["counted"]
            r["status"] = status
            out.append(r)
        return out

    def places(self):
        """Every place that carries citations and can run (declarations, statements, require clauses), in
        file order: kind, name, sections, path, line, runs (for a trigger: times fired; an ending: games
        ended by it). The finer view behind table(): which cited code inside a section never ran."""
        trig_index = {site: i for i, site in self._trigger_site.items()}
        out = []
        for k in sorted(range(len(self.sites)), key=lambda k: _place(self.sites[k].span)):
            s = self.sites[k]
            if not s.counted:
                continue
            runs = self.fired(trig_index[k]) if s.kind == "trigger" else self.runs[k]
            out.append({"kind": s.kind, "name": s.name, "sections": list(s.cites),
                        "path": s.span.path if s.span else "", "line": s.span.line if s.span else 0, "runs": runs})
        return out

    def actions(self):
        """Per action: offered (decisions where it had a legal option), taken, sections, status
        ("taken", "legal but never taken", "never legal")."""
        out = []
        for d in self.program.decls.values():
            if isinstance(d, A.ActionDecl):
                o, t = self.offered.get(d.name, 0), self.taken.get(d.name, 0)
                status = "taken" if t else "legal but never taken" if o else "never legal"
                out.append({"action": d.name, "offered": o, "taken": t, "sections": list(d.cites),
                            "line": d.span.line, "status": status})
        return out

    def triggers(self):
        """Per trigger: fired, sections, status ("fired", "never fired")."""
        out = []
        for i, t in enumerate(self._triggers):
            n = self.fired(i)
            out.append({"trigger": _trigger_name(t), "fired": n, "sections": list(t.cites), "line": t.span.line,
                        "status": "fired" if n else "never fired"})
        return out

    def endings(self):
        """Per end condition (the ruleset's endings, then any other reason a game ended by): reached,
        sections, status ("reached", "never reached")."""
        cites = {e.name: list(e.cites) for e in self.program.endings}
        out = []
        for name, n in self.reached.items():
            out.append({"ending": name, "reached": n, "sections": cites.get(name, []),
                        "status": "reached" if n else "never reached"})
        return out

    def to_dict(self):
        return {"games": self.games, "sections": self.table(), "actions": self.actions(),
                "triggers": self.triggers(), "endings": self.endings(), "places": self.places()}

    def to_json(self):
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def render(self, console):
        """Print the tables with rich: sections, then the actions, triggers and endings that need a look."""
        from rich.table import Table

        rows = self.table()
        t = Table(title=f"rulebook coverage ({self.games} games)", title_justify="left")
        for col, just in (("section", "left"), ("runs", "right"), ("offered", "right"), ("taken", "right"),
                          ("fired", "right"), ("reached", "right"), ("cited by", "left"), ("", "left")):
            t.add_column(col, justify=just, no_wrap=not col or col == "section")
        for r in rows:
            flag = {"never exercised": "[bold red]never exercised[/]", "not cited": "[dim]not cited[/]",
                    "data only": "[dim]data only[/]", "variant only": "[dim]variant only[/]"}.get(r["status"], "")
            t.add_row(r["section"], _n(r["runs"]), _n(r["offered"]), _n(r["taken"]), _n(r["fired"]),
                      _n(r["reached"]), ", ".join(r["cited_by"]), flag)
        console.print(t)
        never = [r["section"] for r in rows if r["status"] == "never exercised"]
        cited = [r for r in rows if r["status"] != "not cited"]
        console.print(f"{len(cited) - len(never)} of {len(cited)} cited sections exercised"
                      + (f"; never exercised: {', '.join(never)}" if never else ""), highlight=False)
        idle = [p for p in self.places() if not p["runs"]]
        if idle:
            t = Table(title="cited code that never ran", title_justify="left")
            for col in ("line", "kind", "name", "sections"):
                t.add_column(col)
            for p in idle:
                t.add_row(str(p["line"]), p["kind"], p["name"], ", ".join(p["sections"]))
            console.print(t)
        acts = [a for a in self.actions() if a["status"] != "taken"]
        if acts:
            t = Table(title="actions never taken", title_justify="left")
            for col in ("action", "offered", "line", "status"):
                t.add_column(col)
            for a in acts:
                t.add_row(a["action"], str(a["offered"]), str(a["line"]), a["status"])
            console.print(t)
        trig = [x for x in self.triggers() if x["status"] != "fired"]
        if trig:
            t = Table(title="triggers never fired", title_justify="left")
            t.add_column("trigger")
            t.add_column("sections")
            for x in trig:
                t.add_row(x["trigger"], ", ".join(x["sections"]))
            console.print(t)
        t = Table(title="endings", title_justify="left")
        t.add_column("ending")
        t.add_column("reached", justify="right")
        t.add_column("")
        for e in self.endings():
            t.add_row(e["ending"], str(e["reached"]), "[bold red]never reached[/]" if not e["reached"] else "")
        console.print(t)


def _place(span):
    return (span.path or "", span.line, span.column) if span is not None else ("", 0, 0)


def _n(v):
    return str(v) if v else "-"


def _trigger_name(t):
    return f"when {t.event} (line {t.span.line})"


def _blocks(s):
    """The blocks directly inside statement `s` (bodies, branches, else)."""
    for name in A._child_fields(type(s)):
        v = getattr(s, name)
        if isinstance(v, A.Block):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, A.Block):
                    yield x
                elif isinstance(x, (list, tuple)):
                    for y in x:
                        if isinstance(y, A.Block):
                            yield y


def _counted_class(base):
    """A subclass of a decision op that counts: statements starting at it, the actions it offers, what
    its resumption starts (an action taken)."""

    class Counted(base):
        def __call__(self, G, L):
            cov = self._cov
            if cov._live:
                for site, delta in self._cov_incs:
                    cov.runs[site] += delta
            r = base.__call__(self, G, L)
            if cov._live:
                if r is SUSPEND and base is OfferOp:
                    cov._offered(G)
                elif r.__class__ is tuple:
                    cov._entered(r)
            return r

        def resume(self, G, L, value):
            r = base.resume(self, G, L, value)
            if r.__class__ is tuple and self._cov._live:
                self._cov._entered(r)
            return r

    Counted.__name__ = Counted.__qualname__ = "Counted" + base.__name__
    return Counted


_COUNTED = {cls: _counted_class(cls) for cls in (OfferOp, ChooseOp, RandomOp)}

__all__ = ["Coverage", "CoverageRuleset", "GameError"]

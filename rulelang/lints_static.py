"""Deeper static checks (`rulelang check`): rules that can never hold, triggers that can never fire or
that set each other off, variants that change nothing, and variables read before anything set them.

Each check is one lint registered with @lint(code) (see lints.py) and documented in docs/checks.md.
All of them are warnings and all are conservative: a finding means the rule file certainly has the
problem (on some path of play), never that it merely might. Every walk here is over the checked tree
once (procedures and functions are followed at most once per path, never recursively), so the checks
take time in proportion to the size of the rule file.
"""
from __future__ import annotations

import operator

from . import ast as A
from .lints import lint

ORDER_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
IGNORED_FIELDS = {"span", "ty", "ref", "mode", "origin", "text_span", "member_spans"}
NOT_CONST = object()
MAX_CONST_DEPTH = 20


# ---------------------------------------------------------------------------------------------- helpers
def _where(span):
    return f"{span.line}:{span.column}"


def _game_roots(prog):
    """Everything that runs in a game (not scenarios): declarations, triggers, endings, score."""
    roots = list(prog.decls.values()) + list(prog.triggers) + list(prog.endings)
    roots += [s for s in (prog.score, prog.tiebreak, prog.payoff) if s is not None]
    return roots


def _nodes(roots, seen=None):
    """Every node under ``roots``, each once (at its first place in the walk), as a list; ``seen``: the
    ids of nodes to leave out, a set that receives the ids of those listed."""
    seen = set() if seen is None else seen
    out = []
    add, keep = seen.add, out.append
    for root in roots:
        for n in A.walk(root):
            i = id(n)
            if i not in seen:
                add(i)
                keep(n)
    return out


def _game_nodes(c):
    """Every node of the game's rules (not scenarios), walked once per check and kept on the checker."""
    got = getattr(c, "_static_game_nodes", None)
    if got is None:
        got = c._static_game_nodes = _nodes(_game_roots(c.prog))
    return got


def _scenario_nodes(c):
    """Every node of the scenarios, walked once per check and kept on the checker."""
    got = getattr(c, "_static_scenario_nodes", None)
    if got is None:
        got = c._static_scenario_nodes = _nodes(c.prog.scenarios)
    return got


def _var_root(e):
    """The variable a place expression (x, x[k], x[k][j]) belongs to, or None."""
    while isinstance(e, A.Index):
        e = e.target
    if isinstance(e, A.Name) and e.ref == "var":
        return e.ident
    return None


def _const(prog, e, depth=0):
    """The value of an expression of literals, constants and names (enum members, rows), else NOT_CONST.
    A member or a row is its name, as at run time."""
    if depth > MAX_CONST_DEPTH or e is None:
        return NOT_CONST
    if isinstance(e, A.Placeholder):
        return _const(prog, e.inner, depth + 1)
    if isinstance(e, A.Literal):
        return e.value
    if isinstance(e, A.Unary) and e.op == "-":
        v = _const(prog, e.operand, depth + 1)
        return -v if type(v) is int else NOT_CONST
    if isinstance(e, A.Name):
        if e.ref == "member":
            return e.ident
        if e.ref == "const":
            d = prog.decls.get(e.ident)
            if isinstance(d, A.ConstDecl):
                return _const(prog, d.value, depth + 1)
    return NOT_CONST


def _const_options(prog, e):
    """The values a constant-ish expression can give (both branches of an if), or None."""
    if isinstance(e, A.Cond):
        a, b = _const_options(prog, e.then), _const_options(prog, e.orelse)
        return None if a is None or b is None else a | b
    v = _const(prog, e)
    if v is NOT_CONST or isinstance(v, (list, dict)):
        return None
    return {v}


def _key(e):
    """A structural key of an expression (spans and checker marks left out), or None if too complex."""
    if isinstance(e, A.Name):
        return ("name", e.ident)
    if isinstance(e, A.Index):
        t, i = _key(e.target), _key(e.index)
        return None if t is None or i is None else ("index", t, i)
    if isinstance(e, A.Field):
        t = _key(e.target)
        return None if t is None else ("field", t, e.name)
    if isinstance(e, A.Literal):
        return ("lit", repr(e.value))
    if isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.ref == "builtin_func":
        args = [_key(a.value) for a in e.args]
        return None if None in args else ("call", e.func.ident, tuple(args))
    return None


def _text(e):
    """Source-like text of a short expression, for messages."""
    if isinstance(e, A.Name):
        return e.ident
    if isinstance(e, A.Index):
        return f"{_text(e.target)}[{_text(e.index)}]"
    if isinstance(e, A.Field):
        return f"{_text(e.target)}.{e.name}"
    if isinstance(e, A.Literal):
        return "none" if e.value is None else (str(e.value).lower() if isinstance(e.value, bool) else repr(e.value)
                                               if isinstance(e.value, str) else str(e.value))
    if isinstance(e, A.Call) and isinstance(e.func, A.Name):
        return f"{e.func.ident}(...)"
    return "..."


def _show(v):
    if v is None:
        return "none"
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def _comparisons(prog, e):
    """(subject, op, constant, node) for a comparison of an expression with a constant (constant on the right)."""
    if not (isinstance(e, A.Binary) and e.op in FLIP):
        return None
    rv, lv = _const(prog, e.right), _const(prog, e.left)
    if rv is not NOT_CONST and lv is NOT_CONST:
        return e.left, e.op, rv
    if lv is not NOT_CONST and rv is NOT_CONST:
        return e.right, FLIP[e.op], lv
    return None


def _conjuncts(e):
    if isinstance(e, A.Binary) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _holds_for(op, v, k):
    if op == "==":
        return v == k
    if op == "!=":
        return v != k
    if type(v) is not int or type(k) is not int:
        return None  # an ordering of non-numbers: not judged here
    return ORDER_OPS[op](v, k)


def _same(a, b):
    """Two declarations (or parts of them) alike but for positions and checker marks (too deep: not alike)."""
    try:
        return _alike(a, b)
    except RecursionError:
        return False


def _alike(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_alike(x, y) for x, y in zip(a, b))
    if hasattr(type(a), "__attrs_attrs__"):
        for f in type(a).__attrs_attrs__:
            if f.name in IGNORED_FIELDS:
                continue
            if not _alike(getattr(a, f.name), getattr(b, f.name)):
                return False
        return True
    return a == b


# ---------------------------------------------------------------------------------------------- W310
@lint("W310")
def contradictory_requires(c, code):
    """A require (or an ending's or a trigger's condition) whose comparisons leave no value:
    `require x > 3 and x < 2`."""
    prog = c.prog
    for d in prog.of_kind("action"):
        for r in d.requires:
            found = _contradiction(prog, r.test)
            if found:
                c.warn(r.test.span, code, f"this requirement can never hold: no value of {found}",
                       hint=f"action '{d.name}' can never be taken; check the bounds (perhaps 'or' was meant)")
    for e in prog.endings:
        found = _contradiction(prog, e.condition)
        if found:
            c.warn(e.condition.span, code, f"this ending can never happen: no value of {found}",
                   hint="check the bounds (perhaps 'or' was meant)")
    for t in prog.triggers:
        found = _contradiction(prog, t.condition) if t.condition is not None else None
        if found:
            c.warn(t.condition.span, code, f"this trigger's condition can never hold: no value of {found}",
                   hint="the trigger never runs; check the bounds (perhaps 'or' was meant)")


def _contradiction(prog, test):
    """'X is > 3 and < 2' when the comparisons of one value X joined by 'and' leave no value, else None."""
    bounds = {}
    for part in _conjuncts(test):
        cmp = _comparisons(prog, part)
        if cmp is None:
            continue
        subject, op, k = cmp
        key = _key(subject)
        if key is None:
            continue
        b = bounds.setdefault(key, {"eq": set(), "ne": set(), "lo": None, "hi": None, "text": _text(subject),
                                    "parts": []})
        b["parts"].append(op + " " + _show(k))
        if op == "==":
            b["eq"].add(k)
        elif op == "!=":
            b["ne"].add(k)
        elif type(k) is int:
            lo = k + 1 if op == ">" else k if op == ">=" else None
            hi = k - 1 if op == "<" else k if op == "<=" else None
            if lo is not None:
                b["lo"] = lo if b["lo"] is None else max(b["lo"], lo)
            if hi is not None:
                b["hi"] = hi if b["hi"] is None else min(b["hi"], hi)
    for b in bounds.values():
        if len(b["parts"]) >= 2 and _empty(b):
            return f"{b['text']} is " + " and ".join(b["parts"])
    return None


def _empty(b):
    eq = b["eq"]
    if len(eq) > 1:
        return True
    lo, hi = b["lo"], b["hi"]
    if eq:
        (v,) = eq
        if v in b["ne"]:
            return True
        if type(v) is int and ((lo is not None and v < lo) or (hi is not None and v > hi)):
            return True
        return False
    if lo is not None and hi is not None:
        if lo > hi:
            return True
        if hi - lo < 1000 and all(v in b["ne"] for v in range(lo, hi + 1)):
            return True
    return False


# ---------------------------------------------------------------------------------------------- W311
def _scalar_type(c, d):
    t = c.globals.get(d.name, (None, None))[1]
    if t is None:
        return None
    if d.per_player:
        t = t.args[0] if t.args else None
    return t


def _default_of(t):
    if t.kind == "range":
        return t.low
    if t.name == "int":
        return 0
    if t.name == "bool":
        return False
    return None


def _value_sets(c):
    """var name -> the set of every value it can hold (from its start value and every assignment, scenario
    givens included), or None when some write is not a constant."""
    prog = c.prog
    out = {}
    for d in prog.of_kind("var"):
        t = _scalar_type(c, d)
        if t is None or t.name in ("list", "set", "map", "deck", "bag", "tuple", "any", "node", "player"):
            continue
        if t.kind not in ("basic", "range", "enum") or t.name not in ("int", "bool", "str") and t.kind != "enum":
            continue
        if d.value is None:
            vals = {_default_of(t)}
        else:
            vals = _const_options(prog, d.value)
            if vals is None and d.per_player and isinstance(d.value, A.ListLit):
                vals = set()
                for item in d.value.items:
                    o = _const_options(prog, item)
                    if o is None:
                        vals = None
                        break
                    vals |= o
        out[d.name] = vals
    for n in _game_nodes(c) + _scenario_nodes(c):
        targets = []
        if isinstance(n, A.Assign):
            root = _var_root(n.target)
            if root in out and out[root] is not None:
                d = prog.decls[root]
                depth = 0
                e = n.target
                while isinstance(e, A.Index):
                    e, depth = e.target, depth + 1
                opts = _const_options(prog, n.value) if n.op == "=" and depth == (1 if d.per_player else 0) else None
                if opts is None:
                    out[root] = None
                else:
                    out[root] |= opts
            continue
        if isinstance(n, A.Cost):
            targets = [n.target]
        elif isinstance(n, (A.Shuffle,)):
            targets = [n.pile]
        elif isinstance(n, A.DrawInto):
            targets = [n.pile, n.target]
        elif isinstance(n, A.Add):
            targets = [n.target]
        elif isinstance(n, A.Remove):
            targets = [n.source]
        elif isinstance(n, A.Move):
            targets = [n.source, n.target]
        elif isinstance(n, A.Draw):
            targets = [n.pile]
        for t in targets:
            root = _var_root(t)
            if root in out:
                out[root] = None
    return out


@lint("W311")
def impossible_comparisons(c, code):
    """A comparison with a value the variable never holds (given every assignment to it, or its range)."""
    prog = c.prog
    values = _value_sets(c)
    ranges = {}
    for d in prog.of_kind("var"):
        t = _scalar_type(c, d)
        if t is not None and t.kind == "range":
            ranges[d.name] = (t.low, t.high)
    for n in _game_nodes(c):
        cmp = _comparisons(prog, n)
        if cmp is None:
            continue
        subject, op, k = cmp
        name = _subject_var(prog, subject)
        if name is None:
            continue
        vals = values.get(name)
        if vals is not None:
            if op in ("==", "!="):
                verdict = [_holds_for(op, v, k) for v in vals]
            else:
                if not all(type(v) is int for v in vals) or type(k) is not int:
                    continue
                verdict = [_holds_for(op, v, k) for v in vals]
            shown = ", ".join(sorted(_show(v) for v in vals))
            if not any(verdict):
                c.warn(n.span, code, f"'{_text(n.left)} {n.op} {_text(n.right)}' is never true: '{name}' only ever "
                                     f"holds {shown}",
                       hint=f"every assignment to '{name}' (and its start value) gives one of {shown}")
            elif op == "!=" and all(verdict):
                c.warn(n.span, code, f"'{_text(n.left)} {n.op} {_text(n.right)}' is always true: '{name}' never "
                                     f"holds {_show(k)}",
                       hint=f"every assignment to '{name}' (and its start value) gives one of {shown}")
            continue
        if name in ranges and type(k) is int and op != "!=":
            lo, hi = ranges[name]
            can = lo <= k <= hi if op == "==" else ORDER_OPS[op](lo, k) or ORDER_OPS[op](hi, k)
            if not can:
                c.warn(n.span, code, f"'{_text(n.left)} {n.op} {_text(n.right)}' is never true: '{name}' is "
                                     f"declared {lo}..{hi}",
                       hint=f"a value outside {lo}..{hi} stops the game before it could be compared")


def _subject_var(prog, e):
    """The variable compared: `x` (one value) or `x[p]` (a per-player variable's seat)."""
    if isinstance(e, A.Name) and e.ref == "var":
        d = prog.decls.get(e.ident)
        return e.ident if isinstance(d, A.VarDecl) and not d.per_player else None
    if isinstance(e, A.Index) and isinstance(e.target, A.Name) and e.target.ref == "var":
        d = prog.decls.get(e.target.ident)
        return e.target.ident if isinstance(d, A.VarDecl) and d.per_player else None
    return None


# ---------------------------------------------------------------------------------------------- W312
def _is_spend(n, spent):
    """A `-=` of a spent number by an amount that is not a negative constant (a price, a cost)."""
    return not (isinstance(n.value, A.Unary) and n.value.op == "-") and not (
        isinstance(n.value, A.Literal) and type(n.value.value) is int and n.value.value < 0)


@lint("W312")
def spent_never_gained(c, code):
    """A number paid as a cost that nothing increases after setup: once spent it never comes back."""
    prog = c.prog
    spent = {}
    for d in prog.of_kind("action"):
        for cost in d.costs:
            root = _var_root(cost.target)
            if root is not None and root not in spent:
                spent[root] = cost
        # a cost written by hand: require coins[me] >= 3 ... effect { coins[me] -= 3 }
        required = set().union(*(_mentioned(r.test) for r in d.requires)) if d.requires else set()
        for n in A.walk(d.effect) if d.effect is not None else ():
            if isinstance(n, A.Assign) and n.op == "-=":
                root = _var_root(n.target)
                if root in required and root not in spent:
                    spent[root] = n
    if not spent:
        return
    setup = prog.decls.get("setup")
    in_setup = {id(n) for n in A.walk(setup.body)} if isinstance(setup, A.ProcDecl) else set()  # not its calls
    gained = set()
    for n in _game_nodes(c):
        if isinstance(n, A.Assign):
            root = _var_root(n.target)
            if root not in spent or id(n) in in_setup:
                continue
            k = _const(prog, n.value)
            if n.op == "-=" and (type(k) is int and k >= 0 or n is spent.get(root) or _is_spend(n, spent)):
                continue  # spending
            if n.op == "+=" and type(k) is int and k <= 0:
                continue
            gained.add(root)
        elif isinstance(n, (A.Add, A.Move, A.DrawInto, A.Shuffle, A.Remove)):
            for t in (getattr(n, "target", None), getattr(n, "source", None), getattr(n, "pile", None)):
                if t is not None and _var_root(t) in spent:
                    gained.add(_var_root(t))
    for name, cost in sorted(spent.items(), key=lambda kv: (kv[1].span.line, kv[1].span.column)):
        if name in gained:
            continue
        c.warn(cost.span, code, f"'{name}' is spent here but nothing increases it after setup: once spent it "
                                f"never comes back",
               hint=f"give a way to gain it (e.g. {name}[me] += 1 in an action or trigger), or pay with something "
                    "that is gained" if prog.decls[name].per_player else
               f"give a way to gain it ({name} += 1 in an action or trigger), or pay with something that is gained")


# ---------------------------------------------------------------------------------------------- W313
@lint("W313")
def triggers_never_fire(c, code):
    """A trigger on an event that nothing emits (built-in events: turn_* need a turn, action_done an offer)."""
    prog = c.prog
    turns = any(isinstance(n, A.Turn) for n in _game_nodes(c))
    for t in prog.triggers:
        why = None
        if t.event in ("turn_start", "turn_end") and not turns:
            why = f"no 'turn' statement runs, so '{t.event}' is never emitted"
        elif t.event == "action_done" and not c.offered:
            why = "no action is ever offered, so 'action_done' is never emitted"
        elif isinstance(prog.decls.get(t.event), A.EventDecl) and t.event not in c.emitted:
            why = f"event '{t.event}' is never emitted"
        if why:
            c.warn(t.span, code, f"this trigger can never fire: {why}",
                   hint=f"emit {t.event}(...) where it happens, or remove the trigger"
                   if t.event not in ("turn_start", "turn_end", "action_done", "game_start") else
                   "turn p { ... } emits turn_start and turn_end; taking an offered action emits action_done")


# ---------------------------------------------------------------------------------------------- W314
def _through_calls(prog, root):
    """Every node of ``root`` and of the procedures it calls (each procedure once, however often called)."""
    seen = set()
    todo = [root]
    while todo:
        for n in A.walk(todo.pop()):
            yield n
            if isinstance(n, A.ExprStmt) and isinstance(n.expr, A.Call) and isinstance(n.expr.func, A.Name):
                d = prog.decls.get(n.expr.func.ident)
                if isinstance(d, A.ProcDecl) and d.name not in seen:
                    seen.add(d.name)
                    todo.append(d.body)


def _emits_of(prog, body):
    """(event, emit statement) for every emit a block runs, through the procedures it calls."""
    return [(n.event, n) for n in _through_calls(prog, body) if isinstance(n, A.Emit)]


@lint("W314")
def trigger_cycles(c, code):
    """Triggers that emit each other's events in a cycle: a cascade that only the depth limit stops."""
    prog = c.prog
    edges = {}  # event -> list of (next event, trigger, emit)
    for t in prog.triggers:
        for ev, em in _emits_of(prog, t.body):
            edges.setdefault(t.event, []).append((ev, t, em))
    reported = set()
    for start in sorted(edges, key=lambda e: min((t.span.line, t.span.column) for _, t, _ in edges[e])):
        if start in reported:
            continue
        path = _cycle_from(start, edges)
        if path is None:
            continue
        events = [start] + [ev for ev, _, _ in path]
        reported |= set(events)
        steps = "; ".join(f"when {t.event} ({_where(t.span)}) emits {ev} ({_where(em.span)})" for ev, t, em in path)
        first = path[0][1]
        guarded = any(t.condition is not None for _, t, _ in path)
        how = "could set each other off in a cycle (their conditions decide how far)" if guarded else \
            "set each other off without end"
        c.warn(first.span, code, f"these triggers {how}: {' -> '.join(events)} ({steps})",
               hint="only the cascade limit (64 deep) stops this; make one of the triggers' conditions false "
                    "when it has done its work, or emit the event outside the trigger")


def _cycle_from(start, edges):
    """The shortest list of (event, trigger, emit) steps from start back to start, or None (breadth first)."""
    from collections import deque

    prev = {}
    q = deque([start])
    seen = {start}
    while q:
        cur = q.popleft()
        for ev, t, em in edges.get(cur, ()):
            if ev == start:
                path = [(ev, t, em)]
                node = cur
                while node != start:
                    step = prev[node]
                    path.append(step[1])
                    node = step[0]
                return list(reversed(path))
            if ev not in seen:
                seen.add(ev)
                prev[ev] = (cur, (ev, t, em))
                q.append(ev)
    return None


# ---------------------------------------------------------------------------------------------- W315
@lint("W315")
def variants_changing_nothing(c, code):
    """A variant or house rule that changes nothing: empty, or overriding a declaration with an identical one."""
    prog = c.prog
    noop = set()

    def base_of(item):
        if isinstance(item, A.EndingDecl):
            return next((e for e in prog.endings if e.name == item.name), None)
        if isinstance(item, A.ScoreDecl):
            return prog.payoff if item.payoff else prog.tiebreak if item.tiebreak else prog.score
        return prog.decls.get(item.name)

    def report(item, old):
        noop.add(id(item))
        what = f"ending \"{item.name}\"" if isinstance(item, A.EndingDecl) else (
            "tiebreak" if isinstance(item, A.ScoreDecl) and item.tiebreak else
            "payoff" if isinstance(item, A.ScoreDecl) and item.payoff else
            "score" if isinstance(item, A.ScoreDecl) else f"{item.kind} '{item.name}'")
        c.warn(item.span, code, f"this override of {what} is identical to the declaration it replaces "
                                f"({old.span.path}:{_where(old.span)}): it changes nothing",
               hint="change what the variant or house rule is meant to change, or remove the override")

    for old, new in prog.replaced:
        if _same(old, new):
            report(new, old)
    active = set(prog.active_variants)
    for v in prog.variants.values():
        if v.name in active:
            items = v.items
        else:
            items = v.items
            for item in items:
                if getattr(item, "mode", "") == "override" and not isinstance(item, (A.VariantDecl, A.ExtendDecl)):
                    old = base_of(item)
                    if old is not None and old is not item and id(item) not in noop and _same(old, item):
                        report(item, old)
        for item in items:
            if isinstance(item, A.ExtendDecl) and not item.body.stmts:
                noop.add(id(item))
                c.warn(item.span, code, f"this 'extend {item.target}' adds nothing",
                       hint="write the statements to add inside its { }, or remove it")
        if not v.items:
            c.warn(v.span, code, f"variant '{v.name}' changes nothing: it is empty",
                   hint="put the declarations it changes inside it: override const NAME = ..., extend NAME { ... }")
        elif all(id(i) in noop for i in v.items):
            c.warn(v.span, code, f"variant '{v.name}' changes nothing: every declaration in it leaves the rules as "
                                 "they are")
    for e in prog.extensions:
        if not e.body.stmts and id(e) not in noop and e.span.path == prog.path:
            c.warn(e.span, code, f"this 'extend {e.target}' adds nothing",
                   hint="write the statements to add inside its { }, or remove it")
    _empty_house_rule(c, code)


def _empty_house_rule(c, code):
    """A house-rule file (`extends`) that declares nothing of its own but perhaps a header."""
    import re

    prog = c.prog
    src = prog.sources.get(prog.path)
    if src is None or len(prog.sources) < 2:
        return
    m = re.search(r"^[ \t]*extends\b", src.text, re.M)
    if m is None:
        return
    own = [d for d in list(prog.decls.values()) + prog.triggers + prog.endings + prog.scenarios
           + list(prog.variants.values()) + [n for _, n in prog.replaced] + prog.extensions
           + [s for s in (prog.score, prog.tiebreak, prog.payoff) if s is not None] if d.span.path == prog.path]
    if own:
        return
    line = src.text.count("\n", 0, m.start()) + 1
    col = m.start() - (src.text.rfind("\n", 0, m.start()) + 1) + 1
    c.err(A.Span(path=prog.path, line=line, column=col, end_line=line, end_column=col + 7), code,
          "this house-rule file changes nothing: it declares nothing besides the base file",
          hint="add the overrides, extends and new declarations of the house rule", severity="warning")


# ---------------------------------------------------------------------------------------------- W316
NONE_DEFAULT = ("str", "player", "node", "tuple", "any")
ARITH = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=", ".."}


class _ReadFlow:
    """Follows the rules in the order they run from setup (setup, the game_start triggers, the flow; the
    procedures, functions, triggers and offered actions they run, each where it runs) with the set of
    variables some statement may have assigned by then. A read of a variable that has no start value (and
    so holds none) in a place where none stops the game (a field, arithmetic, a comparison of order, whose
    turn, ...) when no statement on any path before it can have assigned the variable, and no condition
    around it looks at the variable, is a finding. Loops are followed once; the first round is a path."""

    MAX_DEPTH = 40  # procedures, functions and triggers followed one inside the other; deeper ones only assign
    MAX_VISITS = 100_000  # statements and expressions followed; past it nothing more is reported (bounded time)

    def __init__(self, c, candidates):
        self.c = c
        self.prog = c.prog
        self.cands = candidates
        self.findings = {}
        self.stack = set()
        self.visits = 0
        self.memo = {}  # (what, name, assigned, guard) -> assigned after: the same walk gives the same findings
        self.triggers = {}
        for t in self.prog.triggers:
            self.triggers.setdefault(t.event, []).append(t)

    # -- expressions
    def expr(self, e, assigned, guard, strict=False):
        self.visits += 1
        if e is None or self.visits > self.MAX_VISITS:
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
                self.expr(e.right, assigned, guard | _mentioned(e.left))
                return
            s = e.op in ARITH
            self.expr(e.left, assigned, guard, strict=s)
            self.expr(e.right, assigned, guard, strict=s)
            return
        if isinstance(e, A.Cond):
            self.expr(e.test, assigned, guard)
            g = guard | _mentioned(e.test)
            self.expr(e.then, assigned, g)
            self.expr(e.orelse, assigned, g)
            return
        if isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.ref == "func":
            for a in e.args:
                self.expr(a.value, assigned, guard)
            d = self.prog.decls.get(e.func.ident)
            key = ("func", e.func.ident, frozenset(assigned), frozenset(guard & set(self.cands)))
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
            g = guard | (_mentioned(e.condition) if e.condition is not None else set())
            self.expr(e.element, assigned, g)
            self.expr(e.value, assigned, g)
            return
        for child in _children(e):
            self.expr(child, assigned, guard)

    def read(self, name, assigned, guard):
        v = name.ident
        if v in self.cands and v not in assigned and v not in guard and id(name) not in self.findings:
            self.findings[id(name)] = name

    # -- statements
    def block(self, b, assigned, guard):
        if b is None:
            return assigned
        for st in b.stmts:
            assigned = self.stmt(st, assigned, guard)
        return assigned

    def stmt(self, s, assigned, guard):
        self.visits += 1
        if self.visits > self.MAX_VISITS:
            return assigned
        x = self.expr
        if isinstance(s, A.Assign):
            if isinstance(s.target, A.Index):
                x(s.target.index, assigned, guard)
            x(s.value, assigned, guard, strict=s.op != "=")
            root = _var_root(s.target)
            if s.op != "=" and root is not None:
                self.read(_root_name(s.target), assigned, guard)
            return assigned | {root} if root in self.cands else assigned
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
            out = set(assigned)
            g = set(guard)
            for test, body in s.branches:
                x(test, assigned, g)
                g |= _mentioned(test)
                out |= self.block(body, assigned, g)
            if s.orelse is not None:
                out |= self.block(s.orelse, assigned, g)
            return out
        if isinstance(s, A.For):
            x(s.source, assigned, guard, strict=True)
            return assigned | self.block(s.body, assigned, guard)
        if isinstance(s, A.While):
            x(s.test, assigned, guard)
            return assigned | self.block(s.body, assigned, guard | _mentioned(s.test))
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
                    key = ("proc", d.name, frozenset(assigned), frozenset(guard & set(self.cands)))
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

    def writes(self, root):
        return _writes(self.prog, root) & set(self.cands)

    def decision(self, assigned):
        """Endings are checked before every decision."""
        key = ("decision", frozenset(assigned))
        if key in self.memo:
            return
        self.memo[key] = assigned
        for e in self.prog.endings:
            self.expr(e.condition, assigned, set())

    def offer(self, s, assigned):
        key = ("offer", tuple(s.actions), frozenset(assigned))
        if key not in self.memo:
            self.memo[key] = self._offer(s, assigned)
        return self.memo[key]

    def _offer(self, s, assigned):
        self.decision(assigned)
        out = set(assigned)
        for name in s.actions:
            d = self.prog.decls.get(name)
            if not isinstance(d, A.ActionDecl) or name in self.stack:
                continue
            if len(self.stack) >= self.MAX_DEPTH:
                out |= self.writes(d)
                continue
            self.stack.add(name)
            guard = set()
            for p in d.params:
                self.expr(p.domain, assigned, guard, strict=True)
            for r in d.requires:
                self.expr(r.test, assigned, guard)
                guard |= _mentioned(r.test)
            for cost in d.costs:
                self.expr(cost.amount, assigned, guard, strict=True)
                self.expr(cost.target, assigned, guard, strict=True)
            after = self.block(d.effect, assigned, guard)
            after = self.fire("action_done", after)
            out |= after
            self.stack.discard(name)
        return out

    def fire(self, event, assigned):
        key = ("fire", event, frozenset(assigned))
        if key not in self.memo:
            # a cascade back to this event while its triggers run: all they may assign counts as assigned
            self.memo[key] = assigned.union(*(self.writes(t.body) for t in self.triggers.get(event, ())))
            self.memo[key] = self._fire(event, assigned)
        return self.memo[key]

    def _fire(self, event, assigned):
        for t in self.triggers.get(event, ()):
            key = "trigger@" + _where(t.span) + t.event
            if key in self.stack or len(self.stack) >= self.MAX_DEPTH:
                assigned = assigned | self.writes(t.body)
                continue
            self.stack.add(key)
            guard = set()
            if t.condition is not None:
                self.expr(t.condition, assigned, guard)
                guard = _mentioned(t.condition)
            assigned = assigned | self.block(t.body, assigned, guard)
            self.stack.discard(key)
        return assigned


def _children(n):
    for f in type(n).__attrs_attrs__:
        if f.name in ("span", "ty", "ref", "cites"):
            continue
        v = getattr(n, f.name)
        if isinstance(v, (list, tuple)):
            for item in v:
                if isinstance(item, A.Arg):
                    yield item.value
                elif isinstance(item, tuple):
                    yield from (i for i in item if isinstance(i, A.Expr))
                elif isinstance(item, A.Expr):
                    yield item
        elif isinstance(v, A.Expr):
            yield v


def _root_name(e):
    while isinstance(e, A.Index):
        e = e.target
    return e


def _mentioned(e):
    return {n.ident for n in A.walk(e) if isinstance(n, A.Name) and n.ref == "var"} if e is not None else set()


def _writes(prog, root):
    """Every variable a part of the rules may assign (through the procedures it calls)."""
    out = set()
    for n in _through_calls(prog, root):
        if isinstance(n, (A.Assign, A.Add, A.Remove, A.Move, A.DrawInto, A.Shuffle, A.Cost, A.Draw)):
            for t in (getattr(n, "target", None), getattr(n, "pile", None), getattr(n, "source", None)):
                if isinstance(t, A.Expr):
                    r = _var_root(t)
                    if r:
                        out.add(r)
    return out


@lint("W316")
def read_before_assignment(c, code):
    prog = c.prog
    cands = {}
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
        assigned = set()
        setup = prog.decls.get("setup")
        if isinstance(setup, A.ProcDecl):
            assigned = flow.block(setup.body, assigned, set())
        assigned = flow.fire("game_start", assigned)
        main = prog.decls.get("flow")
        if isinstance(main, A.ProcDecl):
            flow.block(main.body, assigned, set())
    except RecursionError:
        pass  # rules nested deeper than the walk can follow: what was found before still holds
    for name in sorted(flow.findings.values(), key=lambda n: (n.span.path, n.span.line, n.span.column)):
        c.warn(name.span, code, f"'{name.ident}' is read here before anything assigns it: it has no start value, "
                                "so it is none here",
               hint=f"give it a start value (var {name.ident}: ... = VALUE) or assign it in setup; "
                    f"or test {name.ident} != none first")

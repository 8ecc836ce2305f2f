"""Deeper static checks (`rulelang check`): rules that can never hold, triggers that can never fire or
that set each other off, variants that change nothing, and variables read before anything set them.

Each check is one lint registered with @lint(code) (see lint_registry.py; lints.py runs them) and
documented in docs/checks.md. All of them are warnings and all are conservative: a finding means the rule
file certainly has the problem (on some path of play), never that it merely might. Every walk here is over
the checked tree once (procedures and functions are followed at most once per path, never recursively), so
the checks take time in proportion to the size of the rule file.
"""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Optional, TypeVar, Union, cast

from . import ast as A
from .ast_print import to_text
from .lint_registry import CheckResults, registry

if TYPE_CHECKING:
    from . import types as T
    from .program import Program

# an AST node of any class (the items of A.walk: expressions, statements, blocks, declarations share no base)
Node = Any
# a constant's value, as at run time: a number, true/false, a string (a member's or row's name) or none
Value = Union[int, str, None]
Vertex = TypeVar("Vertex", bound=Hashable)  # a node of a graph whose components _sccs finds

ORDER_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
IGNORED_FIELDS = {"span", "ty", "ref", "mode", "origin", "text_span", "member_spans"}
NOT_CONST = object()
MAX_CONST_DEPTH = 20

LINTS, lint = registry()  # the deeper checks W310-W315 (W316: lints_flow.py)


# ---------------------------------------------------------------------------------------------- helpers
def _where(span: A.Span) -> str:
    return f"{span.line}:{span.column}"


def _game_roots(prog: Program) -> list[A.Decl]:
    """Everything that runs in a game (not scenarios): declarations, triggers, endings, score."""
    roots = list(prog.decls.values()) + list(prog.triggers) + list(prog.endings)
    roots += [s for s in (prog.score, prog.tiebreak, prog.payoff, prog.heuristic) if s is not None]
    return roots


def _nodes(roots: Iterable[object], seen: Optional[set[int]] = None) -> list[Node]:
    """Every node under ``roots``, each once (at its first place in the walk), as a list; ``seen``: the
    ids of nodes to leave out, a set that receives the ids of those listed."""
    seen = set() if seen is None else seen
    out: list[Node] = []
    add, keep = seen.add, out.append
    for root in roots:
        for n in A.walk(root):
            i = id(n)
            if i not in seen:
                add(i)
                keep(n)
    return out


def _game_nodes(c: CheckResults) -> list[Node]:
    """Every node of the game's rules (not scenarios), walked once per check and kept on the checker."""
    got = getattr(c, "_static_game_nodes", None)
    if got is None:
        # kept on the checker, which does not declare it (it is this module's cache)
        got = c._static_game_nodes = _nodes(_game_roots(c.prog))  # type: ignore[attr-defined]
    return got


def _scenario_nodes(c: CheckResults) -> list[Node]:
    """Every node of the scenarios, walked once per check and kept on the checker."""
    got = getattr(c, "_static_scenario_nodes", None)
    if got is None:
        # kept on the checker, which does not declare it (it is this module's cache)
        got = c._static_scenario_nodes = _nodes(c.prog.scenarios)  # type: ignore[attr-defined]
    return got


def _var_root(e: Optional[A.Expr]) -> Optional[str]:
    """The variable a place expression (x, x[k], x[k][j]) belongs to, or None."""
    while isinstance(e, A.Index):
        e = e.target
    if isinstance(e, A.Name) and e.ref == "var":
        return e.ident
    return None


def _const(prog: Program, e: Optional[A.Expr], depth: int = 0) -> Any:
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


def _const_options(prog: Program, e: Optional[A.Expr]) -> Optional[set[Value]]:
    """The values a constant-ish expression can give (every branch of an if), or None."""
    out: set[Value] = set()
    todo = [e]
    while todo:  # a chain of if-then-else: one set, filled once (no set copied per branch)
        e = todo.pop()
        if isinstance(e, A.Cond):
            todo += (e.orelse, e.then)
            continue
        v = _const(prog, e)
        if v is NOT_CONST or isinstance(v, (list, dict)):
            return None
        out.add(v)
    return out


def _key(e: Optional[A.Expr]) -> Optional[tuple[Any, ...]]:
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


def _text(e: Optional[A.Expr]) -> str:
    """Source-like text of a short expression, for messages (rulelang/ast_print.py, the one printer)."""
    return to_text(e, short=True)


def _show(v: object) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


MAX_SHOWN = 12  # values of a variable a message lists; more are counted ("... (5000 values)")


def _values_text(vals: set[Value]) -> str:
    """The values a variable holds, for a message: numbers in order, then the others by their text; at
    most MAX_SHOWN of them (a message stays short however many values a file assigns)."""
    shown = [_show(v) for v in sorted(vals, key=lambda v: (0, v, "") if type(v) is int else (1, 0, _show(v)))]
    if len(shown) > MAX_SHOWN:
        return ", ".join(shown[:MAX_SHOWN]) + f", ... ({len(shown)} values)"
    return ", ".join(shown)


def _comparisons(prog: Program, e: Node) -> Optional[tuple[Optional[A.Expr], str, Value]]:
    """(subject, op, constant, node) for a comparison of an expression with a constant (constant on the right)."""
    if not (isinstance(e, A.Binary) and e.op in FLIP):
        return None
    rv, lv = _const(prog, e.right), _const(prog, e.left)
    if rv is not NOT_CONST and lv is NOT_CONST:
        return e.left, e.op, rv
    if lv is not NOT_CONST and rv is NOT_CONST:
        return e.right, FLIP[e.op], lv
    return None


def _conjuncts(e: Optional[A.Expr]) -> list[Optional[A.Expr]]:
    """The parts of a chain of 'and', left to right (no list copied per 'and')."""
    out: list[Optional[A.Expr]] = []
    todo = [e]
    while todo:
        e = todo.pop()
        if isinstance(e, A.Binary) and e.op == "and":
            todo += (e.right, e.left)
        else:
            out.append(e)
    return out


def _holds_for(op: str, v: Value, k: Value) -> Optional[bool]:
    if op == "==":
        return v == k
    if op == "!=":
        return v != k
    if type(v) is not int or type(k) is not int:
        return None  # an ordering of non-numbers: not judged here
    return ORDER_OPS[op](v, k)


def _same(a: object, b: object) -> bool:
    """Two declarations (or parts of them) alike but for positions and checker marks (too deep: not alike)."""
    try:
        return _alike(a, b)
    except RecursionError:
        return False


def _alike(a: Any, b: Any) -> bool:
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
def contradictory_requires(c: CheckResults, code: str) -> None:
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


def _contradiction(prog: Program, test: Optional[A.Expr]) -> Optional[str]:
    """'X is > 3 and < 2' when the comparisons of one value X joined by 'and' leave no value, else None."""
    bounds: dict[tuple[Any, ...], dict[str, Any]] = {}  # subject -> what its comparisons allow
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


def _empty(b: dict[str, Any]) -> bool:
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
def _scalar_type(c: CheckResults, d: A.VarDecl) -> Optional[T.Type]:
    t = c.globals.get(d.name, (None, None))[1]
    if t is None:
        return None
    if d.per_player:
        t = t.args[0] if t.args else None
    return t


def _default_of(t: T.Type) -> Value:
    if t.kind == "range":
        return t.low
    if t.name == "int":
        return 0
    if t.name == "bool":
        return False
    return None


def _value_sets(c: CheckResults) -> dict[str, Optional[set[Value]]]:
    """var name -> the set of every value it can hold (from its start value and every assignment, scenario
    givens included), or None when some write is not a constant."""
    prog = c.prog
    out: dict[str, Optional[set[Value]]] = {}
    for d in prog.of_kind("var"):
        t = _scalar_type(c, d)
        if t is None or t.name in ("list", "set", "map", "deck", "bag", "tuple", "any", "node", "player"):
            continue
        if t.kind not in ("basic", "range", "enum") or t.name not in ("int", "bool", "str") and t.kind != "enum":
            continue
        vals: Optional[set[Value]]
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
        targets: list[Optional[A.Expr]] = []
        if isinstance(n, A.Assign):
            root = _var_root(n.target)
            if root is not None and (known := out.get(root)) is not None:
                d = prog.decls[root]
                depth = 0
                e = n.target
                while isinstance(e, A.Index):
                    e, depth = e.target, depth + 1
                opts = _const_options(prog, n.value) if n.op == "=" and depth == (1 if d.per_player else 0) else None
                if opts is None:
                    out[root] = None
                else:
                    known |= opts
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
        for place in targets:
            root = _var_root(place)
            if root in out:
                out[root] = None
    return out


class _Held:
    """What is known of the values one variable holds, worked out once per variable (not per comparison):
    the values, whether all are numbers, their least and greatest, and their text for messages."""

    def __init__(self, vals: set[Value]) -> None:
        self.vals = vals
        self.ints = all(type(v) is int for v in vals)
        numbers = cast("set[int]", vals)  # when self.ints: every value is a number
        self.lo: Optional[int] = min(numbers) if self.ints and vals else None
        self.hi: Optional[int] = max(numbers) if self.ints and vals else None
        self._text: Optional[str] = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = _values_text(self.vals)
        return self._text

    def verdict(self, op: str, k: Value) -> Optional[tuple[bool, bool]]:
        """(some value makes 'x OP k' true, every value does), or None when not judged here."""
        vals = self.vals
        if op == "==":
            some = k in vals
            return some, some and len(vals) == 1
        if op == "!=":
            # two values of a set cannot both equal k: with more than one, some value differs from k
            return len(vals) > 1 or (len(vals) == 1 and k not in vals), k not in vals
        if not self.ints or type(k) is not int:
            return None
        lo, hi = self.lo, self.hi
        if lo is None or hi is None:  # no value (numbers with a value have both bounds)
            return False, True
        f = ORDER_OPS[op]
        return (f(lo, k) or f(hi, k)), (f(lo, k) and f(hi, k))


@lint("W311")
def impossible_comparisons(c: CheckResults, code: str) -> None:
    """A comparison with a value the variable never holds (given every assignment to it, or its range)."""
    prog = c.prog
    values = _value_sets(c)
    held: dict[str, _Held] = {}
    ranges: dict[str, tuple[int, int]] = {}
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
            h = held.get(name)
            if h is None:
                h = held[name] = _Held(vals)
            verdict = h.verdict(op, k)
            if verdict is None:
                continue
            some, every = verdict
            if not some:
                c.warn(n.span, code, f"'{_text(n.left)} {n.op} {_text(n.right)}' is never true: '{name}' only ever "
                                     f"holds {h.text}",
                       hint=f"every assignment to '{name}' (and its start value) gives one of {h.text}")
            elif op == "!=" and every:
                c.warn(n.span, code, f"'{_text(n.left)} {n.op} {_text(n.right)}' is always true: '{name}' never "
                                     f"holds {_show(k)}",
                       hint=f"every assignment to '{name}' (and its start value) gives one of {h.text}")
            continue
        if name in ranges and type(k) is int and op != "!=":
            lo, hi = ranges[name]
            can = lo <= k <= hi if op == "==" else ORDER_OPS[op](lo, k) or ORDER_OPS[op](hi, k)
            if not can:
                c.warn(n.span, code, f"'{_text(n.left)} {n.op} {_text(n.right)}' is never true: '{name}' is "
                                     f"declared {lo}..{hi}",
                       hint=f"a value outside {lo}..{hi} stops the game before it could be compared")


def _subject_var(prog: Program, e: Optional[A.Expr]) -> Optional[str]:
    """The variable compared: `x` (one value) or `x[p]` (a per-player variable's seat)."""
    if isinstance(e, A.Name) and e.ref == "var":
        d = prog.decls.get(e.ident)
        return e.ident if isinstance(d, A.VarDecl) and not d.per_player else None
    if isinstance(e, A.Index) and isinstance(e.target, A.Name) and e.target.ref == "var":
        d = prog.decls.get(e.target.ident)
        return e.target.ident if isinstance(d, A.VarDecl) and d.per_player else None
    return None


# ---------------------------------------------------------------------------------------------- W312
def _is_spend(n: A.Assign, spent: dict[str, Node]) -> bool:
    """A `-=` of a spent number by an amount that is not a negative constant (a price, a cost)."""
    return not (isinstance(n.value, A.Unary) and n.value.op == "-") and not (
        isinstance(n.value, A.Literal) and type(n.value.value) is int and n.value.value < 0)


@lint("W312")
def spent_never_gained(c: CheckResults, code: str) -> None:
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
                root = _var_root(t) if t is not None else None
                if root is not None and root in spent:
                    gained.add(root)
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
def triggers_never_fire(c: CheckResults, code: str) -> None:
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
# a node of the trigger graph: ("e", event), ("t", a trigger's place in prog.triggers) or ("p", procedure)
GraphNode = tuple[str, Any]
# one step of a cycle: the event emitted, the trigger that emitted it, the emit statement
CycleStep = tuple[str, A.TriggerDecl, A.Emit]

WRITERS = (A.Assign, A.Add, A.Remove, A.Move, A.DrawInto, A.Shuffle, A.Cost, A.Draw)


class _Direct:
    """What one block (or declaration) runs itself, its called procedures not followed: the procedures it
    calls (each once, in the order met), the events it emits (event, emit statement) and the variables
    it may assign."""

    __slots__ = ("calls", "emits", "writes")

    def __init__(self, prog: Program, root: Node) -> None:
        self.calls: list[str] = []
        self.emits: list[tuple[str, A.Emit]] = []
        self.writes: set[str] = set()
        called = set()
        for n in A.walk(root):
            if isinstance(n, A.Emit):
                self.emits.append((n.event, n))
            elif isinstance(n, A.ExprStmt) and isinstance(n.expr, A.Call) and isinstance(n.expr.func, A.Name):
                d = prog.decls.get(n.expr.func.ident)
                if isinstance(d, A.ProcDecl) and d.name not in called:
                    called.add(d.name)
                    self.calls.append(d.name)
            elif isinstance(n, WRITERS):
                for t in (getattr(n, "target", None), getattr(n, "pile", None), getattr(n, "source", None)):
                    if isinstance(t, A.Expr):
                        r = _var_root(t)
                        if r:
                            self.writes.add(r)


class _Runs:
    """Each block's _Direct, worked out once per check (kept on the checker): a walk through the procedures
    a block calls looks each procedure up here instead of walking it again for every caller."""

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self._of: dict[int, tuple[Node, _Direct]] = {}  # id(root) -> (root, _Direct)

    def of(self, root: Node) -> _Direct:
        got = self._of.get(id(root))
        if got is None:
            got = self._of[id(root)] = (root, _Direct(self.prog, root))
        return got[1]

    def proc(self, name: str) -> Optional[_Direct]:
        """The _Direct of the procedure's body (None: not a procedure)."""
        d = self.prog.decls.get(name)
        return self.of(d.body) if isinstance(d, A.ProcDecl) and d.body is not None else None


def _runs(c: CheckResults) -> _Runs:
    got = getattr(c, "_static_runs", None)
    if got is None:
        # kept on the checker, which does not declare it (it is this module's cache)
        got = c._static_runs = _Runs(c.prog)  # type: ignore[attr-defined]
    return got


def _sccs(nodes: Iterable[Vertex], succ: Callable[[Vertex], Iterable[Vertex]]) -> list[list[Vertex]]:
    """The strongly connected components of a graph (Tarjan's algorithm, without recursion), each a list;
    a component comes after every component it reaches. Time: in proportion to nodes and edges."""
    index: dict[Vertex, int] = {}
    low: dict[Vertex, int] = {}
    on: set[Vertex] = set()
    stack: list[Vertex] = []
    out: list[list[Vertex]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        work = [(root, iter(succ(root)))]
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ(w))))
                    break
                if w in on and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(comp)
    return out


MAX_CYCLE_SHOWN = 10  # steps of a cycle a W314 message lists (a longer one: the first ones and the count)
CYCLE_WORK = 8  # the search for cycles beyond the first of each group: at most this many steps per part ...
CYCLE_WORK_MIN = 100_000  # ... of the graph of events, triggers and procedures (or this many, if more)


class _TriggerGraph:
    """Events, their triggers and the procedures those call, as one graph: an event leads to its triggers,
    a trigger or procedure to the procedures it calls and the events it emits. Triggers that set each other
    off are the events of one strongly connected component (with more than one part)."""

    def __init__(self, c: CheckResults) -> None:
        prog = self.prog = c.prog
        self.runs = _runs(c)
        self.triggers: dict[str, list[A.TriggerDecl]] = {}  # event -> its triggers, in order
        self.number: dict[int, int] = {}  # id(trigger) -> its place in prog.triggers
        for i, t in enumerate(prog.triggers):
            self.triggers.setdefault(t.event, []).append(t)
            self.number[id(t)] = i
        nodes: list[GraphNode] = [("e", ev) for ev in self.triggers]
        self.comps = _sccs(nodes, self.succ)
        self.comp: dict[GraphNode, int] = {}  # node -> the number of its component
        for i, comp in enumerate(self.comps):
            for n in comp:
                self.comp[n] = i
        self.size = len(self.comp) + sum(len(self.succ(n)) for n in self.comp)
        # does a trigger (or procedure) emit anything, itself or through the procedures it calls?
        self.emits_any: dict[GraphNode, bool] = {}
        for comp in self.comps:  # callees' components first
            some = any((r := self.direct(n)) is not None and r.emits for n in comp) or any(
                self.emits_any.get(w, False) for n in comp for w in self.succ(n) if w[0] == "p")
            for n in comp:
                self.emits_any[n] = some

    def direct(self, node: GraphNode) -> Optional[_Direct]:
        kind, x = node
        if kind == "t":
            return self.runs.of(self.prog.triggers[x].body)
        if kind == "p":
            return self.runs.proc(x)
        return None

    def succ(self, node: GraphNode) -> list[GraphNode]:
        if node[0] == "e":
            return [("t", self.number[id(t)]) for t in self.triggers.get(node[1], ())]
        r = self.direct(node)
        if r is None:
            return []
        return [("p", p) for p in r.calls] + [("e", ev) for ev, _ in r.emits]

    def on_cycle(self, event: str) -> bool:
        n = ("e", event)
        return n in self.comp and len(self.comps[self.comp[n]]) > 1

    def first_emitting_trigger(self, event: str) -> Optional[tuple[int, int]]:
        """The position of the event's first trigger that emits something (the order cycles are looked
        for in), or None."""
        spots = [(t.span.line, t.span.column) for t in self.triggers.get(event, ())
                 if self.emits_any.get(("t", self.number[id(t)]))]
        return min(spots) if spots else None

    def cycle_from(self, start: str, work: list[int]) -> Optional[list[CycleStep]]:
        """The shortest list of (event, trigger, emit) steps from start back to start (breadth first, in the
        order of the triggers and of what each runs; every procedure followed once per search), inside
        start's component; ``work`` (a one-item list) counts the steps taken."""
        from collections import deque

        comp = self.comp[("e", start)]
        inside = self.comp.get
        prev: dict[str, tuple[str, CycleStep]] = {}  # event -> the event and step it was reached from
        q = deque([start])
        seen = {start}
        followed: set[str] = set()  # procedures whose emits this search has listed
        while q:
            cur = q.popleft()
            for t in self.triggers.get(cur, ()):
                work[0] += 1
                if inside(("t", self.number[id(t)])) != comp:
                    continue  # it cannot lead back to start
                todo: list[Optional[_Direct]] = [self.runs.of(t.body)]
                while todo:
                    r = todo.pop()
                    if r is None:  # a procedure without a body
                        continue
                    for ev, em in r.emits:
                        work[0] += 1
                        if ev == start:
                            path = [(ev, t, em)]
                            node = cur
                            while node != start:
                                step = prev[node]
                                path.append(step[1])
                                node = step[0]
                            return list(reversed(path))
                        if ev not in seen and inside(("e", ev)) == comp:
                            seen.add(ev)
                            prev[ev] = (cur, (ev, t, em))
                            q.append(ev)
                    for p in r.calls:
                        work[0] += 1
                        if p not in followed and inside(("p", p)) == comp:
                            followed.add(p)
                            todo.append(self.runs.proc(p))
        return None


@lint("W314")
def trigger_cycles(c: CheckResults, code: str) -> None:
    """Triggers that emit each other's events in a cycle: a cascade that only the depth limit stops.
    Linear in the rules: only events on a cycle are searched from, each search stays inside its group of
    triggers that set each other off, and past a bound in proportion to the rules each group gets one
    report (its first cycle)."""
    g = _TriggerGraph(c)
    starts = [ev for ev in g.triggers if g.on_cycle(ev)]
    # an event on a cycle has a trigger that emits something: its key is never None
    starts.sort(key=g.first_emitting_trigger)  # type: ignore[arg-type]
    budget = max(CYCLE_WORK_MIN, CYCLE_WORK * g.size)
    work = [0]
    reported = set()
    groups = set()  # the components a cycle was reported in
    for start in starts:
        if start in reported:
            continue
        comp = g.comp[("e", start)]
        if comp in groups and work[0] > budget:
            continue
        path = g.cycle_from(start, work)
        if path is None:  # pragma: no cover - an event of a component of several parts is on a cycle
            continue
        groups.add(comp)
        events = [start] + [ev for ev, _, _ in path]
        reported |= set(events)
        shown = path if len(path) <= MAX_CYCLE_SHOWN else path[:MAX_CYCLE_SHOWN]
        steps = "; ".join(f"when {t.event} ({_where(t.span)}) emits {ev} ({_where(em.span)})" for ev, t, em in shown)
        chain = " -> ".join(events)
        if len(path) > MAX_CYCLE_SHOWN:
            chain = " -> ".join(events[:MAX_CYCLE_SHOWN + 1]) + f" -> ... -> {start}"
            steps += f"; ... ({len(path)} triggers in all)"
        first = path[0][1]
        guarded = any(t.condition is not None for _, t, _ in path)
        how = "could set each other off in a cycle (their conditions decide how far)" if guarded else \
            "set each other off without end"
        c.warn(first.span, code, f"these triggers {how}: {chain} ({steps})",
               hint="only the cascade limit (64 deep) stops this; make one of the triggers' conditions false "
                    "when it has done its work, or emit the event outside the trigger")


# ---------------------------------------------------------------------------------------------- W315
@lint("W315")
def variants_changing_nothing(c: CheckResults, code: str) -> None:
    """A variant or house rule that changes nothing: empty, or overriding a declaration with an identical one."""
    prog = c.prog
    noop: set[int] = set()
    endings: dict[str, A.EndingDecl] = {}  # name -> the first ending of that name (looked up once per override, not searched)
    for e in prog.endings:
        endings.setdefault(e.name, e)

    def base_of(item: Node) -> Optional[A.Decl]:
        if isinstance(item, A.EndingDecl):
            return endings.get(item.name)
        if isinstance(item, A.ScoreDecl):
            return prog.payoff if item.payoff else prog.tiebreak if item.tiebreak else prog.score
        return prog.decls.get(item.name)

    def report(item: Node, old: A.Decl) -> None:
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
            if isinstance(item, A.ExtendDecl) and (item.body is None or not item.body.stmts):
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


def _empty_house_rule(c: CheckResults, code: str) -> None:
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


# (used by W316 in lints_flow.py too)
def _mentioned(e: Optional[A.Expr]) -> set[str]:
    return {n.ident for n in A.walk(e) if isinstance(n, A.Name) and n.ref == "var"} if e is not None else set()


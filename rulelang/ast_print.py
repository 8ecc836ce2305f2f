"""The one printer of the AST back to rule-file text: ``to_text(expression)``.

What prints an expression uses it: the optimiser's fixtures and `rulelang check --show-optimised`
(interpreter/optimise/tree.py), and the messages that quote an expression (``short=True``: a call's
arguments and any larger part written ``...``, as in "'pos[p] > 10' is never true"). A Bind that binds
a tuple pattern's name (`for (a, b) in ...`, an action's `(a, b) in ...`) prints as the expression it
wraps, as written; any other Bind, which only the optimiser makes, prints as `let %x = value in body`; a
node the printer does not know prints as its class name.
"""
from __future__ import annotations

from . import ast as A

_PREC = {"or": 1, "and": 2, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "in": 4, "not in": 4,
         "..": 5, "+": 6, "-": 6, "*": 7, "/": 7, "%": 7}


def precedence(e) -> int:
    """How tightly an expression binds (9: an atom); a part binding less is bracketed."""
    if isinstance(e, A.Binary):
        return _PREC.get(e.op, 4)
    if isinstance(e, A.Unary):
        return 3 if e.op == "not" else 8
    if isinstance(e, A.Bind) and isinstance(e.value, A.Unpack):
        return precedence(_unbound(e))
    if isinstance(e, (A.Cond, A.Lambda, A.Bind)):
        return 0
    return 9


def literal_text(v) -> str:
    """A literal's value as rule text."""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "none"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(v)


def to_text(e, short: bool = False) -> str:
    """``e`` written back as rule text; ``short``: only names, literals, indexes, fields and the names of
    calls are written out (``f(...)``), anything else is ``...``."""
    if e is None:
        return "..." if short else "?"
    return (_Short if short else _Printer)().visit(e)


class _Printer(A.NodeVisitor):
    def generic_visit(self, e):
        return type(e).__name__

    def sub(self, x, p, right=False):
        s = self.visit(x) if x is not None else "?"
        q = precedence(x)
        return f"({s})" if q < p or (right and q == p and q < 9) else s

    def text(self, x):
        return self.visit(x) if x is not None else "?"

    def visit_Literal(self, e):
        return literal_text(e.value)

    def visit_Name(self, e):
        return e.ident

    def visit_Placeholder(self, e):
        return "?" + self.sub(e.inner, 9)

    def visit_Unary(self, e):
        return ("not " + self.sub(e.operand, 3)) if e.op == "not" else "-" + self.sub(e.operand, 8)

    def visit_Binary(self, e):
        p = _PREC.get(e.op, 4)
        sep = e.op if e.op == ".." else f" {e.op} "
        return self.sub(e.left, p) + sep + self.sub(e.right, p, right=True)

    def visit_Cond(self, e):
        return f"if {self.text(e.test)} then {self.text(e.then)} else {self.text(e.orelse)}"

    def visit_Lambda(self, e):
        return f"{e.param} => {self.text(e.body)}"

    def visit_Bind(self, e):
        if isinstance(e.value, A.Unpack):  # a tuple pattern's name, bound where the pattern is written
            return self.text(_unbound(e))
        return f"let {e.name} = {self.text(e.value)} in {self.text(e.body)}"

    def args(self, e):
        return ", ".join((f"{a.name}: " if a.name else "") + self.text(a.value) for a in e.args)

    def visit_Call(self, e):
        return f"{self.sub(e.func, 9)}({self.args(e)})"

    def visit_New(self, e):
        return f"new {e.kind}({self.args(e)})"

    def visit_Index(self, e):
        return f"{self.sub(e.target, 9)}[{self.text(e.index)}]"

    def visit_Field(self, e):
        return f"{self.sub(e.target, 9)}.{e.name}"

    def visit_Unpack(self, e):  # an item a tuple pattern binds (in the optimiser's output)
        return f"{self.sub(e.value, 9)}[{e.index}]"

    def visit_TupleLit(self, e):
        inner = ", ".join(self.text(x) for x in e.items)
        return f"({inner},)" if len(e.items) == 1 else f"({inner})"

    def visit_ListLit(self, e):
        return "[" + ", ".join(self.text(x) for x in e.items) + "]"

    def visit_SetLit(self, e):
        return "{" + ", ".join(self.text(x) for x in e.items) + "}"

    def visit_MapLit(self, e):
        return "{" + ", ".join(f"{self.text(k)}: {self.text(v)}" for k, v in e.entries) + "}"

    def visit_EmptyLit(self, e):
        return "{}"

    def visit_Comprehension(self, e):
        written = _patterns_of(e.element)  # tuple patterns, as written
        tail = f" for {', '.join(written.get(n, n) for n in e.names)} in {self.text(e.source)}"
        if e.condition is not None:
            tail += f" if {self.text(_unbound(e.condition))}"
        if e.kind == "map":
            return "{" + f"{self.text(_unbound(e.element))}: {self.text(_unbound(e.value))}{tail}" + "}"
        return f"[{self.text(_unbound(e.element))}{tail}]"

    def visit_Choose(self, e):
        return f"choose {self.text(e.count) if e.count else 'one'} of {self.text(e.options)}"

    def visit_Roll(self, e):
        return f"roll {self.text(e.count) if e.count else 'one'} of {self.text(e.faces)}"

    def visit_Draw(self, e):
        return f"draw {self.text(e.count) if e.count else 'one'} from {self.text(e.pile)}"


class _Short(_Printer):
    """Names, literals, indexes and fields in full, a call as its name, anything else as '...'."""

    def generic_visit(self, e):
        return "..."

    def text(self, x):
        return self.visit(x) if x is not None else "..."

    def sub(self, x, p, right=False):
        return self.text(x)

    def visit_Call(self, e):
        return f"{e.func.ident}(...)" if isinstance(e.func, A.Name) else "..."

    def visit_Bind(self, e):
        return self.text(_unbound(e)) if isinstance(e.value, A.Unpack) else "..."

    visit_Placeholder = visit_Unary = visit_Binary = visit_Cond = visit_Lambda = generic_visit
    visit_New = visit_TupleLit = visit_ListLit = visit_SetLit = visit_MapLit = visit_EmptyLit = generic_visit
    visit_Comprehension = visit_Choose = visit_Roll = visit_Draw = generic_visit


def _patterns_of(e) -> dict:
    """{the hidden name of a tuple: its pattern as written} from the Binds of Unpack items around e (what
    the builder makes of `for (a, (b, _)) in ...`; the optimiser may have renamed every name since)."""
    groups: dict = {}  # hidden name -> (size, {index: name})
    while isinstance(e, A.Bind) and isinstance(e.value, A.Unpack) and isinstance(e.value.value, A.Name):
        u = e.value
        groups.setdefault(u.value.ident, (u.size, {}))[1][u.index] = A.DISCARD if u.discard else e.name
        e = e.body

    def text(hidden):
        size, items = groups[hidden]
        parts = [text(items[i]) if items.get(i) in groups else items.get(i, A.DISCARD) for i in range(size)]
        return f"({parts[0]},)" if size == 1 else "(" + ", ".join(parts) + ")"

    nested = {n for _, items in groups.values() for n in items.values()}
    return {h: text(h) for h in groups if h not in nested}


def _unbound(e):
    """e without the Binds of a tuple pattern's names around it (the pattern is written in the `for`)."""
    while isinstance(e, A.Bind) and isinstance(e.value, A.Unpack):
        e = e.body
    return e

"""Helpers the optimiser passes share: copying rebuilds of the checked AST, the names an expression
reads, fresh hidden names, a size measure, which expressions cannot fail, which ones the compiler folds
into constants when loading (and so which are worth a hidden let), and a readable printer.

Nothing here mutates a node: a rebuild copies the nodes on the path to a change (`attrs.evolve`,
which keeps `span`, `ty` and `ref`) and shares everything else.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Protocol, TypeGuard, TypeVar

import attrs

from rulelang import ast as A
from rulelang.ast_print import to_text
from rulelang import types as T

if TYPE_CHECKING:
    from rulelang.program import Program

_Node = TypeVar("_Node")


class _Evolve(Protocol):
    def __call__(self, inst: _Node, **changes: Any) -> _Node: ...


# attrs.evolve itself, under a name mypy's attrs plugin does not look at: it knows the AST's classes through
# `dataclass_transform` (rulelang/ast.py's `node`), not as attrs classes, and would refuse them
evolve: _Evolve = attrs.evolve

# a Program, declaration, statement, block or expression, or a list of them: what the rewrites walk (the
# AST's classes share no base class)
Tree = Any
Rule = Callable[[A.Expr, "Context", int], A.Expr]  # a pass's rule: (node, context, depth) -> the node rewritten
Rewrite = Callable[[A.Expr], A.Expr]  # an expression -> the expression rewritten
# an expression, or a part a node may leave out (None): a rewrite gives back the same kind
MaybeExpr = TypeVar("MaybeExpr", A.Expr, Optional[A.Expr])

# names whose reading cannot fail (a local is always set where the checker resolved it; `me` is not
# always known, scenario values are computed)
SAFE_REFS = frozenset({"local", "var", "const", "member", "enum_values", "table", "board"})
SAFE_BUILTINS = frozenset({"current", "players", "all_players", "player_count", "end_triggered"})


class Context:
    """What the passes share while optimising one program: the program (its functions), and the
    counter behind fresh hidden names."""

    def __init__(self, program: Optional[Program] = None, inline_size: int = 40, inline_budget: int = 50_000) -> None:
        self.program = program
        self.inline_size = inline_size  # the largest function body (in nodes, once inlined) that is inlined
        self.inline_budget = inline_budget  # expression nodes that inlining may still add to the program
        self._n = 0
        self.bodies: dict[str, A.Expr] = {}  # function name -> its body, optimised (filled by the inline pass)
        self.inlinable: dict[str, tuple[list[str], A.Expr]] = {}  # function name -> (parameter names, body) of the functions inlined
        # the same for every function that may be expanded at all (any size; see early.count_rule)
        self.expandable: dict[str, tuple[list[str], A.Expr]] = {}
        self.stats: dict[str, int] = {}  # pass name -> rewrites made
        self.rules: list[tuple[str, Rule]] = []  # (name, rule) being applied together (see rewriter)
        self.run: Optional[Callable[..., A.Expr]] = None
        self.me_known = False  # whether `me` is always known where the passes stand (in an action)

    def after(self, e: A.Expr, name: str, depth: int = 0) -> A.Expr:
        """e with the rules that follow `name` applied to it (for a node a rule has just made)."""
        names = [n for n, _ in self.rules]
        if name in names:
            for _, rule in self.rules[names.index(name) + 1:]:
                e = rule(e, self, depth)
        return e

    def fresh(self, stem: str = "t") -> str:
        """A hidden local name: it starts with '%', which no rule-file name can."""
        self._n += 1
        return f"%{stem}{self._n}"

    def count(self, what: str) -> None:
        self.stats[what] = self.stats.get(what, 0) + 1


# ---------------------------------------------------------------------------- rebuilding
_PLAIN = (str, int, bool, float, type(None))
_KIDS: dict[type, tuple[str, ...]] = {}


def _kid_fields(cls: type) -> tuple[str, ...]:
    """The fields of an expression class that may hold expressions (not span, ty, ref, names...)."""
    got = _KIDS.get(cls)
    if got is None:
        got = _KIDS[cls] = tuple(n for n in A._child_fields(cls)
                                 if n not in ("op", "ident", "param", "name", "names", "kind", "value_name", "prompt",
                                              "ordered", "optional")
                                 or (cls is A.Bind and n == "value"))
    return got


def _map_value(val: Tree, f: Rewrite) -> Tree:
    c = val.__class__
    if c in _PLAIN:
        return val
    if isinstance(val, A.Expr):
        return f(val)
    if c is A.Arg:
        new = f(val.value)
        return val if new is val.value else evolve(val, value=new)
    if c is list or c is tuple:
        out = None
        for i, x in enumerate(val):
            y = _map_value(x, f)
            if y is not x:
                if out is None:
                    out = list(val)
                out[i] = y
        if out is None:
            return val
        return out if c is list else tuple(out)
    return val


def map_children(e: A.Expr, f: Rewrite) -> A.Expr:
    """e with f applied to each of its direct child expressions (through arguments, lists and map
    entries); e itself when nothing changed."""
    changes = None
    for name in _kid_fields(e.__class__):
        val = getattr(e, name)
        if val.__class__ in _PLAIN:
            continue
        new = _map_value(val, f)
        if new is not val:
            if changes is None:
                changes = {}
            changes[name] = new
    return evolve(e, **changes) if changes else e


def _collect(val: Tree, out: list[A.Expr]) -> None:
    c = val.__class__
    if c in _PLAIN:
        return
    if isinstance(val, A.Expr):
        out.append(val)
    elif c is A.Arg:
        out.append(val.value)
    elif c is list or c is tuple:
        for x in val:
            _collect(x, out)


def children(e: A.Expr) -> list[A.Expr]:
    """The direct child expressions of e, in the order the fields are declared."""
    out: list[A.Expr] = []
    for name in _kid_fields(e.__class__):
        _collect(getattr(e, name), out)
    return out


_SKIP = (A.Span, T.Type, A.TypeName, A.TypeGeneric, A.TypeRange)


_STRUCT: dict[type, tuple[str, ...]] = {}


def _struct_fields(cls: type) -> tuple[str, ...]:
    got = _STRUCT.get(cls)
    if got is None:
        # an action parameter's domain is left as written: whether it is a constant decides, when
        # loading, whether the action's choices are listed (and limited) then or while playing
        got = _STRUCT[cls] = tuple(n for n in A._child_fields(cls) if n not in ("cites", "mode", "origin")
                                   and not (cls is A.Param and n == "domain"))
    return got


def map_exprs(obj: Tree, f: Rewrite) -> Tree:
    """obj (a statement, block, declaration, or a list of them) with f applied to every outermost
    expression inside it; obj itself when nothing changed."""
    c = obj.__class__
    if c in _PLAIN:
        return obj
    if isinstance(obj, A.Expr):
        return f(obj)
    if c is list or c is tuple:
        out = None
        for i, x in enumerate(obj):
            y = map_exprs(x, f)
            if y is not x:
                if out is None:
                    out = list(obj)
                out[i] = y
        if out is None:
            return obj
        return out if c is list else tuple(out)
    if isinstance(obj, _SKIP) or not attrs.has(c):
        return obj
    changes = None
    for name in _struct_fields(c):
        val = getattr(obj, name)
        if val.__class__ in _PLAIN:
            continue
        new = map_exprs(val, f)
        if new is not val:
            if changes is None:
                changes = {}
            changes[name] = new
    return evolve(obj, **changes) if changes else obj


def _guarded(f: Rewrite) -> Callable[[Tree], Tree]:
    """f, except that an item too deeply nested for the passes is left as it is (it still loads: the
    compiler has the room the parser's limits promise, the optimiser does not need it)."""
    def g(obj: Tree) -> Tree:
        try:
            return map_exprs(obj, f)
        except RecursionError:
            return obj
    return g


def map_program(program: Program, f: Rewrite, replace: Optional[dict[str, A.Decl]] = None) -> Program:
    """A copy of the Program with f applied to every outermost expression of every declaration,
    trigger, ending, score and scenario (unchanged parts are shared); `replace` (name -> declaration)
    gives declarations already done. An item nested too deeply for the passes is left unoptimised."""
    decls: dict[str, A.Decl] = {}
    changed = False
    replace = replace or {}
    each = _guarded(f)
    ctx = getattr(f, "ctx", None)
    for name, d in program.decls.items():
        if ctx is not None:
            # inside an action, `me` is always known (the engine sets it before any of its rules run)
            ctx.me_known = isinstance(d, A.ActionDecl)
        nd = replace[name] if name in replace else each(d)
        decls[name] = nd
        changed = changed or nd is not d
    if ctx is not None:
        ctx.me_known = False
    parts: dict[str, Any] = {}  # field of the Program -> its new value
    for field in ("triggers", "endings", "scenarios"):
        old = getattr(program, field)
        new = [each(x) for x in old]
        if any(a is not b for a, b in zip(new, old)):
            parts[field] = new
    for field in ("score", "tiebreak", "payoff"):
        old = getattr(program, field)
        new = each(old)
        if new is not old:
            parts[field] = new
    if not changed and not parts:
        return program
    if changed:
        parts["decls"] = decls
    return evolve(program, **parts)


def is_program(obj: object) -> bool:
    return hasattr(obj, "decls") and hasattr(obj, "triggers")


def apply(tree: Tree, f: Rewrite) -> Tree:
    """Apply f to every outermost expression of a Program, a declaration, a statement or an expression."""
    if is_program(tree):
        return map_program(tree, f)
    return map_exprs(tree, f)


def bottom_up(e: A.Expr, rule: Rewrite) -> A.Expr:
    """e with `rule` applied to every expression node, children first (a rule sees its children
    already rewritten)."""
    return rule(map_children(e, lambda c: bottom_up(c, rule)))


def rewriter(rules: Iterable[tuple[str, Rule]], ctx: Context) -> Callable[..., A.Expr]:
    """A function e -> e that applies the rules `[(name, rule(e, ctx, depth))]` to every node of an
    expression, children first, in one walk; `depth` is how deep the node stands in its outermost
    expression. ctx.after(e, name, depth) lets a rule apply the rules that follow it to a node it made."""
    def run(e: A.Expr, depth: int = 0) -> A.Expr:
        e = map_children(e, lambda c: run(c, depth + 1))
        for _, rule in rules:
            e = rule(e, ctx, depth)
        return e
    ctx.rules = list(rules)
    ctx.run = run
    run.ctx = ctx  # type: ignore[attr-defined]  # (map_program reads it with getattr)
    return run


def pass_over(tree: Tree, ctx: Context, name: str, rule: Rule) -> Tree:
    """Run one rule as a pass of its own over a Program, declaration, statement or expression."""
    saved = ctx.rules, ctx.run
    run = rewriter([(name, rule)], ctx)
    try:
        return apply(tree, run)
    finally:
        ctx.rules, ctx.run = saved


# ---------------------------------------------------------------------------- building
def name(ident: str, ty: Optional[T.Type], span: A.Span = A.NO_SPAN, ref: str = "local") -> A.Name:
    return A.Name(span=span, ty=ty, ident=ident, ref=ref)


def call(fname: str, args: Iterable[A.Expr], ty: Optional[T.Type], span: A.Span = A.NO_SPAN) -> A.Call:
    """A call of a built-in, as the checker leaves one (the function's name has ref builtin_func)."""
    return A.Call(span=span, ty=ty, func=A.Name(span=span, ident=fname, ref="builtin_func"),
                  args=[A.Arg(None, a, span=getattr(a, "span", span)) for a in args])


def lam(param: str, body: A.Expr, span: A.Span = A.NO_SPAN) -> A.Lambda:
    return A.Lambda(span=span, ty=T.FUNC, param=param, body=body)


def lit(value: Any, span: A.Span = A.NO_SPAN) -> A.Literal:
    ty = T.NONE if value is None else (T.BOOL if isinstance(value, bool) else (T.INT if isinstance(value, int) else T.STR))
    return A.Literal(span=span, ty=ty, value=value)


_OPPOSITE = {"==": "!=", "!=": "=="}


def negate(e: A.Expr, span: Optional[A.Span] = None) -> A.Expr:
    """`not e`; for `a == b` or `a != b` the opposite comparison (the same reads, errors and charges)."""
    if isinstance(e, A.Binary) and e.op in _OPPOSITE:
        return evolve(e, op=_OPPOSITE[e.op], span=span or e.span, ty=T.BOOL)
    return A.Unary(span=span or e.span, ty=T.BOOL, op="not", operand=e)


def bind(hidden: str, value: A.Expr, body: A.Expr, span: Optional[A.Span] = None) -> A.Bind:
    return A.Bind(span=span or body.span, ty=body.ty, name=hidden, value=value, body=body)


# ---------------------------------------------------------------------------- questions
def is_builtin_call(e: Optional[A.Expr], *names: str) -> TypeGuard[A.Call]:
    return (isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.ref == "builtin_func"
            and (not names or e.func.ident in names))


def positional(e: A.Call) -> Optional[list[A.Expr]]:
    """The arguments of a call, when all are positional (else None)."""
    if any(a.name is not None for a in e.args):
        return None
    return [a.value for a in e.args]


def binders(e: A.Expr) -> tuple[str, ...]:
    """The local names an expression node binds for its children (a lambda's parameter, a
    comprehension's names, a Bind's hidden name)."""
    if isinstance(e, A.Lambda):
        return (e.param,)
    if isinstance(e, A.Comprehension):
        return tuple(e.names)
    if isinstance(e, A.Bind):
        return (e.name,)
    return ()


def free_locals(e: A.Expr) -> set[str]:
    """The local names e reads that it does not bind itself."""
    out: set[str] = set()

    # (the source of a comprehension, the body of a lambda, the value and body of a let: never None in a
    # checked tree, though the AST's classes allow it; no test for None in this walk, which code generation runs)
    # (hinted by a type comment: annotations on a nested def cost a bytecode at each call of free_locals)
    def walk(x, bound):  # type: (A.Expr, frozenset[str]) -> None
        if isinstance(x, A.Name):
            if x.ref == "local" and x.ident not in bound:
                out.add(x.ident)
            return
        if isinstance(x, A.Comprehension):
            walk(x.source, bound)  # type: ignore[arg-type]
            inner = bound | set(x.names)
            for c in (x.element, x.value, x.condition):
                if c is not None:
                    walk(c, inner)
            return
        if isinstance(x, A.Lambda):
            walk(x.body, bound | {x.param})  # type: ignore[arg-type]
            return
        if isinstance(x, A.Bind):
            walk(x.value, bound)  # type: ignore[arg-type]
            walk(x.body, bound | {x.name})  # type: ignore[arg-type]
            return
        for c in children(x):
            walk(c, bound)
    walk(e, frozenset())
    return out


def reads_builtin_me(e: A.Expr) -> bool:
    return any(isinstance(x, A.Name) and x.ref == "builtin" and x.ident == "me" for x in A.walk(e))


def size(e: A.Expr, limit: Optional[int] = None) -> int:
    """The number of expression nodes in e (counting stops a little past `limit`)."""
    return size_depth(e, limit)[0]


def size_depth(e: A.Expr, limit: Optional[int] = None) -> tuple[int, int]:
    """(nodes, depth) of e; counting stops a little past `limit` nodes."""
    n = 0
    deepest = 0
    stack = [(e, 1)]
    while stack:
        x, d = stack.pop()
        n += 1
        if d > deepest:
            deepest = d
        if limit is not None and n > limit:
            break
        for c in children(x):
            stack.append((c, d + 1))
    return n, deepest


def is_atomic(e: Optional[A.Expr], ctx: Optional[Context] = None) -> bool:
    """A literal or a name whose reading cannot fail: free to repeat or to move (`me` only where
    ctx says it is always known)."""
    if isinstance(e, A.Literal):
        return True
    if isinstance(e, A.Name):
        if e.ref == "builtin" and e.ident == "me":
            return ctx is not None and ctx.me_known
        return e.ref in SAFE_REFS or (e.ref == "builtin" and e.ident in SAFE_BUILTINS)
    return False


def cannot_fail(e: Optional[A.Expr]) -> bool:
    """Whether evaluating e can never raise a rule error (it may still charge the work budget, which
    only bounds the computation). Conservative: only names, literals, equality, not/and/or,
    if-then-else and small lists of these."""
    if is_atomic(e):
        return True
    if isinstance(e, A.Unary):
        return e.op == "not" and cannot_fail(e.operand)
    if isinstance(e, A.Binary):
        return e.op in ("==", "!=", "and", "or") and cannot_fail(e.left) and cannot_fail(e.right)
    if isinstance(e, A.Cond):
        return cannot_fail(e.test) and cannot_fail(e.then) and cannot_fail(e.orelse)
    if isinstance(e, A.TupleLit) and len(e.items) <= 8:  # a short list of plain values: never over a limit
        return all(cannot_fail(x) and _scalar(x) for x in e.items)
    if isinstance(e, A.EmptyLit):
        return True
    return False


def _scalar(e: A.Expr) -> bool:
    t = e.ty
    return t is not None and (t.name in ("int", "bool", "str", "player", "none") or t.kind in ("enum", "record", "range"))


def surely_bool(e: Optional[A.Expr]) -> bool:
    """Whether e's value is always true, false or none (never another value that is truthy or not):
    what `any(xs)` without a test reads as 'is true'."""
    if isinstance(e, A.Literal):
        return e.value is True or e.value is False or e.value is None
    if isinstance(e, A.Unary):
        return e.op == "not"
    if isinstance(e, A.Binary):
        if e.op in ("==", "!=", "<", "<=", ">", ">=", "in", "not in"):
            return True
        if e.op in ("and", "or"):
            return surely_bool(e.left) and surely_bool(e.right)
        return False
    if isinstance(e, A.Cond):
        return surely_bool(e.then) and surely_bool(e.orelse)
    if isinstance(e, A.Bind):
        return surely_bool(e.body)
    if is_builtin_call(e, "any", "all", "adjacent", "path_exists", "is_eliminated"):
        return True
    return False


# ---------------------------------------------------------------------------- what the compiler folds
def is_constant_name(a: object) -> bool:
    """A literal, an enum member, the members of an enum, or a constant: a fixed value."""
    return isinstance(a, A.Literal) or (isinstance(a, A.Name) and a.ref in ("member", "enum_values", "const"))


def constant_shaped(a: Optional[A.Expr]) -> bool:
    """Whether the compiler takes this expression for a constant (literals and fixed names under
    operators and brackets): it folds it, and what holds it, when loading."""
    for x in A.walk(a):
        if not isinstance(x, A.Expr):
            continue
        if is_constant_name(x) or isinstance(x, (A.Unary, A.TupleLit, A.ListLit, A.SetLit, A.Placeholder)):
            continue
        if isinstance(x, A.Binary) and x.op not in ("and", "or"):
            continue
        return False
    return True


def worth_a_let(e: Optional[A.Expr]) -> bool:
    """Not a plain name or literal, and not a constant the compiler computes when loading anyway."""
    if is_atomic(e) or isinstance(e, (A.Lambda, A.EmptyLit)):
        return False
    return _folded_cost(e) >= 5  # `not x` or `a != b` costs less than the let


def _folded_cost(e: Optional[A.Expr], limit: int = 5) -> int:
    """Nodes left to compute once the compiler has folded the constant parts (counted up to limit)."""
    if e is None or constant_shaped(e):
        return 1
    n = 1
    for c in children(e):
        n += _folded_cost(c, limit - n)
        if n >= limit:
            break
    return n


# ---------------------------------------------------------------------------- printing
def show(e: Optional[A.Expr]) -> str:
    """An expression written back as rule text (a Bind as `let %x = value in body`): for fixtures,
    `rulelang check --show-optimised` and error reports (rulelang/ast_print.py, the one printer)."""
    return to_text(e)

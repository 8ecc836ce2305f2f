"""Pass: inline small pure functions.

A call of a user function (`function f(a, b) = EXPR`) whose body is small and which is not recursive,
directly or through other functions, becomes its body with the parameters replaced by the arguments:

    function free_slots(t) = t.slots - count(homes[t])
    free_slots(x) + 1          ->   x.slots - count(homes[x]) + 1

What keeps it exact:
- The body's own binders (lambda parameters, comprehension names) are renamed to fresh hidden names
  (`%t12`), so that no argument's name can be captured by them.
- An argument that is a plain name or literal is substituted (it cannot fail, and repeating it costs
  nothing); `me` too inside an action (always known there; elsewhere reading it may fail). Any other argument is computed once, in the order the call computes them, through
  `let %a = ARG in ...` (A.Bind) - except a single argument used once, outside any loop of the body,
  where everything the body computes before it cannot fail: that one is substituted, so it is still
  the first thing that can fail.
- A constant (a literal, an enum member, a fixed constant) is not substituted under an operator that
  would make a constant expression the compiler folds when loading (so that `f(0)` with `10 / x` in
  f stays a run-time error, not a load error): it is bound instead.
- The result keeps the depth limit of expressions (rulelang.parser.MAX_DEPTH), and the whole program
  grows by at most INLINE_BUDGET nodes.

Functions are prepared callees first, so an inlined body is already inlined itself; every function's
own body is replaced by its inlined form too (calls of recursive or large functions stay calls).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union, cast

from rulelang import ast as A
from rulelang.parser import MAX_DEPTH

from . import tree as X

MAX_CHAIN = 50  # a program whose functions call each other deeper than this is not inlined (see prepare)
INLINE_BUDGET = 50_000  # expression nodes that inlining may add to a whole program (a 2,000-line game: ~2,000)

FOUND, SAFE, UNSAFE = "found", "safe", "unsafe"
# operators that keep a constant expression constant (the compiler folds it when loading) and can fail
_FOLDING_FAIL_OPS = frozenset({"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "in", "not in", ".."})

Use = tuple[Any, A.Name]  # where a parameter is read: (its parent node, or "piece" for a piece's; the name)
Uses = list[Any]  # [how often, whether inside a loop, list[Use]] (a list: filled in as the body is walked)
Subst = dict[str, Union[A.Expr, str]]  # a parameter -> its argument, or the hidden name bound to it


def inline_functions(tree: X.Tree, ctx: X.Context) -> X.Tree:
    """The pass: every call of a small non-recursive function replaced by its body."""
    return run_prepared(tree, ctx, "inline", inline_rule)


def run_prepared(tree: X.Tree, ctx: X.Context, name: str, rule: X.Rule) -> X.Tree:
    """One rule as a pass of its own that expands functions: the functions prepared with it first
    (prepare), then the tree rewritten (finish)."""
    saved = ctx.rules, ctx.run
    run = X.rewriter([(name, rule)], ctx)
    try:
        prepare(ctx, run)
        return finish(tree, ctx, run)
    finally:
        ctx.rules, ctx.run = saved


def finish(tree: X.Tree, ctx: X.Context, run: Callable[..., A.Expr]) -> X.Tree:
    """tree rewritten by run, with each function's body replaced by its prepared form."""
    if X.is_program(tree):
        return X.map_program(tree, run, replace={name: X.evolve(tree.decls[name], body=body)
                                                 for name, body in ctx.bodies.items()
                                                 if name in tree.decls and tree.decls[name].body is not body})
    return X.apply(tree, run)


# ---------------------------------------------------------------------------- preparing the functions
def prepare(ctx: X.Context, run: Callable[..., A.Expr]) -> None:
    """Fill ctx.bodies (function name -> its body, optimised by `run`) and ctx.inlinable (name ->
    (params, body)) for the functions that may be inlined, callees first."""
    ctx.bodies = {}
    ctx.inlinable = {}
    ctx.expandable = {}
    prog = ctx.program
    if prog is None:
        return
    funcs = {name: d for name, d in prog.decls.items() if isinstance(d, A.FuncDecl) and d.body is not None}
    calls = {name: _called(d.body, funcs) for name, d in funcs.items()}
    sccs = _sccs(list(funcs), calls)
    # the longest chain of calls: a program with a very deep one keeps its calls (inlined, the chain would
    # make expressions as deep as itself)
    height: dict[str, int] = {}  # function -> the longest chain of calls from it
    for scc in sccs:
        h = 1 + max((height[g] for f in scc for g in calls[f] if g not in scc), default=0)
        for f in scc:
            height[f] = h
    inlining = max(height.values(), default=0) <= MAX_CHAIN
    for scc in sccs:
        recursive = len(scc) > 1 or scc[0] in calls[scc[0]]
        for name in scc:
            d = funcs[name]
            try:
                body = run(d.body)
            except RecursionError:  # too deep for the passes: it stays as it is, and is not inlined
                continue
            ctx.bodies[name] = body
            if inlining and not recursive and len(set(p.name for p in d.params)) == len(d.params):
                ctx.expandable[name] = ([p.name for p in d.params], body)
                if X.size(body, ctx.inline_size) <= ctx.inline_size:
                    ctx.inlinable[name] = ctx.expandable[name]


def _called(e: Optional[A.Expr], funcs: dict[str, A.FuncDecl]) -> set[str]:
    return {x.func.ident for x in A.walk(e)
            if isinstance(x, A.Call) and isinstance(x.func, A.Name) and x.func.ref == "func" and x.func.ident in funcs}


def _sccs(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of the call graph (networkx), callees before their callers; within
    a component, names in sorted order (deterministic)."""
    import networkx as nx
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from((f, g) for f in nodes for g in sorted(edges[f]))
    parts = nx.condensation(graph)
    order = list(nx.lexicographical_topological_sort(parts, key=lambda i: min(parts.nodes[i]["members"])))
    return [sorted(parts.nodes[i]["members"]) for i in reversed(order)]


# ---------------------------------------------------------------------------- rewriting
def inline_rule(e: A.Expr, ctx: X.Context, depth: int) -> A.Expr:
    """A call of an inlinable function (its arguments already rewritten), expanded."""
    if not (isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.ref == "func"):
        return e
    got = ctx.inlinable.get(e.func.ident) if getattr(ctx, "inlinable", None) else None
    if got is None or ctx.inline_budget <= 0:
        return e
    params, body = got
    args = X.positional(e)
    if args is None or len(args) != len(params):
        return e
    out = expand_in_budget(params, body, args, e, ctx, depth)
    if out is None:
        return e
    ctx.count("inline")
    return out


def expand_in_budget(params: Sequence[str], body: A.Expr, args: Sequence[A.Expr], call: A.Expr, ctx: X.Context,
                     depth: int) -> Optional[A.Expr]:
    """expand(), or None when the result would pass what inlining may still add to the program, or make
    an expression deeper than the limit (at `depth`); what it adds is taken from that budget."""
    out = expand(params, body, args, call, ctx)
    n, deep = X.size_depth(out, ctx.inline_budget + 1)
    if n > ctx.inline_budget or depth + deep > MAX_DEPTH:
        return None
    ctx.inline_budget -= n
    return out


def expand(params: Sequence[str], body: A.Expr, args: Sequence[A.Expr], call: A.Expr, ctx: X.Context,
           bind_constants: bool = False) -> A.Expr:
    """The body of a function with these params, for a call with these args."""
    body0 = body
    body = rename_binders(body, ctx, {})
    uses = _uses(body, params)  # p -> (count, inside a loop, occurrences' (parent, node))
    kinds: list[str] = []
    for a in args:
        if bind_constants and X.constant_shaped(a):
            kinds.append("bound")
        elif X.is_atomic(a, ctx) or (_pure_constant(a) and uses[params[len(kinds)]][0] > 0):
            kinds.append("atomic")  # a constant made of literals is computed when loading: free to repeat
        elif X.cannot_fail(a):
            kinds.append("safe")
        else:
            kinds.append("risky")
    risky = [i for i, k in enumerate(kinds) if k == "risky"]
    subst: Subst = {}
    binds: list[tuple[str, A.Expr, str]] = []  # (hidden name, arg, param): computed in the call's order
    for i, (p, a) in enumerate(zip(params, args)):
        n, in_loop, parents = uses[p]
        kind = kinds[i]
        if bind_constants and X.constant_shaped(a):
            binds.append((ctx.fresh("a"), a, p))
        elif kind == "atomic":
            if _folds_here(a, parents):
                binds.append((ctx.fresh("a"), a, p))
            else:
                subst[p] = a  # (a constant list is shared: nothing changes a value in place)
        elif kind == "safe":
            if n <= 1 and not in_loop and not _folds_here(a, parents):
                subst[p] = a
            else:
                binds.append((ctx.fresh("a"), a, p))
        else:
            if (len(risky) == 1 and n == 1 and not in_loop and first_use(body, p) == FOUND
                    and not _folds_here(a, parents)):
                subst[p] = a
            else:
                binds.append((ctx.fresh("a"), a, p))
    for p, given in list(subst.items()):
        if not isinstance(given, (A.Name, A.Literal, str)) and any((par == "piece") != _is_piece(given.ty)
                                                                   for par, _ in uses[p][2]):
            # a field of it compiles by the parameter's type (a piece or not): keep that type on a hidden name
            del subst[p]
            binds.append((ctx.fresh("a"), given, p))
    if binds:
        order = {p: i for i, p in enumerate(params)}
        binds.sort(key=lambda b: order[b[2]])
    for hidden, _, p in binds:
        subst[p] = hidden
    out = substitute(body, subst)
    if not bind_constants and any(X.constant_shaped(v) for v in subst.values() if not isinstance(v, str)):
        made = {id(x) for x in A.walk(out)} - {id(x) for x in A.walk(body)}
        if _new_failing_fold(out, made) or X.constant_shaped(out):
            # constants met where the compiler would fold them (and the fold may fail), or a result that
            # is a constant itself (what holds the call may then be folded): bind them all
            return expand(params, body0, args, call, ctx, bind_constants=True)
    if subst and any(isinstance(x, A.Bind) and x.name.startswith("%h") for x in A.walk(out)):
        out = _drop_cheap_lets(out)
    for hidden, a, p in reversed(binds):
        out = X.bind(hidden, a, out, span=call.span)
    if out.ty is not call.ty and not isinstance(out, A.EmptyLit):  # an empty literal's type makes it a set or map
        out = X.evolve(out, ty=call.ty)  # the call's type as the checker saw it (the declared result)
    return out


_CAN_FAIL_FOLDING = frozenset({"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "in", "not in", ".."})


def _new_failing_fold(e: A.Expr, made: set[int]) -> bool:
    """Whether e holds a constant expression the compiler folds, built with a substituted argument
    (a node id in `made`), whose computation might fail (arithmetic, comparison, `in`, a range)."""
    def walk(x: A.Expr) -> Union[bool, tuple[bool, bool, bool]]:
        # -> (constant-shaped, holds a made node, holds an operator that can fail); True when found
        found = [walk(c) for c in X.children(x)]
        if any(k is True for k in found):
            return True
        kids = cast("list[tuple[bool, bool, bool]]", found)  # (no True among them)
        const = (X.is_constant_name(x) or isinstance(x, (A.Unary, A.TupleLit, A.ListLit, A.SetLit, A.Placeholder))
                 or (isinstance(x, A.Binary) and x.op not in ("and", "or")))
        const = const and all(k[0] for k in kids)
        has_made = id(x) in made or any(k[1] for k in kids)
        fails = (isinstance(x, A.Binary) and x.op in _CAN_FAIL_FOLDING) or (
            isinstance(x, A.Unary) and x.op == "-") or any(k[2] for k in kids)
        if not const and any(k[0] and k[1] and k[2] for k in kids):
            return True  # a maximal constant part, made here, that might fail when folded
        return const, has_made, fails
    top = walk(e)
    return top is True or (not isinstance(top, bool) and top[0] and top[1] and top[2])


def _drop_cheap_lets(e: X.MaybeExpr) -> X.MaybeExpr:
    """A let made by hoisting whose value, now that the arguments are in, is cheaper than the let
    (`let %h = human == gold or human == human in ...`: folded when loading) is put back in place."""
    if e is None:
        return e
    if (isinstance(e, A.Bind) and e.name.startswith("%h") and e.value is not None and e.body is not None
            and X.cannot_fail(e.value)
            and not X.worth_a_let(e.value)):
        return _drop_cheap_lets(substitute(e.body, {e.name: e.value}))
    return X.map_children(e, _drop_cheap_lets)


def _is_piece(ty: Any) -> bool:
    return ty is not None and ty.kind == "piece"


def _pure_constant(a: A.Expr) -> bool:
    """A small constant made of literals: free to repeat (each copy is folded, and counted against the
    fixed data limit, when loading; a range or a long list is not repeated)."""
    nodes = [x for x in A.walk(a) if isinstance(x, A.Expr)]
    return (len(nodes) <= 10 and X.constant_shaped(a)
            and not any((isinstance(x, A.Name) and x.ref == "const") or (isinstance(x, A.Binary) and x.op == "..")
                        for x in nodes))


def _folding(use: Use) -> bool:
    """Whether a constant put at this use (parent, occurrence) would make its parent a constant the
    compiler folds when loading, where the fold might fail (conservative: one level is looked at)."""
    parent, occ = use
    if parent == "piece":
        return False
    if isinstance(parent, A.Binary):
        if parent.op not in _FOLDING_FAIL_OPS:
            return False
        other = parent.right if parent.left is occ else parent.left
        return X.constant_shaped(other)
    if isinstance(parent, A.Unary):
        return parent.op == "-"
    if isinstance(parent, (A.TupleLit, A.ListLit, A.SetLit)):
        return all(X.constant_shaped(x) for x in parent.items if x is not occ)
    return isinstance(parent, A.Placeholder)


def _folds_here(a: A.Expr, parents: list[Use]) -> bool:
    """An argument the compiler takes for a constant, under an operator that would then be folded."""
    return any(_folding(use) for use in parents) and X.constant_shaped(a)


def _uses(body: A.Expr, params: Sequence[str]) -> dict[str, Uses]:
    """p -> [occurrences of the local p, whether one is inside a lambda or a comprehension's loop,
    their (parent, node)], for each parameter p."""
    out: dict[str, Uses] = {p: [0, False, []] for p in params}
    stack: list[tuple[Optional[A.Expr], Optional[A.Expr], bool]] = [(body, None, False)]
    while stack:
        x, parent, loop = stack.pop()
        if x is None:  # (a part left out)
            continue
        if isinstance(x, A.Name):
            if x.ref == "local" and x.ident in out:
                u = out[x.ident]
                u[0] += 1
                u[1] = u[1] or loop
                u[2].append((parent, x) if not _is_piece(x.ty) else ("piece", x))
            continue
        if isinstance(x, A.Lambda):
            stack.append((x.body, x, True))
            continue
        if isinstance(x, A.Comprehension):
            stack.append((x.source, x, loop))
            for c in (x.element, x.value, x.condition):
                if c is not None:
                    stack.append((c, x, True))
            continue
        for c in X.children(x):
            stack.append((c, x, loop))
    return out


def rename_binders(e: X.MaybeExpr, ctx: X.Context, env: dict[str, str]) -> X.MaybeExpr:
    """e with every name bound inside it (lambda parameters, comprehension names, hidden Bind names)
    renamed to a fresh hidden name; env maps the names renamed so far."""
    if e is None:
        return e
    if isinstance(e, A.Name):
        if e.ref == "local" and e.ident in env:
            return X.evolve(e, ident=env[e.ident])
        return e
    if isinstance(e, A.Lambda):
        new = ctx.fresh(e.param.lstrip("%").rstrip("0123456789") or "x")
        return X.evolve(e, param=new, body=rename_binders(e.body, ctx, {**env, e.param: new}))
    if isinstance(e, A.Comprehension):
        src = rename_binders(e.source, ctx, env)
        names = [ctx.fresh(n.lstrip("%").rstrip("0123456789") or "x") for n in e.names]
        inner = {**env, **dict(zip(e.names, names))}
        return X.evolve(e, source=src, names=names,
                            element=rename_binders(e.element, ctx, inner),
                            value=rename_binders(e.value, ctx, inner) if e.value is not None else None,
                            condition=rename_binders(e.condition, ctx, inner) if e.condition is not None else None)
    if isinstance(e, A.Bind):
        new = ctx.fresh(e.name.lstrip("%").rstrip("0123456789") or "x")
        return X.evolve(e, name=new, value=rename_binders(e.value, ctx, env),
                            body=rename_binders(e.body, ctx, {**env, e.name: new}))
    return X.map_children(e, lambda c: rename_binders(c, ctx, env))


def substitute(e: X.MaybeExpr, subst: Subst) -> X.MaybeExpr:
    """e with each free local named in subst replaced: by an expression, or (a str) by that hidden name.
    The body's binders were renamed first, so nothing in subst is bound inside e."""
    if e is None:
        return e
    if isinstance(e, A.Name):
        if e.ref == "local" and e.ident in subst:
            new = subst[e.ident]
            if isinstance(new, str):
                return X.evolve(e, ident=new)  # keeps the parameter's type: the body compiles as before
            if isinstance(new, (A.Name, A.Literal)):
                # a name's or literal's own type changes nothing in how it compiles; its parent reads
                # the type (a field of a piece), so it keeps the parameter's
                return X.evolve(new, ty=e.ty)
            return new
        return e
    return X.map_children(e, lambda c: substitute(c, subst))


# ---------------------------------------------------------------------------- evaluation order
def first_use(e: Optional[A.Expr], p: str) -> str:
    """FOUND: the local p is evaluated before anything in e that can fail (and wherever p is not
    evaluated, nothing in e can fail). SAFE: e does not read p and cannot fail. UNSAFE otherwise."""
    if e is None:  # (a part left out: it reads nothing and cannot fail)
        return SAFE
    if isinstance(e, A.Name):
        if e.ref == "local" and e.ident == p:
            return FOUND
        return SAFE if X.is_atomic(e) else UNSAFE
    if isinstance(e, (A.Literal, A.EmptyLit, A.Lambda)):
        return SAFE  # making a function value cannot fail (its body runs in the built-in that takes it)
    if isinstance(e, A.Binary) and e.op in ("and", "or"):
        left = first_use(e.left, p)
        if left != SAFE:
            return left
        return first_use(e.right, p)
    if isinstance(e, A.Cond):
        test = first_use(e.test, p)
        if test != SAFE:
            return test
        a, b = first_use(e.then, p), first_use(e.orelse, p)
        if UNSAFE in (a, b):
            return UNSAFE
        return FOUND if FOUND in (a, b) else SAFE
    order: Sequence[Optional[A.Expr]]
    if isinstance(e, A.Bind):
        order = [e.value, e.body]
    elif isinstance(e, A.Binary) and e.op in ("in", "not in"):
        order = [e.right, e.left]  # the collection is computed first
    elif isinstance(e, A.Call):
        order = [a.value for a in e.args if a.name is None] + [a.value for a in e.args if a.name is not None]
    elif isinstance(e, A.MapLit):
        order = [x for k, v in e.entries for x in (v, k)]  # each value, then its key
    elif isinstance(e, A.Comprehension):
        order = [e.source]
    else:
        order = X.children(e)
    for c in order:
        r = first_use(c, p)
        if r != SAFE:
            return r
    if isinstance(e, A.Bind) or (isinstance(e, A.Unary) and e.op == "not") or (
            isinstance(e, A.Binary) and e.op in ("==", "!=")) or isinstance(e, A.Placeholder):
        return SAFE
    return UNSAFE

"""Pass: compute loop-invariant expressions once, outside the loop.

In a comprehension's element or condition, or in the body of a function value given to a built-in
(`x => ...`), a part that reads none of the loop's names is the same at every item. It is computed
once, before the loop, through a hidden let:

    [x for x in xs if x.colour == c or (k == gold or k == human)]
      ->  let %h1 = k == gold or k == human in [x for x in xs if x.colour == c or %h1]

    any(xs, x => x > n and m == 0)   ->  let %h2 = m == 0 in any(xs, x => x > n and %h2)

Strict: a part is hoisted only when computing it cannot fail (names, literals, ==, !=, not, and, or,
if-then-else and short lists of these; see tree.cannot_fail) - computing it early, or when the loop
is empty, or when the loop would have stopped before reaching it, then changes nothing but the
work. Parts that could fail (an index, a field, a call, arithmetic) stay in the loop: the loop might
never reach them. A part that is a plain name or a constant is not hoisted (nothing to gain).
"""
from __future__ import annotations

from typing import Any

from rulelang import ast as A

from . import tree as X

Found = list[tuple[str, A.Expr]]  # (hidden name, the part computed once), in order

# built-ins whose function argument is called at the place of the call (not kept for later)
_TAKES_FUNCTION = frozenset({"count", "any", "all", "first", "max_by", "min_by", "sorted", "distance", "reachable",
                             "path_exists", "group", "groups", "line_length"})


def hoist_invariants(tree: X.Tree, ctx: X.Context) -> X.Tree:
    return X.pass_over(tree, ctx, "hoist", hoist_rule)


def hoist_rule(e: A.Expr, ctx: X.Context, depth: int = 0) -> A.Expr:
    """A comprehension, or a built-in call taking a function value, with its invariant parts let outside."""
    if isinstance(e, A.Comprehension):
        found: Found = []
        inner = set(e.names)
        changes: dict[str, Any] = {}
        for field in ("element", "value", "condition"):
            part = getattr(e, field)
            if part is not None:
                new = _take(part, inner, found, ctx)
                if new is not part:
                    changes[field] = new
        if not found:
            return e
        out = X.evolve(e, **changes)
        return _wrap(found, out)
    if e.__class__ is A.Call and X.is_builtin_call(e, *_TAKES_FUNCTION) and any(
            a.value.__class__ is A.Lambda for a in e.args):
        found = []
        args: list[A.Arg] = []
        for a in e.args:
            v = a.value
            if isinstance(v, A.Lambda):
                body = _take(v.body, {v.param}, found, ctx)
                if body is not v.body:
                    a = X.evolve(a, value=X.evolve(v, body=body))
            args.append(a)
        if not found:
            return e
        return _wrap(found, X.evolve(e, args=args))
    return e


def _wrap(found: Found, body: A.Expr) -> A.Expr:
    for hidden, value in reversed(found):
        body = X.bind(hidden, value, body, span=body.span)
    return body


def _take(e: X.MaybeExpr, bound: set[str], found: Found, ctx: X.Context) -> X.MaybeExpr:
    """e with its outermost hoistable parts replaced by hidden names (appended to found)."""
    if e is None:  # (a part left out)
        return e
    if X.worth_a_let(e) and X.cannot_fail(e) and not (X.free_locals(e) & bound) and not _binds_inside(e):
        hidden = ctx.fresh("h")
        found.append((hidden, e))
        ctx.count("hoist")
        return X.name(hidden, e.ty, span=e.span)
    more = bound | set(X.binders(e))
    if isinstance(e, A.Comprehension):
        # its source is outside its own names
        src = _take(e.source, bound, found, ctx)
        changes: dict[str, Any] = {"source": src} if src is not e.source else {}
        for field in ("element", "value", "condition"):
            part = getattr(e, field)
            if part is not None:
                new = _take(part, more, found, ctx)
                if new is not part:
                    changes[field] = new
        return X.evolve(e, **changes) if changes else e
    if isinstance(e, A.Bind):
        value = _take(e.value, bound, found, ctx)
        body = _take(e.body, more, found, ctx)
        if value is e.value and body is e.body:
            return e
        return X.evolve(e, value=value, body=body)
    return X.map_children(e, lambda c: _take(c, more, found, ctx))


def _binds_inside(e: A.Expr) -> bool:
    return any(isinstance(x, (A.Lambda, A.Comprehension, A.Bind)) for x in A.walk(e))

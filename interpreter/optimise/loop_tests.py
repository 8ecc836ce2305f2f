"""Pass: write a larger function into the test of a loop.

The inline pass writes only small functions in place of their calls. A call that is the whole test of
a loop, though, runs once per item, and its body often holds parts that do not depend on the item. Such
a call is replaced by the function's body (exactly as the inline pass does it) when the function is not
recursive and its body has at most MAX_IN_LOOP nodes:

    function ok(p, c) = if c.kind == k1 then total[p][k1] >= 1 else total[p][k2] >= c.size
    any(cards, c => ok(p, c))        ->  any(cards, c => if c.kind == k1 then total[p][k1] >= 1 else ...)
    [c for c in cards if ok(p, c)]   ->  [c for c in cards if if c.kind == k1 then ... else ...]

The loops are the test of `any(xs, x => f(...))` and `all(xs, x => f(...))`, and the condition of a
comprehension. The generator then computes the parts of the body that read none of the loop's names
once per loop instead of once per item (docs/runtime.md), and a part that reads the item's fields is
written next to the others. A call anywhere else stays a call.

What may change: only the work charged (a call's 1 is not charged), as with the inline pass. The same
parts are computed in the same order, with the same results and errors (see inline.expand).
"""
from __future__ import annotations

from typing import Optional

from rulelang import ast as A

from . import tree as X
from .inline import expand_in_budget, run_prepared

MAX_IN_LOOP = 200  # the largest function body (nodes, once prepared) written into a loop's test


def inline_loop_tests(tree: X.Tree, ctx: X.Context) -> X.Tree:
    """The pass: every loop test that is a call of a non-recursive function of at most MAX_IN_LOOP nodes
    replaced by the function's body."""
    return run_prepared(tree, ctx, "loop_tests", loop_test_rule)


def loop_test_rule(e: A.Expr, ctx: X.Context, depth: int = 0) -> A.Expr:
    """An any/all whose test, or a comprehension whose condition, is such a call, with the call expanded."""
    if isinstance(e, A.Comprehension) and e.condition is not None:
        cond = _expanded(e.condition, ctx, depth + 1)
        if cond is None:
            return e
        ctx.count("loop_tests")
        return X.evolve(e, condition=cond)
    if X.is_builtin_call(e, "any", "all"):
        args = X.positional(e)
        if args is None or len(args) != 2 or not isinstance(args[1], A.Lambda):
            return e
        lam = args[1]
        body = _expanded(lam.body, ctx, depth + 2)
        if body is None:
            return e
        ctx.count("loop_tests")
        return X.evolve(e, args=[e.args[0], X.evolve(e.args[1], value=X.evolve(lam, body=body))])
    return e


def _expanded(test: Optional[A.Expr], ctx: X.Context, depth: int) -> Optional[A.Expr]:
    """The body of the function `test` calls, for its arguments; None when it is not such a call."""
    if not (isinstance(test, A.Call) and isinstance(test.func, A.Name) and test.func.ref == "func"):
        return None
    got = (getattr(ctx, "expandable", None) or {}).get(test.func.ident)
    if got is None or ctx.inline_budget <= 0:
        return None
    params, body = got
    if X.size(body, MAX_IN_LOOP) > MAX_IN_LOOP:
        return None
    args = X.positional(test)
    if args is None or len(args) != len(params):
        return None
    return expand_in_budget(params, body, args, test, ctx, depth)

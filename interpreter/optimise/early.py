"""Passes that stop a search at the first answer instead of building a whole list.

`early_counts` - a count compared with 0 or 1 asks only whether something is there:

    count([e for x in xs if c]) > 0     ->  any(xs, x => c)        (also >= 1, != 0, 0 < ..., 1 <= ...)
    count([e for x in xs if c]) == 0    ->  not any(xs, x => c)    (also < 1, <= 0, 0 == ..., 1 > ...)
    count([e for x in xs]) > 0          ->  any(xs, x => true)
    count(xs, x => c) > 0               ->  any(xs, x => c)
    count(f(a)) > 0                     ->  any(xs', x => c')   f(p) = [e for x in xs if c], too large
                                                                to inline: its body, a for p, in place

`e` is never computed (the count does not read it). A plain `count(xs) > 0` stays: it is already one
look at a length.

A count compared with the length of its source, where that length is known when the rules load (a range
`a..b` of constant ends, a list written out), asks whether every item passes, or whether one fails:

    count([e for x in S if c]) == len(S)   ->  all(S, x => c)        (also >= len(S))
    count([e for x in S if c]) < len(S)    ->  any(S, x => not c)    (also != len(S), <= len(S) - 1)
    count(S, x => c) < len(S)              ->  any(S, x => not c)

only for a test `c` that is surely true, false or none (none counts as not passing in both forms).

`any_all_lambdas` - any/all of a list comprehension tests the items as they come:

    any([p for x in xs])            ->  any(xs, x => p)
    any([p for x in xs if q])       ->  any(xs, x => q and p)
    all([p for x in xs])            ->  all(xs, x => p)
    all([p for x in xs if q])       ->  all(xs, x => not q or p)

only when p is surely true, false or none (a comparison, `not`, `in`, `and`/`or` of such...): `any(xs)`
without a test asks whether an item *is* true, `any(xs, test)` whether the test's value counts as true,
and these differ for a number or a list.

Both leave two-name comprehensions (`for k, v in m`: a one-parameter function cannot take them) and
map comprehensions (they drop none values and repeated keys) as they are. A comprehension reached
through hidden lets (`let %a = ... in [...]`, made by inlining) is rewritten inside them.

What may change: the work charged (less), and an error in an item after the answer is known is
not met any more (the search stops before it); no error can appear that the full list would not
have met first.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, TypeGuard

from rulelang import ast as A
from rulelang import types as T

from . import tree as X
from .inline import _new_failing_fold, expand_in_budget, rename_binders, substitute

if TYPE_CHECKING:
    from rulelang.program import Program

NONEMPTY = "nonempty"
EMPTY = "empty"

_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}


def early_counts(tree: X.Tree, ctx: X.Context) -> X.Tree:
    return X.pass_over(tree, ctx, "early_counts", count_rule)


def any_all_lambdas(tree: X.Tree, ctx: X.Context) -> X.Tree:
    return X.pass_over(tree, ctx, "any_all", any_all_rule)


# ---------------------------------------------------------------------------- counts
def _small_int(e: Optional[A.Expr]) -> TypeGuard[A.Literal]:
    return isinstance(e, A.Literal) and e.value.__class__ is int and e.value in (0, 1)


def _question(op: str, k: int) -> Optional[str]:
    """What `count(...) OP k` asks of a count n >= 0: NONEMPTY, EMPTY or None (something else)."""
    if (op, k) in ((">", 0), (">=", 1), ("!=", 0)):
        return NONEMPTY
    if (op, k) in (("==", 0), ("<", 1), ("<=", 0)):
        return EMPTY
    return None


def count_rule(e: A.Expr, ctx: X.Context, depth: int = 0) -> A.Expr:
    if not isinstance(e, A.Binary) or e.op not in _FLIP:
        return e
    whole = _against_length(e, ctx)
    if whole is not None:
        ctx.count("early_counts")
        return ctx.after(whole, "early_counts", depth)
    if X.is_builtin_call(e.left, "count") and _small_int(e.right):
        counted, op, k = e.left, e.op, e.right.value
    elif X.is_builtin_call(e.right, "count") and _small_int(e.left):
        counted, op, k = e.right, _FLIP[e.op], e.left.value
    else:
        return e
    question = _question(op, k)
    args = X.positional(counted)
    if question is None or args is None:
        return e
    found: Optional[A.Expr]
    if len(args) == 2 and isinstance(args[1], A.Lambda):
        found = X.call("any", args, T.BOOL, span=counted.span)
    elif len(args) == 1:
        found = _through_binds(args[0], lambda c: _exists(c, counted.span))
        if found is None:
            found = _exists_in_call(args[0], counted.span, ctx, depth)
        if found is None:
            return e
    else:
        return e
    ctx.count("early_counts")
    found = ctx.after(found, "early_counts", depth)
    if question == EMPTY:
        found = X.negate(found, span=e.span)
    return X.evolve(found, span=e.span) if found.span is not e.span else found


ALL = "all"
SOME_FAIL = "some fail"


def _against_length(e: A.Binary, ctx: X.Context) -> Optional[A.Expr]:
    """`count(...) OP k` where k is the known length of the counted source: all(...) or any(..., not ...)."""
    if X.is_builtin_call(e.left, "count"):
        counted, op, k = e.left, e.op, e.right
    elif X.is_builtin_call(e.right, "count"):
        counted, op, k = e.right, _FLIP[e.op], e.left
    else:
        return None
    args = X.positional(counted)
    if args is None or not args or len(args) > 2:
        return None
    program = ctx.program
    k_value = static_int(k, program)
    if k_value is None:
        return None
    source: Optional[A.Expr]
    if len(args) == 2:
        if not isinstance(args[1], A.Lambda):
            return None
        source, param, test = args[0], args[1].param, args[1].body
    else:
        c = args[0]
        if not _single_list_comprehension(c) or c.condition is None or _failing_constant(c.element):
            return None
        source, param, test = c.source, c.names[0], c.condition
    if source is None or test is None:  # (parts a checked call or comprehension always has)
        return None
    n = static_length(source, program)
    if n is None or n == 0 or not X.surely_bool(test):
        return None
    if (op, k_value) in (("==", n), (">=", n)):
        question = ALL
    elif (op, k_value) in (("<", n), ("!=", n), ("<=", n - 1)):
        question = SOME_FAIL
    else:
        return None
    span = counted.span
    if question == ALL:
        return X.call("all", [source, X.lam(param, test, span=span)], T.BOOL, span=e.span)
    return X.call("any", [source, X.lam(param, X.negate(test, span=test.span), span=span)], T.BOOL, span=e.span)


MAX_STATIC_DEPTH = 20
MAX_STATIC_INT = 1 << 31


def static_int(e: Optional[A.Expr], program: Optional[Program], depth: int = 0) -> Optional[int]:
    """The value of a whole-number expression known when the rules load (literals, constants, + - * of
    them), or None."""
    if depth > MAX_STATIC_DEPTH:
        return None
    if isinstance(e, A.Literal):
        v = e.value
        return v if v.__class__ is int and -MAX_STATIC_INT < v < MAX_STATIC_INT else None
    if isinstance(e, A.Name) and e.ref == "const" and program is not None:
        d = program.decls.get(e.ident)
        return static_int(d.value, program, depth + 1) if isinstance(d, A.ConstDecl) and d.value is not None else None
    if isinstance(e, A.Unary) and e.op == "-":
        v = static_int(e.operand, program, depth + 1)
        return None if v is None else -v
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
        a = static_int(e.left, program, depth + 1)
        b = static_int(e.right, program, depth + 1)
        if a is None or b is None:
            return None
        v = a + b if e.op == "+" else a - b if e.op == "-" else a * b
        return v if -MAX_STATIC_INT < v < MAX_STATIC_INT else None
    return None


def static_length(e: Optional[A.Expr], program: Optional[Program]) -> Optional[int]:
    """The number of items of a list known when the rules load (a range of constant ends, a list written
    out), or None."""
    if isinstance(e, A.Binary) and e.op == "..":
        lo, hi = static_int(e.left, program), static_int(e.right, program)
        if lo is None or hi is None:
            return None
        return max(0, hi - lo + 1)
    if isinstance(e, (A.ListLit, A.TupleLit)):
        return len(e.items)
    return None


def _single_list_comprehension(c: Optional[A.Expr]) -> TypeGuard[A.Comprehension]:
    return isinstance(c, A.Comprehension) and c.kind == "list" and len(c.names) == 1 and c.value is None


def _exists(c: A.Expr, span: A.Span) -> Optional[A.Expr]:
    """`any(source, x => condition)` for a comprehension, or None (also when its element, dropped,
    holds a constant the compiler would fold, and might fail to: a load error must stay one)."""
    if not _single_list_comprehension(c) or c.source is None or _failing_constant(c.element):
        return None
    test = c.condition if c.condition is not None else X.lit(True, span=c.span)
    return X.call("any", [c.source, X.lam(c.names[0], test, span=c.span)], T.BOOL, span=span)


def _exists_in_call(e: A.Expr, span: A.Span, ctx: X.Context, depth: int) -> Optional[A.Expr]:
    """For `count(f(args))` where f's body is a list comprehension and f is too large to inline: the
    any() of that body, with f's parameters replaced by the arguments as the inline pass does; or None."""
    if not (isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.ref == "func"):
        return None
    got = ctx.expandable.get(e.func.ident)
    if got is None or ctx.inline_budget <= 0:
        return None
    params, body = got
    form = _through_binds(body, lambda c: _exists(c, span))
    args = X.positional(e)
    if form is None or args is None or len(args) != len(params):
        return None
    if X.size(form, MAX_EXPANDED) > MAX_EXPANDED:
        return None
    return expand_in_budget(params, form, args, X.evolve(e, ty=T.BOOL), ctx, depth)


MAX_EXPANDED = 160  # the largest any() of a function's body written in place of count(f(...)) > 0 (nodes)


def _failing_constant(e: Optional[A.Expr]) -> bool:
    return e is not None and _new_failing_fold(e, {id(x) for x in A.walk(e)})


def _through_binds(e: Optional[A.Expr], make: Callable[[A.Expr], Optional[A.Expr]]) -> Optional[A.Expr]:
    """make(inner) for the expression under a chain of hidden lets, the lets kept around the result."""
    if e is None:  # (a part left out: nothing to make)
        return None
    if isinstance(e, A.Bind):
        inner = _through_binds(e.body, make)
        if inner is None:
            return None
        return X.evolve(e, body=inner, ty=inner.ty)
    return make(e)


# ---------------------------------------------------------------------------- any / all
def any_all_rule(e: A.Expr, ctx: X.Context, depth: int = 0) -> A.Expr:
    if not X.is_builtin_call(e, "any", "all", "count"):
        return e
    args = X.positional(e)
    if args is None:
        return e
    func = e.func
    if not isinstance(func, A.Name):  # (a built-in's call always names it)
        return e
    kind = func.ident
    if len(args) == 2 and isinstance(args[1], A.Lambda):
        test = args[1]
        out = _through_binds(args[0], lambda c: _with_test(kind, c, test, e, ctx))
    elif len(args) == 1 and kind != "count":
        out = _through_binds(args[0], lambda c: _of_items(kind, c, e))
    else:
        return e
    if out is None:
        return e
    ctx.count("any_all")
    return out


def _combine(kind: str, q: Optional[A.Expr], p: A.Expr, span: A.Span) -> A.Expr:
    """The test for an item: q the comprehension's condition (or None), p the item's own test."""
    if q is None:
        return p
    if kind == "all":
        return A.Binary(span=span, ty=T.BOOL, op="or", left=X.negate(q, span=q.span), right=p)
    return A.Binary(span=span, ty=T.BOOL, op="and", left=q, right=p)


def _of_items(kind: str, c: A.Expr, call: A.Expr) -> Optional[A.Expr]:
    """any([p for x in xs if q]) -> any(xs, x => q and p), for p surely true, false or none."""
    if not _single_list_comprehension(c) or c.element is None or c.source is None or not X.surely_bool(c.element):
        return None
    body = _combine(kind, c.condition, c.element, c.span)
    return X.call(kind, [c.source, X.lam(c.names[0], body, span=c.span)], call.ty, span=call.span)


def _with_test(kind: str, c: A.Expr, test: A.Lambda, call: A.Expr, ctx: X.Context) -> Optional[A.Expr]:
    """any([x for x in xs if q], y => p) -> any(xs, %x => q and p[y := %x]) (all: not q or p; count: q and p):
    only for a comprehension of the items themselves, where the condition or the test cannot fail (the
    list computes every q before the first p, the rewrite takes them in turns: were both to fail, the
    first error would differ)."""
    if not _single_list_comprehension(c) or c.source is None or test.body is None:
        return None
    if c.condition is not None and not X.cannot_fail(c.condition) and not X.cannot_fail(test.body):
        return None
    x = c.names[0]
    if not (isinstance(c.element, A.Name) and c.element.ref == "local" and c.element.ident == x):
        return None
    fresh = ctx.fresh(x.lstrip("%").rstrip("0123456789") or "x")
    cond = substitute(rename_binders(c.condition, ctx, {}), {x: fresh}) if c.condition is not None else None
    p = substitute(rename_binders(test.body, ctx, {}), {test.param: fresh})
    body = _combine(kind, cond, p, c.span)
    return X.call(kind, [c.source, X.lam(fresh, body, span=test.span)], call.ty, span=call.span)

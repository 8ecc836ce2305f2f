"""The optimiser: passes over the checked AST, run before the rules are compiled.

Each pass is a pure function `pass_(tree, ctx) -> new tree` over a Program (or one declaration,
statement or expression): it never changes its input, it copies the nodes it rewrites (keeping
`span`, and setting `ty` and `ref` as the checker would) and shares the rest. `optimise(program)` runs
DEFAULT in order. See docs/optimiser.md for what each pass rewrites and why the result is the same.

    from interpreter.optimise import optimise, DEFAULT
    program2 = optimise(program)                      # all passes
    program3 = optimise(program, passes=())           # none: program3 is program
    Ruleset(program, checker, optimise=False)         # load without the optimiser
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Optional

from rulelang import ast as A

from . import tree as X
from .early import any_all_lambdas, any_all_rule, count_rule, early_counts
from .hoist import hoist_invariants, hoist_rule
from .inline import finish, inline_functions, inline_rule, prepare
from .loop_tests import inline_loop_tests, loop_test_rule
from .tree import Context, show

if TYPE_CHECKING:
    from rulelang.program import Program

Pass = Callable[[X.Tree, Context], X.Tree]  # a pass: (tree, context) -> the tree rewritten

# Order matters: inlining first exposes `count(f(x)) > 0` as a count of a comprehension; the
# early-exit passes then see it; the loop tests they made are written out next; hoisting last sees the
# function values they made.
DEFAULT: tuple[Pass, ...] = (inline_functions, any_all_lambdas, early_counts, inline_loop_tests, hoist_invariants)

PASSES: dict[str, Pass] = {"inline": inline_functions, "any_all": any_all_lambdas, "early_counts": early_counts,
          "loop_tests": inline_loop_tests, "hoist": hoist_invariants}


# each pass's rule, applied at one node whose children are done: the passes of DEFAULT run together
# in one walk of the program (the same result as one after the other, in a third of the time)
RULES: dict[Pass, tuple[str, X.Rule]] = {inline_functions: ("inline", inline_rule), any_all_lambdas: ("any_all", any_all_rule),
         early_counts: ("early_counts", count_rule), inline_loop_tests: ("loop_tests", loop_test_rule),
         hoist_invariants: ("hoist", hoist_rule)}


def optimise(program: X.Tree, passes: Iterable[Pass] = DEFAULT, ctx: Optional[Context] = None) -> X.Tree:
    """The program (or a declaration, statement or expression, with ctx.program the program it
    stands in) with every pass applied in order; the input is not changed."""
    ctx = ctx or Context(program if X.is_program(program) else None)
    passes = tuple(passes)
    if not passes:
        return program
    if all(p in RULES for p in passes):
        run = X.rewriter([RULES[p] for p in passes], ctx)
        if inline_functions in passes or inline_loop_tests in passes:
            prepare(ctx, run)
            return finish(program, ctx, run)
        return X.apply(program, run)
    tree = program
    for p in passes:
        tree = p(tree, ctx)
    return tree


def optimise_expr(expr: A.Expr, program: Optional[Program] = None, passes: Iterable[Pass] = DEFAULT,
                  ctx: Optional[Context] = None) -> A.Expr:
    """One expression, optimised in the setting of `program` (its functions may be inlined)."""
    return optimise(expr, passes, ctx or Context(program))


__all__ = ["optimise", "optimise_expr", "DEFAULT", "PASSES", "Context", "show", "inline_functions",
           "any_all_lambdas", "early_counts", "inline_loop_tests", "hoist_invariants"]

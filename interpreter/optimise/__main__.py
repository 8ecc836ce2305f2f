"""Show what the optimiser makes of a rule file:

    python -m interpreter.optimise RULES.rules                  # every expression it changes
    python -m interpreter.optimise RULES.rules NAME ...         # only these functions / actions
    python -m interpreter.optimise --variant friendly FILE ...

Each changed expression is printed as rule text before and after (`let %a = ... in ...` is a value
computed once, under a hidden name), with its place in the file, then how many rewrites each pass made.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from rulelang import ast as A
from rulelang.checker import check_program
from rulelang.diagnostics import ERROR
from rulelang.program import build_program

from . import DEFAULT, RULES, finish, prepare, show
from . import tree as X


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        return _main(argv)
    except RecursionError:
        print("error[E006]: the rules are nested too deeply to check", file=sys.stderr)
        return 1


def _main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m interpreter.optimise", description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("names", nargs="*", help="only the declarations with these names")
    ap.add_argument("--variant", action="append", default=[], help="a variant to apply (repeatable)")
    args = ap.parse_args(argv)
    prog, diags = build_program(args.file, None, tuple(args.variant))
    if prog is not None and not any(d.severity == ERROR for d in diags):
        diags = diags + check_program(prog).diags
    errors = [d for d in diags if d.severity == ERROR]
    if prog is None or errors:
        for d in errors:
            print(d.render(), file=sys.stderr)
        return 1
    ctx = X.Context(prog)
    run = X.rewriter([RULES[p] for p in DEFAULT], ctx)
    prepare(ctx, run)
    changes: list[tuple[A.Expr, A.Expr]] = []  # (before, after) of every rewrite

    def record(e: A.Expr) -> A.Expr:
        new = run(e)
        if new is not e:
            changes.append((e, new))
        return new
    record.ctx = ctx  # type: ignore[attr-defined]  # (map_program reads it with getattr)
    finish(prog, ctx, record)
    wanted = set(args.names)
    for name, d in prog.decls.items():
        if isinstance(d, A.FuncDecl) and name in ctx.bodies and ctx.bodies[name] is not d.body:
            if not wanted or name in wanted:
                params = ", ".join(p.name for p in d.params)
                inl = "  (inlined where called)" if name in ctx.inlinable else ""
                print(f"{d.span.where()}: function {name}({params}){inl}\n  {show(d.body)}\n  => {show(ctx.bodies[name])}\n")
    spans: dict[int, bool] = {}  # id of an expression of the named declarations
    if wanted:
        for name in wanted:
            decl = prog.decls.get(name)
            if decl is not None and not isinstance(decl, A.FuncDecl):
                for x in A.walk(decl):
                    if isinstance(x, A.Expr):
                        spans[id(x)] = True
    for before, after in changes:
        if not wanted or id(before) in spans:
            print(f"{before.span.where()}:\n  {show(before)}\n  => {show(after)}\n")
    print("rewrites: " + (", ".join(f"{k} {v}" for k, v in sorted(ctx.stats.items())) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

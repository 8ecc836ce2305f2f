"""Checked AST -> Python source -> compile() -> functions: the generated backend.

Every expression an op or the engine needs becomes one generated function `e_N(G, L)` (G: the game,
L: the frame's locals), and every rule function `function f(a, b) = ...` becomes `fn_N(G, v_1, v_2)`
with its parameters as Python locals. Comprehension variables, lambda parameters and `Bind` names are
Python locals too. The generated functions do exactly what the closures of interpreter/closures.py do
(that backend stays as the reference the generated code is tested against): same results, same work
charges, same rule-error messages.

Safety: nothing from a rule file becomes Python code except through this module, and only as
  * generated identifiers (`v_3`, `fn_2`, `k_17`): a rule name is never spliced into the source;
  * `repr` of an int, a bool or None;
  * everything else (texts, lists, rows, boards, messages naming rule things) is a constant in the
    table `K` of the generated module, read through a module global `k_N`.
Messages and names shown in errors go through the table as well. `Ruleset.generated_source` holds the
source for inspection.

The functions are handed out before the module that defines them is compiled: each is first a stub
(a function object whose code is replaced when its batch compiles, see Module.finish), so callers keep
the final function object and call it with no indirection.

The package: helpers.py (what the generated code calls), module.py (the generated module), expressions.py
(ExprGenerator, with hoisting.py and loops.py), statements.py (StmtGenerator: fused ops)."""

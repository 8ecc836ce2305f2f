"""The optimiser's passes, one fixture file each (tests/data/optimise/PASS.txt): a rule snippet before
and the expected tree after, written back as rule text. Each case also checks that the pass leaves its
input unchanged, that every node it made carries a type, and that every local it reads is bound."""
from __future__ import annotations

import os

import attrs
import pytest

from interpreter.optimise import PASSES, Context, optimise, optimise_expr, show
from interpreter.optimise import tree as X
from rulelang import ast as A
from rulelang.checker import check_program
from rulelang.diagnostics import ERROR
from rulelang.program import build_program

HERE = os.path.join(os.path.dirname(__file__), "data", "optimise")
PARAMS = ["xs", "ys", "n", "b", "m"]
HEADER = 'game "T" { players 2 }\nflow { end_game "done" }\n'
PROBE = "function probe(xs: list[int], ys: list[int], n: int, b: bool, m: map[int, int]) = "


def cases():
    out = []
    for fname in sorted(os.listdir(HERE)):
        if not fname.endswith(".txt"):
            continue
        default_pass = fname[:-4]
        text = open(os.path.join(HERE, fname), encoding="utf-8").read()
        for chunk in text.split("\n== ")[1:]:
            lines = chunk.strip().splitlines()
            case = {"file": fname, "title": lines[0].strip(), "rules": [], "pass": default_pass}
            for line in lines[1:]:
                key, _, value = line.partition(":")
                if key == "rules":
                    case["rules"].append(value.strip())
                elif key in ("in", "out", "pass"):
                    case[key] = value.strip()
            out.append(pytest.param(case, id=f"{default_pass}: {case['title']}"))
    return out


def load(rules, expr):
    text = HEADER + "".join(r + "\n" for r in rules) + PROBE + expr + "\n"
    prog, diags = build_program("<fixture>", text, ())
    assert prog is not None and not [d for d in diags if d.severity == ERROR], diags
    checker = check_program(prog)
    errors = [d.render() for d in checker.diags if d.severity == ERROR]
    assert not errors, errors
    return prog


def run_pass(prog, name):
    body = prog.decls["probe"].body
    others = attrs.evolve(prog, decls={k: v for k, v in prog.decls.items() if k != "probe"})
    if name == "all":
        return optimise_expr(body, others)
    return PASSES[name](body, Context(others))


def well_formed(e, bound):
    """Every node has a type (the checker's), every local read is bound."""
    for x in A.walk(e):
        if isinstance(x, A.Expr) and not (isinstance(x, A.Name) and x.ref in ("builtin_func", "func")):
            assert x.ty is not None, f"{type(x).__name__} without a type in {show(e)}"
    assert X.free_locals(e) <= set(bound), (X.free_locals(e), show(e))


@pytest.mark.parametrize("case", cases())
def test_fixture(case):
    prog = load(case["rules"], case["in"])
    body = prog.decls["probe"].body
    before = show(body)
    ids = [id(x) for x in A.walk(body)]
    got = run_pass(prog, case["pass"])
    assert show(got) == case["out"], f"\n  in:   {case['in']}\n  want: {case['out']}\n  got:  {show(got)}"
    assert show(body) == before and [id(x) for x in A.walk(body)] == ids  # the input is not changed
    well_formed(got, PARAMS)


def test_every_pass_has_fixtures():
    files = {f[:-4] for f in os.listdir(HERE) if f.endswith(".txt")}
    passes = {"any_all", "early_counts", "inline", "loop_tests", "hoist"}
    assert passes <= files and set(PASSES) == passes


def test_optimise_leaves_the_program_unchanged_and_returns_a_new_one():
    path = os.path.join(os.path.dirname(__file__), "..", "games", "station.rules")
    prog, _ = build_program(path, None, ())
    check_program(prog)
    shown = {name: show(d.body) for name, d in prog.decls.items() if isinstance(d, A.FuncDecl)}
    new = optimise(prog)
    assert new is not prog
    assert {name: show(d.body) for name, d in prog.decls.items() if isinstance(d, A.FuncDecl)} == shown
    assert any(show(d.body) != shown[name] for name, d in new.decls.items() if isinstance(d, A.FuncDecl))
    for d in new.decls.values():
        if isinstance(d, A.FuncDecl):
            well_formed(d.body, [p.name for p in d.params])
    assert optimise(prog, passes=()) is prog


def test_show_writes_rule_text_back():
    prog = load([], "if b then [x + 1 for x in xs if x > n] else [{1: 2}[n] * -(n - 1)]")
    assert show(prog.decls["probe"].body) == "if b then [x + 1 for x in xs if x > n] else [{1: 2}[n] * -(n - 1)]"

"""The optimiser changes nothing a player can see.

1. Every rule file under games/ (examples included), with each of its variants: random games with the
   optimiser on and off, in lockstep, have the same to_json(), legal actions and views at every step.
2. Hypothesis writes small rule files (counts, any/all, comprehensions, functions that call each other,
   shadow names, recurse or fail) and evaluates them with and without the optimiser on random data:
   the same value, or the same rule error. The one difference allowed, and documented: a search that
   stops at its answer may skip an error the whole list would have met later (the optimised rules
   then give a value); an error the original rules would not meet never appears.
"""
from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interpreter.builtins import RuleRuntimeError, start_work
from interpreter.compiler import Located
from interpreter.ruleset import Ruleset
from interpreter.optimise import Context, optimise
from rulelang import GameError
from rulelang.checker import check_program
from rulelang.diagnostics import ERROR
from rulelang.program import build_program

ROOT = os.path.join(os.path.dirname(__file__), "..")
GAMES = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(ROOT, "games")) for f in fs
               if f.endswith(".rules"))


def load_both(path=None, text=None, variants=()):
    prog, diags = build_program(path or "<test>", text, tuple(variants))
    assert prog is not None and not [d for d in diags if d.severity == ERROR], [d.render() for d in diags]
    checker = check_program(prog)
    errors = [d.render() for d in checker.diags if d.severity == ERROR]
    assert not errors, errors
    return Ruleset(prog, checker, optimise=False), Ruleset(prog, checker, optimise=True)


# ---------------------------------------------------------------------------- 1. every game, in lockstep
def _cases():
    out = []
    for path in GAMES:
        prog, _ = build_program(path, None, ())
        name = os.path.relpath(path, ROOT)
        small = "examples" in path
        # (a Vega game runs to ~2,000 decisions: its long games are cut, to keep this file under a minute)
        out.append(pytest.param(path, (), 6 if small else 2, 2000 if small else 500, id=name,
                                marks=[pytest.mark.slow] if path.endswith("mars.rules") else []))  # (Mars: 10 s)
        for v in sorted(prog.variants):
            out.append(pytest.param(path, (v,), 2 if small else 1, 2000 if small else 250, id=f"{name} +{v}",
                                    marks=[] if small else [pytest.mark.slow]))  # (the big files' variants: slow)
    return out


def _step(plain, opt, rng, where):
    assert plain.to_json() == opt.to_json(), where
    a, b = plain.legal_actions(), opt.legal_actions()
    assert [x.id for x in a] == [x.id for x in b], where
    assert [x.player for x in a] == [x.player for x in b], where
    assert [str(x) for x in a] == [str(x) for x in b], where
    for seat in list(range(plain.n)) + [None]:
        assert plain.view(seat) == opt.view(seat), (where, seat)
    assert plain.scores() == opt.scores(), where
    return a


@pytest.mark.parametrize("path,variants,games,steps", _cases())
def test_games_play_identically_with_and_without_the_optimiser(path, variants, games, steps):
    plain_rs, opt_rs = load_both(path, variants=variants)
    for seed in range(games):
        rng = random.Random(seed)
        players = opt_rs.player_counts[seed % len(opt_rs.player_counts)]
        plain = plain_rs.new_game(players, seed=seed)
        opt = opt_rs.new_game(players, seed=seed)
        for step in range(steps):
            where = f"{path} {variants} seed {seed} step {step}"
            actions = _step(plain, opt, rng, where)
            if plain.is_over():
                assert opt.is_over() and plain.winners() == opt.winners() and plain.end_reason == opt.end_reason
                break
            choice = rng.choice(actions).id
            errors = []
            for g in (plain, opt):
                try:
                    g.apply(choice)
                    errors.append(None)
                except GameError as e:
                    errors.append(str(e))
            assert errors[0] == errors[1], where
            if errors[0] is not None:
                break


# ---------------------------------------------------------------------------- 2. generated rule files
BASE = '''game "T" { players 2 }
var xs: list[int] = []
var ys: list[int] = []
function f(a, c) = a + c * 2
function g(a) = if a > 1 then 10 / (a - 2) else xs[a]
function p(a) = count([y for y in xs if y > a]) > 0
function h(a) = [y for y in ys if y != a]
function q(x) = count([x for x in ys if x > 0]) + x
function r(n) = if n <= 0 then 0 else r(n - 1) + 1
function w(l) = any(l, z => z == 1)
function s(a, l) = [z for z in l if z > a]
function e(l) = count(l) == 0
function u(a, c) = if a == c then 0 else c
function dv(a, c) = a / c - c % (a + 1)
function dq(a, c) = a / c
function ident(a) = a
flow { end_game "done" }
'''
NAMES = ["x", "y", "z"]


@st.composite
def ints(draw, scope, d):
    base = [st.sampled_from(["0", "1", "2", "3"])] + ([st.sampled_from(scope)] if scope else [])
    if d <= 0:
        return draw(st.one_of(base))
    kind = draw(st.integers(0, 12))
    if kind == 0:
        return f"count({draw(lists(scope, d - 1))})"
    if kind == 1:
        return f"sum({draw(lists(scope, d - 1))})"
    if kind == 2:
        return f"f({draw(ints(scope, d - 1))}, {draw(ints(scope, d - 1))})"
    if kind == 3:
        return f"g({draw(ints(scope, d - 1))})"
    if kind == 4:
        return f"q({draw(ints(scope, d - 1))})"
    if kind == 5:
        return f"r({draw(ints(scope, d - 1))})"
    if kind == 6:
        return f"xs[{draw(ints(scope, d - 1))}]"
    if kind == 7:
        return f"({draw(ints(scope, d - 1))} + {draw(ints(scope, d - 1))})"
    if kind == 8:
        return f"({draw(ints(scope, d - 1))} / {draw(ints(scope, d - 1))})"
    if kind == 9:
        return f"u({draw(ints(scope, d - 1))}, {draw(ints(scope, d - 1))})"
    if kind == 10:
        return f"count({draw(lists(scope, d - 1))}, {draw(lam(scope, d - 1))})"
    if kind == 11:
        return f"dv({draw(ints(scope, d - 1))}, {draw(ints(scope, d - 1))})"
    return draw(st.one_of(base))


@st.composite
def lam(draw, scope, d):
    n = draw(st.sampled_from(NAMES))
    return f"{n} => {draw(bools(scope + [n], d))}"


@st.composite
def comp(draw, scope, d, element):
    n = draw(st.sampled_from(NAMES))
    src = draw(lists(scope, d - 1))
    inner = scope + [n]
    el = n if element == "name" else draw(element(inner, d - 1))
    cond = draw(st.one_of(st.none(), bools(inner, d - 1)))
    return f"[{el} for {n} in {src}" + (f" if {cond}]" if cond else "]")


@st.composite
def bools(draw, scope, d):
    if d <= 0:
        return draw(st.sampled_from(["true", "false"] + [f"{v} > 1" for v in scope]))
    kind = draw(st.integers(0, 14))
    k = draw(st.sampled_from(["0", "1"]))
    op = draw(st.sampled_from([">", ">=", "!=", "==", "<", "<="]))
    if kind == 0:
        return f"{draw(ints(scope, d - 1))} {op} {draw(ints(scope, d - 1))}"
    if kind == 1:
        return f"not ({draw(bools(scope, d - 1))})"
    if kind == 2:
        return f"({draw(bools(scope, d - 1))} and {draw(bools(scope, d - 1))})"
    if kind == 3:
        return f"({draw(bools(scope, d - 1))} or {draw(bools(scope, d - 1))})"
    if kind == 4:
        return f"{draw(ints(scope, d - 1))} in {draw(lists(scope, d - 1))}"
    if kind == 5:
        return f"p({draw(ints(scope, d - 1))})"
    if kind == 6:
        return f"w({draw(lists(scope, d - 1))})"
    if kind == 7:
        c = draw(comp(scope, d, draw(st.sampled_from(["name", ints]))))
        return f"count({c}) {op} {k}" if draw(st.booleans()) else f"{k} {op} count({c})"
    if kind == 8:
        return f"{draw(st.sampled_from(['any', 'all']))}({draw(comp(scope, d, bools))})"
    if kind == 9:
        return f"{draw(st.sampled_from(['any', 'all']))}({draw(lists(scope, d - 1))}, {draw(lam(scope, d - 1))})"
    if kind == 10:
        return f"count({draw(lists(scope, d - 1))}, {draw(lam(scope, d - 1))}) {op} {k}"
    if kind == 11:
        fn = draw(st.sampled_from(["any", "all", "count"]))
        tail = f" {op} {k}" if fn == "count" else ""
        return f"{fn}({draw(comp(scope, d, 'name'))}, {draw(lam(scope, d - 1))}){tail}"
    if kind == 12:
        return f"count(h({draw(ints(scope, d - 1))})) {op} {k}"
    if kind == 13:
        return f"e({draw(lists(scope, d - 1))})"
    return f"count(s({draw(ints(scope, d - 1))}, {draw(lists(scope, d - 1))})) {op} {k}"


@st.composite
def lists(draw, scope, d):
    if d <= 0:
        return draw(st.sampled_from(["xs", "ys"]))
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return f"h({draw(ints(scope, d - 1))})"
    if kind == 1:
        return f"s({draw(ints(scope, d - 1))}, {draw(lists(scope, d - 1))})"
    if kind == 2:
        return draw(comp(scope, d, ints))
    if kind == 3:
        return draw(comp(scope, d, "name"))
    if kind == 4:
        return f"0..{draw(ints(scope, d - 1))}"
    return draw(st.sampled_from(["xs", "ys"]))


def _run(rs, data, args):
    g = rs.new_game(2, seed=1)
    g.data["xs"], g.data["ys"] = data
    start_work(g)
    g.fdepth = 0
    fn = rs.functions["probe"]
    try:
        return "value", _typed(fn.body(g, dict(zip(fn.params, args))))
    except (RuleRuntimeError, TypeError, KeyError, ValueError, IndexError, AttributeError, ZeroDivisionError) as e:
        return "error", f"{type(e).__name__}: {e}"


def _typed(v):
    """A value with the kind of each part (true is not 1)."""
    if isinstance(v, (tuple, list)):
        return ("list", tuple(_typed(x) for x in v))
    if isinstance(v, frozenset):
        return ("set", frozenset(_typed(x) for x in v))
    if isinstance(v, dict):
        return ("map", tuple(sorted((repr(_typed(k)), repr(_typed(x))) for k, x in v.items())))
    return (type(v).__name__, v)


SMALL = st.lists(st.integers(-1, 4), max_size=4).map(tuple)


@settings(deadline=None, max_examples=250, suppress_health_check=list(HealthCheck))
@given(expr=st.integers(0, 2).flatmap(lambda kind: [bools, ints, lists][kind](["x0", "x1"], 3)),
       datas=st.lists(st.tuples(SMALL, SMALL, st.integers(-1, 4), st.integers(-1, 4)), min_size=1, max_size=4))
def test_generated_expressions_give_the_same_values_and_errors(expr, datas):
    text = BASE + f"function probe(x0: int, x1: int) = {expr}\n"
    prog, _ = build_program("<test>", text, ())
    checker = check_program(prog)
    assert not [d for d in checker.diags if d.severity == ERROR], expr
    loaded = []
    for optimised in (False, True):
        try:
            loaded.append(Ruleset(prog, checker, optimise=optimised))
        except Located as e:  # a constant that cannot be computed: the same load error, or none, both ways
            loaded.append(e.message)
    assert [isinstance(x, str) and x for x in loaded] == [isinstance(loaded[0], str) and loaded[0]] * 2, expr
    if isinstance(loaded[0], str):
        return
    plain_rs, opt_rs = loaded
    for xs, ys, a, b in datas:
        want = _run(plain_rs, (xs, ys), (a, b))
        got = _run(opt_rs, (xs, ys), (a, b))
        if want[0] == "error" and got[0] == "value":
            continue  # a search stopped at its answer before the error (see the module's docstring)
        assert got == want, f"\n{expr}\nxs={xs} ys={ys} x0={a} x1={b}"


# ---------------------------------------------------------------------------- limits still hold
def test_work_budget_still_bounds_an_optimised_search():
    text = ('game "T" { players 2 }\nvar xs: list[int] = []\nvar n: int = 0\n'
            'function big(a) = [y for y in xs if y > a]\n'
            'flow { xs = [i for i in 1..100000]  loop { n = if count(big(0)) > 0 then 1 else 0 } }\n')
    plain_rs, opt_rs = load_both(text=text)
    for rs in (plain_rs, opt_rs):
        with pytest.raises(GameError, match="work budget"):
            rs.new_game(2)


@pytest.mark.parametrize("xs", [[], [0], [3, 1], [9, 2, 7], [-4, 12, 5, 5]])
def test_a_count_of_a_function_too_large_to_inline_keeps_its_answer(xs):
    # count(big(k)) > 0 becomes the any() of big's comprehension, written in place (docs/optimiser.md, 3)
    text = ('game "T" { players 2 }\n'
            f'var xs: list[int] = {xs}\nvar r: list[bool] = []\n'
            'function big(a: int) = [y * 10 for y in xs if y > a and y * 2 > a + 1 and y * 3 > a + 2 '
            'and y * 4 > a + 3 and y != 7 and y + 1 != a]\n'
            'flow { r = [count(big(k)) > 0 for k in -1..8] + [count(big(k)) == 0 for k in -1..8]  end_game "done" }\n')
    plain_rs, opt_rs = load_both(text=text)
    want = [any(y > a and y * 2 > a + 1 and y * 3 > a + 2 and y * 4 > a + 3 and y != 7 and y + 1 != a for y in xs)
            for a in range(-1, 9)]
    for rs in (plain_rs, opt_rs):
        assert list(rs.new_game(2).data["r"]) == want + [not w for w in want]
    prog, _ = build_program("<test>", text, ())
    check_program(prog)
    ctx = Context(prog)
    optimise(prog, ctx=ctx)
    assert ctx.stats.get("early_counts") == 2 and "inline" not in ctx.stats  # both counts, big not inlined


def test_a_function_written_inline_keeps_its_names_apart_from_the_actions():
    # evens() is small: the generated code writes it inline, without the optimiser too; its `b` is its own,
    # not the action's parameter `b` (found by Mars: its `b` read as the action's, which a function cannot)
    text = ('game "T" { players 2 }\nvar seen: list[int] = []\n'
            'function evens(k: int) = [b for b in 1..6 if b % 2 == 0 and b > k]\n'
            'action pick(b in 1..2) { effect { let n = b  if count(evens(n)) > 1 { let c = choose one of [7, 8] by me'
            '  seen = seen + [c] } else { seen = seen + evens(n) } } }\n'
            'flow { loop { turn 0 { offer [pick] to 0 } } }\n')
    for rs in load_both(text=text):
        g = rs.new_game(2)
        g.apply("pick(1)")  # evens(1) = [2, 4, 6]: a choice
        g.apply("8")
        g.apply("pick(2)")  # evens(2) = [4, 6]: a choice again
        g.apply("7")
        assert list(g.data["seen"]) == [8, 7]


def test_a_constant_argument_does_not_become_a_load_error():
    # f(0) is an error only when it runs; inlined, 10 / 0 must not be folded when loading
    text = ('game "T" { players 2 }\nvar n: int = 0\nfunction tenth(a) = 10 / a\n'
            'flow { if n > 0 { n = tenth(0) }  end_game "done" }\n')
    plain_rs, opt_rs = load_both(text=text)
    assert opt_rs.new_game(2).is_over()


@pytest.mark.parametrize("op", [">", ">=", "!=", "==", "<", "<="])
@pytest.mark.parametrize("k", [0, 1, 2])
@pytest.mark.parametrize("flipped", [False, True])
def test_every_count_comparison_keeps_its_value(op, k, flipped):
    counted = "count([x for x in xs if x > 0])"
    expr = f"{k} {op} {counted}" if flipped else f"{counted} {op} {k}"
    plain_rs, opt_rs = load_both(text=BASE + f"function probe(x0: int, x1: int) = {expr}\n")
    for xs in [(), (0,), (1,), (0, 1), (1, 2), (1, 2, 3), (0, 0, 0)]:
        assert _run(opt_rs, (xs, ()), (0, 0)) == _run(plain_rs, (xs, ()), (0, 0)), (expr, xs)


@pytest.mark.parametrize("call", ["dv(1, 0)", "dv(0, 1)", "dv(-1, 2)", "g(2)", "f(dv(1, 0), 2)", "u(0, dv(2, 0))",
                                  "dv(1 + 1, 0 * 3)", "dq(1, 0)", "dq(-1 + 1, 0 - 0) + 1", "u(dq(3, 0), 1)",
                                  "10 / ident(0)", "-ident(2) % ident(0)"])
def test_constant_arguments_never_make_a_load_error(call):
    # each call fails when it runs; inlined, no constant expression that fails may be folded at load
    plain_rs, opt_rs = load_both(text=BASE.replace('flow { end_game "done" }', "var n: int = 0\nflow { "
                                 f'if n > 0 {{ n = {call} }}  end_game "done" }}'))
    assert opt_rs.new_game(2).is_over() and plain_rs.new_game(2).is_over()


def test_me_where_it_is_not_known_fails_the_same_way():
    # `me` in a procedure run from the flow is not known: the call fails there, before the function's
    # body could fail on xs[5]; inlined, `me` must still be read first
    text = ('game "T" { players 2 }\nvar n: int = 0\nvar xs: list[int] = [1]\n'
            "function mine(a, c) = xs[c] == a and c != a + 1\n"
            "procedure pr() { n = if mine(me, 5) then 1 else 0 }\n"
            'flow { pr()  end_game "done" }\n')
    # the checker refuses this call (E209 at the call); the rules are compiled past it, as a file checked
    # before E209 looked through procedures was, to see the run time still fail the same way both ways
    prog, _ = build_program("<test>", text, ())
    checker = check_program(prog)
    assert [d.code for d in checker.diags if d.severity == ERROR] == ["E209"]
    plain_rs, opt_rs = Ruleset(prog, checker, optimise=False), Ruleset(prog, checker, optimise=True)
    messages = []
    for rs in (plain_rs, opt_rs):
        with pytest.raises(GameError) as e:
            rs.new_game(2)
        messages.append(str(e.value))
    assert "'me' is not known here" in messages[0] and messages[0] == messages[1]


@pytest.mark.parametrize("expr", ["count([1 / 0 for x in xs if x > 0]) > 0", "count([(2 - 3) % 0 for x in xs]) == 0",
                                  "count(s(1, [5 / 0 + y for y in ys])) > 0"])
def test_a_load_error_stays_a_load_error(expr):
    # the element of a counted list is not computed once rewritten; a constant in it that cannot be
    # computed is still the load error (E502) it is without the optimiser
    prog, _ = build_program("<test>", BASE + f"function probe(x0: int, x1: int) = {expr}\n", ())
    checker = check_program(prog)
    for optimised in (False, True):
        with pytest.raises(Located) as e:
            Ruleset(prog, checker, optimise=optimised)
        assert e.value.code == "E502"


def test_a_big_constant_argument_is_not_repeated():
    # used five times, 1..900000 inlined five times would be 4,500,000 items of fixed data (E503);
    # computed once it is 900,000, as without the optimiser
    text = BASE.replace('flow { end_game "done" }', "var n: int = 0\nfunction five(a) = count(a) + count(a) + "
                        'count(a) + count(a) + count(a)\nflow { if n > 0 { n = five(1..900000) }  end_game "done" }')
    plain_rs, opt_rs = load_both(text=text)
    assert opt_rs.new_game(2).is_over()


def test_an_action_domain_is_not_made_a_constant():
    # the domain calls a function: without the optimiser it is listed while playing, so its size is
    # checked then; inlined to a constant it would be listed (and refused, E503) when loading
    text = ('game "T" { players 2 }\nvar n: int = 0\nfunction upto(k) = 1..k\n'
            "action a(x in upto(400000), y in upto(400000)) { effect { n = x } }\n"
            'flow { if n > 0 { turn 0 { offer [a] to 0 } }  end_game "done" }\n')
    plain_rs, opt_rs = load_both(text=text)
    assert opt_rs.new_game(2).is_over() and plain_rs.new_game(2).is_over()


def test_the_passes_one_after_the_other_play_the_same():
    # optimise() runs the passes of DEFAULT together in one walk; run one after the other (each over
    # the whole program) they must give rules that play the same too
    from interpreter.optimise import DEFAULT, optimise
    path = os.path.join(ROOT, "games", "station.rules")
    prog, _ = build_program(path, None, ())
    checker = check_program(prog)
    one_by_one = optimise(prog, passes=[lambda tree, ctx, p=p: p(tree, ctx) for p in DEFAULT])
    plain_rs = Ruleset(prog, checker, optimise=False)
    opt_rs = Ruleset(one_by_one, checker, optimise=False)
    rng = random.Random(5)
    plain, opt = plain_rs.new_game(3, seed=5), opt_rs.new_game(3, seed=5)
    while not plain.is_over():
        assert plain.to_json() == opt.to_json()
        actions = plain.legal_actions()
        assert [a.id for a in actions] == [a.id for a in opt.legal_actions()]
        choice = rng.choice(actions).id
        plain.apply(choice)
        opt.apply(choice)
    assert opt.is_over() and plain.to_json() == opt.to_json()

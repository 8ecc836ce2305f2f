"""The generated backend (interpreter/generate.py, the default) against the reference closures backend
(interpreter/compiler.py): every rule file under games/ played in lockstep by both, with the same seeds
and the same random decisions, must give the same `to_json()` at every step, the same legal actions and
the same views; rule errors must read the same (message and position); the budgets must still stop an
endless loop or a huge computation. See docs/runtime.md."""
from __future__ import annotations

import random
import re
from pathlib import Path
from unittest import mock

import pytest

import rulelang
from interpreter import builtins as budget_module
from rulelang import GameError

ROOT = Path(__file__).resolve().parents[1]
RULE_FILES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "games").rglob("*.rules"))
MAX_STEPS = 3000  # decisions per lockstep game (Vega's random games are long)

_LOADED = {}


def both(path):
    """(generated, closures) rulesets of one rule file."""
    if path not in _LOADED:
        gen = rulelang.load(str(ROOT / path))
        assert gen.backend == "generated" and gen.fallback is None
        _LOADED[path] = (gen, gen.with_backend("closures"))
    return _LOADED[path]


def lockstep(gen_rs, cl_rs, players, seed, chance="sampled", views_every=1, max_steps=MAX_STEPS):
    a = gen_rs.new_game(players, seed=seed, chance=chance)
    b = cl_rs.new_game(players, seed=seed, chance=chance)
    rng = random.Random(seed)
    steps = 0
    while True:
        ja, jb = a.to_json(), b.to_json()
        assert ja == jb, f"seed {seed}: the states differ after {steps} decisions"
        la = [x.id for x in a.legal_actions()]
        assert la == [x.id for x in b.legal_actions()], f"seed {seed}, step {steps}: legal actions differ"
        assert a.current_player == b.current_player
        if steps % views_every == 0 or a.is_over():
            for p in [None] + list(range(players)):
                assert a.view(p) == b.view(p), f"seed {seed}, step {steps}: views of {p} differ"
        if a.is_over() or steps >= max_steps:
            assert a.is_over() == b.is_over()
            if a.is_over():
                assert a.returns() == b.returns()
            return steps
        if a.is_chance():
            outs = a.chance_outcomes()
            assert [(x.id, p) for x, p in outs] == [(x.id, p) for x, p in b.chance_outcomes()]
            pick = rng.choices([x.id for x, _ in outs], [p for _, p in outs])[0]
        else:
            pick = rng.choice(la)
        a.apply(pick)
        b.apply(pick)
        steps += 1


def _counts(rs):
    return sorted(rs.player_counts)


SMALL = [f for f in RULE_FILES if "examples" in f]
BIG = [f for f in RULE_FILES if "examples" not in f]


@pytest.mark.parametrize("path", SMALL)
@pytest.mark.parametrize("chance", ["sampled", "explicit"])
def test_small_games_play_identically(path, chance):
    gen, cl = both(path)
    for players in _counts(gen):
        for seed in range(12):
            lockstep(gen, cl, players, seed, chance)


@pytest.mark.parametrize("path", BIG)
def test_big_games_play_identically(path):
    gen, cl = both(path)
    counts = _counts(gen)
    for players, seed in [(counts[0], 1), (counts[-1], 2)]:
        lockstep(gen, cl, players, seed, views_every=25, max_steps=800)


@pytest.mark.parametrize("path", BIG)
def test_big_games_with_explicit_chance_play_identically(path):
    gen, cl = both(path)
    lockstep(gen, cl, _counts(gen)[0], 7, chance="explicit", views_every=50, max_steps=400)


def test_a_save_made_by_one_backend_continues_identically_in_the_other():
    gen, cl = both("games/station.rules")
    a = gen.new_game(3, seed=5)
    rng = random.Random(5)
    for _ in range(60):
        a.apply(rng.choice(a.legal_actions()))
    b = cl.load_game(a.to_json())
    a2 = gen.load_game(b.to_json())
    for _ in range(100):
        if a.is_over():
            break
        pick = rng.choice(a.legal_actions()).id
        for g in (a, b, a2):
            g.apply(pick)
        assert a.to_json() == b.to_json() == a2.to_json()


# ---------------------------------------------------------------------------------- rule errors
def outcome(rs, players=2):
    """The one-line error (or 'no error') of a new game and its first decisions, always the first legal."""
    g = None
    try:
        g = rs.new_game(players, seed=3)
        for _ in range(20):
            if g.is_over():
                break
            g.apply(g.legal_actions()[0])
        g.view(0)
        g.winners()
        return "no error: " + g.to_json()
    except GameError as e:  # and the state the error left (frames, positions, locals)
        return f"GameError: {e}" + ("" if g is None else "\n" + g.to_json())


HEAD = 'game "T" { players 2 }\n'
ERRORS = {
    "index outside a list": "var xs: list[int] = [1, 2]\nflow { let i = 5  let y = xs[i] }",
    "negate a text": 'var s: any = "a"\nflow { let y = -s }',
    # add and remove written in the generated op: the closures' errors, at the same statement
    "remove what is not there": "per player var h: list[any] = [1]\nvar r: int = 0\n"
                                "flow { add 2 to h[1]  r = 1  remove 3 from h[1] }",
    "add to a missing entry of a map": "var m: map[int, list[int]] = {1: [2]}\nvar r: int = 0\n"
                                       "flow { add 3 to m[1]  r = 1  add 4 to m[2] }",
    "add at a seat past the last": "per player var h: list[any] = [1]\nflow { let k = 2  add 3 to h[k] }",
    "add to a number in a map": "var m: map[any, any] = {1: 5}\nflow { let k = 1  add 3 to m[k] }",
    "compare a text and a number": 'var s: any = "a"\nflow { let y = s < 3 }',
    "too large a number": "var n: int = 4611686018427387903\nflow { let y = n + n }",
    "multiplication overflow": "var n: int = 4611686018427387903\nflow { let y = n * 3 }",
    # a count or a length plus a small number is written without a range test; plus a large one, with it
    "a count plus a number near the limit": "var xs: list[int] = [1, 2]\n"
                                            "flow { let a = count([x for x in xs if x > 0]) + 5 - 1\n"
                                            "let y = count([x for x in xs if x > 0]) + 4611686018427387903 }",
    "a length minus a number near the limit": "var xs: list[int] = [1, 2]\n"
                                              "flow { let a = count(xs) - 3  let y = a - 4611686018427387903 }",
    "division by zero": "var n: int = 0\nflow { let y = 7 / n }",
    "modulo by zero": "var n: int = 0\nflow { let y = 7 % n }",
    "a field of a non-row": "record R { a: int }\ntable T: R { r1(1) }\nvar x: any = 3\n"
                            "flow { let y = x.a }",
    "a built-in on the wrong kind": 'var x: any = "abc"\nflow { let y = sum(x) }',
    "keys of a list": "var x: any = [1]\nflow { let y = keys(x) }",
    "a piece destroyed": "piece P { n: int = 1 }\nflow { let p = new P()  destroy p  let y = p.n }",
    "a range too long": "var n: int = 2000000\nflow { let y = count(1..n) }",
    "a range of texts": 'var s: any = "a"\nflow { let y = s..3 }',
    "in on a number": "var x: any = 3\nflow { let y = 1 in x }",
    "runaway recursion": "function f(n: int): int = f(n + 1)\nflow { let y = f(0) }",
    "recursion through a lambda": "function f(n: int): bool = any([1], x => f(n + 1))\nflow { let y = f(0) }",
    "an error in a comprehension": "var xs: list[any] = [1, \"a\"]\nflow { let y = [-x for x in xs] }",
    "an error in a map comprehension": "var xs: list[any] = [1, \"a\"]\nflow { let y = {x: -x for x in xs} }",
    "an error in a lambda": "var xs: list[any] = [1, \"a\"]\nflow { let y = count(xs, x => -x > 0) }",
    "an error in a condition": "var xs: list[any] = [1, \"a\"]\nflow { let y = [x for x in xs if -x > 0] }",
    "an error in a require": "var n: int = 0\naction a() { require 5 / n > 1 }\nflow { loop { offer [a] to 0 } }",
    "an error in an ending": "var n: int = 0\nending \"e\" when 5 / n > 1\naction a() { }\n"
                             "flow { loop { offer [a] to 0 } }",
    "an error in a score": "var n: int = 0\nscore p = 5 / n\nflow { end_game }",
    "a set of lists of lists": "flow { let y = {[[1]], [[2]]} }",
    "the start value of a variable": "const z: int = player_count - 2\nvar m: int = 4 / z\nflow { }",
    "subtraction of a list": "var x: any = [1]\nflow { let y = x - 1 }",
    "add to a number": "var x: any = 3\nflow { add 1 to x }",
    # errors inside runs of statements (one generated op): reported at the failing statement
    "the second statement of a run": "var n: int = 0\nflow { let a = 1  let b = [1][a + 3] }",
    "inside a loop": "var xs: list[any] = [1, \"a\"]\nflow { let s = 0  for x in xs { s += 1  let y = -x } }",
    "an if test": "var x: any = \"a\"\nflow { let a = 1  if a > 3 { a = 2 } elif x < 3 { a = 3 } }",
    "a repeat count": "var x: any = \"a\"\nflow { let a = 1  repeat x times { a += 1 } }",
    "after a break": "var xs: list[any] = [1, 2, \"a\"]\n"
                     "flow { for x in xs { if x == 2 { break } }  let y = -xs[2] }",
    "an index written outside a list": "var xs: list[int] = [1]\nflow { let a = 0  xs[5] = 2 }",
    "a range broken through an index": "var xs: list[0..3] = [1]\nflow { xs[0] = 2  xs[0] = 9 }",
    "a range broken by +=": "var n: 0..3 = 0\nflow { repeat 5 times { n += 1 } }",
    "+= too large": "var n: int = 4611686018427387903\nflow { n += 1  n += n }",
    "a range broken by =": "var n: 0..3 = 0\nflow { let a = 2  n = a * 4 }",
    "in an action's effect": "var n: int = 0\naction a() { effect { n += 1  let y = 5 / (n - 2) } }\n"
                             "flow { loop { offer [a] to 0 } }",
    "in a trigger": "var n: int = 0\nevent ping(k: int)\nwhen ping(k) then { n += k  let y = 5 / (n - 2) }\n"
                    "action a() { effect { emit ping(1) } }\nflow { loop { offer [a] to 0 } }",
    "in a procedure": "var n: int = 0\nprocedure p(k: int) { n += k  let y = [1][n] }\n"
                      "action a() { effect { p(1) } }\nflow { loop { offer [a] to 0 } }",
    "in a procedure called by a procedure": "var n: int = 0\nprocedure q(k: int) { let a = k  let y = [1][a] }\n"
                                             "procedure p(k: int) { n += k  q(n) }\n"
                                             "action a() { effect { p(1) } }\nflow { loop { offer [a] to 0 } }",
    "a procedure that returns and ends": "var n: int = 0\nprocedure p(k: int) { n += k  if n < 3 { return }  "
                                         "end_game \"three\" }\naction a() { effect { p(1) } }\n"
                                         "flow { loop { offer [a] to 0 } }",
    "a fused loop inside a stopping loop": "var n: int = 0\naction a() { }\n"
                                           "flow { loop { for i in 0..2 { n += i } offer [a] to 0  "
                                           "let y = [1][n / 3] } }",
    "a missing map key read as a list": "var m: map[int, list[int]] = {}\nflow { let y = m[1][0] }",
    # x[a][b] += v with plain keys: generated (the place read, the value, the sum, the same write)
    "+= through an index breaks a range": "var xs: list[0..3] = [1]\nflow { xs[0] += 5 }",
    "+= on a missing map entry": "var m: map[int, int] = {}\nflow { m[1] += 2 }",
    "+= outside a nested list": "var xs: list[list[int]] = [[1]]\nflow { let i = 3  xs[0][i] += 1 }",
    "-= of a text": "var m: map[int, any] = {1: \"a\"}\nflow { m[1] -= 1 }",
    # line_length(b, n, where: x => test) on a board: the test written in a loop over the node's rays
    "an error in a line's test": "board s = square_grid(3, 3)\nvar m: map[any, any] = {(0, 1): \"a\"}\n"
                                 "flow { let y = line_length(s, (0, 0), where: c => c == (0, 0) or -m[c] < 0) }",
    "an error in a line's first test": "board s = square_grid(3, 3)\nvar m: map[any, any] = {(1, 1): \"a\"}\n"
                                       "flow { let y = line_length(s, (1, 1), where: c => -m[c] < 0) }",
    # count([x for x in xs if c]) and sum([e for x in xs if c]) run as loops without the list
    "an error in a summed element": "var xs: list[any] = [1, \"a\"]\nflow { let y = sum([-x for x in xs]) }",
    "a sum of texts": "var xs: list[any] = [\"a\", \"b\"]\nflow { let y = sum([x for x in xs]) }",
    "a sum of lists": "var xs: list[any] = [[1], [2]]\nflow { let y = sum([x for x in xs if x != [3]]) }",
    "a sum too large": "var n: int = 4611686018427387903\nflow { let y = sum([n for x in 1..3]) }",
    "an error in a counted condition": "var xs: list[any] = [1, \"a\"]\n"
                                       "flow { let y = count([x for x in xs if -x < 0]) }",
    # parts of a loop's body that do not change in the loop are computed before it (when they can be): an
    # error there is still raised in the loop, at the item that reaches it, after the same work
    "an invariant index outside a list": "var xs: list[int] = [1]\nvar ys: list[int] = [1, 2, 3]\n"
                                         "flow { let i = 5  let y = [x for x in ys if x > 1 and xs[i] + 1 > 0] }",
    "an invariant division by zero": "var n: int = 0\nflow { let y = [x for x in 1..3 if x > 2 and 6 / n > 0] }",
    "an invariant modulo by zero": "var n: int = 0\nflow { let y = any(1..3, x => x > 2 and 6 % n > 0) }",
    "an invariant error in an all": "var xs: list[int] = [1]\n"
                                    "flow { let i = 3  let y = all(1..3, x => x < 3 or xs[i] * 2 > 0) }",
    "an invariant error in a counted condition": "var m: map[int, int] = {}\n"
                                                 "flow { let y = count([x for x in 1..3 if x == 2 and -m[1] > 0]) }",
    "an invariant error in a require": "var xs: list[int] = [1]\naction a(k: 1..3) { require k > 2 and xs[4] > 0 }"
                                      "\nflow { loop { offer [a] to 0 } }",
    "an invariant error in a cost": "var xs: list[int] = [1]\nvar m: map[int, int] = {}\n"
                                   "action a(k: 1..3) { require k > 2\n cost m[k]: xs[3] + 1 }\n"
                                   "flow { loop { offer [a] to 0 } }",
    "an error in a require after a cost": "per player var c: int = 5\nvar xs: list[int] = [1]\n"
                                          "action a(k: 1..3) { cost c[me]: k\n require xs[k + 3] > 0 }\n"
                                          "flow { loop { offer [a] to 0 } }",
    # sum(values(m)) adds the values without sorting the keys only when no running total can be too large
    "a sum of a map's values too large": "var m: map[int, int] = {1: 4611686018427387000, 2: 4611686018427387000, "
                                         "3: -4611686018427387000}\nflow { let y = sum(values(m)) }",
    "a sum of the values of a list": "var m: any = [1, 2]\nflow { let y = sum(values(m)) }",
    "a sum of a map's texts": "var m: map[int, any] = {1: 2, 2: \"a\"}\nflow { let y = sum(values(m)) }",
    "an error in an argument of a procedure that can stop": "var xs: list[int] = [1]\n"
        "procedure ask(n: int, m: int) { let k = choose one of [n, m] by 0 }\nflow { ask(1, xs[3]) }",
    "an error in an if's test after statements": "var xs: list[int] = [1]\nvar n: int = 0\n"
        "flow { n = n + 1  if xs[n + 2] > 0 { let k = choose one of [1, 2] by 0 } }",
    "an error in a while's test after statements": "var xs: list[int] = [1]\nvar n: int = 0\n"
        "flow { n = n + 1  while xs[n] > 0 { let k = choose one of [1, 2] by 0 } }",
    "an invariant list concatenation": "var a: list[any] = [1, \"x\"]\n"
                                       "flow { let y = [x for x in 1..3 if x > 2 and -(a + a)[1] > 0] }",
    "abs of a text": "var x: any = \"a\"\nflow { let y = abs(x) }",
    "a text multiplied": "var x: any = \"a\"\nflow { let y = x * 2 }",
    "an index of a number in a loop": "var m: any = 3\nflow { let y = [x for x in [1, 2, 3] if m[x] == 1] }",
    "an index of a list by a text in a loop": "var m: any = [1]\nvar ks: list[any] = [\"a\", \"b\", \"c\"]\n"
                                              "flow { let y = any(ks, x => m[x] == 1) }",
    "get with a map as the key": "var m: map[any, int] = {}\nvar k: any = {1: 2}\nflow { let y = get(m, k, 0) }",
    # fields whose values are all far inside the range are added without a range test; a big one keeps it
    "a sum of row fields past the range": "record R { a: int, b: int }\ntable T: R { r1(4611686018427387900, 10)  "
        "r2(1000, 2) }\nflow { let y = [x.b + x.b for x in [r1, r2]]  let z = [x.a + x.b for x in [r2, r1]] }",
    "choices with a map among them": "var xs: list[any] = [1, {1: 2}]\naction a(k in xs) { }\n"
                                     "flow { loop { offer [a] to 0 } }",
    # an action parameter's tuple pattern over loosely typed items: met by a require, or by the id
    "a pattern parameter's require meets a number": "var xs: list[any] = [(1, 2), 3]\n"
        "action a((x, y) in xs) { require x > 0 }\nflow { loop { offer [a] to 0 } }",
    "a pattern parameter's id meets a pair of another size": "var xs: list[any] = [(1, 2), (1, 2, 3)]\n"
        "action a((x, y) in xs, k in 0..1) { }\nflow { loop { offer [a] to 0 } }",
    # rows looked up by their fields (row_lookup): the second value is met once a row has the first one
    "a table row picked by the field of a non-row": "record R { a: int, b: int }\ntable T: R { r1(1, 2)  r2(2, 3) }\n"
        "var z: any = 3\nflow { let y = [x for x in T if x.a == 2 and x.b == z.b] }",
    # counts by a field (field_counts): the value compared is the field of a number, met at the first item
    "a count by a row field compared with a non-row's field": "record R { a: int }\ntable T: R { r1(1)  r2(2) }\n"
        "var ys: list[list[any]] = [[], [r1, r2]]\nvar zs: list[any] = [3]\n"
        "flow { let e = [count([y for y in ys[0] if y.a == x.a]) for x in zs]  "
        "let y = [count([y for y in ys[1] if y.a == x.a]) for x in zs] }",
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_rule_errors_read_the_same_in_both_backends(case):
    gen = rulelang.loads(HEAD + ERRORS[case])
    cl = gen.with_backend("closures")
    got, want = outcome(gen), outcome(cl)
    if case == "recursion through a lambda":
        # the generated code writes any(xs, x => ...) as a loop (no Python call per item), so it meets the
        # documented limit of 200 nested calls; the closures run out of Python's stack first
        assert "calls itself more than 200 deep" in got, got
        assert want.startswith("GameError: <string>:3:8:") and "deep" in want, want
        return
    assert got == want
    if case not in ("a set of lists of lists", "the start value of a variable", "a procedure that returns and ends"):
        assert got.startswith("GameError:") and "<string>:" in got, got  # positioned


SAME_RESULT = {
    "rows of a constant table picked by their fields": "record R { a: int, b: Kind = none }\nenum Kind { k1, k2 }\n"
        "table T: R { r1(1, k1)  r2(2)  r3(1, k2)  r4(1, k1) }\nvar r: list[any] = []\nvar m: any = {1: 2}\n"
        "var z: any = 3\nflow { let k = k1  let n = 1\n r = [[x for x in T if x.a == n and x.b == k], "
        "[x for x in T if k == x.b], [x for x in T if x.a == 3], [x for x in T if x.b == none and x.a == 2], "
        "first([x for x in T if x.a == n]), [x for x in T if x.a == m], [x for x in T if x.a == n + 1], "
        "[x for x in T if x.a == 9 and x.b == z.b]] }",
    "counts by a row field in a loop": "record R { a: int, c: Kind = none }\nenum Kind { k1, k2 }\n"
        "table T: R { r1(1, k1)  r2(2)  r3(1, k2) }\nvar r: list[any] = []\n"
        "var ys: list[list[R]] = [[r1, r2, r3, r1], []]\nvar m: any = {1: 2}\n"
        "flow { let k = k1\n r = [[count([y for y in ys[0] if y.a == x.a]), count([y for y in ys[0] if x.c == y.c]), "
        "count([y for y in ys[0] if y.c == k]), count([y for y in ys[1] if y.a == x.a]), "
        "count([y for y in ys[0] if y.a == 1]), count([y for y in ys[0] if y.c == none]), "
        "count([y for y in ys[0] if y.a == m]), both(ys[0], x.a, x.c)] for x in ys[0]] }\n"
        # one list counted by two fields in one loop (the counts are kept per list and field)
        "function both(zs, a, c) = count([z for z in zs if z.a == a]) * 10 + count([z for z in zs if z.c == c])",
    "sums of the values of maps": "var ms: list[map[any, any]] = [{}, {\"b\": 2, \"a\": -5}, {2: true, 1: 3}, "
        "{(1, 2): 4611686018427387000, (0, 1): -4611686018427387000, (5, 5): 1}]\nvar r: list[any] = []\n"
        "flow { r = [sum(values(m)) for m in ms] }",
    "+= and -= through indexes": "var m: map[int, list[any]] = {1: [1, [2]], 2: []}\nvar r: list[any] = []\n"
        "var n: map[player, map[int, int]] = {0: {5: 1}}\n"
        "flow { let k = 1  m[k][0] += 4  m[2] += [7]  n[0][5] -= 3  n[k - 1][5] += 10 "
        " r = [m, n] }",
    "line lengths": "board s = square_grid(4, 5)\nboard h = hex_grid(2)\nboard g {\n a -- b -- c\n}\n"
        "var m: map[any, int] = {(0, 0): 1, (1, 1): 1, (2, 2): 1, (3, 3): 1, (1, 0): 1, (0, 1): 2, (0, 2): 2}\n"
        "var r: list[any] = []\n"
        "flow { r = [line_length(s, (1, 1), where: c => m[c] == 1), line_length(s, (0, 1), where: c => m[c] != none),"
        " line_length(s, (2, 2), where: c => m[c] == 2), line_length(s, (9, 9), where: c => true),"
        " line_length(s, (3, 4), where: c => true), line_length(h, (0, 0), where: c => c != (1, 0)),"
        " line_length(g, a, where: c => true), [line_length(s, (i, i), where: c => m[c] == 1) for i in 0..3]] }",
    "count and sum of comprehensions": "var xs: list[any] = [3, true, 5, -2]\nvar r: list[any] = []\n"
        "flow { r = [count([x for x in xs if x != 5]), sum([x for x in xs if x != true]), "
        "sum([x * 2 for x in 1..4 if x > 1]), count([x for x in [] if x > 1]), sum([x for x in []]), "
        "sum([if x then 1 else 0 for x in [true, false, true]]), count([x for x in {1: 2, 3: 4} if x > 1])] }",
    # invariant parts computed before their loop: one that fails is never reached, or is reached by no item
    "invariant parts that would fail": "var xs: list[int] = [1]\nvar m: map[int, int] = {1: 2}\n"
        "var r: list[any] = []\nflow { let i = 5  let n = 0\n"
        "r = [[x for x in [1, 2] if x > 5 and xs[i] > 0], count([x for x in [] if 3 / n > 0]), "
        "any([1, 2], x => x < 2 or m[x] * 2 / n > 0), [x for x in 1..3 if x < 2 or m[1] + 1 > x], "
        "[m[1] * m[1] + x for x in 1..3], [x for x in [[1], [2]] if x != [m[1]]], "
        "[x for x in [[1], [2]] if [m[1] - 1] == x]] }",
    "numbers divided, multiplied and made positive": "var xs: list[any] = [-7, 7, true, -1, 0]\n"
        "var r: list[any] = []\nflow { let d = -2\n r = [[x / 2, x / d, x % 3, x % -3, x % d, abs(x), x * 3, abs(x - 9), "
        "(x * x) / 3] for x in xs] }",
    "fields of rows of one kind, and of pieces": "record R { a: int, c: Kind = none }\nenum Kind { k1, k2 }\n"
        "table T: R { r1(1, k1)  r2(2) }\npiece P { a: list[int] = [5] }\nvar r: list[any] = []\n"
        "var xs: list[any] = []\nflow { let p = new P()  xs = [r1, r2, p]\n"
        "r = [[x.a == [5], x.a != 1, x.a + x.a, [x.a] == [[5]], x.a in [1, [5]]] for x in xs] + "
        "[[y.c == k1, y.c != none, y.c in [k2], [y.c] == [k1]] for y in [r1, r2]] }",
    "in and not in": "var r: list[any] = []\nvar xs: list[any] = [1, [2], {3}, \"a\"]\n"
        "var short: list[any] = [1, 2, [3]]\nvar long: list[any] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, [2], [13]]\n"
        "flow { let s = {1, 2}  let m = {1: 2}\n"
        "r = [[x in short, x in long, x not in short, x not in long, x in s, x not in m, [x] in long, "
        "x in [x], 13 in long, [13] in long] for x in xs] }",
    "indexes in loops over constant lists": "var m: map[int, int] = {1: 5}\nvar l: list[int] = [7, 8, 9]\n"
        "per player var q: list[int] = [4, 5, 6]\nvar r: list[any] = []\n"
        "action a(k: 0..2) { require l[k] != 9 and m[k] == none  effect { r = r + [k] } }\n"
        "flow { let t = true\n r = [[x for x in [0, 1, 2] if l[x] == 8 or m[x + 1] == 5], any([1, 2, 3], x => l[x - 1] > 8), "
        "[m[x] for x in [1, 2, 3]], [q[0][x] for x in [0, 1, 2]], [q[x % 2] == [4, 5, 6] for x in [0, 1, 2]]]\n"
        "repeat 2 times { offer [a] to 0 } }",
    "get and choices": "var m: map[any, int] = {1: 2, \"a\": 3}\nvar xs: list[any] = [3, 1, 3, true, 1, 2]\n"
        "var r: list[any] = []\naction a(k in xs, j in {3, 1, 2}) { require k != j  effect { r = r + [[k, j]] } }\n"
        "flow { r = [get(m, 1, 0), get(m, 5, 0), get(m, \"a\", 0), get(m, [1], 7), get([5, 6], 1, 0), "
        "get([5, 6], 7, 0), get(xs[0], 1, 4)]  repeat 3 times { offer [a] to 0 } }",
    # a let-bound collection that add, remove, move or shuffle changes is read again after them (the generated
    # code keeps a let's value from one statement to the next only when nothing else writes the name)
    "collections changed by add, remove and move": "per player var h: list[any] = [1]\n"
        "var m: map[int, list[any]] = {1: [2]}\nvar r: list[any] = []\naction a(k in [0, 1]) { effect {\n"
        "let xs = [1, 2]  add 3 to xs  r = r + [count(xs)]  remove 1 from xs  r = r + [xs]\n"
        "let ys = [5]  move 5 from ys to xs  r = r + [xs, ys, count(ys)]\n"
        "add 4 to h[k]  add 1 to h[1]  remove 1 from h[1]  add [7] to m[1]  add 8 to m[k + 1]  r = r + [h, m]\n"
        "let zs = [k]  r = r + [zs]  add k to zs  remove 0 from zs  r = r + [zs, count(zs)] } }\n"
        "flow { let xs = [1]  add 2 to xs  r = [xs]  remove 1 from xs  r = r + [xs]\n"
        "repeat 2 times { offer [a] to 0 } }",
    # tests of the form `a and b` made part by part (comprehension conditions, requires, any/all, a lone if);
    # an error in a later part is met only when the parts before hold
    "tests made part by part": "var m: map[int, int] = {1: 5, 2: 0}\nvar r: list[any] = []\n"
        "action a(k in 0..3) { require k > 0 and m[k] != none and m[k] > 1  effect { r = r + [k] } }\n"
        "flow { r = [[x for x in 0..3 if x > 0 and m[x] != none and m[x] < 5], any(0..3, x => x > 1 and m[x] == 0), "
        "all(0..3, x => x < 3 and x >= 0), all(1..2, x => m[x] != none and m[x] >= 0), any([1, 2], x => x > 5 and m[9] > 0)]\n"
        "if count(r) > 2 and m[1] == 5 { r = r + [\"both\"] }  if count(r) > 9 and m[7] > 0 { r = r + [\"never\"] }\n"
        "repeat 2 times { offer [a] to 0 } }",
    # a collection searched by `in` in a loop, read before it: its class tests are made there too
    "searches of collections read before their loop": "var m: map[int, any] = {0: [1, 2], 1: [1, 2, 3, 4, 5, 6, 7, 8, "
        "9, 10], 2: {1, 5}, 3: {1: 2}, 4: [[1], 2], 5: \"a1\"}\nvar r: list[any] = []\n"
        "action a(k in 0..3, j in [1, 2, 5, [1], \"1\"]) { require j in m[k] and not (5 in m[k + 1])  effect { r = r + [[k, j]] } }\n"
        "flow { r = [[[x for x in [0, 1, 2, 5, [1], \"1\"] if x in m[k]] for k in 0..4], "
        "[count([x for x in [1, 2, 5, 9] if x not in m[k]]) for k in 0..4], any([\"b\", \"1\"], x => x in m[5])]\n"
        "repeat 3 times { offer [a] to 0 } }",
    # a list written into a deck, bag or set (whole, at an index, by add and remove) becomes a pile or set
    "writes into decks, bags and sets": "per player var used: set[int] = {}\nvar d: deck[int] = [4, 5]\n"
        "var b: bag[int] = [2]\nvar ds: map[int, deck[int]] = {1: []}\nvar bs: list[bag[int]] = [[], [1]]\n"
        "var r: list[any] = []\nflow { used[0] = [3, 1, 3]  used[1] = {}  add 7 to used[1]  remove 3 from used[0]\n"
        "d = [9, 8, 9]  b = [3, 1]  add 4 to b  ds[1] = [2, 1]  add 3 to ds[1]  bs[0] = [5, 5]  remove 1 from bs[1]\n"
        "let k = draw one from d  r = [used, k, count(b), ds, bs, d] }",
    # an action whose code is one generated op runs without a frame: its signals are taken as _run takes them
    "an action that ends the game, returns or eliminates": "var r: list[any] = []\n"
        "action a(k in [1, 2]) { effect { r = r + [k]  if k == 1 { return }  r = r + [me] } }\n"
        "action b() { effect { r = r + [9]  eliminate me } }\n"
        "action d() { effect { r = r + [me]  if count(r) > 4 { end_game \"five\" }  r = r + [0] } }\n"
        "flow { loop { offer [a] to 0  offer [b, a] to 1  offer [d] to 0 } }",
    # a listing's `(r, c)` of the parameters in order is the candidate's own list of values; `(c, r)` is not
    "a map indexed by the parameters": "var m: map[any, int] = {(0, 1): 5}\nvar r: list[any] = []\n"
        "action a(x in 0..1, y in [0, 1]) { require m[(x, y)] == none and m[(y, x)] != 7  "
        "effect { m[(x, y)] = 7  r = r + [[x, y]] } }\n"
        "action b(x in [[1], [2]], y in [0]) { require m[(x, y)] != 3  effect { m[(x, y)] = 1 } }\n"
        "flow { repeat 3 times { offer [a] to 0  offer [b] to 1 } }",
    # an action's parameters and `me` are read once per op and kept across its statements; a parameter that
    # the body writes is read again after each statement
    "action parameters across statements": "var r: list[any] = []\nvar m: map[any, int] = {}\n"
        "action a(k in 0..2, j in [1, 2]) { effect { r = r + [k]  m[(k, j)] = k + j\n"
        "let z = [x for x in 0..2 if m[(x, j)] != none]  r = r + [count(z), me == k, me, (k, me)]\n"
        "for x in 0..2 { let w = x + k  if w > 1 { let v = [w]  r = r + [v] } else { let v = w  r = r + [v] } }\n"
        "r = r + [z, count(z) + k] } }\n"
        "action b(k in 0..1) { effect { r = r + [k]  k = k + 10  r = r + [k, (k, me)]\n"
        "let q = [w for w in 0..1 if w + k > 0]  let w = 5  r = r + [q, w] } }\n"
        "flow { repeat 3 times { offer [a, b] to 0  offer [b, a] to 1 } }",
    "action parameters taken apart by tuple patterns": "var r: list[any] = []\nper player var c: int = 9\n"
        "var free: list[tuple[int, tuple[int, int]]] = [(0, (1, 2)), (1, (2, 0)), (2, (0, 1))]\n"
        "action a((k, (j, _)) in [(0, (1, 5)), (1, (0, 6))], n in 0..k) { require j + n > 0\n"
        "effect { r = r + [(k, j, n, me)] } }\n"
        "action b((i, (x, y)) in free, z in [x, y]) { require z != i  cost c[me]: z + i\n"
        "effect { r = r + [(i, x, y, z)]  free = [f for f in free if f[0] != i] } }\n"
        "flow { repeat 3 times { offer [a, b] to 0  offer [b, a] to 1 } }",
}


@pytest.mark.parametrize("case", sorted(SAME_RESULT))
def test_rules_without_errors_end_in_the_same_state_in_both_backends(case):
    gen = rulelang.loads(HEAD + SAME_RESULT[case])
    got = outcome(gen)
    assert got.startswith("no error") and '"r"' in got, got
    assert got == outcome(gen.with_backend("closures"))


# ---------------------------------------------------------------------------------- budgets
BUDGETS = {
    "an endless loop": ("flow { loop { let x = 1 } }", "budget"),
    "an endless while": ("var n: int = 0\nflow { while n < 1 { let x = n } }", "budget"),
    "a huge comprehension": ("flow { let y = [[i * j for i in 1..1000] for j in 1..1000] }", "work budget"),
    "a huge map comprehension": ("flow { let y = {i: [j for j in 1..1000] for i in 1..1000} }", "work budget"),
    "many calls of a function": ("function f(n: int): int = n + 1\n"
                                 "flow { let y = [f(i) + f(i) for i in 1..900000] }", "work budget"),
    "many calls of a lambda": ("flow { let y = count(1..900000, x => x > 0) + count(1..900000, x => x > 0) }",
                               "work budget"),
    "many long lines": ("board s = square_grid(200, 200, diagonals: true)\n"
                        "flow { let y = [line_length(s, (i % 200, 7), where: c => c != (0, 0)) for i in 1..900000] }",
                        "work budget"),
    "a huge count": ("flow { let y = [count([i for i in 1..1000000 if i > j]) for j in 1..1000] }", "work budget"),
    "a huge sum": ("flow { let y = [sum([i for i in 1..1000000 if i > j]) for j in 1..1000] }", "work budget"),
    "a deep recursion": ("function f(n: int): int = if n > 0 then f(n - 1) + 1 else 0\n"
                         "flow { let y = f(100000) }", "deep"),
    # an invariant part that charges work (lists added, compared) is computed in the loop, charged each time
    "an invariant list concatenation": ("flow { let a = [1, 2, 3]  let y = count([x for x in 1..400000 "
                                        "if count(a + a) > 0]) }", "work budget"),
    "many searches of a long list": ("flow { let big = to_list(1..20)  let y = count(1..60000, i => i in big) }",
                                     "work budget"),
    "an invariant comparison of lists": ("flow { let a = [1, 2, 3]  let y = all(1..400000, x => a + [x] != a "
                                         "and [3, 2, 1] != a) }", "work budget"),
}


@pytest.mark.parametrize("case", sorted(BUDGETS))
def test_budgets_stop_the_generated_backend_as_the_closures(case):
    text, words = BUDGETS[case]
    gen = unoptimised(HEAD + text)  # the optimiser inlines `f`: a call of it then costs no work of its own
    assert gen.backend == "generated"
    got = outcome(gen)
    assert got.startswith("GameError:") and words in got, got
    if case not in ("an endless loop", "an endless while"):  # a loop may stop at another budget
        assert got == outcome(gen.with_backend("closures"))


# ---------------------------------------------------------------------------------- the choice
def test_the_backend_is_chosen_by_name_and_checked():
    gen, cl = both("games/examples/tictactoe.rules")
    src = gen.generated_source
    assert gen.backend == "generated" and "def fn_" in src and "def op_" in src and "def legal_" in src
    assert cl.backend == "closures" and cl.generated_source == ""
    from interpreter.ruleset import Ruleset
    with pytest.raises(ValueError):
        Ruleset(gen.program, gen.checker, backend="fast")


def test_rules_python_cannot_compile_fall_back_to_the_closures():
    # 25 nested comprehensions: more nested loops than Python compiles in one function
    inner = "i0"
    for k in range(25):
        inner = f"[{inner} for i{k} in [1]]"
    rs = rulelang.loads(HEAD + f"flow {{ let y = {inner} }}")
    assert rs.backend == "closures" and rs.fallback
    assert outcome(rs).startswith("no error")


def test_code_is_generated_at_the_first_game_and_keeps_what_was_set_on_the_ruleset():
    rs = rulelang.loads(HEAD + "var n: int = 0\nflow { loop { n += 1 } }")
    assert rs.__dict__["_built"] == "closures"  # loading (and `rulelang check`) generates nothing
    rs.step_budget = 1000
    rs.warnings = ["kept"]
    with pytest.raises(GameError, match="ran 1,000 steps"):
        rs.new_game(2)
    assert rs.__dict__["_built"] == "generated" and rs.backend == "generated" and rs.warnings == ["kept"]


def test_an_expression_python_cannot_compile_runs_as_a_closure():
    # the same nesting in an ending (an expression compiled at its first use): only it falls back
    inner = "i0"
    for k in range(25):
        inner = f"[{inner} for i{k} in [1]]"
    rs = rulelang.loads(HEAD + f'var n: int = 0\nending "deep" when count({inner}) > 100\n'
                               "function f(x: int): int = x + n\n"
                               f'ending "called" when sum([f(y) for y in [1] if {inner} == {inner}]) > 3\n'
                               "action a() { effect { n += 1 } }\nflow { loop { offer [a] to 0 } }")
    assert rs.backend == "generated"
    got = outcome(rs)
    assert got == outcome(rs.with_backend("closures"))
    assert '"end_reason":"called"' in got


def test_tables_and_boards_are_built_once():
    rs = rulelang.loads(HEAD + "board b = square_grid(30, 30)\nrecord R { a: int }\ntable T: R { r1(1) }\n"
                               "flow { end_game }")
    board, fields = rs.boards["b"], rs.row_fields
    rs.new_game(2)  # the generated code is built here: the fixed data is not built again
    assert rs.backend == "generated" and rs.boards["b"] is board and rs.row_fields is fields


def unoptimised(text):
    """The rules of `text` without the optimiser's passes (they inline small functions, which would hide
    what these tests look at: the generated code of a call)."""
    from interpreter.ruleset import Ruleset
    from rulelang.checker import check_program
    from rulelang.program import build_program
    prog, _ = build_program("<string>", text, ())
    return Ruleset(prog, check_program(prog), optimise=False)


def test_a_bound_value_is_computed_once_in_both_backends():
    """`Bind` (made by the optimiser): the value computed once, read by its hidden local in the body."""
    from rulelang import ast as A
    rs = unoptimised(HEAD + "var xs: list[int] = [3, 1, 2]\n"
                               "function f(k: int): int = k + 1\n"
                               "score p = f(p)\nflow { xs = [x + 1 for x in xs]  end_game }")
    f = rs.program.decls["f"]
    k = f.body.left  # the parameter k
    hidden = A.Name(ident="%b1", ref="local", span=k.span, ty=k.ty)
    # f(k) = let %b1 = sum(xs) + k in [%b1 * y for y in xs if y != %b1] counted, plus %b1
    total = A.Binary(op="+", left=A.Call(func=A.Name(ident="sum", ref="builtin_func"),
                                         args=[A.Arg(None, A.Name(ident="xs", ref="var"))]), right=k)
    comp = A.Comprehension(kind="list", element=A.Binary(op="*", left=hidden, right=A.Name(ident="y", ref="local")),
                           names=["y"], source=A.Name(ident="xs", ref="var"),
                           condition=A.Binary(op="!=", left=A.Name(ident="y", ref="local"), right=hidden))
    f.body = A.Bind(name="%b1", value=total, body=A.Binary(
        op="+", left=A.Call(func=A.Name(ident="count", ref="builtin_func"), args=[A.Arg(None, comp)]), right=hidden))
    gen, cl = rs.with_backend("generated"), rs.with_backend("closures")
    a, b = gen.new_game(2, seed=1), cl.new_game(2, seed=1)
    assert a.scores() == b.scores() == [12, 13]  # sum([4, 2, 3]) + p = 9 + p: three items differ, plus it


THRESHOLD_BUDGET = 100_000  # a tenth of the work budget: each run of the bisection does at most this much


def same_budget_threshold(rules, hi):
    """rules(n): a ruleset whose work grows with n, within the work budget at n = 1 and over it at n = hi.
    The longest run that stays within the budget (found by bisection with the closures) is the same with
    the generated code. The work budget is lowered to THRESHOLD_BUDGET meanwhile (the property holds at
    any budget; a small one makes each of the twenty-odd runs a tenth as long)."""
    def fails(n, backend):
        rs = rules(n)
        with mock.patch.object(budget_module, "WORK_BUDGET", THRESHOLD_BUDGET):
            return outcome(rs if backend == "generated" else rs.with_backend("closures")).startswith("GameError")

    lo = 1
    assert not fails(lo, "closures") and fails(hi, "closures")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(mid, "closures") else (mid, hi)
    assert not fails(lo, "generated") and fails(hi, "generated")


@pytest.mark.parametrize("key", ['"' + "k" * 128 + '"', "7", "[1, 2]", "true"])
def test_get_with_a_default_charges_as_the_closures_to_the_last_unit(key):
    """get(map, key, default) charges the key's size + 1, written without a call for texts and numbers:
    the longest run that stays within the work budget is the same in both backends."""
    same_budget_threshold(lambda n: unoptimised(HEAD + f"var m: map[any, int] = {{}}\nflow {{ let k = {key}  "
                                                        f"let y = [get(m, k, 0) for i in 1..{n}] }}"), 600_000)


def test_a_search_of_a_long_list_read_before_its_loop_charges_as_the_closures_to_the_last_unit():
    """`x in m[1]` in a loop, m[1] read before the loop with its class tests: a list of more than 8 items is
    still charged per search."""
    same_budget_threshold(lambda n: rulelang.loads(HEAD + "var m: map[int, list[int]] = {1: [1, 2, 3, 4, 5, 6, 7, 8, "
                                                   f"9, 10]}}\nflow {{ let y = [x for x in [1, 2, 3] if x in m[1]] "
                                                   f"let z = [i for i in 1..{n} if i in m[1]] }}"), 300_000)


def test_a_comparison_tested_by_an_if_is_written_in_the_if():
    """`if n == 2`, a require `k != 1 and k < 3` (k surely a whole number: tested part by part), `if ...
    then ... else` on `k == n`: the comparison is the test itself (no name holds its result first), and
    the game ends as with the closures."""
    rs = unoptimised(HEAD + "var n: int = 0\nvar r: list[int] = []\n"
                            "function pick(k: int): int = if k == n then k else n\n"
                            "action a(k in 1..3) { require k != 1 and k < 3  effect { n += 1  if n == 2 { r = r + [pick(k)] } } }\n"
                            "flow { repeat 4 times { offer [a] to 0 } }")
    rs.new_game(2, seed=1)
    src = rs.generated_source
    assert re.search(r"if not \(\w+ != \(1\)\): continue\n +if not \(\w+ < \(3\)\): continue", src), src
    assert re.search(r"if \(t\d+ == \(2\)\):", src), src
    assert re.search(r"if \(t\d+ == t\d+\):", src), src  # (pick, written inline: k is a whole number)
    assert outcome(rs) == outcome(rs.with_backend("closures"))


@pytest.mark.parametrize("target", ["b", "bs[0]"])
def test_a_list_written_into_a_bag_charges_as_the_closures_to_the_last_unit(target):
    """A whole bag written from a list is charged for sorting its pool (an item of a list of bags is not, as
    Place.set does it): the longest run within the work budget is the same in both backends."""
    same_budget_threshold(lambda n: rulelang.loads(HEAD + "var b: bag[int] = []\nvar bs: list[bag[int]] = [[]]\n"
                                                   f"flow {{ {target} = [i for i in 1..{n}] }}"), 900_000)


@pytest.mark.parametrize("loop", [
    "[any(1..40, x => x == i) for i in 1..{n}]",                      # an any/all loop counting in a local
    "[all(1..40, x => m[x] == none) for i in 1..{n}]",                # the same, reading a variable
    "[line_length(s, (0, i % 50), where: c => m[c[1]] == none) for i in 1..{n}]",  # a walk along a line
    # tests that hand the game to a call that charges: the call is given the count and hands it back
    "[any(1..40, x => depth(x % 3) == i) for i in 1..{n}]",           # a rule function (never written inline)
    "[all(1..40, x => [x, [x]] != [i, [0]]) for i in 1..{n}]",         # lists compared (charged by their size)
])
def test_a_loop_counting_its_work_in_a_local_stops_where_the_closures_stop(loop):
    """Loops count their work in a Python local (written back before every look at the budget, and given
    to every call that charges): the longest run within the work budget is the same in both backends."""
    def rules(n):
        return rulelang.loads(HEAD + "var m: map[int, int] = {}\nboard s = square_grid(1, 50)\n"
                              "function depth(k: int): int = if k > 0 then depth(k - 1) + 1 else 0\n"
                              f"flow {{ let y = {loop.format(n=n)} }}")

    gen = rules(5)
    gen.new_game(2, seed=1)
    assert re.search(r"\n +(w\d+) = G\.work\n.*\n +\1 \+= 1\n", gen.generated_source, re.S)  # the loop counts locally
    if "depth(" in loop or "[x, [x]]" in loop:  # the call written between handing the count over and taking it back
        assert re.search(r"G\.work = (w\d+); [^;]*\(G, [^;]*; \1 = G\.work; m\d+ = G\.work_mark\n", gen.generated_source)
    same_budget_threshold(rules, 1_000_000)


def test_a_legal_listing_counting_its_work_in_a_local_stops_where_the_closures_stop():
    """The requires' loops of a generated listing of fixed candidates count in one local for all candidates."""
    def rules(n):
        return rulelang.loads(HEAD + "var m: map[int, int] = {}\nvar r: list[int] = []\n"
                              f"action a(k in 1..50) {{ require all(1..{n}, x => m[x] == none)  effect {{ r = r + [k] }} }}\n"
                              "flow { repeat 2 times { offer [a] to 0 } }")

    gen = rules(5)
    gen.new_game(2, seed=1)
    legal = gen.generated_source[gen.generated_source.index("def legal_"):]
    assert re.search(r"\n +(w\d+) = G\.work\n +m\d+ = G\.work_mark\n +for vals, bit in", legal)
    same_budget_threshold(rules, 100_000)


REMEMBERED = '''
var xs: list[int] = [1, 2, 3, 4, 5, 6, 7, 8]
var empty: list[int] = []
function heavy(k) = count([i for i in 1..k if i % 3 == 0])
function fails(k) = [1, 2][k]
'''


@pytest.mark.parametrize("loop", [
    "[x + heavy({n}) for x in xs]",                                  # every round needs it
    "[x for x in xs if x > 6 or heavy({n}) > 0]",                    # only some rounds do
    "[count([y for y in xs if y > heavy({n})]) for x in xs]",        # a comprehension inside a comprehension
    "any(xs, x => x + heavy({n}) < 0)",                              # an any/all loop (every round)
])
def test_a_part_of_a_loop_that_reads_none_of_its_names_charges_every_round_as_the_closures(loop):
    """A part of a loop's body that reads none of the loop's names but charges work is computed once in the
    generated code (at its first use) and charged again in every round that uses it: the longest run within
    the work budget is the same in both backends."""
    def rules(n):
        return unoptimised(HEAD + REMEMBERED + f"flow {{ let y = {loop.format(n=n)} }}")

    gen = rules(5)
    gen.new_game(2, seed=1)
    assert re.search(r"\n +(r\d+) = UNSET\n", gen.generated_source)  # the part is remembered
    same_budget_threshold(rules, 200_000)


@pytest.mark.parametrize("flow", [
    "let y = [x + fails(5) for x in xs]",                 # fails in the first round
    "let y = [x + fails(5) for x in xs if x > 4]",        # in the first round that needs it
    "let y = [x + fails(5) for x in xs if x > 100]",      # never needed: no error
    "let y = [x + fails(5) for x in empty]",               # an empty loop: never computed
])
def test_a_remembered_part_fails_where_and_as_the_closures_fail(flow):
    rs = unoptimised(HEAD + REMEMBERED + f"flow {{\n  {flow}\n}}")
    assert outcome(rs) == outcome(rs.with_backend("closures"))


def test_a_listing_remembers_a_part_its_candidates_share():
    """The requires of an action's candidates: a part that reads no parameter is computed once per listing,
    its work charged for each candidate as the closures charge it."""
    def rules(n):
        return unoptimised(HEAD + REMEMBERED + "var m: int = 0\n"
                           f"action a(k in 1..40) {{ require k > m and heavy({n}) >= 0  effect {{ m = k }} }}\n"
                           "flow { loop { offer [a] to 0 } }")

    gen = rules(5)
    g = gen.new_game(2, seed=1)
    assert [a.id for a in g.legal_actions()][:3] == ["a(1)", "a(2)", "a(3)"]
    assert re.search(r"\n +(r\d+) = UNSET\n", gen.generated_source)
    same_budget_threshold(rules, 200_000)


def test_a_listing_skips_the_inner_candidates_of_an_outer_value_that_fails_the_first_test():
    """`require k != 1 and ...` of a(k, j): the first part reads only k, so for k = 1 every candidate
    fails on it; the generated listing tests it once, before j's loop. The same candidates in order, and
    the same error where that part cannot be computed (then the inner loop runs and meets it)."""
    text = (HEAD + "var ys: list[list[int]] = [[1, 2], [3], [4, 5, 6]]\nvar r: list[any] = []\n"
            "action a(k in 0..2, j in ys[k]) { require k != 1 and j > k  require j != 5  effect { r = r + [[k, j]] } }\n"
            "flow { repeat 2 times { offer [a] to 0 } }")
    gen = rulelang.loads(text)
    assert re.search(r"\n +if h\d+ is not UNSET and not h\d+: continue\n", gen.generated_source)
    for rs in (gen, gen.with_backend("closures")):
        g = rs.new_game(2, seed=1)
        assert [a.id for a in g.legal_actions()] == ["a(0,1)", "a(0,2)", "a(2,4)", "a(2,6)"]
    assert outcome(gen) == outcome(gen.with_backend("closures"))
    failing = (HEAD + "var xs: list[int] = [1]\nvar ys: list[list[int]] = [[1], [2]]\n"
               "action a(k in 0..1, j in ys[k]) { require xs[k] > 0 and j > 0 }\nflow { loop { offer [a] to 0 } }")
    gen = rulelang.loads(failing)
    got = outcome(gen)
    assert got.startswith("GameError:") and "while checking action 'a'" in got, got
    assert got == outcome(gen.with_backend("closures"))


def test_a_part_not_computed_before_its_loop_is_kept_once_computed_in_it():
    """`m[k]` and `xs[i]` are computed before the comprehension's loop in one try: `xs[i]` fails there (i is
    past the end), and `m[k]`, after it, stays UNSET too. The first round that needs `m[k]` computes it
    and keeps it for the rounds after (it charges no work); `xs[i]` is met by no round. The same list and
    the same work as the closures."""
    text = (HEAD + "var xs: list[int] = [1]\nvar m: map[int, int] = {1: 2}\nvar r: list[any] = []\n"
            "flow { let i = 5  let k = 1\n r = [x for x in 1..6 if x > 9 and xs[i] > 0 or m[k] * 2 > x] }")
    gen = rulelang.loads(text)
    src = gen.generated_source
    kept = re.search(r"\n( +)if (h\d+) is UNSET:\n(?:\1    .*\n)*?\1    \2 = ", src)
    assert kept, src
    got = outcome(gen)
    assert '"r":[1,2,3]' in got, got
    assert got == outcome(gen.with_backend("closures"))


@pytest.mark.parametrize("flow", [
    "let a = [i for i in 1..{n}]  let b = a + a",                  # two lists of numbers (concat's quick way)
    "let a = [[i] for i in 1..{n}]  let b = a + [[0]]",            # lists holding lists: arith's way
    "let a = [i for i in 1..{n}]  let b = {{1}} + {{2}}  let c = a + [0]",  # sets joined, then lists
    "r = [i for i in 1..{n}]  add 0 to r  remove 1 from r",        # a list variable grown and shrunk
    "rs = [[i] for i in 1..{n}]  remove [1] from rs  add [2] to rs",  # lists of lists: the item's size counts
    "m[1] = [i for i in 1..{n}]  add 0 to m[1]",                    # a list inside a map grown by a number
    "m[1] = [i for i in 1..{n}]  add 0 to m[1]  m[1] += [3]",       # ... and joined (the map's copy charged)
])
def test_joined_and_changed_lists_charge_as_the_closures_to_the_last_unit(flow):
    """`+` of two lists (concat in the generated code), `add` and `remove` on a list (their quick cases in
    add_item and remove_item), a number added into a list inside a map (the closures charge only the list's
    copy for it; the generated code once charged the whole variable as well): the same values, and the
    longest run within the work budget is the same in both backends."""
    def rules(n):
        return rulelang.loads(HEAD + "var r: list[int] = []\nvar rs: list[list[int]] = []\n"
                              "var m: map[int, list[int]] = {1: []}\n"
                              f"flow {{ {flow.format(n=n)} }}")

    small = rules(3)
    assert outcome(small) == outcome(small.with_backend("closures"))
    if "a + a" in flow:
        assert re.search(r"= concat\(G, \w+, \w+\)", small.generated_source), small.generated_source
    same_budget_threshold(rules, 900_000)


def test_a_count_by_a_row_field_in_a_loop_counts_each_value_once():
    """`count([y for y in xs if y.f == e])` in a loop, xs computed before it: the counts of xs per value of
    the field are made at the first round that needs them (field_counts), later rounds look their value up.
    The answers are the ones of the loop item by item (the closures), an empty list computes nothing, and
    the longest run within the work budget is the same (the walk of xs is still charged every round)."""
    text = ("record R {{ a: int }}\ntable T: R {{ r1(1)  r2(2)  r3(1) }}\nvar ys: list[list[R]] = [[r1, r2, r3]]\n"
            "flow {{ let y = [count([z for z in ys[0] if z.a == i % 3]) for i in 1..{n}] }}")
    small = rulelang.loads(HEAD + "var r: list[int] = []\n" + text.format(n=5).replace("let y =", "r ="))
    src = small.generated_source
    assert re.search(r"if (w\d+) is None: \1 = field_counts\(", src), src
    got = outcome(small)
    assert '"r":[2,1,0,2,1]' in got, got  # i % 3 = 1, 2, 0, 1, 2: two rows of a = 1, one of a = 2
    assert got == outcome(small.with_backend("closures"))
    same_budget_threshold(lambda n: rulelang.loads(HEAD + text.format(n=n)), 400_000)


def test_rows_of_a_constant_table_picked_by_their_fields_are_looked_up():
    """`[x for x in T if x.f == a and x.g == b]`, T a table: the rows are looked up by their values of f, then
    g (row_lookup), in T's order, with the walk of T charged as the loop charges it; b is computed only
    when a row has f == a. The answers are the closures' (the loop item by item)."""
    rs = rulelang.loads(HEAD + "record R { a: int, b: int }\ntable T: R { r1(1, 2)  r2(2, 3)  r3(1, 2)  r4(1, 5) }\n"
                        "var r: list[any] = []\n"
                        "flow { r = [[x for x in T if x.a == i % 3 and x.b == 2] for i in 1..3] }")
    src = rs.generated_source
    assert re.search(r"(w\d+) = \1\.get\(", src), src
    got = outcome(rs)
    assert '"r":[["r1","r3"],[],[]]' in got, got  # i % 3 = 1, 2, 0: rows with a = 1 and b = 2, then none
    assert got == outcome(rs.with_backend("closures"))
    same_budget_threshold(lambda n: rulelang.loads(
        HEAD + "record R { a: int }\ntable T: R { r1(1)  r2(2)  r3(1) }\n"
        f"flow {{ let y = [[[x for x in T if x.a == i % 3], [x for x in T if i % 2 == x.a]] for i in 1..{n}] }}"),
        300_000)

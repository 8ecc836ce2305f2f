"""An action's parameter written as a tuple pattern over its domain (docs/language.md, "Actions", "Tuple
patterns", "Action ids"): `action move((src, dst) in moves)`. The domain's items must be tuples of the
pattern's size (E331/E332 at check time, at the pattern; a rules error at run time for a loosely typed
domain); the names are bound in the later domains, the requires, the costs, the effect and the text; the id
writes the pattern's items flat (`move(5,0,4,1)`), while a plain tuple parameter keeps its brackets; both
backends agree; saves, the adapters' action numbering, the formatter and the symbol index know the form."""
from __future__ import annotations

import random

import pytest

import rulelang
from rulelang import GameError, RuleError
from rulelang import ast as A
from rulelang.parser import parse
from rulelang.symbols import analyse

GAME = '''game "Paths" { players 2 }
enum Colour { red, blue }
const moves = [(0, 1, 2, 3), (1, 0, 3, 2), (2, 2, 0, 1)]
per player var coins: int = 4
per player var spent: int
var placed: map[tuple[int, int], Colour] = {}
var trail: list[int] = []

function free_cells(): list[tuple[int, int]] = [(r, c) for r in 0..1 for c in 0..2 if (r, c) not in placed]

action move((from_cell, to_cell, _, steps) in moves) {
  text "move {from_cell} to {to_cell}"
  require from_cell != to_cell or steps > 2
  effect { add from_cell * 10 + to_cell to trail }
}

action place((r, c) in free_cells(), colour in Colour, k in 0..r) {
  text "place {colour} at {r},{c}"
  require c >= k
  cost coins[me]: r + 1, spent[r % 2]: 0 - c
  effect {
    placed[(r, c)] = colour
    let (times, _) = choose one of [(1, 0), (2, 0)]
    add times * (r + c + k) to trail
  }
}

action pass { effect { coins[me] += 1  spent[me] += 1 } }

flow { repeat 4 times { for p in players { turn p { offer [move, place, pass] to p } } } }
score p = coins[p] + sum(trail) + spent[p]
'''


def _rules(text=GAME, backend="generated", name="paths.rules"):
    rs = rulelang.loads(text, name=name)
    return rs if backend == "generated" else rs.with_backend("closures")


def _errors(text):
    with pytest.raises(RuleError) as e:
        rulelang.loads(text, name="t.rules")
    return e.value.diagnostics


# ------------------------------------------------------------------------------------------ parsing
def test_a_pattern_parameter_parses_into_a_hidden_parameter_and_lets_first_in_the_effect():
    module, diags = parse("action go((a, (b, _)) in xs, n in 0..a) { require b > n  effect { log a } }\n",
                          "p.rules")
    assert diags == []
    d = module.items[0]
    first, second = d.params
    assert A.is_hidden(first.name) and first.shape == ("(a, (b, _))", ("a", ("(b, _)", ("b", "_"))))
    assert [n for n, _ in first.patterns[0][2]] == ["a", "b"]
    assert second.name == "n" and isinstance(second.domain, A.Bind)  # it reads `a`: computed with it bound
    assert isinstance(d.requires[0].test, A.Bind)
    lets = A.pattern_lets(d)
    assert [s.name for s in lets if not A.is_hidden(s.name)] == ["a", "b"]
    assert d.effect.stmts[len(lets):][0].__class__ is A.Log


def test_what_does_not_read_a_pattern_name_is_left_alone():
    module, _ = parse("action go((a, b) in xs, n in 0..3) { require n > 1 }\n", "p.rules")
    d = module.items[0]
    assert isinstance(d.params[1].domain, A.Binary) and isinstance(d.requires[0].test, A.Binary)
    # a domain known when the rules load stays one: its candidates and ids are listed once
    rs = _rules()
    assert rs.actions["move"].fixed_options is not None


@pytest.mark.parametrize("params", ["(a, b)", "(a, b): tuple[int, int]"])
def test_a_pattern_parameter_needs_a_domain(params):
    _, diags = parse(f"action go({params}) {{}}\n", "p.rules")
    assert [(d.code, d.line, d.column, d.hint) for d in diags][:1] == [("E004", 1, 17, "expected 'in'")]


def test_only_an_action_parameter_takes_a_pattern():
    _, diags = parse("procedure f((a, b) in xs) {}\n", "p.rules")
    assert [(d.code, d.column) for d in diags][:1] == [("E004", 13)]


# ------------------------------------------------------------------------------------------ checking
def test_a_pattern_of_another_size_is_e332_at_the_pattern_with_a_hint():
    text = 'game "T" { players 2 }\nflow {}\nconst moves = [(1, 2, 3)]\naction go((a, b) in moves) {}\n'
    [d] = [d for d in _errors(text) if d.severity == "error"]
    assert (d.code, d.line, d.column) == ("E332", 4, 11)
    assert d.hint == "write 3 names (or _ for an item you do not need)"
    lines = d.render().splitlines()
    assert lines[0] == ("t.rules:4:11: error[E332]: the pattern (a, b) has 2 names, but the value is a tuple "
                        "of 3 items (tuple[int, int, int])")
    assert lines[2].index("^^^^^^") == lines[1].index("(a, b)")


def test_a_domain_of_no_tuples_is_e331():
    text = 'game "T" { players 2 }\nflow {}\naction go((a, b) in [1, 2]) { effect { log a } }\n'
    [d] = [d for d in _errors(text) if d.severity == "error"]
    assert (d.code, d.line, d.column) == ("E331", 3, 11) and "index a list" in d.hint


def test_a_domain_that_is_no_collection_names_the_pattern():
    text = 'game "T" { players 2 }\nflow {}\naction go((a, b) in 3) {}\n'
    [d] = [d for d in _errors(text) if d.severity == "error"]
    assert d.code == "E310" and "the domain of '(a, b)'" in d.message


@pytest.mark.parametrize("params, column", [("(a, a) in [(1, 2)]", 15), ("(a, b) in [(1, 2)], a in 1..2", 31),
                                            ("a in 1..2, (b, a) in [(1, 2)]", 26)])
def test_a_name_given_twice_among_the_parameters_is_e101(params, column):
    text = f'game "T" {{ players 2 }}\nflow {{}}\naction go({params}) {{}}\n'
    errs = [d for d in _errors(text) if d.severity == "error"]
    assert [(d.code, d.line, d.column) for d in errs] == [("E101", 3, column)]


def test_the_names_take_the_types_of_the_items():
    text = 'game "T" { players 2 }\nflow {}\naction go((k, w) in [(1, "one")]) { require k + w > 0 }\n'
    assert [(d.code, d.line) for d in _errors(text) if d.severity == "error"] == [("E301", 3)]


def test_the_text_may_name_the_patterns_names_and_nothing_else():
    ok = ('game "T" { players 2 }\nflow { turn 0 { offer [go] to 0 } }\n'
          'action go((a, (b, _)) in [(1, (2, 3))], c in 1..2) { text "{a} {b} {c}" }\n')
    g = rulelang.loads(ok, name="t.rules").new_game(2, seed=0)
    assert [(x.id, str(x)) for x in g.legal_actions()] == [("go(1,2,3,1)", "1 2 1"), ("go(1,2,3,2)", "1 2 2")]
    errs = _errors(ok.replace("{c}\"", "{c} {z}\""))
    [d] = [d for d in errs if d.severity == "error"]
    assert d.code == "E328" and d.hint == "the text can show the parameters: {a}, {b}, {c}"


# ------------------------------------------------------------------------------------------ running
@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_ids_write_the_items_flat_and_texts_name_them(backend):
    g = _rules(backend=backend).new_game(2, seed=0)
    acts = {a.id: str(a) for a in g.legal_actions()}
    assert list(acts)[:3] == ["move(0,1,2,3)", "move(1,0,3,2)", "place(0,0,red,0)"]
    assert "move(2,2,0,1)" not in acts  # from == to and steps == 1: the require rules it out
    assert acts["move(1,0,3,2)"] == "move 1 to 0"
    assert acts["place(1,2,blue,1)"] == "place blue at 1,2"
    # k in 0..r: the later domain reads r; the require reads c
    assert sorted(i for i in acts if i.startswith("place(1,1,red")) == ["place(1,1,red,0)", "place(1,1,red,1)"]
    assert [i for i in acts if i.startswith("place(0,")] == [f"place(0,{c},{col},0)" for c in range(3)
                                                              for col in ("red", "blue")]


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_the_effect_and_the_costs_read_the_names(backend):
    g = _rules(backend=backend).new_game(2, seed=0)
    g.apply("place(1,2,blue,1)")
    g.apply("(2,0)")  # the choice inside the action
    got = g.view(None)["vars"]
    assert got["placed"] == {"(1,2)": "blue"} and got["trail"] == [2 * (1 + 2 + 1)]
    assert got["coins"] == [4 - 2, 4] and got["spent"] == [0, 0 + 2]  # cost spent[r % 2]: 0 - c
    g.apply("move(1,0,3,2)")
    assert g.view(None)["vars"]["trail"] == [8, 10]


def _play(rs, seed):
    g = rs.new_game(2, seed=seed)
    rng = random.Random(seed)
    while not g.is_over():
        g.apply(rng.choice(g.legal_actions()).id)
    return g


@pytest.mark.parametrize("seed", range(4))
def test_both_backends_play_pattern_parameters_alike(seed):
    gen = _rules()
    assert gen.backend == "generated" and gen.fallback is None
    a, b = _play(gen, seed), _play(gen.with_backend("closures"), seed)
    assert a.to_json() == b.to_json() and a.scores() == b.scores()
    assert [x.id for x in a.legal_actions()] == [x.id for x in b.legal_actions()]


@pytest.mark.parametrize("pattern, ident", [("(fr, fc, tr, tc)", "move(5,0,4,1)"),
                                             ("((fr, fc), (tr, tc))", "move(5,0,4,1)"),
                                             ("(src, dst)", "move((5,0),(4,1))"), ("(_, dst)", "move((5,0),(4,1))")])
def test_a_nested_pattern_is_written_flat_and_a_name_holding_a_tuple_bracketed(pattern, ident):
    flat = "(fr, fc, tr, tc)" in pattern
    text = (f'game "M" {{ players 2 }}\nconst moves = [{"(5, 0, 4, 1)" if flat else "((5, 0), (4, 1))"}]\n'
            f'action move({pattern} in moves) {{}}\nflow {{ turn 0 {{ offer [move] to 0 }} }}\n')
    for backend in ("generated", "closures"):
        assert [a.id for a in _rules(text, backend).new_game(2, seed=0).legal_actions()] == [ident]


def test_a_plain_tuple_parameter_keeps_its_bracketed_id():
    text = GAME.replace("action move((from_cell, to_cell, _, steps) in moves) {",
                        "action move(m in moves) {").replace('text "move {from_cell} to {to_cell}"', "") \
        .replace("require from_cell != to_cell or steps > 2", "require m[0] != m[1] or m[3] > 2") \
        .replace("add from_cell * 10 + to_cell to trail", "add m[0] * 10 + m[1] to trail")
    g = _rules(text).new_game(2, seed=0)
    assert [a.id for a in g.legal_actions()][:2] == ["move((0,1,2,3))", "move((1,0,3,2))"]
    # the same game, written either way
    a, b = _play(_rules(text), 2), _play(_rules(), 2)
    assert a.scores() == b.scores()


LOOSE = '''game "Loose" {{ players 2 }}
board b = {board}
var total: int
action go({pattern} in nodes(b)) {{ effect {{ total += 1 }} }}
flow {{ turn 0 {{ offer [go] to 0 }} }}
'''


@pytest.mark.parametrize("backend", ["generated", "closures"])
@pytest.mark.parametrize("board, pattern, message", [
    ("line(3)", "(x, y)", "the pattern (x, y) takes a tuple apart, not 0"),
    ("square_grid(2, 2)", "(x, y, z)", "the pattern (x, y, z) takes 3 items, but (0,0) has 2"),
])
def test_a_loosely_typed_domain_of_other_items_is_a_rules_error(backend, board, pattern, message):
    rs = _rules(LOOSE.format(board=board, pattern=pattern), backend, "loose.rules")
    with pytest.raises(GameError) as e:
        rs.new_game(2, seed=1)  # the flow offers `go` at once: its choices are listed
    assert message in str(e.value) and "loose.rules:4:" in str(e.value)
    assert "while listing the choices of action 'go'" in str(e.value)


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_grid_nodes_taken_apart(backend):
    rs = _rules(LOOSE.format(board="square_grid(2, 3)", pattern="(r, c)").replace(
        "action go((r, c) in nodes(b)) {", 'action go((r, c) in nodes(b)) { text "{r}/{c}" require r < c'),
        backend, "loose.rules")
    g = rs.new_game(2, seed=1)
    assert [(a.id, str(a)) for a in g.legal_actions()] == [("go(0,1)", "0/1"), ("go(0,2)", "0/2"),
                                                           ("go(1,2)", "1/2")]


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_a_game_saved_inside_an_action_of_a_pattern_parameter_loads_back(backend):
    rs = _rules(backend=backend)
    g = rs.new_game(2, seed=5)
    rng = random.Random(5)
    inside = 0
    while not g.is_over():
        saved = g.to_json()
        back = type(g).from_json(rs, saved)
        assert back.to_json() == saved
        assert [a.id for a in back.legal_actions()] == [a.id for a in g.legal_actions()]
        inside += g.legal_actions()[0].id.startswith("(")  # the choice inside `place`
        pick = rng.choice(g.legal_actions()).id
        if pick == "pass" and any(a.id.startswith("place") for a in g.legal_actions()):
            pick = next(a.id for a in g.legal_actions() if a.id.startswith("place"))
        g.apply(pick)
        back.apply(pick)
        assert back.to_json() == g.to_json()
    assert inside >= 2


# ------------------------------------------------------------------------------------------ numbering
GRID = '''game "Grid" {{ players 2 }}
enum Colour {{ red, blue }}
const cells = [(0, 0), (0, 1), (1, 0), (1, 1)]
var placed: map[tuple[int, int], Colour] = {{}}
action place({param} in cells, colour in Colour) {{
  require {key} not in placed
  effect {{ placed[{key}] = colour }}
}}
flow {{ repeat 2 times {{ for p in players {{ turn p {{ offer [place] to p }} }} }} }}
score p = count(keys(placed))
'''


def test_a_pattern_parameter_is_numbered_as_the_same_parameter_with_a_name():
    from rulelang.action_space import ActionSpace

    pattern = rulelang.loads(GRID.format(param="(r, c)", key="(r, c)"), name="grid.rules")
    plain = rulelang.loads(GRID.format(param="cell", key="cell"), name="grid.rules")
    a, b = ActionSpace(pattern), ActionSpace(plain)
    assert a.size == b.size == 8 and not a.stepwise("place")
    assert [a.describe(i) for i in range(4)] == ["place(0,0,red)", "place(0,0,blue)", "place(0,1,red)",
                                                 "place(0,1,blue)"]
    assert b.describe(2) == "place((0,1),red)"
    g, h = pattern.new_game(2, seed=0), plain.new_game(2, seed=0)
    assert [i for i, _, _ in a.options(g)] == [i for i, _, _ in b.options(h)] == list(range(8))
    assert [oid for _, oid, _ in a.options(g)][5] == "place(1,0,blue)"


def test_openspiel_plays_a_game_of_pattern_parameters():
    pytest.importorskip("pyspiel")
    from rulelang.openspiel import load_game

    game = load_game(rulelang.loads(GRID.format(param="(r, c)", key="(r, c)"), name="grid.rules"))
    assert game.num_distinct_actions() == 8
    s = game.new_initial_state()
    assert [s.action_to_string(0, x) for x in s.legal_actions()][4:6] == ["place(1,0,red)", "place(1,0,blue)"]
    s.apply_action(5)  # place(1,0,blue)
    assert s.legal_actions() == [0, 1, 2, 3, 6, 7]  # (1,0) is taken
    s.apply_action(0)
    s.apply_action(7)
    s.apply_action(2)
    assert s.is_terminal() and s._g.g.data["placed"] == {(1, 0): "blue", (0, 0): "red", (1, 1): "blue",
                                                          (0, 1): "red"}


# ------------------------------------------------------------------------------------------ tools
def test_fmt_lays_a_pattern_parameter_out_and_keeps_the_tree():
    from rulelang.fmt import format_text
    from tests.ast_compare import same_tree

    text = ('game "F" { players 2 }\nflow {}\nconst moves = [(1, 2)]\n'
            'action move( ( a,b ) in moves ,( x ,( y,_ ) )in [(1, (2, 3))] , k in 0..a) { require a>b+y  effect { log a, x } }\n')
    out = format_text(text, "f.rules")
    assert ("action move((a, b) in moves, (x, (y, _)) in [(1, (2, 3))], k in 0..a) { require a > b + y  "
            "effect { log a, x } }\n") in out
    assert format_text(out, "f.rules") == out
    before, after = parse(text, "f.rules")[0], parse(out, "f.rules")[0]
    assert same_tree(before.items, after.items)


def test_the_printer_writes_a_require_as_written():
    from rulelang.ast_print import to_text

    module, _ = parse("action go((a, b) in xs) { require a + b > 2 and c[a] }\n", "p.rules")
    assert to_text(module.items[0].requires[0].test) == "a + b > 2 and c[a]"
    assert to_text(module.items[0].requires[0].test, short=True) == "..."


def _at(text, line_start, word, nth=0):
    lines = text.split("\n")
    i = next(i for i, ln in enumerate(lines) if ln.strip().startswith(line_start))
    cols = [j for j in range(len(lines[i])) if lines[i].startswith(word, j)
            and not (lines[i][j - 1:j].isalnum() or lines[i][j + len(word):j + len(word) + 1].isalnum())]
    return i + 1, cols[nth] + 1


def test_a_pattern_name_is_a_parameter_to_the_symbol_index(tmp_path):
    path = str(tmp_path / "paths.rules")
    a = analyse(path, GAME)
    assert a.diagnostics == [], [d.render() for d in a.diagnostics]
    ix = a.index
    ref = ix.at(path, *_at(GAME, "action place", "r"))
    assert (ref.symbol.name, ref.symbol.kind, ref.type) == ("r", "param", "int")
    assert sorted((r.span.line, r.span.column) for r in ix.references_to(ref.symbol)) == sorted([
        _at(GAME, "action place", "r"), _at(GAME, "action place", "r", 1), _at(GAME, "cost", "r"),
        _at(GAME, "cost", "r", 1), _at(GAME, "placed[(r", "r"), _at(GAME, "add times", "r"),
        _at(GAME, 'text "place', "r")])  # {r} in the text shows it: a use (a rename changes it too)
    steps = ix.at(path, *_at(GAME, "action move", "steps"))
    assert [(r.span.line, r.span.column) for r in ix.references_to(steps.symbol)] == [
        _at(GAME, "action move", "steps"), _at(GAME, "require from_cell", "steps")]
    hover = ix.at(path, *_at(GAME, "require from_cell", "from_cell"))
    assert hover.symbol.detail == "from_cell (in (from_cell, to_cell, _, steps), parameter of move)"


def test_an_extend_of_the_action_reads_the_names():
    text = GAME + '\nvariant twice { extend move { add from_cell to trail } }\n'
    rs = rulelang.loads(text, name="paths.rules", variants=["twice"])
    for backend in ("generated", "closures"):
        g = (rs if backend == "generated" else rs.with_backend("closures")).new_game(2, seed=0)
        g.apply("move(1,0,3,2)")
        assert g.view(None)["vars"]["trail"] == [10, 1]


def test_an_action_without_a_text_reads_as_its_names_and_values():
    text = ('game "D" { players 2 }\nflow { turn 0 { offer [go] to 0 } }\n'
            'action go((a, (_, b)) in [(1, (2, 3))], c in [4]) {}\n')
    for backend in ("generated", "closures"):
        [act] = _rules(text, backend, "d.rules").new_game(2, seed=0).legal_actions()
        assert (act.id, str(act)) == ("go(1,2,3,4)", "go a=1, b=3, c=4")

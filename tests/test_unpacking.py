"""Tuple patterns (docs/language.md, "Tuple patterns"): `let (a, b) = t`, `for (r, c) in cells`,
`[a + b for (a, b) in pairs]`, nested `(a, (b, c))` and `_`; typed by the checker from the tuple's type
(E331 not a tuple, E332 another number of items; more cases in tests/data/diagnostics/tuple_patterns.rules),
checked at run time for a loosely typed value, the same on both backends, and known to the symbol index."""
from __future__ import annotations

import pytest

import rulelang
from rulelang import GameError, RuleError
from rulelang import ast as A
from rulelang.parser import parse
from rulelang.symbols import analyse

GAME = '''game "Pairs" { players 2 }
board grid = square_grid(3, 3)
var marks: map[node, player] = {}
per player var score_: int
var log_: list[tuple[int, tuple[int, str]]] = []

action mark(cell in [n for n in nodes(grid) if marks[n] == none]) {
  text "mark {cell}"
  effect {
    marks[cell] = me
    let (row, col) = cell
    let (_, (half, name)) = (row, (col / 2, text("c", col)))
    let (c2, r2) = (col, row)
    score_[me] += r2 * 3 + c2 + half
    add (row, (col, name)) to log_
  }
}

function weight(p: player): int = sum([r + c for (r, c) in keys(marks) if marks[(r, c)] == p])
function names_of(): list[str] = [w for (_, (_, w)) in log_]
function by_row(): map[int, int] = {r: c for (r, c) in keys(marks)}
function same_col(): list[int] = [a * 10 + c for (a, b) in keys(marks) for (c, d) in keys(marks) if b == d]
function nested(): list[list[int]] = [[a + c for (c, d) in [(a, b)] if d == b] for (a, b) in keys(marks)]

flow {
  repeat 4 times { for p in players { turn p { offer [mark] to p } } }
  for (r, c) in keys(marks) { score_[marks[(r, c)]] += r * c }
  for i, (r, (c, _)) in log_ { score_[0] += i * r + c }
}
score p = score_[p] + weight(p) + count(names_of()) + count(by_row()) + sum(same_col()) + sum(flatten(nested()))
'''


def test_a_pattern_parses_into_lets_of_its_items():
    module, diags = parse("setup { let (a, (b, _)) = t }\n", "p.rules")
    assert diags == []
    lets = module.items[0].body.stmts
    assert [s.name for s in lets if not A.is_hidden(s.name)] == ["a", "b"]
    a = next(s for s in lets if s.name == "a")
    assert isinstance(a.value, A.Unpack) and (a.value.size, a.value.index, a.value.check) == (2, 0, True)
    assert a.pattern == "(a, (b, _))" and (a.span.line, a.span.column) == (1, 14)


@pytest.mark.parametrize("text", ["setup { for (a, b) in [(1, 2)] { log a } }",
                                  "const x = [a for (a, b) in [(1, 2)]]",
                                  "const x = {a: b for (a, b) in [(1, 2)]}",
                                  "const x = [a + c for a in [1] for (b, c) in [(1, 2)] if b > 0]"])
def test_every_place_names_are_bound_takes_a_pattern(text):
    module, diags = parse(text + "\n", "p.rules")
    assert diags == [] and module is not None


def test_a_wrong_size_is_an_error_at_the_pattern_with_a_hint():
    text = 'game "T" { players 2 }\nflow { }\nconst t = [(1, 2, 3)]\nconst x = [a for (a, b) in t]\n'
    with pytest.raises(RuleError) as e:
        rulelang.loads(text, name="t.rules")
    [d] = e.value.diagnostics
    assert (d.code, d.line, d.column) == ("E332", 4, 18)
    assert d.hint == "write 3 names (or _ for an item you do not need)"
    lines = d.render().splitlines()
    assert lines[0] == ("t.rules:4:18: error[E332]: the pattern (a, b) has 2 names, but the value is a tuple "
                        "of 3 items (tuple[int, int, int])")
    assert lines[2].index("^") == lines[1].index("(a, b)")


def test_the_names_take_the_types_of_the_items():
    text = ('game "T" { players 2 }\nflow { }\nconst t = (1, "one")\n'
            'setup { let (n, w) = t\n let bad = n + w }\n')
    with pytest.raises(RuleError) as e:
        rulelang.loads(text, name="t.rules")
    assert [(d.code, d.line) for d in e.value.diagnostics] == [("E301", 5)]


def _play(rs, seed):
    g = rs.new_game(2, seed=seed)
    while not g.is_over():
        g.apply(g.legal_actions()[seed % len(g.legal_actions())].id)
    return g


@pytest.mark.parametrize("seed", range(4))
def test_both_backends_play_patterns_alike(seed):
    gen = rulelang.loads(GAME, name="pairs.rules")
    assert gen.backend == "generated" and gen.fallback is None
    a, b = _play(gen, seed), _play(gen.with_backend("closures"), seed)
    assert a.to_json() == b.to_json() and a.scores() == b.scores()


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_what_the_patterns_compute(backend):
    rs = rulelang.loads(GAME, name="pairs.rules")
    g = (rs if backend == "generated" else rs.with_backend("closures")).new_game(2, seed=0)
    g.apply("mark((1,2))")
    g.apply("mark((2,0))")
    got = g.view(None)["vars"]
    assert got["log_"] == [[1, [2, "c 2"]], [2, [0, "c 0"]]]
    assert got["score_"] == [1 * 3 + 2 + 1, 2 * 3 + 0 + 0]
    while not g.is_over():
        g.apply(g.legal_actions()[0].id)
    state = g.view(None)["vars"]
    owner = {tuple(int(x) for x in k.strip("()").split(",")): p for k, p in state["marks"].items()}
    log_ = [(r, (c, w)) for r, (c, w) in state["log_"]]
    want = [0, 0]
    for r, (c, _) in log_:  # each mark's effect (the marks alternate between the seats)
        want[owner[(r, c)]] += r * 3 + c + c // 2
    for (r, c), p in owner.items():  # the flow's two loops
        want[p] += r * c
    for i, (r, (c, _)) in enumerate(log_):
        want[0] += i * r + c
    assert state["score_"] == want
    rows = {r for r, _ in owner}
    same_col = sum(a * 10 + c for (a, b) in owner for (c, d) in owner if b == d)
    nested = sum(2 * a for (a, _) in owner)
    assert g.scores() == [want[p] + sum(r + c for (r, c), q in owner.items() if q == p) + len(log_) + len(rows)
                          + same_col + nested for p in range(2)]


LOOSE = '''game "Loose" {{ players 2 }}
board {board}
var total: int
action go {{ effect {{ for {pattern} in nodes(b) {{ total += 1 }} }} }}
flow {{ turn 0 {{ offer [go] to 0 }} }}
'''


@pytest.mark.parametrize("backend", ["generated", "closures"])
@pytest.mark.parametrize("board, pattern, message", [
    ("b = line(3)", "(x, y)", "the pattern (x, y) takes a tuple apart, not 0"),
    ("b = square_grid(2, 2)", "(x, y, z)", "the pattern (x, y, z) takes 3 items, but (0,0) has 2"),
])
def test_a_loosely_typed_value_of_another_size_is_a_rules_error(backend, board, pattern, message):
    rs = rulelang.loads(LOOSE.format(board=board, pattern=pattern), name="loose.rules")
    if backend == "closures":
        rs = rs.with_backend("closures")
    g = rs.new_game(2, seed=1)
    with pytest.raises(GameError) as e:
        g.apply("go")
    assert message in str(e.value) and "loose.rules:4:" in str(e.value)


def test_a_pattern_name_is_found_and_renamed_like_any_local(tmp_path):
    path = tmp_path / "pairs.rules"
    path.write_text(GAME, encoding="utf-8")
    a = analyse(str(path), GAME)
    assert a.diagnostics == [], [d.render() for d in a.diagnostics]
    ix = a.index
    lines = GAME.split("\n")

    def at(line_start, word, nth=0):
        i = next(i for i, ln in enumerate(lines) if ln.strip().startswith(line_start))
        col = [j for j in range(len(lines[i])) if lines[i].startswith(word, j)
               and not (lines[i][j - 1:j].isalnum() or lines[i][j + len(word):j + len(word) + 1].isalnum())][nth]
        return i + 1, col + 1

    def refs(line_start, word, nth=0):
        ref = ix.at(str(path), *at(line_start, word, nth))
        assert ref is not None and ref.symbol.kind == "local"
        return sorted((r.span.line, r.span.column) for r in ix.references_to(ref.symbol))

    # let (row, col) = cell: row's definition and its two uses
    assert refs("let (row, col)", "row") == sorted([at("let (row, col)", "row"), at("let (_, (half", "row"),
                                                    at("let (c2, r2)", "row"), at("add (row", "row")])
    # a nested pattern's name
    assert refs("let (_, (half", "name") == [at("let (_, (half", "name"), at("add (row", "name")]
    # a comprehension's pattern: the definition, the element and the condition share one symbol
    want = sorted([at("function weight", "r", 0), at("function weight", "r", 1), at("function weight", "r", 2)])
    assert refs("function weight", "r", 1) == want
    # a for loop's pattern
    assert refs("for (r, c) in keys", "c", 0) == [at("for (r, c) in keys", "c", 0), at("for (r, c) in keys", "c", 1),
                                                   at("for (r, c) in keys", "c", 2)]


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_a_game_saved_inside_a_flow_loop_of_patterns_loads_back(backend):
    text = GAME.replace("  for (r, c) in keys(marks) { score_[marks[(r, c)]] += r * c }",
                        "  for (r, c) in keys(marks) {\n    score_[marks[(r, c)]] += r * c\n    let (x, y) = (r, c)\n"
                        "    if count(keys(marks)) < 9 { turn 0 { offer [mark] to 0 } }\n  }")
    assert text != GAME
    rs = rulelang.loads(text, name="s.rules")
    rs = rs if backend == "generated" else rs.with_backend("closures")
    g = rs.new_game(2, seed=3)
    decisions = 0
    while not g.is_over():
        saved = g.to_json()
        assert type(g).from_json(rs, saved).to_json() == saved
        g.apply(g.legal_actions()[0].id)
        decisions += 1
    assert decisions > 8  # the loop of the flow offered moves too


def test_a_choice_taken_apart():
    text = ('game "C" { players 2 }\nvar got: int\n'
            'action pick { effect { let (r, (c, _)) = choose one of [(1, (2, 0)), (3, (4, 0))]\n'
            '  got = r * 10 + c } }\nflow { turn 0 { offer [pick] to 0 } }\n')
    for rs in (rulelang.loads(text, name="c.rules"), rulelang.loads(text, name="c.rules").with_backend("closures")):
        g = rs.new_game(2, seed=0)
        g.apply("pick")
        assert [a.id for a in g.legal_actions()] == ["(1,(2,0))", "(3,(4,0))"]
        g.apply("(3,(4,0))")
        assert g.view(None)["vars"]["got"] == 34


def test_highlighting_shows_a_patterns_names_as_names():
    from pygments.token import Name, Punctuation
    from rulelang.highlight import RulesLexer

    tokens = [(t, v) for t, v in RulesLexer().get_tokens("let (a, (_, b)) = t\n") if v.strip()]
    assert [v for t, v in tokens if t in Name] == ["a", "_", "b", "t"]
    assert [v for t, v in tokens if t in Punctuation] == ["(", ",", "(", ",", ")", ")"]


def test_renaming_a_pattern_name_at_its_references_keeps_the_game(tmp_path):
    """What the language server's rename does: the new name written at every reference of the symbol."""
    path = tmp_path / "pairs.rules"
    path.write_text(GAME, encoding="utf-8")
    ix = analyse(str(path), GAME).index
    lines = GAME.split("\n")
    i = next(i for i, ln in enumerate(lines) if ln.strip().startswith("let (_, (half"))
    ref = ix.at(str(path), i + 1, lines[i].index("name") + 1)
    spans = sorted(((r.span.line, r.span.column, r.span.end_column) for r in ix.references_to(ref.symbol)),
                   reverse=True)
    assert len(spans) == 2
    for line, col, end in spans:
        lines[line - 1] = lines[line - 1][:col - 1] + "label" + lines[line - 1][end - 1:]
    renamed = "\n".join(lines)
    assert renamed.count("label") == 2 and "(half, label)" in renamed
    a, b = (_play(rulelang.loads(t, name="pairs.rules"), 1) for t in (GAME, renamed))
    assert a.to_json() == b.to_json()


@pytest.mark.parametrize("text", ["[a + b for (a, b) in pairs if a > b]",
                                  "{a: c for i, (a, (_, c)) in pairs}",
                                  "[(a, d) for (a, _) in xs for (c, d) in ys if c == a]"])
def test_a_comprehension_with_patterns_prints_as_written(text):
    from rulelang.ast_print import to_text
    from tests.ast_compare import same_tree as same

    module, _ = parse(f"const z = {text}\n", "p.rules")
    printed = to_text(module.items[0].value)
    if "for (c, d)" not in text:  # (several `for`s are printed as the flatten() they are built as)
        assert printed == text
    again, _ = parse(f"const z = {printed}\n", "p.rules")
    assert same(again.items[0].value, module.items[0].value), printed


def test_fmt_lays_a_pattern_out_as_a_tuple():
    from rulelang.fmt import format_text

    text = ('game "F" { players 2 }\nflow {}\nsetup {\n  let ( a,(b ,_ ) )=(1, (2, 3))\n'
            '  for i ,( x,y ) in [(a, b)] { log i, x, y }\n}\nconst s = [p+q for(p,q)in [(1, 2)]]\n')
    out = format_text(text, "f.rules")
    assert "  let (a, (b, _)) = (1, (2, 3))\n" in out
    assert "  for i, (x, y) in [(a, b)] { log i, x, y }\n" in out
    assert "const s = [p + q for (p, q) in [(1, 2)]]\n" in out
    assert format_text(out, "f.rules") == out


def test_a_pattern_of_one_item_and_a_bracketed_name():
    ok = 'game "O" { players 2 }\nflow {}\nvar n: int\nsetup { let (a,) = (4,)\n n = a }\n'
    g = rulelang.loads(ok, name="o.rules").new_game(2, seed=0)
    assert g.view(None)["vars"]["n"] == 4
    with pytest.raises(RuleError) as e:  # `(a)` is no pattern: a pattern has a comma
        rulelang.loads(ok.replace("let (a,) = (4,)", "let (a) = 4"), name="o.rules")
    assert [(d.code, d.line, d.column) for d in e.value.diagnostics][0] == ("E004", 4, 15)  # at the `)`


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_none_is_no_tuple_when_the_rules_run(backend):
    text = ('game "N" { players 2 }\nvar spot: tuple[int, int] = none\nvar n: int\n'
            'action go { effect { let (r, c) = spot\n n = r + c } }\nflow { turn 0 { offer [go] to 0 } }\n')
    rs = rulelang.loads(text, name="n.rules")
    g = (rs if backend == "generated" else rs.with_backend("closures")).new_game(2, seed=0)
    with pytest.raises(GameError) as e:
        g.apply("go")
    assert "n.rules:4:" in str(e.value) and "the pattern (r, c) takes a tuple apart, not none" in str(e.value)


def test_hover_gives_each_pattern_name_its_items_type(tmp_path):
    text = 'game "H" { players 2 }\nflow {}\nvar n: int\nsetup {\n  let (k, w) = (1, "one")\n  n = k + count([w])\n}\n'
    path = str(tmp_path / "h.rules")
    ix = analyse(path, text).index
    assert [(ix.at(path, 5, col).symbol.name, ix.at(path, 5, col).type) for col in (8, 11)] == [("k", "int"),
                                                                                               ("w", "str")]

"""Load-time limits and constants that fail when folded: each is a positioned diagnostic from
`rulelang.load` / `rulelang check`, never a run-time error in new_game, a traceback or a memory blow-up.
Cases that would eat memory before the fix run in a bounded child process."""
from __future__ import annotations

import pytest

import rulelang
from tests.hostile.bounded import run_bounded

HEAD = 'game "T" {{ players {players} }}\n'
TAIL = ('action go() { effect { end_game "done" } }\n'
        'flow { loop { turn current { offer [go] to current } } }\n')


def rules(extra, players="2"):
    """A small playable game; `extra` starts on line 2."""
    return HEAD.format(players=players) + extra + "\n" + TAIL


def load_error(text):
    with pytest.raises(rulelang.RuleError) as info:
        rulelang.loads(text, name="t.rules")
    errors = [d for d in info.value.diagnostics if d.severity == "error"]
    assert errors, info.value.diagnostics
    return errors[0]


# Run a case in a child process limited to 1 GB and 20 s; print the first error's code and position.
BOUNDED = """
import rulelang
try:
    rs = rulelang.loads(ARGS["text"], name="t.rules")
    g = rs.new_game(rs.player_counts[0])
    print("LOADED")
except rulelang.RuleError as e:
    d = [d for d in e.diagnostics if d.severity == "error"][0]
    print("DIAG", d.code, d.line, d.column, d.message)
"""


def bounded_error(text):
    out = run_bounded(BOUNDED, {"text": text}, seconds=20, memory=1024 ** 3)
    assert out.ok, out.explain()
    assert out.stdout.startswith("DIAG"), out.stdout
    _, code, line, column, message = out.stdout.split(" ", 4)
    return code, int(line), int(column), message.strip()


# --------------------------------------------------------------- constants that fail when folded
@pytest.mark.parametrize("extra, column, words", [
    ("const a = 1 / 0\nvar v: int = a", 11, "division by zero"),
    ("const a = 4611686018427387903 * 4611686018427387903\nvar v: int = a", 11, "too large"),
    ("const a = 0..5000000\nvar v: int = count(a)", 11, "more than 1,000,000"),
    ("action a(n in 0..2000000) { effect { } }", 15, "more than 1,000,000"),
    ("action a(n in 0..1000000000000) { effect { } }", 15, "more than 1,000,000"),
])
def test_a_constant_that_fails_when_folded_is_a_load_diagnostic(extra, column, words):
    d = load_error(rules(extra))
    assert d.code == "E502"
    assert (d.line, d.column) == (2, column)
    assert words in d.message


def test_a_failing_constant_inside_an_effect_is_reported_where_it_is():
    d = load_error(rules("var v: int = 0\naction a() { effect { v = 7 % 0 } }"))
    assert (d.code, d.line, d.column) == ("E502", 3, 27)


def test_check_prints_the_folding_error(tmp_path):
    p = tmp_path / "t.rules"
    p.write_text(rules("const a = 1 / 0\nvar v: int = a"))
    diags = rulelang.check(p)
    assert [(d.code, d.line, d.column) for d in diags if d.severity == "error"] == [("E502", 2, 11)]


# --------------------------------------------------------------- load-time limits
def test_a_huge_typed_parameter_range_is_a_load_diagnostic():
    code, line, column, message = bounded_error(rules("action a(n: 0..1000000000000) { effect { } }"))
    assert (code, line) == ("E503", 2)
    assert "100,000" in message


def test_a_product_of_parameter_domains_is_bounded_at_load():
    code, line, _, message = bounded_error(rules("action a(x in 0..999, y in 0..999, z in 0..999) { effect { } }"))
    assert (code, line) == ("E503", 2)
    assert "1,000,000,000" in message


def test_huge_player_counts_are_a_load_diagnostic():
    code, line, _, message = bounded_error(rules("", players="2..30000000"))
    assert (code, line) == ("E327", 1)  # refused by the parser, before anything is built
    assert "100" in message


@pytest.mark.parametrize("players", ["0", "2, 500", "101"])
def test_player_counts_outside_the_limit(players):
    d = load_error(rules("", players=players))
    assert (d.code, d.line) == ("E327", 1)


def test_many_big_constants_exceed_the_budget_for_fixed_data():
    extra = "\n".join(f"const c{i} = 0..999999" for i in range(30))
    code, line, column, message = bounded_error(rules(extra))
    assert code == "E503"
    assert line < 32 and column == 12
    assert "4,000,000" in message


def test_boards_are_bounded_by_their_node_count_before_building():
    code, line, column, message = bounded_error(rules("board b = hex_grid(200)"))
    assert (code, line, column) == ("E503", 2, 11)
    assert "120,601" in message


def test_many_boards_share_one_node_budget():
    extra = "\n".join(f"board b{i} = square_grid(150, 150)" for i in range(20))
    code, line, _, message = bounded_error(rules(extra))
    assert code == "E503" and line == 4
    assert "50,000" in message


def test_a_long_action_id_is_reported_where_the_action_is_declared():
    long = "x" * 400
    d = load_error(rules(f'action a(s in ["{long}"]) {{ effect {{ }} }}'))
    assert (d.code, d.line) == ("E503", 2)
    assert "300" in d.message


def test_a_long_action_id_from_a_changing_domain_is_a_positioned_game_error():
    long = "x" * 400
    rs = rulelang.loads(rules(f'var names: list[str] = ["{long}"]\n'
                              'action a(s in names) { effect { } }\n'
                              'flow { loop { turn current { offer [a] to current } } }').replace(
        TAIL.splitlines()[1] + "\n", ""), name="t.rules")
    with pytest.raises(rulelang.GameError) as info:
        g = rs.new_game(2)
        g.legal_actions()
    assert "t.rules:3" in str(info.value) and "300 characters" in str(info.value)


def test_games_and_examples_still_load():
    for path in ("games/station.rules", "games/examples/tictactoe.rules", "games/examples/connect4.rules"):
        rulelang.load(path)


def test_the_largest_allowed_values_still_load():
    rs = rulelang.loads(rules("board b = square_grid(200, 200)\nconst big = 0..999999\n"
                              "action a(n in 0..99999) { effect { } }", players="1..100"))
    assert len(rs.boards["b"].nodes) == 40000


# --------------------------------------------------------------- checking time grows linearly
CHECK_BIG = """
import time
import rulelang
head = 'game "T" { players 2 }\\n'
body = "".join(f"const c{i} = {i} + 1\\n" for i in range(20000))
body += "".join(f"const u{i} = missing{i} + 1\\n" for i in range(8000))
tail = 'action go() { effect { end_game "done" } }\\nflow { loop { turn current { offer [go] to current } } }\\n'
start = time.process_time()
diags = rulelang.check("big.rules", text=head + body + tail)
print(len([d for d in diags if d.code == "E201"]), round(time.process_time() - start, 1))
"""


def test_checking_many_constants_and_unknown_names_takes_linear_time():
    # 28,000 declarations and 8,000 unknown names (about 700 KB): quadratic checking took minutes
    out = run_bounded(CHECK_BIG, seconds=60)
    assert out.ok, out.explain()
    unknown, seconds = out.stdout.split()
    assert int(unknown) == 8000
    assert float(seconds) < 30


def test_did_you_mean_hints_still_come_for_the_first_unknown_names():
    d = load_error(rules("const count_of_things = 3\nvar v: int = count_of_thing"))
    assert (d.code, d.hint) == ("E201", "did you mean 'count_of_things'?")

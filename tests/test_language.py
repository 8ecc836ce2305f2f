"""Language constructs, each on its own: variants, house rules, tables and placeholders, boards and
graph searches, majority ranking, visibility and reveals."""

import pytest

import rulelang
from rulelang import RuleError

BASE = '''
game "Base" { players 2 }
const bonus = 1
per player var vp: int = 0
action score { effect { vp[me] += bonus } }
flow { loop { for p in players { turn p { offer [score] to p } } } }
ending "ten" when any(players, p => vp[p] >= 10)
score p = vp[p]
variant double "points count twice" { override const bonus = 2 }
variant tax {
  per player var paid: int = 0
  extend score { paid[me] += 1 }
}
'''


def test_variant_overrides_a_constant():
    plain = rulelang.loads(BASE)
    double = rulelang.loads(BASE, variants=["double"])
    assert plain.variants == ("double", "tax")
    assert double.active_variants == ("double",)
    g = double.new_game(2)
    g.apply("score")
    assert g.view(None)["vars"]["vp"] == [2, 0]
    g = plain.new_game(2)
    g.apply("score")
    assert g.view(None)["vars"]["vp"] == [1, 0]


def test_variant_extends_an_action_and_adds_state():
    g = rulelang.loads(BASE, variants=["tax"]).new_game(2)
    g.apply("score")
    assert g.view(None)["vars"]["paid"] == [1, 0]


def test_unknown_variant_and_bad_override_are_errors():
    with pytest.raises(RuleError) as e:
        rulelang.loads(BASE, variants=["nope"])
    assert e.value.diagnostics[0].code == "E106"
    with pytest.raises(RuleError) as e:
        rulelang.loads(BASE + "override const missing = 3\n")
    assert "E102" in {d.code for d in e.value.diagnostics}
    with pytest.raises(RuleError) as e:
        rulelang.loads(BASE + "const bonus = 3\n")
    assert "E101" in {d.code for d in e.value.diagnostics}


def test_house_rule_file_extends_a_game_without_editing_it(tmp_path):
    (tmp_path / "base.rules").write_text(BASE)
    (tmp_path / "house.rules").write_text('extends "base.rules"\noverride const bonus = 5\n')
    rs = rulelang.load(str(tmp_path / "house.rules"))
    g = rs.new_game(2)
    g.apply("score")
    assert g.view(None)["vars"]["vp"] == [5, 0]
    (tmp_path / "loop.rules").write_text('extends "loop.rules"\n')
    with pytest.raises(RuleError) as e:
        rulelang.load(str(tmp_path / "loop.rules"))
    assert e.value.diagnostics[0].code == "E014"


TABLES = '''
game "T" { players 2 }
enum Kind { tool, gem }
record Item { kind: Kind, cost: int, bonus: int = 0 }
table items: Item {
  hammer (tool, 3)
  ruby (kind: gem, cost: ?7, bonus: 2)
}
table secret: Item placeholder "the card list is not public" {
  x1 (tool, 1)
}
var total: int = 0
setup { total = sum([i.cost for i in items]) + ruby.bonus + x1.cost }
action a { effect { end_game "done" } }
flow { turn 0 { offer [a] to 0 } }
'''


def test_tables_give_rows_with_fields_and_defaults():
    rs = rulelang.loads(TABLES)
    g = rs.new_game(2)
    assert g.view(None)["vars"]["total"] == 3 + 7 + 2 + 1


def test_placeholders_are_listed():
    rs = rulelang.loads(TABLES, name="t.rules")
    whats = [(p.line, p.what) for p in rs.placeholders]
    assert any(line == 7 for line, _ in whats)  # ?7
    assert any("secret.x1" in w and "not public" in w for _, w in whats)


def test_table_rows_are_checked():
    bad = TABLES.replace("hammer (tool, 3)", "hammer (tool, 3, 1, 9)").replace("ruby (kind: gem", "ruby (knd: gem")
    with pytest.raises(RuleError) as e:
        rulelang.loads(bad)
    found = {d.code for d in e.value.diagnostics}
    assert {"E305", "E203"} <= found


GRAPH = '''
game "G" { players 2 }
board hex = hex_grid(2)
board map {
  a -- b -- c -- d
  a -- e -- d
  node b(kind: rock)
}
var blocked: set[node] = {}
var out: map[str, any] = {}
setup {
  blocked = to_set([(1, 0), (0, 1)])
  out["near"] = reachable(hex, (0, 0), 1, through: n => n not in blocked)
  out["far"] = distance(hex, (0, 0), (2, 0), through: n => n not in blocked)
  out["direct"] = distance(hex, (0, 0), (2, 0))
  out["path"] = distance(map, a, d, through: n => attr(map, n, "kind") != rock)
  out["group"] = group(map, a, where: n => n != d)
  out["line"] = line_length(hex, (0, 0), where: n => n[1] == 0)
}
enum Terrain { rock }
action stop { effect { end_game "done" } }
flow { turn 0 { offer [stop] to 0 } }
'''


def test_graph_searches_avoid_blocked_nodes():
    g = rulelang.loads(GRAPH).new_game(2)
    out = g.view(None)["vars"]["out"]
    assert len(out["near"]) == 4  # six neighbours minus two blocked
    assert out["direct"] == 2
    assert out["far"] == 3        # around the blocked hex
    assert out["path"] == 2       # a-e-d, since b is rock
    assert out["group"] == ["a", "b", "c", "e"]
    assert out["line"] == 5       # the whole q-axis row through the centre


RANK = '''
game "R" { players 4 }
var got: map[player, int] = {}
var counts: map[player, int] = {}
action a { effect { end_game "done" } }
flow { turn 0 { offer [a] to 0 } }
'''


@pytest.mark.parametrize("values, expected", [
    # S-13: the sole leader gets 10, the sole second 5
    ({0: 4, 1: 2, 2: 1, 3: 0}, {0: 10, 1: 5, 2: 0, 3: 0}),
    # S-13: a tie for first shares 10 + 5 = 15, rounded down; nobody is second
    ({0: 3, 1: 3, 2: 1, 3: 0}, {0: 7, 1: 7, 2: 0, 3: 0}),
    ({0: 3, 1: 3, 2: 3, 3: 1}, {0: 5, 1: 5, 2: 5, 3: 0}),
    # S-13: a tie for second shares the 5, rounded down
    ({0: 5, 1: 2, 2: 2, 3: 2}, {0: 10, 1: 1, 2: 1, 3: 1}),
    ({0: 5, 1: 2, 2: 2, 3: 0}, {0: 10, 1: 2, 2: 2, 3: 0}),
    # S-13: a player without any of the kind gets nothing, even when nobody has more
    ({0: 0, 1: 0, 2: 0, 3: 0}, {0: 0, 1: 0, 2: 0, 3: 0}),
    ({0: 2, 1: 0, 2: 0, 3: 0}, {0: 10, 1: 0, 2: 0, 3: 0}),
])
def test_award_by_rank_splits_ties_as_station_s13(values, expected):
    entries = ", ".join(f"{p}: {v}" for p, v in values.items())
    text = RANK.replace("action a", f"setup {{ got = award_by_rank({{{entries}}}, [10, 5], ties: \"split\") }}\naction a")
    g = rulelang.loads(text).new_game(4)
    assert g.view(None)["vars"]["got"] == {str(k): v for k, v in expected.items()}


def test_reveal_shows_one_map_entry_to_one_player_and_hides_the_other_keys():
    text = '''
game "H" { players 2 }
var faces: map[node, int] = {} visible to known
action look { effect { reveal faces[(1, 1)] to me } }
setup { faces[(0, 0)] = 6  faces[(1, 1)] = 3 }
flow { loop { turn 0 { offer [look] to 0 } turn 1 { offer [look] to 1 } } }
ending "never" when false
'''
    g = rulelang.loads(text).new_game(2)
    assert g.view(0)["vars"]["faces"] == {"hidden": 2}
    g.apply("look")
    assert g.view(0)["vars"]["faces"] == {"known": {"(1,1)": 3}, "hidden": 1}
    assert g.view(1)["vars"]["faces"] == {"hidden": 2}
    assert g.view(None)["vars"]["faces"] == {"(0,0)": 6, "(1,1)": 3}


def test_an_enum_name_is_the_list_of_its_members():
    g = rulelang.loads('''
game "E" { players 2 }
enum Colour { red, green, blue }
var seen: list[Colour] = []
setup { for c in Colour { if c != green { add c to seen } } }
action stop { effect { end_game "done" } }
flow { turn 0 { offer [stop] to 0 } }
''').new_game(2)
    assert g.view(None)["vars"]["seen"] == ["red", "blue"]


def test_generated_boards_take_node_attributes():
    g = rulelang.loads('''
game "B" { players 2 }
board space = hex_grid(2) {
  node (0, 1)(marked: true, start: 2)
  node (1, -1)(marked: true)
}
var marked: list[node] = []
var start: int = 0
setup {
  marked = [n for n in nodes(space) if attr(space, n, "marked", false)]
  start = attr(space, (0, 1), "start")
}
action stop { effect { end_game "done" } }
flow { turn 0 { offer [stop] to 0 } }
''').new_game(2)
    assert g.view(None)["vars"]["marked"] == [[0, 1], [1, -1]]
    assert g.view(None)["vars"]["start"] == 2
    with pytest.raises(RuleError) as e:
        rulelang.loads('game "B" { players 2 }\nboard space = hex_grid(2) { node (9, 9)(marked: true) }\n'
                       'action stop { effect { end_game } }\nflow { turn 0 { offer [stop] to 0 } }')
    assert "(9, 9) is not a node of board 'space'" in e.value.diagnostics[0].message


# ---------------------------------------------------------------- seats at run time
SEAT_HEAD = ('game "T" { players 2 }\nper player var vp: int = 0\naction a { effect { vp[me] += 1 } }\n'
             'ending "e" when vp[0] > 3\n')


@pytest.mark.parametrize("body, where", [
    ("var w: player = 0 - 1\nflow { loop { turn 0 { offer [a] to 0 } } }", "<string>:5:"),
    ("flow { loop { turn 0 { offer [a] to player_count } } }", "<string>:5:"),
    ("flow { loop { turn 0 { offer [a] to 0 - 1 } } }", "<string>:5:"),
    ("flow {\n let c = choose one of [1, 2] by player_count\n loop { turn 0 { offer [a] to 0 } } }", "<string>:6:"),
])
def test_a_player_outside_the_seats_is_a_rule_error_with_its_position(body, where):
    # a seat number outside 0..n-1 reaching offer, choose ... by or a start value stops the game with a
    # rule error at the rule's position, instead of an ordinary decision for a seat that does not exist
    # (or current_player == -1, which means chance)
    rules = rulelang.loads(SEAT_HEAD + body)
    with pytest.raises(rulelang.GameError) as e:
        rules.new_game(2)
    assert str(e.value).startswith(where), str(e.value)
    assert "not a player" in str(e.value)


def test_the_sum_of_values_of_unknown_kind_is_not_taken_for_a_number():
    # f has no declared result: f(p) + f(p) may be a list (it is here), so to_set() of it is allowed,
    # and the game computes it as a list (a checker that called the sum an int gave a wrong E310)
    rs = rulelang.loads('game "R" { players 2 }\n'
                        'per player var xs: list[int] = [1, 2]\n'
                        'function f(p: player) = xs[p]\n'
                        'function g(p: player) = to_set(f(p) + f(p))\n'
                        'var n: int = 0\n'
                        'flow { n = count(g(0))  end_game }\n')
    g = rs.new_game(2, seed=1)
    assert g.is_over() and g.to_dict()["data"]["n"] == 2

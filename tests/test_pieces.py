"""Pieces with changing fields (docs/language.md, "piece"): objects created with `new`, changed through
their fields, listed by their kind's name in creation order, removed with `destroy`; game state that
saves, loads, clones and shows in views like variables. Each test is one behaviour of the reference
on a small rule file of its own."""
import json

import pytest

import rulelang
from interpreter import pieces as P

HEAD = 'game "Fleet" { players 2 }\n'
FLOW = '''
action pass { }
flow { loop { for p in players { turn p { offer [pass] to p } } } }
ending "never" when false
'''


def game(body, n=2, seed=1, flow=FLOW):
    return rulelang.loads(HEAD + body + flow).new_game(n, seed=seed)


def errors(text):
    with pytest.raises(rulelang.RuleError) as e:
        rulelang.loads(HEAD + text + FLOW)
    return [(d.code, d.message) for d in e.value.diagnostics if d.severity == "error"]


def codes(text):
    return [c for c, _ in errors(text)]


SHIP = 'piece Ship { owner: player, cargo: 0..3 = 0, name: str = "ship", holds: list[int] = [] }\n'


# ----------------------------------------------------------------------------- creating and fields
def test_new_fills_defaults_and_numbers_pieces_from_one_in_creation_order():
    g = game(SHIP + '''
var made: list[Ship]
setup { let a = new Ship(owner: 1)  let b = new Ship(owner: 0, name: "b", cargo: 2)  made = [a, b] }''')
    assert g.view(None)["pieces"]["Ship"] == [
        {"id": 1, "owner": 1, "cargo": 0, "name": "ship", "holds": []},
        {"id": 2, "owner": 0, "cargo": 2, "name": "b", "holds": []}]
    assert g.view(None)["vars"]["made"] == ["Ship#1", "Ship#2"]


def test_fields_are_places_read_and_written_like_variables():
    g = game('piece Hold { slots: list[int] = [0, 0], pile: list[int] = [7, 8, 9], n: int = 0 }\n' + '''
var got: int
var seen: list[int]
setup {
  let h = new Hold()
  h.n = 5  h.n += 2  h.n -= 1
  h.slots[1] = 4
  add 3 to h.slots
  remove 0 from h.slots
  let c = draw one from h.pile
  got = c
  let other = new Hold()
  move 8 from h.pile to other.slots
  seen = [h.n, count(h.slots), h.slots[0], other.slots[2], h.id, other.id]
}''')
    assert g.view(None)["vars"]["got"] == 7
    assert g.view(None)["vars"]["seen"] == [6, 2, 4, 8, 1, 2]
    assert g.view(None)["pieces"]["Hold"][0]["pile"] == [9]


def test_range_types_on_fields_are_enforced():
    with pytest.raises(rulelang.GameError, match=r"Ship.cargo would hold 4, outside its range 0..3"):
        game(SHIP + 'setup { let s = new Ship(owner: 0)  s.cargo += 4 }')
    with pytest.raises(rulelang.GameError, match="outside its range 0..3"):
        game(SHIP + 'setup { let s = new Ship(owner: 0, cargo: 9) }')


def test_the_kind_name_lists_live_pieces_in_creation_order_and_ids_are_never_reused():
    g = game(SHIP + '''
var ids: list[int]
setup {
  for i in 1..4 { let s = new Ship(owner: 0) }
  destroy first([s for s in Ship if s.id == 2])
  let late = new Ship(owner: 1)
  ids = [s.id for s in Ship]
}''')
    assert g.view(None)["vars"]["ids"] == [1, 3, 4, 5]


def test_the_kind_name_lists_the_pieces_live_at_each_moment_in_each_game():
    # the same live ids give the same list (it may be shared); a change in one game shows in that game only
    rs = rulelang.loads(HEAD + SHIP + '''
var seen: list[list[int]]
action look { effect { seen = seen + [[s.id for s in Ship]] } }
action scrap { effect { destroy first(Ship) } }
action build { effect { let s = new Ship(owner: me) } }
setup { for i in 1..3 { let s = new Ship(owner: 0) } }
flow { loop { for p in players { turn p { offer [look, scrap, build] to p } } } }
''')
    a, b = rs.new_game(2, seed=1), rs.new_game(2, seed=1)
    for act in ("look", "scrap", "look", "build", "look", "scrap", "look"):
        a.apply(act)
    for act in ("look", "look", "build", "look"):
        b.apply(act)
    assert a.view(None)["vars"]["seen"] == [[1, 2, 3], [2, 3], [2, 3, 4], [3, 4]]
    assert b.view(None)["vars"]["seen"] == [[1, 2, 3], [1, 2, 3], [1, 2, 3, 4]]


def test_find_a_piece_by_field():
    g = game(SHIP + '''
var found: Ship
var none_found: Ship
setup {
  let a = new Ship(owner: 0, name: "a")  let b = new Ship(owner: 1, name: "b")
  found = first([s for s in Ship if s.name == "b"])
  none_found = first([s for s in Ship if s.name == "z"])
}''')
    assert g.view(None)["vars"]["found"] == "Ship#2"
    assert g.view(None)["vars"]["none_found"] is None


def test_a_destroyed_piece_is_gone_and_using_it_is_a_rule_error_naming_it():
    g = game(SHIP + '''
var n: int
setup { let a = new Ship(owner: 0)  let b = new Ship(owner: 0)  destroy b  n = count(Ship) }''')
    assert g.view(None)["vars"]["n"] == 1
    assert [s["id"] for s in g.view(None)["pieces"]["Ship"]] == [1]
    with pytest.raises(rulelang.GameError, match="Ship#2 was destroyed"):
        game(SHIP + 'var n: int\nsetup { let a = new Ship(owner: 0)  let b = new Ship(owner: 0)  destroy b  n = b.cargo }')
    with pytest.raises(rulelang.GameError, match="Ship#1 was destroyed"):
        game(SHIP + 'setup { let a = new Ship(owner: 0)  destroy a  a.cargo = 1 }')
    with pytest.raises(rulelang.GameError, match="Ship#1 was destroyed"):
        game(SHIP + 'setup { let a = new Ship(owner: 0)  destroy a  destroy a }')


def test_pieces_are_map_keys_set_items_and_list_items():
    g = game(SHIP + '''
var load: map[Ship, int] = {}
var marked: set[Ship] = {}
var order: list[Ship]
setup {
  let a = new Ship(owner: 0)  let b = new Ship(owner: 1)
  load[b] = 4  load[a] = 2  add a to marked  add a to marked  order = [b, a]
}''')
    v = g.view(None)["vars"]
    assert v["load"] == {"Ship#1": 2, "Ship#2": 4}
    assert v["marked"] == ["Ship#1"]
    assert v["order"] == ["Ship#2", "Ship#1"]


SCRAP = SHIP + '''
setup { for p in players { let a = new Ship(owner: p)  let b = new Ship(owner: p) } }
action scrap(s in [x for x in Ship if x.owner == me]) { effect { destroy s } }
action board(s: Ship) { require s.owner != me  effect { s.owner = me } }
action pass { }
flow { loop { for p in players { turn p { offer [scrap, board, pass] to p } } } }
ending "none left" when count(Ship) == 0
'''


def test_pieces_as_action_parameters_have_stable_ids():
    rs = rulelang.loads(HEAD + SCRAP)
    g = rs.new_game(2, seed=1)
    ids = [a.id for a in g.legal_actions()]
    assert ids == ["scrap(Ship#1)", "scrap(Ship#2)", "board(Ship#3)", "board(Ship#4)", "pass"]
    g.apply("scrap(Ship#1)")
    assert [a.id for a in g.legal_actions()] == ["scrap(Ship#3)", "scrap(Ship#4)", "board(Ship#2)", "pass"]
    g.apply("board(Ship#2)")  # P1 takes P0's ship: the same piece, the same id
    g.apply("pass")
    assert [a.id for a in g.legal_actions()][:3] == ["scrap(Ship#2)", "scrap(Ship#3)", "scrap(Ship#4)"]
    g.apply("scrap(Ship#2)")
    assert [s["id"] for s in g.view(None)["pieces"]["Ship"]] == [3, 4]


def test_clone_is_independent():
    rs = rulelang.loads(HEAD + SCRAP)
    g = rs.new_game(2, seed=1)
    before = g.to_json()
    c = g.clone()
    c.apply("scrap(Ship#1)")
    c.apply("board(Ship#2)")
    assert g.to_json() == before
    assert len(g.view(None)["pieces"]["Ship"]) == 4


CHOOSE = SHIP + '''
var picked: list[Ship]
setup { for p in players { repeat 3 times { let r = roll one of 0..3  let s = new Ship(owner: p, cargo: r) } } }
action pick { effect { let s = choose one of [x for x in Ship if x.owner == me]  add s to picked  s.cargo = 3 } }
flow { loop { for p in players { turn p { offer [pick] to p } } } }
ending "never" when false
'''


def test_json_round_trip_mid_game_with_a_pending_choice_over_pieces():
    rs = rulelang.loads(HEAD + CHOOSE)
    g = rs.new_game(2, seed=7)
    g.apply("pick")
    assert [a.id for a in g.legal_actions()] == ["Ship#1", "Ship#2", "Ship#3"]
    text = g.to_json()
    h = rs.load_game(text)
    assert h.to_json() == text
    g.apply("Ship#2")
    h.apply("Ship#2")
    assert h.to_json() == g.to_json()
    assert g.view(None)["vars"]["picked"] == ["Ship#2"]
    assert g.view(None)["pieces"]["Ship"][1]["cargo"] == 3


def test_same_seed_same_pieces_byte_for_byte():
    rs = rulelang.loads(HEAD + CHOOSE)
    a, b = rs.new_game(2, seed=3), rs.new_game(2, seed=3)
    assert a.to_json() == b.to_json()
    for g in (a, b):
        g.apply("pick")
        g.apply("Ship#3")
    assert a.to_json() == b.to_json()


# ----------------------------------------------------------------------------- knowledge
SECRET = '''
piece Crate { owner: player, cargo: int = 0 visible to owner, value: int = 0 visible to known, tag: int = 0 }
setup { for p in players { let v = roll one of 1..9  let c = new Crate(owner: p, cargo: 10 + p, value: v) } }
action peek(c in [x for x in Crate if x.owner != me]) { effect { reveal c.value to me } }
action show(c in [x for x in Crate if x.owner == me]) { effect { reveal c.cargo to all } }
action refill(c in [x for x in Crate if x.owner == me]) { effect { c.value = 5  c.cargo = 20 } }
action sink(c in [x for x in Crate if x.owner == me]) { effect { destroy c } }
action pass { }
flow { loop { for p in players { turn p { offer [peek, show, refill, sink, pass] to p } } } }
ending "never" when false
'''


def crates():
    return rulelang.loads(HEAD + SECRET).new_game(2, seed=1)


def test_owner_visible_field_is_seen_by_the_pieces_owner_only():
    g = crates()
    v0, v1 = g.view(0)["pieces"]["Crate"], g.view(1)["pieces"]["Crate"]
    assert [c["cargo"] for c in v0] == [10, "?"]
    assert [c["cargo"] for c in v1] == ["?", 11]
    # existence, ids and public fields are public; a known field is hidden until revealed
    assert [(c["id"], c["owner"], c["tag"], c["value"]) for c in v1] == [(1, 0, 0, "?"), (2, 1, 0, "?")]
    g.apply("show(Crate#1)")
    assert g.view(1)["pieces"]["Crate"][0]["cargo"] == 10


def test_reveal_a_known_field_then_writing_it_forgets_and_destroy_forgets_everything():
    g = crates()
    value_of_2 = g.view(None)["pieces"]["Crate"][1]["value"]
    g.apply("peek(Crate#2)")  # P0 looks at P1's crate
    assert g.view(0)["pieces"]["Crate"][1]["value"] == value_of_2
    assert g.view(1)["pieces"]["Crate"][1]["value"] == "?"  # nobody revealed it to its owner
    g.apply("refill(Crate#2)")  # P1 writes it: the new value is not known to P0
    assert g.view(0)["pieces"]["Crate"][1]["value"] == "?"
    g.apply("peek(Crate#2)")
    assert json.loads(g.to_json())["known"] == [["#Crate", [2, 2], [0]]]
    g.apply("sink(Crate#2)")
    assert json.loads(g.to_json())["known"] == []


# ----------------------------------------------------------------------------- checking
def test_unknown_field_is_E203():
    assert codes(SHIP + 'setup { let s = new Ship(owner: 0)  s.crew = 1 }') == ["E203"]
    assert codes(SHIP + 'setup { let s = new Ship(owner: 0, crew: 2) }') == ["E203"]


def test_missing_required_field_is_E306():
    assert errors(SHIP + 'setup { let s = new Ship(cargo: 1) }') == [
        ("E306", "a new Ship needs a value for field 'owner'")]


def test_wrong_field_type_is_E301():
    assert codes(SHIP + 'setup { let s = new Ship(owner: 0, name: 3) }') == ["E301"]
    assert codes(SHIP + 'setup { let s = new Ship(owner: 0)  s.name = 4 }') == ["E301"]


def test_new_outside_let_is_E413_and_in_a_function_E403():
    assert codes(SHIP + 'var v: Ship\nsetup { v = new Ship(owner: 0) }') == ["E413"]
    assert codes(SHIP + 'function make() = new Ship(owner: 0)') == ["E403"]


def test_visible_to_owner_needs_an_owner_field_E304():
    assert codes('piece Box { cargo: int = 0 visible to owner }\n') == ["E304"]
    assert codes('piece Box { owner: str = "x", cargo: int = 0 visible to owner }\n') == ["E304"]
    rulelang.loads(HEAD + 'piece Box { owner: player, cargo: int = 0 visible to owner }\n' + FLOW)


def test_a_table_rows_field_still_cannot_be_assigned_E408():
    assert codes('record R { v: int }\ntable T: R { a(v: 1) }\nsetup { a.v = 2 }') == ["E408"]
    assert codes(SHIP + 'setup { let s = new Ship(owner: 0)  s.id = 3 }') == ["E408"]


def test_new_and_destroy_of_things_that_are_not_pieces():
    assert codes('record R { v: int }\nsetup { let x = new R(v: 1) }') == ["E329"]
    assert codes('setup { destroy 3 }') == ["E330"]


def test_reveal_of_a_public_field_is_E420():
    assert codes(SHIP + 'setup { let s = new Ship(owner: 0)  reveal s.cargo to all }') == ["E420"]


def test_kind_names_are_not_constants():
    assert codes(SHIP + 'const N = count(Ship)') == ["E207"]


# ----------------------------------------------------------------------------- scenarios, saves, limits
def test_new_and_destroy_in_scenario_given_blocks():
    rs = rulelang.loads(HEAD + SCRAP + '''
scenario "a lone ship" {
  given { for s in Ship { destroy s }  let x = new Ship(owner: 1, cargo: 2) }
  then { expect [s.id for s in Ship] == [5]  expect first(Ship).cargo == 2 }
}''')
    from interpreter.scenarios import run_scenario
    res = run_scenario(rs, rs.program.scenarios[0])
    assert res.passed, res.message


def mid_game_save():
    rs = rulelang.loads(HEAD + SCRAP)
    g = rs.new_game(2, seed=1)
    g.apply("scrap(Ship#1)")
    return rs, json.loads(g.to_json())


@pytest.mark.parametrize("change,message", [
    (lambda d: d["data"].__setitem__("#Ship.next", 3), "id 3, not a number from 1 to 2"),
    (lambda d: d["data"].__setitem__("#Ship.next", "x"), "next id of Ship"),
    (lambda d: d["data"]["#Ship"]["$map"][0][1].__setitem__(1, 7), "outside 0..3"),
    (lambda d: d["data"]["#Ship"]["$map"][0][1].__setitem__(2, 7), "not a str"),
    (lambda d: d["data"]["#Ship"]["$map"][0][1].pop(), "must have 4 field values"),
    (lambda d: d["data"].pop("#Ship"), 'has no "#Ship"'),
    (lambda d: d["pending"]["options"][0][1][1].__setitem__(0, {"$piece": "Ship", "id": 0}), "piece is"),
])
def test_loading_checks_pieces(change, message):
    rs, d = mid_game_save()
    change(d)
    with pytest.raises(rulelang.GameError, match=message):
        rs.load_game(json.dumps(d))


def test_a_save_naming_a_piece_kind_the_rules_do_not_have_is_refused():
    rs = rulelang.loads(HEAD + 'var x: any\npiece Ship { n: int = 0 }\n' + FLOW)
    d = json.loads(rs.new_game(2, seed=1).to_json())
    d["data"]["x"] = {"$piece": "Boat", "id": 1}
    with pytest.raises(rulelang.GameError, match="Boat#1, which these rules do not have"):
        rs.load_game(json.dumps(d))
    d["data"]["x"] = {"$piece": "Ship", "id": 1}  # no Ship was ever made
    with pytest.raises(rulelang.GameError, match="Ship#1, .* never made"):
        rs.load_game(json.dumps(d))


def test_live_pieces_are_limited(monkeypatch):
    monkeypatch.setattr(P, "MAX_PIECES", 5)
    with pytest.raises(rulelang.GameError, match="more than 5 pieces at once"):
        game(SHIP + 'setup { loop { let s = new Ship(owner: 0) } }')
    game(SHIP + 'setup { loop { let s = new Ship(owner: 0)  destroy s  if first(Ship) == none { break } } }')


def test_games_without_pieces_show_no_pieces_in_views():
    g = game('var x: int\n')
    assert "pieces" not in g.view(0)
    assert "#" not in "".join(json.loads(g.to_json())["data"])


def test_a_save_cannot_mark_a_public_field_as_known():
    rs = rulelang.loads(HEAD + SECRET)
    g = rs.new_game(2, seed=1)
    g.apply("peek(Crate#2)")
    d = json.loads(g.to_json())
    assert d["known"] == [["#Crate", [2, 2], [0]]]
    rs.load_game(json.dumps(d))
    d["known"] = [["#Crate", [2, 3], [0]]]  # tag is visible to all: not a place knowledge is kept for
    with pytest.raises(rulelang.GameError, match="known names '#Crate'"):
        rs.load_game(json.dumps(d))


def test_a_human_player_is_shown_the_pieces_it_may_see():
    import io

    from interpreter.agents import HumanAgent
    g = crates()
    out = io.StringIO()
    agent = HumanAgent(input=io.StringIO("pass\n"), output=out, show_view=True)
    assert agent.choose(g).id == "pass"
    text = out.getvalue()
    assert 'Crate#1: {"owner": 0, "cargo": 10, "value": "?", "tag": 0}' in text
    assert 'Crate#2: {"owner": 1, "cargo": "?", "value": "?", "tag": 0}' in text


def test_a_save_whose_pending_choice_names_a_piece_never_made_is_refused():
    rs = rulelang.loads(HEAD + CHOOSE)
    g = rs.new_game(2, seed=7)
    g.apply("pick")
    d = json.loads(g.to_json())
    d["pending"]["options"][0] = ["Ship#9", {"$piece": "Ship", "id": 9}]
    # refused either as a piece never made or as a decision the rules do not offer here (saves.py
    # rebuilds the pending decision from the state and compares)
    with pytest.raises(rulelang.GameError, match="Ship#9, .* never made|not the decision the rules offer"):
        rs.load_game(json.dumps(d))

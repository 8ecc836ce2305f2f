"""Knowledge by place (docs/language.md, "Hidden information and views"): reveal attaches to a place,
writing a place forgets it, views hide keys of hidden map entries and the order of hidden collections,
chance draws do not show a hidden pile, view(None) is the whole state, and games without a seed are
not guessable from seed 0. Each test states a case the issue found leaking."""
import json

import pytest

import rulelang

DICE = '''
game "Dice" { players 2 }
per player var dice: list[int] = [] visible to owner
setup { dice[0] = [5, 2]  dice[1] = [5, 3] }
action show_first { effect { reveal dice[me][0] to all } }
action show_all { effect { reveal dice[me] to all } }
action reroll_second { effect { dice[me][1] = 6 } }
action add_die { effect { add 1 to dice[me] } }
action pass { }
flow { loop { for p in players { turn p { offer [show_first, show_all, reroll_second, add_die, pass] to p } } } }
ending "never" when false
'''


def dice_game():
    return rulelang.loads(DICE).new_game(2, seed=1)


def test_revealing_one_die_shows_that_die_and_not_an_equal_die_elsewhere():
    g = dice_game()
    assert g.view(1)["vars"]["dice"][0] == {"hidden": 2}
    g.apply("show_first")  # P0 shows the 5 in its first slot
    assert g.view(1)["vars"]["dice"][0] == [5, "?"]
    # seat 1's own 5 is not a revealed place: seat 0 must not see it
    assert g.view(0)["vars"]["dice"][1] == {"hidden": 2}


def test_a_rewritten_place_is_hidden_again_and_the_rest_stays_known():
    g = dice_game()
    g.apply("show_all")
    assert g.view(1)["vars"]["dice"][0] == [5, 2]
    g.apply("pass")
    g.apply("reroll_second")  # P0 changes dice[0][1]: that die is new, the other stays known
    assert g.view(1)["vars"]["dice"][0] == [5, "?"]
    g.apply("pass")
    g.apply("add_die")  # the list changes: positions shift, so nothing of it stays known
    assert g.view(1)["vars"]["dice"][0] == {"hidden": 3}


def test_the_owner_always_sees_its_own_value():
    g = dice_game()
    assert g.view(0)["vars"]["dice"][0] == [5, 2]
    assert g.view(1)["vars"]["dice"][1] == [5, 3]


MINES = '''
game "Mines" { players 2 }
var mines: map[int, int] = {} visible to known
var pool: set[int] = [10, 50, 70, 90] visible to known
setup { mines[3] = 1  mines[17] = 2  mines[40] = 3 }
action probe(k in [3, 17, 40]) { effect { reveal mines[k] to me } }
action show_pool { effect { reveal pool to all } }
flow { loop { for p in players { turn p { offer [probe, show_pool] to p } } } }
ending "never" when false
'''


def test_a_hidden_map_hides_its_keys_and_a_known_entry_shows_only_itself():
    g = rulelang.loads(MINES).new_game(2, seed=1)
    assert g.view(0)["vars"]["mines"] == {"hidden": 3}  # positions of mines are not shown
    g.apply("probe(17)")
    assert g.view(0)["vars"]["mines"] == {"known": {"17": 2}, "hidden": 2}
    assert g.view(1)["vars"]["mines"] == {"hidden": 3}


def test_a_hidden_set_shows_nothing_of_its_order_until_revealed_whole():
    g = rulelang.loads(MINES).new_game(2, seed=1)
    assert g.view(1)["vars"]["pool"] == {"hidden": 4}
    g.apply("show_pool")
    assert g.view(1)["vars"]["pool"] == [10, 50, 70, 90]


def test_reveal_needs_a_place_of_a_hidden_variable():
    bad_value = DICE.replace("reveal dice[me][0] to all", "reveal 5 to all")
    with pytest.raises(rulelang.RuleError) as e:
        rulelang.loads(bad_value)
    assert e.value.diagnostics[0].code == "E420"
    public = DICE.replace("visible to owner", "")
    with pytest.raises(rulelang.RuleError) as e:
        rulelang.loads(public)
    assert e.value.diagnostics[0].code == "E420" and "visible to all" in e.value.diagnostics[0].message


LEAK = '''
game "Leak" { players 2 }
var deck: deck[int] = [0, 1, 2] visible to none
per player var card: int visible to owner
setup { shuffle deck  for p in players { let c = draw one from deck  card[p] = c } }
action pass { }
flow { offer [pass] to 0 }
'''


def test_a_chance_draw_does_not_show_what_is_left_in_a_hidden_pile():
    g = rulelang.loads(LEAK).new_game(2, seed=3, chance="explicit")
    assert g.current_player == -1
    g.apply("2")  # seat 0 gets card 2; the next draw is over {0, 1}
    pend = g.view(1)["pending"]
    assert pend["kind"] == "chance" and "options" not in pend
    assert sorted(g.view(None)["pending"]["options"]) == ["0", "1"]


def test_a_roll_shows_its_faces_to_everyone():
    text = '''
game "Roll" { players 2 }
var x: int
setup { let r = roll one of 1..3  x = r }
action pass { }
flow { offer [pass] to 0 }
'''
    g = rulelang.loads(text).new_game(2, seed=3, chance="explicit")
    assert g.view(1)["pending"]["options"] == ["1", "2", "3"]


def test_the_full_view_shows_a_shuffled_pile():
    g = rulelang.loads(LEAK).new_game(2, seed=3)
    full = g.view(None)["vars"]["deck"]
    assert full["hidden"] == 1 and len(full["shuffled"]) == 1
    assert sorted(full["shuffled"] + [g.view(None)["vars"]["card"][0], g.view(None)["vars"]["card"][1]]) == [0, 1, 2]
    assert "shuffled" not in json.dumps(g.view(0))


def test_a_game_without_a_seed_takes_a_large_seed_from_the_system():
    rs = rulelang.loads(LEAK)
    seeds = {json.loads(rs.new_game(2).to_json())["seed"] for _ in range(4)}
    assert len(seeds) == 4 and max(seeds) > 1 << 32  # not 0, not guessable by trying small seeds
    g = rs.new_game(2)
    again = rs.new_game(2, seed=json.loads(g.to_json())["seed"])
    assert again.to_json() == g.to_json()  # the saved seed replays the game


def test_knowledge_survives_a_save_and_a_clone():
    g = dice_game()
    g.apply("show_first")
    for copy in (g.clone(), g.rs.load_game(g.to_json())):
        assert copy.view(1)["vars"]["dice"][0] == [5, "?"]
        assert copy.to_json() == g.to_json()
    c = g.clone()
    c.apply("pass")
    c.apply("add_die")
    assert g.view(1)["vars"]["dice"][0] == [5, "?"]  # the clone's write did not touch the original


@pytest.mark.parametrize("known, why", [
    ([["nope", [0], [-1]]], "not a variable visible"),
    ([["dice", [0, 7], [-1]]], "does not exist"),
    ([["dice", [0, 0], [5]]], "seats"),
    ([["dice", [0, 0]]], "not [variable"),
])
def test_a_save_with_bad_knowledge_is_refused(known, why):
    g = dice_game()
    d = json.loads(g.to_json())
    d["known"] = known
    with pytest.raises(rulelang.GameError) as e:
        g.rs.load_game(json.dumps(d))
    assert why in str(e.value) and "\n" not in str(e.value)

"""Every scenario in every rule file under games/ passes (they are the rulebooks' examples, made executable)."""
import os

import pytest

from interpreter.scenarios import run_file, run_path, rule_files


GAMES = os.path.join(os.path.dirname(__file__), "..", "games")


def _collect():
    out = []
    for path in rule_files(GAMES):
        if os.path.basename(path) == "station.rules":
            continue  # tests/test_station.py runs these
        for r in run_file(path):
            out.append(pytest.param(r, id=f"{os.path.basename(path)}::{r.name}"))
    return out


@pytest.mark.parametrize("result", _collect())
def test_scenario(result):
    assert result.passed, result.message


# a one-player counter: each "up" adds one to n
COUNTER = '''game "C" { players 2 }
var n: int = 0
action up { effect { n += 1 } }
flow { loop { turn 0 { offer [up] to 0 } } }
ending "never" when false
'''


def test_a_failing_scenario_reports_where_and_why(tmp_path):
    p = tmp_path / "f.rules"
    p.write_text(COUNTER + '''scenario "counts wrong" {
  when { play "up" }
  then { expect n == 2 "one step adds one" }
}
scenario "illegal step" {
  when { play "down" }
  then { expect true }
}
''')
    results = {r.name: r for r in run_path(str(p))}
    wrong = results["counts wrong"]
    assert not wrong.passed
    assert f"{p}:8:" in wrong.message and "one step adds one" in wrong.message
    assert "left side is 1, right side is 2" in wrong.message
    illegal = results["illegal step"]
    assert not illegal.passed and "'down' is not legal" in illegal.message


def test_given_changes_the_state_before_the_decision(tmp_path):
    p = tmp_path / "g.rules"
    p.write_text('''game "G" { players 2 }
per player var gems: int = 0
action spend { cost gems[me]: 2  effect { } }
action wait { effect { } }
flow { loop { turn 0 { offer [spend, wait] to 0 } } }
ending "never" when false
scenario "with gems, spending is legal" {
  given { gems[0] = 2 }
  then { expect "spend" in legal }
}
scenario "without, it is not" {
  then { expect legal == ["wait"] }
}
''')
    assert all(r.passed for r in run_path(str(p))), [r.message for r in run_path(str(p))]


def test_given_applies_after_random_setup(tmp_path):
    """A scenario's `given` describes the position after setup, even when setup shuffles and deals."""
    p = tmp_path / "deal.rules"
    p.write_text('''game "D" { players 2 }
var pile: deck[int] = [1, 2, 3, 4]
per player var hand: list[int] = []
action play_card(c in hand[me]) { effect { remove c from hand[me] } }
setup { shuffle pile  for p in players { let c = draw one from pile  add c to hand[p] } }
flow { loop { for p in players { turn p { offer [play_card] to p } } } }
ending "empty hands" when all(players, p => count(hand[p]) == 0)
scenario "a dealt hand can be replaced" {
  given { hand[0] = [4, 1] }
  then { expect legal == ["play_card(4)", "play_card(1)"] }
}
scenario "setup draws can be forced" {
  given { chance "3"  chance "2" }
  then { expect hand == [[3], [2]] }
}
''')
    results = run_path(str(p))
    assert all(r.passed for r in results), [r.message for r in results]


def test_scenario_blocks_run_in_the_order_written(tmp_path):
    p = tmp_path / "o.rules"
    p.write_text(COUNTER + '''scenario "check between steps" {
  when { play "up" }
  then { expect n == 1 }
  when { play "up" }
  then { expect n == 2 }
}
''')
    assert [r.passed for r in run_path(str(p))] == [True]


def test_given_that_refills_a_bag_mid_draw_redraws_from_the_new_bag(tmp_path):
    p = tmp_path / "b.rules"
    p.write_text('''game "B" { players 2 }
enum Colour { red, blue, green }
var bag: bag[Colour] = [red, blue, green]
var got: list[Colour] = []
setup { let cs = draw 2 from bag  got = cs }
action stop { effect { end_game "done" } }
flow { turn 0 { offer [stop] to 0 } }
scenario "the second draw comes from the bag as given" {
  given { chance "red"  bag = [green, green] }
  then { expect got == [red, green] }
}
''')
    results = run_path(str(p))
    assert all(r.passed for r in results), [r.message for r in results]

"""Every scenario in every rule file under games/ passes (they are the rulebooks' examples, made executable)."""
import os

import pytest
from click.testing import CliRunner

from interpreter.scenarios import run_file, run_path, rule_files
from rulelang.cli import cli


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


# ------------------------------------------------------------------------------------------ invariants
SUPPLY = '''game "Supply" { players 2 }
var stock: int = 2
per player var held: int
invariant "the supply is never negative": stock >= 0
invariant "tokens are conserved": stock + sum(held) == 2
flow { loop { for p in players { turn p { offer [take, pass] to p } } } }
action take { effect { stock -= 1 held[me] += 1 } }
action pass { }
ending "never" when false
'''


def test_a_step_that_breaks_an_invariant_fails_the_scenario(tmp_path):
    p = tmp_path / "s.rules"
    p.write_text(SUPPLY + '''scenario "two takes are fine" {
  when { play "take"  play "take" }
  then { expect stock == 0 }
}
scenario "the third take breaks it" {
  when {
    play "take"
    play "take"
    play "take"
    play "pass"
  }
  then { expect held == [2, 1] }
}
''')
    results = {r.name: r for r in run_path(str(p))}
    assert results["two takes are fine"].passed, results["two takes are fine"].message
    bad = results["the third take breaks it"]
    assert not bad.passed
    # the invariant's name, the values it read, and the step that broke it (its line, what it played)
    assert bad.failures == [f'{p}:18: invariant "the supply is never negative" does not hold (stock = -1) '
                            'after play "take" (by P0) (decision 3 of the game)'], bad.failures


def test_invariants_are_checked_after_chance_steps_and_at_setup(tmp_path):
    p = tmp_path / "d.rules"
    p.write_text('''game "Dice" { players 1 }
var out: int
var rounds: int
var broken_at_start: bool = true
invariant "the first die is put away before the second roll": out == 0
invariant "setup mends this": not broken_at_start
setup { broken_at_start = false }
flow { loop { let a = roll one of 1..6  out = a  let b = roll one of 1..6  out = 0  rounds += 1
              turn 0 { offer [go] to 0 } } }
action go { }
ending "three" when rounds >= 3
scenario "the first die is still out when the second is rolled" {
  when { chance 4  chance 2  play "go" }
  then { expect rounds == 1 }
}
''')
    [r] = run_path(str(p))
    assert not r.passed
    assert r.failures == [f'{p}:13: invariant "the first die is put away before the second roll" does not hold '
                          '(out = 4) after chance "4" (decision 1 of the game)'], r.failures


def test_a_given_that_sets_the_state_stops_the_invariant_checks(tmp_path):
    # a given may set up a position the rules never reach (here: a token from nowhere); the invariants
    # speak of the positions the rules reach, so from that given on they are not checked
    p = tmp_path / "g.rules"
    p.write_text(SUPPLY + '''scenario "a hand-made position" {
  given { held[0] = 5 }
  when { play "take" }
  then { expect held == [6, 0] }
}
scenario "a given of chance steps only keeps the checks" {
  given { }
  when { play "take"  play "take"  play "take" }
  then { expect stock == -1 }
}
''')
    results = {r.name: r for r in run_path(str(p))}
    assert results["a hand-made position"].passed, results["a hand-made position"].message
    kept = results["a given of chance steps only keeps the checks"]
    assert not kept.passed and 'invariant "the supply is never negative" does not hold' in kept.message


# ------------------------------------------------------------------------------------------ failures
def test_every_failure_is_reported_in_the_order_met(tmp_path):
    p = tmp_path / "f.rules"
    p.write_text(COUNTER + '''scenario "an expect, then a step that cannot be taken" {
  when { play "up" }
  then { expect n == 5 "the first failure" }
  when { play "up"  play "down" }
  then { expect n == 9 "never reached" }
}
''')
    [r] = run_path(str(p))
    assert not r.passed
    assert len(r.failures) == 2, r.failures
    assert r.failures[0].startswith(f"{p}:8: the first failure (left side is 1, right side is 5)")
    assert r.failures[1].startswith(f"{p}:9: 'down' is not legal")
    out = CliRunner().invoke(cli, ["test", str(p)])
    assert out.exit_code == 1
    assert out.output.splitlines() == [
        f"FAIL {p}:6 an expect, then a step that cannot be taken: 2 failures",
        f"  {r.failures[0]}", f"  {r.failures[1]}", "0 passed, 1 failed"]


def test_failing_values_are_written_as_a_rule_file_writes_them(tmp_path):
    p = tmp_path / "v.rules"
    p.write_text('''game "G" { players 2 }
enum Colour { red, blue }
record Card { name: str, cost: int }
table cards: Card {
  lamp("Lamp", 2)
}
var at: tuple[int, int] = (3, 7)
var colours: list[Colour] = [red]
var counts: map[str, int] = {"a": 1}
var seen: set[int] = {1, 2}
var card: Card = lamp
var words: list[str] = ["one"]
action advance(to in [(3, 7), (4, 7)]) { effect { at = to } }
action pass { }
flow { loop { turn 0 { offer [advance, pass] to 0 } } }
ending "never" when false
scenario "every kind of value" {
  then {
    expect legal == ["advance((3,7))"]
    expect at == (1, 2)
    expect colours == [blue]
    expect counts == {"b": 1}
    expect seen == {3}
    expect card == none
    expect "x" in legal
    expect words == ["two"]
  }
}
''')
    [r] = run_path(str(p))
    details = [m.split(": ", 1)[1] for m in r.failures]
    assert details == [
        'expectation failed (left side is ["advance((3,7))", "advance((4,7))", "pass"], '
        'right side is ["advance((3,7))"])',
        "expectation failed (left side is (3, 7), right side is (1, 2))",
        "expectation failed (left side is [red], right side is [blue])",
        'expectation failed (left side is {"a": 1}, right side is {"b": 1})',
        "expectation failed (left side is {1, 2}, right side is {3})",
        "expectation failed (left side is lamp, right side is none)",
        'expectation failed (left side is "x", right side is ["advance((3,7))", "advance((4,7))", "pass"])',
        'expectation failed (left side is ["one"], right side is ["two"])',
    ], details


# ------------------------------------------------------------------------------------------ chance order
def test_a_chance_step_after_setup_was_drawn_says_how_to_order_the_steps(tmp_path):
    p = tmp_path / "c.rules"
    p.write_text('''game "Roll" { players 1 }
var start: int
var moved: int
setup { let r = roll one of 1..6  start = r }
action go { effect { moved += 1 } }
flow { loop { turn 0 { offer [go] to 0 } } }
ending "three" when moved >= 3
scenario "given first, then the setup roll" {
  given { moved = 1 }
  when { chance 6 }
  then { expect start == 6 }
}
scenario "the setup roll first" {
  given { chance 6  moved = 1 }
  then { expect start == 6 }
}
''')
    results = {r.name: r for r in run_path(str(p))}
    assert results["the setup roll first"].passed, results["the setup roll first"].message
    bad = results["given first, then the setup roll"]
    assert not bad.passed and len(bad.failures) == 1
    message = bad.failures[0]
    assert message.startswith(f'{p}:10: chance "6": no chance decision is pending (now: ')
    # says that the sampler drew setup's roll already (and what it drew), and how to order the steps
    assert "setup's random outcomes were already drawn by the scenario's sampler" in message
    assert "write the chance steps first" in message

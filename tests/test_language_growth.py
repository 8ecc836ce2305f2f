"""General language growth asked for by the Vega issue: placeholder marks on whole rules,
`draw ... into`, `shuffle B into A`, and the scenario runner's written-order rule."""
from interpreter.scenarios import run_path


DEAL = '''game "D" { players 2 }
var pile: deck[int] = [1, 2, 3, 4]
per player var hand: list[int] = []
var marker: int = 0
action play_card(c in hand[me]) { effect { remove c from hand[me] } }
setup { shuffle pile  for p in players { let c = draw one from pile  add c to hand[p] } }
flow { loop { for p in players { turn p { offer [play_card] to p } } } }
ending "empty hands" when all(players, p => count(hand[p]) == 0)
'''


def _results(tmp_path, text):
    p = tmp_path / "s.rules"
    p.write_text(text)
    return {r.name: r for r in run_path(str(p))}


def test_a_scenario_opening_with_when_chance_forces_setup_even_with_a_later_given(tmp_path):
    """The first step in written order decides: `when { chance ... }` first, `given` afterwards."""
    res = _results(tmp_path, DEAL + '''scenario "forced deal, then a given" {
  when { chance "3"  chance "2" }
  given { marker = 1 }
  then { expect hand == [[3], [2]]  expect marker == 1 }
}
''')
    r = res["forced deal, then a given"]
    assert r.passed, r.message


def test_a_scenario_opening_with_a_given_settles_setup_even_if_a_later_when_forces_chance(tmp_path):
    """A first `given` that is not a chance step describes the position after setup's draws."""
    res = _results(tmp_path, DEAL + '''scenario "given first" {
  given { hand[0] = [4] }
  when { play "play_card(4)" }
  then { expect count(hand[0]) == 0  expect count(hand[1]) == 1 }
}
''')
    r = res["given first"]
    assert r.passed, r.message

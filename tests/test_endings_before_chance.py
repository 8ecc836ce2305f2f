"""Endings are checked before every chance step as before every decision (issue 30): after the move that
wins, the next player's dice are not rolled, drawn or narrated; the game is over at once."""
from __future__ import annotations

import rulelang

GAME = '''
game "Dice race" { players 2 }
per player var pos: int
per player var rolled: int
var rolls: int
action step { effect { pos[me] += 3 + rolled[me] } }
flow {
  loop {
    for p in players {
      turn p {
        let d = roll one of 1..6
        rolls += 1
        log "rolled", d
        rolled[p] = d
        offer [step] to p
      }
    }
  }
}
ending "home" when any(players, p => pos[p] >= 12)
score p = pos[p]
'''


def test_no_roll_after_the_winning_move_in_sampled_play():
    rs = rulelang.loads(GAME)
    for seed in range(20):
        g = rs.new_game(2, seed=seed)
        while not g.is_over():
            g.apply(g.legal_actions()[0])
        assert g.end_reason == "home"
        positions = g.view(None)["vars"]["pos"]
        rolls = g.view(None)["vars"]["rolls"]
        decisions = len(g.log)
        # every roll is followed by that player's decision: the last roll was the winner's own turn's
        assert rolls == decisions, (seed, rolls, decisions, positions)


def test_no_chance_decision_is_pending_once_an_ending_holds():
    g = rulelang.loads(GAME).new_game(2, seed=1, chance="explicit")
    while not g.is_over():
        if g.is_chance():
            g.apply(g.legal_actions()[-1])  # always a six
        else:
            g.apply(g.legal_actions()[0])
    assert g.end_reason == "home" and not g.is_chance() and g.legal_actions() == []
    # P0 moves 6 + 3 = 9, P1 9, P0 18 >= 12: over before P1's roll, which is neither pending nor made
    assert g.view(None)["vars"]["pos"] == [18, 9] and g.view(None)["vars"]["rolls"] == 3


def test_setup_deals_before_any_ending_is_checked():
    """An ending that holds before setup deals (empty hands) does not end the game in setup."""
    text = '''game "D" { players 2 }
var pile: deck[int] = [1, 2, 3, 4]
per player var hand: list[int] = []
action play_card(c in hand[me]) { effect { remove c from hand[me] } }
setup { shuffle pile  for p in players { let c = draw one from pile  add c to hand[p] } }
flow { loop { for p in players { turn p { offer [play_card] to p } } } }
ending "empty hands" when all(players, p => count(hand[p]) == 0)
'''
    for chance in ("sampled", "explicit"):
        g = rulelang.loads(text).new_game(2, seed=1, chance=chance)
        while g.is_chance():
            g.apply(g.legal_actions()[0])
        assert not g.is_over() and g.current_player == 0
        g.apply(g.legal_actions()[0])
        g.apply(g.legal_actions()[0])
        assert g.is_over() and g.end_reason == "empty hands"

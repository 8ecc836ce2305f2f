"""`rulelang play` that people can follow (issue 13): boards drawn after each decision, chance and `log`
lines narrated, `help`, `undo` (refused once something hidden came out), and the human's own view only.
Driven through the command line with scripted input."""
from __future__ import annotations

import json
import os

from click.testing import CliRunner

import rulelang
from interpreter.agents import ChanceAgent, agent_seed
from interpreter.narrate import new_notes, revealed_since
from rulelang.cli import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICTACTOE = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
KUHN = os.path.join(ROOT, "games", "examples", "kuhn_poker.rules")

DICE = """
game "Dice walk" { players 2 }
per player var pos: int = 0
action step {
  text "roll and walk"
  effect {
    let d = roll one of 1..6
    pos[me] += d
    log "walked", d
  }
}
action rest { text "rest" effect { } }
flow {
  loop {
    for p in players {
      turn p { offer [step, rest] to p }
      if pos[p] >= 6 { end_game "arrived" }
    }
  }
}
score p = pos[p]
"""


def play(*args, input=""):
    result = CliRunner().invoke(cli, ["play", *[str(a) for a in args]], input=input)
    assert "Traceback" not in result.output
    return result


def test_tictactoe_board_help_and_undo(tmp_path):
    log = tmp_path / "game.log.json"
    # help, the centre, board, undo (back to the empty board), then the corners and edges in order
    script = "help\n5\nboard\nundo\n1\n" + "1\n" * 8
    r = play(TICTACTOE, "--agents", "human,random", "--seed", 1, "--log", log, input=script)
    assert r.exit_code == 0, r.output
    out = r.stdout
    for command in ("help", "undo", "board", "quit"):
        assert f"\n  {command} " in out  # the list of commands
    # after the human's mark in the centre (before its undo) the board shows it, drawn as text
    first = out.index("P0 (human): mark row 1, column 1")
    after = out[first:].splitlines()
    assert after[1] == "board grid (marks)"
    assert after[4].split() == ["1", ".", "P0", "."]
    # `board` draws it again as P0 sees it (with the first bot's reply), and undo goes back to the empty board
    assert "undo: your previous decision is taken back (the game is back after 0 decisions)" in out
    undone = out.index("undo: your previous")
    assert out[undone:].splitlines()[1:5] == ["board grid", "  0 1 2", "2 . . .", "1 . . ."]  # row 0 last: at the bottom
    # the game as logged is the one played after the undo: it replays, and starts with the new choice
    data = json.loads(log.read_text())
    assert data["log"][0] == {"player": 0, "action": "place(0,0)"}
    rep = CliRunner().invoke(cli, ["replay", TICTACTOE, str(log)])
    assert rep.exit_code == 0, rep.output


def test_undo_with_nothing_to_take_back():
    r = play(TICTACTOE, "--agents", "human,first", "--seed", 1, input="undo\nquit\n")
    assert "undo: there is no earlier decision of yours to take back" in r.stdout
    assert r.exit_code == 1 and "P0 quit the game" in r.stderr


def test_dice_are_narrated_and_undo_is_refused_after_a_roll(tmp_path):
    rules = tmp_path / "dice.rules"
    rules.write_text(DICE)
    # P0 rolls (a chance outcome it sees), P1 (first) rolls, then P0 asks to undo: refused, then rests
    r = play(rules, "--agents", "human,first", "--seed", 2, input="1\nundo\n2\n" + "2\n" * 40)
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "P0 (human): roll and walk" in out
    rolled = [line for line in out.splitlines() if line.startswith("chance: rolled ")]
    walked = [line for line in out.splitlines() if line.startswith("  log: walked ")]
    assert rolled and len(rolled) == len(walked)
    assert [line.split()[-1] for line in rolled] == [line.split()[-1] for line in walked]
    assert "undo refused: a chance outcome" in out and "came out since your previous decision" in out
    assert "undo: your previous decision is taken back" not in out
    # the same game without undo: the refusal changed nothing
    again = play(rules, "--agents", "human,first", "--seed", 2, input="1\n2\n" + "2\n" * 40)
    def narration(text):
        return [x for x in text.splitlines() if x.startswith(("P0 (", "P1 (", "chance", "  log"))]

    assert narration(again.stdout) == narration(out)


def test_undo_is_refused_after_a_random_event_in_sampled_mode():
    rs = rulelang.loads(DICE)
    g = rs.new_game(2, seed=5, chance="sampled")
    before = g.clone()
    g.apply("rest")
    assert revealed_since(before, g, 0) is None  # a public decision: nothing came out
    g.apply("step")  # P1 rolls: resolved by the game's own random state
    assert "random event" in revealed_since(before, g, 0)


def test_a_reveal_to_the_human_refuses_undo():
    rs = rulelang.load(KUHN)
    g = rs.new_game(2, seed=3)  # sampled: the deal is done
    before = g.clone()
    g.apply("bet")
    assert revealed_since(before, g, 0) is None
    g.apply("bet")  # called: the showdown reveals both cards to all
    assert "revealed to you" in revealed_since(before, g, 0)


def _deal(seed):
    """The cards `play --chance explicit` deals with this seed."""
    g = rulelang.load(KUHN).new_game(2, seed=seed, chance="explicit")
    chance = ChanceAgent(agent_seed(seed, "chance"))
    while g.current_player == -1:
        g.apply(chance.choose(g))
    return tuple(g.view(None)["vars"]["card"])


def test_the_human_sees_only_its_own_view():
    # two deals with the same card for the human (P0) and another for the bot; the bot (first) passes
    # after the human's bet, so the game ends by a fold and nothing is revealed: everything the human
    # is shown must be the same, byte for byte, apart from the seed in the first line
    deals = {}
    pair = None
    for seed in range(60):
        c = _deal(seed)
        for other, oc in deals.items():
            if oc[0] == c[0] and oc[1] != c[1]:
                pair = (other, seed)
                break
        if pair:
            break
        deals[seed] = c
    assert pair is not None
    outs = []
    for seed in pair:
        r = play(KUHN, "--agents", "human,first", "--seed", seed, input="bet\n")
        assert r.exit_code == 0, r.output
        assert "chance: 2 items are drawn (hidden)" in r.stdout  # the deal, not what was dealt
        outs.append(r.stdout.split("\n", 1)[1])
    assert outs[0] == outs[1]


def test_bots_game_boards_flag_and_unchanged_default():
    plain = play(TICTACTOE, "--seed", 4)
    assert plain.exit_code == 0 and "board grid" not in plain.stdout
    drawn = play(TICTACTOE, "--seed", 4, "--boards")
    assert drawn.stdout.count("board grid (marks)") == plain.stdout.count(" (random): ")
    moves = [x for x in drawn.stdout.splitlines() if " (random): " in x]
    assert moves == [x for x in plain.stdout.splitlines() if " (random): " in x]  # the same game


def test_new_notes_when_the_list_is_cut():
    assert new_notes(["a", "b"], ["a", "b", "c"]) == ["c"]
    assert new_notes(["a", "b", "c"], ["b", "c", "d", "e"]) == ["d", "e"]
    assert new_notes([], ["x"]) == ["x"]


DRAW = """
game "Draw" { players 2 }
var deck: deck[int] = [10, 20, 30, 40, 50, 60] visible to none
per player var hand: list[int] = [] visible to owner
setup { shuffle deck }
action take {
  text "take a card"
  effect {
    let c = draw one from deck
    hand[me] = hand[me] + [c]
  }
}
flow {
  repeat 2 times { for p in players { turn p { offer [take] to p } } }
  end_game "dealt"
}
"""


def test_a_refused_undo_does_not_tell_the_hidden_draw(tmp_path):
    rules = tmp_path / "draw.rules"
    rules.write_text(DRAW)
    log = tmp_path / "draw.log.json"
    r = play(rules, "--agents", "human,first", "--seed", 3, "--log", log, input="1\nundo\n1\n")
    assert r.exit_code == 0, r.output
    refused = [x for x in r.stdout.splitlines() if "undo refused" in x]
    assert refused == ["choice [1-1, action id, or help]: undo refused: a chance outcome (a roll or a draw) came "
                       "out since your previous decision, so going back would let you choose again knowing it"]
    # the bot's cards (the draws after its decisions) appear nowhere in what the human is shown
    entries = json.loads(log.read_text())["log"]
    drawn = [e["action"] for k, e in enumerate(entries) if e["player"] == -1 and entries[k - 1]["player"] == 1]
    assert len(drawn) == 2
    shown = r.stdout.replace("seed 3", "")
    mine = [e["action"] for k, e in enumerate(entries) if e["player"] == -1 and entries[k - 1]["player"] == 0]
    assert all(card in shown for card in mine[:1])  # the human sees its own first card
    assert not any(card in shown for card in drawn if card not in mine)
    assert "chance: an item is drawn (hidden)" in r.stdout


SEALED = """
game "Sealed bids" { players 2 }
per player var bid: int = 0 visible to owner
var secret: int = 0 visible to none
action bid_now {
  text "make a sealed bid"
  effect {
    let x = choose one of [1, 2, 3, 4] prompt "your sealed bid"
    bid[me] = x
  }
}
action done { text "done" effect { } }
flow {
  let r = roll one of 1..6
  secret = r
  for p in players { turn p { offer [bid_now] to p } }
  for p in players { turn p { offer [done] to p } }
  end_game "bids made"
}
score p = bid[p]
"""


def test_a_person_is_not_told_another_seats_secret_pick_nor_a_hidden_roll(tmp_path):
    """docs/language.md, "Hidden information and views": a choice stored where only its owner sees it
    (`visible to owner`), and a roll into a place nobody sees, are not the person's to know; the
    narration tells that they happened, not what came out (as the browser's log does). The proof: two
    seeds whose hidden roll and bot's pick differ tell the person the same words."""
    rules = tmp_path / "sealed.rules"
    rules.write_text(SEALED)
    shown, secrets = {}, set()
    for seed in range(12):
        r = play(rules, "--agents", "human,random", "--seed", seed, input="1\n1\n1\n")
        assert r.exit_code == 0, r.output
        out = r.stdout.split("\n", 1)[1]
        assert "P0 (human): make a sealed bid" in out and "P0 (human): 1" in out  # one's own pick, in full
        assert "chance: a roll (hidden)" in out and "chance: rolled" not in out
        assert "P1 (random): your sealed bid (hidden)" in out
        shown[seed] = out.split("Game over")[0]  # (the scores at the end tell the bids: the game is over)
        log = tmp_path / f"{seed}.json"
        play(rules, "--agents", "human,random", "--seed", seed, "--log", log, input="1\n1\n1\n")
        secrets.add(tuple(d["action"] for d in json.loads(log.read_text())["log"] if d["player"] != 0))
    assert len(secrets) > 1  # the roll and the bot's pick differed between the seeds
    assert len(set(shown.values())) == 1, "what the person is told depends on what is hidden from them"


def test_a_game_of_bots_is_narrated_whole(tmp_path):
    """Nobody at the table: the narration is the whole game, the picks and rolls included."""
    rules = tmp_path / "sealed.rules"
    rules.write_text(SEALED)
    r = play(rules, "--seed", 3, "--chance", "explicit")
    assert r.exit_code == 0, r.output
    assert "chance: rolled" in r.stdout and "(hidden)" not in r.stdout

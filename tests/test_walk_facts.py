"""The adapters' walk of a small game's whole tree (rulelang.openspiel_common.walk_facts): what it finds
agrees with OpenSpiel's own tic_tac_toe, and an answer is kept for the process, so loading the same rules
again does not walk again (a game too big to walk, hex or checkers, spent seconds giving up at every
load)."""
from __future__ import annotations

from pathlib import Path

import rulelang
from rulelang import openspiel_common
from rulelang.action_space import ActionSpace

ROOT = Path(__file__).resolve().parents[1]
TICTACTOE = ROOT / "games" / "examples" / "tictactoe.rules"


def walks(monkeypatch):
    """Count the walks made (the memo's misses)."""
    made = []
    real = openspiel_common._walk

    def counted(*args):
        made.append(args[1])
        return real(*args)
    monkeypatch.setattr(openspiel_common, "_walk", counted)
    monkeypatch.setattr(openspiel_common, "_WALKED", {})
    return made


def facts(rules, players=2, max_positions=openspiel_common.DEFAULT_MAX_POSITIONS):
    return openspiel_common.walk_facts(rules, players, ActionSpace(rules), max_positions)


def test_tictactoe_facts_are_openspiels_and_a_second_load_is_not_walked_again(monkeypatch):
    """OpenSpiel's tic_tac_toe: at most 9 moves, returns -1 to 1, zero-sum (5,478 positions)."""
    made = walks(monkeypatch)
    first = facts(rulelang.load(str(TICTACTOE)))
    assert first == {"complete": True, "positions": 5478, "max_length": 9, "min_returns": -1.0,
                     "max_returns": 1.0, "zero_sum": True}
    again = facts(rulelang.load(str(TICTACTOE)))  # another Ruleset of the same file
    assert again == first and len(made) == 1
    again["max_length"] = 0  # (a caller's copy: the kept answer is not changed by it)
    assert facts(rulelang.load(str(TICTACTOE))) == first and len(made) == 1


def test_other_rules_or_bounds_are_walked_afresh(monkeypatch):
    made = walks(monkeypatch)
    text = TICTACTOE.read_text(encoding="utf-8")
    rules = rulelang.loads(text, name="a.rules")
    assert facts(rules)["complete"] and len(made) == 1
    given_up = facts(rules, max_positions=100)
    assert given_up == {"complete": False, "reason": "more than 100 positions"} and len(made) == 2
    assert facts(rules, max_positions=100) == given_up and len(made) == 2  # (a count: kept as well)
    # another text (here only a comment more: the key is the text read, not what it means): its own walk
    other = rulelang.loads(text + "\n# another file\n", name="a.rules")
    facts(other)
    assert len(made) == 3


def test_an_answer_from_a_rule_error_is_not_kept(monkeypatch):
    """A rule error may come from the clock (the rules' time limit): the next walk tries again."""
    made = walks(monkeypatch)
    rules = rulelang.loads('''game "Err" { players 2 }
var n: int
action step { effect { n = 10 / (1 - n) } }
flow { loop { for p in players { turn p { offer [step] to p } } } }
ending "long" when n > 100
score p = n
''')
    got = facts(rules)
    assert not got["complete"] and got["reason"].startswith("GameError") and "error" not in got
    facts(rules)
    assert len(made) == 2

"""The heuristic agent (interpreter/heuristic.py, docs/agents.md) and the `heuristic p = EXPR` declaration
(docs/language.md): one move of lookahead on the rule file's own estimate, knowing only what its seat
knows; usable by name in play, simulate and compare."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import rulelang
from interpreter.agents import make_agent, parse_agent_specs
from interpreter.determinize import determinize
from interpreter.heuristic import HeuristicAgent
from rulelang import RuleError

ROOT = Path(__file__).resolve().parent.parent
GAME_FILES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "games").rglob("*.rules"))

RACE = '''game "Race" { players 2 }
per player var vp: int
per player var gems: int
action mine { effect { gems[me] += 1 } }
action build { require gems[me] >= 2  effect { gems[me] -= 2  vp[me] += 3 } }
action idle { effect { } }
flow { loop { for p in players { turn p { offer [idle, mine, build] to p } } } }
ending "ten" when any(players, p => vp[p] >= 9)
score p = vp[p]
%s
'''


def play(rs, agents, seed=1, limit=500):
    g = rs.new_game(len(agents), seed=seed)
    for _ in range(limit):
        if g.is_over():
            break
        g.apply(agents[g.current_player].choose(g, g.current_player).id)
    return g


def test_the_declaration_is_checked_like_a_score():
    rs = rulelang.loads(RACE % "heuristic p = 3 * vp[p] + gems[p]")
    g = rs.new_game(2, seed=1)
    g.apply("mine")
    assert g.heuristics() == [1, 0]
    with pytest.raises(RuleError) as e:
        rulelang.loads(RACE % 'heuristic p = "good"')
    assert [d.code for d in e.value.diagnostics] == ["E301"] and "heuristic" in e.value.diagnostics[0].message
    with pytest.raises(RuleError) as e:
        rulelang.loads(RACE % "heuristic p = vp[p]\nheuristic p = gems[p]")
    assert [d.code for d in e.value.diagnostics] == ["E101"]
    rs = rulelang.loads(RACE % "heuristic p = vp[p]\nvariant v { override heuristic p = gems[p] }", variants=["v"])
    g = rs.new_game(2, seed=1)
    g.apply("mine")
    assert g.heuristics() == [1, 0]


def test_it_plays_towards_what_the_heuristic_values():
    """With gems and points valued, it mines then builds: it wins the race against random play, and far
    faster than the score alone (which sees no worth in a gem) lets it."""
    rs = rulelang.loads(RACE % "heuristic p = 3 * vp[p] + gems[p]")
    wins, decisions = 0, []
    for seed in range(20):
        g = play(rs, [HeuristicAgent(seed=seed), make_agent("random", seed + 100)], seed)
        wins += g.winners() == [0]
        decisions.append(len(g.log))
    assert wins >= 19
    # 3 builds of 2 gems: 9 own decisions at best, and the other seat's 8 between them
    assert max(decisions) == 17


def test_without_a_heuristic_the_score_is_used():
    rs = rulelang.loads(RACE % "")
    g = rs.new_game(2, seed=1)
    g.apply("mine")
    g.apply("idle")
    g.apply("mine")
    g.apply("idle")
    assert HeuristicAgent(seed=1).choose(g, 0).id == "build"  # 3 points now beat everything else


def test_it_takes_a_winning_move_at_once():
    rs = rulelang.load(str(ROOT / "games/examples/connect4.rules"))
    g = rs.new_game(2, seed=1)
    for move in ["drop(0)", "drop(1)", "drop(0)", "drop(1)", "drop(0)", "drop(1)"]:
        g.apply(move)
    assert HeuristicAgent(seed=3).choose(g, 0).id == "drop(0)"


def test_it_uses_only_what_its_seat_knows():
    """Two Kuhn states P0 cannot tell apart (P1's card redealt) give the same choice for the same seed."""
    rs = rulelang.load(str(ROOT / "games/examples/kuhn_poker.rules"))
    for seed in range(6):
        g = rs.new_game(2, seed=seed)
        twin = determinize(g, 0, random.Random(50 + seed))
        assert twin.view(0) == g.view(0)
        assert HeuristicAgent(seed=seed).choose(g, 0).id == HeuristicAgent(seed=seed).choose(twin, 0).id


def test_specs_and_their_errors():
    assert make_agent("heuristic", 1).name == "heuristic"
    agent = make_agent("heuristic:15", 1)
    assert isinstance(agent, HeuristicAgent) and agent.randomness == 15
    assert parse_agent_specs("heuristic:10,random", 2) == ["heuristic:10", "random"]
    for bad in ("heuristic:101", "heuristic:x", "heuristic:1:2", "heuristic:-1"):
        with pytest.raises(ValueError) as e:
            make_agent(bad, 1)
        assert "\n" not in str(e.value) and "percentage" in str(e.value)


def test_the_same_seed_gives_the_same_game():
    rs = rulelang.loads(RACE % "heuristic p = 3 * vp[p] + gems[p]")
    a = play(rs, [make_agent("heuristic:30", 4), make_agent("heuristic:30", 5)], 9)
    b = play(rs, [make_agent("heuristic:30", 4), make_agent("heuristic:30", 5)], 9)
    assert a.to_json() == b.to_json()


@pytest.mark.parametrize("path", GAME_FILES)
def test_it_plays_every_game_file(path):
    rs = rulelang.load(str(ROOT / path))
    n = min(rs.player_counts)
    g = play(rs, [make_agent("heuristic:10", 7 + seat) for seat in range(n)], seed=2, limit=150)
    assert len(g.log) > 0 and (g.is_over() or len(g.log) >= 100)

"""The heuristic agent (interpreter/heuristic.py, docs/agents.md) and the `heuristic p = EXPR` declaration
(docs/language.md): a greedy lookahead to the end of the action on the rule file's own estimate, knowing
only what its seat knows; usable by name in play, simulate and compare."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import rulelang
from interpreter.agents import make_agent, parse_agent_specs
from interpreter.determinize import determinize
from interpreter import heuristic
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
    for bad in ("heuristic:101", "heuristic:x", "heuristic:1:2:3:4", "heuristic:-1"):
        with pytest.raises(ValueError) as e:
            make_agent(bad, 1)
        assert "\n" not in str(e.value) and "percentage" in str(e.value)
    assert agent.follow == heuristic.MAX_FOLLOW
    shallow = make_agent("heuristic:10:0", 1)
    assert shallow.follow == 0 and shallow.randomness == 10 and shallow.name == "heuristic:10:0"
    assert parse_agent_specs("heuristic:10:0", 2) == ["heuristic:10:0"] * 2
    for bad in ("heuristic:10:x", "heuristic:10:65", "heuristic:10:-1"):
        with pytest.raises(ValueError) as e:
            make_agent(bad, 1)
        assert "\n" not in str(e.value) and "followed inside an action" in str(e.value)


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


# An action made of two decisions: investing costs a gold coin at once, and only its inner choice (how
# many points) shows what it is worth; pocketing gains the coin. `bet` is decided by a die.
CHAIN = '''game "Chain" { players 2 }
per player var vp: int
per player var gold: int
action invest { effect { gold[me] -= 1  let k = choose one of 0..3 by me prompt "how many points?"  vp[me] += 2 * k } }
action pocket { effect { gold[me] += 1 } }
action bet { effect { let r = roll one of 1..6  if r <= 2 { vp[me] += 1 } else { gold[me] -= 1 } } }
action wait { effect { } }
action burn { effect { gold[me] -= 1 } }
flow { loop { for p in players { turn p { offer [%s] to p } } } }
ending "points" when any(players, p => vp[p] >= 12)
score p = vp[p]
heuristic p = 3 * vp[p] + gold[p]
'''


def chain(*offered):
    return rulelang.loads(CHAIN % ", ".join(offered))


def test_an_action_is_weighed_by_what_it_achieves_not_by_its_first_step():
    """Investing is a coin for up to 6 points (worth 18 - 1); pocketing a coin is worth 1. One decision
    ahead only the coin paid shows, and pocketing looks better; completing the action shows the points."""
    g = chain("pocket", "invest").new_game(2, seed=1)
    for seed in range(5):
        assert HeuristicAgent(seed=seed, follow=0).choose(g, 0).id == "pocket"
        agent = HeuristicAgent(seed=seed)
        assert agent.choose(g, 0).id == "invest"
    g.apply("invest")
    assert HeuristicAgent(seed=1).choose(g, 0).id == "3"


def test_it_does_not_see_the_rolls_to_come():
    """Nothing is hidden in the game, but the next roll is not known to anybody: games that differ only
    in the state of their generator give the same choice for the same agent seed."""
    rs = chain("wait", "bet")
    for seed in range(6):
        choices = set()
        for state in range(12):
            g = rs.new_game(2, seed=1)
            g.rng = state * 7919
            choices.add(HeuristicAgent(seed=seed).choose(g, 0).id)
        assert len(choices) == 1, (seed, choices)


def test_a_chance_step_is_weighed_by_its_mean_over_samples():
    """The bet wins a point (3) one time in three and costs a coin (1) otherwise: worth +1/3 on average,
    better than waiting (0). One sample of the roll (the default) says so one time in three; the mean of
    three samples (`chance_samples=3`) says so in most decisions."""
    rs = chain("wait", "bet")
    g = rs.new_game(2, seed=1)
    averaged = sum(HeuristicAgent(seed=seed, chance_samples=3).choose(g, 0).id == "bet" for seed in range(40))
    single = sum(HeuristicAgent(seed=seed, chance_samples=1).choose(g, 0).id == "bet" for seed in range(40))
    assert averaged > 20 > single, (averaged, single)


def test_random_decisions_are_drawn_among_the_near_best():
    """`heuristic:100` decides every time at random, but never burns a coin for nothing: that is the
    worst of the three actions, outside the best two."""
    rs = chain("pocket", "wait", "burn")
    agents = [make_agent("heuristic:100", 3), make_agent("heuristic:100", 4)]
    g = rs.new_game(2, seed=1)
    taken = set()
    for _ in range(60):
        action = agents[g.current_player].choose(g, g.current_player)
        taken.add(action.id)
        g.apply(action.id)
    assert taken == {"pocket", "wait"}


SPIN = '''game "Spin" { players 2 }
per player var n: int
action spin { effect { loop { let k = choose one of 0..40 by me prompt "again?"  n[me] += k } } }
action stop { effect { } }
flow { loop { for p in players { turn p { offer [stop, spin] to p } } } }
score p = n[p]
'''  # an action that asks its player again and again (also tests/test_heuristic_plan.py)


def test_following_an_endless_chain_of_choices_is_bounded():
    """A hostile file: an action that asks its player again and again, with many options. The agent
    follows at most MAX_FOLLOW choices per candidate and applies at most about MAX_LOOKS decisions per
    decision of its own, then decides."""
    rs = rulelang.loads(SPIN)
    g = rs.new_game(2, seed=1)
    agent = HeuristicAgent(seed=1)
    assert agent.choose(g, 0).id == "spin"
    bound = heuristic.MAX_FOLLOW * heuristic.FOLLOW_OPTIONS + 2
    assert agent.looks <= bound
    g.apply("spin")
    assert agent.choose(g, 0).id in {str(k) for k in range(41)}
    assert agent.looks <= heuristic.MAX_LOOKS + heuristic.FOLLOW_OPTIONS + 41 * heuristic.CHANCE_SAMPLES


def test_the_action_in_progress_is_the_offered_action_until_it_is_done():
    """Game.action_in_progress() (docs/api.md): None at an offer and in setup; the invested action while
    its inner choice is pending; None again once the choice has completed it."""
    rs = chain("pocket", "invest")
    g = rs.new_game(2, seed=1)
    assert g.decision_kind == "action" and g.action_in_progress() is None
    g.apply("invest")
    assert g.decision_kind == "choose"
    depth, name = g.action_in_progress()
    assert name == "invest" and depth >= 1
    g.apply("2")
    assert g.decision_kind == "action" and g.action_in_progress() is None and g.current_player == 1
    setup = rulelang.loads('''game "Pick" { players 2 }
var first: int
setup { let k = choose one of 1..3 by 0 prompt "which?"  first = k }
action go { effect { } }
flow { loop { for p in players { turn p { offer [go] to p } } } }
score p = first
''').new_game(2, seed=1)
    assert setup.decision_kind == "choose" and setup.action_in_progress() is None


def test_it_does_not_go_round_in_circles_for_ever():
    """An offer repeated until the player stops: polishing always looks a little better than stopping
    (the heuristic values the shine, not the rounds), so the greedy choice never stops. After
    MAX_TURN_DECISIONS decisions in one turn the agent takes any way out at random, and the game ends."""
    rs = rulelang.loads('''game "Polish" { players 2 }
per player var shine: int
per player var done: bool
per player var rounds: int
action polish { effect { shine[me] += 1 } }
action stop { effect { done[me] = true  rounds[me] += 1 } }
flow { loop { for p in players { turn p { done[p] = false  while not done[p] { offer [polish, stop] to p } } } } }
ending "two rounds" when all(players, p => rounds[p] >= 2)
score p = rounds[p]
heuristic p = shine[p]
''')
    agents = [HeuristicAgent(seed=5), HeuristicAgent(seed=6)]
    g = play(rs, agents, seed=1, limit=1400)  # (4 turns of at most 300 decisions, and the way out)
    assert g.is_over()

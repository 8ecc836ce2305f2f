"""The heuristic agent's plan of an action (interpreter/heuristic.py `_plan`, docs/agents.md "Planning
an action"): with a beam of width B above 1 (spec `heuristic:P:F:B`) the same seat's choices inside an
action are searched B states wide, so a price whose worth shows only several choices later is paid;
B = 1 is the greedy completion, unchanged."""
from __future__ import annotations

import pytest

import rulelang
from interpreter import heuristic
from interpreter.agents import check_agent_spec, make_agent
from interpreter.heuristic import HeuristicAgent
from tests.test_heuristic_agent import SPIN, play

# A walk on a line: two free steps, a coin for a third. The reward (5 points) lies 3 steps away, so only
# a walk with the coin paid reaches it. Each step costs energy; the position itself is worth nothing to
# the heuristic, so one decision ahead (or greedily, step by step) the coin and every step look like a
# loss, and stopping at once like the best. Paid and walked to the reward: 4 * 5 - 3 - 3 = +14; not
# paid: at best 0 (stop at once).
WALK = '''game "Walk" { players 2 }
per player var vp: int
per player var gold: int
per player var energy: int
per player var pos: int
action walk {
  effect {
    let x = choose one of 0..1 by me prompt "a coin for an extra step?"
    gold[me] -= x
    let left = 2 + x
    while left > 0 {
      let d = choose one of [-1, 1] by me optional prompt "step which way (done: stop)?"
      if d == none { break }
      pos[me] += d
      energy[me] -= 1
      left -= 1
      if pos[me] == 3 { vp[me] += 5 }
    }
    pos[me] = 0
  }
}
action idle { effect { } }
setup { for p in players { gold[p] = 3  energy[p] = 10 } }
flow { loop { for p in players { turn p { offer [idle, walk] to p } } } }
ending "points" when any(players, p => vp[p] >= 20)
score p = vp[p]
heuristic p = 4 * vp[p] + 3 * gold[p] + energy[p]
'''

SEEDS = range(10)


@pytest.fixture(scope="module")
def walk():
    return rulelang.loads(WALK)


def at_the_price(rs):
    g = rs.new_game(2, seed=1)
    g.apply("walk")
    assert g.decision_kind == "choose" and [a.id for a in g.legal_actions()] == ["0", "1"]
    return g


def test_greedy_completion_does_not_pay_for_the_extra_step(walk):
    """B = 1 (the default): after the coin, each step looks worse than stopping, so paying never looks
    better than not paying."""
    g = at_the_price(walk)
    assert [HeuristicAgent(seed=s).choose(g, 0).id for s in SEEDS] == ["0"] * 10
    assert [HeuristicAgent(seed=s, follow=0).choose(g, 0).id for s in SEEDS] == ["0"] * 10


def test_a_beam_pays_for_the_step_that_reaches_the_reward(walk):
    """B = 4 keeps every walk of two steps (left-left, left-right, right-left, right-right), so the third
    step to the reward is found behind the coin: +14 against 0. The same with only the choices inside an
    action planned (`inner`), and through the spec."""
    g = at_the_price(walk)
    assert [HeuristicAgent(seed=s, beam=4).choose(g, 0).id for s in SEEDS] == ["1"] * 10
    assert [HeuristicAgent(seed=s, beam=4, inner=True).choose(g, 0).id for s in SEEDS] == ["1"] * 10
    assert [make_agent("heuristic:0:8:4", s).choose(g, 0).id for s in SEEDS] == ["1"] * 10


def test_a_planned_action_is_weighed_by_its_best_plan(walk):
    """At the offer, the walk planned is worth +14 and idling 0: the beam always walks. Once paid, it
    steps towards the reward (right), never away from it nor stops."""
    g = walk.new_game(2, seed=1)
    assert [HeuristicAgent(seed=s, beam=4).choose(g, 0).id for s in SEEDS] == ["walk"] * 10
    g = at_the_price(walk)
    g.apply("1")
    for _ in range(3):
        assert {HeuristicAgent(seed=s, beam=4).choose(g, 0).id for s in SEEDS} == {"1"}
        g.apply("1")
    assert g.view()["vars"]["vp"] == [5, 0] and g.view()["vars"]["gold"] == [2, 3]


def test_a_plan_ends_only_where_the_rules_end_the_action():
    """Grabbing gives 5 points and then forces a penalty (4 or 6 points): at best +1, worse than the safe
    +2. The half-done grab (+5, the penalty still to choose) is not an end of the plan."""
    rs = rulelang.loads('''game "Grab" { players 2 }
per player var vp: int
action grab { effect { vp[me] += 5  let k = choose one of [4, 6] by me prompt "which penalty?"  vp[me] -= k } }
action safe { effect { vp[me] += 2 } }
flow { loop { for p in players { turn p { offer [grab, safe] to p } } } }
ending "points" when any(players, p => vp[p] >= 20)
score p = vp[p]
''')
    g = rs.new_game(2, seed=1)
    assert {HeuristicAgent(seed=s, beam=4).choose(g, 0).id for s in SEEDS} == {"safe"}
    assert {HeuristicAgent(seed=s, follow=0).choose(g, 0).id for s in SEEDS} == {"grab"}


# Three tokens picked one at a time, worth a 4, b 3, c 2, d 0; a hand of a, c and d earns a bonus of 20.
# Two orders of the same picks are one position (a then b, b then a: the pick's procedure
# has returned, nothing remembers the order). A beam of two keeps, after the first
# pick, a and b; after the second, the two best hands: if a-b and b-a were kept as two, the beam would hold
# one hand and miss a-c, the way to the bonus (the best end then a-b-c, 9 points: idling's 10 is better).
COLLECT = '''game "Collect" { players 2 }
per player var vp: int
per player var hand: set[str]
const worth = {"a": 4, "b": 3, "c": 2, "d": 0}
function held(p: player): int = sum([worth[k] for k in hand[p]])
procedure pick(p: player) {
  let token = choose one of [k for k in ["a", "b", "c", "d"] if k not in hand[p]] by p prompt "which token?"
  hand[p] += to_set([token])
}
action collect {
  effect {
    repeat 3 times { pick(me) }
    vp[me] += held(me) + (if hand[me] == to_set(["a", "c", "d"]) then 20 else 0)
    hand[me] = {}
  }
}
action idle { effect { vp[me] += 10 } }
flow { loop { for p in players { turn p { offer [idle, collect] to p } } } }
ending "points" when any(players, p => vp[p] >= 100)
score p = vp[p]
heuristic p = vp[p] + held(p)
'''


def test_a_beam_keeps_a_position_reached_in_two_orders_once():
    """Beam 2: the hands a-b (7) and a-c (6) are kept after two picks, not a-b twice (7, 7), so the plan
    finds a-c-d (26 points) and the agent collects; one decision ahead or greedily, idling (10) looks best."""
    rs = rulelang.loads(COLLECT)
    g = rs.new_game(2, seed=1)
    assert {HeuristicAgent(seed=s, beam=2).choose(g, 0).id for s in SEEDS} == {"collect"}
    assert {HeuristicAgent(seed=s).choose(g, 0).id for s in SEEDS} == {"idle"}
    g.apply("collect")
    for _ in range(3):
        g.apply(HeuristicAgent(seed=1, beam=2).choose(g, 0).id)
    assert g.view()["vars"]["vp"] == [26, 0]


# A choice of the flow, outside any action: travel (a coin) and then choose where to; only the third place
# pays for the trip (4 points against the coin's 3). One decision ahead the trip is only its price.
TRIP = '''game "Trip" { players 2 }
per player var vp: int
per player var gold: int
setup { for p in players { gold[p] = 5 } }
procedure voyage(p: player) {
  let go = choose one of ["stay", "travel"] by p prompt "travel?"
  if go == "travel" {
    gold[p] -= 1
    let place = choose one of [1, 2, 3] by p prompt "where to?"
    if place == 3 { vp[p] += 4 }
  }
}
flow { loop { for p in players { turn p { voyage(p) } } } }
ending "points" when any(players, p => vp[p] >= 20)
score p = vp[p]
heuristic p = vp[p] + 3 * gold[p]
'''


def test_a_beam_plans_the_flows_choices_too():
    """The flow asks "travel?" and then "where to?", outside any action: a beam plans the two (+1 against
    staying's 0), one decision ahead and the greedy completion (which follows choices inside an action
    only) see the coin go and stay."""
    rs = rulelang.loads(TRIP)
    g = rs.new_game(2, seed=1)
    assert [a.id for a in g.legal_actions()] == ["stay", "travel"]
    assert {HeuristicAgent(seed=s, beam=2).choose(g, 0).id for s in SEEDS} == {"travel"}
    assert {HeuristicAgent(seed=s).choose(g, 0).id for s in SEEDS} == {"stay"}
    assert {HeuristicAgent(seed=s, follow=0).choose(g, 0).id for s in SEEDS} == {"stay"}
    g.apply("travel")
    assert HeuristicAgent(seed=1, beam=2).choose(g, 0).id == "3"


def test_planning_an_endless_chain_of_choices_is_bounded():
    """A hostile file: an action that asks its player again and again. The plan stops F choices deep
    (then the best state reached, where the seat must still choose, is all there is to go by) and a
    decision applies at most about MAX_LOOKS decisions to samples."""
    rs = rulelang.loads(SPIN)
    g = rs.new_game(2, seed=1)
    agent = HeuristicAgent(seed=1, beam=8)
    assert agent.choose(g, 0).id == "spin"
    assert agent.looks <= heuristic.MAX_LOOKS + heuristic.FOLLOW_OPTIONS
    g.apply("spin")
    assert agent.choose(g, 0).id in {str(k) for k in range(41)}
    assert agent.looks <= heuristic.MAX_LOOKS + heuristic.FOLLOW_OPTIONS


def test_specs_of_the_beam_and_their_errors():
    agent = make_agent("heuristic:10:8:4", 1)
    assert (agent.randomness, agent.follow, agent.beam, agent.inner) == (10, 8, 4, False)
    assert agent.name == "heuristic:10:8:4"
    inner = make_agent("heuristic:10:8:4i", 1)
    assert (inner.beam, inner.inner) == (4, True) and check_agent_spec("HEURISTIC:10:8:4I") == "heuristic:10:8:4I"
    assert make_agent("heuristic:10", 1).beam == 1 and make_agent("heuristic:10:0", 1).beam == 1
    for bad in ("heuristic:10:8:0", "heuristic:10:8:x", "heuristic:10:8:65", "heuristic:10:8:-1", "heuristic:10:8:i",
                "heuristic:10:8:4j"):
        with pytest.raises(ValueError) as e:
            make_agent(bad, 1)
        assert "\n" not in str(e.value) and "beam width" in str(e.value), bad
    with pytest.raises(ValueError) as e:
        make_agent("heuristic:10:8:4:2", 1)
    assert "\n" not in str(e.value) and "percentage" in str(e.value)
    with pytest.raises(ValueError):
        HeuristicAgent(beam=0)


def test_a_beam_of_one_plays_exactly_as_before(walk):
    """B = 1 is the greedy completion itself: the same games, byte for byte; and a beam's game is the same
    for the same seeds."""
    a = play(walk, [make_agent("heuristic:30:8", 4), make_agent("heuristic:30:8", 5)])
    b = play(walk, [make_agent("heuristic:30:8:1", 4), make_agent("heuristic:30:8:1", 5)])
    assert a.to_json() == b.to_json()
    c = play(walk, [make_agent("heuristic:30:8:4", 4), make_agent("heuristic:30:8:4", 5)])
    d = play(walk, [make_agent("heuristic:30:8:4", 4), make_agent("heuristic:30:8:4", 5)])
    assert c.to_json() == d.to_json() and c.is_over() and max(c.view()["vars"]["vp"]) >= 20

"""rulelang.openspiel: every rule file as a registered pyspiel game, checked by OpenSpiel's own tools.

* `pyspiel.random_sim_test` (serialization on) on every rule file in games/ and games/examples/ at each
  player count it allows: OpenSpiel's consistency checks of legal actions, chance outcomes, returns, clones
  and serialize/deserialize. The examples and Station play whole games; Vega and Mars play to the
  adapter's documented `max_game_length` (400 here; a game reaching it ends with returns 0), so the test
  stays quick.
* OpenSpiel's Python `MCTSBot` plays a whole game of Station (every seat searches; a small budget) and
  `evaluate_bots` pits MCTS against a random bot on tic-tac-toe.
* Tic-tac-toe through the adapter agrees with OpenSpiel's `tic_tac_toe` on every reachable state (5,478):
  player to move, legal ids through a fixed table, terminal, returns.
* Kuhn poker through the adapter: the whole tree against OpenSpiel's `kuhn_poker`, returns included
  (the file's `payoff`: +2/-2 for a called bet).
* Hidden information: a changed hidden value leaves the other seats' information states and observations
  equal, strings and tensors (Kuhn poker; Mars's private goals, visible to their owner; Vega's face-down
  objects). More on the tensors: tests/test_openspiel_tensors.py.
* Stable ids: over random games, an id always stands for the same decision.
"""
from __future__ import annotations

import json
import random

import pytest

pyspiel = pytest.importorskip("pyspiel")

import rulelang  # noqa: E402
from rulelang.action_space import ActionSpace, ActionSpaceError  # noqa: E402
from rulelang.openspiel import load_game  # noqa: E402

from tests.adapter_games import cases, ruleset  # noqa: E402


# a whole game where it is quick; the others play to the adapter's length bound
SIMS = {"tictactoe.rules": 10, "connect4.rules": 5, "kuhn_poker.rules": 10}


def test_the_three_big_games_allow_two_to_four_players():
    for name in ("station.rules", "vega.rules", "mars.rules"):
        assert ruleset(name).player_counts == (2, 3, 4)


@pytest.mark.parametrize("name,players", cases())
def test_random_sim_test(name, players):
    rs = ruleset(name)
    if name in SIMS or name == "station.rules":
        game = load_game(rs, players=players)
        sims = SIMS.get(name, 1)
    else:  # Vega and Mars: thousands of actions a game; the first 400 (then the game ends at the bound)
        game = load_game(rs, players=players, max_game_length=400)
        sims = 1
    assert game.num_players() == players
    pyspiel.random_sim_test(game, num_sims=sims, serialize=True, verbose=False)


def test_game_type_follows_the_program():
    ttt = load_game(ruleset("tictactoe.rules"))
    kuhn = load_game(ruleset("kuhn_poker.rules"))
    station = load_game(ruleset("station.rules"), players=3)
    t = ttt.get_type()
    assert t.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert t.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    k = kuhn.get_type()
    assert k.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION  # cards visible to owner
    assert k.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    # a declared payoff whose sums are 0 at every end of the whole tree (walked: it is small)
    assert k.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert load_game(ruleset("kuhn_poker.rules"), zero_sum=False).get_type().utility == \
        pyspiel.GameType.Utility.GENERAL_SUM
    assert station.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION  # its bags
    assert station.num_players() == 3
    assert (t.min_num_players, t.max_num_players) == (2, 2)
    assert (station.get_type().min_num_players, station.get_type().max_num_players) == (2, 4)
    # zero-sum returns: a loser -1, a lone winner n - 1
    assert (station.min_utility(), station.max_utility()) == (-1.0, 2.0)
    assert ttt.max_game_length() == 9  # the longest game of the whole tree
    assert station.max_game_length() == 20_000  # too large to walk: the documented default
    assert ttt.num_distinct_actions() == 9  # the nine cells, as in OpenSpiel
    assert load_game(ruleset("connect4.rules")).num_distinct_actions() == 7


def test_bad_player_counts_and_bounds_are_one_line_errors():
    with pytest.raises(ValueError, match="for 2 players, not 3"):
        load_game(ruleset("tictactoe.rules"), players=3)
    with pytest.raises(ValueError, match="max_game_length"):
        load_game(ruleset("tictactoe.rules"), max_game_length=0)
    with pytest.raises(ActionSpaceError, match="int_range"):
        ActionSpace(ruleset("tictactoe.rules"), int_range=(5, 1))


def test_a_state_saves_as_the_rules_save_and_comes_back():
    game = load_game(ruleset("kuhn_poker.rules"))
    s = _dealt(game, [2, 0])
    text = s.serialize()
    assert json.loads(json.loads(text)["save"])["data"]["card"] == [2, 0]  # the rules' own to_json()
    back = game.deserialize_state(text)
    assert str(back) == str(s) and back.legal_actions() == s.legal_actions()
    both = pyspiel.serialize_game_and_state(game, s)  # OpenSpiel's own format (pickles the same save)
    _, again = pyspiel.deserialize_game_and_state(both)
    assert again.information_state_string(1) == s.information_state_string(1)
    with pytest.raises(ValueError, match="not a saved state of Kuhn Poker") as err:
        game.deserialize_state('{"save": "{}", "picks": [], "length": 0, "truncated": false}')
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------------------------------------- search
class _NoRollout:
    """An MCTS evaluator without rollouts: 0 for every unfinished position, uniform priors (the search
    still reads the true returns of every end it reaches). Keeps a whole Station game quick."""

    def __init__(self, n):
        self.n = n

    def evaluate(self, state):
        return [0.0] * self.n

    def prior(self, state):
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


def test_mcts_plays_a_whole_game_of_station():
    from open_spiel.python.algorithms import mcts

    game = load_game(ruleset("station.rules"), players=2)
    rng = random.Random(3)
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=2, evaluator=_NoRollout(2),
                       random_state=__import__("numpy").random.RandomState(3), solve=False)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, probs)[0])
            continue
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        decisions += 1
    assert decisions > 50
    assert state._g.g.over  # ended by the rules, not by the length bound
    returns = state.returns()
    assert sum(returns) == 0 and sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


def test_evaluate_bots_mcts_against_random_on_tictactoe():
    import numpy as np
    from open_spiel.python.algorithms import evaluate_bots, mcts

    game = load_game(ruleset("tictactoe.rules"))
    rng = np.random.RandomState(7)
    totals = np.zeros(2)
    for i in range(6):
        search = mcts.MCTSBot(game, 2.0, 60, mcts.RandomRolloutEvaluator(2, rng), random_state=rng)
        rand = pyspiel.make_uniform_random_bot(1 - i % 2, 11 + i)
        bots = [search, rand] if i % 2 == 0 else [rand, search]
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        totals += returns if i % 2 == 0 else returns[::-1]
    assert totals[0] > totals[1]  # the searching bot comes out ahead of the random one


# ---------------------------------------------------------------------------------------------- tic-tac-toe
def test_tictactoe_agrees_with_openspiel_on_every_reachable_state():
    ours = load_game(ruleset("tictactoe.rules"))
    theirs = pyspiel.load_game("tic_tac_toe")
    # the fixed table: our id -> OpenSpiel's action, from the id's text "place(r,c)" -> 3r + c
    start = ours.new_initial_state()
    table = {}
    for a in range(ours.num_distinct_actions()):
        text = start.action_to_string(0, a)
        r, c = text[len("place("):-1].split(",")
        table[a] = 3 * int(r) + int(c)
    assert sorted(table.values()) == list(range(9))
    seen = set()
    stack = [(start, theirs.new_initial_state())]
    while stack:
        s, t = stack.pop()
        key = str(t)
        if key in seen:
            continue
        seen.add(key)
        assert s.is_terminal() == t.is_terminal(), key
        assert s.current_player() == t.current_player(), key
        if t.is_terminal():
            assert s.returns() == t.returns(), key
            continue
        legal = s.legal_actions()
        assert sorted(table[a] for a in legal) == t.legal_actions(), key
        for a in legal:
            stack.append((s.child(a), t.child(table[a])))
    assert len(seen) == 5478


# ---------------------------------------------------------------------------------------------- Kuhn poker
def test_kuhn_poker_returns_match_openspiel_over_the_whole_tree():
    ours = load_game(ruleset("kuhn_poker.rules"))
    theirs = pyspiel.load_game("kuhn_poker")
    start = ours.new_initial_state()
    names = {start.action_to_string(0, a): a for a in range(ours.num_distinct_actions())}
    to_ours = {0: names["pass"], 1: names["bet"]}
    assert to_ours == {0: 0, 1: 1}  # OpenSpiel's own ids: pass 0, bet 1 (the order the file declares them)
    ends = 0

    def visit(s, t):
        nonlocal ends
        assert s.current_player() == t.current_player()
        if t.is_terminal():
            assert s.returns() == t.returns()
            ends += 1
            return
        if t.is_chance_node():
            # a card c is the value c, and its chance outcome id is c, as in OpenSpiel
            assert sorted(s.chance_outcomes()) == sorted(t.chance_outcomes())
            assert sorted((start.action_to_string(-1, a), p) for a, p in s.chance_outcomes()) == \
                sorted((str(a), p) for a, p in t.chance_outcomes())
            for a, _ in t.chance_outcomes():
                mine = next(x for x, _ in s.chance_outcomes() if s.action_to_string(-1, x) == str(a))
                visit(s.child(mine), t.child(a))
            return
        assert sorted(s.legal_actions()) == sorted(to_ours[a] for a in t.legal_actions())
        for a in t.legal_actions():
            visit(s.child(to_ours[a]), t.child(a))

    visit(start, theirs.new_initial_state())
    assert ends == 30  # 6 deals x 5 betting sequences


# ---------------------------------------------------------------------------------------------- hidden information
def _dealt(game, cards):
    s = game.new_initial_state()
    for c in cards:
        s.apply_action(next(a for a, _ in s.chance_outcomes() if s.action_to_string(-1, a) == str(c)))
    return s


def test_kuhn_a_changed_hidden_card_leaves_the_other_seats_information_equal():
    game = load_game(ruleset("kuhn_poker.rules"))
    start = game.new_initial_state()
    bet = next(a for a in range(game.num_distinct_actions()) if start.action_to_string(0, a) == "bet")
    for mine in range(3):
        others = [c for c in range(3) if c != mine]
        a, b = _dealt(game, [mine, others[0]]), _dealt(game, [mine, others[1]])  # only P1's card differs
        for s in (a, b):
            s.apply_action(bet)  # P0 bets; P1 to decide: no showdown yet
        assert a.information_state_string(0) == b.information_state_string(0)
        assert a.observation_string(0) == b.observation_string(0)
        assert a.information_state_tensor(0) == b.information_state_tensor(0)
        assert a.observation_tensor(0) == b.observation_tensor(0)
        assert a.information_state_string(1) != b.information_state_string(1)  # P1 sees its own card
        assert a.information_state_tensor(1) != b.information_state_tensor(1)


def test_mars_a_changed_private_goal_leaves_the_other_seats_information_equal():
    game = load_game(ruleset("mars.rules"), players=2)
    s = game.new_initial_state()
    rng = random.Random(5)
    while s.is_chance_node() or not s._g.g.data["private_goals"][1]:
        if s.is_chance_node():
            s.apply_action(rng.choice([a for a, _ in s.chance_outcomes()]))
        else:
            s.apply_action(rng.choice(s.legal_actions()))
    other = s.clone()
    g = other._g.g
    goals = list(g.data["private_goals"])
    rows = next(r for r in g.rs.table_rows.values() if goals[1][0] in r)  # the goal table
    unused = [r for r in rows if r not in goals[0] and r not in goals[1]]
    goals[1] = (unused[0],) + tuple(goals[1][1:])
    g.data["private_goals"] = tuple(goals)
    other._views = {}
    assert s.information_state_string(0) == other.information_state_string(0)
    assert s.observation_string(0) == other.observation_string(0)
    assert s.information_state_tensor(0) == other.information_state_tensor(0)
    assert s.observation_tensor(0) == other.observation_tensor(0)
    assert s.information_state_string(1) != other.information_state_string(1)  # the owner sees the change
    assert s.information_state_tensor(1) != other.information_state_tensor(1)


def test_vega_a_changed_face_down_object_leaves_every_seat_information_equal():
    game = load_game(ruleset("vega.rules"), players=2)
    s = game.new_initial_state()
    rng = random.Random(5)
    for _ in range(60):  # setup: objects placed face down on the map
        s.apply_action(rng.choice([a for a, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()))
    g = s._g.g
    unknown = [k for k in g.data["object_at"]
               if all(str(k).replace(" ", "") not in json.dumps(g.view(p)["vars"]["object_at"]) for p in (0, 1))]
    assert unknown, "the test needs a face-down object nobody knows"
    other = s.clone()
    objects = dict(other._g.g.data["object_at"])
    objects[unknown[0]] = next(v for v in objects.values() if v != objects[unknown[0]])
    other._g.g.data["object_at"] = objects
    assert str(other) != str(s)  # the full state differs
    other._views = {}
    for p in (0, 1):
        assert other.information_state_string(p) == s.information_state_string(p)
        assert other.observation_string(p) == s.observation_string(p)
        assert other.information_state_tensor(p) == s.information_state_tensor(p)
        assert other.observation_tensor(p) == s.observation_tensor(p)


# ---------------------------------------------------------------------------------------------- stable ids
@pytest.mark.parametrize("name", ["station.rules", "vega.rules", "connect4.rules"])
def test_an_id_always_stands_for_the_same_decision(name):
    rs = ruleset(name)
    space = ActionSpace(rs)
    meaning = {}
    for seed in range(2):
        g = rs.new_game(rs.player_counts[-1] if name != "connect4.rules" else 2, seed=seed, chance="explicit")
        rng = random.Random(seed)
        steps = 0
        while not g.is_over() and steps < 400:
            opts = space.options(g)
            ids = [i for i, _, _ in opts]
            chance = g.current_player == -1  # chance outcomes are numbered on their own, as in OpenSpiel
            bound = space.max_chance_outcomes if chance else space.size
            assert ids == sorted(set(ids)) and all(0 <= i < bound for i in ids)
            for i, oid, _ in opts:
                if oid is not None:  # a whole decision: its rule-level id
                    assert meaning.setdefault((chance, i), oid) == oid, (i, oid, meaning[chance, i])
            full = [o for _, o, _ in opts if o is not None]
            g.apply(rng.choice(full) if full else rng.choice(g.legal_actions()))
            steps += 1


# ---------------------------------------------------------------------------------------------- bounds
PICK = """
game "Pick" { players 2 }
var total: int = 0
var last: int = 0
action pick(a in 0..99, b in 0..99) {
  require a < 3 and b < 2
  effect { total += a * 10 + b  last = a * 10 + b }
}
action pass { effect { last = 0 } }
flow { repeat 2 times { for p in players { turn p { offer [pick, pass] to p } } } }
score p = total
payoff p = if p == 0 then total else 0
"""


def test_a_large_action_is_taken_in_steps_with_stable_ids():
    rs = rulelang.loads(PICK)
    space = ActionSpace(rs)
    assert space.stepwise("pick") and not space.stepwise("pass")  # 10,000 combinations > DIRECT_LIMIT
    game = load_game(rs)
    s = game.new_initial_state()
    ids = s.legal_actions()
    names = {s.action_to_string(0, a): a for a in ids}
    assert set(names) == {"pick(...)", "pass"}
    s.apply_action(names["pick(...)"])
    assert s.current_player() == 0  # the same seat picks the parameters
    assert [s.action_to_string(0, a) for a in s.legal_actions()] == ["0", "1", "2"]  # a < 3
    assert "picks:pick" in s.information_state_string(0)
    assert "picks" not in s.information_state_string(1)  # another seat's decision in progress
    s.apply_action(space.value_id(2))
    assert [s.action_to_string(0, a) for a in s.legal_actions()] == ["0", "1"]  # b < 2
    s.apply_action(space.value_id(1))
    assert s.current_player() == 1 and s._g.g.data["last"] == 21  # the whole action pick(2,1) ran once
    assert rs.new_game(2).legal_actions()  # the rules still see whole actions


def test_max_game_length_ends_the_game_with_returns_zero():
    game = load_game(ruleset("tictactoe.rules"), max_game_length=3)
    s = game.new_initial_state()
    for a in (0, 3, 1):
        s.apply_action(a)
    assert s.is_terminal() and s.returns() == [0.0, 0.0]
    assert not s._g.g.over


def _pick_game(payoff, **kw):
    rs = rulelang.loads(PICK.replace("payoff p = if p == 0 then total else 0", payoff))
    game = load_game(rs, **kw)
    s = game.new_initial_state()
    while not s.is_terminal():
        s.apply_action(s.legal_actions()[0])
    return s


def test_payoffs_are_checked_against_the_declared_bounds_and_zero_sum():
    assert _pick_game("payoff p = if p == 0 then 5 else -5", zero_sum=True).returns() == [5.0, -5.0]
    with pytest.raises(ValueError, match="do not sum to 0"):
        _pick_game("payoff p = 5", zero_sum=True).returns()
    with pytest.raises(ValueError, match="payoff_bounds"):
        _pick_game("payoff p = 5000", payoff_bounds=(-1000, 1000)).returns()
    assert _pick_game("payoff p = 5000", payoff_bounds=(0, 10_000)).returns() == [5000.0, 5000.0]
    # not given: the lowest and highest payoff of the whole tree (the game is small enough to walk)
    game = load_game(rulelang.loads(PICK))
    assert (game.min_utility(), game.max_utility()) == (0.0, 84.0)  # seat 1: 0; seat 0: four turns of pick(2,1)
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM  # seat 1 gets 0 while seat 0 gains
    assert game.max_game_length() == 4 * 3  # four turns, each a pick in three steps (the action, a, b)


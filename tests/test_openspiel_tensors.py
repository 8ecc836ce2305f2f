"""rulelang.openspiel's sizes and tensors against OpenSpiel's own games and tools (issue 34).

* Sizes: tic-tac-toe, connect four and Kuhn poker through the adapter report what OpenSpiel's
  `tic_tac_toe`, `connect_four` and `kuhn_poker` report: distinct actions, chance outcomes, utility
  bounds and kind, chance mode, information, game length.
* `exploitability` runs on the Kuhn file as shipped (no `zero_sum=True`) and gives OpenSpiel's own
  numbers, for the uniform policy and after CFR.
* Tensors: every rule file has `information_state_tensor` and `observation_tensor` of the declared
  shape, and OpenSpiel's `rl_environment.Environment` plays it.
* The tensors agree with the views: over the whole Kuhn tree two decision nodes have the same tensor for
  a seat exactly when OpenSpiel's `kuhn_poker` gives that seat the same information state; over every
  reachable tic-tac-toe position, exactly when OpenSpiel's `tic_tac_toe` gives the same observation
  tensor. A hidden value changed (a card, a bag's contents) leaves the tensor of every seat that may not
  see it unchanged (see also the hidden-information tests of test_openspiel_adapter.py).
"""
from __future__ import annotations

import random

import pytest

pyspiel = pytest.importorskip("pyspiel")
np = pytest.importorskip("numpy")

from rulelang.openspiel import load_game  # noqa: E402

from tests.adapter_games import cases, ruleset  # noqa: E402

NATIVE = {"tictactoe.rules": "tic_tac_toe", "connect4.rules": "connect_four", "kuhn_poker.rules": "kuhn_poker"}


# ---------------------------------------------------------------------------------------------- sizes
@pytest.mark.parametrize("name", sorted(NATIVE))
def test_sizes_match_native_openspiel(name):
    ours, theirs = load_game(ruleset(name)), pyspiel.load_game(NATIVE[name])
    assert ours.num_distinct_actions() == theirs.num_distinct_actions()
    assert ours.max_chance_outcomes() == theirs.max_chance_outcomes()
    assert (ours.min_utility(), ours.max_utility()) == (theirs.min_utility(), theirs.max_utility())
    assert ours.utility_sum() == theirs.utility_sum()
    a, b = ours.get_type(), theirs.get_type()
    assert (a.utility, a.chance_mode, a.information, a.dynamics) == (b.utility, b.chance_mode, b.information,
                                                                     b.dynamics)
    # (connect four's 42 comes from its header's `max_decisions 42`: its tree is too large to walk)
    assert ours.max_game_length() == theirs.max_game_length()


def test_kuhn_ids_are_openspiels():
    ours, theirs = load_game(ruleset("kuhn_poker.rules")), pyspiel.load_game("kuhn_poker")
    s, t = ours.new_initial_state(), theirs.new_initial_state()
    assert s.chance_outcomes() == t.chance_outcomes()  # cards 0, 1, 2 with probability 1/3
    for card in (2, 0):
        s.apply_action(card)
        t.apply_action(card)
    assert s.legal_actions() == t.legal_actions() == [0, 1]
    assert [s.action_to_string(0, a) for a in (0, 1)] == ["pass", "bet"]
    assert [t.action_to_string(0, a) for a in (0, 1)] == ["Pass", "Bet"]


# ---------------------------------------------------------------------------------------------- solving
def test_exploitability_runs_on_kuhn_as_shipped_and_matches_openspiel():
    from open_spiel.python import policy
    from open_spiel.python.algorithms import cfr, exploitability

    ours, theirs = load_game(ruleset("kuhn_poker.rules")), pyspiel.load_game("kuhn_poker")
    got = []
    for game in (ours, theirs):
        uniform = exploitability.exploitability(game, policy.UniformRandomPolicy(game))
        solver = cfr.CFRSolver(game)
        for _ in range(20):
            solver.evaluate_and_update_policy()
        got.append((uniform, exploitability.nash_conv(game, solver.average_policy())))
    assert got[0] == pytest.approx(got[1], abs=1e-12)
    assert got[1][0] == pytest.approx(11 / 24)  # OpenSpiel's exploitability of the uniform policy on Kuhn


# ---------------------------------------------------------------------------------------------- every game
@pytest.mark.parametrize("name,players", cases())
def test_rl_environment_plays_every_game_with_its_tensors(name, players):
    from open_spiel.python import rl_environment

    game = load_game(ruleset(name), players=players)
    size = game.information_state_tensor_shape()
    assert size == game.observation_tensor_shape() and size[0] > 0
    env = rl_environment.Environment(game, seed=players)
    assert env.observation_spec()["info_state"] == tuple(size)
    rng = np.random.RandomState(players)
    step = env.reset()
    steps = 0
    limit = None if name in NATIVE else 30
    while not step.last() and (limit is None or steps < limit):
        seat = step.observations["current_player"]
        for p in range(players):
            tensor = np.asarray(step.observations["info_state"][p])
            assert tensor.shape == tuple(size) and np.isfinite(tensor).all()
        step = env.step([int(rng.choice(step.observations["legal_actions"][seat]))])
        steps += 1
    assert steps > 0
    state = env.get_state
    for p in range(players):
        assert state.observation_tensor(p) == state.information_state_tensor(p)


# ---------------------------------------------------------------------------------------------- against the views
def _tree(game):
    """Every node of the game tree (OpenSpiel states), depth first."""
    out, stack = [], [game.new_initial_state()]
    while stack:
        s = stack.pop()
        out.append(s)
        if s.is_terminal():
            continue
        for a in ([a for a, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()):
            stack.append(s.child(a))
    return out


def _partition(keys_a, keys_b):
    """Whether two keyings of the same items group them the same way."""
    groups_a, groups_b = {}, {}
    for i, (a, b) in enumerate(zip(keys_a, keys_b)):
        groups_a.setdefault(a, set()).add(i)
        groups_b.setdefault(b, set()).add(i)
    return sorted(map(sorted, groups_a.values())) == sorted(map(sorted, groups_b.values()))


@pytest.mark.parametrize("seat", [0, 1])
def test_kuhn_tensors_tell_apart_exactly_what_openspiels_information_states_do(seat):
    ours = [s for s in _tree(load_game(ruleset("kuhn_poker.rules"))) if not s.is_terminal() and not s.is_chance_node()]
    theirs = [s for s in _tree(pyspiel.load_game("kuhn_poker")) if not s.is_terminal() and not s.is_chance_node()]
    assert len(ours) == len(theirs) == 24
    # the same depth-first order: the ids are OpenSpiel's (cards 0-2, pass 0, bet 1)
    assert [s.history() for s in ours] == [s.history() for s in theirs]
    mine = [tuple(s.information_state_tensor(seat)) for s in ours]
    native = [s.information_state_string(seat) for s in theirs]
    assert _partition(mine, native)
    assert len(set(mine)) == 12  # own card x betting position
    assert _partition(mine, [s.information_state_string(seat) for s in ours])  # the tensor is the view


@pytest.mark.parametrize("seat", [0, 1])
def test_tictactoe_tensors_tell_apart_exactly_what_openspiels_observations_do(seat):
    ours, theirs = load_game(ruleset("tictactoe.rules")), pyspiel.load_game("tic_tac_toe")
    mine, native = [], []
    seen = set()
    stack = [(ours.new_initial_state(), theirs.new_initial_state())]
    while stack:  # every reachable position once (the ids are OpenSpiel's: place(r, c) is 3r + c)
        s, t = stack.pop()
        if str(t) in seen:
            continue
        seen.add(str(t))
        mine.append(tuple(s.observation_tensor(seat)))
        native.append(tuple(t.observation_tensor(seat)))
        if not t.is_terminal():
            for a in t.legal_actions():
                stack.append((s.child(a), t.child(a)))
    assert len(seen) == 5478
    assert _partition(mine, native)


def test_station_a_changed_bag_leaves_every_seat_tensor_unchanged():
    game = load_game(ruleset("station.rules"), players=3)
    s = game.new_initial_state()
    rng = random.Random(2)
    for _ in range(40):
        s.apply_action(rng.choice([a for a, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()))
    g = s._g.g
    name = next(n for n, v in g.data.items() if type(v).__name__ == "Pile" and len(set(v.pool)) > 1
                and g.rs.visibility.get(n, "all") == "all")
    pile = g.data[name]
    other = s.clone()
    pool = list(pile.pool)
    i = next(i for i, x in enumerate(pool) if x != pool[0])
    pool[0], pool[i] = pool[i], pool[0]  # the same items: only which is drawn next could differ
    other._g.g.data[name] = type(pile)(pile.kind, pile.known, pool)
    pool2 = list(pile.pool)
    k = next(k for k in pool2 if k != pool2[0])
    pool2[0] = k  # other contents, the same size
    third = s.clone()
    third._g.g.data[name] = type(pile)(pile.kind, pile.known, pool2)
    assert third._g.g.view(None) != g.view(None)
    for p in range(3):
        for t in (other, third):
            assert t.information_state_tensor(p) == s.information_state_tensor(p)
            assert t.observation_tensor(p) == s.observation_tensor(p)


def test_tensor_segments_follow_the_declared_types():
    game = load_game(ruleset("tictactoe.rules"))
    enc = game.spec.encoder(2)
    seg = {name: (off, size) for name, off, size, _ in enc.segments()}
    off, size = seg["vars.marks"]
    assert size == 9 * (2 + 2) + 2  # a one-hot per cell (two seats, other, unknown), then hidden and size
    s = game.new_initial_state()
    s.apply_action(4)  # place(1,1) by seat 0
    t = np.array(s.observation_tensor(1))[off:off + size].reshape(-1)
    cell = (1 * 3 + 1) * 4  # the cells in node order: (1,1) is the fifth
    assert t[cell] == 1.0 and t[:36].sum() == 1.0 and t[-1] == 1.0  # seat 0's mark there; one entry

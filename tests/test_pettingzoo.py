"""rulelang.pettingzoo: every rule file as an AEC environment, checked by PettingZoo's own `api_test`.

Also: the observation is the tensor of the seat's view (rulelang.view_tensor; `observation="json"` the
view's bytes); the action mask marks exactly the legal ids of the agent to act (and none for the others);
rewards at the end are the returns (Kuhn poker's chip payoffs); the same seed and actions replay the same
game; a changed hidden value leaves the other seats' observations equal; `max_decisions` truncates.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from pettingzoo.test import api_test  # noqa: E402
from rulelang.pettingzoo import env, raw_env  # noqa: E402

from tests.adapter_games import cases, ruleset  # noqa: E402


@pytest.mark.parametrize("name,players", cases())
def test_api_test(name, players):
    e = env(ruleset(name), players=players)
    with warnings.catch_warnings():
        # PettingZoo suggests Box observations; a dict with an action mask is what its own board games use
        warnings.simplefilter("ignore", UserWarning)
        api_test(e, num_cycles=10 if name in ("tictactoe.rules", "connect4.rules", "kuhn_poker.rules") else 2)


def test_api_test_with_json_observations():
    """observation="json": the view's bytes instead of the tensor, through the same conformance check."""
    e = env(ruleset("kuhn_poker.rules"), observation="json", obs_size=4096)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(e, num_cycles=10)
    raw = raw_env(ruleset("kuhn_poker.rules"))
    raw.reset(seed=0)
    obs = raw.observe("player_0")["observation"]
    assert obs.dtype == np.float32 and obs.shape == raw.observation_space("player_0")["observation"].shape


@pytest.mark.parametrize("name,players", [("kuhn_poker.rules", 2), ("station.rules", 3)])
def test_seed_test(name, players):
    """PettingZoo's own determinism check: two environments reset with one seed play identically."""
    from pettingzoo.test import seed_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        seed_test(functools.partial(env, ruleset(name), players=players), num_cycles=10)


def _play(e, choose):
    """Plays a game to the end: `choose(mask, rng)` picks an action; returns the total rewards."""
    totals = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        e.step(choose(obs["action_mask"]))
    return totals


def test_the_mask_marks_exactly_the_legal_decisions():
    e = raw_env(ruleset("tictactoe.rules"))
    e.reset(seed=1)
    for _ in range(3):
        agent = e.agent_selection
        seat = int(agent.split("_")[1])
        mask = e.observe(agent)["action_mask"]
        legal = {a.id for a in e.game.legal_actions()}
        assert {e.space.describe(i) for i in np.flatnonzero(mask)} == legal
        other = e.possible_agents[1 - seat]
        assert not e.observe(other)["action_mask"].any()  # not its turn
        e.step(int(np.flatnonzero(mask)[0]))


def test_kuhn_rewards_are_the_chip_payoffs_and_sum_to_zero():
    seen = set()
    for seed in range(12):
        e = env(ruleset("kuhn_poker.rules"))
        e.reset(seed=seed)
        totals = _play(e, lambda m: int(np.flatnonzero(m)[-1]))  # always the highest id: bet (OpenSpiel's 1)
        assert sum(totals.values()) == 0
        seen.add(abs(totals["player_0"]))
    assert seen == {2.0}  # bet, bet: a called bet wins or loses two chips (OpenSpiel's kuhn_poker)
    for seed in range(6):
        e = env(ruleset("kuhn_poker.rules"))
        e.reset(seed=seed)
        totals = _play(e, lambda m: int(np.flatnonzero(m)[0]))  # always the lowest id: pass (OpenSpiel's 0)
        assert abs(totals["player_0"]) == 1.0 and sum(totals.values()) == 0  # a showdown for the antes


def test_the_same_seed_and_actions_replay_the_same_game():
    def run(seed):
        e = env(ruleset("station.rules"), players=2, max_decisions=60)
        e.reset(seed=seed)
        rng = np.random.default_rng(0)
        obs = []
        for agent in e.agent_iter():
            o, _, term, trunc, _ = e.last()
            obs.append(o["observation"].tobytes())
            e.step(None if term or trunc else int(rng.choice(np.flatnonzero(o["action_mask"]))))
        return obs
    assert run(4) == run(4)
    assert run(4) != run(5)  # the seed decides the chance events


def test_max_decisions_truncates_with_reward_zero():
    e = env(ruleset("station.rules"), players=2, max_decisions=5)
    e.reset(seed=0)
    steps = 0
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        if term or trunc:
            assert trunc and not term and reward == 0.0
            e.step(None)
            continue
        e.step(int(np.flatnonzero(e.observe(agent)["action_mask"])[0]))
        steps += 1
    assert steps == 5


def test_a_changed_hidden_card_leaves_the_other_seat_observation_equal():
    a, b = raw_env(ruleset("kuhn_poker.rules")), raw_env(ruleset("kuhn_poker.rules"))
    a.reset(seed=1)
    b.reset(seed=1)
    cards = list(b.game.data["card"])
    cards[1] = next(c for c in range(3) if c not in cards)  # P1 holds another card, P0's is unchanged
    b.game.data["card"] = tuple(cards)
    assert a.observe("player_0")["observation"].tobytes() == b.observe("player_0")["observation"].tobytes()
    assert a.observe("player_1")["observation"].tobytes() != b.observe("player_1")["observation"].tobytes()


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ValueError, match="not 5"):
        raw_env(ruleset("tictactoe.rules"), players=5)
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(ruleset("tictactoe.rules"), render_mode="3d")
    with pytest.raises(ValueError, match="observation"):
        raw_env(ruleset("tictactoe.rules"), observation="bytes")
    e = raw_env(ruleset("tictactoe.rules"), observation="json", obs_size=10)
    e.reset()
    with pytest.raises(ValueError, match="obs_size"):
        e.observe("player_0")
    e = raw_env(ruleset("tictactoe.rules"))
    e.reset()
    with pytest.raises(ValueError, match="not legal"):
        e.step(10_000)

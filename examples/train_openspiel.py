"""Train an agent on a rule file with OpenSpiel's own reinforcement learning, then pit it against random play.

    python examples/train_openspiel.py games/examples/tictactoe.rules --episodes 4000

The rule file becomes an OpenSpiel game (`rulelang.openspiel.load_game`), and OpenSpiel's
`rl_environment.Environment` runs it: each step hands every seat its information state tensor (the
seat's view encoded from the declared types, see docs/ecosystem.md) and the legal action ids. One
`tabular_qlearner.QLearner` per seat learns by self-play (it keys its table by the tensor), then the
learner of each seat plays against OpenSpiel's `RandomAgent`, and the mean return of the learner is
compared with what a random agent gets in the same seat. Needs `pip install -e '.[openspiel]'` (numpy
only: no deep learning library). A neural learner (`open_spiel.python.pytorch.dqn.DQN`, which needs
PyTorch) takes the same environment: `info_state_size=env.observation_spec()["info_state"][0]`,
`num_actions=env.action_spec()["num_actions"]`.

Deterministic: the same seed gives the same training and the same evaluation.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

from open_spiel.python import rl_environment, rl_tools  # noqa: E402
from open_spiel.python.algorithms import random_agent, tabular_qlearner  # noqa: E402

from rulelang.openspiel import load_game  # noqa: E402


def train(rules, episodes, seed=0, players=None, epsilon=0.2, step_size=0.5):
    """Self-play training of one Q-learner per seat: (game, agents)."""
    np.random.seed(seed)  # the learner and the random agent draw from NumPy's global generator
    game = load_game(rules, players=players)
    env = rl_environment.Environment(game, seed=seed)
    num_actions = env.action_spec()["num_actions"]
    agents = [tabular_qlearner.QLearner(player_id=p, num_actions=num_actions, step_size=step_size,
                                        epsilon_schedule=rl_tools.ConstantSchedule(epsilon),
                                        discount_factor=1.0)
              for p in range(env.num_players)]
    for _ in range(episodes):
        time_step = env.reset()
        while not time_step.last():
            seat = time_step.observations["current_player"]
            time_step = env.step([agents[seat].step(time_step).action])
        for agent in agents:  # each learner sees the end and learns from its return
            agent.step(time_step)
    return game, agents


def mean_return(game, agents, seat, games, seed=1):
    """The mean return of `agents[seat]` (greedy, not learning) against random agents in the other seats;
    with `agents=None`, of a random agent in that seat (the baseline)."""
    np.random.seed(seed)
    env = rl_environment.Environment(game, seed=seed)
    num_actions = env.action_spec()["num_actions"]
    players = [random_agent.RandomAgent(player_id=p, num_actions=num_actions) for p in range(env.num_players)]
    if agents is not None:
        players[seat] = agents[seat]
    total = 0.0
    for _ in range(games):
        time_step = env.reset()
        while not time_step.last():
            p = time_step.observations["current_player"]
            time_step = env.step([players[p].step(time_step, is_evaluation=True).action])
        total += time_step.rewards[seat]
    return total / games


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rules", help="a rule file, e.g. games/examples/tictactoe.rules")
    parser.add_argument("--episodes", type=int, default=4000, help="self-play games to train on")
    parser.add_argument("--games", type=int, default=500, help="evaluation games per seat")
    parser.add_argument("--players", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    game, agents = train(args.rules, args.episodes, args.seed, args.players)
    for seat in range(game.num_players()):
        learned = mean_return(game, agents, seat, args.games, args.seed + 1)
        baseline = mean_return(game, None, seat, args.games, args.seed + 1)
        print(f"seat {seat}: the learner's mean return against random play {learned:+.3f} "
              f"(a random agent in that seat: {baseline:+.3f})")


if __name__ == "__main__":
    main()

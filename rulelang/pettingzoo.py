"""A rule file as a PettingZoo AEC environment: `env(path, players=2)`.

Needs the `pettingzoo` extra (`pip install -e '.[pettingzoo]'`: pettingzoo and gymnasium); imported only
when this module is. See docs/ecosystem.md.

* Agents `player_0` ... `player_{n-1}` (seat order); the agent to act is the seat the rules ask.
* Actions: `Discrete(space.size)` with the stable ids of `rulelang.action_space.ActionSpace` (the same
  integers as the OpenSpiel adapter); an action taken in steps is one step per pick.
* Observations: `{"observation": Box(-inf, inf, (n,), float32), "action_mask": Box(0, 1, (size,), int8)}`.
  The observation is the seat's `game.view(seat)` (never another seat's hidden values) encoded as numbers
  from the declared types (`rulelang.view_tensor`, the same vector as the OpenSpiel adapter's tensors).
  With `observation="json"` it is instead `Box(0, 255, (obs_size,), uint8)`: the UTF-8 text of the view
  as sorted compact JSON, zero-padded to `obs_size` bytes (default 32,768; a longer view is an error
  naming the option). The mask has 1 at the legal ids of the agent to act, and is all 0 for the others.
* Chance: every random event is sampled by the environment from its own generator, seeded by
  `reset(seed=...)` (the same seed and actions give the same game).
* Rewards: 0 until the end, then `Game.returns()` (zero-sum, or the file's `payoff`). Terminations: all
  agents when the game ends. Truncations: all agents after `max_decisions` steps (default 20,000), with
  reward 0.
* No `parallel_env`: the rules ask one seat at a time (turns, and choices inside them), so a parallel
  step would only ever hold one agent's action (the metadata says `is_parallelizable: False`, so
  PettingZoo's `aec_to_parallel` refuses it too).
"""
from __future__ import annotations

import json

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .action_space import DEFAULT_INT_RANGE, DEFAULT_MAX_PIECE_ID, ActionSpace

DEFAULT_OBS_SIZE = 32_768
DEFAULT_MAX_DECISIONS = 20_000


def env(path, players=None, variants=(), render_mode=None, *, observation="tensor", obs_size=DEFAULT_OBS_SIZE,
        max_decisions=DEFAULT_MAX_DECISIONS, int_range=DEFAULT_INT_RANGE, max_piece_id=DEFAULT_MAX_PIECE_ID,
        root=None):
    """The rule file at `path` (or a loaded `Ruleset`) as an AEC environment, wrapped in PettingZoo's
    order-enforcing wrapper."""
    return wrappers.OrderEnforcingWrapper(raw_env(path, players, variants, render_mode, observation=observation,
                                                  obs_size=obs_size, max_decisions=max_decisions,
                                                  int_range=int_range, max_piece_id=max_piece_id, root=root))


class raw_env(AECEnv):
    """The environment without PettingZoo's wrappers (see `env`)."""

    def __init__(self, path, players=None, variants=(), render_mode=None, *, observation="tensor",
                 obs_size=DEFAULT_OBS_SIZE,
                 max_decisions=DEFAULT_MAX_DECISIONS, int_range=DEFAULT_INT_RANGE,
                 max_piece_id=DEFAULT_MAX_PIECE_ID, root=None):
        super().__init__()
        from .openspiel_common import ruleset_of
        self.ruleset = ruleset_of(path, variants, root)
        if players is None:
            players = min(self.ruleset.player_counts)
        if isinstance(players, bool) or not isinstance(players, int) or players not in self.ruleset.player_counts:
            raise ValueError(f"{self.ruleset.name} is for {', '.join(map(str, self.ruleset.player_counts))} "
                             f"players, not {players!r}")
        if render_mode not in (None, "human", "ansi"):
            raise ValueError(f"render_mode is None, \"human\" or \"ansi\", not {render_mode!r}")
        if observation not in ("tensor", "json"):
            raise ValueError(f"observation is \"tensor\" or \"json\", not {observation!r}")
        if not isinstance(obs_size, int) or obs_size < 1:
            raise ValueError(f"obs_size is a whole number from 1, not {obs_size!r}")
        if not isinstance(max_decisions, int) or max_decisions < 1:
            raise ValueError(f"max_decisions is a whole number from 1, not {max_decisions!r}")
        self.players = players
        self.space = ActionSpace(self.ruleset, int_range=tuple(int_range), max_piece_id=max_piece_id)
        self.observation = observation
        self.obs_size = obs_size
        self.max_decisions = max_decisions
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["human", "ansi"], "name": f"rulelang_{_slug(self.ruleset.name)}",
                         "is_parallelizable": False}
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self._action_space = spaces.Discrete(self.space.size)
        if observation == "tensor":
            from .view_tensor import ViewEncoder
            self.encoder = ViewEncoder(self.ruleset, players, self.space)
            obs = spaces.Box(-np.inf, np.inf, (self.encoder.size,), np.float32)
        else:
            self.encoder = None
            obs = spaces.Box(0, 255, (obs_size,), np.uint8)
        self._observation_space = spaces.Dict({
            "observation": obs,
            "action_mask": spaces.Box(0, 1, (self.space.size,), np.int8),
        })
        self.game = None
        self.np_random = np.random.default_rng(0)

    def observation_space(self, agent):
        return self._observation_space

    def action_space(self, agent):
        return self._action_space

    # ------------------------------------------------------------------ the AEC protocol
    def reset(self, seed=None, options=None):
        self.np_random = np.random.default_rng(seed)
        self.game = self.ruleset.new_game(self.players, seed=0 if seed is None else seed % (1 << 64),
                                          chance="explicit")
        self._partial = ()
        self._decisions = 0
        self._opts = None
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._settle()

    def observe(self, agent):
        seat = self._seat[agent]
        view = self.game.view(seat)
        if self.encoder is not None:
            mine = self._partial if self._partial and self.game.current_player == seat else ()
            obs = self.encoder.encode(view, mine)
        else:
            text = json.dumps(view, sort_keys=True, separators=(",", ":"), default=str).encode()
            if len(text) > self.obs_size:
                raise ValueError(f"the view of {agent} takes {len(text):,} bytes, more than "
                                 f"obs_size={self.obs_size:,}: make the environment with a larger obs_size")
            obs = np.zeros(self.obs_size, np.uint8)
            obs[:len(text)] = np.frombuffer(text, np.uint8)
        mask = np.zeros(self.space.size, np.int8)
        if not self.game.over and self.game.current_player == seat:
            for i, _, _ in self._options():
                mask[i] = 1
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        for i, oid, _ in self._options():
            if i == action:
                break
        else:
            raise ValueError(f"action {action!r} is not legal for {agent} now (see the action mask)")
        self._take(action, oid)
        self._decisions += 1
        self._settle()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.render_mode is None or self.game is None:
            return None
        g = self.game
        view = g.view(None)
        lines = [f"{view['game']}: {g.prompt or 'the game is over'}"]
        lines += [f"{k} = {json.dumps(v, default=str)}" for k, v in view["vars"].items()]
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass

    # ------------------------------------------------------------------ helpers
    def _options(self):
        if self._opts is None:
            self._opts = self.space.options(self.game, self._partial)
        return self._opts

    def _take(self, action, oid):
        if oid is not None:
            self.game.apply(oid)
            self._partial = ()
        elif not self._partial:
            self._partial = (self.space.name_of(action),)
        else:
            self._partial = self._partial + (self.space.value_at(action),)
        self._opts = None

    def _settle(self):
        """Play the chance events (sampled from the environment's generator), then set who acts next, or
        the end (returns as rewards), or the truncation."""
        g = self.game
        while not g.over and g.current_player == -1:
            opts = self._options()
            probs = np.array([p for _, _, p in opts], dtype=float)
            k = int(self.np_random.choice(len(opts), p=probs / probs.sum()))
            self._take(opts[k][0], opts[k][1])
        if g.over:
            returns = g.returns()
            for a in self.agents:
                self.rewards[a] = float(returns[self._seat[a]])
                self.terminations[a] = True
        elif self._decisions >= self.max_decisions:
            for a in self.agents:
                self.rewards[a] = 0.0
                self.truncations[a] = True
        else:
            for a in self.agents:
                self.rewards[a] = 0.0
        if not g.over and self._decisions < self.max_decisions:
            self.agent_selection = self.possible_agents[g.current_player]
        else:
            self.agent_selection = self.agents[0] if self.agents else None


def _slug(name):
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_") or "game"

"""The heuristic agent: one move of lookahead on the rules' own estimate of a position.

``HeuristicAgent(randomness, seed)`` (spec ``heuristic`` or ``heuristic:P``, P percent of decisions
taken at random) plays the legal action after which its seat stands best, as the rule file's
``heuristic p = EXPR`` declaration says (docs/agents.md; the ``score`` when the file declares none):

* it looks at each legal action (at most ``MAX_CANDIDATES``, a random sample of them when there are
  more) on a sample of the state made from what its seat knows (interpreter/determinize.py), so it
  never uses what the seat may not see, the drawn cards of the future included;
* an action that ends the game is worth its return (a win first, a loss last); otherwise its worth is
  the seat's heuristic less the best of the other seats' (a race is won by being ahead, not by
  having much);
* ties are broken at random, and with probability P% the whole decision is random (a greedy/epsilon
  mix, so that games vary);
* an action whose lookahead fails (a run-time error in the sample) is taken only if nothing else is
  left.

It knows no game: the rule file says what a good position is. Deterministic for a seed.
"""
from __future__ import annotations

import random

from .agent_protocol import CHANCE, Agent, _legal, _sample_chance
from .determinize import determinize, hidden_count
from .errors import GameError

MAX_CANDIDATES = 64  # legal actions looked at per decision (a random sample of more)
WIN = 10 ** 12  # the worth of an action that ends the game, times its return


class HeuristicAgent(Agent):
    name = "heuristic"

    def __init__(self, randomness=0, seed=None):
        if isinstance(randomness, bool) or not isinstance(randomness, int) or not 0 <= randomness <= 100:
            raise ValueError(f"the share of random decisions is a whole percentage from 0 to 100, not {randomness!r}")
        self.randomness = randomness
        self.seed = seed
        self.rng = random.Random(seed)

    def __repr__(self) -> str:
        return f"HeuristicAgent(randomness={self.randomness}, seed={self.seed!r})"

    def choose(self, game, seat=None):
        if game.current_player == CHANCE:
            return _sample_chance(game, self.rng)
        seat = game.current_player if seat is None else seat
        actions = _legal(game)
        if len(actions) == 1:
            return actions[0]
        if self.randomness and self.rng.randrange(100) < self.randomness:
            return self.rng.choice(actions)
        sample = self._sample(game, seat)
        candidates = list(actions)
        self.rng.shuffle(candidates)  # ties go to a random one of the best
        candidates = candidates[:MAX_CANDIDATES]
        best, best_worth = candidates[0], None
        for action in candidates:
            worth = self.worth(sample, action, seat)
            if best_worth is None or worth > best_worth:
                best, best_worth = action, worth
        return best

    def _sample(self, game, seat):
        """The state as the seat knows it (the game itself when nothing is hidden from it)."""
        if not game.is_over() and game.current_player == seat and hidden_count(game, seat):
            return determinize(game, seat, self.rng)
        return game

    def worth(self, sample, action, seat):
        """How good `action` looks for `seat`: (whether its lookahead worked, its worth)."""
        g = sample.clone()
        try:
            g.apply(action.id)
            if g.is_over():
                return (1, WIN * g.returns()[seat])
            values = g.heuristics()
            if values is None:
                values = g.scores()
        except GameError:
            return (0, 0)
        others = [v for q, v in enumerate(values) if q != seat]
        return (1, values[seat] - (max(others) if others else 0))

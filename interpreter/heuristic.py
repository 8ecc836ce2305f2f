"""The heuristic agent: a greedy lookahead, to the end of the action, on the rules' own estimate of a position.

``HeuristicAgent(randomness, seed)`` (spec ``heuristic`` or ``heuristic:P``, P percent of decisions
taken at random among the near-best) plays the legal action after which its seat stands best, as the
rule file's ``heuristic p = EXPR`` declaration says (docs/agents.md; the ``score`` when the file
declares none):

* it looks at each legal action (at most ``MAX_CANDIDATES``, a random sample of them when there are
  more) on a sample of the state made from what its seat knows (interpreter/determinize.py), so it
  never uses what the seat may not see: a hidden card, a card still to be drawn, a roll still to come
  (the sample's chance is seeded afresh, from the agent's own generator);
* it **completes the action** before weighing it: after the candidate, the same seat's further
  choices inside that action (``Game.decision_kind == "choose"``) are made greedily, each the choice
  that looks best one decision ahead (at most ``FOLLOW_OPTIONS`` of them looked at), chance sampled,
  until another seat or an offer of actions is to decide, the game ends, or ``MAX_FOLLOW`` decisions
  were followed. An action made of a chain of decisions (place, pay, choose how many, choose where)
  is so weighed by what it achieves, not by its first step's cost;
* with a **beam** of width B above 1 (``beam``, spec ``heuristic:P:F:B``; default 1, the greedy
  completion above, unchanged) it **plans the action** instead (``_plan``): a beam search over the
  same seat's following choices inside the same action. At each depth the B best states by the
  heuristic are kept (a position reached twice at one depth, by other steps or in another order, is
  kept once: ``Game.position_key``) and each is expanded with its options (at most ``FOLLOW_OPTIONS``,
  a random sample), chance sampled as above; a state where the action is over (another seat or an
  offer of actions to decide, the action changed, the game over) is a plan's end and is not expanded.
  A choice of the flow, outside any action, is planned through the same seat's next choices outside
  an action (a travel, then where to). The candidate is worth the best of the ends reached at any
  depth: a plan stops early only where the rules let the seat stop (an optional choice's "done" is one
  option). Only when no end was reached (``F`` choices deep, or the looks spent) is it worth the best
  state where the seat must still choose:
  a half-done action's estimate, the best there is, but not a result the rules guarantee. A choice
  whose worth shows only several choices later (pay for an extra step, then walk to a reward) is so
  weighed by what it leads to. The decision's looks are shared evenly among the candidates left, so a
  wide beam cannot spend them all on the first; with ``inner`` (spec ``heuristic:P:F:Bi``) an offer of
  actions is weighed one decision ahead and only a choice inside an action is planned;
* chance in the lookahead is sampled; with ``chance_samples`` above 1 (default ``CHANCE_SAMPLES``, 1) a
  candidate whose lookahead met chance (a roll or a shuffle drew from the sample's generator, or an
  explicit chance decision) is weighed by the mean over that many samples of it;
* an action that ends the game is worth its return (a win first, a loss last); otherwise its worth is
  the seat's heuristic less the best of the other seats' (a race is won by being ahead, not by
  having much);
* ties are broken at random; with probability P% the decision is drawn at random among the
  near-best candidates (the best third by worth, at least two), so that games vary without throwing
  away what was built;
* an action whose lookahead fails (a run-time error in the sample) is taken only if nothing else is
  left;
* after ``MAX_TURN_DECISIONS`` decisions of its seat in one turn (``Game.turns`` unchanged) it decides
  at random among all legal actions: a rule file that offers actions until the player ends the step
  cannot hold a greedy agent in a loop (design, take apart, design again) for ever.

Bounds: a decision applies at most ``MAX_LOOKS`` decisions to samples in all (each under the rules'
own step, work and time budgets); when they are spent, the candidates left are weighed one decision
ahead (with a beam, each candidate gets an even share of the looks left). Memory: one sample and the clones
on the path being followed (with a beam: the B states kept and their at most B × FOLLOW_OPTIONS children).

It knows no game: the rule file says what a good position is. Deterministic for a seed.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Optional

from . import rng as R
from .agent_protocol import CHANCE, Agent, _legal, _sample_chance
from .determinize import determinize, hidden_count
from .errors import GameError

if TYPE_CHECKING:
    from .game import Action, Game

Worth = tuple[int, float]  # (whether the lookahead worked: 1 or 0, the candidate's worth)

MAX_CANDIDATES = 64  # legal actions looked at per decision (a random sample of more)
MAX_FOLLOW = 32  # decisions followed after a candidate to complete its action
FOLLOW_OPTIONS = 12  # options looked at per followed choice (a random sample of more)
CHANCE_SAMPLES = 1  # samples of the chance a candidate's lookahead met (3: its mean over three; see docs/agents.md)
MAX_BEAM = 64  # the widest beam (``beam``) planning an action may keep
MAX_LOOKS = 6000  # decisions applied to samples per decision of the agent, in all
MAX_TURN_DECISIONS = 300  # decisions of one seat in one turn after which it decides at random among all
WIN = 10 ** 12  # the worth of an action that ends the game, times its return
FAILED = (0, 0)  # the worth of a candidate whose lookahead failed


class HeuristicAgent(Agent):
    name = "heuristic"

    def __init__(self, randomness: int = 0, seed: Any = None, follow: int = MAX_FOLLOW,
                 chance_samples: int = CHANCE_SAMPLES, beam: int = 1, inner: bool = False) -> None:
        if isinstance(randomness, bool) or not isinstance(randomness, int) or not 0 <= randomness <= 100:
            raise ValueError(f"the share of random decisions is a whole percentage from 0 to 100, not {randomness!r}")
        if isinstance(beam, bool) or not isinstance(beam, int) or not 1 <= beam <= MAX_BEAM:
            raise ValueError(f"the beam width is a whole number from 1 to {MAX_BEAM}, not {beam!r}")
        self.beam = beam  # 1: the greedy completion; more: plan the action with a beam of that width
        self.inner = bool(inner)  # an offer of actions weighed one decision ahead, only inner choices planned
        self.cap = MAX_LOOKS  # the looks the current candidate may reach (a beam's share of the decision's)
        self.randomness = randomness
        self.seed = seed
        self.follow = follow  # 0: one decision ahead, as the first version of this agent
        self.chance_samples = max(1, chance_samples)
        self.rng = random.Random(seed)
        self.looks = 0  # decisions applied to samples in the current decision
        self.turn: Optional[tuple[int, int]] = None
        self.in_turn = 0  # the turn (game.turns, seat) of the last decision, and how many in it

    def __repr__(self) -> str:
        return f"HeuristicAgent(randomness={self.randomness}, seed={self.seed!r})"

    def choose(self, game: Game, seat: Optional[int] = None) -> Action:
        if game.current_player == CHANCE:
            return _sample_chance(game, self.rng)
        seat = game.current_player if seat is None else seat
        actions = _legal(game)
        if len(actions) == 1:
            return actions[0]
        turn = (game.turns, seat)
        self.in_turn = self.in_turn + 1 if turn == self.turn else 1
        self.turn = turn
        if self.in_turn > MAX_TURN_DECISIONS:  # going round in circles (an offer repeated until a way out
            return self.rng.choice(actions)   # the greedy choice never takes): take any way at random
        randomly = bool(self.randomness) and self.rng.randrange(100) < self.randomness
        self.looks = 0
        sample = self._sample(game, seat)
        candidates = list(actions)
        self.rng.shuffle(candidates)  # ties go to a random one of the best
        candidates = candidates[:MAX_CANDIDATES]
        rated: list[tuple[Worth, int]] = []
        if self.beam == 1:
            rated = [(self.worth(sample, action, seat), k) for k, action in enumerate(candidates)]
        else:  # each candidate's plan gets an even share of the looks left (at least one choice's options)
            for k, action in enumerate(candidates):
                share = (MAX_LOOKS - self.looks) // (len(candidates) - k)
                self.cap = min(MAX_LOOKS, self.looks + max(share, FOLLOW_OPTIONS))
                rated.append((self.worth(sample, action, seat), k))
        rated.sort(key=lambda pair: (pair[0], -pair[1]), reverse=True)
        if randomly:
            worked = [pair for pair in rated if pair[0][0]] or rated
            near = worked[:max(2, -(-len(worked) // 3))]
            return candidates[self.rng.choice(near)[1]]
        return candidates[rated[0][1]]

    def _sample(self, game: Game, seat: int) -> Game:
        """The state as the seat knows it, with its future chance drawn afresh."""
        if not game.is_over() and game.current_player == seat and hidden_count(game, seat):
            return determinize(game, seat, self.rng)
        sample = game.clone()
        self._reseed(sample)
        return sample

    def _reseed(self, game: Game) -> None:
        game.seed = self.rng.getrandbits(63)
        game.rng = R.seed_state(game.seed)

    def worth(self, sample: Game, action: Action, seat: int) -> Worth:
        """How good `action` looks for `seat`: (whether its lookahead worked, its worth)."""
        total = 0.0
        for k in range(self.chance_samples):
            g = sample.clone()
            if k:
                self._reseed(g)
            start = g.rng
            inside = g.action_in_progress() is not None
            try:
                g.apply(action.id)
                self.looks += 1
                if self.beam == 1 and not self.inner:
                    g, met_chance = self._complete(g, seat)
                else:
                    g, met_chance = self._plan(g, seat, self.follow if inside or not self.inner else 0)
                value = self._value(g, seat)
            except GameError:
                return FAILED
            total += value
            if not met_chance and g.rng == start:  # nothing was left to chance: one sample says it all
                return (1, value)
        return (1, total / self.chance_samples)

    def _complete(self, g: Game, seat: int) -> tuple[Game, bool]:
        """Follow `seat`'s choices inside the action greedily (see the module); returns the game where
        that stops and whether an explicit chance decision was met on the way."""
        met_chance = False
        action = g.action_in_progress()  # (None: the decision was not inside an action, nothing to complete)
        for _ in range(self.follow if action is not None else 0):
            if g.over or self.looks >= MAX_LOOKS or g.action_in_progress() != action:
                break
            if g.current_player == CHANCE:
                g.apply(_sample_chance(g, self.rng).id)
                self.looks += 1
                met_chance = True
                continue
            if g.current_player != seat or g.decision_kind != "choose":
                break
            options = g.legal_actions()  # (in random order: ties go to a random one of the best)
            options = self.rng.sample(options, min(len(options), FOLLOW_OPTIONS))
            best, best_value = None, None
            for option in options:
                after = g.clone()
                try:
                    after.apply(option.id)
                    self.looks += 1
                    value = self._value(after, seat)
                except GameError:
                    continue
                if best_value is None or value > best_value:
                    best, best_value = after, value
            if best is None:
                raise GameError("no choice inside the action could be followed")
            g = best
        return g, met_chance

    def _plan(self, g: Game, seat: int, depth: int) -> tuple[Game, bool]:
        """Plan the rest of the action with a beam (see the module); returns the state of the best plan
        and whether chance was met on the way."""
        # (None: the choice was one of the flow's, outside any action: its plan is the same seat's next
        # choices outside an action, as a travel and then where to go)
        action = g.action_in_progress()
        if depth <= 0:
            return g, False
        limit = min(self.cap, MAX_LOOKS)
        start = g.rng
        g, met_chance = self._settle(g, action, limit)
        if not self._open(g, seat, action):
            return g, met_chance
        # (value, state): plans ended; states where the seat must choose
        ends: list[tuple[float, Game]] = []
        frontier: list[tuple[Optional[float], Game]] = [(None, g)]
        for _ in range(depth):
            children: list[tuple[float, Game]] = []
            for _, state in frontier:
                options = state.legal_actions()  # (in random order: ties go to a random one of the best)
                for option in self.rng.sample(options, min(len(options), FOLLOW_OPTIONS)):
                    if self.looks >= limit:
                        break
                    after = state.clone()
                    try:
                        after.apply(option.id)
                        self.looks += 1
                        after, met = self._settle(after, action, limit)
                        value = self._value(after, seat)
                    except GameError:
                        continue
                    met_chance = met_chance or met or after.rng != start
                    (children if self._open(after, seat, action) else ends).append((value, after))
            if not children:
                if not ends and frontier[0][0] is None:  # nothing could be planned from the first state
                    if self.looks >= limit:
                        return g, met_chance  # (the looks are spent: weighed as it stands)
                    raise GameError("no choice inside the action could be followed")
                break
            children.sort(key=lambda pair: pair[0], reverse=True)  # (stable: ties keep the random order)
            frontier = self._distinct(children, self.beam)
            if self.looks >= limit:
                break
        pool = ends or [(value, state) for value, state in frontier if value is not None]
        best = max(range(len(pool)), key=lambda k: (pool[k][0], -k))  # the first of the best
        return pool[best][1], met_chance

    @staticmethod
    def _distinct(children: list[tuple[float, Game]], width: int) -> list[tuple[Optional[float], Game]]:
        """The first `width` of `children` (sorted by value, best first) that are different positions: a
        position reached twice (two orders of the same steps) is kept once. Equal positions have equal
        values, so only states tied with one kept are keyed (``Game.position_key`` costs about as much as
        a look)."""
        kept: list[tuple[Optional[float], Game]] = []
        tied: list[list[Any]] = []  # tied: [state, its key or None] of the kept states of the last value kept
        for value, state in children:
            if len(kept) == width:
                break
            if kept and value == kept[-1][0]:
                key = state.position_key()
                for entry in tied:
                    if entry[1] is None:
                        entry[1] = entry[0].position_key()
                if any(entry[1] == key for entry in tied):
                    continue
                tied.append([state, key])
            else:
                tied = [[state, None]]
            kept.append((value, state))
        return kept

    def _settle(self, g: Game, action: Optional[tuple[int, str]], limit: int) -> tuple[Game, bool]:
        """Sample the chance decisions due inside `action` (each a look, within `limit`); returns the game
        and whether one was met."""
        met = False
        while (g.current_player == CHANCE and not g.over and g.action_in_progress() == action
               and self.looks < limit):
            g.apply(_sample_chance(g, self.rng).id)
            self.looks += 1
            met = True
        return g, met

    @staticmethod
    def _open(g: Game, seat: int, action: Optional[tuple[int, str]]) -> bool:
        """Whether `seat` must still choose inside `action` in `g` (the plan goes on)."""
        return (not g.over and g.action_in_progress() == action and g.current_player == seat
                and g.decision_kind == "choose")

    @staticmethod
    def _value(g: Game, seat: int) -> float:
        """The worth of position `g` for `seat`: its return when the game is over (a win first), else its
        heuristic less the best other seat's."""
        if g.is_over():
            return WIN * g.returns()[seat]
        values = g.heuristics()
        if values is None:
            values = g.scores()
        others = [v for q, v in enumerate(values) if q != seat]
        return values[seat] - (max(others) if others else 0)

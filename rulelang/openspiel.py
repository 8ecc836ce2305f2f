"""A rule file as an OpenSpiel game: `load_game(path, players=2)` returns a registered `pyspiel` Python game.

Needs the `openspiel` extra (`pip install -e '.[openspiel]'`); imported only when this module is.
See docs/ecosystem.md. What the adapter promises:

* One registered game per rule file, variants and bounds: the short name is `rulelang_<12 hex digits>` (a
  hash of the file's text, the files it extends, the variants and the bounds below); the player count is
  the game parameter `players`, so `pyspiel.load_game(name, {"players": 3})` and
  `pyspiel.deserialize_game_and_state` work in the process that registered it.
* Game type: sequential; chance mode explicit stochastic when the program can roll or draw (every random
  event is an OpenSpiel chance node), deterministic otherwise; imperfect information when a variable or
  piece field is declared hidden (`visible to ...`) or a deck or bag exists, perfect otherwise; zero-sum
  when the file declares no `payoff` (the returns are zero-sum by construction) or when its payoffs sum
  to 0 at every end of the whole game tree (walked when it is small, as for a three-card poker), general-sum otherwise
  (`zero_sum=True` declares it, and the adapter checks that the payoffs sum to 0 at every end); rewards at
  the end only.
* Sizes (`rulelang.action_space.ActionSpace`): `num_distinct_actions` the player ids, `max_chance_outcomes`
  the values a roll or draw can produce, each numbered on its own from 0 (as OpenSpiel numbers them).
* `max_game_length`: the most player actions of a game (chance outcomes are not counted, as in
  OpenSpiel): `max_game_length=` if given; else the longest game of the whole tree when the walk of
  small games completes (9 for a game of noughts and crosses); else `DEFAULT_MAX_GAME_LENGTH` (20,000, as
  `rulelang validate`). A game that reaches it ends there with all returns 0.
* Utilities: `payoff_bounds=` if given; else without a `payoff` the zero-sum returns' bounds (a loser
  -1, a lone winner n - 1); else the lowest and highest payoff of the whole tree when the walk completes;
  else `DEFAULT_PAYOFF_BOUNDS` (-1000..1000). A payoff outside them is an error at the end.
* Information state and observation strings of seat p: `game.view(p)` as sorted JSON (never another
  seat's hidden values), plus p's own picks of an action taken in steps; the tensors are the same view
  encoded by `rulelang.view_tensor.ViewEncoder` from the declared types (so they never hold another
  seat's hidden values either). The view holds the history only as far as the rules keep it in variables.
* serialize()/deserialize: the rules' `to_json()` save, the picks in progress and the length.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyspiel

from interpreter.values import decode, encode, fmt

from .action_space import DEFAULT_INT_RANGE, DEFAULT_MAX_PIECE_ID, ActionSpace, ActionSpaceError
from .openspiel_common import DEFAULT_MAX_POSITIONS, walk_facts
from . import ast as A

DEFAULT_MAX_GAME_LENGTH = 20_000
DEFAULT_PAYOFF_BOUNDS = (-1000.0, 1000.0)

_REGISTERED = {}  # short name -> _Spec


def _spec_named(name):
    spec = _REGISTERED.get(name)
    if spec is None:
        raise ValueError(f"{name} is not a rulelang game registered in this process: load it with "
                         "rulelang.openspiel.load_game first")
    return spec


def _restore_game(name, save):
    """Unpickling a state's rules-level game: from its to_json() save (checked by Ruleset.load_game)."""
    return _spec_named(name).ruleset.load_game(save)


class _Spec:
    """What a registered name stands for: the ruleset, its action space, what the walk of the game tree
    found, and the adapter's bounds."""

    def __reduce__(self):  # OpenSpiel pickles a Python state's attributes: the spec by its registered name
        return _spec_named, (self.short_name,)

    def __deepcopy__(self, memo):  # shared by every state of the game
        return self

    def __init__(self, ruleset, space, max_game_length, payoff_bounds, zero_sum, short_name,
                 max_positions=DEFAULT_MAX_POSITIONS):
        self.ruleset = ruleset
        self.space = space
        self.max_game_length = max_game_length  # None: derived per player count
        self.payoff_bounds = payoff_bounds  # None: derived per player count
        self.max_positions = max_positions
        self.short_name = short_name
        self._starts = {}  # players -> the game at its start (setup run once)
        self._facts = {}  # players -> walk_facts
        self._info = {}  # players -> (min utility, max utility, max game length)
        self._encoders = {}  # players -> ViewEncoder
        prog = ruleset.source_program
        self.has_payoff = getattr(prog, "payoff", None) is not None
        if zero_sum is not None:
            self.zero_sum = bool(zero_sum)
        elif not self.has_payoff:
            self.zero_sum = True
        else:  # payoffs that sum to 0 at every end of every player count's whole tree
            self.zero_sum = all(self.facts(n)["complete"] and self.facts(n)["zero_sum"]
                                for n in ruleset.player_counts)
        # imperfect information: a value declared hidden, or a deck or bag (views hide a shuffled pile's
        # contents and the outcomes of draws: see "Hidden information and views" in docs/language.md)
        self.hidden = any(
            (isinstance(d, A.VarDecl) and (d.visibility != "all" or _has_pile(d.type)))
            or (isinstance(d, A.PieceDecl) and any(f.visibility != "all" for f in d.fields))
            for d in prog.decls.values())
        counts = ruleset.player_counts
        self.game_type = pyspiel.GameType(
            short_name=short_name,
            long_name=f"rulelang {ruleset.name}",
            dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
            chance_mode=(pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC if space.chance
                         else pyspiel.GameType.ChanceMode.DETERMINISTIC),
            information=(pyspiel.GameType.Information.IMPERFECT_INFORMATION if self.hidden
                         else pyspiel.GameType.Information.PERFECT_INFORMATION),
            utility=(pyspiel.GameType.Utility.ZERO_SUM if self.zero_sum
                     else pyspiel.GameType.Utility.GENERAL_SUM),
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=max(counts),
            min_num_players=min(counts),
            provides_information_state_string=True,
            provides_information_state_tensor=True,
            provides_observation_string=True,
            provides_observation_tensor=True,
            parameter_specification={"players": min(counts)},
        )

    def initial(self, players):
        """A new rules-level game at its start (explicit chance: OpenSpiel decides every random event)."""
        start = self._starts.get(players)
        if start is None:
            start = self._starts[players] = self.ruleset.new_game(players, seed=0, chance="explicit")
        return start.clone()

    def facts(self, players):
        """What the walk of the whole game tree found (rulelang.openspiel_common.walk_facts)."""
        got = self._facts.get(players)
        if got is None:
            got = self._facts[players] = walk_facts(self.ruleset, players, self.space, self.max_positions)
        return got

    def encoder(self, players):
        enc = self._encoders.get(players)
        if enc is None:
            from .view_tensor import ViewEncoder
            enc = self._encoders[players] = ViewEncoder(self.ruleset, players, self.space)
        return enc

    def bounds(self, players):
        """(min utility, max utility, max game length) at this player count (see the module)."""
        got = self._info.get(players)
        if got is not None:
            return got
        length = self.max_game_length
        facts = None
        declared = getattr(self.ruleset.source_program.game, "max_decisions", None)
        if length is None and isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
            # a bound the file declares (in player decisions; an action taken in steps is several actions here)
            length = declared * (1 + self.space.max_picks())
        if length is None:
            facts = self.facts(players)
            length = max(1, facts["max_length"]) if facts["complete"] else DEFAULT_MAX_GAME_LENGTH
        if self.payoff_bounds is not None:
            lo, hi = self.payoff_bounds
        elif not self.has_payoff:  # zero-sum returns: a loser -1, a lone winner n - 1
            lo, hi = -1.0, float(players - 1)
        else:
            facts = facts or self.facts(players)
            if facts["complete"]:
                lo, hi = facts["min_returns"], facts["max_returns"]
                if lo == hi:  # OpenSpiel wants min < max
                    lo, hi = lo - 1.0, hi + 1.0
            else:
                lo, hi = DEFAULT_PAYOFF_BOUNDS
        got = self._info[players] = (float(lo), float(hi), int(length))
        return got

    def info(self, players):
        lo, hi, length = self.bounds(players)
        return pyspiel.GameInfo(
            num_distinct_actions=self.space.size,
            max_chance_outcomes=self.space.max_chance_outcomes,
            num_players=players,
            min_utility=lo,
            max_utility=hi,
            utility_sum=0.0 if self.zero_sum else None,
            max_game_length=length,
        )


def _has_pile(t):
    """Whether a declared type holds a deck or a bag."""
    if isinstance(t, A.TypeGeneric):
        return t.name in ("deck", "bag") or any(_has_pile(a) for a in t.args)
    return False


def load_game(path, players=None, variants=(), *, int_range=DEFAULT_INT_RANGE, max_piece_id=DEFAULT_MAX_PIECE_ID,
              max_game_length=None, payoff_bounds=None, zero_sum=None, max_positions=DEFAULT_MAX_POSITIONS,
              root=None):
    """The rule file at `path` (or a loaded `Ruleset`) as a `pyspiel.Game` for `players` seats (default: the
    fewest it allows).

    `max_game_length` (player actions) and `payoff_bounds` (min, max utility) are derived from the rules
    when not given (see the module); `max_positions` bounds the walk of the whole game tree that derives
    them for small games (0: no walk). Raises `rulelang.RuleError` when the file has errors, `ValueError`
    (one line) for a player count the file does not allow or bounds that do not fit (see
    `rulelang.action_space`)."""
    from .openspiel_common import ruleset_of
    variants = tuple(variants)
    ruleset = ruleset_of(path, variants, root)
    variants = tuple(ruleset.active_variants)
    if players is None:
        players = min(ruleset.player_counts)
    if isinstance(players, bool) or not isinstance(players, int) or players not in ruleset.player_counts:
        raise ValueError(f"{ruleset.name} is for {_counts(ruleset.player_counts)} players, not {players!r}")
    if max_game_length is not None and (isinstance(max_game_length, bool) or not isinstance(max_game_length, int)
                                        or max_game_length < 1):
        raise ValueError(f"max_game_length is a whole number from 1, not {max_game_length!r}")
    if payoff_bounds is not None:
        lo, hi = payoff_bounds
        if not lo < hi:
            raise ValueError(f"payoff_bounds is (low, high) with low < high, not {payoff_bounds!r}")
        payoff_bounds = (float(lo), float(hi))
    if isinstance(max_positions, bool) or not isinstance(max_positions, int) or max_positions < 0:
        raise ValueError(f"max_positions is a whole number from 0, not {max_positions!r}")
    digest = hashlib.sha256()
    for p, src in sorted(ruleset.source_program.sources.items(), key=lambda kv: str(kv[0])):
        digest.update(str(Path(p).name).encode() + b"\0" + getattr(src, "text", "").encode() + b"\0")
    digest.update(repr((variants, tuple(int_range), max_piece_id, max_game_length, payoff_bounds,
                        zero_sum, max_positions)).encode())
    name = "rulelang_" + digest.hexdigest()[:12]
    if name not in _REGISTERED:
        space = ActionSpace(ruleset, int_range=tuple(int_range), max_piece_id=max_piece_id)
        spec = _Spec(ruleset, space, max_game_length, payoff_bounds, zero_sum, name, max_positions)
        _REGISTERED[name] = spec
        pyspiel.register_game(spec.game_type, _game_class(spec))
    return pyspiel.load_game(name, {"players": players})


def _counts(counts):
    return ", ".join(str(c) for c in counts[:-1]) + (" or " if len(counts) > 1 else "") + str(counts[-1])


def _game_class(spec):
    _spec = spec
    class RulelangGame(pyspiel.Game):
        spec = _spec  # a class attribute: OpenSpiel pickles a Python game's instance attributes

        def __init__(self, params=None):
            params = dict(params or {})
            players = params.get("players", min(spec.ruleset.player_counts))
            if players not in spec.ruleset.player_counts:
                raise ValueError(f"{spec.ruleset.name} is for {_counts(spec.ruleset.player_counts)} players, "
                                 f"not {players!r}")
            self.players = players
            super().__init__(spec.game_type, spec.info(players), {"players": players})

        def new_initial_state(self):
            return RulelangState(self)

        def make_py_observer(self, iig_obs_type=None, params=None):
            return _Observer(self, iig_obs_type, params)

        # OpenSpiel's deserialize_state on a Python game
        def deserialize_state(self, text):
            return RulelangState.from_text(self, text)

    RulelangGame.__name__ = f"RulelangGame_{spec.short_name}"
    return RulelangGame


class RulelangState(pyspiel.State):
    """One position: a rulelang Game in explicit chance mode, the picks of an action taken in steps, and
    the number of actions taken."""

    def __init__(self, game, rgame=None, partial=(), length=0, truncated=False):
        super().__init__(game)
        self._spec = game.spec
        # the rules-level game is made when first used: OpenSpiel clones and deserializes a Python state by
        # making a new initial state and replacing its attributes, so most initial states are never played
        self._g = _Box(game.spec.short_name, game.players, rgame)
        self._views = {}
        self._partial = tuple(partial)
        self._length = length
        self._truncated = truncated
        self._opts = None

    # ---------------------------------------------------------------- helpers
    def _options(self):
        if self._opts is None:
            self._opts = self._spec.space.options(self._g.g, self._partial)
        return self._opts

    # ---------------------------------------------------------------- pyspiel API
    def current_player(self):
        g = self._g.g
        if self._truncated or g.over:
            return pyspiel.PlayerId.TERMINAL
        cp = g.current_player
        if cp == -1:
            return pyspiel.PlayerId.CHANCE
        if cp < 0:
            return pyspiel.PlayerId.TERMINAL
        return cp

    def _legal_actions(self, player):
        if player != self.current_player():
            return []
        return [i for i, _, _ in self._options()]

    def chance_outcomes(self):
        if self.current_player() != pyspiel.PlayerId.CHANCE:
            return []
        return [(i, prob) for i, _, prob in self._options()]

    def _apply_action(self, action):
        for i, oid, _ in self._options():
            if i == action:
                break
        else:
            raise ValueError(f"action {action} ({self._action_to_string(self.current_player(), action)}) is not "
                             "legal now")
        chance = self._g.g.current_player == -1
        if oid is not None:
            self._g.g.apply(oid)
            self._partial = ()
        elif not self._partial:
            self._partial = (self._spec.space.name_of(action),)
        else:
            self._partial = self._partial + (self._spec.space.value_at(action),)
        self._opts = None
        self._views = {}
        if not chance:  # the length counts player actions, as OpenSpiel's max_game_length does
            self._length += 1
            if self._length >= self._spec.bounds(self._g.players)[2] and not self._g.g.over:
                self._truncated = True

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return self._spec.space.describe_outcome(action)
        return self._spec.space.describe(action)

    def is_terminal(self):
        return self._truncated or self._g.g.over

    def returns(self):
        g = self._g.g
        if self._truncated or not g.over:
            return [0.0] * g.n
        out = g.returns()
        spec = self._spec
        if spec.has_payoff:
            lo, hi, _ = spec.bounds(g.n)
            if any(not lo <= r <= hi for r in out):
                raise ValueError(f"the payoffs {out} lie outside payoff_bounds ({lo:g}, {hi:g}): "
                                 "load the game with wider payoff_bounds")
            if spec.zero_sum and sum(out) != 0:
                raise ValueError(f"the payoffs {out} do not sum to 0, but the game was loaded with zero_sum=True")
        return out

    def view_string(self, player):
        """Seat `player`'s view (sorted JSON), with its own picks of an action taken in steps."""
        text = self._views.get(player)
        if text is None:
            view = self._g.g.view(player)
            text = json.dumps(view, sort_keys=True, separators=(",", ":"), default=str)
            if self._partial and self.current_player() == player:
                text += " picks:" + ",".join(fmt(p) for p in self._partial)
            self._views[player] = text
        return text

    def view_tensor(self, player):
        """Seat `player`'s view as numbers (rulelang.view_tensor), with its own picks."""
        got = self._views.get(("tensor", player))
        if got is None:
            picks = self._partial if self._partial and self.current_player() == player else ()
            got = self._views[("tensor", player)] = self._spec.encoder(self._g.players).encode(
                self._g.g.view(player), picks)
        return got

    def information_state_string(self, player=None):
        return self.view_string(self.current_player() if player is None else player)

    def observation_string(self, player=None):
        return self.view_string(self.current_player() if player is None else player)

    def __str__(self):
        text = self._views.get("str")
        if text is None:
            text = self._views["str"] = self._text()
        return text

    def _text(self):
        g = self._g.g
        view = g.view(None)
        lines = [f"{view['game']}, {g.n} players, {g.prompt or 'the game is over'}"]
        for name, value in view["vars"].items():
            lines.append(f"{name} = {json.dumps(value, default=str)}")
        if self._partial:
            lines.append("picks: " + ", ".join(str(p) for p in self._partial))
        return "\n".join(lines)

    def clone(self):
        return RulelangState(self.get_game(), self._g.g.clone(), self._partial, self._length, self._truncated)

    def __deepcopy__(self, memo):
        return self.clone()

    def serialize(self):
        return json.dumps({"save": self._g.g.to_json(), "picks": [encode(p) for p in self._partial],
                           "length": self._length, "truncated": self._truncated})

    @classmethod
    def from_text(cls, game, text):
        try:
            d = json.loads(text)
            rgame = game.spec.ruleset.load_game(d["save"])
            partial = tuple(decode(p) for p in d["picks"])
            length, truncated = int(d["length"]), bool(d["truncated"])
        except Exception as e:  # a bad text: one line, never a traceback from deep inside
            raise ValueError(f"not a saved state of {game.spec.ruleset.name}: {str(e).splitlines()[0][:200]}") \
                from None
        return cls(game, rgame, partial, length, truncated)

    def __getstate__(self):
        return self.serialize()


class _Box:
    """The rules-level game of a state (made on first use: the game's start, cloned). OpenSpiel serializes a
    Python state by pickling its attributes: this one pickles as the game's `to_json()` save and comes back
    through `Ruleset.load_game` (which checks it completely)."""

    __slots__ = ("name", "players", "_g")

    def __init__(self, name, players, g=None):
        self.name = name
        self.players = players
        self._g = g

    @property
    def g(self):
        if self._g is None:
            self._g = _spec_named(self.name).initial(self.players)
        return self._g

    def __reduce__(self):
        return _box_from, (self.name, self.players, self.g.to_json())

    def __deepcopy__(self, memo):  # OpenSpiel clones a Python state by deep-copying its attributes
        return _Box(self.name, self.players, None if self._g is None else self._g.clone())


def _box_from(name, players, save):
    return _Box(name, players, _restore_game(name, save))


class _Observer:
    """OpenSpiel's PyObserver: a seat's view as a string (sorted JSON) and as a tensor
    (rulelang.view_tensor). The information state and the observation are the same view: what the seat
    sees now, which holds the history as far as the rules keep it in variables. With
    `private_info=ALL_PLAYERS` the view is the whole state (`view(None)`); a public-only observer is not
    offered (the rules give no view that hides every seat's own cards)."""

    def __init__(self, game, iig_obs_type, params):
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        self.everything = False
        if iig_obs_type is not None:
            private = iig_obs_type.private_info
            if private == pyspiel.PrivateInfoType.ALL_PLAYERS:
                self.everything = True
            elif private == pyspiel.PrivateInfoType.NONE and game.spec.hidden:
                raise ValueError("rulelang games offer no public-only observation (private_info=NONE): a view "
                                 "is a seat's own (SINGLE_PLAYER) or the whole state (ALL_PLAYERS)")
        self.encoder = game.spec.encoder(game.players)
        self.tensor = np.zeros(self.encoder.size, np.float32)
        self.dict = {}
        for name, off, size, _ in self.encoder.segments():
            self.dict[name] = self.tensor[off:off + size]

    def set_from(self, state, player):
        if self.everything:
            self.tensor[:] = self.encoder.encode(state._g.g.view(None), state._partial)
        else:
            self.tensor[:] = state.view_tensor(player)

    def string_from(self, state, player):
        if self.everything:
            return json.dumps(state._g.g.view(None), sort_keys=True, separators=(",", ":"), default=str)
        return state.view_string(player)


__all__ = ["load_game", "ActionSpaceError", "RulelangState"]

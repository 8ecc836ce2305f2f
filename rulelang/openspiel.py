"""A rule file as an OpenSpiel game: `load_game(path, players=2)` returns a registered `pyspiel` Python game.

Needs the `openspiel` extra (`pip install -e '.[openspiel]'`); imported only when this module is.
See docs/ecosystem.md. What the adapter promises:

* One registered game per rule file, variants and bounds: the short name is `rulelang_<12 hex digits>` (a
  hash of the file's text, the files it extends, the variants and the bounds below); the player count is
  the game parameter `players`, so `pyspiel.load_game(name, {"players": 3})` and
  `pyspiel.deserialize_game_and_state` work in the process that registered it.
* Game type: sequential; chance mode explicit stochastic when the program can roll or draw (every random
  event is an OpenSpiel chance node), deterministic otherwise; imperfect information when a variable or
  piece field is declared hidden (`visible to ...`), perfect otherwise; zero-sum unless the rule file
  declares a `payoff` (then general-sum, or zero-sum when `zero_sum=True` is passed: the adapter checks
  that the payoffs sum to 0 at every end); rewards at the end only.
* Action ids: `rulelang.action_space.ActionSpace` (stable over every state of every game of the file).
* `max_game_length`: the most actions (chance outcomes included) a game may take through the adapter
  (default 20,000, as `rulelang validate`); a game that reaches it ends there with all returns 0.
* Returns: `Game.returns()` (zero-sum by default, or the file's `payoff`); payoffs must lie within
  `payoff_bounds` (default -1000..1000), OpenSpiel's min/max utility.
* Information state and observation strings of seat p: `game.view(p)` as sorted JSON (never another
  seat's hidden values), plus p's own picks of an action taken in steps.
* serialize()/deserialize: the rules' `to_json()` save, the picks in progress and the length.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyspiel

from .action_space import DEFAULT_INT_RANGE, DEFAULT_MAX_PIECE_ID, ActionSpace, ActionSpaceError
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
    """What a registered name stands for: the ruleset, its action space and the adapter's bounds."""

    def __reduce__(self):  # OpenSpiel pickles a Python state's attributes: the spec by its registered name
        return _spec_named, (self.short_name,)

    def __deepcopy__(self, memo):  # shared by every state of the game
        return self

    def __init__(self, ruleset, space, max_game_length, payoff_bounds, zero_sum, short_name):
        self.ruleset = ruleset
        self.space = space
        self.max_game_length = max_game_length
        self.payoff_bounds = payoff_bounds
        self.short_name = short_name
        self._starts = {}  # players -> the game at its start (setup run once)
        prog = ruleset.source_program
        self.has_payoff = getattr(prog, "payoff", None) is not None
        self.zero_sum = (not self.has_payoff) if zero_sum is None else bool(zero_sum)
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
            provides_information_state_tensor=False,
            provides_observation_string=True,
            provides_observation_tensor=False,
            parameter_specification={"players": min(counts)},
        )

    def initial(self, players):
        """A new rules-level game at its start (explicit chance: OpenSpiel decides every random event)."""
        start = self._starts.get(players)
        if start is None:
            start = self._starts[players] = self.ruleset.new_game(players, seed=0, chance="explicit")
        return start.clone()

    def info(self, players):
        if self.has_payoff:
            lo, hi = self.payoff_bounds
        else:  # zero-sum returns: a loser -1, a lone winner n - 1
            lo, hi = -1.0, float(players - 1)
        return pyspiel.GameInfo(
            num_distinct_actions=self.space.size,
            max_chance_outcomes=self.space.max_chance_outcomes,
            num_players=players,
            min_utility=float(lo),
            max_utility=float(hi),
            utility_sum=0.0 if self.zero_sum else None,
            max_game_length=self.max_game_length,
        )


def _has_pile(t):
    """Whether a declared type holds a deck or a bag."""
    if isinstance(t, A.TypeGeneric):
        return t.name in ("deck", "bag") or any(_has_pile(a) for a in t.args)
    return False


def load_game(path, players=None, variants=(), *, int_range=DEFAULT_INT_RANGE, max_piece_id=DEFAULT_MAX_PIECE_ID,
              max_game_length=DEFAULT_MAX_GAME_LENGTH, payoff_bounds=DEFAULT_PAYOFF_BOUNDS, zero_sum=None,
              root=None):
    """The rule file at `path` (or a loaded `Ruleset`) as a `pyspiel.Game` for `players` seats (default: the
    fewest it allows).

    Raises `rulelang.RuleError` when the file has errors, `ValueError` (one line) for a player count the
    file does not allow or bounds that do not fit (see `rulelang.action_space`)."""
    from .openspiel_common import ruleset_of
    variants = tuple(variants)
    ruleset = ruleset_of(path, variants, root)
    variants = tuple(ruleset.active_variants)
    if players is None:
        players = min(ruleset.player_counts)
    if isinstance(players, bool) or not isinstance(players, int) or players not in ruleset.player_counts:
        raise ValueError(f"{ruleset.name} is for {_counts(ruleset.player_counts)} players, not {players!r}")
    if not isinstance(max_game_length, int) or max_game_length < 1:
        raise ValueError(f"max_game_length is a whole number from 1, not {max_game_length!r}")
    lo, hi = payoff_bounds
    if not lo < hi:
        raise ValueError(f"payoff_bounds is (low, high) with low < high, not {payoff_bounds!r}")
    digest = hashlib.sha256()
    for p, src in sorted(ruleset.source_program.sources.items(), key=lambda kv: str(kv[0])):
        digest.update(str(Path(p).name).encode() + b"\0" + getattr(src, "text", "").encode() + b"\0")
    digest.update(repr((variants, tuple(int_range), max_piece_id, max_game_length, tuple(payoff_bounds),
                        zero_sum)).encode())
    name = "rulelang_" + digest.hexdigest()[:12]
    if name not in _REGISTERED:
        space = ActionSpace(ruleset, int_range=tuple(int_range), max_piece_id=max_piece_id)
        spec = _REGISTERED[name] = _Spec(ruleset, space, max_game_length, (float(lo), float(hi)), zero_sum, name)
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
            return _Observer(params)

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
            raise ValueError(f"action {action} ({self._spec.space.describe(action)}) is not legal now")
        if oid is not None:
            self._g.g.apply(oid)
            self._partial = ()
        elif not self._partial:
            self._partial = (self._spec.space.name_of(action),)
        else:
            self._partial = self._partial + (self._spec.space.values[action],)
        self._opts = None
        self._views = {}
        self._length += 1
        if self._length >= self._spec.max_game_length and not self._g.g.over:
            self._truncated = True

    def _action_to_string(self, player, action):
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
            lo, hi = spec.payoff_bounds
            if any(not lo <= r <= hi for r in out):
                raise ValueError(f"the payoffs {out} lie outside payoff_bounds {spec.payoff_bounds}: "
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
                from interpreter.values import fmt
                text += " picks:" + ",".join(fmt(p) for p in self._partial)
            self._views[player] = text
        return text

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
        from interpreter.values import encode
        return json.dumps({"save": self._g.g.to_json(), "picks": [encode(p) for p in self._partial],
                           "length": self._length, "truncated": self._truncated})

    @classmethod
    def from_text(cls, game, text):
        from interpreter.values import decode
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
    """OpenSpiel's PyObserver: strings only (the views), no tensors."""

    def __init__(self, params):
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        self.tensor = np.zeros(0, np.float32)
        self.dict = {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        return state.view_string(player)


__all__ = ["load_game", "ActionSpaceError", "RulelangState"]

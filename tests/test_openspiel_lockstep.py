"""Lockstep tests of the example games against OpenSpiel.

The reference is OpenSpiel's implementation of the standard rules of these games
(``pyspiel.load_game("tic_tac_toe")`` and ``pyspiel.load_game("connect_four")``,
the C++ games shipped with the ``open_spiel`` package). Our interpreted
``games/examples/tictactoe.rules`` and ``games/examples/connect4.rules`` are played
side by side with them over many random games. At every step:

* the sets of legal moves are identical after mapping the action ids
  (tic-tac-toe ``place(R,C)`` <-> OpenSpiel ``R*3+C``; connect four ``drop(C)``
  <-> OpenSpiel ``C``),
* the player to move is identical (OpenSpiel player 0 is our seat 0; both use
  ``-4`` for a finished game),
* both games end at the same time, and at the end ``Game.returns()`` equals
  OpenSpiel's ``State.returns()``.

The random choices come from a ``random.Random`` seeded per game, so a failure
names a seed that reproduces it. The same games also check that a mid-game
``to_json()`` -> ``load_game()`` round trip continues identically, that a move
OpenSpiel rejects raises ``rulelang.IllegalAction`` and leaves the state
unchanged, and that two runs with the same seed and decisions give
byte-identical ``to_json()``.

Skipped cleanly when OpenSpiel is not installed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

pyspiel = pytest.importorskip("pyspiel")

import rulelang  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "games" / "examples"

TERMINAL = -4  # our `current_player` when the game is over; OpenSpiel's PlayerId.TERMINAL

TICTACTOE_GAMES = 300
CONNECT4_GAMES = 150


@dataclass(frozen=True)
class Pairing:
    """How one of our example games maps onto an OpenSpiel game."""

    rules_file: str
    openspiel_name: str
    num_actions: int  # OpenSpiel's num_distinct_actions
    to_ours: Callable[[int], str]  # OpenSpiel action -> our action id
    pattern: re.Pattern  # our action id, for parsing back
    from_match: Callable[[re.Match], int]  # parsed id -> OpenSpiel action


TICTACTOE = Pairing(
    rules_file="tictactoe.rules",
    openspiel_name="tic_tac_toe",
    num_actions=9,
    to_ours=lambda a: f"place({a // 3},{a % 3})",
    pattern=re.compile(r"place\(([0-2]),([0-2])\)"),
    from_match=lambda m: int(m.group(1)) * 3 + int(m.group(2)),
)

CONNECT4 = Pairing(
    rules_file="connect4.rules",
    openspiel_name="connect_four",
    num_actions=7,
    to_ours=lambda a: f"drop({a})",
    pattern=re.compile(r"drop\(([0-6])\)"),
    from_match=lambda m: int(m.group(1)),
)


def to_openspiel(pairing: Pairing, action_id: str) -> int:
    m = pairing.pattern.fullmatch(action_id)
    assert m is not None, f"{pairing.rules_file}: action id {action_id!r} has no OpenSpiel counterpart"
    return pairing.from_match(m)


@pytest.fixture(scope="module")
def tictactoe_rules():
    return rulelang.load(str(EXAMPLES / TICTACTOE.rules_file))


@pytest.fixture(scope="module")
def connect4_rules():
    return rulelang.load(str(EXAMPLES / CONNECT4.rules_file))


def describe(pairing: Pairing, seed, history, game, state) -> str:
    """A readable account of a disagreement: the position and both legal sets."""
    ours = sorted(a.id for a in game.legal_actions())
    try:
        full_view = repr(game.view(None))
    except Exception as e:  # the report must not hide the disagreement
        full_view = f"<view(None) failed: {type(e).__name__}: {e}>"
    theirs = sorted(state.legal_actions()) if not state.is_terminal() else []
    return "\n".join(
        [
            f"game {pairing.rules_file} vs OpenSpiel {pairing.openspiel_name}, seed {seed}",
            f"OpenSpiel moves so far: {history}",
            f"our moves so far:       {[pairing.to_ours(a) for a in history]}",
            "OpenSpiel board:",
            str(state),
            f"OpenSpiel: current_player={state.current_player()} terminal={state.is_terminal()} "
            f"legal={theirs} (= {[pairing.to_ours(a) for a in theirs]})"
            + (f" returns={state.returns()}" if state.is_terminal() else ""),
            f"ours:      current_player={game.current_player} over={game.is_over()} "
            f"legal={ours} end_reason={game.end_reason!r}"
            + (f" returns={game.returns()}" if game.is_over() else ""),
            f"our full view: {full_view}",
        ]
    )


def assert_same_position(pairing: Pairing, seed, history, game, state) -> list[int]:
    """Checks one position in lockstep; returns OpenSpiel's legal actions."""
    why = lambda: describe(pairing, seed, history, game, state)  # noqa: E731
    assert game.is_over() == state.is_terminal(), "terminal disagrees\n" + why()
    assert game.current_player == state.current_player(), "current player disagrees\n" + why()
    ours = game.legal_actions()
    ids = [a.id for a in ours]
    assert len(ids) == len(set(ids)), "duplicate legal action ids\n" + why()
    mapped = {to_openspiel(pairing, i) for i in ids}
    theirs = [] if state.is_terminal() else list(state.legal_actions())
    assert mapped == set(theirs), "legal moves disagree\n" + why()
    for a in ours:
        assert a.player == game.current_player, f"action {a.id} has player {a.player}\n" + why()
    if state.is_terminal():
        assert game.current_player == TERMINAL, why()
        assert list(game.returns()) == [float(r) for r in state.returns()], "returns disagree\n" + why()
    return theirs


def _log_entry(entry) -> tuple[int, str]:
    """(player, action id) of a log entry; the format itself is checked by test_log_format."""
    if isinstance(entry, dict):
        return entry["player"], entry["action"]
    player, action = entry
    return player, action


def play_lockstep(pairing: Pairing, rules, seed: int, script: list[int] | None = None) -> None:
    """Plays one game side by side with OpenSpiel.

    Moves come from ``script`` (OpenSpiel action ids) if given, else uniformly at
    random from OpenSpiel's sorted legal actions with ``random.Random(seed)``.
    At a random mid-game point the state is saved with ``to_json()`` and
    reloaded; the reloaded game then gets the same moves and must stay
    identical to the original (same legal ids, player, JSON, returns).
    """
    rng = random.Random(seed)
    os_game = pyspiel.load_game(pairing.openspiel_name)
    state = os_game.new_initial_state()
    game = rules.new_game(2, seed=seed)
    history: list[int] = []
    save_at = rng.randrange(0, 8)  # number of moves before the round trip
    probe_illegal_at = rng.randrange(1, 8)
    restored = None

    while True:
        legal = assert_same_position(pairing, seed, history, game, state)

        if len(history) == save_at and restored is None:
            text = game.to_json()
            restored = rules.load_game(text)
            assert restored.to_json() == text, (
                "to_json() -> load_game() -> to_json() changed the text\n"
                + describe(pairing, seed, history, game, state)
            )
        if restored is not None:
            assert restored.current_player == game.current_player, describe(pairing, seed, history, game, state)
            assert [a.id for a in restored.legal_actions()] == [a.id for a in game.legal_actions()], (
                "reloaded game has different legal actions\n" + describe(pairing, seed, history, game, state)
            )

        if len(history) == probe_illegal_at and legal:
            illegal = [a for a in range(pairing.num_actions) if a not in legal]
            if illegal:
                before = game.to_json()
                bad = pairing.to_ours(rng.choice(illegal))
                with pytest.raises(rulelang.IllegalAction):
                    game.apply(bad)
                assert game.to_json() == before, f"rejected {bad} changed the state\n" + describe(
                    pairing, seed, history, game, state
                )

        if state.is_terminal():
            break
        if script is not None:
            assert len(history) < len(script), "OpenSpiel game goes on past the script"
            action = script[len(history)]
        else:
            action = rng.choice(sorted(legal))
        state.apply_action(action)
        game.apply(pairing.to_ours(action))
        if restored is not None:
            restored.apply(pairing.to_ours(action))
        history.append(action)

    if script is not None:
        assert history == script, "the game ended before the script did"
    assert [_log_entry(e) for e in game.log] == [
        (i % 2, pairing.to_ours(a)) for i, a in enumerate(history)
    ], "game.log does not list the decisions taken"
    if state.returns()[0] != 0:
        assert game.winners() == [0 if state.returns()[0] > 0 else 1], describe(pairing, seed, history, game, state)
    else:  # a draw: no winner, or a victory shared by both seats
        assert sorted(game.winners()) in ([], [0, 1]), describe(pairing, seed, history, game, state)
    if restored is not None:
        assert restored.to_json() == game.to_json(), "reloaded game ended in a different state"
        assert list(restored.returns()) == list(game.returns())


def test_tictactoe_random_lockstep(tictactoe_rules):
    """300 random games of tic-tac-toe against OpenSpiel's standard-rules tic_tac_toe."""
    for seed in range(TICTACTOE_GAMES):
        play_lockstep(TICTACTOE, tictactoe_rules, seed)


def test_connect4_random_lockstep(connect4_rules):
    """150 random games of connect four against OpenSpiel's standard-rules connect_four."""
    for seed in range(CONNECT4_GAMES):
        play_lockstep(CONNECT4, connect4_rules, 10_000 + seed)


# Fixed edge cases (OpenSpiel action ids); OpenSpiel itself referees them in lockstep.
TICTACTOE_SCRIPTS = {
    "x wins on the ninth move (full board, not a draw)": [2, 1, 4, 0, 7, 8, 5, 6, 3],
    "draw on a full board": [6, 3, 4, 8, 0, 2, 5, 7, 1],
    "o wins on the sixth move": [1, 8, 0, 5, 6, 2],
    "x wins with two lines at once": [0, 3, 2, 5, 4, 6, 7, 8, 1],
}
CONNECT4_SCRIPTS = {
    "draw on a full board": [
        4, 3, 6, 0, 1, 4, 5, 5, 1, 1, 5, 0, 1, 6, 0, 1, 5, 5, 1, 0, 4,
        6, 3, 2, 6, 6, 0, 4, 6, 5, 2, 0, 4, 2, 4, 2, 2, 2, 3, 3, 3, 3,
    ],
    "second player wins with the 42nd disc": [
        4, 5, 6, 4, 4, 4, 3, 4, 1, 2, 3, 2, 5, 3, 0, 6, 1, 1, 4, 6, 0,
        2, 2, 3, 0, 5, 6, 0, 3, 1, 1, 0, 0, 5, 3, 6, 1, 2, 6, 2, 5, 5,
    ],
    "vertical four": [0, 1, 0, 1, 0, 1, 0],
    "horizontal four": [0, 0, 1, 1, 2, 2, 3],
    "rising diagonal": [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3],
    "falling diagonal": [6, 5, 5, 4, 4, 3, 4, 3, 3, 0, 3],
}


@pytest.mark.parametrize("name", sorted(TICTACTOE_SCRIPTS))
def test_tictactoe_scripted(tictactoe_rules, name):
    play_lockstep(TICTACTOE, tictactoe_rules, seed=7, script=TICTACTOE_SCRIPTS[name])


@pytest.mark.parametrize("name", sorted(CONNECT4_SCRIPTS))
def test_connect4_scripted(connect4_rules, name):
    play_lockstep(CONNECT4, connect4_rules, seed=7, script=CONNECT4_SCRIPTS[name])


def _random_run(pairing: Pairing, rules, seed: int, stop_after: int | None = None):
    """Plays with random choices from random.Random(seed); returns the game."""
    rng = random.Random(seed)
    game = rules.new_game(2, seed=seed)
    while not game.is_over() and (stop_after is None or len(game.log) < stop_after):
        ids = sorted(a.id for a in game.legal_actions())
        game.apply(rng.choice(ids))
    return game


@pytest.mark.parametrize("pairing", [TICTACTOE, CONNECT4], ids=["tictactoe", "connect4"])
def test_same_seed_same_json(pairing, tictactoe_rules, connect4_rules):
    """Same rules, seed and decisions give byte-identical to_json(), mid-game and at the end."""
    rules = tictactoe_rules if pairing is TICTACTOE else connect4_rules
    for seed in range(20):
        for stop in (0, 3, None):
            a = _random_run(pairing, rules, seed, stop)
            b = _random_run(pairing, rules, seed, stop)
            assert a.to_json() == b.to_json(), f"seed {seed}, stop after {stop}"
    # A fresh load of the rules gives the same bytes too.
    again = rulelang.load(str(EXAMPLES / pairing.rules_file))
    assert _random_run(pairing, again, 3).to_json() == _random_run(pairing, rules, 3).to_json()


@pytest.mark.parametrize("pairing", [TICTACTOE, CONNECT4], ids=["tictactoe", "connect4"])
def test_clone_is_independent(pairing, tictactoe_rules, connect4_rules):
    """A mid-game clone() continues like the original and does not share state with it."""
    rules = tictactoe_rules if pairing is TICTACTOE else connect4_rules
    for seed in range(10):
        game = _random_run(pairing, rules, seed, stop_after=3)
        before = game.to_json()
        copy = game.clone()
        assert copy.to_json() == before
        rng = random.Random(seed)
        while not copy.is_over():
            copy.apply(rng.choice(sorted(a.id for a in copy.legal_actions())))
        assert game.to_json() == before, "playing on a clone changed the original"
        assert len(game.log) == 3


def test_log_format(tictactoe_rules):
    """docs/api.md: `log` is a list of {"player": seat, "action": id}."""
    game = tictactoe_rules.new_game(2, seed=0)
    game.apply("place(1,1)")
    game.apply("place(0,0)")
    assert game.log == [{"player": 0, "action": "place(1,1)"}, {"player": 1, "action": "place(0,0)"}]

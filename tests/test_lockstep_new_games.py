"""Lockstep tests of the newer example games against OpenSpiel (issue 35).

Each rule file under ``games/examples/`` below is our own encoding of the game OpenSpiel ships under
that name (the C++ games of the ``open_spiel`` package, with the parameters given), played side by
side with it over random games. At every step:

* the player to move is the same (chance ``-1``, a finished game ``-4`` on both sides);
* at a decision, the legal actions are the same set once OpenSpiel's action ids are mapped to ours by
  the small table of each pairing (``to_ours``); at a chance node, the outcomes and their
  probabilities are the same, mapped the same way;
* both games end together, and then ``Game.returns()`` equals OpenSpiel's ``State.returns()``.

The moves are drawn from OpenSpiel's legal actions with a ``random.Random`` seeded per game (chance
outcomes by their probabilities), so a failure names a seed that reproduces it. Once per game, at a
random point, the state also goes through ``to_json()`` -> ``load_game()`` and must give the same legal
actions. The number of games is fixed (no time bound): each test plays the same games every run.

Skipped cleanly when OpenSpiel is not installed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

pyspiel = pytest.importorskip("pyspiel")

import rulelang  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "games" / "examples"
TERMINAL = -4
CHANCE = -1


@dataclass(frozen=True)
class Pairing:
    """How one of our rule files maps onto an OpenSpiel game."""

    name: str  # the test id
    rules_file: str
    openspiel_name: str
    games: int  # random games played by the test
    to_ours: Callable[[int], str]  # OpenSpiel action (decision) -> our action id
    params: dict = field(default_factory=dict)  # OpenSpiel game parameters
    variants: tuple = ()  # our variants matching those parameters
    players: int = 2
    chance_to_ours: Callable[[int], str] = str  # OpenSpiel chance outcome -> our outcome id


# --- the tables -----------------------------------------------------------------------------------

OWARE = Pairing("oware", "oware.rules", "oware", games=300, to_ours=lambda a: f"sow({a})")


def _checkers_id(a: int) -> str:
    # OpenSpiel: a = ((row * 8 + column) * 4 + direction) * 2 + capture (mixed base 8, 8, 4, 2)
    capture, a = a % 2, a // 2
    direction, a = a % 4, a // 4
    return f"{'jump' if capture else 'step'}({a},{direction})"  # a = row * 8 + column: our square


CHECKERS = Pairing("checkers", "checkers.rules", "checkers", games=200, to_ours=_checkers_id)


def _hex_id(columns: int) -> Callable[[int], str]:
    return lambda a: f"place({a // columns},{a % columns})"  # OpenSpiel: a = row * columns + column


HEX7 = Pairing("hex 7x7", "hex.rules", "hex", games=200, to_ours=_hex_id(7), params={"board_size": 7})
HEX5 = Pairing("hex 5x5", "hex.rules", "hex", games=150, to_ours=_hex_id(5), params={"board_size": 5},
               variants=("small",))


def _dots_id(rows: int, columns: int) -> Callable[[int], str]:
    horizontal = (rows + 1) * columns  # OpenSpiel: horizontal lines row by row, then vertical ones

    def to_ours(a: int) -> str:
        if a < horizontal:
            return f"hline({a // columns},{a % columns})"
        a -= horizontal
        return f"vline({a // (columns + 1)},{a % (columns + 1)})"

    return to_ours


DOTS = Pairing("dots and boxes 2x2", "dots_and_boxes.rules", "dots_and_boxes", games=300, to_ours=_dots_id(2, 2))
DOTS3 = Pairing("dots and boxes 3x3", "dots_and_boxes.rules", "dots_and_boxes", games=200,
                to_ours=_dots_id(3, 3), params={"num_rows": 3, "num_cols": 3}, variants=("three",))

LEDUC_ACTIONS = {0: "fold", 1: "call", 2: "raise"}
LEDUC = Pairing("leduc poker", "leduc_poker.rules", "leduc_poker", games=300, to_ours=LEDUC_ACTIONS.__getitem__)


def _breakthrough_id(a: int) -> str:
    # OpenSpiel: a = ((row * 8 + column) * 6 + direction) * 2 + capture (mixed base 8, 8, 6, 2)
    a //= 2  # the capture bit follows from the board: ours has one move per direction
    direction, a = a % 6, a // 6
    return f"move({a},{direction})"  # a = row * 8 + column: our square


BREAKTHROUGH = Pairing("breakthrough", "breakthrough.rules", "breakthrough", games=200, to_ours=_breakthrough_id)

PAIRINGS = [OWARE, CHECKERS, HEX7, HEX5, DOTS, DOTS3, LEDUC, BREAKTHROUGH]
IDS = [p.name for p in PAIRINGS]

_RULES: dict = {}


def rules_for(pairing: Pairing):
    key = (pairing.rules_file, pairing.variants)
    if key not in _RULES:
        _RULES[key] = rulelang.load(str(EXAMPLES / pairing.rules_file), variants=list(pairing.variants))
    return _RULES[key]


# --- lockstep -------------------------------------------------------------------------------------


def describe(pairing: Pairing, seed, history, game, state) -> str:
    """A readable account of a disagreement: the moves so far, both positions and legal sets."""
    ours = sorted(a.id for a in game.legal_actions()) if game.current_player >= 0 else []
    try:
        full_view = repr(game.view(None)["vars"])
    except Exception as e:  # the report must not hide the disagreement
        full_view = f"<view(None) failed: {type(e).__name__}: {e}>"
    theirs = []
    if not state.is_terminal():
        theirs = [(a, (pairing.chance_to_ours if state.is_chance_node() else pairing.to_ours)(a))
                  for a in state.legal_actions()]
    return "\n".join([
        f"{pairing.rules_file} vs OpenSpiel {pairing.openspiel_name}{pairing.params or ''}, seed {seed}",
        f"moves so far (OpenSpiel ids, ours): {history}",
        "OpenSpiel state:",
        str(state),
        f"OpenSpiel: current_player={state.current_player()} terminal={state.is_terminal()} legal={theirs}"
        + (f" returns={state.returns()}" if state.is_terminal() else ""),
        f"ours:      current_player={game.current_player} over={game.is_over()} legal={ours} "
        f"end_reason={game.end_reason!r}" + (f" returns={game.returns()}" if game.is_over() else ""),
        f"our state: {full_view}",
    ])


def check_position(pairing: Pairing, seed, history, game, state) -> list[tuple[int, float]]:
    """One position in lockstep; returns OpenSpiel's (action, probability) choices (probability 1 at
    a decision), empty at the end."""
    why = lambda: describe(pairing, seed, history, game, state)  # noqa: E731
    assert game.is_over() == state.is_terminal(), "the end disagrees\n" + why()
    assert game.current_player == state.current_player(), "the player to move disagrees\n" + why()
    if state.is_terminal():
        assert game.current_player == TERMINAL, why()
        assert list(game.returns()) == pytest.approx([float(r) for r in state.returns()]), "returns disagree\n" + why()
        return []
    if state.is_chance_node():
        ours = {a.id: p for a, p in game.chance_outcomes()}
        theirs = state.chance_outcomes()
        mapped = {pairing.chance_to_ours(a): p for a, p in theirs}
        assert len(mapped) == len(theirs), "two chance outcomes map to one id\n" + why()
        assert ours.keys() == mapped.keys(), "chance outcomes disagree\n" + why()
        for k, p in mapped.items():
            assert ours[k] == pytest.approx(p), f"the probability of {k} disagrees\n" + why()
        return list(theirs)
    ours = [a.id for a in game.legal_actions()]
    assert len(ours) == len(set(ours)), "duplicate legal action ids\n" + why()
    theirs = state.legal_actions()
    mapped = {pairing.to_ours(a) for a in theirs}
    assert len(mapped) == len(theirs), "two OpenSpiel actions map to one id\n" + why()
    assert set(ours) == mapped, "legal actions disagree\n" + why()
    return [(a, 1.0) for a in theirs]


def play_lockstep(pairing: Pairing, seed: int, script: list[int] | None = None) -> int:
    """Plays one game side by side with OpenSpiel; returns its length (actions, chance included)."""
    rng = random.Random(seed)
    rules = rules_for(pairing)
    state = pyspiel.load_game(pairing.openspiel_name, pairing.params).new_initial_state()
    game = rules.new_game(pairing.players, seed=seed, chance="explicit")
    history: list[tuple[int, str]] = []
    save_at = rng.randrange(0, 30)
    while True:
        choices = check_position(pairing, seed, history, game, state)
        if len(history) == save_at:
            text = game.to_json()
            again = rules.load_game(text)
            assert again.to_json() == text, "to_json() -> load_game() -> to_json() changed the text"
            assert again.current_player == game.current_player
            if game.current_player >= 0:
                assert [a.id for a in again.legal_actions()] == [a.id for a in game.legal_actions()]
        if not choices:
            break
        if script is not None:
            assert len(history) < len(script), "OpenSpiel's game goes on past the script"
            action = script[len(history)]
        elif state.is_chance_node():
            actions, probs = zip(*choices)
            action = rng.choices(actions, probs)[0]
        else:
            action = rng.choice(sorted(a for a, _ in choices))
        ours = (pairing.chance_to_ours if state.is_chance_node() else pairing.to_ours)(action)
        state.apply_action(action)
        game.apply(ours)
        history.append((action, ours))
    if script is not None:
        assert len(history) == len(script), "the game ended before the script did"
    return len(history)


@pytest.mark.parametrize("pairing", PAIRINGS, ids=IDS)
def test_random_games_in_lockstep(pairing):
    """Random games of each pairing: same moves, same chance, same ends, same returns."""
    lengths = [play_lockstep(pairing, 35_000 + seed) for seed in range(pairing.games)]
    assert min(lengths) > 0


def test_leduc_views_show_only_what_the_seat_knows():
    """Leduc poker's hidden cards: over random games, two decision points that OpenSpiel's information
    state cannot tell apart for a seat (its own card, the public card, the betting) always give that
    seat the same view here, so a view never shows the other seat's card. (Our view keeps the betting
    only as far as the rules keep it in variables, so it may tell apart fewer positions than the
    information state does, never more.)"""
    import json

    rules = rules_for(LEDUC)
    views: dict = {}
    for seed in range(150):
        rng = random.Random(seed)
        state = pyspiel.load_game("leduc_poker").new_initial_state()
        game = rules.new_game(2, seed=seed, chance="explicit")
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                action = rng.choices(actions, probs)[0]
                ours = LEDUC.chance_to_ours(action)
            else:
                for seat in (0, 1):
                    info = state.information_state_string(seat)
                    views.setdefault((seat, info), set()).add(json.dumps(game.view(seat), sort_keys=True))
                action = rng.choice(state.legal_actions())
                ours = LEDUC.to_ours(action)
            state.apply_action(action)
            game.apply(ours)
    assert len(views) > 100
    for (seat, info), seen in views.items():
        assert len(seen) == 1, f"seat {seat} cannot tell these apart ({info!r}) but its views differ: {seen}"

"""Simulated games of Vega and Station look like the real games (issue 32): the `heuristic` declarations
of games/vega.rules and games/station.rules make `--agents heuristic:10` play games whose length, endings
and events are the ones the rulebooks imply (docs/games/vega.md and docs/games/station.md, "What simulated
games look like", derive the figures and give the measured ones).

The games are seeded (game seed = index, as `rulelang simulate --seed 0` plays them) and played as the
runner plays them: one heuristic agent per seat, seeded from the game seed and the seat, chance by the
seeded chance agent. Station is played by `heuristic:10` (actions weighed once their inner choices are
made), Vega by `heuristic:10:0` (one decision ahead: the file's heuristic is written for it, and with
whole actions weighed colonies became rare, docs/games/vega.md). A Vega game takes about fifteen
seconds of CPU at 2 players and thirty at 3, a Station game about five: every test that plays is marked
slow (`pytest -m slow`, which .ci/run runs beside the README's command). Within one run the games are
played once (cached): game 0's own test costs nothing beside the test of six games that includes it.
"""
from __future__ import annotations

import statistics
from functools import lru_cache
from pathlib import Path

import pytest

import rulelang
from interpreter.agents import CHANCE, ChanceAgent, agent_seed, make_agent
from interpreter.runner import game_seed

ROOT = Path(__file__).resolve().parents[1]
STATION_AGENT = "heuristic:10"
VEGA_AGENT = "heuristic:10:0"
VEGA_ENDINGS = {"supply used up twice", "last player left"}  # V-9
STATION_TRIGGERS = {"40 VP", "all 9 sectors", "alien supply"}  # S-12


@lru_cache(maxsize=None)
def rules(name: str):
    return rulelang.load(str(ROOT / "games" / name))


def play(name: str, players: int, index: int, agent: str, watch=None) -> dict:
    """Game `index` of `rulelang simulate --seed 0 --agents AGENT`, with what the tests look at:
    rounds as the runner counts them (the most turns one seat took a decision in), the ending, the
    winners, how often each offered action was taken, and `watch(game)`, called at the start of every
    turn and at the end."""
    seed = game_seed(0, index)
    game = rules(name).new_game(players, seed=seed)
    agents = [make_agent(agent, agent_seed(seed, s)) for s in range(players)]
    chance = ChanceAgent(agent_seed(seed, "chance"))
    turns_of = [0] * players
    last_turn = 0
    actions: dict[str, int] = {}
    for _ in range(30_000):
        if game.is_over():
            break
        if game.turns != last_turn:
            last_turn = game.turns
            if 0 <= game.current < players:
                turns_of[game.current] += 1
            if watch is not None:
                watch(game)
        seat = game.current_player
        if seat == CHANCE:
            game.apply(chance.choose(game, seat))
            continue
        action = agents[seat].choose(game, seat)
        if game.decision_kind == "action":
            name_ = action.id.partition("(")[0]
            actions[name_] = actions.get(name_, 0) + 1
        game.apply(action)
    assert game.is_over(), f"{name} game {index} did not end within 30,000 decisions"
    if watch is not None:
        watch(game)
    return {"rounds": max(turns_of), "end": game.end_reason, "winners": list(game.winners()),
            "actions": actions, "eliminated": game.view(None)["eliminated"]}


@lru_cache(maxsize=None)
def vega_game(index: int, players: int = 3) -> dict:
    """A Vega game, with the number of colonies founded in it (V-4.6: finished colony tokens other than
    the first colonies of setup)."""
    first, founded = set(), set()

    def watch(game):
        finished = {c["id"] for c in game.view(None)["pieces"]["Colony"] if c["finished"]}
        if not first and not founded:
            first.update(finished)
        founded.update(finished - first)

    row = play("vega.rules", players, index, VEGA_AGENT, watch)
    row["founded"] = len(founded)
    return row


@lru_cache(maxsize=None)
def station_game(index: int, players: int = 3) -> dict:
    return play("station.rules", players, index, STATION_AGENT)


def test_both_files_declare_a_heuristic_that_is_a_number_for_every_seat():
    for name in ("vega.rules", "station.rules"):
        game = rules(name).new_game(3, seed=1)
        values = game.heuristics()
        assert values is not None and len(values) == 3 and all(isinstance(v, int) for v in values), name


@pytest.mark.slow
def test_a_vega_game_of_heuristic_agents_is_a_real_game():
    """V-3, V-4.2, V-9: twelve modules per player in the supply, at most one turned up per turn, a second
    pass through what was not developed: about 24 rounds or fewer. V-4.4, V-4.6: colonies are founded;
    V-4.5: ships fight; V-9: the highest production wins."""
    g = vega_game(0)
    assert g["end"] in VEGA_ENDINGS
    assert 15 <= g["rounds"] <= 30, g
    assert g["founded"] >= 1, g
    assert g["actions"].get("fire", 0) >= 1, g
    assert len(g["winners"]) == 1, g


@pytest.mark.slow
def test_vega_games_of_heuristic_agents_look_like_the_rulebook():
    games = [vega_game(i) for i in range(6)]
    rounds = [g["rounds"] for g in games]
    assert all(g["end"] in VEGA_ENDINGS for g in games)
    assert 15 <= statistics.median(rounds) <= 30, rounds
    assert all(g["founded"] >= 1 for g in games), [g["founded"] for g in games]
    assert sum(g["actions"].get("fire", 0) > 0 for g in games) >= 4, [g["actions"].get("fire", 0) for g in games]
    assert sum(len(g["winners"]) == 1 for g in games) >= 4, [g["winners"] for g in games]


@pytest.mark.slow
def test_two_player_vega_games_found_colonies_and_fight():
    """V-9, V-4.1: production, what wins, comes only from colonies, so every real game founds some; at 2
    players as at 3. V-4.5: ships fight; at two players the rivals' colonies lie across the board
    (V-3-en), and battles come in half the games, not in most (measured: 4 of these 8, 8 of 16 seeds;
    3 of 16 before warships came after one transport at two players, docs/games/vega.md, round 23).
    Eight games (about a minute and a half of CPU)."""
    games = [vega_game(i, players=2) for i in range(8)]
    assert all(g["founded"] >= 1 for g in games), [g["founded"] for g in games]
    shots = [g["actions"].get("fire", 0) for g in games]
    assert sum(n > 0 for n in shots) >= 4, shots


@pytest.mark.slow
def test_station_games_of_heuristic_agents_end_by_a_rulebook_trigger():
    """S-12: a game ends after a turn in which the player reached 40 VP, built his ninth sector or left
    four aliens or fewer in the supply; with one sector per colour and level for every player (S-1.2,
    S-5) the race to nine sectors is what ends it. Not stalled: well within the rulebook's length
    (below), against random play's 34 to 110 rounds. One game here; the test below asserts the same of six."""
    ends_by_nine_sectors(station_game(0))


def ends_by_nine_sectors(g):
    assert g["end"] in STATION_TRIGGERS, g
    assert g["end"] == "all 9 sectors", g
    assert g["rounds"] <= 45, g
    assert len(g["winners"]) >= 1


@pytest.mark.slow
def test_station_games_of_heuristic_agents_last_as_long_as_the_rulebook_implies():
    """About 20 to 35 rounds: the ninth sector needs nine build turns, the metal for them and the
    incomes that pay the ship actions (docs/games/station.md). Six games (about 30 s): the agent weighs
    a ship action with its inner choices made (which sector, which dice), so it builds when it can."""
    games = [station_game(i) for i in range(6)]
    for g in games:
        ends_by_nine_sectors(g)
    rounds = [g["rounds"] for g in games]
    assert 20 <= statistics.median(rounds) <= 35, rounds

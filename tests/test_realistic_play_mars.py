"""Mars played purposefully (issue 32): `heuristic:10:0` (one decision ahead) on the file's `heuristic`
declaration makes games that end by the rulebook's ending (M-15) and sooner than random ones, with
a main action in almost every turn; the agent planning each action and the flow's choices
(`heuristic:10:8:2`) makes games of the rulebook's length at two and three players. The figures, why the
default `heuristic:10` (whole actions weighed) plays Mars worse for now, and what none of them reaches are
in docs/games/mars.md ("What simulated games look like")."""
from __future__ import annotations

import random
import statistics
from functools import lru_cache
from pathlib import Path

import pytest

import rulelang
from interpreter.agents import make_agent

ROOT = Path(__file__).resolve().parent.parent
MARS = ROOT / "games" / "mars.rules"
SEEDS = range(16)  # the two-player games of `heuristic:10:0` and of random play
ENDINGS = {"missions fulfilled", "colony level 5"}  # M-15
AGENT = "heuristic:10:0"
PLANNER = "heuristic:10:8:2"  # plans each action and the flow's choices with a beam of two (docs/agents.md)


def play(rs, players, seed, spec, limit=20000):
    """One game: its rounds (the file's `round_no`), end reason, turns and turns without a main action
    (ended with `end_turn` before one, M-5)."""
    g = rs.new_game(players, seed=seed)
    agents = [make_agent(spec, seed=seed * 10 + i) for i in range(players)]
    rng = random.Random(seed)
    turns = idle = 0
    for _ in range(limit):
        if g.is_over():
            break
        if g.is_chance():
            outcomes = g.chance_outcomes()
            g.apply(rng.choices([o[0] for o in outcomes], weights=[o[1] for o in outcomes])[0])
            continue
        p = g.current_player
        action = agents[p].choose(g, p)
        aid = getattr(action, "id", action)
        if aid == "end_turn":
            turns += 1
            idle += not g.view()["vars"]["main_done"][p]
        g.apply(aid)
    assert g.is_over(), f"seed {seed}: not over after {limit} decisions"
    return {"rounds": g.view()["vars"]["round_no"], "end": g.end_reason, "turns": turns, "idle": idle}


@pytest.fixture(scope="module")
def rules():
    return rulelang.load(str(MARS))


@lru_cache(maxsize=None)
def two_player_games(spec):
    rs = rulelang.load(str(MARS))
    return [play(rs, 2, s, spec) for s in SEEDS]


@pytest.mark.slow
def test_heuristic_games_end_by_the_rulebook_and_sooner_than_random(rules):
    """Two players, seeds 0-15 (about 45 s). Measured: heuristic:10:0 32-87 rounds (median 73.5: the
    length of a one-decision game is bimodal, about 35-50 rounds where colony level 3 comes soon and
    70-90 where it waits, and which it is flips from seed to seed with any change to the heuristic; the
    heuristic before its contributions grew as a mission nears its target, 66.5), shorter than random
    play (62-178, median 96) in every one of the sixteen seeds; end_turn without a main action in about
    10 % of turns against about 50 % in random play. Eight seeds were too few: seeds 0-7 gave 40 before
    and 67.5 now, seeds 8-15 77 both times."""
    smart = two_player_games(AGENT)
    rand = two_player_games("random")
    assert all(r["end"] in ENDINGS for r in smart + rand), [r["end"] for r in smart]
    smart_rounds = [r["rounds"] for r in smart]
    rand_rounds = [r["rounds"] for r in rand]
    smart_median = statistics.median(smart_rounds)
    # the rulebook's purposeful game is 10-20 rounds (docs/games/mars.md); the one-move agent's median
    # is 73.5: asserted is what it meets, with a small margin (the rulebook's length: below)
    assert smart_median <= 80, smart_rounds
    assert smart_median <= 0.8 * statistics.median(rand_rounds), (smart_rounds, rand_rounds)
    assert sum(a < b for a, b in zip(smart_rounds, rand_rounds)) >= 14, (smart_rounds, rand_rounds)
    idle = sum(r["idle"] for r in smart) / sum(r["turns"] for r in smart)
    rand_idle = sum(r["idle"] for r in rand) / sum(r["turns"] for r in rand)
    assert idle <= 0.2 and rand_idle >= 0.4, (idle, rand_idle)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="measured (docs/games/mars.md, 'Where the rounds go'): the rover's and the "
                   "bots' missions move slowly (the one-move agent cannot weigh crystals for extra rover "
                   "points by the walk they allow; bots wait for ships, bounded by the colony level), so "
                   "games wait for colony level 3, 4 or 5, which lopsided LSS columns make slow: 32 to 87 rounds, "
                   "median 73.5 over 16 seeds. The agent planning whole actions and the flow's choices "
                   "(heuristic:10:8:2) gets 24 (19-45) over 16 seeds, at 3 players 19.5 (15-37) over 12, at ten "
                   "times the CPU (the test below; docs/games/mars.md, round 23)")
def test_heuristic_games_last_as_long_as_the_rulebook_implies():
    """About 10 to 20 rounds (the issue's goal: a median of 10 to 25): nearly every main action contributes
    to a mission, about one in two to an active one, and two players need about 17 contributions
    (docs/games/mars.md). The same sixteen games as above."""
    assert 10 <= statistics.median(r["rounds"] for r in two_player_games(AGENT)) <= 25


# the planning agent's games, by players: the seeds played (the first ones) and what they measured
PLANNED = {
    2: (range(8), "20, 40, 29, 22, 19, 19, 24, 24 rounds (median 23), 10 of 185 end_turns without a main "
                  "action, about 200 s of CPU; seeds 0-15: median 24 (19-45), 11 of 16 in 10-25"),
    3: (range(4), "16, 19, 21, 18 rounds (median 18.5), 12 of 101 end_turns without a main action, about "
                  "100 s of CPU; seeds 0-11: median 19.5 (15-37), 9 of 12 in 10-25"),
}


@pytest.mark.slow
@pytest.mark.parametrize("players", sorted(PLANNED))
def test_games_of_the_planning_agent_last_as_long_as_the_rulebook_implies(rules, players):
    """The rulebook's length (M-5, M-15; docs/games/mars.md, "What the rulebook leads one to expect"):
    about 10 to 20 rounds, a median of 10 to 25, ended by the missions or colony level 5, a main action in
    nearly every turn. The agent that plans each action and the flow's choices (PLANNER), on the first
    seeds (the costliest tests of the suite). Measured: PLANNED's figures."""
    seeds, _measured = PLANNED[players]
    games = [play(rules, players, seed, PLANNER) for seed in seeds]
    rounds = [g["rounds"] for g in games]
    assert all(g["end"] in ENDINGS for g in games), [g["end"] for g in games]
    assert 10 <= statistics.median(rounds) <= 25, rounds
    idle = sum(g["idle"] for g in games) / sum(g["turns"] for g in games)
    assert idle <= 0.2, idle


def test_the_heuristic_is_declared_and_changes_no_rule(rules):
    """The declaration gives a whole number per seat; it is no rule, so random play (which never reads
    it) still ends by the rulebook (tests/test_golden_games.py pins the rules themselves)."""
    g = rules.new_game(2, seed=3)
    values = g.heuristics()
    assert len(values) == 2 and all(isinstance(v, int) for v in values)
    assert play(rules, 2, 1, "random")["end"] in ENDINGS

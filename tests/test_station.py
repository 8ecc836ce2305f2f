"""Station (games/station.rules): its scenarios, rulebook coverage, variants, random games to a
rulebook ending, determinism by seed and save/load in the middle of a game.

No Python here knows Station's rules: everything is in the rule file; this only runs it."""
import os
import random

import pytest

import rulelang
from interpreter.scenarios import run_path

try:
    from game_checks import (cited_ids, section_ids, check_explicit_chance_round_trip, check_round_trip_mid_game, check_same_seed_same_game,
                             play_random, MAX_DECISIONS)
except ImportError:  # tests/ as a package
    from tests.game_checks import (cited_ids, section_ids, check_explicit_chance_round_trip, check_round_trip_mid_game,
                                   check_same_seed_same_game, play_random, MAX_DECISIONS)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATION = os.path.join(ROOT, "games", "station.rules")
RULEBOOK = os.path.normpath(os.path.join(ROOT, "..", "shared", "rulebooks", "station.md"))
ENDINGS = {"40 VP", "all 9 sectors", "alien supply"}
VARIANTS = [(), ("first_play",), ("friendly",), ("first_play", "friendly"), ("invented_hub_bonuses",),
            ("first_play", "friendly", "invented_hub_bonuses")]


@pytest.fixture(scope="module")
def station():
    return rulelang.load(STATION)


@pytest.mark.parametrize("result", [pytest.param(r, id=r.name) for r in run_path(STATION)])
def test_scenario(result):
    assert result.passed, result.message


@pytest.mark.skipif(not os.path.exists(RULEBOOK), reason="the rulebook (../shared/rulebooks) is not beside this checkout")
def test_every_section_is_cited_and_has_a_scenario(station):
    ids = section_ids(RULEBOOK)
    assert len(ids) == 18
    cited = cited_ids(STATION)
    assert set(ids) <= cited, sorted(set(ids) - cited)
    assert cited <= set(ids), sorted(cited - set(ids))
    in_scenarios = {c for sc in station.program.scenarios for c in sc.cites}
    assert set(ids) <= in_scenarios, sorted(set(ids) - in_scenarios)


@pytest.mark.parametrize("variants", VARIANTS, ids=lambda v: "+".join(v) or "base")
def test_the_file_and_its_variants_load_clean(variants):
    diags = rulelang.check(STATION, variants=variants)
    if not os.path.exists(RULEBOOK):  # a checkout without ../shared: citations cannot be checked
        diags = [d for d in diags if not (d.code == "W306" and d.severity == "note")]
    assert diags == [], [d.render() for d in diags]
    rs = rulelang.load(STATION, variants=variants)
    assert rs.variants == ("first_play", "friendly", "invented_hub_bonuses")
    assert rs.player_counts == (2, 3, 4)
    assert ENDINGS <= set(rs.endings)


def test_invented_component_values_are_placeholders(station):
    whats = " ".join(p.what for p in station.placeholders)
    for table in ("ships.", "sectors.", "hubs.", "rewards.", "kits."):
        assert table in whats, table
    assert "trades." not in whats  # the trades are the rulebook's own (S-7)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_end_by_a_rulebook_trigger(station, players):
    for seed in range(10):
        g = play_random(station, players, seed)
        assert g.is_over(), f"seed {seed}: no end after {MAX_DECISIONS:,} decisions"
        assert g.end_reason in ENDINGS, (seed, g.end_reason)
        assert g.winners()


@pytest.mark.parametrize("variants", VARIANTS[1:], ids=lambda v: "+".join(v))
def test_random_games_with_variants(variants):
    rs = rulelang.load(STATION, variants=variants)
    for players in (2, 4):
        g = play_random(rs, players, seed=players)
        assert g.end_reason in ENDINGS


def test_same_seed_same_game(station):
    check_same_seed_same_game(station, 3)


@pytest.mark.parametrize("cut", [3, 40, 150])
def test_json_round_trip_mid_game(station, cut):
    # cut 3: in the middle of the draft (setup); later: in the middle of turns, trades, incomes
    check_round_trip_mid_game(station, 4, seed=5, cut=cut, endings=ENDINGS)


def test_explicit_chance_game_survives_a_round_trip(station):
    check_explicit_chance_round_trip(station, 2, seed=3, steps=40)


def _past_setup(rs, players, seed):
    """A random game up to the first turn (after the draft, the hub choice and the start bonuses)."""
    g = rs.new_game(players, seed=seed)
    pick = random.Random(seed)
    while not all(a.id.startswith(("use_", "income")) for a in g.legal_actions()):
        g.apply(pick.choice(g.legal_actions()))
    return g


# Hubs whose start bonus is an alien (in the invented variant they also give a sector).
ALIEN_HUBS = {"hb10", "hb11", "hb12", "ha07", "ha08", "ha09"}


def test_base_game_start_bonus_gives_no_sector(station):
    # S-1.4 names resources, a diplomacy step, a ship and an alien as start bonuses, never a sector:
    # every station is empty at the first turn, and an alien bonus stands on the hub meanwhile.
    seen = 0
    for players in (2, 3, 4):
        for seed in range(6):
            v = _past_setup(station, players, seed).view(None)["vars"]
            assert v["station"] == [[] for _ in range(players)], (players, seed)
            for h in v["hub"]:
                if str(h) in ALIEN_HUBS:
                    seen += 1
    assert seen > 0, "no random game chose a hub with an alien bonus: the test checks nothing"


def test_invented_variant_keeps_the_sector_bonus():
    rs = rulelang.load(STATION, variants=("invented_hub_bonuses",))
    seen = 0
    for players in (2, 3, 4):
        for seed in range(6):
            v = _past_setup(rs, players, seed).view(None)["vars"]
            for p, h in enumerate(v["hub"]):
                if str(h) in ALIEN_HUBS:
                    seen += 1
                    assert len(v["station"][p]) == 1, (players, seed, h)
                else:
                    assert v["station"][p] == [], (players, seed, h)
    assert seen > 0


@pytest.mark.parametrize("players", [2, 3, 4])
def test_income_places_no_free_human(station, players):
    # S-11: income gives gems and orange-habitat goods; humans leave the supply only when recruited
    # on an explore ship (S-6), never at income.
    incomes = 0
    for seed in range(4):
        g = station.new_game(players, seed=seed)
        pick = random.Random(seed)
        at_income = None  # the human supply when the running income action began
        while not g.is_over():
            a = pick.choice(g.legal_actions())
            humans = g.view(None)["vars"]["humans"]
            if a.id.startswith(("use_", "income")):  # a new turn: the previous income is complete
                if at_income is not None:
                    assert humans == at_income, (players, seed, len(g.log))
                at_income = humans if a.id == "income" else None
                incomes += a.id == "income"
            g.apply(a)
    assert incomes > 0

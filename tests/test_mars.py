"""Mars (games/mars.rules), the foundation: its scenarios, the citations, random games for 2, 3 and 4
players to a rulebook ending, determinism by seed, saving and loading in the middle of a game, and the
private goals, which no other seat may see.

No Python here knows Mars's rules: everything is in the rule file; this only runs it and checks what
the rulebook (../shared/rulebooks/mars.md) says must happen."""
import json
import os

import pytest

import rulelang
from interpreter.scenarios import run_path

try:
    from game_checks import cited_ids, section_ids, check_explicit_chance_round_trip, check_round_trip_mid_game, check_same_seed_same_game, play_random
except ImportError:  # tests/ as a package
    from tests.game_checks import (cited_ids, section_ids, check_explicit_chance_round_trip, check_round_trip_mid_game,
                                   check_same_seed_same_game, play_random)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARS = os.path.join(ROOT, "games", "mars.rules")
RULEBOOK = os.path.normpath(os.path.join(ROOT, "..", "shared", "rulebooks", "mars.md"))
ENDINGS = {"missions fulfilled", "colony level 5"}
# the sections encoded with behaviour so far, each checked by at least one scenario
WITH_SCENARIOS = {"M-2.1", "M-2.2", "M-2.3", "M-2.4", "M-3.1", "M-3.5", "M-4", "M-5", "M-6.1", "M-7", "M-7.1",
                  "M-7.2", "M-8.1", "M-8.2", "M-8.3", "M-8.5", "M-8.6", "M-9.2", "M-9.3", "M-9.5", "M-9.7",
                  "M-10.2", "M-11.2", "M-15", "M-17", "M-3.6", "M-9.4", "M-12", "M-14", "M-16", "M-18", "M-11", "M-11.1",
                  "M-9.1", "M-13"}


@pytest.fixture(scope="module")
def mars():
    return rulelang.load(MARS)


# ------------------------------------------------------------------------------------ the rule file
@pytest.mark.parametrize("result", [pytest.param(r, id=r.name) for r in run_path(MARS)])
def test_scenario(result):
    assert result.passed, result.message


@pytest.mark.parametrize("variants", [(), ("first_game",), ("long_game",)], ids=["base", "first_game", "long_game"])
def test_the_file_and_its_variant_load_clean(mars, variants):
    diags = rulelang.check(MARS, variants=variants)
    if not os.path.exists(RULEBOOK):
        diags = [d for d in diags if not (d.code == "W306" and d.severity == "note")]
    assert diags == [], [d.render() for d in diags]
    assert mars.player_counts == (2, 3, 4)
    assert set(mars.variants) == {"first_game", "long_game"}
    assert ENDINGS <= set(mars.endings)


@pytest.mark.skipif(not os.path.exists(RULEBOOK), reason="the rulebook (../shared/rulebooks) is not beside this checkout")
def test_citations_name_rulebook_sections_and_encoded_ones_have_scenarios(mars):
    ids = set(section_ids(RULEBOOK))
    assert len(ids) == 45  # M-1 ... M-18 with their subsections
    cited = cited_ids(MARS)
    assert ids <= cited, sorted(ids - cited)
    assert cited <= ids, sorted(cited - ids)
    in_scenarios = {c for sc in mars.program.scenarios for c in sc.cites}
    assert WITH_SCENARIOS <= in_scenarios, sorted(WITH_SCENARIOS - in_scenarios)


def test_invented_values_are_placeholders_and_known_data_is_not(mars):
    whats = [p.what for p in mars.placeholders]
    joined = " ".join(whats)
    for name in ("lab_level", "lab_op", "lab_cost", "tech_field_row", "ladder", "shelter_starts", "mars",
                 "discoveries.", "research_tiles.", "arrow_patterns", "tiles_per_kind"):
        assert name in joined, name
    # the component facts of ../shared/components/mars.md are data, not placeholders
    for table in ("blueprints.", "scientist_cards.", "contracts.", "goals.", "lss_tiles."):
        assert not any(w.startswith(table) and not w.endswith(".boost (invented value)") for w in whats), table
    # of the blueprints only the boost icon (colonist or crystal) of the "(+1)" cards is a picture
    boosted = {w.split(".")[1] for w in whats if w.startswith("blueprints.")}
    assert boosted == {"construction_yard", "private_ship", "biomarket", "oxygen_tank", "casino", "research_lab",
                       "trade_market", "recycling_bots", "library", "command_center"}, boosted
    # of the missions only the short/long split is unknown; of the special actions only their order
    assert all(w.endswith(".short (invented value)") for w in whats if w.startswith("missions."))
    assert all(w.endswith(".slot (invented value)") for w in whats if w.startswith("execs."))


def test_invented_rules_are_placeholder_rules(mars):
    # M-9.1 and M-18 name a research tile's bonus and a B card's reward without saying what they are:
    # the OP they give are placeholder rules, not plain rules (issue 32)
    rules = {p.what.split(" (")[0] for p in mars.placeholders if p.what.startswith(("procedure ", "function ", "action ", "phase "))}
    assert {"procedure research_bonus", "procedure task_reward"} <= rules, rules
    # the start buildings lie on marked hexes at random (M-2.2): no building stands on a fixed hex
    assert "start_buildings" in " ".join(p.what for p in mars.placeholders)
    assert "fixed_start_buildings" not in " ".join(p.what for p in mars.placeholders)


def test_start_buildings_lie_at_random_on_the_marked_hexes(mars):
    # M-2.2 step 3: the start mine in the centre, the other start buildings at random on the marked hexes
    layouts = set()
    for seed in range(6):
        g = mars.new_game(3, seed=seed, chance="sampled")
        data = json.loads(g.to_json())["data"]
        sites = {k: v for k, v in _pairs(data["building_at"]) if v != "shelter"}
        assert sites.pop("(0,0)") == "mine"
        assert len(sites) == 8 and sorted(sites.values()) == sorted(["generator", "water_extractor", "greenhouse", "oxygen_condenser"] * 2)
        layouts.add(tuple(sorted(sites.items())))
    assert len(layouts) > 1, "the same layout for every seed"


def _pairs(m):
    # a saved map: {"$map": [[key, value], ...]}
    items = m["$map"] if isinstance(m, dict) and "$map" in m else list(m.items())
    return [(_text(k), v) for k, v in items]


def _text(v):
    # a node (a tuple) is saved as a list of its coordinates
    return "(" + ",".join(str(x) for x in v) + ")" if isinstance(v, list) else str(v)


# ------------------------------------------------------------------------------------ whole games
@pytest.mark.parametrize("players,seed", [(2, 1), (3, 2), (4, 3)])
def test_random_games_end_by_a_rulebook_ending(mars, players, seed):
    g = play_random(mars, players, seed)
    assert g.is_over(), "the game did not end"
    assert g.end_reason in ENDINGS, g.end_reason
    assert g.winners()


def test_random_first_games_end_by_a_rulebook_ending():
    rs = rulelang.load(MARS, variants=("first_game",))
    g = play_random(rs, 3, 4)
    assert g.is_over() and g.end_reason in ENDINGS, g.end_reason


def test_same_seed_same_game(mars):
    check_same_seed_same_game(mars, 2)


@pytest.mark.parametrize("cut", [3, 60, 400])
def test_json_round_trip_mid_game(mars, cut):
    # cut 3: in the middle of setup (the order track); later: in the middle of rounds
    check_round_trip_mid_game(mars, 3, seed=5, cut=cut, endings=ENDINGS)


def test_explicit_chance_game_survives_a_round_trip(mars):
    check_explicit_chance_round_trip(mars, 2, seed=3, steps=40)


# ------------------------------------------------------------------------------------ hidden information
def _views(g):
    return [json.dumps({k: v for k, v in g.view(p).items() if k not in ("scores", "winners")}, sort_keys=True)
            for p in range(g.n)]


# each cut stops where no pending decision lists the goals themselves (the test changes a goal in the
# save, which would change such a decision's options and so make the save one the rules never reach)
@pytest.mark.parametrize("players,seed,cut", [(2, 1, 10), (3, 2, 39), (4, 3, 58)])
def test_private_goals_are_seen_by_their_owner_only(mars, players, seed, cut):
    g = play_random(mars, players, seed, stop_after=cut)
    assert not g.is_over()
    save = json.loads(g.to_json())
    goals = save["data"]["private_goals"]
    holders = [p for p in range(players) if goals[p]]
    assert holders, "cut the game earlier: every hand is empty (goals spent as crystals)"
    for p in range(players):
        seen = g.view(p)["vars"]["private_goals"]
        assert seen[p] == goals[p]
        for q in holders:
            if q != p:
                assert goals[q][0] not in json.dumps(seen[q]), (p, q)
    # one seat's goal changed: only that seat's view changes
    k = holders[0]
    before = _views(g)
    s = json.loads(json.dumps(save))
    unused = next(x for x in (f"g{i:02d}" for i in range(1, 17)) if all(x not in hand for hand in goals))
    s["data"]["private_goals"][k][0] = unused
    h = mars.load_game(json.dumps(s))
    after = _views(h)
    assert after[k] != before[k]
    assert after[:k] + after[k + 1:] == before[:k] + before[k + 1:]


# ------------------------------------------------------------------------------------ the long game (M-2.2)
def test_random_long_games_end_by_a_rulebook_ending():
    rs = rulelang.load(MARS, variants=("long_game",))
    g = play_random(rs, 3, 5)
    assert g.is_over() and g.end_reason in ENDINGS, g.end_reason


def test_boosts_and_the_lab_have_scenarios(mars):
    # M-6.2 (the "(+1)" boosts of advanced buildings) and M-3.2 (the lab's upgrade icon) are checked too
    in_scenarios = {c for sc in mars.program.scenarios for c in sc.cites}
    assert {"M-6.2", "M-3.2"} <= in_scenarios


# ------------------------------------------------------------------------------------ the rover's tiles (M-9.1)
def test_tile_rules_have_scenarios(mars):
    in_scenarios = {c for sc in mars.program.scenarios for c in sc.cites}
    assert "M-9.1" in in_scenarios


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_take_tiles(mars, players):
    # rovers ending on tiles take them in ordinary play: the counters read by goals 4 and 12, the two
    # missions and LSS tile 6 move. Random agents seldom end a rover move on a tile (in two-player games
    # about one game in four takes one: they often stop the control centre's move early), so up to
    # twelve seeded games are played until one does.
    for seed in range(1, 13):
        g = play_random(mars, players, seed)
        data = json.loads(g.to_json())["data"]
        if sum(data["rover_finds"]) + sum(data["research_taken"]) > 0:
            return
    pytest.fail("no tile taken in twelve random games")

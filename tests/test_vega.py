"""Vega (games/vega.rules) with ships: its scenarios, rulebook citations, variants, random games to a
rulebook ending, the setup's spacing and removals, determinism by seed, saving and loading in the
middle of a game, and hidden information (what lies face down on the board, a planet explored and
kept secret, the order and content of the module supply).

No Python here knows Vega's rules: everything is in the rule file; this only runs it and checks
what the rulebook (../shared/rulebooks/vega.md) says must happen."""
import json
import os
import random
import subprocess
import sys

import pytest

import rulelang
from interpreter.scenarios import run_path

try:
    from game_checks import (cited_ids, section_ids, check_explicit_chance_round_trip, check_round_trip_mid_game, check_same_seed_same_game,
                             play_random)
except ImportError:  # tests/ as a package
    from tests.game_checks import (cited_ids, section_ids, check_explicit_chance_round_trip, check_round_trip_mid_game,
                                   check_same_seed_same_game, play_random)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VEGA = os.path.join(ROOT, "games", "vega.rules")
RULEBOOK = os.path.normpath(os.path.join(ROOT, "..", "shared", "rulebooks", "vega.md"))
ENDINGS = {"supply used up twice", "last player left"}
VARIANTS = [(), ("targeted",), ("defused",), ("open_pile",), ("no_invented_effects",),
            ("targeted", "defused", "open_pile"), ("targeted", "open_pile", "no_invented_effects")]
SIZE = 36  # the placeholder board: hex_rect(36, 36), odd rows shifted right
# the sections encoded with behaviour, each checked by scenarios
WITH_SCENARIOS = {"V-2", "V-3", "V-3-en", "V-4", "V-4.1", "V-4.1-en", "V-4.2", "V-4.2-en", "V-4.3",
                  "V-4.3-en", "V-4.4", "V-4.4-en", "V-4.5", "V-4.5-en", "V-4.6", "V-4.6-en", "V-5",
                  "V-6", "V-7", "V-7-en", "V-8", "V-9", "V-9-en", "V-10", "V-10.1", "V-10.2", "V-10.3"}
GAMES = 8  # random games per player count (the 50-game runs are done by hand: docs/games/vega.md)


def _node(v):
    return tuple(v)


def hex_distance(a, b):
    """Hex distance on an odd-rows-shifted-right board, computed here independently (cube coords)."""
    def cube(n):
        r, c = n
        q = c - (r - (r & 1)) // 2
        return q, r, -q - r
    (x1, y1, z1), (x2, y2, z2) = cube(a), cube(b)
    return max(abs(x1 - x2), abs(y1 - y2), abs(z1 - z2))


def _data(g):
    from interpreter.values import decode
    save = json.loads(g.to_json())
    return save, {k: decode(v) for k, v in save["data"].items()}


@pytest.fixture(scope="module")
def vega():
    return rulelang.load(VEGA)


# ------------------------------------------------------------------------------------ the rule file
@pytest.mark.parametrize("result", [pytest.param(r, id=r.name) for r in run_path(VEGA)])
def test_scenario(result):
    assert result.passed, result.message


@pytest.mark.skipif(not os.path.exists(RULEBOOK), reason="the rulebook (../shared/rulebooks) is not beside this checkout")
def test_every_section_is_cited_and_the_encoded_ones_have_scenarios(vega):
    ids = section_ids(RULEBOOK)
    assert len(ids) == 34  # V-1 ... V-10.3 (17) and V-1-en ... V-9-en (17)
    cited = cited_ids(VEGA)
    assert set(ids) <= cited, sorted(set(ids) - cited)
    assert cited <= set(ids), sorted(cited - set(ids))
    in_scenarios = {c for sc in vega.program.scenarios for c in sc.cites}
    assert WITH_SCENARIOS <= in_scenarios, sorted(WITH_SCENARIOS - in_scenarios)


@pytest.mark.parametrize("variants", VARIANTS, ids=lambda v: "+".join(v) or "base")
def test_the_file_and_its_variants_load_clean(variants):
    diags = rulelang.check(VEGA, variants=variants)
    if not os.path.exists(RULEBOOK):
        diags = [d for d in diags if not (d.code == "W306" and d.severity == "note")]
    assert diags == [], [d.render() for d in diags]
    rs = rulelang.load(VEGA, variants=variants)
    assert rs.variants == ("targeted", "defused", "open_pile", "no_invented_effects")
    assert rs.player_counts == (2, 3, 4)
    assert ENDINGS <= set(rs.endings)


def test_invented_component_values_are_placeholders(vega):
    whats = [p.what for p in vega.placeholders]
    joined = " ".join(whats)
    assert sum(w.startswith("extension_modules.") for w in whats) == 54 * 11  # every value of every row
    for row in ("pl_1", "pl_2", "pl_3", "pl_4", "pl_5"):
        assert f"tokens.{row}." in joined, row
    # the rulebook's own numbers are not placeholders: the 6-planets, the two asteroids
    assert "tokens.six_a" not in joined and "tokens.ast_1" not in joined
    assert any(w.startswith("standard_modules") for w in whats)
    assert any(w.startswith("space") for w in whats), whats  # board size and marked positions


# ------------------------------------------------------------------------------------ setup
@pytest.mark.parametrize("players", [2, 3, 4])
def test_setup_spacing_border_and_removals(vega, players):
    for seed in range(6):
        g = vega.new_game(players, seed=seed)
        pick = random.Random(seed)
        while g.current_player >= 0 and g.prompt and "colony" not in g.prompt and "development" not in g.prompt:
            g.apply(pick.choice(g.legal_actions()))
        _, d = _data(g)
        objects = [_node(n) for n in d["objects"]]
        assert len(objects) == players + 6  # six-planets + (5 - 1) other planets + 2 asteroids
        for i, a in enumerate(objects):
            assert 0 < a[0] < SIZE - 1 and 0 < a[1] < SIZE - 1, f"seed {seed}: {a} on the border"
            for b in objects[i + 1:]:
                assert hex_distance(a, b) >= 7, f"seed {seed}: {a} and {b} only {hex_distance(a, b)} apart"
        assert len(d["set_aside"]) == 5 - players
        kinds = [d["object_at"][n] for n in d["object_at"]]
        assert sum(k.startswith("ast_") for k in kinds) == 2
        assert sum(k.startswith("six_") for k in kinds) + sum(s.startswith("six_") for s in d["set_aside"]) == 4
        assert len(d["six_planets"]) == players
        assert all(d["object_at"][n].startswith("six_") for n in d["six_planets"])
        assert len(d["ext_supply"]) == 12 * players


def test_the_start_player_is_rolled_and_begins(vega):
    starts = set()
    for seed in range(12):
        g = vega.new_game(3, seed=seed)
        pick = random.Random(seed)
        while "development" not in (g.prompt or ""):
            g.apply(pick.choice(g.legal_actions()))
        _, d = _data(g)
        starts.add(d["start_player"])
        assert g.current_player == d["start_player"]
        assert d["resources"][d["start_player"]] == 6
    assert starts == {0, 1, 2}


# ------------------------------------------------------------------------------------ whole games
@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_end_by_a_rulebook_ending(players):
    out = subprocess.run([sys.executable, "-m", "rulelang", "simulate", VEGA, "--players", str(players),
                          "--games", str(GAMES), "--json", "--workers", "1"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["errors"] == 0 and res["internal_errors"] == 0, res["error_messages"]
    assert res["completed"] == GAMES
    ended = {k: v for k, v in res["ended_by"].items() if v}
    assert set(ended) <= ENDINGS and sum(ended.values()) == GAMES, res["ended_by"]


@pytest.mark.parametrize("variants", VARIANTS[1:], ids=lambda v: "+".join(v))
def test_random_games_with_variants(variants):
    rs = rulelang.load(VEGA, variants=variants)
    for players, seed in ((3, 0), (3, 1), (4, 2)):
        g = play_random(rs, players, seed)
        assert g.is_over() and g.end_reason in ENDINGS, (players, seed, g.end_reason)
        assert g.winners()


def test_same_seed_same_game(vega):
    check_same_seed_same_game(vega, 3)


@pytest.mark.parametrize("cut", [2, 9, 90, 1500])
def test_json_round_trip_mid_game(vega, cut):
    # cut 2 and 9: during the placement of the objects (setup); later: in the middle of turns (at 1500
    # with ships on the board, in the middle of a move)
    check_round_trip_mid_game(vega, 4, seed=5, cut=cut, endings=ENDINGS)


def test_explicit_chance_game_survives_a_round_trip(vega):
    check_explicit_chance_round_trip(vega, 2, seed=3, steps=60)


# ------------------------------------------------------------------------------------ hidden information
def _set_map_entry(save, name, key, value):
    for pair in save["data"][name]["$map"]:
        if pair[0] == key:
            pair[1] = value
            return
    raise KeyError(key)


def _views(g):
    return [json.dumps({k: v for k, v in g.view(p).items() if k not in ("scores", "winners")}, sort_keys=True)
            for p in range(g.n)]


@pytest.mark.parametrize("players,seed,cut", [(2, 1, 30), (3, 2, 60), (4, 3, 14)])
def test_no_view_shows_an_unexplored_object_or_the_supply(vega, players, seed, cut):
    g = play_random(vega, players, seed, stop_after=cut)
    save, d = _data(g)
    # objects known to nobody (an object one seat explored is checked in the next test)
    known = {tuple(k[0]) for name, k, seats in save["known"] if name == "object_at"}
    hidden = [n for n in d["object_at"] if _node(n) not in known]
    assert hidden, "no face-down object to test"
    before = _views(g)
    tokens = ["pl_1", "pl_5", "ast_1", "six_d"]
    changed = 0
    for n in hidden:
        for t in tokens:
            if t == d["object_at"][n]:
                continue
            s = json.loads(json.dumps(save))
            _set_map_entry(s, "object_at", list(n), t)
            h = vega.load_game(json.dumps(s))
            assert h.view(None)["vars"]["object_at"] != g.view(None)["vars"]["object_at"]
            assert _views(h) == before, f"a seat's view changed when the object at {n} became {t}"
            changed += 1
    assert changed
    # the supply's content (its order is not even stored: draws are made when they happen), and the
    # planets set aside unseen
    for name in ("ext_supply", "set_aside", "ext_box"):
        s = json.loads(json.dumps(save))
        pile = s["data"][name]
        items = pile["pool"] if isinstance(pile, dict) else pile
        if not items:
            continue
        items[0] = "sz_c" if items[0] != "sz_c" else "wi_c"
        if name == "set_aside":
            items[0] = "pl_1" if items[0] != "pl_1" else "pl_2"
        h = vega.load_game(json.dumps(s))
        assert _views(h) == before, f"a seat's view changed when {name} changed"


def _at_first_development(rs, seed):
    """A 2-player game played at random through setup, stopped at the first development question."""
    g = rs.new_game(2, seed=seed)
    pick = random.Random(seed)
    while "development" not in (g.prompt or ""):
        g.apply(pick.choice(g.legal_actions()))
    return g


def test_a_finished_colony_shows_its_planet_to_all(vega):
    # 2 players, start player forced through the save: play the setup, then give seat (current) a
    # site (a colony token "Bau" side up) with six goods next to a face-down planet and let him
    # finish it: the token is turned over where it lies
    g = _at_first_development(vega, seed=4)
    save, d = _data(g)
    me, other = g.current_player, 1 - g.current_player
    shown = {tuple(k[0]) for name, k, seats in save["known"] if name == "object_at"}
    n = next(n for n in d["object_at"] if _node(n) not in shown)
    spot = _neighbours(_node(n))[0]
    save["data"]["object_at"]["$map"] = [[k, "pl_4" if k == list(n) else v] for k, v in save["data"]["object_at"]["$map"]]
    nxt = save["data"]["#Colony.next"]
    save["data"]["#Colony"]["$map"].append([nxt, [me, list(n), list(spot), 6, False]])
    save["data"]["#Colony.next"] = nxt + 1
    h = vega.load_game(json.dumps(save))
    key = f"({n[0]},{n[1]})"
    assert key not in h.view(other)["vars"]["object_at"]["known"]
    h.apply("skip")
    h.apply("end_step")  # no ship to design or build
    site = f"({spot[0]},{spot[1]})"
    assert site in [a.id for a in h.legal_actions()]
    h.apply(site)
    assert h.view(other)["vars"]["object_at"]["known"][key] == "pl_4"
    tokens = [c for c in h.view(other)["pieces"]["Colony"] if c["id"] == nxt]
    assert tokens == [{"id": nxt, "owner": me, "planet": list(n), "pos": list(spot), "goods": 0, "finished": True}]


def _neighbours(n):
    """Neighbours on the odd-rows-shifted-right board, computed here independently."""
    r, c = n
    steps = [(-1, -1), (-1, 0), (0, -1), (0, 1), (1, -1), (1, 0)] if r % 2 == 0 else \
        [(-1, 0), (-1, 1), (0, -1), (0, 1), (1, 0), (1, 1)]
    return [(r + a, c + b) for a, b in steps]


def test_a_planet_explored_and_kept_secret_is_known_to_the_explorer_only(vega):
    # V-4.4: the explorer sees the planet's value; the others see neither the value nor whether it
    # is a planet or an asteroid until it is shown. A ship of the current seat is put next to a
    # face-down object through the save, then moved: exploring happens as it starts.
    g = _at_first_development(vega, seed=6)
    save, d = _data(g)
    me, other = g.current_player, 1 - g.current_player
    n = next(n for n in d["object_at"] if _node(n) not in {_node(x) for x in d["six_planets"]})
    spot = next(x for x in _neighbours(_node(n)) if hex_distance(x, _node(n)) == 1)
    save["data"]["object_at"]["$map"] = [[k, "pl_3" if k == list(n) else v] for k, v in save["data"]["object_at"]["$map"]]
    save["data"]["designs"] = {"$map": [[[me, "alpha"], ["h1", "r3", "t1"]]]}
    save["data"]["#Ship"] = {"$map": [[1, [me, "alpha", list(spot), 0]]]}
    save["data"]["#Ship.next"] = 2
    h = vega.load_game(json.dumps(save))
    for a in ("skip", "end_step", "move_ship(Ship#1)"):
        h.apply(a)
    assert [a.id for a in h.legal_actions()] == ["explore_object", "pass_by"]  # exploring is his choice
    h.apply("explore_object")
    assert [a.id for a in h.legal_actions()] == ["keep_secret", "show_all"]
    h.apply("keep_secret")
    key = f"({n[0]},{n[1]})"
    assert h.view(me)["vars"]["object_at"]["known"][key] == "pl_3"
    assert key not in h.view(other)["vars"]["object_at"]["known"]
    before = _views(h)[other]
    s2 = json.loads(h.to_json())
    _set_map_entry(s2, "object_at", list(n), "ast_2")
    assert _views(vega.load_game(json.dumps(s2)))[other] == before, "the other seat learnt the explored object"
    # showing it to all (V-4.4) makes it public
    h2 = vega.load_game(json.dumps(save))
    for a in ("skip", "end_step", "move_ship(Ship#1)", "explore_object", "show_all"):
        h2.apply(a)
    assert h2.view(other)["vars"]["object_at"]["known"][key] == "pl_3"

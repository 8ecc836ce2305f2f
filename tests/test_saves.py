"""Saves are untrusted input: load_game checks a save completely against the program, and either loads
a state the rules could have reached (in form) or refuses it with one line that names the field."""
import copy
import json
import os
import random

import pytest

import rulelang
from rulelang import GameError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATION = os.path.join(ROOT, "games", "station.rules")
TOOLKIT = os.path.join(ROOT, "tests", "rules", "toolkit.rules")


@pytest.fixture(scope="module")
def station():
    return rulelang.load(STATION)


@pytest.fixture(scope="module")
def toolkit():
    return rulelang.load(TOOLKIT)


def play_until(rs, players, seed, want, chance="sampled", limit=300):
    """A random game (seeded) played until its pending decision is of kind `want`; the game."""
    g = rs.new_game(players, seed=seed, chance=chance)
    r = random.Random(seed)
    for _ in range(limit):
        if g.is_over():
            break
        if g.pending is not None and g.pending.kind == want and (want != "choose" or r.random() < 0.5):
            return g
        g.apply(r.choice(g.legal_actions()))
    pytest.skip(f"no {want} decision in this game")


def save_of(g):
    return json.loads(g.to_json())


def refused(rs, d_or_text, *words):
    text = json.dumps(d_or_text) if isinstance(d_or_text, (dict, list)) else d_or_text
    with pytest.raises(GameError) as err:
        rs.load_game(text)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"not a saved game of {rs.name}"), msg
    for w in words:
        assert w in msg, msg
    return msg


def survives(rs, g):
    """A loaded game works or fails with a GameError: view for every seat, actions, chance, a round trip."""
    for p in range(g.n):
        g.view(p)
    g.view()
    g.legal_actions()
    g.chance_outcomes()
    assert rs.load_game(g.to_json()).to_json() == g.to_json()


# ---------------------------------------------------------------- the examples
def test_a_wrong_kind_of_value_names_the_field(station):
    d = save_of(station.new_game(2, seed=1))
    d["data"]["gems"][1] = "x"
    assert refused(station, d) == 'not a saved game of Station: data.gems[1] is "x", not an int'


@pytest.mark.parametrize("path", ["seed", "rng", "current", "turns", "pending.need", "pending.player",
                                  "pending.low", "frame depth", "known seats", "log player"])
def test_infinity_and_nan_are_refused_at_parse(station, path):
    g = station.new_game(2, seed=1)
    g.apply(g.legal_actions()[0])
    d = save_of(g)
    d["known"] = [["teal", [0]]]
    if path == "frame depth":
        d["frames"][0][3] = "@INF@"
    elif path == "known seats":
        d["known"][0][1] = ["@INF@"]
    elif path == "log player":
        d["log"][0]["player"] = "@INF@"
    elif path.startswith("pending."):
        d["pending"][path.split(".")[1]] = "@INF@"
    else:
        d[path] = "@INF@"
    text = json.dumps(d)
    for const in ("Infinity", "-Infinity", "NaN", "1e400"):
        refused(station, text.replace('"@INF@"', const), "not a number a save can hold" if "e" not in const
                else "too large")


def test_a_chance_decision_where_the_rules_offer_an_action(station):
    d = save_of(play_until(station, 2, 1, "action", chance="explicit"))
    d["pending"]["kind"] = "chance"
    d["pending"]["player"] = -1
    d["pending"]["probs"] = [1 / len(d["pending"]["options"])] * len(d["pending"]["options"])
    refused(station, d, "pending")


def test_a_per_player_variable_saved_as_one_value(station):
    d = save_of(station.new_game(2, seed=1))
    d["data"]["gems"] = 3
    refused(station, d, "data.gems", "one per player")
    d["data"]["gems"] = [0, 0, 0]
    refused(station, d, "data.gems", "a list of 2 values")


@pytest.mark.parametrize("field,value,words", [
    ("current", 99, ["current is 99"]),
    ("current", -1, ["current is -1"]),
    ("over", "str", ["over is \"str\", not true or false"]),
    ("rng", -1, ["rng is -1"]),
    ("rng", 2 ** 64, ["rng is"]),
    ("turns", -5, ["turns is -5"]),
    ("seed", "1", ["seed is \"1\""]),
    ("seed", True, ["seed is true"]),
    ("players", 99, ["99 players"]),
    ("chance", "both", ["chance is \"both\""]),
    ("eliminated", [False], ["eliminated has 1 seats, not 2"]),
    ("eliminated", [0, 0], ["eliminated[0] is 0"]),
    ("notes", "x" * 1000, ["notes is \"xxx"]),
    ("notes", ["n"] * 501, ["notes has 501 items, more than 500"]),
    ("notes", [7], ["notes[0] is 7, not a text"]),
    ("log", [{"player": 99, "action": "x"}], ["log[0].player is 99"]),
    ("log", [{"player": 0}], ["log[0] has no \"action\""]),
    ("log", [{"player": 0, "action": "x", "extra": 1}], ["log[0] has an unknown field \"extra\""]),
    ("end_reason", "I win", ["end_reason is \"I win\""]),
    ("end_pending", 3, ["end_pending is 3"]),
    ("error", "boom", ["error is set in a game that is not over"]),
    ("frames", "x", ["frames is \"x\", not a list"]),
    ("data", [], ["data is a list of 0, not an object"]),
    ("eliminated", [True, True], ["eliminated holds every player in a game that is not over"]),
])
def test_tampered_top_level_fields(station, field, value, words):
    d = save_of(station.new_game(2, seed=1))
    d[field] = value
    refused(station, d, *words)


def test_missing_and_extra_top_level_keys(station):
    d = save_of(station.new_game(2, seed=1))
    d2 = dict(d)
    del d2["turns"]
    refused(station, d2, "has no \"turns\"")
    refused(station, {**d, "cheat": 1}, "unknown field \"cheat\"")
    d3 = copy.deepcopy(d)
    del d3["data"]["gems"]
    refused(station, d3, "data has no variable \"gems\"")
    d3 = copy.deepcopy(d)
    d3["data"]["cheat"] = 1
    refused(station, d3, "\"cheat\" the rules do not declare")


def test_variables_of_the_wrong_type(station):
    d = save_of(station.new_game(2, seed=1))
    for name, value, words in [
        ("gems", [0, True], ["data.gems[1] is true, not an int"]),
        ("gems", [0, [1]], ["data.gems[1] is (1,), not an int"]),
        ("res", [{"$map": [["food", 1]]}, {"$map": [["gold", 1]]}], ["data.res[1] key gold", "Good"]),
        ("res", [{"$map": [["food", "x"]]}, {"$map": []}], ["data.res[0][food] is \"x\", not an int"]),
        ("fleet", [[], "x"], ["data.fleet[1] is \"x\", not a list"]),
        ("fleet", [[], ["nope"]], ["data.fleet[1][0] is \"nope\", not a Ship"]),
        ("trigger_seat", 7, ["data.trigger_seat is 7, not a player"]),
        ("humans", False, ["data.humans is false, not an int"]),
        ("alien_bag", [1, 2], ["data.alien_bag[0] is 1, not a Kind"]),
        ("alien_bag", {"$pile": "deck", "known": [], "pool": []}, ["data.alien_bag", "not a bag"]),
        ("used", [{"$set": [{"$map": []}]}, {"$set": []}], ["data.used", "a map cannot be a set item"]),
        ("gems", [1.5, 0], ["fraction 1.5"]),
        ("gems", [0, 2 ** 62], ["data.gems[1] is 4611686018427387904, beyond the numbers rules compute"]),
        ("gems", [-2 ** 62, 0], ["data.gems[0] is -4611686018427387904"]),
    ]:
        d2 = copy.deepcopy(d)
        d2["data"][name] = value
        refused(station, d2, *words)
    d2 = copy.deepcopy(d)
    d2["data"]["gems"] = [2 ** 62 - 1, 1 - 2 ** 62]
    survives(station, station.load_game(json.dumps(d2)))


def test_a_pending_decision_for_the_wrong_seat(station):
    d = save_of(station.new_game(2, seed=1))
    me = d["pending"]["player"]
    for seat, words in [(1 - me, ["pending is not the decision the rules offer here"]),
                        (99, ["pending.player is 99"]), (-1, ["pending.player is -1"])]:
        d2 = copy.deepcopy(d)
        d2["pending"]["player"] = seat
        refused(station, d2, *words)


def test_pending_options_must_be_the_ones_the_rules_offer(station):
    d = save_of(station.new_game(2, seed=1))
    opts = d["pending"]["options"]
    for options in [opts[:-1], opts + [opts[0]], [["cheat", opts[0][1]]] + opts[1:],
                    [[opts[0][0], ["nope", []]]] + opts[1:], []]:
        d2 = copy.deepcopy(d)
        d2["pending"]["options"] = options
        refused(station, d2, "pending")
    d2 = copy.deepcopy(d)
    d2["pending"]["prompt"] = "x" * 200_000
    refused(station, d2, "pending.prompt is longer than")


def test_a_pending_decision_must_resume_its_op(station):
    d = save_of(station.new_game(2, seed=1))
    d2 = copy.deepcopy(d)
    d2["frames"][-1][1] -= 1
    refused(station, d2, "pending.kind is \"%s\", but" % d["pending"]["kind"], "does not wait there")
    d2 = copy.deepcopy(d)
    d2["frames"] = []
    refused(station, d2, "frames is empty")
    d2 = copy.deepcopy(d)
    d2["pending"] = None
    refused(station, d2, "a game in progress must have a pending decision")
    d2 = copy.deepcopy(d)
    d2["over"] = True
    d2["end_reason"] = station.endings[0]
    refused(station, d2, "pending is an object, not null in a game that is over")
    d2["pending"] = None
    refused(station, d2, "frames holds %d frames in a game that ended" % len(d2["frames"]), "nothing runs after")
    d2["frames"] = []
    station.load_game(json.dumps(d2))
    d2["end_reason"] = None
    refused(station, d2, "over is true, but the save has neither an end_reason nor an error")
    d2["error"] = "stopped"
    station.load_game(json.dumps(d2))
    d2["end_reason"] = station.endings[0]
    refused(station, d2, "end_reason is set in a game that stopped on an error")


def test_a_choose_decision_is_checked_against_its_op(toolkit):
    g = play_until(toolkit, 2, 3, "choose")
    d = save_of(g)
    survives(toolkit, toolkit.load_game(json.dumps(d)))
    for key, value in [("kind", "action"), ("kind", {"$board": "x"}), ("kind", ["choose"]), ("need", 99),
                       ("low", 0 if d["pending"]["low"] else 1), ("acc", [3, 3, 3]), ("pool", []),
                       ("single", not d["pending"]["single"]), ("target", "x"), ("probs", [1.0])]:
        d2 = copy.deepcopy(d)
        d2["pending"][key] = value
        refused(toolkit, d2, "pending")


def test_a_chance_decision_is_checked_against_its_op(toolkit):
    g = play_until(toolkit, 2, 2, "chance", chance="explicit")
    d = save_of(g)
    survives(toolkit, toolkit.load_game(json.dumps(d)))
    n = len(d["pending"]["probs"])
    for key, value, words in [("probs", [1 / (n + 1)] * n, ["pending.probs do not add up to 1"]),
                              ("probs", None, ["pending.probs is null, not a list"]),
                              ("probs", [0.0] * (n - 1) + [1.0], ["pending.probs[0] is 0.0"]),
                              ("player", 0, ["pending.player is 0, not -1 (chance)"]),
                              ("need", 0, ["pending"]), ("acc", [["x"]], ["pending"])]:
        d2 = copy.deepcopy(d)
        d2["pending"][key] = value
        refused(toolkit, d2, *words)
    d2 = copy.deepcopy(d)
    d2["chance"] = "sampled"
    refused(toolkit, d2, "pending.kind is \"chance\" in a game whose chance is sampled")
    d2 = copy.deepcopy(d)
    d2["seed"] = 1.0
    refused(toolkit, d2, "seed is 1.0, not a whole number")


def test_frames_are_checked(station):
    g = station.new_game(2, seed=1)
    d = save_of(g)
    for change, words in [
        (lambda f: f[0].__setitem__(0, "proc:nowhere"), ["frames[0][0] is \"proc:nowhere\""]),
        (lambda f: f[0].__setitem__(1, 10 ** 6), ["frames[0][1] is 1000000"]),
        (lambda f: f[0].__setitem__(1, -1), ["frames[0][1] is -1"]),
        (lambda f: f[0].__setitem__(3, 10 ** 6), ["frames[0][3] is 1000000"]),
        (lambda f: f[0].__setitem__(3, -1), ["frames[0][3] is -1"]),
        (lambda f: f[0].append(0), ["frames[0] has 5 items"]),
        (lambda f: f[-1][2].__setitem__("stranger", 1), ["frames[", "a local \"stranger\""]),
        (lambda f: f[-1][2].__setitem__("me", 99), ["frames[", "me is 99, not a player"]),
        (lambda f: f.extend([f[0]] * 400), ["frames has 40", "more than 400"]),
    ]:
        d2 = copy.deepcopy(d)
        change(d2["frames"])
        refused(station, d2, *words)


# ---------------------------------------------------------------- declared types of a small game
BOARD_GAME = '''
game "Typed" { players 2 }
enum Colour { red, blue }
record Card { colour: Colour }
table cards: Card { c1 (red)  c2 (blue) }
board road { a -- b  b -- c }
var at: node = "a"
var level: 1..3 = 1
var best: Card = c1
var hues: set[Colour] = {}
var pair: tuple[int, Colour] = (1, red)
var where: map[node, int] = {}
var pile: deck[Card] = cards
var cur: any = road
action go { effect { level += 1  end_game "done" } }
flow { turn 0 { offer [go] to 0 } }
'''


@pytest.fixture(scope="module")
def typed():
    return rulelang.loads(BOARD_GAME)


def test_declared_types_of_every_kind(typed):
    d = save_of(typed.new_game(2))
    assert typed.load_game(json.dumps(d)).to_json() == json.dumps(d, sort_keys=True, separators=(",", ":"),
                                                                  ensure_ascii=False)
    for name, value, words in [
        ("at", "z", ["data.at is \"z\", not a node of a board"]),
        ("at", [0, 0], ["data.at is (0,0), not a node"]),
        ("level", 0, ["data.level is 0, not a whole number from 1 to 3"]),
        ("level", 4, ["data.level is 4"]),
        ("best", "c9", ["data.best is \"c9\", not a Card"]),
        ("best", "red", ["data.best is \"red\", not a Card"]),
        ("hues", {"$set": ["green"]}, ["data.hues[0] is \"green\", not a Colour"]),
        ("hues", 3, ["data.hues is 3, not a set"]),
        ("pair", [1], ["data.pair is (1,), not a tuple of 2"]),
        ("pair", [1, "green"], ["data.pair[1] is \"green\", not a Colour"]),
        ("where", {"$map": [["q", 1]]}, ["data.where key q"]),
        ("pile", {"$pile": "deck", "known": ["c1", "c7"], "pool": []}, ["data.pile[1] is \"c7\", not a Card"]),
        ("pile", {"$pile": "hat", "known": [], "pool": []}, ["data.pile is not a value", "pile kind"]),
        ("pile", {"$pile": "deck", "known": [], "pool": [], "x": 1}, ["data.pile is not a value"]),
        ("cur", {"$board": "sea"}, ["unknown board"]),
        ("cur", {"$board": "road", "x": 1}, ["data.cur is not a value"]),
    ]:
        d2 = copy.deepcopy(d)
        d2["data"][name] = value
        refused(typed, d2, *words)


def test_none_fits_every_declared_type(typed):
    d = save_of(typed.new_game(2))
    for name in ("at", "level", "best", "hues", "pair", "where", "pile"):
        d["data"][name] = None
    g = typed.load_game(json.dumps(d))
    survives(typed, g)


# ---------------------------------------------------------------- the text itself
def test_bad_json_gets_one_line(station):
    good = station.new_game(2, seed=1).to_json()
    refused(station, "", "not JSON")
    refused(station, good[:-1], "not JSON")
    refused(station, "[" * 100_000 + "]" * 100_000, "nested")
    refused(station, "[" + "0," * 1_000_001 + "0]", "more than 1,000,000 values")
    refused(station, good.replace('"turns":0', '"turns":' + "9" * 5000), "too many digits")
    refused(station, good.replace('"turns":0', '"turns":' + "9" * 4000), "turns is 9999")
    assert '"station":[[],[]]' in good  # no sector built yet: nest one seat's list too deep
    refused(station, good.replace('"station":[[],[]]', '"station":[' + "[" * 200 + "]" * 200 + ',[]]'),
            "data is nested more than 100 deep")
    refused(station, good.replace('"notes":[]', '"notes":' + "[" * 200 + "]" * 200), "notes[0] is a list")
    refused(station, b"\xff\xfe", "not UTF-8")
    refused(station, 42, "JSON text (str or bytes), not int")


def test_long_numbers_are_refused_even_where_python_allows_them(station):
    import sys
    good = station.new_game(2, seed=1).to_json()
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        refused(station, good.replace('"turns":0', '"turns":' + "9" * 5000), "too many digits")
        assert station.load_game(good.replace('"turns":0', '"turns":' + "9" * 18)).turns == int("9" * 18)
    finally:
        sys.set_int_max_str_digits(old)


def test_a_save_longer_than_the_limit_is_refused_before_parsing(station, monkeypatch):
    from interpreter import saves
    good = station.new_game(2, seed=1).to_json()
    monkeypatch.setattr(saves, "MAX_SAVE_CHARS", len(good) - 1)
    refused(station, good, "longer than")


def test_real_saves_load_and_play_on(station, toolkit):
    for rs, players, chance in [(station, 3, "explicit"), (toolkit, 2, "explicit"), (toolkit, 3, "sampled")]:
        g = rs.new_game(players, seed=5, chance=chance)
        r = random.Random(5)
        step = 0
        while not g.is_over() and step < 300:
            a = r.choice(g.legal_actions())
            step += 1
            h = None
            if step % 9 == 1 or g.pending.kind != "action":
                text = g.to_json()
                h = rs.load_game(text)
                assert h.to_json() == text
                h.apply(a.id)
            g.apply(a)
            if h is not None:
                assert h.to_json() == g.to_json()
        assert rs.load_game(g.to_json()).to_json() == g.to_json()
    g = toolkit.new_game(2, seed=1)
    while not g.is_over():
        g.apply(g.legal_actions()[-1])
    assert toolkit.load_game(g.to_json()).to_json() == g.to_json()


def test_long_notes_are_cut_when_written(station):
    """A save holds notes of at most MAX_NOTE_CHARS, so the game never writes a longer one."""
    from interpreter.game import MAX_NOTE_CHARS
    g = station.new_game(2, seed=1)
    g.note("x" * (MAX_NOTE_CHARS + 50))
    assert len(g.notes[-1]) == MAX_NOTE_CHARS and g.notes[-1].endswith("...")
    assert station.load_game(g.to_json()).notes == g.notes


# ---------------------------------------------------------------- frames, positions and locals (issue 31.9)
def a_save_with(rs, players, want, seed=0, limit=400, chance="sampled"):
    """A save (as data) of a seeded random game at a point where `want(save)` holds."""
    for s in range(seed, seed + 20):
        g = rs.new_game(players, seed=s, chance=chance)
        r = random.Random(s)
        for _ in range(limit):
            if g.is_over():
                break
            d = save_of(g)
            if want(d):
                return d
            g.apply(r.choice(g.legal_actions()))
    pytest.skip("no such point in these games")


def codes_of(d):
    return [f[0] for f in d["frames"]]


def test_the_flow_frame_and_the_order_of_frames_are_checked(station):
    d = a_save_with(station, 3, lambda d: len(d["frames"]) >= 3 and d["frames"][0][1] > 0)
    survives(station, station.load_game(json.dumps(d)))
    d2 = copy.deepcopy(d)
    del d2["frames"][0]  # was accepted: the game then ended "end of flow" a decision later
    refused(station, d2, "frames[0][0] is", "the bottom frame of a game in progress is the flow")
    for i in range(1, len(d["frames"]) - 1):
        d2 = copy.deepcopy(d)
        del d2["frames"][i]
        refused(station, d2, "frames[")
        d2 = copy.deepcopy(d)
        d2["frames"].insert(i, copy.deepcopy(d["frames"][i]))
        refused(station, d2, "frames[")
    d2 = copy.deepcopy(d)
    d2["frames"].insert(1, ["flow", 0, {}, 0])
    refused(station, d2, "frames[1][0] is \"flow\", which nothing calls")
    d2 = copy.deepcopy(d)
    d2["frames"][1][3] = 1
    refused(station, d2, "frames[1][3] is 1", "runs at its depth, 0")


def test_a_frame_below_another_waits_where_it_started_it(station):
    d = a_save_with(station, 3, lambda d: len(d["frames"]) >= 3 and d["frames"][0][1] > 0)
    rewinds = 0
    for i, f in enumerate(d["frames"][:-1]):
        for pc in range(f[1]):
            d2 = copy.deepcopy(d)
            d2["frames"][i][1] = pc
            refused(station, d2, f"frames[{i}]")
            rewinds += 1
    assert rewinds > 3
    d2 = copy.deepcopy(d)
    d2["frames"][0][1] = 0  # "the flow has not started": then setup runs above it
    refused(station, d2, "frames[0][1] is 0 (the flow has not started), but setup is not running above it")


def test_locals_are_those_of_the_position_with_their_types(station):
    d = a_save_with(station, 3, lambda d: "proc:perform" in codes_of(d))
    i = codes_of(d).index("proc:perform")
    L = d["frames"][i][2]
    assert {"p", "s", "own", "me"} <= set(L)
    for name, value, words in [("p", "x", ['.p is "x", not a player']), ("p", 99, [".p is 99, not a player"]),
                               ("p", True, [".p is true"]), ("own", 3, [".own is 3, not true or false"]),
                               ("s", "nope", ['.s is "nope", not a Ship']), ("s", [1], [".s is (1,)"]),
                               ("me", (L["me"] + 1) % 3, ["has me", "its caller"])]:
        d2 = copy.deepcopy(d)
        d2["frames"][i][2][name] = value
        refused(station, d2, f"frames[{i}][2]", *words)
    for name in ("p", "s", "own"):
        d2 = copy.deepcopy(d)
        del d2["frames"][i][2][name]
        refused(station, d2, f"frames[{i}][2] has no local \"{name}\"")
    d2 = copy.deepcopy(d)
    d2["frames"][i][2]["later"] = 1
    refused(station, d2, f"frames[{i}][2] has a local \"later\"")


def test_the_locals_of_a_loop_and_a_turn_agree(station):
    d = a_save_with(station, 3, lambda d: d["frames"] and d["frames"][0][0] == "flow" and d["frames"][0][1] > 0
                    and any(k.startswith("%turn") for k in d["frames"][0][2]))
    L = d["frames"][0][2]
    turn = next(k for k in L if k.startswith("%turn"))
    d2 = copy.deepcopy(d)
    d2["frames"][0][2][turn] = (L[turn] + 1) % 3
    refused(station, d2, f"frames[0][2].{turn} is", "but the turn running there is")
    d2 = copy.deepcopy(d)
    d2["frames"][0][2][turn] = 7
    refused(station, d2, f"frames[0][2].{turn} is 7, not a player")
    d = a_save_with(station, 3, lambda d: any(k.startswith("%items") and isinstance(v, list) and len(v) > 1
                                              for f in d["frames"] for k, v in f[2].items()), chance="explicit")
    i, f = next((i, f) for i, f in enumerate(d["frames"]) if any(k.startswith("%items") for k in f[2]))
    items = next(k for k in f[2] if k.startswith("%items"))
    idx = "%i" + str(int(items[6:]) + 1)
    d2 = copy.deepcopy(d)
    d2["frames"][i][2][idx] = len(f[2][items]) + 1
    refused(station, d2, f"frames[{i}][2].{idx} is")


def test_nobody_is_eliminated_where_no_rule_eliminates(station):
    d = save_of(station.new_game(3, seed=1))
    d["eliminated"][d["pending"]["player"]] = True  # the seat deciding now: was accepted
    refused(station, d, "eliminated holds a player, but no rule of the game eliminates anyone")


def test_a_node_is_not_a_pair_holding_true():
    mars = rulelang.load(os.path.join(ROOT, "games", "mars.rules"))
    node = next(n for b in mars.boards.values() for n in b.nodes if isinstance(n, tuple) and n[1] == 1)
    d = save_of(mars.new_game(2, seed=1))
    d["data"]["rover_at"][0] = [node[0], True]  # (x, true) == (x, 1) in Python: was accepted
    refused(mars, d, "data.rover_at[0] is", "not a node of a board")
    d["data"]["rover_at"][0] = list(node)
    survives(mars, mars.load_game(json.dumps(d)))


@pytest.mark.parametrize("name", ["station", "vega", "mars", "examples/connect4", "examples/tictactoe",
                                  "examples/kuhn_poker"])
def test_the_loader_lays_out_every_code_as_the_compiler_does(name):
    """The save checks walk the rules' statements as closures.StmtCompiler lays them out; a code whose layout
    differs would be left to the plainer checks: none of the game files has one, with either backend."""
    from interpreter.saves import _layout
    rs = rulelang.load(os.path.join(ROOT, "games", name + ".rules"))
    for r in (rs, rs.with_backend("closures")):
        r.backend  # (the generated code is built before the first game)
        layout = _layout(r)
        assert sorted(layout) == sorted(r.codes)
        assert [cid for cid, info in layout.items() if not info.ok] == []

"""Hidden information is a security property: a seat's view never depends on what that seat may not
see. For every game file, example and complete docs example: play random games, and at random
positions change one value hidden from seat p (a shuffled pile's content, another seat's owner value,
an unrevealed place of a `known` variable, a `none` variable); p's view must stay byte-identical while
the full view changes.

What is hidden is computed here from the declared visibility and the saved knowledge (the `known`
field of the save), not from the engine's view code, so the test checks the view against the rules
of docs/language.md ("Hidden information and views") rather than against itself.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import rulelang
from interpreter.values import Pile

try:
    from test_docs_examples import COMPLETE_BLOCKS
except ImportError:  # tests/ as a package
    from tests.test_docs_examples import COMPLETE_BLOCKS

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(str(p.relative_to(ROOT)) for p in list((ROOT / "games").rglob("*.rules")) +
               list((ROOT / "tests" / "rules").rglob("*.rules")))

# Small games with hidden information of every shape (owner hands, known maps, hidden decks, dice),
# so that the property has something to bite on beyond the seeded games.
HIDDEN_GAMES = {
    "cards": '''
game "Cards" { players 2..3 }
var deck: deck[int] = [1, 2, 3, 4, 5, 6, 7, 8, 9] visible to none
per player var hand: list[int] = [] visible to owner
var played: map[int, int] = {} visible to known
var faceup: list[int] = []
setup { shuffle deck  for p in players { repeat 2 times { let c = draw one from deck  add c to hand[p] } } }
action play_card(c in hand[me]) { effect { remove c from hand[me]  played[c] = me  reveal played[c] to me } }
action show(c in hand[me]) { effect { reveal hand[me] to all } }
action take { require count(deck) > 0 effect { let c = draw one from deck  add c to hand[me] } }
action flip { require count(deck) > 0 effect { let c = draw one from deck  add c to faceup } }
action pass { require count(hand[me]) == 0 and count(deck) == 0 }
flow { loop { for p in players { turn p { offer [play_card, show, take, flip, pass] to p } } } }
ending "empty" when count(deck) == 0 and all(players, p => count(hand[p]) == 0)
score p = count([c for c, q in played if q == p])
''',
    "dice": '''
game "Dice" { players 2 }
per player var dice: list[int] = [] visible to known
var mines: map[tuple[int, int], int] = {} visible to known
var secret: int visible to none
setup {
  for p in players { let d = roll 3 of 1..6  dice[p] = d }
  for i in 0..3 { let v = roll one of 1..9  mines[(i, v)] = v }
  let s = roll one of 1..100
  secret = s
}
action show(i in 0..2) { effect { reveal dice[me][i] to all } }
action probe(k in keys(mines)) { effect { reveal mines[k] to me } }
action reroll(i in 0..2) { effect { let d = roll one of 1..6  dice[me][i] = d } }
flow { loop { for p in players { turn p { offer [show, probe, reroll] to p } } } }
ending "never" when false
''',
    "ships": '''
game "Ships" { players 2..3 }
piece Ship { owner: player, cargo: list[int] = [] visible to owner, value: int = 0 visible to known, hull: int = 3 }
setup { for p in players { repeat 2 times { let v = roll one of 1..9  let s = new Ship(owner: p, value: v) } } }
action load(s in [x for x in Ship if x.owner == me]) { effect { let c = roll one of 1..6  add c to s.cargo } }
action spy(s in [x for x in Ship if x.owner != me]) { effect { reveal s.value to me } }
action show(s in [x for x in Ship if x.owner == me]) { effect { reveal s.cargo to all } }
action build { require count(Ship) < 8 effect { let v = roll one of 1..9  let s = new Ship(owner: me, value: v) } }
action sink(s in [x for x in Ship if x.owner == me]) { effect { destroy s } }
action revalue(s in [x for x in Ship if x.owner == me]) { effect { let v = roll one of 1..9  s.value = v } }
flow { loop { for p in players { turn p { offer [load, spy, show, build, sink, revalue] to p } } } }
ending "never" when false
''',
}


def sources():
    out = [(f, None) for f in FILES]
    out += [(f"docs:{line}", text) for line, text in COMPLETE_BLOCKS]
    out += [(f"hidden:{name}", text) for name, text in HIDDEN_GAMES.items()]
    return out


def load(name, text):
    return rulelang.loads(text, name) if text is not None else rulelang.load(str(ROOT / name))


# ---------------------------------------------------------------------------------------- hidden places
def hidden_places(rs, save, p):
    """Every (variable, path) whose value seat p may not see, per docs/language.md; piles' shuffled
    parts as (variable, path, "pool")."""
    known = {}
    for name, keys, seats in save["known"]:
        if -1 in seats or p in seats:
            known.setdefault(name, []).append(tuple(json.dumps(k) for k in keys))
    out = []

    def walk_place(name, value, v, path, raw_path, shown):
        def walk(v, path, raw_path, shown):
            if isinstance(v, Pile):
                if v.pool:
                    out.append((name, raw_path, "pool"))
                return
            if shown:
                return
            here = tuple(json.dumps(k) for k in raw_path)
            if any(here[:len(k)] == k for k in known.get(name, [])):
                return
            out.append((name, raw_path, None))
            if raw_path and isinstance(parent_of(value, path), dict):
                out.append((name, raw_path, "key"))  # a hidden entry's key is hidden too
            if isinstance(v, tuple):
                for i, x in enumerate(v):
                    walk(x, path + (i,), raw_path + [i], False)
            elif isinstance(v, dict):
                for k, x in v.items():
                    walk(x, path + (k,), raw_path + [encode_key(k)], False)
        walk(v, path, raw_path, shown)

    for name, per, _, _, vis in rs.vars:
        value = save_value(save, name)

        def walk(v, path, raw_path, shown, name=name, value=value):
            walk_place(name, value, v, path, raw_path, shown)

        visible = vis == "all"
        if per:
            for q, v in enumerate(value):
                walk(v, (q,), [q], visible or (q == p and vis in ("owner", "known")))
        else:
            walk(value, (), [], visible)
    # pieces: a field visible to owner is hidden from everybody but the piece's owner; known and none
    # fields like variables; a piece's existence, id and public fields are public
    for kind in rs.pieces.values():
        value = save_value(save, kind.key)
        for pid, row in value.items():
            for i, v in enumerate(row):
                vis = kind.vis[i]
                shown = vis == "all" or (vis == "owner" and row[kind.owner] == p)
                walk_place(kind.key, value, v, (pid, i), [pid, i], shown)
    return out


def parent_of(value, path):
    for k in path[:-1]:
        value = value[k]
    return value


def save_value(save, name):
    from interpreter.values import decode
    return decode(save["data"][name])


def encode_key(k):
    from interpreter.values import encode
    return encode(k)


def mutate(save, place, rnd):
    """Change what stands at a hidden place in the save (JSON), keeping sizes. Returns False when this
    place cannot be changed without changing its size or kind."""
    name, path, kind = place
    node = save["data"][name]
    parents = []
    for k in path:
        parents.append(node)
        node = lookup(node, k)
    if kind == "pool":
        if not node["pool"]:
            return False
        i = rnd.randrange(len(node["pool"]))
        new = other_value(node["pool"][i], save, rnd)
        if new is None:
            return False
        node["pool"][i] = new
        return True
    if kind == "key":
        pairs = parents[-1]["$map"]
        new = other_value(path[-1], save, rnd, avoid=[k for k, _ in pairs])
        if new is None:
            return False
        for pair in pairs:
            if pair[0] == path[-1]:
                pair[0] = new
        return True
    if isinstance(node, (dict, list)):
        return False  # a hidden collection changes through its items and keys (walked separately)
    new = other_value(node, save, rnd)
    if new is None:
        return False
    if not path:
        save["data"][name] = new
    else:
        put(parents[-1], path[-1], new)
    return True


def lookup(node, k):
    if isinstance(node, list):
        return node[k]
    if isinstance(node, dict) and "$map" in node:
        for key, v in node["$map"]:
            if key == k:
                return v
    raise KeyError(k)


def put(node, k, v):
    if isinstance(node, list):
        node[k] = v
        return
    for pair in node["$map"]:
        if pair[0] == k:
            pair[1] = v


def other_value(v, save, rnd, avoid=()):
    """Another value of the same JSON kind: a number +-1, another name from the state, a list with one
    item changed."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        for cand in (v + 1, v - 1, v + 2):
            if cand not in avoid:
                return cand
        return None
    if isinstance(v, str):
        names = sorted({s for s in strings(save["data"]) if s != v and s not in avoid})
        return rnd.choice(names) if names else None
    if isinstance(v, list) and v:
        for _ in range(8):
            i = rnd.randrange(len(v))
            new = other_value(v[i], save, rnd)
            if new is not None and v[:i] + [new] + v[i + 1:] not in avoid:
                return v[:i] + [new] + v[i + 1:]
    return None


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for x in node:
            yield from strings(x)
    elif isinstance(node, dict):
        for k, x in node.items():
            if not k.startswith("$"):
                yield from strings(x)
            else:
                yield from strings(x)


# ---------------------------------------------------------------------------------------- the property
def public(view):
    """A view without the final result: the scores at the end are public by the rules' own scoring,
    which reads the whole state."""
    return {k: v for k, v in view.items() if k not in ("scores", "winners")}


def positions(rs, n, seed, chance, stops):
    """Games at `stops` decisions into a random game (or its end)."""
    rnd = random.Random(seed)
    g = rs.new_game(n, seed=seed, chance=chance)
    steps = 0
    for stop in sorted(stops):
        while steps < stop and not g.is_over():
            acts = g.legal_actions()
            g.apply(rnd.choice(acts))
            steps += 1
        yield g.clone()


def check_position(rs, g, rnd, tries):
    """Returns how many hidden changes were checked."""
    base = json.loads(g.to_json())
    checked = 0
    for p in range(g.n):
        places = hidden_places(rs, base, p)
        rnd.shuffle(places)
        for place in places[:tries]:
            save = json.loads(json.dumps(base))
            if not mutate(save, place, rnd):
                continue
            try:
                h = rs.load_game(json.dumps(save))
            except rulelang.GameError:
                continue  # the change broke a rule the save validator knows (e.g. a range): not a position
            if h.view(None)["vars"] == g.view(None)["vars"] and h.to_json() == g.to_json():
                continue  # the change did not change the state (e.g. a pool's order)
            before = json.dumps(public(g.view(p)), sort_keys=True)
            after = json.dumps(public(h.view(p)), sort_keys=True)
            assert before == after, (f"seat {p}'s view changed when the hidden {place[0]}{place[1]}"
                                     f"{' (' + place[2] + ')' if place[2] else ''} changed:\n{before}\n{after}")
            checked += 1
    return checked


SOURCES = sources()


@pytest.mark.parametrize("name,text", SOURCES, ids=[s[0] for s in SOURCES])
def test_changing_a_hidden_value_does_not_change_the_view(name, text):
    rs = load(name, text)
    n = min(rs.player_counts)
    checked = 0
    long_game = "station" in name
    stops = [0, 40, 150, 400] if long_game else [0, 3, 8, 20]
    for seed in (1, 2) if long_game else (1, 2, 3):
        for chance in ("sampled", "explicit"):
            for g in positions(rs, n, seed, chance, stops):
                checked += check_position(rs, g, random.Random(seed), tries=4)
    has_hidden = any(vis != "all" for *_, vis in rs.vars) or any(k.hidden for k in rs.pieces.values()) or any(
        isinstance(v, Pile) for v in rs.new_game(n, seed=1).data.values())
    if has_hidden and (text is None or name.startswith("hidden:")):
        assert checked > 0, "no hidden value was changed: the test checked nothing"


def test_the_property_catches_a_leak():
    """The checker above must fail when a view shows a hidden value: break the view on purpose."""
    rs = load("hidden:cards", HIDDEN_GAMES["cards"])
    g = rs.new_game(2, seed=1)
    import interpreter.engine as E
    real = E.Game._visible

    def leaky(self, name, per, vis, value, player):
        return real(self, name, per, "all", value, player)
    E.Game._visible = leaky
    try:
        with pytest.raises(AssertionError, match="view changed"):
            check_position(rs, g, random.Random(1), tries=8)
    finally:
        E.Game._visible = real


def test_the_property_catches_a_leak_of_a_piece_field(monkeypatch):
    """The same for pieces: a view that shows every piece field to everybody must fail the check."""
    import interpreter.pieces as P
    rs = load("hidden:ships", HIDDEN_GAMES["ships"])
    g = rs.new_game(2, seed=1)
    real = P.view_pieces
    monkeypatch.setattr(P, "view_pieces", lambda G, player: real(G, None))
    with pytest.raises(AssertionError, match="view changed"):
        check_position(rs, g, random.Random(1), tries=8)

"""The engine's per-decision shortcuts (issue 8, second wave) behave exactly as the plain paths they replace:
apply() by id or Action with or without legal_actions() first, on copies and loaded saves; an illegal id
is refused with the same message; `action_done` still reaches its triggers; line_length walks, asks and
charges as the general walk does."""
import json
import random

import pytest
from hypothesis import given, settings, strategies as st

import rulelang
from interpreter import boards as B
from interpreter.builtins import WORK_BUDGET, RuleRuntimeError
from rulelang import IllegalAction

COUNTER = '''
game "Counter" { players 2 }
var done: list[str] = []
var turns_seen: int = 0
action add(k in 1..3) {
  effect { done = done + ["add"] }
}
action pass_turn {
  effect { }
}
when action_done(p, name) if name == "add" then { turns_seen = turns_seen + 1 }
flow { repeat 4 times { for p in players { turn p { offer [add, pass_turn] to p } } } }
score p = turns_seen
'''


def test_action_done_still_reaches_its_trigger():
    rs = rulelang.loads(COUNTER)
    g = rs.new_game(2, seed=1)
    picks = ["add(1)", "pass_turn", "add(3)", "add(2)", "pass_turn", "pass_turn", "add(1)", "pass_turn"]
    for aid in picks:
        g.apply(aid)
    assert g.is_over()
    view = g.view()["vars"]
    assert view["turns_seen"] == 4  # one per "add", none per "pass_turn"
    assert view["done"] == ["add"] * 4


def test_an_action_without_a_trigger_on_action_done_ends_the_same():
    rs = rulelang.loads(COUNTER.replace('when action_done(p, name) if name == "add" then '
                                        '{ turns_seen = turns_seen + 1 }', ''))
    g = rs.new_game(2, seed=1)
    for _ in range(8):
        g.apply(g.legal_actions()[-1])
    assert g.is_over() and g.view()["vars"]["turns_seen"] == 0


def _illegal_message(g, aid):
    with pytest.raises(IllegalAction) as e:
        g.apply(aid)
    return str(e.value)


def test_an_illegal_id_is_refused_the_same_after_legal_actions():
    rs = rulelang.load("games/examples/tictactoe.rules")
    a = rs.new_game(2, seed=0)
    b = rs.new_game(2, seed=0)
    a.apply("place(1,1)")
    b.apply("place(1,1)")
    b.legal_actions()  # b keeps an id -> value lookup, a searches the options
    for aid in ("place(1,1)", "place(9,9)", "", "PLACE(0,0)"):
        ma = _illegal_message(a, aid)
        assert ma == _illegal_message(b, aid)
        assert "is not legal now" in ma
    assert a.to_json() == b.to_json()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), pick=st.integers(0, 10**6), how=st.lists(st.integers(0, 4), max_size=60))
def test_every_way_of_applying_plays_the_same_game(seed, pick, how):
    """Action objects, ids with and without legal_actions() first, copies and reloaded saves in between."""
    rs = rulelang.load("games/examples/connect4.rules")
    ref = rs.new_game(2, seed=seed % 1000)
    g = rs.new_game(2, seed=seed % 1000)
    r = random.Random(pick)
    for step in how:
        if ref.is_over():
            break
        acts = ref.legal_actions()
        a = r.choice(acts)
        ref.apply(a)
        if step == 0:
            g.apply(a.id)  # no legal_actions() on g
        elif step == 1:
            g.legal_actions()
            g.apply(a.id)
        elif step == 2:
            g.apply(next(x for x in g.legal_actions() if x.id == a.id))
        elif step == 3:
            g.legal_actions()
            g = g.clone()  # the copy's options are a copy: its lookup must not be trusted
            g.apply(a.id)
        else:
            g.legal_actions()
            g = rs.load_game(g.to_json())
            g.apply(a)
        assert g.to_json() == ref.to_json()


class _Work:
    def __init__(self):
        self.work = 0
        self.work_mark = 10**9
        self.deadline = None
        self.time_limit = 1.0


def _reference_line_length(board, n, where, G):
    """The general walk (one tuple per step), as line_length computed it before the (x, y) shortcut."""
    if n not in board.adj or not board.directions or (where is not None and not where(n)):
        return 0
    best = 1
    walked = 0
    for d in board.directions:
        length = 1
        for sign in (1, -1):
            cur = n
            while True:
                nxt = tuple(c + sign * o for c, o in zip(cur, d))
                if nxt not in board.adj or (where is not None and not where(nxt)):
                    break
                walked += 1
                length += 1
                cur = nxt
        best = max(best, length)
    if walked > 8:
        G.work += walked
    return best


def _without_rays(board):
    board._ray_items = B.MAX_RAY_ITEMS  # no room for rays: every call walks step by step
    return board


BOARDS = [B.square_grid("s", 1, 1), B.square_grid("s", 3, 3), B.square_grid("s", 6, 7),
          B.square_grid("s", 5, 4, diagonals=True), B.hex_grid("h", 3),
          _without_rays(B.square_grid("s", 6, 7)), _without_rays(B.hex_grid("h", 3))]


@settings(max_examples=60, deadline=None)
@given(which=st.integers(0, len(BOARDS) - 1), data=st.data())
def test_line_length_walks_asks_and_charges_as_the_general_walk(which, data):
    board = BOARDS[which]
    nodes = list(board.nodes)
    marked = set(data.draw(st.lists(st.sampled_from(nodes), max_size=len(nodes))))
    n = data.draw(st.sampled_from(nodes + [(99, 99)]))
    use_where = data.draw(st.booleans())
    asked = {"fast": [], "ref": []}

    def where_of(key):
        def where(cell):
            asked[key].append(cell)
            return cell in marked
        return where if use_where else None

    fast, ref = _Work(), _Work()
    assert board.line_length(n, where_of("fast"), fast) == _reference_line_length(board, n, where_of("ref"), ref)
    assert asked["fast"] == asked["ref"]
    assert fast.work == ref.work


def test_line_length_stops_at_the_work_budget():
    board = B.square_grid("s", 9, 9, diagonals=True)
    G = _Work()
    G.work = G.work_mark = WORK_BUDGET - 5
    with pytest.raises(RuleRuntimeError):
        board.line_length((4, 4), None, G)  # 32 steps walked, 5 units of work left


# ---------------------------------------------------------------------------------- distance
def _reference_distance(board, a, b, G):
    """Breadth-first search from a, charging each node taken from the queue its neighbours + 1, stopping
    when b is first seen: the walk distance() does for every call when it keeps no tables."""
    if a not in board.adj or b not in board.adj:
        return None
    if a == b:
        return 0
    seen = {a: 0}
    queue = [a]
    for n in queue:
        G.work += len(board.adj[n]) + 1
        for m in board.adj[n]:
            if m not in seen:
                if m == b:
                    return seen[n] + 1
                seen[m] = seen[n] + 1
                queue.append(m)
    return None


DISTANCE_BOARDS = BOARDS + [B.line("l", 6), B.from_edges("g", [["a", "b", "c"], ["d", "e"], ["c", "f", "a"]], {})]


@pytest.mark.parametrize("which", range(len(DISTANCE_BOARDS)))
def test_distance_gives_and_charges_what_a_fresh_search_does(which):
    """Every pair, twice (the second time from the remembered table): the length networkx finds, and the
    work of a search from scratch; a `through` test still searches."""
    import networkx as nx

    board = DISTANCE_BOARDS[which]
    nodes = list(board.nodes) + [(99, 99)]
    for _ in range(2):
        for a in nodes:
            for b in nodes:
                got, ref = _Work(), _Work()
                d = board.distance(a, b, None, got)
                assert d == _reference_distance(board, a, b, ref)
                assert got.work == ref.work
                if a in board.adj and b in board.adj:
                    want = nx.shortest_path_length(board.graph, a, b) if nx.has_path(board.graph, a, b) else None
                    assert d == want
                    assert board.distance(a, b, lambda m: True, _Work()) == want


def test_distance_tables_stop_growing_at_their_limit(monkeypatch):
    monkeypatch.setattr(B, "DISTANCE_TABLE_ENTRIES", 10)
    board = B.square_grid("s", 4, 4)
    for a in board.nodes:
        got, ref = _Work(), _Work()
        assert board.distance(a, (3, 3), None, got) == _reference_distance(board, a, (3, 3), ref)
        assert got.work == ref.work
    assert len(board._distance_tables) == 1  # the first table (16 entries) went past the limit

# ---------------------------------------------------------------------------------- per-game and per-decision shortcuts
STARTS = '''
game "Starts" { players 2..4 }
piece Token { owner: player, n: int = 0 }
var scores: list[int] = [0 for p in players]
var first: player = player_count - 1
const half = player_count / 2
var seen: int = half
action make(k in 1..2) { effect { let t = new Token(owner: me, n: k)  scores = scores + [k] } }
flow { repeat 3 times { for p in players { turn p { offer [make] to p } } } }
'''


def test_a_new_game_starts_as_the_first_game_of_its_player_count_did():
    """Start values are computed by the first game of each player count and copied by the next ones:
    each game starts exactly as the first game of a freshly loaded ruleset, and pieces made in one game
    are not seen by another."""
    rs = rulelang.loads(STARTS)
    for players in (2, 3, 2, 4, 3, 2):
        g = rs.new_game(players, seed=players)
        fresh = rulelang.loads(STARTS).new_game(players, seed=players)
        assert g.to_json() == fresh.to_json()
        for _ in range(2):
            g.apply(g.legal_actions()[-1])
            fresh.apply(fresh.legal_actions()[-1])
        assert g.to_json() == fresh.to_json()
    assert rs.new_game(2, seed=2).view()["pieces"] == rulelang.loads(STARTS).new_game(2, seed=2).view()["pieces"]


def test_a_start_value_that_fails_fails_in_every_game():
    rs = rulelang.loads('game "S" { players 2..3 }\nvar p: player = player_count\nflow { }')
    for _ in range(2):
        with pytest.raises(rulelang.GameError, match="is not a player"):
            rs.new_game(2, seed=0)


TURNS = '''
game "Turns" { players 3 }
var moves: list[int] = []
action go { effect { moves = moves + [me] } }
action leave { effect { eliminate me } }
flow { while count(moves) < 9 { for p in players { turn p { offer [go, leave] to p } } } }
EVENT
'''


@pytest.mark.parametrize("loop", ["for p in players", "for i, p in players"])
@pytest.mark.parametrize("seed", range(6))
def test_a_turn_without_a_turn_end_trigger_plays_as_one_with_an_empty_trigger(seed, loop):
    """The end of a turn that no trigger waits for goes straight on to the loop's next step and the next
    turn's start (one fused op): the same game as when a trigger (doing nothing) waits for turn_end,
    eliminated seats (whose turns are skipped) included; a save taken anywhere continues the same."""
    turns = TURNS.replace("for p in players", loop)
    plain = rulelang.loads(turns.replace("EVENT", ""))
    ref = rulelang.loads(turns.replace("EVENT", "when turn_end(p) then { }"))
    for rs in (plain, plain.with_backend("closures")):
        a, b = rs.new_game(3, seed=seed), ref.new_game(3, seed=seed)
        r = random.Random(seed)
        while not a.is_over():
            assert a.to_json() == b.to_json()
            assert [x.id for x in a.legal_actions()] == [x.id for x in b.legal_actions()]
            pick = r.choice(["go", "go", "leave"]) if len(a.legal_actions()) > 1 else "go"
            a.apply(pick)
            b.apply(pick)
            a = rs.load_game(a.to_json())
        assert a.to_json() == b.to_json()


def test_a_turn_of_a_seat_that_is_not_a_player_fails_the_same_when_the_turns_are_fused():
    """The next turn started by the end of the one before (see above) fails as the turn's own start does:
    the same message, at the turn statement (a trigger on turn_end keeps the ops apart)."""
    src = 'game "T" { players 2 }\naction go { effect { } }\n' \
          'flow { for p in [0, 1, 7] { turn p { offer [go] to p } } }\nEVENT'
    outcomes = []
    for rules in (src.replace("EVENT", ""), src.replace("EVENT", "when turn_end(p) then { }")):
        g = rulelang.loads(rules).new_game(2, seed=1)
        g.apply("go")
        with pytest.raises(rulelang.GameError) as err:
            g.apply("go")
        state = json.loads(g.to_json())
        outcomes.append((str(err.value), state["error"], state["log"], state["over"]))
    assert outcomes[0][0].startswith("<string>:3:29: turn of 7, which is not a player")  # `turn` is at column 29
    assert outcomes[0] == outcomes[1]


MAPS = '''
game "Maps" { players 2 }
var got: list[map[str, int]] = []
action pick {
  effect {
    let m = choose one of [{"a": 1}, {"b": 2}, {"a": 1, "b": 2}, {"a": 1}]
    got = got + [m]
  }
}
action same(k in [1, "1", 2]) { effect { } }
flow { repeat 3 times { for p in players { turn p { offer [pick, same] to p } } } }
'''


def test_options_that_cannot_be_keys_and_equal_ids_are_listed_and_applied_as_by_the_closures():
    rs = rulelang.loads(MAPS)
    ref = rs.with_backend("closures")
    for seed in range(8):
        a, b = rs.new_game(2, seed=seed), ref.new_game(2, seed=seed)
        r = random.Random(seed)
        while not a.is_over():
            acts = a.legal_actions()
            assert [(x.id, x.text) for x in acts] == [(x.id, x.text) for x in b.legal_actions()]
            pick = r.choice(acts)
            a.apply(pick if r.random() < 0.5 else pick.id)
            b.apply(pick.id)
            assert a.to_json() == b.to_json()


def test_checking_rules_with_boards_does_not_import_networkx():
    """`rulelang check` of a game with a hex board (Vega) builds it without networkx (its import is a large
    part of a cold check); the board's graph, made on first use, has the nodes, attributes and edges."""
    import subprocess
    import sys
    from pathlib import Path

    code = '''
import sys
from rulelang.__main__ import main
sys.argv = ["rulelang", "check", "games/vega.rules"]
try:
    main()
except SystemExit:
    pass
print("networkx" in sys.modules)
'''
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120,
                       env=dict(__import__("os").environ, RULELANG_NO_CACHE="1"))
    assert r.stdout.splitlines()[-1:] == ["False"], r.stdout + r.stderr


def test_a_boards_graph_has_its_nodes_attributes_and_edges():
    rs = rulelang.loads(
        'game "B" { players 2 }\n'
        'board s = square_grid(3, 3)\n'
        'board h = hex_rect(3, 4)\n'
        'board m {\n a -- b -- c\n a -- c\n node a(kind: 1)\n node d(kind: 2)\n}\n'
        'var out: list[any] = []\n'
        'flow { out = [distance(s, (0, 0), (2, 2)), distance(h, (0, 0), (2, 3)), distance(m, a, c),'
        ' distance(m, a, d), line_length(s, (1, 1)), attr(m, a, "kind"), count(nodes(h))] }\n')
    g = rs.new_game(2, seed=1)
    # orthogonal steps on the square grid; odd-r offset hexes: cube distance (|dx| + |dy| + |dz|) / 2 = 4
    assert g.view()["vars"]["out"] == [4, 4, 1, None, 3, 1, 12]
    m = rs.boards["m"].graph
    assert sorted(m.edges) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert dict(m.nodes(data=True)) == {"a": {"kind": 1}, "b": {}, "c": {}, "d": {"kind": 2}}
    h = rs.boards["h"].graph
    assert h.number_of_nodes() == 12 and h.number_of_edges() == 3 * 3 + 2 * 4 + 2 * 3  # rows, and two diagonals
    assert h.nodes[(0, 0)] == {"row": 0, "column": 0, "edge": True}


def test_listings_of_fixed_candidates_are_handed_out_again_and_known_by_their_identity():
    rs = rulelang.load("games/examples/tictactoe.rules")
    g1, g2 = rs.new_game(2, seed=1), rs.new_game(2, seed=2)
    assert g1.pending.same_pairs and g1.pending.options is g2.pending.options  # one list per set of legal ones
    first = g1.legal_actions()
    g2 = rs.new_game(2, seed=2)  # the same offer again: its Actions are at hand before anyone asks
    assert g2._actions is not None and g2._actions is g1._actions
    again = g2.legal_actions()
    cells = [f"place({r},{c})" for r in range(3) for c in range(3)]
    assert [a.id for a in first] == cells
    assert all(a is b for a, b in zip(first, again))  # the same options: the Actions made for the first
    g1.apply("place(1,1)")
    later = g1.legal_actions()
    assert [a.id for a in later] == [c for c in cells if c != "place(1,1)"] and all(a.player == 1 for a in later)
    loaded = rs.load_game(g1.to_json())  # options read from a save are new objects: listed by value
    assert not loaded.pending.same_pairs and [a.id for a in loaded.legal_actions()] == [a.id for a in later]
    closures = rs.with_backend("closures").new_game(2, seed=1)
    assert not closures.pending.same_pairs and [a.id for a in closures.legal_actions()] == cells


def test_an_action_whose_code_is_one_generated_op_runs_without_a_frame_and_plays_the_same():
    rs = rulelang.load("games/examples/connect4.rules")
    closures = rs.with_backend("closures")
    for seed in range(5):
        a, b = rs.new_game(2, seed=seed), closures.new_game(2, seed=seed)
        assert rs.codes["action:drop"].whole is not None and closures.codes["action:drop"].whole is None
        rng = random.Random(seed)
        while not a.is_over():
            pick = rng.choice(a.legal_actions()).id
            a.apply(pick)
            b.apply(pick)
            assert a.to_json() == b.to_json()


def test_listings_handed_out_again_are_never_changed():
    """The options lists and the offers (decisions) that games and copies share are never changed."""
    rs = rulelang.load("games/examples/connect4.rules")
    seen, offers, shared = {}, {}, 0
    for seed in range(30):
        g, rng = rs.new_game(2, seed=seed), random.Random(seed)
        while not g.is_over():
            opts = g.pending.options
            seen.setdefault(id(opts), (opts, list(opts)))
            shared += id(g.pending) in offers
            offers.setdefault(id(g.pending), (g.pending, dict(vars(g.pending)), g.pending.to_dict()))
            c = g.clone()
            assert c.pending is g.pending
            c.apply(rng.choice(c.legal_actions()))  # a copy playing on leaves the shared offer alone
            g.apply(rng.choice(g.legal_actions()))
    assert len(seen) > 10 and all(opts == copy for opts, copy in seen.values())
    assert shared > 10 and all(vars(p) == fields and p.to_dict() == saved for p, fields, saved in offers.values())


def test_kept_ids_of_computed_candidates_tell_a_bool_from_a_number():
    text = '''
game "Ids" { players 2 }
var xs: list[any] = [true, "1", 2, [1]]
var seen: list[any] = []
action a(k in xs) { effect { seen = seen + [k]  xs = if count(seen) % 2 == 1 then [1, "1", 2, [1]] else [true, "1", 2, [1]] } }
flow { repeat 4 times { offer [a] to 0 } }
'''
    gen = rulelang.loads(text)
    closures = gen.with_backend("closures")
    g, c = gen.new_game(2, seed=1), closures.new_game(2, seed=1)
    listed = []
    for _ in range(4):
        ids = [a.id for a in g.legal_actions()]
        assert ids == [a.id for a in c.legal_actions()]
        listed.append(ids)
        g.apply(ids[0])
        c.apply(ids[0])
        assert g.to_json() == c.to_json()
    assert listed[0][0] == "a(true)" and listed[1][0] == "a(1)" and listed[2][0] == "a(true)"


DRAWS_LATER = '''
game "Later" { players 2..3 }
var rolls: list[int] = []
var marks: list[int] = []
action mark(k in 1..3) { effect { marks = marks + [k] } }
flow {
  repeat 3 times {
    for p in players { turn p { offer [mark] to p } }
    let r = roll one of 1..6
    rolls = rolls + [r]
  }
}
score p = count(rolls)
'''

DRAWS_AT_SETUP = DRAWS_LATER.replace("var marks: list[int] = []", "var marks: list[int] = []\nsetup { let r = roll one of 1..6\n  rolls = [r] }")


@pytest.mark.parametrize("source", [DRAWS_LATER, DRAWS_AT_SETUP], ids=["draws later", "draws at setup"])
@pytest.mark.parametrize("chance", ["sampled", "explicit"])
def test_games_after_the_first_start_as_a_fresh_ruleset_starts_them(source, chance):
    """The second and later games of a player count are copies of the first one's first decision when
    nothing was drawn on the way there (Ruleset._first_decisions): each must play, step by step, exactly as
    the same seed does in a freshly loaded ruleset, its own seed deciding every later draw."""
    rs = rulelang.loads(source)
    for players, seed in ((2, 0), (2, 1), (3, 7), (2, 2**64 - 1), (3, 7), (2, 12345)):
        g = rs.new_game(players, seed=seed, chance=chance)
        fresh = rulelang.loads(source).new_game(players, seed=seed, chance=chance)
        pick = random.Random(seed)
        while True:
            assert g.to_json() == fresh.to_json()
            if g.is_over():
                break
            a = pick.choice(fresh.legal_actions())
            g.apply(a.id)
            fresh.apply(a.id)
    copied = {key[0] for key in rs._first_decisions}
    # a draw at setup (sampled): every game starts afresh; explicit chance mode stops at that draw, seed or not
    assert copied == (set() if source is DRAWS_AT_SETUP and chance == "sampled" else {2, 3})


def test_a_copy_of_a_game_has_every_field_of_the_game():
    """Game.clone and Pending.copy set fields by name (not through __dict__, which slows attribute reads):
    a field added to Game or a decision must be added there too."""
    for source in (DRAWS_LATER, STARTS, COUNTER):
        g = rulelang.loads(source).new_game(2, seed=3)
        g.apply(g.legal_actions()[0])
        c = g.clone()
        assert set(vars(c)) == set(vars(g))
        assert set(vars(c.pending)) <= set(vars(g.pending))
        for name in vars(g.pending):
            assert getattr(c.pending, name) == getattr(g.pending, name)
        assert c.to_json() == g.to_json()


def test_a_limit_set_between_games_applies_to_the_next_game():
    """A lower step budget set on the ruleset after a first game stops the next game's setup as it would stop
    a ruleset loaded afresh: later games are copies of the first one only under the same limits."""
    src = 'game "L" { players 2 }\nvar n: int = 0\naction go { effect { } }\n' \
          'flow { while n < 50 { n += 1 }  loop { offer [go] to 0 } }'
    rs = rulelang.loads(src)
    rs.new_game(2, seed=1)
    rs.step_budget = 20
    with pytest.raises(rulelang.GameError, match="ran 20 steps"):
        rs.new_game(2, seed=2)
    rs.step_budget = 2_000_000
    assert rs.new_game(2, seed=3).to_json() == rulelang.loads(src).new_game(2, seed=3).to_json()


TRIGGERS = '''
game "Triggers" { players 2 }
event ping(n: int)
var x: int = 0
var seen: list[int] = []
var bad: map[int, int] = {}
when ping(n) if n > 5 then { seen = seen + [100 + n] }
when ping(n) if x == n then { x = x + 1  seen = seen + [n] }
when ping(n) if x == n + 1 then { seen = seen + [1000 + n] }
when ping(n) if n == 9 and bad[n] > 0 then { seen = seen + [-1] }
action go(k in 0..9) { effect { emit ping(k) } }
event pong(n: int)
when pong(n) if n == 1 and bad[n] > 0 then { }
when pong(n) if n == 2 and count([i for i in 0..999999 if i >= 0]) > 0 then { }
action poke(k in 1..2) { effect { emit pong(k) } }
flow { loop { for p in players { turn p { offer [go, poke] to p } } } }
'''


def test_trigger_conditions_are_tested_in_turn_on_the_state_the_triggers_before_left():
    """emit_event tests the conditions of the triggers in front before their frames are made: a trigger
    whose condition holds runs, and the ones after it still test theirs on the state it leaves (the third
    trigger sees the x the second one wrote, in the same emit)."""
    rs = rulelang.loads(TRIGGERS)
    g = rs.new_game(2, seed=1)
    g.apply("go(0)")  # x == 0: the second trigger runs, then the third sees x == 1
    assert list(g.data["seen"]) == [0, 1000]
    g.apply("go(3)")  # nothing holds
    assert list(g.data["seen"]) == [0, 1000] and g.data["x"] == 1
    g.apply("go(7)")  # only the first
    assert list(g.data["seen"]) == [0, 1000, 107]
    closures = rs.with_backend("closures").new_game(2, seed=1)
    for a in ("go(0)", "go(3)", "go(7)"):
        closures.apply(a)
    assert closures.to_json() == g.to_json()


def test_a_trigger_condition_that_fails_is_said_at_its_trigger():
    rs = rulelang.loads(TRIGGERS)
    g = rs.new_game(2, seed=1)
    with pytest.raises(rulelang.GameError) as err:
        g.apply("go(9)")  # bad[9] has no value: the fourth trigger's test fails (after the first one ran)
    assert "<string>:10:" in str(err.value) and "when ping (line 10)" in str(err.value)
    assert list(g.data["seen"]) == [109]
    c = rs.with_backend("closures").new_game(2, seed=1)
    with pytest.raises(rulelang.GameError) as err_c:
        c.apply("go(9)")
    assert str(err_c.value) == str(err.value)
    # a test made by emit_event itself (the first trigger of the event) that fails: the same error, said at
    # the trigger, as when the trigger makes it
    for poke, line, what in (("poke(1)", 13, "cannot compare none"), ("poke(2)", 14, "the work budget")):
        errors = []
        for backend in ("generated", "closures"):
            g = rs.with_backend(backend).new_game(2, seed=1)
            with pytest.raises(rulelang.GameError) as err:
                g.apply(poke)
            errors.append(str(err.value))
        assert errors[0] == errors[1]
        assert f"<string>:{line}:" in errors[0] and f"when pong (line {line})" in errors[0] and what in errors[0]


def test_a_cascade_too_deep_stops_even_when_no_condition_holds():
    rs = rulelang.loads('''
game "T" { players 2 }
event ping(n: int)
when ping(n) if n > 1000 then { }
when ping(n) if n < 0 then { }
when ping(n) then { emit ping(n + 1) }
action go { effect { emit ping(0) } }
flow { loop { turn 0 { offer [go] to 0 } } }
''')
    g = rs.new_game(2)
    with pytest.raises(rulelang.GameError) as err:
        g.apply("go")
    assert "triggers set off triggers" in str(err.value)


JUMPS = '''
game "Jumps" { players 2 }
var n: int = 0
var trail: list[int] = []
procedure pick(p: player) {
  loop {
    let k = choose one of [1, 2, 3] by p optional prompt "how many?"
    if k == none { break }
    if k == 1 {
      trail = trail + [1]
      if n > 3 { n = n - 1 } else { n = n + 1 }
    } elif k == 2 {
      let again = choose one of [true, false] by p prompt "again?"
      if again { continue } else { trail = trail + [2] }
    } else {
      while n > 0 {
        let m = choose one of [0, 1] by p prompt "down?"
        n = n - m
        if m == 0 { break }
      }
    }
    if count(trail) > 12 { end_game }
  }
}
action go { effect { pick(me) } }
flow { repeat 6 times { for p in players { turn p { offer [go] to p } } } }
score p = n
'''


@pytest.mark.parametrize("seed", range(8))
def test_jumps_to_jumps_go_straight_on_and_play_the_same(seed, monkeypatch):
    """A jump (or an if's test, or a fused run's end) that lands on a plain jump goes straight to where
    that one goes: the same game, step by step and through saves, as the same rules with every jump kept."""
    from interpreter import closures
    from interpreter.closures import jump_target

    def landing(rs):
        return sum(to is not None and jump_target(code.ops, to) != to for code in rs.codes.values()
                   for op in code.ops for to in (getattr(op, "jump_to", None), getattr(op, "else_to", None)))

    rs = rulelang.loads(JUMPS)
    rs.new_game(2, seed=0)
    assert landing(rs) == 0  # no op goes on at a plain jump any more
    with monkeypatch.context() as m:
        m.setattr(closures, "_thread_jumps", lambda c: None)
        kept = rulelang.loads(JUMPS).with_backend("closures")
        kept.new_game(2, seed=0)
    assert landing(kept) >= 3
    for a_rs in (rs, rs.with_backend("closures")):
        a, b = a_rs.new_game(2, seed=seed), kept.new_game(2, seed=seed)
        r = random.Random(seed)
        while not a.is_over():
            assert a.to_json() == b.to_json()
            pick = r.choice(a.legal_actions()).id
            a.apply(pick)
            b.apply(pick)
            a = a_rs.load_game(a.to_json())
        assert a.to_json() == b.to_json()


ROUNDS = '''
game "Rounds" { players 3 }
var moves: list[int] = []
var round: int = 0
var order: list[list[int]] = [[0, 1, 2], [2, 0], [1]]
var some: list[list[int]] = [[0, 1, 2], []]
action go { effect { moves = moves + [me] } }
action leave { effect { eliminate me } }
action next { effect { round = round + 1 } }
ending "moves" when count(moves) >= 12
flow { loop { for p in SOURCE { turn p { offer [go, leave, next] to p } } } }
EVENT
'''


KEPT = ("error", "log", "over", "data", "eliminated", "current", "turns", "end_reason")


@pytest.mark.parametrize("source", ["players", "order[round]", "some[round % 2]"])
@pytest.mark.parametrize("seed", range(10))
def test_a_loop_whose_body_is_a_round_of_turns_starts_the_next_round_as_its_ops_do(seed, source):
    """`loop { for p in S { turn p { ... } } }`: the end of the last turn of a round starts the next round
    (the loop's start, its step, the turn's start) itself. The same game as when a trigger waits for turn_end
    (every op runs then), with eliminated seats, a round list that changes, one that cannot be read (an error
    said at the loop, as its own start says it) and an empty one (the step budget: no decision comes)."""
    rules = ROUNDS.replace("SOURCE", source)
    plain = rulelang.loads(rules.replace("EVENT", ""))
    ref = rulelang.loads(rules.replace("EVENT", "when turn_end(p) then { }"))
    ref.step_budget = 5000  # (an empty round: the step budget runs out, sooner)
    for rs in (plain, plain.with_backend("closures")):
        rs.step_budget = 5000
        a, b = rs.new_game(3, seed=seed), ref.new_game(3, seed=seed)
        r = random.Random(seed)
        while not a.is_over():
            assert a.to_json() == b.to_json()
            pick = r.choice(["go", "go", "go", "go", "next", "next", "leave"])
            if pick not in [x.id for x in a.legal_actions()]:
                pick = "go"
            outcomes = []
            for g in (a, b):
                try:
                    g.apply(pick)
                    outcomes.append(None)
                except rulelang.GameError as e:
                    outcomes.append(str(e))
            said = outcomes[0]
            if outcomes[0] is not None and "steps without needing a decision" in outcomes[0]:
                # the step budget: fewer steps are counted per round, so it runs out at another of the ops
                outcomes = [o.split(": ", 1)[1] for o in outcomes]
            assert outcomes[0] == outcomes[1]
            if outcomes[0] is not None:  # the game stopped (where its frames stopped is not kept the same)
                assert said.startswith("<string>:11:") and said.endswith("(in flow)")  # where the ops say it
                sa, sb = json.loads(a.to_json()), json.loads(b.to_json())
                assert [sa[k] for k in KEPT] == [sb[k] for k in KEPT]
                break
            a = rs.load_game(a.to_json())
        else:
            assert a.to_json() == b.to_json()


IF_TESTS = '''
game "Tests" { players 2 }
var n: int = 0
var xs: list[int] = [1, 2]
var trail: list[int] = []
procedure pick(p: player) {
  repeat 3 times {
    n = n + 1
    let r = n % 4
    if r == 0 {
      let k = choose one of [1, 2] by p prompt "k?"
      trail = trail + [k]
    } elif r == 1 and xs[n % 2] > 0 {
      let k = choose one of [3, 4] by p prompt "k?"
      trail = trail + [k]
    } elif r == 2 {
      trail = trail + [0]
    } else {
      let k = choose one of [5, 6] by p prompt "k?"
      n = n + k
    }
    if n > 40 { n = 0 }
  }
}
action go { effect { pick(me) } }
flow { repeat 5 times { for p in players { turn p { offer [go] to p } } } }
score p = n + count(trail)
'''


def _test_ops_run(g, picks):
    """The if-tests run as ops of their own while `picks` are applied to g."""
    import sys
    seen = [0]

    def prof(frame, event, arg):
        if event == "call" and frame.f_code.co_qualname.startswith("_jump_unless"):
            seen[0] += 1
    sys.setprofile(prof)
    try:
        for pick in picks:
            g.apply(pick)
    finally:
        sys.setprofile(None)
    return seen[0]


@pytest.mark.parametrize("seed", range(6))
def test_the_tests_of_an_if_after_statements_are_made_by_their_op_and_play_the_same(seed):
    """A generated op of statements followed by an `if` that can stop makes the if's tests itself and goes on
    where they lead (docs/runtime.md): the same game, step by step and through saves, as the closures, whose
    tests are ops of their own; and an error in such a test reads the same."""
    rs = rulelang.loads(IF_TESTS)
    cl = rs.with_backend("closures")
    a, b = rs.new_game(2, seed=seed), cl.new_game(2, seed=seed)
    r = random.Random(seed)
    picks = []
    while not a.is_over():
        assert a.to_json() == b.to_json()
        pick = r.choice(a.legal_actions()).id
        picks.append(pick)
        a.apply(pick)
        b.apply(pick)
        a = rs.load_game(a.to_json())
    assert a.to_json() == b.to_json() and a.returns() == b.returns()
    # the if's tests follow `n = n + 1  let r = n % 4`: no test runs as an op of its own any more
    assert _test_ops_run(rs.new_game(2, seed=seed), picks) == 0 < _test_ops_run(cl.new_game(2, seed=seed), picks)
    bad = IF_TESTS.replace("xs[n % 2] > 0", "xs[n % 2 + 1] > 0")  # xs = [1, 2]: index 2 fails when n is odd
    errors = []
    for backend in ("generated", "closures"):
        g = rulelang.loads(bad).with_backend(backend).new_game(2, seed=seed)
        with pytest.raises(rulelang.GameError) as err:
            while not g.is_over():
                g.apply(g.legal_actions()[0])
        errors.append(str(err.value))
    assert errors[0] == errors[1] and "<string>:13:" in errors[0]


POOLS = st.lists(st.one_of(st.integers(-3, 12), st.sampled_from(["a", "b", "10", "-1", "é"]), st.booleans(),
                           st.tuples(st.integers(0, 2), st.integers(0, 2))), max_size=8)


def _literal(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(map(_literal, v)) + ")"
    return str(v)


@settings(max_examples=60, deadline=None)
@given(POOLS)
def test_a_choice_offers_each_option_once_by_its_canonical_text_in_order(pool):
    """docs/language.md: a pick's ids are the options' canonical text, duplicates offered once. Pools of
    texts only and of whole numbers only are listed by a shortcut: every pool lists as the rule says."""
    from interpreter.values import fmt
    rules = ('game "Pick" { players 2 }\nvar got: any = none\n'
             f"flow {{ let x = choose one of [{', '.join(map(_literal, pool))}] by 0 optional  got = x }}")
    g = rulelang.loads(rules).new_game(2, seed=1)
    want = []
    for v in pool:
        text = v if isinstance(v, str) else fmt(v)
        if text not in [i for i, _ in want]:
            want.append((text, v))
    if not want:
        assert g.is_over()
        return
    assert [a.id for a in g.legal_actions()] == [i for i, _ in want] + ["done"]
    for i, v in want:  # each id gives its own value
        h = g.clone()
        h.apply(i)
        assert json.loads(h.to_json())["data"]["got"] == json.loads(rulelang.loads(
            f'game "V" {{ players 2 }}\nvar got: any = {_literal(v)}\nflow {{ }}').new_game(2).to_json())["data"]["got"]


def test_a_copy_made_at_a_single_pick_shares_the_decision_and_picks_on_its_own():
    """A single pick's decision is never changed once made (its pick ends it): a copy shares it, and
    each game then picks on its own; a save of the copy loads to the same decision."""
    rs = rulelang.loads('game "P" { players 2 }\nvar got: list[str] = []\n'
                        'flow { repeat 2 times { let x = choose one of ["a", "b", "c"] by 0 optional  got = got + [x] } }')
    from interpreter.game import Game
    g = rs.new_game(2, seed=1)
    h = g.clone()
    saved = Game.from_json(rs, h.to_json())
    assert h.pending is g.pending and [a.id for a in h.legal_actions()] == ["a", "b", "c", "done"]
    g.apply("b")
    h.apply("done")
    assert json.loads(g.to_json())["data"]["got"] == ["b"] and json.loads(h.to_json())["data"]["got"] == [None]
    saved.apply("b")
    assert saved.to_json() == g.to_json()


def test_a_choice_by_a_local_is_made_by_that_player_and_a_local_that_is_not_one_fails_as_an_expression():
    """`choose ... by q`, q a plain local, reads q from the locals (no expression call): the player q picks,
    and a q that is not a player fails with the message and place of `choose by (q + 0)`, an expression."""
    src = ('game "T" { players 2 }\nvar got: list[any] = []\n'
           'flow { for q in [1, 0, 5] { let c = choose one of ["a", "b"] by WHO  got = got + [[q, c]] } }')
    outcomes = []
    for who in ("q", "(q + 0)"):
        g = rulelang.loads(src.replace("WHO", who)).new_game(2, seed=1)
        seats = []
        with pytest.raises(rulelang.GameError) as err:
            for pick in ("b", "a", "a"):
                seats.append(g.current_player)
                g.apply(pick)
        state = json.loads(g.to_json())
        outcomes.append((seats, state["data"]["got"], str(err.value).split(": ", 1)[1]))
    assert outcomes[0][0] == [1, 0] and outcomes[0][1] == [[1, "b"], [0, "a"]]
    assert outcomes[0][2].startswith("choose by 5, which is not a player"), outcomes[0][2]
    assert outcomes[0] == outcomes[1]

"""General language growth asked for by the Vega and Mars issues: placeholder marks on whole rules,
`draw ... into`, `shuffle B into A`, the scenario runner's written-order rule, and `flatten`."""
from interpreter.scenarios import run_path


DEAL = '''game "D" { players 2 }
var pile: deck[int] = [1, 2, 3, 4]
per player var hand: list[int] = []
var marker: int = 0
action play_card(c in hand[me]) { effect { remove c from hand[me] } }
setup { shuffle pile  for p in players { let c = draw one from pile  add c to hand[p] } }
flow { loop { for p in players { turn p { offer [play_card] to p } } } }
ending "empty hands" when all(players, p => count(hand[p]) == 0)
'''


def _results(tmp_path, text):
    p = tmp_path / "s.rules"
    p.write_text(text)
    return {r.name: r for r in run_path(str(p))}


def test_a_scenario_opening_with_when_chance_forces_setup_even_with_a_later_given(tmp_path):
    """The first step in written order decides: `when { chance ... }` first, `given` afterwards."""
    res = _results(tmp_path, DEAL + '''scenario "forced deal, then a given" {
  when { chance "3"  chance "2" }
  given { marker = 1 }
  then { expect hand == [[3], [2]]  expect marker == 1 }
}
''')
    r = res["forced deal, then a given"]
    assert r.passed, r.message


def test_a_scenario_opening_with_a_given_settles_setup_even_if_a_later_when_forces_chance(tmp_path):
    """A first `given` that is not a chance step describes the position after setup's draws."""
    res = _results(tmp_path, DEAL + '''scenario "given first" {
  given { hand[0] = [4] }
  when { play "play_card(4)" }
  then { expect count(hand[0]) == 0  expect count(hand[1]) == 1 }
}
''')
    r = res["given first"]
    assert r.passed, r.message


# ---------------------------------------------------------------- placeholder rules

MARKED = '''game "P" { players 2 }
var n: int = 0
@rule "X-1"
procedure bump(k: int) placeholder "the rulebook names it without saying what it does" { n += k }
phase grow placeholder { bump(1) }
function twice(x: int): int placeholder "a guess" = 2 * x
action up placeholder "an invented action" { effect { n += twice(1) } }
action pick(k in [1, 2]) placeholder "picked" { require k > 0  effect { n += k } }
flow { loop { turn 0 { grow()  offer [up, pick] to 0 } } }
ending "twenty" when n >= 20
'''


def _unmarked(text):
    import re
    return re.sub(r' placeholder( "[^"]*")?', "", text)


def test_placeholder_rules_are_listed_with_kind_reason_and_position():
    import rulelang
    rs = rulelang.loads(MARKED, name="m.rules")
    got = [(p.path, p.line, p.column, p.what) for p in rs.placeholders]
    assert got == [
        ("m.rules", 4, 1, "procedure bump (the rulebook names it without saying what it does)"),
        ("m.rules", 5, 1, "phase grow (invented rule)"),
        ("m.rules", 6, 1, "function twice (a guess)"),
        ("m.rules", 7, 1, "action up (an invented action)"),
        ("m.rules", 8, 1, "action pick (picked)"),
    ]


def test_a_placeholder_mark_does_not_change_how_the_game_plays():
    import rulelang
    marked = rulelang.loads(MARKED)
    plain = rulelang.loads(_unmarked(MARKED))
    assert plain.placeholders == []
    games = []
    for rs in (marked, plain):
        g = rs.new_game(2, seed=5)
        for a in ("up", "pick(2)", "up", "pick(1)"):
            g.apply(a)
        games.append(g.to_json())
    assert games[0] == games[1]
    g = marked.new_game(2, seed=5)
    for a in ("up", "pick(2)", "up", "pick(1)"):
        g.apply(a)
    assert g.view(None)["vars"]["n"] == 5 + 2 + 2 + 2 + 1  # grow() adds one before each offer (the fifth is pending)


def test_check_placeholders_lists_placeholder_rules(tmp_path):
    import json
    from click.testing import CliRunner
    from rulelang.cli import cli
    p = tmp_path / "m.rules"
    p.write_text(MARKED)
    r = CliRunner().invoke(cli, ["check", "--placeholders", str(p)])
    assert r.exit_code == 0, r.output
    assert f"{p}:4:1: placeholder: procedure bump (the rulebook names it without saying what it does)" in r.output
    assert f"{p}:5:1: placeholder: phase grow (invented rule)" in r.output
    assert "5 placeholders" in r.output
    r = CliRunner().invoke(cli, ["check", "--json", "--placeholders", str(p)])
    items = json.loads(r.output)
    assert [i["line"] for i in items if i["code"] == "placeholder"] == [4, 5, 6, 7, 8]


def test_a_placeholder_rule_without_a_citation_is_warned_about():
    """An invented rule stands only for a mechanic the rulebook names: W308 when it cites no section."""
    import rulelang
    rs = rulelang.loads(MARKED, name="m.rules")
    w308 = sorted((w.line, w.message) for w in rs.warnings if w.code == "W308")
    assert [line for line, _ in w308] == [5, 6, 7, 8]  # bump (line 4) cites X-1
    assert "placeholder phase 'grow' cites no rule" in w308[0][1]
    cited = MARKED.replace("phase grow", '@rule "X-2"\nphase grow').replace(
        "action pick(k in [1, 2]) placeholder \"picked\" { require",
        "action pick(k in [1, 2]) placeholder \"picked\" { @rule \"X-3\" require")
    rs = rulelang.loads(cited, name="m.rules")
    assert sorted(w.message.split("'")[1] for w in rs.warnings if w.code == "W308") == ["twice", "up"]


def test_a_placeholder_mark_in_the_wrong_place_says_where_it_belongs():
    import rulelang
    from rulelang.diagnostics import RuleError
    try:
        rulelang.loads('game "P" { players 2 }\nplaceholder "x"\nprocedure p() { }\nflow { }\n', name="w.rules")
    except RuleError as e:
        text = e.render()
    else:
        raise AssertionError("a mark before 'procedure' must not load")
    assert "w.rules:2:1: error[E004]: unexpected 'placeholder'" in text
    assert 'procedure p(x) placeholder "why" { ... }' in text


# ---------------------------------------------------------------- draw ... into

def _load(text):
    import rulelang
    return rulelang.loads(text, name="t.rules")


def _vars(g):
    return g.view(None)["vars"]


PILES = '''game "D" { players 2 }
var pile: deck[int] = [1, 2, 3, 4, 5, 6]
per player var hand: list[int] = [] visible to owner
var table_: set[int]
var stack: deck[int]
var sack: bag[int]
var done: bool = false
action stop { effect { done = true } }
flow { turn 0 { offer [stop] to 0 } }
ending "stopped" when done
'''


def _two_step(one_step):
    """The documented equivalent: `let` the draw, then add each item."""
    import re
    def rep(m):
        count, src, dst = m.group(1), m.group(2), m.group(3)
        if count == "one":
            return f"let d_ = draw 1 from {src}  for x_ in d_ {{ add x_ to {dst} }}"
        return f"let d_ = draw {count} from {src}  for x_ in d_ {{ add x_ to {dst} }}"
    return re.sub(r"draw (\S+) from (\S+) into (\S+)", rep, one_step)


DEALS = [
    "draw 2 from pile into hand[0]  draw one from pile into hand[1]",
    "shuffle pile  draw 2 from pile into hand[0]  draw 3 from pile into hand[1]",
    "shuffle pile  draw 2 from pile into table_  draw one from pile into stack  draw 2 from pile into sack",
    "shuffle pile  draw 3 from pile into stack  draw 2 from stack into hand[1]",
]


def test_draw_into_puts_the_drawn_items_into_the_target():
    g = _load(PILES.replace("flow {", "setup { draw 2 from pile into hand[0]  draw one from pile into table_ }\nflow {")) \
        .new_game(2, seed=0)
    v = _vars(g)
    assert v["hand"] == [[1, 2], []]  # an unshuffled deck gives its top items, in order
    assert v["table_"] == [3]
    assert v["pile"] == {"known": [4, 5, 6], "hidden": 0, "shuffled": []}


def test_draw_into_plays_exactly_like_let_draw_then_add():
    """Same seeds give the same game: chance, order and what lands where."""
    for deal in DEALS:
        one = _load(PILES.replace("flow {", "setup { " + deal + " }\nflow {"))
        two = _load(PILES.replace("flow {", "setup { " + _two_step(deal) + " }\nflow {"))
        for seed in range(6):
            a, b = one.new_game(2, seed=seed), two.new_game(2, seed=seed)
            assert _vars(a) == _vars(b), (deal, seed)
            assert a.view(0) == b.view(0) and a.view(1) == b.view(1), (deal, seed)


def test_draw_into_offers_the_same_chance_decisions_as_the_two_step_form():
    deal = "shuffle pile  draw 2 from pile into hand[0]  draw one from pile into table_"
    one = _load(PILES.replace("flow {", "setup { " + deal + " }\nflow {"))
    two = _load(PILES.replace("flow {", "setup { " + _two_step(deal) + " }\nflow {"))
    a, b = one.new_game(2, seed=0, chance="explicit"), two.new_game(2, seed=0, chance="explicit")
    for pick in ("4", "2", "6"):
        assert a.is_chance() and b.is_chance()
        assert [(x.id, p) for x, p in a.chance_outcomes()] == [(x.id, p) for x, p in b.chance_outcomes()]
        a.apply(pick)
        b.apply(pick)
    assert not a.is_chance()
    assert _vars(a)["hand"] == [[4, 2], []] and _vars(a)["table_"] == [6]
    assert _vars(a) == _vars(b)


def test_draw_one_from_an_empty_pile_into_a_list_adds_nothing():
    g = _load(PILES.replace("flow {", "setup { pile = []  draw one from pile into hand[0]  "
                                      "draw 3 from pile into hand[1] }\nflow {")).new_game(2, seed=0)
    assert _vars(g)["hand"] == [[], []]


def test_draw_into_a_revealed_place_forgets_what_was_known_of_it():
    rules = '''game "K" { players 2 }
var pile: deck[int] = [7, 8, 9]
var shown: list[int] = [1] visible to known
var done: bool = false
action look { effect { reveal shown to 1 } }
action deal { effect { draw one from pile into shown } }
flow { loop { turn 0 { offer [look, deal] to 0 } } }
ending "never" when false
'''
    g = _load(rules).new_game(2, seed=0)
    assert g.view(1)["vars"]["shown"] == {"hidden": 1}
    g.apply("look")
    assert g.view(1)["vars"]["shown"] == [1]
    g.apply("deal")
    assert g.view(1)["vars"]["shown"] == {"hidden": 2}
    assert _vars(g)["shown"] == [1, 7]


def test_draw_into_wrong_targets_are_positioned_errors():
    import pytest
    from rulelang.diagnostics import RuleError
    base = '''game "E" { players 2 }
var pile: deck[int] = [1, 2]
var n: int
var names: list[str]
setup { BODY }
flow { }
'''
    for body, code, col in [("draw 2 from pile into n", "E315", 31), ("draw one from pile into names", "E317", 33),
                            ("draw one from n into names", "E315", 23)]:
        with pytest.raises(RuleError) as e:
            _load(base.replace("BODY", body))
        text = e.value.render()
        assert f"t.rules:5:{col}: error[{code}]" in text, (body, text)
    with pytest.raises(RuleError) as e:
        _load(base.replace("setup { BODY }", "setup { }") + 'action a { effect { } }\n'
              'scenario "s" { given { draw one from pile into names }  then { expect true } }\n')
    assert "error[E414]: 'draw' runs inside the game" in e.value.render()


# ---------------------------------------------------------------- shuffle B into A

REFILL = '''game "R" { players 2 }
var supply: deck[int] = [1, 2]
var discard: list[int] = [5, 6, 7]
var done: bool = false
action stop { effect { done = true } }
flow { turn 0 { offer [stop] to 0 } }
ending "stopped" when done
'''


def test_shuffle_into_moves_every_item_and_shuffles_the_whole_pile():
    g = _load(REFILL.replace("flow {", "setup { shuffle discard into supply }\nflow {")).new_game(2, seed=0)
    v = _vars(g)
    assert v["discard"] == []
    assert v["supply"] == {"known": [], "hidden": 5, "shuffled": [1, 2, 5, 6, 7]}


def test_shuffle_into_is_the_three_line_refill():
    """`shuffle discard into supply` when the supply is empty == supply = discard, shuffle, discard = []."""
    one = _load(REFILL.replace("flow {", "setup { supply = []  shuffle discard into supply  "
                                         "let a = draw 2 from supply  discard = a }\nflow {"))
    three = _load(REFILL.replace("flow {", "setup { supply = []  supply = discard  shuffle supply  discard = []  "
                                           "let a = draw 2 from supply  discard = a }\nflow {"))
    for seed in range(8):
        assert one.new_game(2, seed=seed).to_json() == three.new_game(2, seed=seed).to_json()


def test_shuffle_into_takes_from_sets_decks_and_bags_and_empties_them():
    rules = '''game "S" { players 2 }
var pile: bag[int] = [1]
var a: set[int] = {2, 3}
var b: deck[int] = [4]
var c: bag[int] = [5]
per player var h: list[int]
var done: bool = false
action stop { effect { done = true } }
setup { add 6 to h[0]  add 7 to h[1]  shuffle a into pile  shuffle b into pile  shuffle c into pile  shuffle h[1] into pile  shuffle pile into pile }
flow { turn 0 { offer [stop] to 0 } }
ending "stopped" when done
'''
    v = _vars(_load(rules).new_game(2, seed=0))
    assert v["a"] == [] and v["h"] == [[6], []]
    assert v["b"] == {"known": [], "hidden": 0, "shuffled": []} and v["c"] == v["b"]
    assert sorted(v["pile"]["shuffled"]) == [1, 2, 3, 4, 5, 7]  # shuffling a pile into itself keeps it whole


def test_shuffle_into_errors_are_positioned():
    import pytest
    from rulelang.diagnostics import RuleError
    for body, code, col in [("shuffle supply into discard", "E315", 29), ("shuffle m into supply", "E315", 17),
                            ("shuffle names into supply", "E317", 17)]:
        with pytest.raises(RuleError) as e:
            _load(REFILL.replace("flow {", "var m: map[int, int]\nvar names: list[str]\nsetup { " + body + " }\nflow {"))
        assert f"t.rules:8:{col}: error[{code}]" in e.value.render(), (body, e.value.render())


def test_a_game_saved_in_the_middle_of_a_draw_into_loads_and_goes_on_the_same():
    rules = PILES.replace("flow {", "setup { shuffle pile  draw 3 from pile into hand[1] }\nflow {")
    rs = _load(rules)
    g = rs.new_game(2, seed=3, chance="explicit")
    g.apply("5")
    saved = g.to_json()
    h = rs.load_game(saved)
    assert h.to_json() == saved
    for x in ("1", "6"):
        g.apply(x)
        h.apply(x)
    assert g.to_json() == h.to_json()
    assert _vars(h)["hand"] == [[], [5, 1, 6]]


# ---------------------------------------------------------------- generated: one statement == its long form

from hypothesis import given, settings, strategies as st  # noqa: E402

_PLACES = ["pile", "hand[0]", "hand[1]", "table_", "stack", "sack"]
_PILES = ["pile", "stack", "sack"]
_DRAWN_FROM = ["pile", "stack", "sack", "hand[0]", "hand[1]"]


def _long_form(op):
    kind, a, b, n = op
    if kind == "draw":
        return f"let d_{n} = draw {n} from {a}  for x_ in d_{n} {{ add x_ to {b} }}"
    return f"for x_ in {a} {{ add x_ to {b} }}  {a} = []  shuffle {b}"


def _short_form(op):
    kind, a, b, n = op
    return f"draw {n} from {a} into {b}" if kind == "draw" else f"shuffle {a} into {b}"


_ops = st.one_of(
    st.tuples(st.just("draw"), st.sampled_from(_DRAWN_FROM), st.sampled_from(_PLACES), st.integers(0, 4)),
    st.tuples(st.just("shuffle"), st.sampled_from(_PLACES), st.sampled_from(_PILES), st.just(0))
    .filter(lambda o: o[1] != o[2]),
)


@settings(deadline=None, max_examples=40)
@given(ops=st.lists(_ops, min_size=1, max_size=6), seed=st.integers(0, 2 ** 32))
def test_generated_sequences_play_like_their_long_forms(ops, seed):
    """Any sequence of `draw ... into` and `shuffle ... into` gives the same state, views and chance
    as the same sequence written with let/for/add/shuffle; no item is lost or made."""
    short = "  ".join(_short_form(o) for o in ops)
    long_ = "  ".join(_long_form(o) for o in ops)
    a = _load(PILES.replace("flow {", "setup { " + short + " }\nflow {")).new_game(2, seed=seed)
    b = _load(PILES.replace("flow {", "setup { " + long_ + " }\nflow {")).new_game(2, seed=seed)
    assert _vars(a) == _vars(b)
    assert a.view(0) == b.view(0) and a.view(1) == b.view(1)
    v = _vars(a)
    total = (len(v["hand"][0]) + len(v["hand"][1]) + len(v["table_"])
             + sum(len(v[p]["known"]) + v[p]["hidden"] for p in ("pile", "stack", "sack")))
    assert total == 6  # the six distinct items are all somewhere, once


def test_a_draw_statement_without_into_or_a_let_draw_with_into_gets_one_error_with_a_hint():
    import pytest
    from rulelang.diagnostics import RuleError
    base = 'game "D" { players 2 }\nvar pile: deck[int] = [1, 2]\nvar h: list[int]\nsetup {\n  BODY\n}\nflow { }\n'
    for body, where, hint in [
        ("draw 2 from pile to h", "t.rules:5:20", "draw N from PILE into PLACE"),
        ("draw 2 from pile", "t.rules:6:1", "let x = draw N from PILE"),
        ("let x = draw 2 from pile into h", "t.rules:5:28", "statements of their own"),
    ]:
        with pytest.raises(RuleError) as e:
            _load(base.replace("BODY", body))
        diags = e.value.diagnostics
        assert len(diags) == 1 and diags[0].code == "E004", e.value.render()
        assert e.value.render().startswith(where) and hint in diags[0].hint, e.value.render()


# ------------------------------------------------------------------------------------ flatten (Mars)
FLAT = '''game "F" { players 2 }
board b = hex_grid(2)
var pile: deck[int] = [5, 6]
var got: list[int]
var around: list[node]
flow {
  got = flatten([[3, 1], [], to_list({9, 7}), to_list(pile)]) + flatten([{2, 1}])
  around = to_list(to_set(flatten([[n] + neighbors(b, n) for n in [(0, 0), (2, 0)]])))
  end_game
}
'''


def test_flatten_joins_inner_lists_in_order_with_sets_sorted():
    import rulelang
    for backend in ("generated", "closures"):
        g = rulelang.loads(FLAT).with_backend(backend).new_game(2, seed=0)
        v = g.view(None)["vars"]
        assert v["got"] == [3, 1, 7, 9, 5, 6, 1, 2], backend
        # the hexes within 1 of (0, 0) or of (2, 0) on a radius-2 hex field: 7 + 4 (the edge cuts 3), sharing (1, 0) and its two neighbours in common
        assert len(v["around"]) == len(set(map(tuple, v["around"])))
        assert [0, 0] in v["around"] and [2, 0] in v["around"] and [1, 0] in v["around"]


def test_flatten_of_something_not_a_list_of_lists_is_a_one_line_rule_error():
    import pytest
    import rulelang
    from rulelang import GameError
    text = '''game "F" { players 2 }
var n: int
flow { n = count(flatten([1, 2]))  end_game }
'''
    with pytest.raises(GameError) as e:
        rulelang.loads(text).new_game(2, seed=0)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("<string>:3:") and "flatten() needs a list of lists" in msg

"""General language growth asked for by the Vega issue: placeholder marks on whole rules,
`draw ... into`, `shuffle B into A`, and the scenario runner's written-order rule."""
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

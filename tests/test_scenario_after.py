"""A scenario that continues another: `scenario "B" after "A" { ... }` (docs/language.md, "Scenarios").

B starts where A ends: A's players, seed, chance mode and variants, A's blocks first (its `then` checks
included), then B's; A's `let` locals are known in B. B may not set its own players, seed, chance mode or
variants (E416); an unknown name (E417) and a cycle (E418) are errors. The inline expectations of
tests/data/diagnostics/scenario_after.rules cover the positions and wording of those errors.
"""
from __future__ import annotations

import pytest

import rulelang
from interpreter.scenarios import Driver, run_file
from rulelang import fmt
from rulelang.diagnostics import RuleError
from rulelang.parser import parse
from rulelang.symbols import analyse

HEADER = '''game "T" { players 2..4 }
var moves: int = 0
var rolled: int = 0
const step_size = 1
action step { effect { moves += step_size } }
flow { loop { for p in players { turn p { offer [step] to p } } } }
ending "done" when moves > 20
variant long_steps { override const step_size = 5 }
'''


def run(tmp_path, scenarios, name="t.rules"):
    path = tmp_path / name
    path.write_text(HEADER + scenarios, encoding="utf-8")
    return {r.name: r for r in run_file(str(path))}


def errors(text):
    with pytest.raises(RuleError) as raised:
        rulelang.loads(HEADER + text, name="t.rules")
    return [d for d in raised.value.diagnostics if d.severity == "error"]


def test_the_continuing_scenario_sees_the_state_and_the_locals_of_the_one_it_continues(tmp_path):
    got = run(tmp_path, '''
scenario "opening" {
  when { play "step"  let seen = moves }
  then { expect moves == 1 }
}
scenario "a second step" after "opening" {
  when { play "step" }
  then {
    expect moves == 2 "the opening's step and this one"
    expect seen == 1 "the opening's local"
    expect decider == 0 "two players: the first player again"
  }
}
scenario "the state is the opening's end, not a new game" after "opening" {
  then { expect moves == 0 }
}
''')
    assert got["opening"].passed and got["a second step"].passed, got["a second step"].message
    wrong = got["the state is the opening's end, not a new game"]
    assert not wrong.passed and "left side is 1, right side is 0" in wrong.message


def test_each_scenario_of_a_chain_is_reported_on_its_own_with_its_own_line_and_citations(tmp_path):
    got = run(tmp_path, '''
@rule "T-1"
scenario "one" {
  when { play "step" }
  then { expect moves == 1 }
}
@rule "T-2"
scenario "two" after "one" {
  when { play "step" }
  then { expect moves == 2 }
}
@rule "T-3"
scenario "three" after "two" {
  when { play "step" }
  then { expect moves == 3 }
}
''')
    assert list(got) == ["one", "two", "three"]
    assert all(r.passed for r in got.values()), [r.message for r in got.values()]
    lines = HEADER.count("\n")
    assert [(r.line - lines, r.cites) for r in got.values()] == [(3, ("T-1",)), (8, ("T-2",)), (13, ("T-3",))]


def test_a_failure_of_the_continued_scenario_fails_the_continuing_one_reported_at_its_line(tmp_path):
    got = run(tmp_path, '''
scenario "opening" {
  when { play "step" }
  then { expect moves == 5 "the opening's check" }
}
scenario "later" after "opening" {
  when { play "step" }
  then { expect moves == 2 }
}
''')
    line_of_check = HEADER.count("\n") + 4
    assert not got["opening"].passed
    later = got["later"]
    assert not later.passed
    assert later.failures == [f"{tmp_path / 't.rules'}:{line_of_check}: the opening's check "
                              "(left side is 1, right side is 5)"]


def test_a_step_the_continued_scenario_cannot_take_stops_the_continuing_one(tmp_path):
    got = run(tmp_path, '''
scenario "opening" {
  when { play "no such decision" }
  then { expect true }
}
scenario "later" after "opening" {
  then { expect moves == 0 }
}
''')
    assert not got["later"].passed
    assert f":{HEADER.count(chr(10)) + 3}:" in got["later"].message  # the opening's `play` line


def test_players_and_variants_come_from_the_first_scenario_of_the_chain(tmp_path):
    got = run(tmp_path, '''
scenario "three players, long steps" {
  players 3
  with variant long_steps
  when { play "step" }
  then { expect moves == 5 }
}
scenario "the second player" after "three players, long steps" {
  when { play "step"  play "step" }
  then {
    expect count(players) == 3
    expect moves == 15 "the variant's steps"
    expect decider == 0 "three players: back to the first"
  }
}
scenario "the third step" after "the second player" {
  then { expect moves == 15  expect count(players) == 3 }
}
''')
    assert all(r.passed for r in got.values()), [r.message for r in got.values()]


def test_the_seed_and_chance_mode_come_from_the_first_scenario_of_the_chain(tmp_path):
    setup = '''setup { let r = roll one of 1..1000  rolled = r }
'''
    # what the seeded sampler of a scenario with seed 17 draws during setup (docs: the sampler is seeded
    # with the scenario's seed and draws setup's outcomes when no `chance` step forces them)
    rs = rulelang.loads(HEADER + setup, name="t.rules")
    game = rs.new_game(2, seed=17, chance="explicit")
    game.scenario = Driver(17)
    game.scenario.settle_chance(game)
    with_seed_17 = game.data["rolled"]
    got = run(tmp_path, setup + f'''
scenario "seeded" {{
  seed 17
  then {{ expect rolled == {with_seed_17} }}
}}
scenario "continued" after "seeded" {{
  then {{ expect rolled == {with_seed_17} "the seed of the first scenario" }}
}}
scenario "forced" {{
  given {{ chance 123 }}
  then {{ expect rolled == 123 }}
}}
scenario "continued after forced" after "forced" {{
  when {{ play "step" }}
  then {{ expect rolled == 123  expect moves == 1 }}
}}
''')
    assert all(r.passed for r in got.values()), [r.message for r in got.values()]


@pytest.mark.parametrize("setting, code_line", [("players 3", "players 3"), ("seed 2", "seed 2"),
                                                ("chance sampled", "chance sampled"),
                                                ("with variant long_steps", "with variant long_steps")])
def test_a_continuing_scenario_cannot_set_what_comes_from_the_one_it_continues(setting, code_line):
    got = errors(f'''
scenario "A" {{ when {{ play "step" }} then {{ expect moves == 1 }} }}
scenario "B" after "A" {{
  {setting}
  then {{ expect moves == 1 }}
}}
''')
    assert [(d.code, d.line, d.source_line.strip()) for d in got] == [("E416", HEADER.count("\n") + 4, code_line)]
    assert '"A"' in got[0].hint


def test_an_unknown_name_is_an_error_at_the_name_with_a_suggestion():
    got = errors('''
scenario "the opening" { then { expect moves == 0 } }
scenario "B" after "the openin" { then { expect moves == 0 } }
''')
    assert [d.code for d in got] == ["E417"]
    assert got[0].line == HEADER.count("\n") + 3 and got[0].column == len('scenario "B" after ') + 1
    assert "the opening" in got[0].hint


def test_a_cycle_is_an_error_naming_it_and_a_scenario_leading_into_it_is_not_reported_again():
    got = errors('''
scenario "A" after "C" { then { expect true } }
scenario "B" after "A" { then { expect true } }
scenario "C" after "B" { then { expect true } }
scenario "D" after "B" { then { expect true } }
''')
    assert sorted((d.code, d.message) for d in got) == [
        ("E418", 'scenarios continue each other in a cycle: "A" after "C" after "B" after "A"'),
        ("E418", 'scenarios continue each other in a cycle: "B" after "A" after "C" after "B"'),
        ("E418", 'scenarios continue each other in a cycle: "C" after "B" after "A" after "C"')]


def test_long_chains_and_long_cycles_are_diagnostics_not_a_traceback():
    count = 3000
    chain = 'scenario "s0" { when { play "step" } then { expect true } }\n' + "".join(
        f'scenario "s{i}" after "s{i - 1}" {{ then {{ expect true }} }}\n' for i in range(1, count))
    got = errors(chain)  # checked in linear time (each scenario once, no recursion); one error, at the 101st
    assert [(d.code, d.line) for d in got] == [("E419", 101 + HEADER.count("\n"))], got
    assert 'scenario "s100" continues a chain of 100 scenarios' in got[0].message
    rulelang.loads(HEADER + "".join(chain.splitlines(keepends=True)[:100]), name="t.rules")  # 100: loads
    cycle = "".join(f'scenario "s{i}" after "s{(i - 1) % count}" {{ then {{ expect true }} }}\n'
                    for i in range(count))
    got = errors(cycle)
    assert {d.code for d in got} == {"E418"} and len(got) == count
    # each message names a few scenarios of the cycle, not all 3000 (9 million names in all before)
    assert max(len(d.message) for d in got) < 300, got[0].message
    first = next(d for d in got if d.message.startswith('scenarios continue each other in a cycle: "s0" after'))
    assert first.message.endswith(f'after ... ({count - 6} more) after "s0"'), first.message


def test_a_short_cycle_is_named_in_full_from_each_of_its_scenarios():
    got = errors('scenario "a" after "c" { then { expect true } }\n'
                 'scenario "b" after "a" { then { expect true } }\n'
                 'scenario "c" after "b" { then { expect true } }\n'
                 'scenario "d" after "a" { then { expect true } }\n')  # continues the cycle, is not on it
    assert sorted(d.message for d in got) == sorted(
        f"scenarios continue each other in a cycle: {names}" for names in
        ('"a" after "c" after "b" after "a"', '"b" after "a" after "c" after "b"', '"c" after "b" after "a" after "c"'))


def test_a_local_of_the_continued_scenario_is_not_known_in_an_unrelated_one():
    got = errors('''
scenario "A" { when { let seen = moves } then { expect seen == 0 } }
scenario "B" { then { expect seen == 0 } }
''')
    assert [d.code for d in got] == ["E201"]


def test_the_continuing_scenario_may_come_first_in_the_file(tmp_path):
    got = run(tmp_path, '''
scenario "later" after "opening" {
  then { expect moves == before_step + 1 }
}
scenario "opening" {
  when { play "step"  let before_step = 0 }
  then { expect moves == 1 }
}
''')
    assert all(r.passed for r in got.values()), [r.message for r in got.values()]


def test_a_house_rule_file_may_continue_a_scenario_of_the_file_it_extends(tmp_path):
    (tmp_path / "base.rules").write_text(HEADER + '''
scenario "opening" {
  players 3
  when { play "step" }
  then { expect moves >= 1 }
}
''', encoding="utf-8")
    (tmp_path / "house.rules").write_text('''extends "base.rules"
override const step_size = 2
scenario "house: the next step" after "opening" {
  when { play "step" }
  then { expect moves == 4  expect count(players) == 3 }
}
''', encoding="utf-8")
    got = {r.name: r for r in run_file(str(tmp_path / "house.rules"))}
    # the house rule's steps are 2, in the base file's scenario too: 2 + 2 after the two steps
    assert got["house: the next step"].passed, got["house: the next step"].message
    assert got["opening"].passed


MESSY = '''game "T" { players 2 }
var moves: int = 0
action step { effect { moves += 1 } }
flow { loop { for p in players { turn p { offer [step] to p } } } }
ending "done" when moves > 20
scenario "A"{ when { play "step" } then { expect moves == 1 } }
scenario   "B"   after    "A"{
  then { expect moves == 1 }
}
'''


def test_fmt_writes_after_on_the_scenario_line_and_keeps_the_meaning():
    out = fmt.format_text(MESSY, "t.rules")
    assert 'scenario "B" after "A" {' in out.split("\n")
    assert fmt.format_text(out, "t.rules") == out
    before, after = parse(MESSY, "t.rules")[0], parse(out, "t.rules")[0]
    assert [(d.name, d.after) for d in before.items[-2:]] == [(d.name, d.after) for d in after.items[-2:]] \
        == [("A", None), ("B", "A")]


def test_a_name_after_or_a_function_named_after_still_works_where_no_scenario_name_is_expected(tmp_path):
    got = run(tmp_path, '''
function after(n: int): int = n + 1
scenario "A" { when { let after_all = after(moves) } then { expect after_all == 1 } }
scenario "B" after "A" { then { expect after(after_all) == 2 } }
''')
    assert all(r.passed for r in got.values()), [r.message for r in got.values()]


def test_the_index_links_the_name_to_the_scenario_and_the_locals_across(tmp_path):
    text = HEADER + '''
scenario "opening" {
  when { play "step"  let seen = moves }
  then { expect seen == 0 }
}
scenario "later" after "opening" {
  then { expect seen == 0 }
}
'''
    path = tmp_path / "t.rules"
    path.write_text(text, encoding="utf-8")
    result = analyse(str(path), text)
    assert [d for d in result.diagnostics if d.severity == "error"] == []
    index = result.index
    lines = text.split("\n")
    after_line = next(i for i, line in enumerate(lines) if line.startswith('scenario "later"')) + 1
    name = index.at(str(path), after_line, lines[after_line - 1].index('"opening"') + 2)
    assert name is not None and name.symbol.kind == "scenario" and name.symbol.name == "opening"
    assert name.symbol.span.line == after_line - 4  # go to definition: the scenario "opening"
    later = next(symbol for symbol in index.symbols if symbol.kind == "scenario" and symbol.name == "later")
    assert later.detail == 'scenario "later" after "opening"'  # what hover and the outline show
    use_line = after_line + 1
    use = index.at(str(path), use_line, lines[use_line - 1].index("seen") + 1)
    assert use is not None and use.symbol.kind == "local"
    assert use.symbol.span.line == after_line - 3  # the `let` of the opening


def test_the_invariant_checks_carry_over_as_in_one_game(tmp_path):
    """Invariants are not checked after a `given` that changes the state directly (docs/language.md,
    "Scenarios"): when the continued scenario has one, the continuing one is not checked either; when it
    has none, a step of the continuing one that breaks an invariant fails it."""
    path = tmp_path / "inv.rules"
    path.write_text('''game "I" { players 2 }
var moves: int = 0
action step { effect { moves += 1 } }
flow { loop { for p in players { turn p { offer [step] to p } } } }
ending "done" when moves > 20
invariant "at most three moves": moves <= 3
scenario "set by hand" { given { moves = 3 }  then { expect moves == 3 } }
scenario "past the bound after a hand-set position" after "set by hand" {
  when { play "step" }
  then { expect moves == 4 }
}
scenario "played" { when { play "step"  play "step"  play "step" }  then { expect moves == 3 } }
scenario "past the bound after played steps" after "played" {
  when { play "step" }
  then { expect moves == 4 }
}
''', encoding="utf-8")
    got = {r.name: r for r in run_file(str(path))}
    assert got["past the bound after a hand-set position"].passed, got["past the bound after a hand-set position"].message
    broken = got["past the bound after played steps"]
    assert not broken.passed and 'invariant "at most three moves"' in broken.message
    assert got["played"].passed and got["set by hand"].passed

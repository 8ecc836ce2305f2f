"""Rulebook coverage (interpreter/coverage.py, issue 10): exact counts for scripted games of small rule
files, and instrumented rulesets that play exactly like the plain ones."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

import rulelang
from interpreter.coverage import Coverage

HERE = os.path.dirname(os.path.abspath(__file__))
GAMES = os.path.join(os.path.dirname(HERE), "games")

# Scripted: P0 takes `step` five times; "reached five" then ends the game at the next offer.
RULES = '''
game "Cov" {
  players 2
  rulebook "book.md"
}

var n: int = 0
var flag: bool = false
var spent: int = 0

@rule "A-12"
function twice(x: int): int = x * 2

@rule "A-1"
action step {
  effect {
    n = n + 1
    spent = spent + twice(0)
    @rule "A-10"
    if n > 100 {
      @rule "A-2"
      flag = true
    }
    let k = 0
    @rule "A-11"
    while k < 3 {
      k = k + 1
    }
    let j = 0
    @rule "A-14"
    loop {
      while j < 2 {
        j = j + 1
      }
      break
    }
    @rule "A-13"
    spent = spent + 0
    @rule "A-13"
    spent = spent + 0
    @rule "A-1"
    spent = spent + 0
  }
}

@rule "A-3"
action never {
  require n < 0
  effect { n = 0 }
}

action idle {
  @rule "A-4"
  require n < 3
  effect { n = n }
}

event boom(x: int)

@rule "A-5"
when boom(x) if x > 1000 then {
  n = n + 0
}

@rule "A-6"
when boom(x) then {
  flag = flag
}

@rule "A-7"
ending "reached five" when n >= 5

@rule "A-8"
ending "impossible" when n < 0

@rule "A-9"
procedure bump() {
  emit boom(n)
}

const bonus = 0

@rule "A-15"
variant extra "not in play in these tests" {
  @rule "A-16"
  override const bonus = 1
}

flow {
  loop {
    turn 0 {
      offer [step, never, idle] to 0
    }
    bump()
  }
}
'''

BOOK = "# Cov\n\n" + "".join(f"## [A-{i}] section {i}\n\ntext\n\n" for i in (1, 2, 3, 4, 5, 6, 7, 8, 9, 99, 10, 11, 12, 13, 14, 15, 16))


@pytest.fixture(scope="module")
def cov(tmp_path_factory):
    d = tmp_path_factory.mktemp("cov")
    (d / "book.md").write_text(BOOK, encoding="utf-8")
    (d / "cov.rules").write_text(RULES, encoding="utf-8")
    rs = rulelang.load(str(d / "cov.rules"))
    c = Coverage(rs)
    g = c.ruleset.new_game(2, seed=1)
    for _ in range(5):
        g.apply("step")
    assert g.is_over() and g.end_reason == "reached five"
    return c


def _rows(cov):
    return {r["section"]: r for r in cov.table()}


def test_sections_in_rulebook_order_with_uncited_ones(cov):
    order = [r["section"] for r in cov.table()]
    assert order == ["A-1", "A-2", "A-3", "A-4", "A-5", "A-6", "A-7", "A-8", "A-9", "A-99", "A-10", "A-11", "A-12",
                     "A-13", "A-14", "A-15", "A-16"]
    assert _rows(cov)["A-99"]["status"] == "not cited"


def test_sections_cited_only_in_a_variant_not_in_play(cov):
    rows = _rows(cov)
    assert rows["A-15"]["status"] == rows["A-16"]["status"] == "variant only"
    assert rows["A-16"]["cited_by"] == ["variant"]


def test_action_taken_exactly(cov):
    r = _rows(cov)["A-1"]
    # taken 5 times; the statement cited A-1 inside its own effect is not counted again
    assert (r["runs"], r["offered"], r["taken"]) == (5, 5, 5)
    assert r["status"] == "exercised"


def test_statement_in_an_if_never_taken(cov):
    rows = _rows(cov)
    assert rows["A-10"]["runs"] == 5  # the `if` itself starts each time
    assert rows["A-2"]["runs"] == 0 and rows["A-2"]["status"] == "never exercised"


def test_loop_counts_entries_not_rounds(cov):
    assert _rows(cov)["A-11"]["runs"] == 5
    # a `loop` whose first op is the head of a `while` inside it: still once per entry
    assert _rows(cov)["A-14"]["runs"] == 5


def test_statements_in_a_row_under_one_citation_count_once(cov):
    assert _rows(cov)["A-13"]["runs"] == 5


def test_function_calls_counted_though_the_optimiser_inlines_them(cov):
    assert _rows(cov)["A-12"]["runs"] == 5


def test_never_legal_and_legal_never_taken(cov):
    acts = {a["action"]: a for a in cov.actions()}
    assert (acts["never"]["offered"], acts["never"]["taken"], acts["never"]["status"]) == (0, 0, "never legal")
    assert (acts["idle"]["offered"], acts["idle"]["taken"]) == (3, 0)  # legal while n < 3: decisions 1 to 3
    assert acts["idle"]["status"] == "legal but never taken"
    assert (acts["step"]["offered"], acts["step"]["taken"], acts["step"]["status"]) == (5, 5, "taken")
    rows = _rows(cov)
    assert rows["A-3"]["status"] == "never exercised"
    # a require clause counts each time it is checked: the 5 offers
    assert rows["A-4"]["runs"] == 5


def test_triggers_fired_or_never(cov):
    trig = {t["sections"][0]: t for t in cov.triggers()}
    assert (trig["A-5"]["fired"], trig["A-5"]["status"]) == (0, "never fired")
    assert (trig["A-6"]["fired"], trig["A-6"]["status"]) == (5, "fired")
    rows = _rows(cov)
    assert rows["A-5"]["status"] == "never exercised" and rows["A-5"]["fired"] == 0
    assert rows["A-6"]["fired"] == 5 and rows["A-6"]["runs"] == 5
    assert rows["A-9"]["runs"] == 5  # the procedure that emits the event


def test_endings_reached_or_never(cov):
    ends = {e["ending"]: e for e in cov.endings()}
    assert ends["reached five"]["reached"] == 1 and ends["reached five"]["status"] == "reached"
    assert ends["impossible"]["reached"] == 0 and ends["impossible"]["status"] == "never reached"
    rows = _rows(cov)
    assert rows["A-7"]["reached"] == 1
    assert rows["A-8"]["status"] == "never exercised"


def test_counts_add_up_over_games(tmp_path):
    (tmp_path / "book.md").write_text(BOOK, encoding="utf-8")
    (tmp_path / "cov.rules").write_text(RULES, encoding="utf-8")
    c = Coverage(rulelang.load(str(tmp_path / "cov.rules")))
    for seed in range(3):
        g = c.ruleset.new_game(2, seed=seed)
        for _ in range(5):
            g.apply("step")
    assert c.games == 3
    assert _rows(c)["A-1"]["taken"] == 15
    assert {e["ending"]: e["reached"] for e in c.endings()}["reached five"] == 3


def test_plain_ruleset_does_not_count(tmp_path):
    (tmp_path / "book.md").write_text(BOOK, encoding="utf-8")
    (tmp_path / "cov.rules").write_text(RULES, encoding="utf-8")
    rs = rulelang.load(str(tmp_path / "cov.rules"))
    c = Coverage(rs)
    g = rs.new_game(2, seed=1)
    for _ in range(5):
        g.apply("step")
    assert g.is_over()
    assert rs.observer is None and rs.compile_hooks is None
    assert all(r["runs"] == 0 and r["taken"] == 0 for r in c.table())
    assert c.games == 0


def test_saves_load_into_the_instrumented_ruleset_without_counting(tmp_path):
    (tmp_path / "book.md").write_text(BOOK, encoding="utf-8")
    (tmp_path / "cov.rules").write_text(RULES, encoding="utf-8")
    rs = rulelang.load(str(tmp_path / "cov.rules"))
    c = Coverage(rs)
    g = rs.new_game(2, seed=1)
    g.apply("step")
    before = c.to_json()
    h = c.ruleset.load_game(g.to_json())
    assert h.to_json() == g.to_json()
    assert c.to_json() == before  # checking the save re-ran the pending offer on a copy: not counted
    h.apply("step")
    assert {a["action"]: a["taken"] for a in c.actions()}["step"] == 1


def test_places_show_the_cited_code_that_never_ran(cov):
    places = cov.places()
    never = {(p["kind"], tuple(p["sections"])) for p in places if p["runs"] == 0}
    assert never == {("statement", ("A-2",)), ("action", ("A-3",)), ("trigger", ("A-5",)), ("ending", ("A-8",))}
    lines = [p["line"] for p in places]
    assert lines == sorted(lines)
    assert {p["kind"] for p in places} >= {"action", "statement", "trigger", "ending", "procedure", "function",
                                           "require"}


def test_to_json_and_render(cov):
    data = json.loads(cov.to_json())
    assert set(data) == {"games", "sections", "actions", "triggers", "endings", "places"}
    assert data["games"] == 1
    from io import StringIO

    from rich.console import Console

    out = StringIO()
    cov.render(Console(file=out, width=120))
    text = out.getvalue()
    assert "never exercised" in text and "A-2" in text and "never reached" in text
    assert "cited code that never ran" in text


def _play_both(rs, cov, players, seed, max_steps=4000):
    a = rs.new_game(players, seed=seed)
    b = cov.ruleset.new_game(players, seed=seed)
    pick = random.Random(seed)
    steps = 0
    while not a.is_over() and steps < max_steps:
        if steps % 20 == 0:
            assert a.to_json() == b.to_json()
        assert [x.id for x in a.legal_actions()] == [x.id for x in b.legal_actions()]
        x = pick.choice(a.legal_actions())
        a.apply(x.id)
        b.apply(x.id)
        steps += 1
    assert a.to_json() == b.to_json()
    assert a.scores() == b.scores() and a.winners() == b.winners()


@pytest.mark.parametrize("name,players", [("station.rules", 2), ("station.rules", 4), ("vega.rules", 3),
                                          ("examples/tictactoe.rules", 2)])
def test_instrumented_plays_identically(name, players):
    rs = rulelang.load(os.path.join(GAMES, name))
    cov = Coverage(rs)
    for seed in (1, 2):
        _play_both(rs, cov, players, seed)
    assert cov.games == 2
    assert any(r["status"] == "exercised" for r in cov.table())


def test_cli_simulate_coverage(tmp_path):
    path = os.path.join(GAMES, "examples", "tictactoe.rules")
    r = subprocess.run([sys.executable, "-m", "rulelang", "simulate", path, "-n", "4", "--coverage", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["coverage"]["games"] == 4
    assert {row["section"] for row in data["coverage"]["sections"]} >= {"TTT-2", "TTT-5"}
    r = subprocess.run([sys.executable, "-m", "rulelang", "simulate", path, "-n", "4", "--coverage"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "rulebook coverage (4 games)" in r.stdout
    r = subprocess.run([sys.executable, "-m", "rulelang", "simulate", path, "-n", "4", "--coverage", "-w", "2"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


ENDLESS = '''
game "Endless" {
  players 2
}

var n: int = 0

@rule "E-1"
action spin {
  effect {
    @rule "E-2"
    loop {
      n = n + 1
      if n > 1000000000 { n = 0 }
    }
  }
}

flow {
  loop {
    offer [spin] to 0
  }
}
'''


def test_cli_coverage_of_an_endless_loop_stays_bounded(tmp_path):
    """The instrumented ruleset keeps the step budget: an endless loop is a game error, not a hang."""
    from tests.hostile.bounded import run_cli_bounded

    path = tmp_path / "endless.rules"
    path.write_text(ENDLESS, encoding="utf-8")
    out = run_cli_bounded(["simulate", str(path), "-n", "2", "--coverage", "--json"], seconds=120)
    assert not out.timed_out and not out.traceback and not out.out_of_memory, out.explain()
    assert out.returncode == 1, out.explain()
    data = json.loads(out.stdout)
    assert data["errors"] == 2 and "step budget" in data["error_examples"][0]["message"]
    rows = {r["section"]: r for r in data["coverage"]["sections"]}
    assert rows["E-1"]["taken"] == 2 and rows["E-2"]["runs"] == 2


COST_RULES = '''
game "Costs" {
  players 2
  rulebook "book.md"
}
per player var coins: int = 10
var bought: int
@rule "B-1"
action buy {
  @rule "B-2"
  cost coins[me]: 1
  effect { bought += 1 }
}
action splurge {
  @rule "B-3"
  cost coins[me]: 100
}
flow { loop { turn 0 { offer [buy, splurge] to 0 } } }
ending "three" when bought >= 3
'''


def test_a_citation_on_a_cost_clause_counts_each_time_the_cost_is_paid(tmp_path):
    (tmp_path / "book.md").write_text("# C\n\n" + "".join(f"## [B-{i}] s\n\nt\n\n" for i in (1, 2, 3)))
    (tmp_path / "c.rules").write_text(COST_RULES)
    c = Coverage(rulelang.load(str(tmp_path / "c.rules")))
    g = c.ruleset.new_game(2, seed=0)
    for _ in range(3):
        g.apply("buy")
    assert g.is_over()
    rows = _rows(c)
    assert rows["B-2"]["runs"] == 3 and rows["B-2"]["status"] == "exercised"
    assert rows["B-3"]["status"] == "never exercised"  # the splurge was never affordable, never paid

"""Invariants (`invariant "name": EXPR`) and `rulelang validate` (interpreter/validate.py).

The planted rule files are tests/consistency/dyn_*.rules: each writes what validate must find as a
comment on the line concerned, `# E: CODE message-part` (and, on a line `# validate: ARGS`, the
extra arguments to run it with). Every expectation must be found at its line, with its code, and
nothing else; the games and examples must validate clean.
"""
from __future__ import annotations

import json
import os
import re
import sys
import types

import pytest
from click.testing import CliRunner

import rulelang
from rulelang.cli import cli

try:
    from hostile.bounded import run_cli_bounded
except ImportError:  # tests/ is a package
    from tests.hostile.bounded import run_cli_bounded

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONSISTENCY = os.path.join(ROOT, "tests", "consistency")
DYN = sorted(f for f in os.listdir(CONSISTENCY) if f.startswith("dyn_") and f.endswith(".rules"))
EXPECT = re.compile(r"#\s*E:\s*(?P<code>[EW]\d{3})\s+(?P<part>.*?)\s*$")
BACKENDS = ("generated", "closures")


def run(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in r.output, r.output
    return r


def expectations(path):
    """[(line, code, message part)] and the extra arguments of a planted file."""
    out, extra = [], []
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if line.startswith("# validate:"):
                extra = line.split(":", 1)[1].split()
            m = EXPECT.search(line)
            if m:
                out.append((i, m.group("code"), m.group("part")))
    return out, extra


# ------------------------------------------------------------------------------------------ language
GAME = '''game "Supply" { players 2 }
var stock: int = 2
per player var held: int
@rule "S-1"
invariant "stock is never negative": stock >= 0
invariant "tokens are conserved": stock + sum(held) == 2
flow { loop { for p in players { turn p { offer [take] to p } } } }
action take { effect { stock -= 1 held[me] += 1 } }
ending "over" when stock <= -2
'''


def test_invariants_parse_check_and_are_listed():
    rs = rulelang.loads(GAME, name="supply.rules")
    assert rs.invariants == ("stock is never negative", "tokens are conserved")
    d = rs.program.invariants[0]
    assert (d.span.line, d.span.column) == (5, 1) and d.cites == ["S-1"]


@pytest.mark.parametrize("text, code, where, part", [
    ('invariant "n": 3', "E340", (3, 16), "a condition (true or false), not int"),
    ('invariant "n": none', "E340", (3, 16), "not none"),
    ('invariant "n": [true]', "E340", (3, 16), "not list[bool]"),
    ('invariant "n": stok >= 0', "E201", (3, 16), "unknown name 'stok'"),
    ('invariant "n": true\ninvariant "n": false', "E101", (4, 1), 'invariant "n" is declared twice'),
    ('override invariant "n": true', "E102", (3, 10), 'there is no invariant "n" to override'),
])
def test_invariant_errors_are_positioned(text, code, where, part):
    src = 'game "x" { players 2 }\nvar stock: int\n' + text + '\nflow { }\n'
    with pytest.raises(rulelang.RuleError) as e:
        rulelang.loads(src, name="x.rules")
    found = [(d.code, d.line, d.column, d.message) for d in e.value.diagnostics if d.severity == "error"]
    assert any(c == code and (ln, col) == where and part in m for c, ln, col, m in found), found


def test_variants_add_and_override_invariants(tmp_path):
    text = GAME + '''variant strict {
  override invariant "stock is never negative": stock >= 1
  invariant "held at most one": all(players, p => held[p] <= 1)
}
'''
    base = rulelang.loads(text, name="s.rules")
    strict = rulelang.loads(text, name="s.rules", variants=["strict"])
    assert base.invariants == ("stock is never negative", "tokens are conserved")
    assert strict.invariants == ("stock is never negative", "tokens are conserved", "held at most one")
    g = strict.new_game(2, seed=0)
    g.apply("take")
    g.apply("take")  # stock 0, held (1, 1)
    assert [name for name, _, _ in g.check_invariants()] == ["stock is never negative"]
    assert base.new_game(2, seed=0).check_invariants() == []
    # a house-rule file may add one too
    (tmp_path / "base.rules").write_text(GAME)
    (tmp_path / "house.rules").write_text('extends "base.rules"\ninvariant "house": stock <= 2\n')
    assert rulelang.load(str(tmp_path / "house.rules")).invariants[-1] == "house"


@pytest.mark.parametrize("backend", BACKENDS)
def test_check_invariants_reports_name_position_and_values(backend):
    rs = rulelang.loads(GAME, name="supply.rules").with_backend(backend)
    g = rs.new_game(2, seed=1)
    assert g.check_invariants() == []
    g.apply("take")
    g.apply("take")
    assert g.check_invariants() == []
    before = g.to_json()
    g.apply("take")
    got = g.check_invariants()
    assert got == [("stock is never negative", "supply.rules:5:1",
                    'invariant "stock is never negative" does not hold (stock = -1)')]
    # checking changes nothing of the game
    state = g.to_json()
    g.check_invariants()
    assert g.to_json() == state and state != before


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_invariant_that_fails_to_evaluate_is_reported_not_raised(backend):
    text = '''game "x" { players 2 }
var cells: list[int] = [0, 0]
var at: int
invariant "cell ok": cells[at] >= 0
flow { loop { for p in players { turn p { offer [go] to p } } } }
action go { effect { at += 1 } }
ending "e" when at > 5
'''
    g = rulelang.loads(text, name="x.rules").with_backend(backend).new_game(2, seed=0)
    g.apply("go")
    assert g.check_invariants() == []
    g.apply("go")
    [(name, where, message)] = g.check_invariants()
    assert (name, where) == ("cell ok", "x.rules:4:1")
    assert message.startswith('invariant "cell ok" could not be checked: ') and "outside" in message


def test_invariants_never_run_in_normal_play():
    rs = rulelang.loads(GAME.replace(">= 0", ">= 99"), name="supply.rules")
    calls = []
    rs._ready()
    rs.invariant_checks = [(n, (lambda f: lambda G, L: calls.append(1) or f(G, L))(f), s, r)
                           for n, f, s, r in rs.invariant_checks]
    g = rs.new_game(2, seed=3)
    while not g.is_over():
        g.apply(g.legal_actions()[0])
    assert calls == [] and g.end_reason == "over"
    assert g.check_invariants() and calls  # but they run when asked


def _strip_invariants(text):
    return "\n".join("" if line.startswith("invariant ") else line for line in text.split("\n"))


@pytest.mark.parametrize("game", ["games/station.rules", "games/vega.rules", "games/examples/tictactoe.rules",
                                  "games/examples/connect4.rules", "games/examples/kuhn_poker.rules"])
def test_games_declare_invariants_that_do_not_change_play(game):
    from interpreter.agents import ChanceAgent, RandomAgent, agent_seed
    from interpreter.simulate import play_game

    path = os.path.join(ROOT, game)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    with_inv = rulelang.loads(text, name=path)
    without = rulelang.loads(_strip_invariants(text), name=path)
    assert with_inv.invariants and not without.invariants
    for n in with_inv.player_counts[:3]:
        for chance in ("sampled", "explicit"):
            seed = 5
            states = []
            for rs in (with_inv, without):
                g = rs.new_game(n, seed=seed, chance=chance)
                play_game(g, [RandomAgent(agent_seed(seed, s)) for s in range(n)],
                          chance_agent=ChanceAgent(agent_seed(seed, "chance")))
                states.append(g.to_json())
            assert states[0] == states[1]


@pytest.mark.parametrize("game", ["games/station.rules", "games/vega.rules"])
def test_game_invariants_are_cited(game):
    rs = rulelang.load(os.path.join(ROOT, game))
    assert rs.invariants and all(d.cites for d in rs.program.invariants)


# ------------------------------------------------------------------------------------------ validate
@pytest.mark.parametrize("name", DYN)
def test_validate_finds_each_planted_problem_at_its_line(name, tmp_path):
    path = os.path.join(CONSISTENCY, name)
    want, extra = expectations(path)
    assert want, f"{name} states no expectation"
    r = run("validate", path, "--json", "--games", 6, "--max-decisions", 3000, "--out", tmp_path / "found", *extra)
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout)
    got = [(f["line"], f["code"], f["message"]) for f in data["findings"]]
    assert sorted((ln, c) for ln, c, _ in got) == sorted((ln, c) for ln, c, _ in want), got
    for ln, code, part in want:
        assert any(g[0] == ln and g[1] == code and part in g[2] for g in got), (part, got)
    for f in data["findings"]:
        assert f["path"] == path and f["seed"] >= 0 and f["players"] in (1, 2, 3, 4)
        assert f["decisions"] == len(f["log"])


@pytest.mark.parametrize("name", DYN)
def test_rulelang_replay_confirms_each_finding(name, tmp_path):
    path = os.path.join(CONSISTENCY, name)
    _, extra = expectations(path)
    r = run("validate", path, "--json", "--games", 3, "--max-decisions", 300, "--out", tmp_path, *extra)
    data = json.loads(r.stdout)
    assert data["findings"]
    for f in data["findings"]:
        log = f["log_file"]
        assert log and os.path.isfile(log)
        record = json.loads(open(log, encoding="utf-8").read())
        assert record["format"] == "rulelang-log" and record["chance"] == "explicit"
        assert record["log"] == (f["shrunk"] if f["shrunk"] is not None else f["log"])
        r = run("replay", path, log)
        assert r.exit_code == 0, r.output
        assert "the finding shows again" in r.stdout and f["code"] in r.stdout
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []


def test_replay_refuses_a_finding_that_does_not_show_again(tmp_path):
    path = os.path.join(CONSISTENCY, "dyn_invariant.rules")
    r = run("validate", path, "--json", "--games", 2, "--players", 2, "--out", tmp_path, "--no-shrink")
    f = json.loads(r.stdout)["findings"][0]
    record = json.loads(open(f["log_file"], encoding="utf-8").read())
    record["log"] = record["log"][:-3]  # stop before the supply runs out
    bad = tmp_path / "short.json"
    bad.write_text(json.dumps(record))
    r = run("replay", path, bad)
    assert r.exit_code == 1 and "the recorded finding does not show again" in r.stderr
    record["finding"] = {"kind": "nonsense"}
    bad.write_text(json.dumps(record))
    r = run("replay", path, bad)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1


def test_text_output_is_a_positioned_diagnostic_with_a_replay(tmp_path):
    path = os.path.join(CONSISTENCY, "dyn_invariant.rules")
    r = run("validate", path, "--games", 3, "--players", 2, "--out", tmp_path)
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"{path}:8:1: error[E604]: invariant \"the supply is never negative\" does not hold "
                               "(stock = -1)")
    assert lines[1].startswith(" 8 | invariant \"the supply is never negative\"")
    assert lines[2].strip().startswith("| ^^^^")
    assert "replay it: rulelang replay" in r.stdout and "--seed" in r.stdout
    assert lines[-1] == f"{path}: 1 finding (1 invariant violation) in 3 games"
    assert "\x1b[" not in r.stdout  # no progress bar or colours when stdout is not a terminal


def test_invariants_are_checked_after_chance_steps(tmp_path):
    path = os.path.join(CONSISTENCY, "dyn_chance_invariant.rules")
    r = run("validate", path, "--json", "--games", 4, "--out", tmp_path)
    data = json.loads(r.stdout)
    assert r.exit_code == 1 and [f["code"] for f in data["findings"]] == ["E604"]
    assert data["findings"][0]["log"][-1]["player"] == -1  # right after a chance step
    # with sampled chance the dice are rolled inside one step: the broken moment is never seen
    r = run("validate", path, "--json", "--games", 4, "--chance", "sampled", "--out", tmp_path)
    assert r.exit_code == 0 and json.loads(r.stdout)["findings"] == []


def test_decision_bound_and_determinism(tmp_path):
    path = os.path.join(CONSISTENCY, "dyn_endless.rules")
    r1 = run("validate", path, "--json", "--games", 2, "--max-decisions", 50, "--out", tmp_path)
    r2 = run("validate", path, "--json", "--games", 2, "--max-decisions", 50, "--out", tmp_path)
    a, b = json.loads(r1.stdout), json.loads(r2.stdout)
    [f] = a["findings"]
    assert f["code"] == "E603" and f["line"] == 2 and len(f["log"]) == 50 and f["games"] == 2
    assert "did not end within 50 decisions" in f["message"]
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    assert a["summaries"]["2"]["games"] == 2 and a["summaries"]["2"]["findings"]["endless"] == 2


@pytest.mark.parametrize("game, games", [("games/station.rules", 2), ("games/vega.rules", 1),
                                         ("games/examples/tictactoe.rules", 30),
                                         ("games/examples/connect4.rules", 30),
                                         ("games/examples/kuhn_poker.rules", 30)])
def test_no_false_findings_on_the_games(game, games, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run("validate", game, "--json", "--games", games, "--out", tmp_path, "--no-coverage")
    data = json.loads(r.stdout)
    assert r.exit_code == 0, data["findings"][:1]
    assert data["findings"] == [] and data["ok"]
    counts = rulelang.load(game).player_counts
    assert sorted(int(k) for k in data["summaries"]) == sorted(counts)
    assert all(s["completed"] == games for s in data["summaries"].values())
    assert not os.listdir(tmp_path)  # nothing written when nothing is found


def test_station_invariants_catch_a_house_rule_that_breaks_them(tmp_path):
    # a variant whose placing of a new resident does nothing: the human or alien leaves the supply and
    # never arrives in a station
    with open(os.path.join(ROOT, "games", "station.rules"), encoding="utf-8") as fh:
        text = fh.read()
    path = tmp_path / "station.rules"
    path.write_text(text + '\nvariant broken { override procedure place(p: player, k: Kind) { } }\n')
    r = run("validate", path, "--json", "--games", 4, "--players", 2, "--out", tmp_path / "o", "--no-shrink",
            "--no-coverage")
    assert r.exit_code == 0, r.output  # the game as it is: clean
    r = run("validate", path, "--json", "--games", 4, "--players", 2, "--out", tmp_path / "o", "--no-shrink",
            "--no-coverage", "--variant", "broken")
    data = json.loads(r.stdout)
    assert r.exit_code == 1
    names = {f["invariant"] for f in data["findings"]}
    assert names & {"humans are conserved", "aliens are conserved"}, data["findings"]


def test_bad_arguments_are_one_line_errors(tmp_path):
    path = os.path.join(CONSISTENCY, "dyn_invariant.rules")
    r = run("validate", path, "--players", 7)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "not 7" in r.stderr
    r = run("validate", path, "--seed", str(2 ** 64))
    assert r.exit_code == 2 and "too large" in r.stderr and r.stderr.count("\n") == 1
    r = run("validate", tmp_path / "missing.rules")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1
    r = run("validate", path, "--variant", "nope")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    blocked = tmp_path / "file"
    blocked.write_text("x")
    r = run("validate", path, "--games", 1, "--players", 2, "--out", blocked / "sub")
    assert r.exit_code == 1 and "cannot write" in r.stdout


def test_validate_of_a_broken_rule_file_prints_its_diagnostics(tmp_path):
    p = tmp_path / "bad.rules"
    p.write_text('game "x" { players 2 }\nflow { }\ninvariant "n": 3\n')
    r = run("validate", p)
    assert r.exit_code == 1 and f"{p}:3:16: error[E340]" in r.stderr


def test_hostile_invariants_stay_bounded(tmp_path):
    p = tmp_path / "heavy.rules"
    p.write_text('''game "Heavy" { players 2 }
var n: int
function deep(k) = if k <= 0 then 0 else deep(k - 1) + 1
invariant "heavy": all(0..n + 999999, i => all(0..n + 999999, j => i + j >= 0))
invariant "recursive": deep(n + 100000) >= 0
invariant "big": count(to_list(0..999999) + to_list(0..999999)) >= 0
flow { loop { for p in players { turn p { offer [go] to p } } } }
action go { effect { n += 1 } }
ending "done" when n >= 3
''')
    out = run_cli_bounded(["validate", str(p), "--games", "2", "--json", "--out", str(tmp_path / "o")], seconds=60)
    assert not out.timed_out and not out.traceback and not out.out_of_memory, out.explain()
    data = json.loads(out.stdout)
    got = {f["invariant"]: f["message"] for f in data["findings"]}
    assert "work budget" in got["heavy"] and "200 deep" in got["recursive"] and "could not be checked" in got["big"]


# ------------------------------------------------------------------------------------------ the other modules
def _fake_module(monkeypatch, name, **attrs_):
    mod = types.ModuleType(name)
    for k, v in attrs_.items():
        setattr(mod, k, v)
    monkeypatch.setitem(sys.modules, name, mod)
    return mod


def test_shrinker_interface_and_a_shrunk_log_that_must_reproduce(monkeypatch, tmp_path):
    path = os.path.join(CONSISTENCY, "dyn_error.rules")
    seen = {}

    def shrink_log(ruleset, players, seed, variants, log, reproduces):
        seen["args"] = (players, seed, list(variants), len(log))
        # the game replays in the finding's chance mode whatever is asked; the full log reproduces
        game = ruleset.new_game(players, seed=seed, chance="sampled")
        assert game.chance_mode == "explicit"
        try:
            for e in log:
                game.apply(e["action"])
        except rulelang.GameError as exc:
            seen["full"] = reproduces(exc)
        seen["empty"] = reproduces(ruleset.new_game(players, seed=seed))
        return log  # not shorter, but it reproduces

    def as_scenario(name, players, seed, log, note):
        return f'scenario "{name}" {{\n  players {players}\n  seed {seed}\n  # {note}\n}}\n'

    _fake_module(monkeypatch, "interpreter.shrink", shrink_log=shrink_log, as_scenario=as_scenario)
    r = run("validate", path, "--json", "--games", 2, "--out", tmp_path, "--no-coverage")
    f = json.loads(r.stdout)["findings"][0]
    assert seen["full"] is True and seen["empty"] is False
    assert f["shrunk"] == f["log"] and f["scenario"].startswith('scenario "validate finding 1')
    assert open(f["scenario_file"], encoding="utf-8").read() == f["scenario"]

    # a shrunk log that does not reproduce the finding is not used
    _fake_module(monkeypatch, "interpreter.shrink", shrink_log=lambda *a: [], as_scenario=as_scenario)
    r = run("validate", path, "--json", "--games", 2, "--out", tmp_path, "--no-coverage")
    f = json.loads(r.stdout)["findings"][0]
    assert f["shrunk"] is None and "did not reproduce" in f["shrink_note"]
    assert len(json.loads(open(f["log_file"]).read())["log"]) == len(f["log"])


def test_missing_modules_are_reported_as_not_available(monkeypatch, tmp_path):
    for name in ("interpreter.shrink", "interpreter.coverage", "interpreter.exhaustive"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    path = os.path.join(CONSISTENCY, "dyn_error.rules")
    r = run("validate", path, "--games", 1, "--exhaustive", "--out", tmp_path)
    assert r.exit_code == 1
    assert "shrinking is not available" in r.stdout
    assert "rulebook coverage is not available" in r.stdout
    assert "exhaustive mode is not available" in r.stdout


def test_coverage_and_exhaustive_interfaces(monkeypatch, tmp_path):
    made = []

    class Coverage:
        def __init__(self, ruleset):
            made.append(self)
            self.ruleset = ruleset
            self.games = 0
            self._new = ruleset.new_game

        def table(self):
            return [{"section": "TTT-2", "runs": 1}]

        def to_json(self):
            return {"sections": self.table()}

        def render(self, console):
            console.print("COVERAGE TABLE")

    def explore_all(ruleset, players, max_states, check):
        g = ruleset.new_game(players, seed=0)
        assert check(g) == []
        return {"positions": 5478, "nodes": 549946, "complete": True, "findings": []}

    _fake_module(monkeypatch, "interpreter.coverage", Coverage=Coverage)
    _fake_module(monkeypatch, "interpreter.exhaustive", explore_all=explore_all)
    game = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
    r = run("validate", game, "--games", 2, "--exhaustive", "--max-states", 10, "--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert "COVERAGE TABLE" in r.stdout and "positions 5,478, nodes 549,946" in r.stdout and made
    r = run("validate", game, "--games", 2, "--exhaustive", "--json", "--out", tmp_path)
    data = json.loads(r.stdout)
    assert data["coverage"] == {"sections": [{"section": "TTT-2", "runs": 1}]}
    assert data["exhaustive"]["2"]["positions"] == 5478


def test_exhaustive_findings_become_findings(monkeypatch):
    from interpreter import validate as V

    def explore_all(ruleset, players, max_states, check):
        g = ruleset.new_game(players, seed=0)
        for _ in range(6):
            g.apply("take")
        return {"positions": 7, "nodes": 7, "complete": False, "findings": check(g) + [
            {"message": "P0 has no legal action among take: the game is stuck"}]}

    _fake_module(monkeypatch, "interpreter.exhaustive", explore_all=explore_all)
    path = os.path.join(CONSISTENCY, "dyn_invariant.rules")
    rs = rulelang.load(path)
    report = V.validate(rs, path, players=[2], games=0, exhaustive_states=10, coverage=False)
    assert report.exhaustive == {2: {"positions": 7, "nodes": 7, "complete": False}}
    got = [(f.code, f.line, f.exhaustive, f.invariant, len(f.log)) for f in report.findings]
    assert got == [("E604", 8, True, "the supply is never negative", 6), ("E602", 3, True, None, 0)]
    lines = []
    V.print_report(report, rs.program.sources, lines.append)
    assert "found by --exhaustive with 2 players" in "\n".join(lines)
    assert "exhaustive, 2 players: positions 7, nodes 7, complete false" in lines


def test_play_it_again_command_reproduces_the_game(tmp_path):
    path = os.path.join(CONSISTENCY, "dyn_error.rules")
    r = run("validate", path, "--json", "--games", 5, "--out", tmp_path)
    f = json.loads(r.stdout)["findings"][0]
    r = run("play", path, "--players", f["players"], "--seed", f["seed"], "--chance", f["chance"], "--json")
    played = json.loads(r.stdout)
    assert played["log"] == f["log"] and played["error"].startswith(f"{path}:{f['line']}:{f['column']}: ")


def test_an_internal_error_is_a_finding_not_a_crash():
    from interpreter import validate as V

    path = os.path.join(CONSISTENCY, "dyn_invariant.rules")
    rs = rulelang.load(path)
    new_game = rs.new_game

    def broken_new_game(*args, **kws):
        g = new_game(*args, **kws)
        g.apply = lambda action: (_ for _ in ()).throw(RuntimeError("boom"))
        return g

    rs.new_game = broken_new_game
    report = V.validate(rs, path, players=[2], games=2, coverage=False, shrinking=False)
    [f] = report.findings
    assert f.code == "E601" and f.line == 3 and "internal error" in f.message and "boom" in f.message
    assert f.games == 2


# ------------------------------------------------------------------------- the real modules together
# (the interface tests above use fake modules; these run validate with the shrinker, the coverage and
# exhaustive mode of this repository)
TRAP = '''game "Trap" { players 2 }
var steps: int
var armed: bool
flow { loop { for p in players { turn p { offer [step, arm, wait] to p } } } }
action step { effect { steps += 1 } }
action wait { }
action arm { effect { armed = true } }
invariant "never armed after three steps": not (armed and steps >= 3)   # the finding
ending "ten steps" when steps >= 10
ending "never": steps < 0
'''


def test_a_real_finding_is_shrunk_to_its_essence_and_confirmed_by_replay(tmp_path):
    path = tmp_path / "trap.rules"
    path.write_text(TRAP.replace('ending "never": steps < 0', 'ending "never" when steps < 0'))
    r = run("validate", path, "--json", "--games", 5, "--players", 2, "--out", tmp_path / "found")
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout)
    (f,) = [x for x in data["findings"] if x["code"] == "E604"]
    # the shortest game that shows it: three steps and the arming, in any order; anything shorter cannot
    # break the invariant, and the arming is the only decision that is not the first legal one (step)
    assert f["shrunk"] is not None and len(f["shrunk"]) == 4, f["shrunk"]
    assert sorted(e["action"] for e in f["shrunk"]) == ["arm", "step", "step", "step"]
    r = run("replay", path, f["log_file"])
    assert r.exit_code == 0 and "the finding shows again" in r.stdout, r.output
    # the ending no game reaches is flagged by the coverage part of the report
    endings = {e["ending"]: e for e in data["coverage"]["endings"]}
    assert endings["never"]["reached"] == 0 and endings["never"]["status"] == "never reached"


def test_exhaustive_tic_tac_toe_through_validate():
    path = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
    r = run("validate", path, "--json", "--games", 1, "--exhaustive", "--no-coverage", "--no-shrink")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    text = json.dumps(data)
    # OpenSpiel's counts for tic-tac-toe: 5,478 distinct positions, 549,946 nodes of the game tree
    assert '"positions": 5478' in text and '"nodes": 549946' in text, text[:2000]


# ------------------------------------------------------------------------- the written scenario
SUPPLY = '''game "Supply" { players 2 }
var stock: int = 3
per player var held: int
invariant "the supply is never negative": stock >= 0
flow { loop { for p in players { turn p { offer [take, pass] to p } } } }
action take { effect { stock -= 1 held[me] += 1 } }
action pass { }
ending "all taken" when stock < -3
'''


def test_the_scenario_of_an_invariant_finding_fails_until_the_rules_are_fixed(tmp_path):
    rules = tmp_path / "supply.rules"
    rules.write_text(SUPPLY)
    r = run("validate", rules, "--json", "--games", 3, "--out", tmp_path / "found", "--no-coverage")
    assert r.exit_code == 1, r.output
    [f] = json.loads(r.stdout)["findings"]
    assert f["code"] == "E604" and f["scenario_file"]
    scenario = open(f["scenario_file"], encoding="utf-8").read()

    def test_with(text):
        path = tmp_path / "with_scenario.rules"
        path.write_text(text + "\n" + scenario)
        return run("test", path)

    # on the file that produced it, the scenario fails, naming the invariant and the step that broke it
    r = test_with(SUPPLY)
    assert r.exit_code == 1, r.output
    assert 'invariant "the supply is never negative" does not hold (stock = -1) after play "take"' in r.output
    assert r.output.splitlines()[-1] == "0 passed, 1 failed"
    # fixed as docs/validate.md says (the missing require): the last take is no longer legal, and it passes
    r = test_with(SUPPLY.replace("action take {", "action take { require stock > 0 "))
    assert r.exit_code == 0 and r.output.splitlines()[-1] == "1 passed, 0 failed", r.output
    # fixed in the effect instead (every decision still legal): it passes too
    r = test_with(SUPPLY.replace("stock -= 1 held[me] += 1", "if stock > 0 { stock -= 1 held[me] += 1 }"))
    assert r.exit_code == 0 and r.output.splitlines()[-1] == "1 passed, 0 failed", r.output


def test_the_scenario_of_a_finding_with_a_variant_plays_that_variant(tmp_path):
    path = os.path.join(CONSISTENCY, "dyn_variant_invariant.rules")
    r = run("validate", path, "--json", "--games", 3, "--variant", "generous", "--out", tmp_path, "--no-coverage")
    [f] = json.loads(r.stdout)["findings"]
    scenario = open(f["scenario_file"], encoding="utf-8").read()
    assert "  with variant generous\n" in scenario and "  chance explicit\n" in scenario
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    (tmp_path / "v.rules").write_text(text + "\n" + scenario)
    r = run("test", tmp_path / "v.rules")
    assert r.exit_code == 1 and 'invariant "at most six coins each" does not hold' in r.output, r.output


# ------------------------------------------------------------------------- the text report
FUSE = '''game "Fuse" { players 2 }
var steps: int
var armed: bool
var turns: int
action wait { effect { turns += 1 } }
action step { effect { steps += 1  turns += 1 } }
action arm { effect { armed = true  turns += 1 } }
flow { loop { for p in players { turn p { offer [wait, step, arm] to p } } } }
invariant "never armed after three steps": not (armed and steps >= 3)
ending "forty turns" when turns >= 40
'''


def test_a_long_finding_is_shrunk_and_its_last_decisions_are_shown(tmp_path):
    path = tmp_path / "fuse.rules"
    path.write_text(FUSE)
    # game 0 of seed 7 breaks the invariant after 16 decisions, most of them "wait"
    args = ("validate", path, "--games", 1, "--seed", 7, "--out", tmp_path / "o", "--no-coverage")
    data = json.loads(run(*args, "--json").stdout)
    [f] = data["findings"]
    assert len(f["log"]) >= 14, "the game no longer makes a long log: pick another seed"
    # three steps and the arming, nothing less can break it: the waits are removed
    assert len(f["shrunk"]) == 4 and sorted(e["action"] for e in f["shrunk"]) == ["arm", "step", "step", "step"]
    text = run(*args).stdout
    assert f"(shrunk to 4 of {len(f['log'])} decisions)" in text
    shown = ", ".join(f"P{e['player']} {e['action']}" for e in f["shrunk"])
    assert f"  decisions (shrunk): {shown}\n" in text
    # unshrunk, the preview ends with the decisions that lead to the finding: the last ones
    text = run(*args, "--no-shrink").stdout
    [line] = [x for x in text.splitlines() if x.startswith("  decisions: ")]
    last = ", ".join(f"P{e['player']} {e['action']}" for e in f["log"][-12:])
    assert line == f"  decisions: ({len(f['log']) - 12} earlier) ... {last}"


def test_the_coverage_table_in_a_pipe_is_plain_text(tmp_path):
    import subprocess

    game = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
    # an environment that asks for colours and a narrow screen: neither may reach a pipe
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
               COLUMNS="40", FORCE_COLOR="1", TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    r = subprocess.run([sys.executable, "-m", "rulelang", "validate", game, "--games", "2", "--out", str(tmp_path)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=600, check=False)
    out = r.stdout.decode("utf-8")
    assert r.returncode == 0, out
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", out), repr(out[:400])  # no escape codes, no \r, no bar
    assert out.isascii() and not any(line != line.rstrip() for line in out.splitlines())
    lines = out.splitlines()
    start = lines.index("rulebook coverage (2 games)")
    table = []
    for line in lines[start + 1:]:
        if not line.startswith(("+", "|")):
            break
        table.append(line)
    assert len({len(line) for line in table}) == 1, table  # one width: nothing wrapped into the next line
    header, rows = table[1], [x for x in table[3:] if x.startswith("| ")]
    assert [c.strip() for c in header.strip("|").split("|")][:7] == [
        "section", "runs", "offered", "taken", "fired", "reached", "cited by"]
    # one row per cited section, each with its id: no cell continued on a row of its own
    assert [row.split("|")[1].strip() for row in rows] == ["TTT-1", "TTT-2", "TTT-3", "TTT-4", "TTT-5"], table


def test_a_game_past_the_decision_bound_is_not_shrunk(tmp_path):
    # every decision up to the bound is needed: shrinking could only spend its time bound replaying them
    path = os.path.join(CONSISTENCY, "dyn_endless.rules")
    r = run("validate", path, "--json", "--games", 1, "--max-decisions", 200, "--out", tmp_path, "--no-coverage")
    [f] = json.loads(r.stdout)["findings"]
    assert f["code"] == "E603" and f["shrunk"] is None and len(f["log"]) == 200
    assert f["shrink_note"] == "not shrunk: a game past the decision bound needs all its 200 decisions"
    assert run("replay", path, f["log_file"]).exit_code == 0

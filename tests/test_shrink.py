"""Shrunk reproductions (interpreter/shrink.py, docs/validate.md "Findings and reproductions"): the
shortest prefix, then the fewest decisions (chunks removed), then the fewest deviations from the first
legal choice; the log `rulelang replay` confirms; the scenario that plays it.

The planted rule files are in tests/data/shrink/; each expected shrunk log below is derived by hand
from the rules (the derivation is in the test's comment)."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

import rulelang
from interpreter.errors import GameError
from interpreter.scenarios import run_scenario
from interpreter.shrink import ShrinkError, as_scenario, infer_chance, same_error, shrink_log, write_log
from rulelang.cli import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "shrink")


def path(name):
    return os.path.join(DATA, name + ".rules")


def load(name, backend="generated"):
    rs = rulelang.load(path(name))
    return rs if backend == "generated" else rs.with_backend(backend)


def entries(players_actions):
    return [{"player": p, "action": a} for p, a in players_actions]


def alternate(actions, first=0, seats=2):
    return [{"player": (first + k) % seats, "action": a} for k, a in enumerate(actions)]


def division_by_zero(x):
    return isinstance(x, GameError) and "division by zero" in str(x)


def var(name):
    """A finding about the game after the last decision: variable `name` is true (or at least 2)."""
    def reproduces(x):
        if isinstance(x, Exception):
            return False
        v = x.view(None)["vars"][name]
        return v is True or (type(v) is int and v >= 2)
    return reproduces


def actions(log):
    return [e["action"] for e in log]


def replay_cli(rules, log_path):
    return CliRunner().invoke(cli, ["replay", rules, str(log_path)])


# ---------------------------------------------------------------------------------------------- shrinking

@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_an_error_shrinks_to_the_two_decisions_that_cause_it(backend):
    # trap.rules: P1 picking 3 after P0 picked 2 divides by zero. The log fails at its 6th decision, so
    # the shortest prefix is all six. The shortest game that fails is P0's pick(2) and then P1's pick(3):
    # one decision cannot fail (P1 has not picked), and any two others do not. Removing chunks finds it.
    rs = load("trap", backend)
    log = alternate(["pick(1)", "pick(3)", "pick(2)", "pick(1)", "pick(3)", "pick(3)"])
    got = shrink_log(rs, 2, 5, [], log, division_by_zero)
    assert got == alternate(["pick(2)", "pick(3)"])
    assert got.complete and got.reason is None
    assert (got.original, got.prefix, got.deviations) == (6, 6, 2)
    assert division_by_zero(got.outcome)


def test_a_state_finding_shrinks_to_the_shortest_prefix_first():
    # a finished game (no error: P1 never picks 3 after the arming); the finding is "armed", true from
    # P0's pick(2), the 5th decision: the prefix is five decisions. The four before it can go: P0's
    # pick(2) as the first decision arms the trap.
    rs = load("trap")
    log = alternate(["pick(1)", "pick(2)", "pick(3)", "pick(0)", "pick(2)",
                     "pick(1)", "pick(0)", "pick(2)", "pick(1)", "pick(0)"])
    g = rs.new_game(2, seed=0)
    for e in log:
        g.apply(e["action"])
    assert g.is_over() and g.error is None  # the log is a whole game
    got = shrink_log(rs, 2, 0, [], log, var("armed"))
    assert got == alternate(["pick(2)"])
    assert (got.original, got.prefix, got.deviations) == (10, 5, 1)


def test_a_decision_made_illegal_by_a_replacement_is_repaired():
    # steps.rules: no number twice in a row; the finding is two 2s after exactly five steps (so no
    # decision can be removed). Log 1,0,2,1,2 (deviations at every decision but the second). Replacing
    # the first 1 by 0 makes the recorded 0 illegal: the repair takes the first legal, 1, giving 0,1,2,1,2
    # (it reproduces). The 2s must stay; 1 before the last 2 becomes 0 (the first legal after a 2).
    # Without the repair the result would be 1,0,2,0,2.
    rs = load("steps")
    log = entries([(0, "step(1)"), (0, "step(0)"), (0, "step(2)"), (0, "step(1)"), (0, "step(2)")])
    twos = var("twos")
    got = shrink_log(rs, 1, 0, [], log, lambda x: twos(x) and x.view(None)["vars"]["steps_taken"] == 5)
    assert actions(got) == ["step(0)", "step(1)", "step(2)", "step(0)", "step(2)"]
    assert got.deviations == 2


def test_the_shortest_reproduction_removes_the_steps_between():
    # without the count, two 2s need three steps at least (no number twice in a row): 2, then the first
    # legal one after a 2 (0), then 2 again
    rs = load("steps")
    log = entries([(0, "step(1)"), (0, "step(0)"), (0, "step(2)"), (0, "step(1)"), (0, "step(2)")])
    got = shrink_log(rs, 1, 0, [], log, var("twos"))
    assert actions(got) == ["step(2)", "step(0)", "step(2)"] and got.deviations == 2


def test_chance_decisions_shrink_too_in_explicit_mode():
    # push.rules, explicit chance: the error needs "risk" then a 6. The rounds before the last one do
    # nothing towards it: the shortest game is "risk" and the roll of 6.
    rs = load("push")
    log = entries([(0, "careful"), (-1, "6"), (0, "risk"), (-1, "3"), (0, "careful"), (-1, "6"),
                   (0, "risk"), (-1, "6")])
    assert infer_chance(log) == "explicit"
    got = shrink_log(rs, 1, 3, [], log, division_by_zero)
    assert got == entries([(0, "risk"), (-1, "6")])


def _sampled_push():
    """A seed whose game of ten "risk" decisions fails, and k, the decision (0-based) at which it fails:
    the rolls do not depend on the decisions (one roll per turn), so it is the first 6 rolled."""
    rs = load("push")
    for seed in range(200):
        g = rs.new_game(1, seed=seed, chance="sampled")
        try:
            for _ in range(10):
                g.apply("risk")
        except GameError:
            if len(g.log) >= 3:
                return rs, seed, len(g.log) - 1
    raise AssertionError("no seed of 0..199 rolls a 6 after the 3rd roll")


def test_sampled_chance_shrinks_to_careful_decisions_and_the_one_risk():
    rs, seed, k = _sampled_push()
    log = entries([(0, "risk")] * (k + 1))
    assert infer_chance(log) == "sampled"
    got = shrink_log(rs, 1, seed, [], log, division_by_zero)
    assert actions(got) == ["careful"] * k + ["risk"]


def test_shrinking_is_deterministic_and_the_same_on_both_backends():
    log = alternate(["pick(3)", "pick(1)", "pick(2)", "pick(2)", "pick(1)", "pick(1)", "pick(2)", "pick(3)"])
    runs = [shrink_log(load("trap", b), 2, 9, [], log, division_by_zero) for b in ("generated", "closures")]
    runs.append(shrink_log(load("trap"), 2, 9, [], log, division_by_zero))
    assert runs[0] == runs[1] == runs[2] == alternate(["pick(2)", "pick(3)"])


def test_the_replay_bound_stops_shrinking_with_a_reproduction():
    rs = load("trap")
    log = alternate(["pick(1)", "pick(3)", "pick(2)", "pick(1)", "pick(3)", "pick(3)"])
    got = shrink_log(rs, 2, 5, [], log, division_by_zero, max_replays=2)
    assert not got.complete and got.reason == "replays" and got.replays == 2
    # one candidate tried (the log without its first half: P0 1, P1 3, P0 3 fails nothing): the log as given
    assert got == log and division_by_zero(got.outcome)
    got = shrink_log(rs, 2, 5, [], log, division_by_zero, max_seconds=0)
    assert not got.complete and got.reason == "time" and got == log


def test_the_time_bound_holds_on_a_long_log():
    # 3,000 decisions of a game with no end (cycle.rules: flip, where "wait" is the first legal action):
    # the finding is "past 3,000 decisions", so each candidate replays them all; the time bound stops it.
    rs = load("cycle")
    log = entries([(0, "flip")] * 3000)
    past = (lambda x: not isinstance(x, Exception) and len(x.log) >= 3000)
    got = shrink_log(rs, 1, 0, [], log, past, max_seconds=1.0)
    assert not got.complete and got.reason == "time"
    assert got.seconds < 120 and len(got) == 3000 and past_is_reproduced(rs, got, past)


def past_is_reproduced(rs, log, reproduces):
    g = rs.new_game(1, seed=0)
    for e in log:
        g.apply(e["action"])
    return reproduces(g)


def test_a_log_that_does_not_reproduce_or_replay_is_a_one_line_error():
    rs = load("trap")
    ok = alternate(["pick(2)", "pick(3)"])
    with pytest.raises(ShrinkError, match="does not reproduce"):
        shrink_log(rs, 2, 0, [], alternate(["pick(0)", "pick(3)"]), division_by_zero)
    with pytest.raises(ShrinkError, match="decision 2 of the log is by P0"):
        shrink_log(rs, 2, 0, [], [ok[0], {"player": 0, "action": "pick(3)"}], division_by_zero)
    with pytest.raises(ShrinkError, match=r"decision 1 of the log does not replay: 'pick\(7\)' is not legal"):
        shrink_log(rs, 2, 0, [], alternate(["pick(7)", "pick(3)"]), division_by_zero)
    with pytest.raises(ShrinkError, match="variants"):
        shrink_log(rs, 2, 0, ["fast"], ok, division_by_zero)
    with pytest.raises(ShrinkError, match="chance is"):
        shrink_log(rs, 2, 0, [], ok, division_by_zero, chance="random")
    with pytest.raises(ShrinkError, match="variants"):
        write_log("/nonexistent/x.json", rs, 2, 0, ["fast"], ok)
    with pytest.raises(ShrinkError, match="log entry"):
        shrink_log(rs, 2, 0, [], [{"player": "0", "action": "pick(2)"}], division_by_zero)


def test_same_error_matches_one_error_only():
    rs = load("trap")
    log = alternate(["pick(1)", "pick(3)", "pick(2)", "pick(1)", "pick(3)", "pick(3)"])
    message = f"{path('trap')}:18:7: division by zero (10 / 0) (in pick)"
    got = shrink_log(rs, 2, 5, [], log, same_error(message))
    assert got == alternate(["pick(2)", "pick(3)"])
    with pytest.raises(ShrinkError, match="the log fails at decision 6 with another error: .*:18:7: division"):
        shrink_log(rs, 2, 5, [], log, same_error(message.replace(":18:7:", ":17:7:")))


def test_a_game_past_the_decision_bound_shrinks_to_first_choices(tmp_path):
    # cycle.rules never ends while nobody stops; the finding is "20 decisions and not over": every
    # decision can be the first legal one, "wait"
    rs = load("cycle")
    log = entries([(0, "flip")] * 25 + [(0, "stop")])
    past = (lambda x: not isinstance(x, Exception) and not x.is_over() and len(x.log) >= 20)
    got = shrink_log(rs, 1, 0, [], log, past)
    assert got == entries([(0, "wait")] * 20) and got.deviations == 0
    out = tmp_path / "log.json"
    write_log(out, rs, 1, 0, [], got, error="the game did not end within 20 decisions")
    r = replay_cli(path("cycle"), out)
    assert r.exit_code == 0 and "did not end within 20 decisions" in r.stdout


def test_a_finding_at_setup_shrinks_to_the_empty_log():
    rs = load("trap")
    got = shrink_log(rs, 2, 0, [], alternate(["pick(1)", "pick(2)"]), lambda x: not isinstance(x, Exception))
    assert got == [] and got.prefix == 0


# ---------------------------------------------------------------------------------------------- the log file

def test_the_written_log_is_what_play_writes_and_replay_confirms_the_error(tmp_path):
    rs = load("trap")
    got = alternate(["pick(0)", "pick(0)", "pick(2)", "pick(0)", "pick(0)", "pick(3)"])  # it fails at its end
    out = tmp_path / "shrunk.json"
    record = write_log(out, rs, 2, 5, [], got)
    data = json.loads(out.read_text())
    assert data == record
    # the keys of a `rulelang play --log` file, in its order
    play_log = tmp_path / "play.json"
    r = CliRunner().invoke(cli, ["play", path("trap"), "--seed", "1", "--log", str(play_log)])
    assert list(json.loads(play_log.read_text())) == list(data)
    assert data["log"] == list(got) and data["decisions"] == 6 and data["seed"] == 5
    assert data["chance"] == "sampled" and data["error"].endswith("division by zero (10 / 0) (in pick)")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    r = replay_cli(path("trap"), out)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("OK: 6 decisions replayed\nnote: the recorded game stopped with an error, "
                               "reproduced at decision 6: ")
    # the same log with another last decision does not reproduce it: replay refuses the error it claims
    data["log"][-1]["action"] = "pick(1)"
    out.write_text(json.dumps(data))
    r = replay_cli(path("trap"), out)
    assert r.exit_code == 1 and "the log records the error" in r.stderr and "reproduced" not in r.stdout
    data["log"][2]["action"] = "pick(1)"
    data["log"][-1]["action"] = "pick(3)"
    out.write_text(json.dumps(data))
    r = replay_cli(path("trap"), out)
    assert r.exit_code == 1 and "the log records the error" in r.stderr and "reproduced" not in r.stdout


def test_replay_reports_another_error_than_the_recorded_one(tmp_path):
    rs = load("trap")
    out = tmp_path / "log.json"
    data = write_log(out, rs, 2, 0, [], alternate(["pick(2)", "pick(3)"]))
    data["error"] = data["error"].replace("division by zero", "something else")
    out.write_text(json.dumps(data))
    r = replay_cli(path("trap"), out)
    assert r.exit_code == 1
    assert r.stderr.strip().startswith("rulelang: replay diverged at decision 2 (P1: pick(3)): the game stopped "
                                       "with another error: ")


def test_a_recorded_error_matches_whatever_path_names_the_rule_file(tmp_path, monkeypatch):
    rs = load("trap")
    out = tmp_path / "log.json"
    write_log(out, rs, 2, 0, [], alternate(["pick(2)", "pick(3)"]))
    monkeypatch.chdir(DATA)
    r = replay_cli("trap.rules", out)
    assert r.exit_code == 0 and "reproduced at decision 2" in r.stdout


def test_a_state_finding_is_recorded_as_the_error_so_replay_accepts_the_short_log(tmp_path):
    rs = load("trap")
    out = tmp_path / "log.json"
    got = shrink_log(rs, 2, 0, [], alternate(["pick(1)", "pick(3)", "pick(2)"]), var("armed"))
    assert got == alternate(["pick(2)"])  # P0's pick(2) arms it, whenever it comes
    data = write_log(out, rs, 2, 0, [], got, error="armed is true")
    assert data["error"] == "armed is true" and data["final_sha256"] is None
    r = replay_cli(path("trap"), out)
    assert r.exit_code == 0 and r.stdout.splitlines() == [
        "OK: 1 decision replayed", "note: the recorded game stopped with an error: armed is true"]
    write_log(out, rs, 2, 0, [], got)  # without it, the log is short for replay
    r = replay_cli(path("trap"), out)
    assert r.exit_code == 1 and "the log is short" in r.stderr


def test_a_whole_game_log_verifies_its_final_state(tmp_path):
    rs = load("steps")
    out = tmp_path / "log.json"
    log = entries([(0, f"step({n})") for n in (0, 1, 0, 1, 0, 1, 0, 1)])
    data = write_log(out, rs, 1, 0, [], log)
    assert data["end_reason"] == "eight steps" and data["error"] is None and len(data["final_sha256"]) == 64
    r = replay_cli(path("steps"), out)
    assert r.exit_code == 0 and r.stdout.strip() == "OK: 8 decisions replayed, final state verified"


def test_explicit_chance_logs_replay(tmp_path):
    rs = load("push")
    log = entries([(0, "careful"), (-1, "1"), (0, "risk"), (-1, "6")])
    out = tmp_path / "log.json"
    data = write_log(out, rs, 1, 0, [], log)
    assert data["chance"] == "explicit"
    r = replay_cli(path("push"), out)
    assert r.exit_code == 0 and "reproduced at decision 4" in r.stdout


def test_write_log_refuses_a_log_that_does_not_replay(tmp_path):
    rs = load("trap")
    out = tmp_path / "log.json"
    with pytest.raises(ShrinkError, match=r"decision 1 of the log does not replay"):
        write_log(out, rs, 2, 0, [], alternate(["pick(9)"]))
    with pytest.raises(ShrinkError, match="before the end of the log"):
        write_log(out, rs, 2, 0, [], alternate(["pick(2)", "pick(3)", "pick(0)"]))
    assert not out.exists()
    with pytest.raises(ShrinkError, match="cannot write log"):
        write_log(tmp_path / "no" / "log.json", rs, 2, 0, [], alternate(["pick(2)", "pick(3)"]))


# ---------------------------------------------------------------------------------------------- the scenario

def scenario_result(name, text):
    """Run the scenario `text` appended to rule file `name`."""
    with open(path(name), encoding="utf-8") as fh:
        rules = fh.read()
    rs = rulelang.loads(rules + "\n" + text, name=path(name))
    assert [w.code for w in rs.warnings] == []
    (sc,) = rs.program.scenarios
    return run_scenario(rs, sc)


def test_the_scenario_of_an_error_fails_at_its_last_play_with_the_error():
    got = alternate(["pick(0)", "pick(0)", "pick(2)", "pick(0)", "pick(0)", "pick(3)"])
    text = as_scenario('a "trap" at line 18', 2, 5, got, "P1's pick(3) divides by zero\n(found by a test)")
    assert text.startswith('# P1\'s pick(3) divides by zero\n# (found by a test)\nscenario "a \\"trap\\" at line 18" {')
    assert '    play "pick(2)"  # P0\n    play "pick(0)"  # P1\n' in text
    assert "  then {\n    # P1's pick(3) divides by zero\n" in text
    r = scenario_result("trap", text)
    assert not r.passed and r.message.endswith("division by zero (10 / 0) (in pick)")
    r = scenario_result("trap", as_scenario("before", 2, 5, got[:-1], "", expect=["not over"]))
    assert r.passed, r.message


def test_the_scenario_reaches_the_same_position():
    rs = load("trap")
    log = shrink_log(rs, 2, 0, [], alternate(["pick(1)", "pick(3)", "pick(3)", "pick(1)", "pick(2)"]), var("armed"))
    g = rs.new_game(2, seed=0)
    for e in log:
        g.apply(e["action"])
    v = g.view(None)["vars"]
    legal = ", ".join(json.dumps(a.id) for a in g.legal_actions())
    pinned = [f"armed == {str(v['armed']).lower()}", f"moves == {v['moves']}", f"decider == {g.current_player}",
              f"legal == [{legal}]"]
    r = scenario_result("trap", as_scenario("armed", 2, 0, log, "armed", expect=pinned))
    assert r.passed, r.message
    # stating the invariant that is broken makes the scenario fail until the rules are fixed
    r = scenario_result("trap", as_scenario("armed", 2, 0, log, "armed", expect=[("not armed", "armed too early")]))
    assert not r.passed and "armed too early" in r.message
    r = scenario_result("trap", as_scenario("armed", 2, 0, log[:-1], "armed", expect=["not armed"]))
    assert r.passed, r.message


def test_explicit_chance_scenarios_force_the_outcomes():
    log = entries([(0, "careful"), (-1, "1"), (0, "careful"), (-1, "1"), (0, "risk"), (-1, "6")])
    text = as_scenario("push", 1, 0, log[:-1], "", expect=["rolls == 2", "last_roll == 1", "risky"])
    assert "  chance explicit\n" in text and '    chance "1"\n' in text
    assert scenario_result("push", text).passed
    r = scenario_result("push", as_scenario("push", 1, 0, log, "the 6 after a risk"))
    assert not r.passed and "division by zero" in r.message
    # the seed does not matter when every outcome is forced: a seed a rule file cannot write is left out
    text = as_scenario("push", 1, 2 ** 63, log[:-1], "", expect=["rolls == 2"])
    assert "seed 9223372036854775808: not needed" in text and scenario_result("push", text).passed


def test_sampled_chance_scenarios_use_the_seed():
    rs, seed, k = _sampled_push()
    got = shrink_log(rs, 1, seed, [], entries([(0, "risk")] * (k + 1)), division_by_zero)
    g = rs.new_game(1, seed=seed)
    for e in got[:-1]:
        g.apply(e["action"])
    last = g.view(None)["vars"]["last_roll"]
    text = as_scenario("push", 1, seed, got[:-1], "", expect=[f"last_roll == {last}", f"rolls == {k}"])
    assert "  chance sampled\n" in text
    assert scenario_result("push", text).passed
    r = scenario_result("push", as_scenario("push", 1, seed, got, "a 6 after a risk"))
    assert not r.passed and "division by zero" in r.message
    with pytest.raises(ShrinkError, match="cannot be written in a rule file"):
        as_scenario("push", 1, 2 ** 63, got, "")
    with pytest.raises(ShrinkError, match="explicit chance mode"):
        as_scenario("push", 1, 0, entries([(-1, "3")]), "", chance="sampled")


def test_rulelang_replay_confirms_the_shrunk_log_from_the_command_line(tmp_path):
    from tests.hostile.bounded import run_cli_bounded

    rs = load("trap")
    got = shrink_log(rs, 2, 5, [], alternate(["pick(1)", "pick(3)", "pick(2)", "pick(1)", "pick(3)", "pick(3)"]),
                     division_by_zero)
    assert got == alternate(["pick(2)", "pick(3)"])
    out = tmp_path / "shrunk.json"
    write_log(out, rs, 2, 5, [], got)
    r = run_cli_bounded(["replay", path("trap"), out], seconds=60)
    assert r.ok, r.explain()
    assert r.stdout.splitlines() == [
        "OK: 2 decisions replayed",
        f"note: the recorded game stopped with an error, reproduced at decision 2: {path('trap')}:18:7: "
        "division by zero (10 / 0) (in pick)"]


# ---------------------------------------------------------------------------------------------- fewer decisions
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


def broken_invariant(x):
    return not isinstance(x, Exception) and any(name == "never armed after three steps"
                                                for name, _, _ in x.check_invariants())


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_the_decisions_that_do_nothing_are_removed(backend):
    # The invariant breaks when the third step comes after the arming, or the arming after three steps:
    # it takes three steps and one arming, so no reproduction is shorter than four decisions, and every
    # one of the four is a deviation ("wait" is the first legal action). The log breaks it only at its
    # last decision, and replacing any step or the arming by "wait" loses it: shrinking by deviations
    # alone keeps all 18 decisions. Removing the waits leaves the four.
    rs = rulelang.loads(FUSE, name="fuse.rules")
    rs = rs if backend == "generated" else rs.with_backend(backend)
    log = alternate(["wait"] * 10 + ["step", "wait", "step", "wait", "wait", "arm", "wait", "step"])
    got = shrink_log(rs, 2, 0, [], log, broken_invariant)
    assert (got.original, got.prefix) == (18, 18)
    assert len(got) == 4 and sorted(actions(got)) == ["arm", "step", "step", "step"], got
    assert got.deviations == 4 and got.complete
    assert broken_invariant(got.outcome)


def test_a_shrunk_log_reproduces_at_its_end_and_not_before():
    rs = rulelang.loads(FUSE, name="fuse.rules")
    log = alternate(["wait", "step", "wait", "arm", "wait", "wait", "step", "wait", "step"])
    got = shrink_log(rs, 2, 0, [], log, broken_invariant)
    g = rs.new_game(2, seed=0)
    for k, e in enumerate(got):
        assert not broken_invariant(g), f"already broken after {k} decisions"
        g.apply(e["action"])
    assert broken_invariant(g) and len(got) == 4

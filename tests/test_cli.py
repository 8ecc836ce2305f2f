"""The command line, first against the fake "race" core of test_agents_simulate (patched into the
``rulelang`` package), then end to end against the real example games when the core exists."""
from __future__ import annotations

import json
from pathlib import Path
import os
import subprocess
import sys
import types

import pytest
from click.testing import CliRunner

import rulelang
from rulelang.cli import cli

try:  # the module pytest already imported (rootdir-relative "prepend" import mode)
    from test_agents_simulate import FakeGameError, FakeIllegal, fake_check, fake_load
except ImportError:  # tests/ is a package
    from tests.test_agents_simulate import FakeGameError, FakeIllegal, fake_check, fake_load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Patch the fake core into ``rulelang``; returns a function writing rule files."""
    monkeypatch.setattr(rulelang, "load", fake_load, raising=False)
    monkeypatch.setattr(rulelang, "check", fake_check, raising=False)
    monkeypatch.setattr(rulelang, "GameError", FakeGameError, raising=False)
    monkeypatch.setattr(rulelang, "IllegalAction", FakeIllegal, raising=False)

    def write(text="race 10", name="race.rules"):
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text + "\n")
        return str(p)

    return write


def run(*args, input=None):
    result = CliRunner().invoke(cli, [str(a) for a in args], input=input)
    assert "Traceback" not in result.output
    return result


# --- check --------------------------------------------------------------------------------------

def test_check_clean_warning_and_broken(fake):
    ok, warn, bad = fake("race 10"), fake("race warn", "w.rules"), fake("race broken warn", "b.rules")
    r = run("check", ok)
    assert r.exit_code == 0 and r.stdout.strip() == f"{ok}: 0 errors, 0 warnings"
    r = run("check", warn)
    assert r.exit_code == 0 and f"{warn}:1:1: warning[W100]: a warning" in r.stdout
    assert r.stdout.strip().endswith(f"{warn}: 0 errors, 1 warning")
    r = run("check", ok, bad)
    assert r.exit_code == 1
    assert f"{bad}:1:6: error[E201]: unknown name 'broken'" in r.stdout
    assert "^^^^^^" in r.stdout and f"{bad}: 1 error, 1 warning" in r.stdout


def test_check_json_and_placeholders(fake):
    ok, bad = fake("race 10"), fake("race broken", "b.rules")
    r = run("check", "--json", ok, bad)
    assert r.exit_code == 1
    items = json.loads(r.stdout)
    assert [(d["path"], d["code"], d["severity"]) for d in items] == [(bad, "E201", "error")]
    r = run("check", "--placeholders", ok)
    assert r.exit_code == 0
    assert f"{ok}:1:6: placeholder: target 10 (invented)" in r.stdout
    assert "1 placeholder" in r.stdout
    r = run("check", "--json", "--placeholders", ok)
    assert json.loads(r.stdout)[0]["code"] == "placeholder"


def test_check_missing_file_is_one_line(fake, tmp_path):
    missing = tmp_path / "nope.rules"
    r = run("check", missing)
    assert r.exit_code == 1
    assert r.stderr.strip() == f"rulelang: {missing}: cannot read file: no such file"
    assert r.stdout == ""
    r = run("check", "--json", missing)
    assert r.exit_code == 1 and json.loads(r.stdout)[0]["code"] == "E000"  # the fake's check raises OSError
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run("check", empty)  # a folder is its *.rules files; none is a one-line failure
    assert r.exit_code == 1 and r.stderr.strip() == f"rulelang: {empty}: no .rules files in this folder"


def test_usage_error_exit_2():
    assert run("check").exit_code == 2
    assert run("frobnicate").exit_code == 2


# --- play ---------------------------------------------------------------------------------------

def test_play_narrates_and_finishes(fake):
    path = fake()
    r = run("play", path, "--players", 2, "--seed", 5)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "race: 2 players, seed 5"
    assert lines[1].startswith("chance: roll(")
    assert lines[2] in ("P0 (random): add 1", "P0 (random): add 2")
    assert any(line.startswith("Game over after ") and "reached_target" in line for line in lines)
    assert any(line.startswith("Winner: P") for line in lines)
    assert run("play", path, "--players", 2, "--seed", 5).stdout == r.stdout


def test_play_json_and_agents(fake):
    path = fake()
    r = run("play", path, "--json", "--agents", "first")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["players"] == 2 and data["end_reason"] == "reached_target"
    assert data["decisions"] == len(data["log"]) and data["winners"] and data["error"] is None
    assert all(e["action"] == "add(1)" for e in data["log"] if e["player"] >= 0)
    r = run("play", path, "--players", 3, "--variant", "shared", "--agents", "first")
    assert "Winners (shared): P0, P1, P2" in r.stdout


def test_play_human(fake):
    path = fake()
    r = run("play", path, "--agents", "human,first", input="2\n" * 20)
    assert r.exit_code == 0
    assert "P0 (human): add 2" in r.stdout and "P1 (first): add 1" in r.stdout
    assert "1. add 1" in r.stdout
    r = run("play", path, "--agents", "human", input="")
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines()[-1] == (
        "rulelang: game error after 1 decision: P0: end of input while waiting for a choice")
    r = run("play", path, "--agents", "human", "--json", input="1\n" * 20)
    assert r.exit_code == 0 and json.loads(r.stdout)["decisions"] > 0 and "1. add 1" in r.stderr


def test_play_bad_arguments(fake):
    path = fake()
    r = run("play", path, "--players", 5)
    assert r.exit_code == 1 and r.stderr.strip() == "rulelang: race is played by 2, 3 players, not 5"
    r = run("play", path, "--agents", "random,random,random")
    assert r.exit_code == 2 and "3 agents for 2 players" in r.stderr
    r = run("play", path, "--agents", "deep_blue")
    assert r.exit_code == 2 and "unknown agent 'deep_blue'" in r.stderr
    r = run("play", fake("race broken", "b.rules"))
    assert r.exit_code == 1 and "error[E201]" in r.stderr and " | " in r.stderr
    r = run("play", path + ".missing")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1


def test_play_game_error_is_one_line_and_logged(fake, tmp_path):
    path = fake()
    log = tmp_path / "err.json"
    r = run("play", path, "--variant", "trap", "--agents", "first", "--log", log)  # 0/1 +1+1+1+1+1+1 hits 7
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines()[-1].startswith("rulelang: game error after ")
    assert r.stderr.strip().endswith("race.rules:1:1: the counter hit the trap")
    data = json.loads(log.read_text())
    assert data["error"] and data["final_sha256"] is None
    # the fake core leaves the failing decision out of its log (the real one logs it, and replay reproduces
    # the error there: tests/test_replay_outcomes.py): a log whose error does not happen again is refused
    r = run("replay", path, log)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1
    assert "the log records the error" in r.stderr and "did not stop with an error" in r.stderr


# --- play --log / replay --------------------------------------------------------------------------

@pytest.mark.parametrize("chance", ["sampled", "explicit"])
def test_log_and_replay(fake, tmp_path, chance):
    path = fake()
    log = tmp_path / "game.json"
    r = run("play", path, "--seed", 11, "--log", log, "--chance", chance)
    assert r.exit_code == 0
    data = json.loads(log.read_text())
    assert data["rules"] == path and data["players"] == 2 and data["seed"] == 11
    assert data["variants"] == [] and len(data["final_sha256"]) == 64
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    r = run("replay", path, log)
    assert r.exit_code == 0
    assert r.stdout.strip() == f"OK: {len(data['log'])} decisions replayed, final state verified"

    bad = dict(data, log=[dict(e) for e in data["log"]])
    step = next(i for i, e in enumerate(bad["log"]) if e["player"] >= 0)
    bad["log"][step]["action"] = "add(9)"
    log.write_text(json.dumps(bad))
    r = run("replay", path, log)
    assert r.exit_code == 1
    assert r.stderr.strip() == (f"rulelang: replay failed at decision {step + 1} (P0: add(9)): "
                                "'add(9)' is not legal now")

    log.write_text(json.dumps(dict(data, final_sha256="0" * 64)))
    r = run("replay", path, log)
    assert r.exit_code == 1 and "final state differs" in r.stderr


def test_replay_bad_logs(fake, tmp_path):
    path = fake()
    log = tmp_path / "x.json"
    log.write_text("{not json")
    r = run("replay", path, log)
    assert r.exit_code == 1 and r.stderr.strip() == f"rulelang: {log}: not a rulelang log: invalid JSON at line 1"
    log.write_text(json.dumps({"players": 2}))
    assert "missing seed, log" in run("replay", path, log).stderr
    log.write_text(json.dumps({"players": 2, "seed": 0, "log": [], "game": "chess"}))
    assert "the log is of game 'chess'" in run("replay", path, log).stderr
    r = run("replay", path, tmp_path / "none.json")
    assert r.exit_code == 1 and "cannot read log: no such file" in r.stderr


# --- simulate -----------------------------------------------------------------------------------

def test_simulate_json(fake):
    r = run("simulate", fake(), "--players", 2, "--games", 25, "--seed", 2, "--json")
    assert r.exit_code == 0
    s = json.loads(r.stdout)
    for key in ("games", "completed", "errors", "error_messages", "mean_decisions", "win_rate",
                "mean_score", "ended_by", "seconds"):
        assert key in s
    assert s["games"] == s["completed"] == 25 and len(s["win_rate"]) == 2
    assert r.stderr == ""


def test_simulate_table_and_errors(fake):
    path = fake()
    r = run("simulate", path, "--games", 10)
    assert r.exit_code == 0
    for text in ("completed", "mean decisions", "win rate", "mean score", "P1", "reached_target", "never"):
        assert text in r.stdout
    r = run("simulate", path, "--games", 30, "--variant", "trap")
    assert r.exit_code == 1 and "the counter hit the trap" in r.stdout
    r = run("simulate", path, "--games", 30, "--variant", "trap", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["errors"] > 0


# --- test ---------------------------------------------------------------------------------------

def test_test_command(fake, monkeypatch, tmp_path):
    import interpreter

    R = types.SimpleNamespace

    def run_path(path):
        if "broken" in open(path).read():
            fake_load(path)
        base = os.path.basename(path)
        out = [R(name=f"{base} ok", path=path, line=3, passed=True, message="")]
        if "fail" in base:
            out.append(R(name=f"{base} bad", path=path, line=7, passed=False, message="expected 1, got 2"))
        return out

    mod = types.SimpleNamespace(run_path=run_path)
    monkeypatch.setitem(sys.modules, "interpreter.scenarios", mod)
    monkeypatch.setattr(interpreter, "scenarios", mod, raising=False)
    good = fake("race 10", "suite/a.rules")
    fake("race 10", "suite/sub/b.rules")
    (tmp_path / "suite" / "notes.txt").write_text("not a rule file")
    r = run("test", os.path.dirname(good))
    assert r.exit_code == 0
    assert r.stdout.splitlines() == ["PASS a.rules ok", "PASS b.rules ok", "2 passed, 0 failed"]
    failing = fake("race 10", "fail.rules")
    r = run("test", good, failing)
    assert r.exit_code == 1
    assert f"FAIL {failing}:7 fail.rules bad: expected 1, got 2" in r.stdout
    assert r.stdout.splitlines()[-1] == "2 passed, 1 failed"
    r = run("test", fake("race broken", "b.rules"))
    assert r.exit_code == 1 and "error[E201]" in r.stdout and "0 passed, 1 failed" in r.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run("test", empty)
    assert r.exit_code == 1 and "no scenarios found" in r.stderr


# --- internal errors ----------------------------------------------------------------------------

def test_internal_error_is_one_line(fake, monkeypatch):
    def boom(path, variants=()):
        raise RuntimeError("oops\nsecond line")

    monkeypatch.setattr(rulelang, "load", boom)
    r = run("play", fake())
    assert r.exit_code == 3
    assert r.stderr == "rulelang: internal error: RuntimeError: oops\n"
    monkeypatch.setenv("RULELANG_DEBUG", "1")
    r = CliRunner().invoke(cli, ["play", fake()])
    assert isinstance(r.exception, RuntimeError)


def test_python_dash_m():
    r = subprocess.run([sys.executable, "-m", "rulelang", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and "simulate" in r.stdout


# --- end to end, with the real core ---------------------------------------------------------------

def _loads(path):
    try:
        rulelang.load(os.path.join(ROOT, path))
    except Exception:
        return False
    return True


EXAMPLES = [
    pytest.param(p, marks=pytest.mark.skipif(not _loads(p), reason=f"the core cannot load {p} yet"))
    for p in ("games/examples/connect4.rules", "games/examples/tictactoe.rules")
]
TICTACTOE = "games/examples/tictactoe.rules"
real = pytest.mark.skipif(not _loads(TICTACTOE), reason="the rulelang core is not available yet")


@pytest.fixture
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("path", EXAMPLES)
def test_real_check_play_replay(path, in_root, tmp_path):
    r = run("check", path)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1].startswith(f"{path}: 0 errors")
    log = tmp_path / "log.json"
    r = run("play", path, "--players", 2, "--seed", 3, "--log", log)
    assert r.exit_code == 0, r.output
    assert "P0 (random): " in r.stdout and "Game over after" in r.stdout
    r = run("replay", path, log)
    assert r.exit_code == 0, r.output
    assert "final state verified" in r.stdout
    data = json.loads(log.read_text())
    data["log"][2]["action"] = "nonsense(99)"
    log.write_text(json.dumps(data))
    r = run("replay", path, log)
    assert r.exit_code == 1 and r.stderr.startswith("rulelang: replay failed at decision 3 ")
    assert r.stderr.count("\n") == 1
    r = run("play", path, "--seed", 3, "--json", "--agents", "first")
    data = json.loads(r.stdout)
    assert r.exit_code == 0 and data["end_reason"] and data["decisions"] == len(data["log"])


@pytest.mark.parametrize("path", EXAMPLES)
def test_real_simulate(path, in_root):
    r = run("simulate", path, "--players", 2, "--games", 20, "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["completed"] == s["games"] == 20
    assert sum(s["ended_by"].values()) == 20
    r2 = run("simulate", path, "--players", 2, "--games", 20, "--json", "--workers", 2)
    s2 = json.loads(r2.stdout)
    for x in (s, s2):
        x.pop("seconds")
    assert s == s2
    r = run("simulate", path, "--games", 5)
    assert r.exit_code == 0 and "win rate" in r.stdout


@real
def test_real_check_broken_and_missing(in_root, tmp_path):
    bad = tmp_path / "broken.rules"
    bad.write_text(open(TICTACTOE).read() + "\nthis is not valid rulelang (\n")
    r = run("check", bad)
    assert r.exit_code == 1 and f"{bad}:" in r.stdout and ": error[" in r.stdout
    assert r.stdout.splitlines()[-1].startswith(f"{bad}: ")
    r = run("play", bad)
    assert r.exit_code == 1 and ": error[" in r.stderr
    r = run("play", tmp_path / "missing.rules")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "cannot read file" in r.stderr
    r = run("check", tmp_path / "missing.rules")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and r.stdout == ""
    r = run("check", "--json", tmp_path / "missing.rules")
    assert r.exit_code == 1 and json.loads(r.stdout)[0]["severity"] == "error"
    r = run("check", "--placeholders", TICTACTOE)
    assert r.exit_code == 0 and "placeholder" in r.stdout.splitlines()[-1]
    r = run("play", TICTACTOE, "--players", 3)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1


def _has_scenarios():
    try:
        from interpreter import scenarios

        return hasattr(scenarios, "run_path")
    except ImportError:
        return False


@real
@pytest.mark.skipif(not _has_scenarios(), reason="interpreter.scenarios is not available yet")
def test_real_test_command(in_root, tmp_path):
    r = run("test", "games/examples")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1].endswith(" passed, 0 failed")
    assert all(line.startswith("PASS ") for line in r.stdout.splitlines()[:-1])
    text = open(TICTACTOE).read()
    assert "expect winners == [0, 1]" in text
    bad = tmp_path / "ttt.rules"
    bad.write_text(text.replace("expect winners == [0, 1]", "expect winners == [0]"))
    r = run("test", bad)
    assert r.exit_code == 1
    assert any(line.startswith(f"FAIL {bad}:") for line in r.stdout.splitlines())
    assert r.stdout.splitlines()[-1].endswith(" passed, 1 failed")


# --- the command line's own errors (issue "Trust", part 6) ----------------------------------------

def test_version_from_package_metadata():
    from importlib.metadata import version

    r = run("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"rulelang {version('rulelang')}"


def test_empty_agent_name_is_a_usage_error(fake):
    path = fake()
    for spec in ("random,,", ",random", "random, ,first"):
        r = run("play", path, "--players", 3, "--agents", spec)
        assert r.exit_code == 2, (spec, r.output)
        assert r.stderr.count("\n") == 1 and "agent name is empty" in r.stderr


@real
def test_unknown_variant_is_a_usage_error_without_a_position(in_root):
    for command in (["check"], ["play", "--players", "2"], ["simulate", "--games", "1"]):
        r = run(*command, TICTACTOE, "--variant", "nosuch")
        assert r.exit_code == 2, (command, r.output)
        assert "'nosuch'" in r.stderr and "no variants" in r.stderr
        assert ":1:1:" not in r.output and "E106" not in r.output
    station = "games/station.rules"
    r = run("check", station, "--variant", "nosuch")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    for name in rulelang.load(station).variants:
        assert name in r.stderr


@real
def test_check_a_folder_checks_every_rule_file_below_it(in_root):
    r = run("check", "games/examples")
    assert r.exit_code == 0, r.output
    summaries = [line for line in r.stdout.splitlines() if ": 0 errors" in line]
    files = sorted(str(p.relative_to(ROOT)) for p in Path(ROOT, "games", "examples").rglob("*.rules"))
    assert len(files) >= 2
    assert summaries == [f"{f}: 0 errors, 0 warnings" for f in files]
    r = run("check", "--json", "games/examples")
    assert r.exit_code == 0 and json.loads(r.stdout) == []


@real
@pytest.mark.skipif(not _has_scenarios(), reason="interpreter.scenarios is not available yet")
def test_test_of_a_missing_file_is_a_file_error(in_root, tmp_path):
    missing = tmp_path / "nosuch.rules"
    r = run("test", missing)
    assert r.exit_code == 1
    assert r.stderr.strip() == f"rulelang: {missing}: cannot read file: no such file"
    assert "FAIL" not in r.stdout and "failed" not in r.stdout
    r = run("test", TICTACTOE, missing)  # the others still run; the exit code still says it
    assert r.exit_code == 1 and "cannot read file" in r.stderr
    assert r.stdout.splitlines()[-1].endswith(" passed, 0 failed")


@pytest.fixture
def ttt_log(in_root, tmp_path):
    log = tmp_path / "log.json"
    r = run("play", TICTACTOE, "--players", 2, "--seed", 3, "--log", log)
    assert r.exit_code == 0, r.output
    return log


def _replay_fails(log, *pieces):
    r = run("replay", TICTACTOE, log)
    assert r.exit_code == 1, r.output
    assert r.stderr.count("\n") == 1, r.stderr
    for piece in pieces:
        assert piece in r.stderr, r.stderr
    return r.stderr


@real
def test_replay_of_a_short_log_says_it_is_short(ttt_log):
    data = json.loads(ttt_log.read_text())
    data["log"] = data["log"][:3]
    ttt_log.write_text(json.dumps(data))
    err = _replay_fails(ttt_log, "short", "ends after 3 decisions")
    assert "diverged" not in err
    del data["final_sha256"]
    ttt_log.write_text(json.dumps(data))
    _replay_fails(ttt_log, "short")


@real
@pytest.mark.parametrize("player", [True, "1", 1.0, [1], None])
def test_replay_rejects_an_entry_with_a_wrong_player(ttt_log, player):
    data = json.loads(ttt_log.read_text())
    assert data["log"][1]["player"] == 1
    data["log"][1]["player"] = player
    ttt_log.write_text(json.dumps(data))
    _replay_fails(ttt_log, "decision 2")


@real
def test_replay_rejects_an_entry_of_the_other_player(ttt_log):
    data = json.loads(ttt_log.read_text())
    data["log"][1]["player"] = 0
    ttt_log.write_text(json.dumps(data))
    _replay_fails(ttt_log, "decision 2")


@real
@pytest.mark.parametrize("content", [
    bytes(range(256)) * 4,
    b"\x89PNG\r\n\x1a\n" + bytes(200),
    "{\"players\": 2}".encode("utf-16"),
])
def test_replay_of_a_binary_file_is_not_a_log(ttt_log, content):
    ttt_log.write_bytes(content)
    err = _replay_fails(ttt_log, "not a rulelang log")
    assert "codec" not in err and "utf-8" not in err.lower()


@real
@pytest.mark.parametrize("text", [
    '{"players": Infinity, "seed": 0, "log": []}',
    '{"players": 2, "seed": NaN, "log": []}',
    '{"players": 2, "seed": -Infinity, "log": []}',
    '{"players": 2, "seed": %s, "log": []}' % ("9" * 5000),
    '{"players": 2, "seed": 0, "log": [{"player": %s, "action": "x"}]}' % ("1" * 5000),
    '{"players": 2, "seed": 0, "log": %s}' % ("[" * 100_000 + "]" * 100_000),
    '{"players": 2, "seed": 0, "log": %s}' % ("{\"a\": " * 100_000 + "1" + "}" * 100_000),
    '{"players": 0, "seed": 0, "log": []}',
    '{"players": 2, "seed": 0, "log": [], "chance": ["x"]}',
])
def test_replay_of_a_hostile_log_is_one_line(ttt_log, text):
    ttt_log.write_text(text)
    err = _replay_fails(ttt_log, "not a rulelang log")
    assert "internal error" not in err


@real
def test_replay_refuses_a_log_of_too_many_values_before_parsing_it(ttt_log, monkeypatch):
    # 3.3 MB of text that json would turn into 1.1 million lists: refused by counting, never parsed
    ttt_log.write_text('{"players": 2, "seed": 0, "log": [%s]}' % ",".join(["[]"] * 1_100_000))
    monkeypatch.setattr(json, "loads", lambda *a, **k: pytest.fail("a log over the limit was parsed"))
    err = _replay_fails(ttt_log, "not a rulelang log")
    assert "more than 1,000,000 values" in err


@real
def test_root_option_widens_where_extends_may_reach(in_root, tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "house").mkdir()
    (tmp_path / "base" / "ttt.rules").write_text(open(TICTACTOE).read())
    house = tmp_path / "house" / "h.rules"
    house.write_text('extends "../base/ttt.rules"\n')
    r = run("check", house)
    assert r.exit_code == 1 and "error[E015]" in r.stdout
    r = run("check", "--root", tmp_path, house)
    assert r.exit_code == 0, r.output
    r = run("play", "--root", tmp_path, house, "--players", 2, "--json")
    assert r.exit_code == 0, r.output


@real
def test_play_without_a_seed_takes_a_large_one_from_the_system_and_logs_it(in_root, tmp_path):
    """A game without --seed must not be seed 0 (a seat could try small seeds against what it sees);
    the seed used is printed and logged, so the game replays."""
    seeds = set()
    for i in range(3):
        log = tmp_path / f"g{i}.json"
        r = run("play", "games/examples/connect4.rules", "--log", log)
        assert r.exit_code == 0, r.output
        seed = json.loads(log.read_text())["seed"]
        assert f"seed {seed}" in r.stdout.splitlines()[0]
        seeds.add(seed)
        assert run("replay", "games/examples/connect4.rules", log).exit_code == 0
    assert len(seeds) == 3 and min(seeds) > 2 ** 20

"""`rulelang replay` compares every outcome a log records (end reason, error, decisions, scores, winners,
returns, final state hash) with what the replay reproduces, and refuses a log that claims what it did not
reproduce, in one line naming the first disagreement. `rulelang play` treats a score, tiebreak or payoff
that fails as a rules error: the positioned message, exit 1, and the log written (and replayed)."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from rulelang.cli import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KUHN = os.path.join(ROOT, "games", "examples", "kuhn_poker.rules")
STATION = os.path.join(ROOT, "games", "station.rules")


def run(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in r.output
    return r


def played(rules, tmp_path, *extra, name="game.json"):
    log = tmp_path / name
    r = run("play", rules, "--log", log, *extra)
    return r, log


def replay_fails(rules, log, data, *pieces):
    log.write_text(json.dumps(data))
    r = run("replay", rules, log)
    assert r.exit_code == 1, r.output
    assert r.stderr.count("\n") == 1, r.stderr
    for piece in pieces:
        assert piece in r.stderr, r.stderr
    return r.stderr


@pytest.fixture(scope="module")
def kuhn_log(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kuhn")
    r, log = played(KUHN, tmp, "--seed", 4)
    assert r.exit_code == 0, r.output
    return json.loads(log.read_text())


def test_an_honest_log_replays(kuhn_log, tmp_path):
    assert kuhn_log["returns"] == [float(x) for x in kuhn_log["scores"]]  # the payoff: the chips won
    log = tmp_path / "k.json"
    log.write_text(json.dumps(kuhn_log))
    r = run("replay", KUHN, log)
    assert r.exit_code == 0 and "final state verified" in r.stdout, r.output


@pytest.mark.parametrize("key", ["winners", "scores", "returns", "end_reason", "decisions"])
def test_a_falsified_outcome_is_refused_naming_it(kuhn_log, tmp_path, key):
    d = dict(kuhn_log)
    winner = d["winners"][0]
    d[key] = {"winners": [1 - winner], "scores": list(reversed(d["scores"])),
              "returns": list(reversed(d["returns"])),
              "end_reason": "fold" if d["end_reason"] == "showdown" else "showdown",
              "decisions": d["decisions"] + 1}[key]
    replay_fails(KUHN, tmp_path / "k.json", d, "replay diverged", f"the log records {key} ")


def test_no_winner_and_a_seat_number_as_true_are_claims_too(kuhn_log, tmp_path):
    replay_fails(KUHN, tmp_path / "k.json", dict(kuhn_log, winners=[]), "winners []")
    if kuhn_log["winners"] == [1]:
        replay_fails(KUHN, tmp_path / "k.json", dict(kuhn_log, winners=[True]), "winners [true]")


def test_an_error_the_game_did_not_have_is_refused(kuhn_log, tmp_path):
    replay_fails(KUHN, tmp_path / "k.json", dict(kuhn_log, error="anything"),
                 'the log records the error "anything", but the game ended without one')
    replay_fails(KUHN, tmp_path / "k.json", dict(kuhn_log, unfinished=True),
                 "the log says the game is unfinished, but it ended")


def test_a_finished_game_without_a_final_hash_is_not_verified(kuhn_log, tmp_path):
    d = dict(kuhn_log)
    del d["final_sha256"]
    replay_fails(KUHN, tmp_path / "k.json", d, "could not verify the end", "final_sha256")
    replay_fails(KUHN, tmp_path / "k.json", dict(kuhn_log, final_sha256=None), "could not verify the end")
    replay_fails(KUHN, tmp_path / "k.json", dict(kuhn_log, final_sha256="0" * 64), "final state differs")


@pytest.fixture(scope="module")
def station_log(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("station")
    r, log = played(STATION, tmp, "--seed", 2)
    assert r.exit_code == 0, r.output
    return json.loads(log.read_text())


def test_a_cut_log_claiming_an_error_is_refused(station_log, tmp_path):
    d = dict(station_log, log=station_log["log"][:5], error="anything")
    del d["final_sha256"]
    replay_fails(STATION, tmp_path / "s.json", d, 'records the error "anything"', "did not stop with an error",
                 "after 5 decisions")
    d = dict(station_log, log=station_log["log"][:5])
    replay_fails(STATION, tmp_path / "s.json", d, "the log is short", "ends after 5 decisions")


def test_a_log_that_says_the_game_is_unfinished(station_log, tmp_path):
    d = dict(station_log, log=station_log["log"][:5], unfinished=True, end_reason=None, scores=None, winners=[],
             returns=None, final_sha256=None, decisions=5)
    log = tmp_path / "s.json"
    log.write_text(json.dumps(d))
    r = run("replay", STATION, log)
    assert r.exit_code == 0 and "unfinished, as the log says" in r.stdout, r.output
    replay_fails(STATION, log, dict(d, winners=[0]), "the log records winners [0], the replay gives []")
    replay_fails(STATION, log, dict(d, final_sha256="0" * 64), "final state differs")


def test_play_cut_by_the_decision_limit_logs_an_unfinished_game(tmp_path):
    r, log = played(STATION, tmp_path, "--seed", 2, "--max-decisions", 7)
    assert r.exit_code == 1 and "did not end within 7 decisions" in r.stderr
    d = json.loads(log.read_text())
    assert d["unfinished"] is True and d["final_sha256"] and d["winners"] == [] and d["scores"] is None
    r = run("replay", STATION, log)
    assert r.exit_code == 0 and r.stdout.splitlines() == [
        "OK: 7 decisions replayed, final state verified",
        "note: the recorded game stopped with an error: the game did not end within 7 decisions"], r.output
    replay_fails(STATION, log, dict(d, log=d["log"][:-1], decisions=d["decisions"] - 1), "final state differs")


# ---------------------------------------------------------------- errors of the rules at the end
END_ERRORS = {
    "score": ("score p = xs[p + 3]", "while scoring"),
    "tiebreak": ("tiebreak p = xs[p + 3]\nscore p = 0", "while breaking ties"),
    "payoff": ("payoff p = xs[p + 3]\nscore p = 0", "while computing the payoffs"),
}


@pytest.mark.parametrize("what", sorted(END_ERRORS))
def test_a_failing_score_tiebreak_or_payoff_is_a_rules_error(tmp_path, what):
    text, words = END_ERRORS[what]
    rules = tmp_path / "bad.rules"
    rules.write_text('game "Bad end" { players 2 }\nvar xs: list[int] = [1]\n'
                     'action go { effect { end_game "done" } }\nflow { turn 0 { offer [go] to 0 } }\n' + text + "\n")
    r, log = played(rules, tmp_path, "--seed", 1)
    assert r.exit_code == 1, r.output  # the rules' error, not an internal error (3)
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("rulelang: game error after 1 decision: ") and f"bad.rules:5:1: {words}: " in last, last
    assert "internal error" not in r.stderr
    d = json.loads(log.read_text())
    assert f"bad.rules:5:1: {words}: position 3 is outside a list of 1" in d["error"]
    assert d["end_reason"] == "done" and d["scores"] is None and d["winners"] == [] and d["final_sha256"]
    r = run("replay", rules, log)
    assert r.exit_code == 0 and "failed as it records" in r.stdout, r.output
    replay_fails(rules, log, dict(d, error=None), "the game fails at its end, but the log records no error")
    replay_fails(rules, log, dict(d, error="bad.rules:5:1: something else"), "with another error")


def test_a_run_time_error_at_a_decision_is_reproduced(tmp_path):
    rules = tmp_path / "boom.rules"
    rules.write_text('game "Boom" { players 2 }\nvar xs: list[int] = [1]\n'
                     'action go { effect { xs[5] = 1 } }\nflow { turn 0 { offer [go] to 0 } }\nscore p = 0\n')
    r, log = played(rules, tmp_path, "--seed", 1)
    assert r.exit_code == 1 and "boom.rules:3:" in r.stderr
    d = json.loads(log.read_text())
    assert d["error"] and d["final_sha256"] is None and d["decisions"] == 1
    r = run("replay", rules, log)
    assert r.exit_code == 0 and "reproduced at decision 1" in r.stdout, r.output
    replay_fails(rules, log, dict(d, winners=[0]), "the log records winners [0], the replay gives []")
    replay_fails(rules, log, dict(d, scores=[0, 0]), "the log records scores [0, 0], the replay gives null")
    replay_fails(rules, log, dict(d, end_reason="done"), "the log records end_reason")

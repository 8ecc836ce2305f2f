"""`rulelang compare` and interpreter/compare.py: the statistics against published values, that a
real difference is flagged and identical sides are not, draws as draws, restricted play, and the
command on tic-tac-toe, connect four, Kuhn poker and Station (few games)."""
from __future__ import annotations

import json
import math
import os
import shutil
import sys

import pytest

pytest.importorskip("scipy")  # the `analysis` extra; CI installs it through `test`

from click.testing import CliRunner

from interpreter import compare as cmp
from rulelang.cli import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = os.path.join(ROOT, "games")
TTT = os.path.join(GAMES, "examples", "tictactoe.rules")
C4 = os.path.join(GAMES, "examples", "connect4.rules")
KUHN = os.path.join(GAMES, "examples", "kuhn_poker.rules")
STATION = os.path.join(GAMES, "station.rules")


def row(index, *, winners=(0,), draw=False, ok=True, scores=None, decisions=10, actions=None, seed=None,
        restricted=None, end="won", error=None, branching=3.0, players=2):
    return {"index": index, "seed": index if seed is None else seed, "players": players, "variants": [],
            "agents": ["random"] * players, "restricted_seat": restricted, "ok": ok,
            "winners": list(winners) if ok else [], "draw": draw, "scores": scores, "decisions": decisions,
            "rounds": None, "end_reason": end if ok else None, "error": error, "internal": False,
            "actions": actions if actions is not None else {"move": decisions}, "branching": branching}


def close(a, b, tol=5e-5):
    return a is not None and abs(a - b) <= tol


# --- intervals against published values -------------------------------------------------------

@pytest.mark.parametrize("k, n, low, high", [
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3
    # (the Wilson score interval without continuity correction)
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
    (29, 29, 0.8830, 1.0),
])
def test_wilson_interval_matches_newcombe_table(k, n, low, high):
    lo, hi = cmp.wilson_interval(k, n)
    assert close(lo, low) and close(hi, high)


@pytest.mark.parametrize("k1, n1, k2, n2, low, high", [
    # Newcombe (1998), "Interval estimation for the difference between independent proportions",
    # Table II, method 10 (hybrid score): examples (a), (b), (d), (g)
    (48, 80, 56, 70, 0.0524, 0.3339),
    (3, 10, 9, 10, 0.1705, 0.8090),
    (0, 29, 5, 56, -0.0381, 0.1926),
    (0, 20, 10, 10, 0.6791, 1.0),
])
def test_newcombe_difference_interval_matches_table(k1, n1, k2, n2, low, high):
    lo, hi = cmp.newcombe_interval(k1, n1, k2, n2)
    assert close(lo, low) and close(hi, high)


def test_no_games_no_interval():
    assert cmp.wilson_interval(0, 0) == (None, None)
    assert cmp.newcombe_interval(0, 0, 1, 2) == (None, None)


# --- the tests of significance ----------------------------------------------------------------

def test_fisher_exact_lady_tasting_tea():
    # Fisher's tea-tasting table [[3, 1], [1, 3]]: two-sided p = 17/35
    test, p, tested = cmp._rate_test(None, [1, 1, 1, 0], [1, 0, 0, 0])
    assert test == "Fisher exact" and tested and close(p, 17 / 35, 1e-9)


def test_exact_mcnemar_on_discordant_pairs():
    # 1 pair where only A succeeds, 9 where only B does: p = 2 * P(X <= 1), X ~ Bin(10, 1/2) = 22/1024
    pairs = [(1, 0)] + [(0, 1)] * 9 + [(1, 1)] * 30 + [(0, 0)] * 5
    test, p, tested = cmp._rate_test(pairs, [x for x, _ in pairs], [y for _, y in pairs])
    assert test == "McNemar exact" and tested and close(p, 22 / 1024, 1e-12)


def test_agreeing_pairs_are_not_a_test():
    pairs = [(1, 1), (0, 0)] * 10
    test, p, tested = cmp._rate_test(pairs, [x for x, _ in pairs], [y for _, y in pairs])
    assert p == 1.0 and not tested


def test_benjamini_hochberg_adjustment():
    # BH by hand: sorted p 0.01, 0.03, 0.04, 0.5 (m = 4): q = min over j >= i of p_j * m / j
    tests = [dict(p=p, tested=True) for p in (0.01, 0.04, 0.03, 0.5)] + [dict(p=1.0, tested=False)]
    cmp._adjust(tests, 0.05)
    assert [round(t["q"], 4) for t in tests] == [0.04, 0.0533, 0.0533, 0.5, 1.0]
    assert [t["significant"] for t in tests] == [True, False, False, False, False]


def test_action_frequencies_are_corrected_apart_from_the_game_measures():
    game = [dict(p=0.01, tested=True, group="overview"), dict(p=0.04, tested=True, group="wins")]
    actions = [dict(p=0.5, tested=True, group="actions") for _ in range(50)]
    tests = game + actions
    cmp._adjust(tests, 0.05)
    # within the game's family (m = 2): q = 0.02 and 0.04; 50 unrelated action tests change nothing
    assert [round(t["q"], 4) for t in game] == [0.02, 0.04]
    assert all(t["significant"] for t in game) and not any(t["significant"] for t in actions)


def test_wilcoxon_and_mann_whitney_are_used_by_pairing():
    a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    b = [x + 1.5 for x in a]
    assert cmp._location_test(list(zip(a, b)), a, b)[0] == "Wilcoxon signed-rank"
    name, p, tested = cmp._location_test(None, a, b)
    assert name == "Mann-Whitney U" and tested and 0 < p < 1


# --- compare(): identical sides, a real difference ---------------------------------------------

def _side(n, p0_wins, *, seed_offset=0, decisions=10):
    """``n`` two-player games where P0 wins the first ``p0_wins`` and P1 the rest."""
    return [row(i, winners=(0,) if i < p0_wins else (1,), seed=i + seed_offset, decisions=decisions + i % 3,
                scores=[1, 0] if i < p0_wins else [0, 1]) for i in range(n)]


def test_identical_sides_flag_nothing():
    rows = _side(200, 120)
    c = cmp.compare(rows, [dict(r) for r in rows])
    assert c["paired"]
    assert c["significant"] == 0 and not any(t["significant"] for t in c["tests"])
    assert c["tests_made"] == {"game": 0, "actions": 0}  # every measure agrees game by game


def test_a_real_difference_is_flagged():
    a = _side(200, 100)
    b = _side(200, 160)
    c = cmp.compare(a, b, labels=("base", "house"))
    t = {t["measure"]: t for t in c["tests"]}
    assert t["wins[0]"]["significant"] and t["wins[1]"]["significant"]
    assert t["wins[0]"]["test"] == "McNemar exact"
    assert close(t["wins[0]"]["difference"], 0.3, 1e-12)
    assert t["wins[0]"]["low"] > 0  # the interval excludes no difference
    assert not t["decisions"]["significant"]  # the same lengths
    assert c["sides"][0]["label"] == "base" and c["sides"][1]["wins"][0]["rate"] == 0.8


def test_a_small_random_difference_is_not_flagged():
    a = _side(200, 100)
    b = _side(200, 104)
    c = cmp.compare(a, b)
    assert not {t["measure"]: t for t in c["tests"]}["wins[0]"]["significant"]


def test_different_seeds_are_compared_unpaired():
    a = _side(200, 100)
    b = _side(200, 160, seed_offset=1000)
    c = cmp.compare(a, b)
    t = {t["measure"]: t for t in c["tests"]}
    assert not c["paired"] and any("unpaired" in n for n in c["notes"])
    assert t["wins[0]"]["test"] == "Fisher exact" and t["wins[0]"]["significant"]
    assert t["decisions"]["test"] == "Mann-Whitney U"


def test_draws_are_draws_not_wins():
    # tic-tac-toe's "board full": every seat is a winner of a draw; it must not count as half a win
    rows = [row(i, winners=(0, 1), draw=True, end="board full") for i in range(10)]
    rows += [row(10 + i, winners=(0,), end="three in a row") for i in range(10)]
    s = cmp.side_summary(rows, 2)
    assert s["draws"]["count"] == 10 and s["draws"]["rate"] == 0.5
    assert [w["count"] for w in s["wins"]] == [10, 0]
    assert s["end_reasons"] == {"board full": 10, "three in a row": 10}


def test_shared_victory_short_of_all_seats_is_a_win_for_each():
    rows = [row(0, winners=(0, 1), players=3, scores=[5, 5, 1])]
    s = cmp.side_summary(rows, 3)
    assert [w["count"] for w in s["wins"]] == [1, 1, 0] and s["draws"]["count"] == 0


def test_margin_is_winner_minus_runner_up():
    assert cmp.margin(row(0, scores=[3, 10, 7], winners=(1,), players=3)) == 3
    assert cmp.margin(row(0, scores=[4, 4], winners=(0, 1), draw=True)) == 0
    assert cmp.margin(row(0, scores=None)) is None
    assert cmp.margin(row(0, ok=False, scores=[1, 2])) is None


def test_games_cut_by_the_limit_are_counted_apart_from_other_errors():
    rows = [row(0), row(1, ok=False, decisions=50, error="the game did not end within 50 decisions"),
            row(2, ok=False, decisions=3, error="rule error at x.rules:3:1: division by zero")]
    s = cmp.side_summary(rows, 2, max_decisions=50)
    assert s["completion"]["count"] == 1 and s["cut_by_limit"]["count"] == 1 and s["errors"] == 1
    assert s["decisions"]["n"] == 1  # distributions are over completed games


def test_describe_and_shared_histogram():
    a, b = [5, 7, 7, 9], [6, 6, 8]
    edges = cmp.histogram_edges(a, b)
    assert edges == [4.5, 5.5, 6.5, 7.5, 8.5, 9.5]  # one bin per whole number
    d = cmp.describe(a, edges)
    assert d["histogram"]["counts"] == [1, 0, 2, 0, 1]
    assert d["mean"] == 7 and d["median"] == 7 and d["min"] == 5 and d["max"] == 9
    assert close(d["sd"], math.sqrt(8 / 3), 1e-12)
    assert cmp.describe([]) is None


def test_an_outlying_value_does_not_ask_for_millions_of_bins():
    edges = cmp.histogram_edges([0, 1, 1, 1, 2, 2, 3] * 50 + [1e15])
    assert 11 <= len(edges) <= cmp.MAX_BINS + 1 and edges[0] == 0 and edges[-1] == 1e15


def test_action_frequencies_per_game():
    a = [row(i, actions={"move": 4, "pass": 1}) for i in range(4)]
    b = [row(i, actions={"move": 5}) for i in range(4)]
    c = cmp.compare(a, b)
    assert c["sides"][0]["actions"] == {"move": {"per_game": 4.0, "games_with": 4},
                                        "pass": {"per_game": 1.0, "games_with": 4}}
    assert c["sides"][1]["actions"] == {"move": {"per_game": 5.0, "games_with": 4}}
    measures = {t["measure"] for t in c["tests"]}
    assert {"actions[move]", "actions[pass]"} <= measures


def test_restricted_play_measures_the_seat_that_loses_the_action():
    n = 100
    a = [row(i, winners=(i % 2,)) for i in range(n)]  # the seat i % 2 always wins unrestricted
    b = [row(i, winners=(1 - i % 2,), restricted=i % 2) for i in range(n)]  # ... and always loses restricted
    c = cmp.compare(a, b, restrict="move")
    r = c["restricted"]
    assert r["unrestricted"]["rate"] == 1.0 and r["restricted"]["rate"] == 0.0
    assert r["weight"] == 1.0 and r["significant"] and r["test"] == "McNemar exact"
    assert r["fair_share"] == 0.5 and r["games"] == n


def test_restricted_play_without_effect_is_not_significant():
    a = [row(i, winners=(i % 2,)) for i in range(50)]
    b = [dict(r, restricted_seat=r["index"] % 2) for r in a]
    r = cmp.compare(a, b, restrict="move")["restricted"]
    assert r["weight"] == 0.0 and not r["significant"]


def test_the_comparison_is_json_and_deterministic():
    a, b = _side(120, 60), _side(120, 80)
    one = json.dumps(cmp.compare(a, b), sort_keys=True, allow_nan=False)
    two = json.dumps(cmp.compare(a, b), sort_keys=True, allow_nan=False)
    assert one == two


def test_missing_scipy_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(cmp.MissingAnalysis, match=r"pip install 'rulelang\[analysis\]'"):
        cmp.compare(_side(4, 2), _side(4, 2))


# --- the command ------------------------------------------------------------------------------

def invoke(args, cwd=None):
    runner = CliRunner()
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        return runner.invoke(cli, ["compare", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def one_line_error(result, code):
    assert result.exit_code == code, result.output
    err = result.stderr.strip()
    assert err.startswith("rulelang: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_station_friendly_variant_json(tmp_path):
    r = invoke([STATION, "--variant", "friendly", "--players", "3", "--games", "3", "--json",
                "--out", str(tmp_path / "rows.jsonl")])
    assert r.exit_code == 0, r.output
    c = json.loads(r.stdout)
    assert c["format"] == "rulelang-compare" and c["paired"] and c["players"] == 3
    assert [s["label"] for s in c["sides"]] == ["base", "friendly"]
    assert c["variants"] == [[], ["friendly"]] and c["report"] is None  # --json: no report unless asked
    assert len(c["sides"][0]["wins"]) == 3 and c["sides"][0]["games"] == 3
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [r["side"] for r in rows] == ["A"] * 3 + ["B"] * 3
    assert [r["seed"] for r in rows[:3]] == [r["seed"] for r in rows[3:]]  # the same seeds on both sides
    assert rows[3]["variants"] == ["friendly"] and rows[0]["variants"] == []


def test_house_rule_file_against_its_base_is_flagged(tmp_path):
    # A house rule that ends connect four when 20 discs are down: shorter games, many more draws.
    shutil.copy(C4, tmp_path / "connect4.rules")
    (tmp_path / "house.rules").write_text('extends "connect4.rules"\n\n'
                                          'override ending "grid full" when count(discs) >= 20\n')
    report = tmp_path / "house.html"
    r = invoke([str(tmp_path / "connect4.rules"), "--against", str(tmp_path / "house.rules"), "--games", "60",
                "--json", "--html", str(report)])
    assert r.exit_code == 0, r.output
    c = json.loads(r.stdout)
    assert c["report"] == str(report) and report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    t = {t["measure"]: t for t in c["tests"]}
    assert [s["label"] for s in c["sides"]] == ["connect4.rules", "house.rules"]
    assert t["decisions"]["significant"] and t["decisions"]["difference"] < 0
    assert t["draws"]["significant"] and t["draws"]["difference"] > 0
    assert t["end_reasons"]["significant"]
    assert c["sides"][1]["decisions"]["max"] <= 20


def test_restricting_bet_in_kuhn_poker_costs_the_seat_games():
    # Denying a poker player the bet leaves only check/call/fold: it can no longer win by a fold.
    r = invoke([KUHN, "--restrict", "bet", "--games", "200", "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)["restricted"]
    assert res["action"] == "bet" and res["significant"]
    assert res["restricted"]["rate"] < res["unrestricted"]["rate"] and res["low"] > 0


def test_terminal_summary_and_default_report(tmp_path):
    r = invoke([TTT, "--restrict", "place", "--games", "30"], cwd=tmp_path)
    assert r.exit_code == 0, r.output
    out = r.stdout
    for title in ("overview", "win rate by seat", "ended by", "actions per game", "restricted play"):
        assert title in out
    assert "report: compare-report.html" in out
    assert (tmp_path / "compare-report.html").stat().st_size > 100_000
    # tic-tac-toe has one action: denying it changes nothing, and nothing is flagged
    assert "(0 flagged)" in out


def test_no_html(tmp_path):
    r = invoke([TTT, "--restrict", "place", "--games", "3", "--no-html"], cwd=tmp_path)
    assert r.exit_code == 0 and not (tmp_path / "compare-report.html").exists()


@pytest.mark.parametrize("args, code, words", [
    ([TTT], 2, "say what to compare"),
    ([TTT, "--variant", "nope"], 2, "no such variant"),
    ([TTT, "--restrict", "fly"], 2, "has no such action"),
    ([TTT, "--restrict", "place", "--against", C4], 2, "not both"),
    ([TTT, "--against", "/no/such/file.rules"], 1, "cannot read"),
    ([TTT, "--restrict", "place", "--players", "3"], 1, "played by 2 players"),
    ([TTT, "--restrict", "place", "--workers", "0"], 2, "--workers"),
    ([TTT, "--restrict", "place", "--seed", str(2 ** 64)], 2, "--seed"),
    ([TTT, "--restrict", "place", "--agents", "random,,random"], 2, "--agents"),
    ([TTT, "--restrict", "place", "--html", "/no/such/folder/r.html"], 1, "cannot write the report"),
    ([TTT, "--restrict", "place", "--out", "/no/such/folder/rows.jsonl"], 1, "cannot write the rows"),
    ([TTT, "--restrict", "place", "--html", "x.html", "--no-html"], 2, "not both"),
])
def test_errors_are_one_line(args, code, words, tmp_path):
    err = one_line_error(invoke(args, cwd=tmp_path), code)
    assert words in err
    assert not (tmp_path / "compare-report.html").exists()


def test_a_rule_error_is_a_positioned_diagnostic(tmp_path):
    bad = tmp_path / "bad.rules"
    bad.write_text('extends "nothere.rules"\n')
    r = invoke([TTT, "--against", str(bad)], cwd=tmp_path)
    assert r.exit_code == 1 and "bad.rules:1:" in r.stderr and "Traceback" not in r.stderr


def test_names_from_the_rules_are_printed_as_they_are(capsys):
    # an end reason is any string of the rule file: never rich markup, never a terminal escape
    from rulelang.commands import compare as compare_command

    odd = "[bold red]won[/] [/]\x1b[2J"
    c = cmp.compare([row(i, end=odd) for i in range(4)], [row(i, end=odd) for i in range(4)])
    compare_command._print(c)
    out = capsys.readouterr().out
    assert "[bold red]won[/] [/]\\x1b[2J" in out and "\x1b" not in out


def test_the_same_run_gives_the_same_comparison():
    args = [C4, "--restrict", "drop", "--games", "12", "--seed", "7", "--json"]
    one, two = invoke(args), invoke(args)
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout
    assert json.loads(one.stdout)["seed"] == 7

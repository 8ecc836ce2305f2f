"""The runner (interpreter/runner.py, issue 11): one row per game with the shared schema, the same rows
for every runner (in this process, the process pool, a real two-worker Dask cluster), draws counted as
draws (tic-tac-toe's draws checked against the final boards), the restricted agent, the progress bar,
and one-line errors for bad arguments and an unreachable scheduler."""
from __future__ import annotations

import io
import json
import math
import os
import sys
import time

import pytest
from click.testing import CliRunner

import rulelang
from interpreter.agents import AgentError, RandomAgent
from interpreter.runner import (ROW_KEYS, RestrictedAgent, RunnerError, game_seed, iter_games, run_games)
from interpreter.simulate import simulate, summarize
from rulelang.cli import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICTACTOE = "games/examples/tictactoe.rules"
CONNECT4 = "games/examples/connect4.rules"
KUHN = "games/examples/kuhn_poker.rules"


@pytest.fixture(autouse=True)
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # rule paths as a user gives them (Dask workers start in this folder too)


@pytest.fixture(scope="module")
def ttt():
    return rulelang.load(os.path.join(ROOT, TICTACTOE))


@pytest.fixture(scope="module")
def kuhn():
    return rulelang.load(os.path.join(ROOT, KUHN))


class Recording:
    """A ruleset that keeps every game it makes, to look at the games afterwards (in this process)."""

    def __init__(self, rs):
        self.rs = rs
        self.games = []

    def new_game(self, *args, **kwargs):
        game = self.rs.new_game(*args, **kwargs)
        self.games.append(game)
        return game

    def __getattr__(self, name):
        return getattr(self.rs, name)


LINES = [[(r, c) for c in range(3)] for r in range(3)] + [[(r, c) for r in range(3)] for c in range(3)] + \
        [[(i, i) for i in range(3)], [(i, 2 - i) for i in range(3)]]


def final_board(game) -> dict:
    """The marks of a finished tic-tac-toe game, (row, column) -> seat, read from the full state (the
    view writes a cell as the text "(r,c)")."""
    marks = game.view(None)["vars"]["marks"]
    return {tuple(int(x) for x in str(k).strip("()").split(",")): v for k, v in marks.items()}


def has_line(board, seat) -> bool:
    return any(all(board.get(cell) == seat for cell in line) for line in LINES)


# --- rows ------------------------------------------------------------------------------------------

def test_rows_schema_and_what_they_count(ttt):
    rec = Recording(ttt)
    rows = run_games(rec, players=2, games=40, seed=3)
    assert [r["index"] for r in rows] == list(range(40))
    for r, game in zip(rows, rec.games):
        assert list(r) == list(ROW_KEYS)
        assert r["seed"] == game_seed(3, r["index"]) == game.seed
        assert r["players"] == 2 and r["variants"] == [] and r["agents"] == ["random", "random"]
        assert r["restricted_seat"] is None and r["ok"] is True and r["error"] is None and r["internal"] is False
        assert isinstance(r["scores"], list) and all(type(v) is int for v in r["scores"])
        assert r["end_reason"] in ttt.endings and r["end_reason"] == game.end_reason
        # decisions: the player entries of the game's own log (no chance in tic-tac-toe)
        d = sum(1 for e in game.log if e["player"] >= 0)
        assert r["decisions"] == d and r["actions"] == {"place": d}
        # a tic-tac-toe turn is one mark: k marks down, 9 - k cells are legal; two seats take turns
        assert r["branching"] == pytest.approx(sum(9 - k for k in range(d)) / d)
        assert r["rounds"] == math.ceil(d / 2)
        assert r["winners"] == list(game.winners())


def test_decisions_leave_chance_out_and_actions_are_named(kuhn):
    rec = Recording(kuhn)
    rows = run_games(rec, players=2, games=30, seed=1, chance="explicit")  # the deal is in the log
    for r, game in zip(rows, rec.games):
        player = [e["action"] for e in game.log if e["player"] >= 0]
        assert any(e["player"] == -1 for e in game.log)  # the deal: chance, not a decision
        assert r["decisions"] == len(player)
        assert r["actions"] == {a: player.count(a) for a in sorted(set(player))}
        assert r["branching"] == 2.0  # pass or bet at every decision of Kuhn poker


def test_rulelang_play_with_a_row_seed_replays_that_game(kuhn):
    rows = run_games(kuhn, players=2, games=6, seed=2, agents=("random", "first"))
    for r in rows:
        out = CliRunner().invoke(cli, ["play", KUHN, "--seed", str(r["seed"]), "--agents", "random,first", "--json"])
        assert out.exit_code == 0, out.output
        played = json.loads(out.stdout)
        names = [e["action"] for e in played["log"] if e["player"] >= 0]
        assert (played["scores"], played["winners"], played["end_reason"]) == (r["scores"], r["winners"],
                                                                                r["end_reason"])
        assert r["actions"] == {a: names.count(a) for a in sorted(set(names))}


def test_failed_games_are_rows_with_their_error(kuhn):
    rows = run_games(kuhn, players=2, games=30, seed=0, max_decisions=2)
    bad = [r for r in rows if not r["ok"]]
    assert bad and len(bad) < 30  # games of three decisions hit the limit
    for r in bad:
        assert r["error"] == "the game did not end within 2 decisions" and not r["internal"]
        assert r["scores"] is None and r["winners"] == [] and r["draw"] is False and r["decisions"] == 2


# --- draws -----------------------------------------------------------------------------------------

def test_tictactoe_draws_are_the_full_boards_without_a_line(ttt):
    """Random tic-tac-toe ends about one game in eight with a full board and no line (the issue: 134
    of 1,000 games).  The summary's draws are exactly those games, read from the final states."""
    rec = Recording(ttt)
    s = simulate(TICTACTOE, 2, 1000, seed=0, ruleset=rec)
    assert s["completed"] == len(rec.games) == 1000
    boards = [final_board(g) for g in rec.games]
    full_no_line = sum(1 for b in boards if len(b) == 9 and not has_line(b, 0) and not has_line(b, 1))
    assert s["draws"] == full_no_line
    assert 0.10 <= s["draws"] / 1000 <= 0.16
    sole = [sum(1 for b in boards if has_line(b, p)) for p in (0, 1)]
    assert s["wins"] == sole and s["win_rate"] == [w / 1000 for w in sole]  # sole wins over completed games
    assert s["shared_wins"] == [0, 0] and s["shared_win_games"] == 0
    assert s["draw_rate"] == s["draws"] / 1000


class Ends:
    """A game that ends at once; the winners come from the seed: seed % 4 = 0: seat 0 alone, 1: seats
    0 and 1 (a shared win with three players), 2: every seat, 3: nobody."""

    name = "ends"
    player_counts = (1, 2, 3)
    endings = ("done",)
    active_variants = ()

    class Game:
        current_player = -4
        end_reason = "done"
        log = ()

        def __init__(self, players, seed):
            self.players, self.seed = players, seed

        def is_over(self):
            return True

        def legal_actions(self):
            return []

        def apply(self, action):
            raise AssertionError("the game is over")

        def winners(self):
            return [[0], [0, 1], list(range(self.players)), []][self.seed % 4][:self.players]

        def scores(self):
            return [1 if p in self.winners() else 0 for p in range(self.players)]

    def new_game(self, players, seed=0, chance="sampled"):
        return self.Game(players, seed)


def test_shared_wins_and_draws_are_apart_from_wins():
    s = simulate(Ends(), 3, 40, seed=0)
    assert s["completed"] == 40
    assert s["wins"] == [10, 0, 0] and s["win_rate"] == [0.25, 0.0, 0.0]
    assert s["shared_win_games"] == 10 and s["shared_wins"] == [10, 10, 0]
    assert s["draws"] == 20  # every seat wins (10) or nobody does (10)
    rows = run_games(Ends(), players=3, games=8)
    assert [r["draw"] for r in rows] == [False, False, True, True] * 2
    assert summarize(rows, 3)["draws"] == 4


def test_one_player_without_a_winner_is_a_loss_not_a_draw():
    s = simulate(Ends(), 1, 8, seed=0)
    assert s["draws"] == 0 and s["wins"] == [6]  # seeds 0, 1, 2 win (the seat alone), 3 does not


# A game with a choice inside an action, whose options are named like the actions: a choice is a
# decision but not an action, and restricting an action never restricts a choice.
PICKS = """
game "Picks" {
  players 2
}
var n: int = 0
var last: str = ""
action pick {
  effect {
    let c = choose one of ["pass", "pick"]
    last = c
    n += 1
  }
}
action pass {
  effect {
    n += 1
  }
}
ending "six moves" when n >= 6
flow {
  loop {
    for p in players {
      turn p { offer [pick, pass] to p }
    }
  }
}
"""


def offered_and_chosen(log):
    """The log split into (seat, action) of the offered actions and (seat, option) of the choices: every
    `pick` is followed by its choice."""
    actions, choices = [], []
    it = iter(log)
    for e in it:
        actions.append((e["player"], e["action"]))
        if e["action"] == "pick":
            c = next(it)
            choices.append((c["player"], c["action"]))
    return actions, choices


def test_choices_are_decisions_but_not_actions():
    rec = Recording(rulelang.loads(PICKS, name="picks.rules"))
    rows = run_games(rec, players=2, games=20, seed=4)
    for r, game in zip(rows, rec.games):
        actions, choices = offered_and_chosen(game.log)
        assert r["decisions"] == len(game.log) == len(actions) + len(choices)
        names = [a for _, a in actions]
        assert r["actions"] == {a: names.count(a) for a in sorted(set(names))}
        assert r["branching"] == 2.0 and r["rounds"] == 3  # six moves, two seats taking turns


def test_restricting_an_action_leaves_choices_of_that_name_alone():
    rec = Recording(rulelang.loads(PICKS, name="picks.rules"))
    rows = run_games(rec, players=2, games=20, seed=4, restrict="pass")
    chose_pass = 0
    for r, game in zip(rows, rec.games):
        actions, choices = offered_and_chosen(game.log)
        assert (r["restricted_seat"], "pass") not in actions
        chose_pass += choices.count((r["restricted_seat"], "pass"))
    assert chose_pass > 0


# --- the restricted agent ----------------------------------------------------------------------------

def test_restricted_seat_never_takes_the_action(kuhn):
    rec = Recording(kuhn)
    rows = run_games(rec, players=2, games=60, seed=2, restrict="bet")
    bets = {0: 0, 1: 0}
    for r, game in zip(rows, rec.games):
        assert r["ok"] and r["restricted_seat"] == r["index"] % 2
        for e in game.log:
            if e["player"] >= 0 and e["action"] == "bet":
                assert e["player"] != r["restricted_seat"], (r["index"], game.log)
                bets[e["player"]] += 1
    assert bets[0] > 0 and bets[1] > 0  # the other seat bets; so would this one unrestricted:
    free = Recording(kuhn)
    run_games(free, players=2, games=60, seed=2)
    assert sum(1 for i, g in enumerate(free.games) for e in g.log if e["player"] == i % 2 and e["action"] == "bet")


def test_restriction_gives_way_when_nothing_else_is_legal(ttt):
    rows = run_games(ttt, players=2, games=10, restrict="place")  # the only action: taken all the same
    assert all(r["ok"] and r["actions"]["place"] == r["decisions"] for r in rows)


def test_unknown_action_is_refused_before_any_game(kuhn):
    rec = Recording(kuhn)
    with pytest.raises(ValueError, match=r"^Kuhn Poker has no action 'raise' \(its actions: bet, pass\)$"):
        run_games(rec, players=2, games=5, restrict="raise")
    assert rec.games == []


def test_an_agent_that_takes_the_forbidden_action_anyway_is_an_error(kuhn):
    class Sneaky:
        name = "sneaky"

        def choose(self, game, seat):
            return next(a for a in game.clone().legal_actions() if a.id == "bet")

    game = kuhn.new_game(2, seed=0)
    while game.current_player == -1:
        game.apply(game.legal_actions()[0])
    with pytest.raises(AgentError, match="took 'bet'"):
        RestrictedAgent(Sneaky(), ["bet"]).choose(game)
    assert RestrictedAgent(RandomAgent(1), ["bet"]).choose(game).id == "pass"


# --- the same rows whatever the runner -------------------------------------------------------------

def test_both_backends_give_the_same_rows(kuhn):
    picks = rulelang.loads(PICKS, name="picks.rules")
    for rs in (kuhn, picks):
        generated = run_games(rs, players=2, games=20, seed=9, restrict="pass")
        assert run_games(rs.with_backend("closures"), players=2, games=20, seed=9, restrict="pass") == generated


def test_pool_rows_equal_in_process_rows(kuhn):
    one = run_games(kuhn, rules=KUHN, players=2, games=50, seed=7, restrict="pass", agents=("random", "first"))
    two = run_games(kuhn, rules=KUHN, players=2, games=50, seed=7, restrict="pass", agents=("random", "first"),
                    workers=2)
    assert one == two and len(one) == 50


distributed = pytest.importorskip("distributed")  # a guard for machines without rulelang[dask]; CI has it


@pytest.fixture(scope="module")
def cluster():
    """A real two-worker Dask cluster (worker processes) for this module's Dask tests."""
    import logging

    import warnings

    os.chdir(ROOT)
    with warnings.catch_warnings():  # "Port 8787 is already in use" when another cluster runs on this machine
        warnings.simplefilter("ignore")
        c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                     silence_logs=logging.ERROR)
    client = distributed.Client(c)
    yield c, client
    client.close()
    c.close()


def test_dask_rows_equal_in_process_rows_and_rules_load_once_per_worker(cluster, ttt):
    c, client = cluster
    here = run_games(ttt, rules=TICTACTOE, players=2, games=40, seed=5, agents=("random", "first"))
    dask = run_games(ttt, rules=TICTACTOE, players=2, games=40, seed=5, agents=("random", "first"),
                     scheduler=c.scheduler_address)
    assert dask == here
    again = run_games(ttt, rules=TICTACTOE, players=2, games=12, seed=6, scheduler=c.scheduler_address)
    assert again == run_games(ttt, players=2, games=12, seed=6)
    from interpreter.runner import dask_loads

    loads = client.run(dask_loads)  # each worker process loaded the rule file at most once, for both runs
    assert len(loads) == 2 and all(n <= 1 for n in loads.values()) and sum(loads.values()) >= 1, loads


def test_dask_workers_play_the_rules_as_loaded(cluster, tmp_path):
    """The tasks carry the rule texts the ruleset was loaded from (tests/test_dask_cluster.py runs a worker
    where the files do not exist): a file changed after the load does not change the game on the workers."""
    c, _ = cluster
    path = tmp_path / "ttt.rules"
    text = open(TICTACTOE).read()
    path.write_text(text)
    rs = rulelang.load(str(path))
    path.write_text(text.replace("== 9", "== 5"))  # a shorter game on disk, after the load
    rows = run_games(rs, rules=str(path), players=2, games=6, scheduler=c.scheduler_address)
    assert rows == run_games(rs, players=2, games=6)


def test_cli_local_dask_cluster_gives_the_same_summary_as_the_pool():
    """--scheduler local:2 starts a real two-worker LocalCluster (worker processes) for the run."""
    args = ["simulate", TICTACTOE, "--games", "30", "--seed", "4", "--agents", "random,first", "--json"]
    runs = [CliRunner().invoke(cli, args + extra) for extra in ([], ["--workers", "2"], ["--scheduler", "local:2"])]
    assert [r.exit_code for r in runs] == [0, 0, 0], runs[2].output
    assert runs[2].stderr == ""
    summaries = [json.loads(r.stdout) for r in runs]
    for s in summaries:
        s.pop("seconds")
    assert summaries[0] == summaries[1] == summaries[2] and summaries[0]["agents"] == ["random", "first"]


def test_unreachable_scheduler_is_a_one_line_error_in_bounded_time(monkeypatch):
    import interpreter.runner as runner

    monkeypatch.setattr(runner, "DASK_CONNECT_TIMEOUT", 2.0)
    start = time.monotonic()
    r = CliRunner().invoke(cli, ["simulate", TICTACTOE, "--games", "5", "--scheduler", "tcp://127.0.0.1:9"])
    assert time.monotonic() - start < 120  # a hang back-stop, generous for a loaded machine: not a speed test
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("rulelang: cannot reach the Dask scheduler at "
                                                             "tcp://127.0.0.1:9 within 2 s")


def test_a_scheduler_without_workers_is_an_error_not_a_hang(ttt):
    import logging

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        empty = distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None,
                                         silence_logs=logging.ERROR)
    try:
        start = time.monotonic()
        with pytest.raises(RunnerError, match=r"has no workers \(none joined within 1 s\)"):
            run_games(ttt, rules=TICTACTOE, players=2, games=4, scheduler=empty.scheduler_address, connect_timeout=1)
        assert time.monotonic() - start < 120  # a hang back-stop, not a speed test
    finally:
        empty.close()


def test_dask_missing_is_a_one_line_error(monkeypatch, ttt):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(RunnerError, match=r"needs Dask: pip install 'rulelang\[dask\]'"):
        run_games(ttt, rules=TICTACTOE, players=2, games=3, scheduler="local:2")


@pytest.mark.parametrize("bad", ["local:0", "local:65", "local:x", "tcp://", "http://h:1", "tcp://h", "h:8786", ""])
def test_malformed_schedulers_are_usage_errors(bad):
    r = CliRunner().invoke(cli, ["simulate", TICTACTOE, "--games", "2", "--scheduler", bad])
    assert r.exit_code == 2 and r.stderr.startswith("rulelang: --scheduler ") and r.stderr.count("\n") == 1


# --- arguments ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("agents, message", [
    ("alphazero", "unknown agent"), ("random,random,random", "3 agents for 2 players"),
    ("human", "cannot play a batch"), ("random,", "an agent name is empty"),
])
def test_cli_bad_agents(agents, message):
    r = CliRunner().invoke(cli, ["simulate", TICTACTOE, "--games", "2", "--agents", agents])
    assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.output


def test_cli_workers_and_scheduler_together_and_bad_seeds():
    r = CliRunner().invoke(cli, ["simulate", TICTACTOE, "-n", "2", "-w", "2", "--scheduler", "local:2"])
    assert r.exit_code == 2 and "give one" in r.stderr
    r = CliRunner().invoke(cli, ["simulate", TICTACTOE, "-n", "2", "--seed", "-1"])
    assert r.exit_code == 2 and r.stderr.startswith("rulelang: --seed -1: ")
    r = CliRunner().invoke(cli, ["simulate", TICTACTOE, "-n", "2", "--seed", str(2 ** 64)])
    assert r.exit_code == 2 and "2^64-1" in r.stderr


def test_iter_games_checks_before_running_and_stops_when_closed(ttt):
    rec = Recording(ttt)
    with pytest.raises(ValueError):
        iter_games(rec, players=2, games=5, workers=0)
    assert rec.games == []
    rows = iter_games(rec, players=2, games=10 ** 9)
    first = [next(rows) for _ in range(3)]
    rows.close()
    assert [r["index"] for r in first] == [0, 1, 2] and len(rec.games) == 3


# --- progress ----------------------------------------------------------------------------------------

def test_progress_bar_only_on_a_terminal():
    from rich.console import Console

    from rulelang.progress import progress_bar

    term = io.StringIO()
    with progress_bar(10, enabled=True, console=Console(file=term, force_terminal=True, width=100)) as bar:
        for i in range(11):
            bar(i, 10)
    assert "eta" in term.getvalue() and "10/10" in term.getvalue()
    for enabled, console in ((True, Console(file=io.StringIO(), force_terminal=False)),
                             (False, Console(file=io.StringIO(), force_terminal=True))):
        with progress_bar(10, enabled=enabled, console=console) as bar:
            bar(5, 10)
        assert console.file.getvalue() == ""


def test_cli_shows_no_bar_when_stderr_is_not_a_terminal():
    for args in (["simulate", TICTACTOE, "-n", "20"], ["simulate", TICTACTOE, "-n", "20", "-w", "2"],
                 ["validate", TICTACTOE, "-n", "3", "--no-coverage", "--no-shrink"]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0 and r.stderr == "", r.stderr

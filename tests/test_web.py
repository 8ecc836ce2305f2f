"""`rulelang serve` over HTTP (issue 14): a real server process (uvicorn, worker pool, SQLite) on
loopback, driven by an HTTP client. The browser tests are in test_web_browser.py and use the helpers here.

What is checked, as the issue asks: a seat gets only its own view (change the other seat's hidden values,
compare every response of this seat byte for byte); stale and illegal decisions are refused with a clear
message and change nothing; a server killed mid-game and started again resumes every table at the same
state; a finished game downloads as a log that `rulelang replay` accepts; edited rules are checked and
played in workers with time and memory limits; request sizes are limited.

Issue 31: another seat's secret choice or hidden draw never reaches a seat (swap every hidden choice,
compare each seat's whole output); editor checks and slow bots cannot hold up tables; a request cannot
make the server import a module; a score that fails, a text that is not Unicode and an oversized chunked
body are clean answers, not 500s.
"""
from __future__ import annotations

import functools
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("pebble")

import rulelang  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TTT = "games/examples/tictactoe.rules"
KUHN = "games/examples/kuhn_poker.rules"
STATION = "games/station.rules"
SERVED = [TTT, KUHN, STATION]  # file index 0, 1, 2
http = httpx.Client(timeout=60)  # one client: a new one per request costs more than the request


# ------------------------------------------------------------------------------------ the server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`rulelang serve` in a child process, on loopback, with its own database."""

    def __init__(self, db, files=SERVED, workers=1, args=(), env=None):
        self.db = str(db)
        self.files = files
        self.workers = workers
        self.args = list(args)
        self.env = env or {}
        self.port = free_port()
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        env = dict(os.environ, PYTHONUNBUFFERED="1", **self.env)
        self.output = open(self.db + ".out", "ab")  # a file, not a pipe: a full pipe would stop the server
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rulelang", "serve", *self.files, "--port", str(self.port), "--db", self.db,
             "--workers", str(self.workers), *self.args],
            cwd=ROOT, env=env, stdout=self.output, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("the server stopped: " + Path(self.db + ".out").read_text(errors="replace"))
            try:
                if http.get(self.url + "/", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.kill()
        raise RuntimeError("the server did not start within 60 s")

    def kill(self, sig=signal.SIGKILL):
        """Stop the server and its workers (its own process group) at once."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
        self.proc = None
        if getattr(self, "output", None) is not None:
            self.output.close()
            self.output = None

    # the JSON API
    def create(self, **spec):
        r = http.post(self.url + "/api/tables", json=spec, timeout=60)
        assert r.status_code == 200, r.text
        return r.json()

    def state(self, token):
        r = http.get(f"{self.url}/api/s/{token}", timeout=60)
        assert r.status_code == 200, r.text
        return r.json()

    def act(self, token, action, decision):
        return http.post(f"{self.url}/api/s/{token}/act", json={"action": action, "decision": decision}, timeout=60)

    def wait(self, token, check, seconds=60):
        """The seat's state once ``check(state)`` holds (bots move in the background)."""
        deadline = time.monotonic() + seconds
        while True:
            s = self.state(token)
            if check(s) or time.monotonic() > deadline:
                return s
            time.sleep(0.1)


_shared = []


def shared_server(request, tmp_path_factory):
    """One server for the session, for this module and test_web_browser.py (a start costs seconds)."""
    if not _shared:
        srv = Server(tmp_path_factory.mktemp("web") / "games.sqlite").start()
        request.config.add_cleanup(lambda: srv.kill(signal.SIGTERM))
        _shared.append(srv)
    srv = _shared[0]
    if srv.proc is None or srv.proc.poll() is not None:
        srv.start()
    return srv


@pytest.fixture(scope="module")
def server(request, tmp_path_factory):
    return shared_server(request, tmp_path_factory)


def tokens(table):
    return [s["token"] for s in table["seats"]]


@functools.lru_cache(maxsize=None)
def rules(path):
    return rulelang.load(str(ROOT / path))


def replayed(path, players, seed, state=None, decisions=(), chance="sampled"):
    """The game the rules give for a seed and decisions (the reference for what a page must show)."""
    rs = rules(path)
    g = rs.load_game(state) if state else rs.new_game(players, seed=seed, chance=chance)
    for d in decisions:
        g.apply(d["action"])
    return g


def stored(server, table):
    """Every decision of a table as the server stored it (chance decisions included: a new table draws
    every roll and card as a decision), read from its database."""
    with sqlite3.connect(server.db, timeout=30) as db:
        rows = db.execute("SELECT player, action FROM decisions WHERE table_id = ? ORDER BY n", (table["table"],))
        return [{"player": p, "action": a} for p, a in rows]


def replayed_table(server, table, path, players, seed):
    """A new table's game as the rules give it: its seed, every roll and draw a decision, the stored decisions."""
    return replayed(path, players, seed, decisions=stored(server, table), chance="explicit")


# ------------------------------------------------------------------------------------ playing
def test_two_people_play_tictactoe_to_the_end_and_download_a_replayable_log(server, tmp_path):
    t = server.create(file=0, players=2, seats=["human", "human"], seed=7)
    a, b = tokens(t)
    moves = [(a, "place(0,0)"), (b, "place(1,0)"), (a, "place(0,1)"), (b, "place(1,1)"), (a, "place(0,2)")]
    for k, (tok, action) in enumerate(moves):
        r = server.act(tok, action, k)
        assert r.status_code == 200, r.text
        assert r.json()["decision"] == k + 1
    for tok in (a, b):
        s = server.state(tok)
        assert s["over"] and s["status"] == "over"
        assert s["end_reason"] == "three in a row" and s["winners"] == [0]
        assert [d["action"] for d in s["log"]] == [m for _, m in moves]
    r = http.get(f"{server.url}/s/{a}/log", timeout=30)
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    log = tmp_path / "game.log.json"
    log.write_text(r.text)
    assert json.loads(r.text)["log"] == [{"player": k % 2, "action": m} for k, (_, m) in enumerate(moves)]
    done = subprocess.run([sys.executable, "-m", "rulelang", "replay", TTT, str(log)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "OK: 5 decisions replayed, final state verified" in done.stdout


def test_a_seat_hears_of_the_other_seats_move_as_it_happens(server):
    t = server.create(file=0, seats=["human", "human"], seed=9)
    a, b = tokens(t)
    seen = []
    with http.stream("GET", f"{server.url}/s/{b}/events", timeout=30) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data:"):
                seen.append(json.loads(line[5:]))
                if len(seen) == 1:
                    assert server.act(a, "place(2,2)", 0).status_code == 200
                else:
                    break
    assert seen == [{"decision": 0, "status": "playing"}, {"decision": 1, "status": "playing"}]


def test_an_unfinished_game_has_no_log_to_download(server):
    t = server.create(file=0, seats=["human", "human"], seed=1)
    r = http.get(f"{server.url}/s/{tokens(t)[0]}/log", timeout=30)
    assert r.status_code == 409 and "not over" in r.text


def test_stale_illegal_and_out_of_turn_decisions_are_refused_and_change_nothing(server):
    t = server.create(file=0, seats=["human", "human"], seed=3)
    a, b = tokens(t)
    assert server.act(a, "place(1,1)", 0).status_code == 200
    before = [server.state(a), server.state(b)]
    cases = [
        (b, "place(0,0)", 0, 409, "stale"),                 # the page P1 saw before P0 moved
        (a, "place(0,0)", 1, 409, "not your decision"),      # P0 again, out of turn
        (b, "place(1,1)", 1, 422, "not a legal action"),     # the cell P0 took
        (b, "castle(9)", 1, 422, "not a legal action"),      # no such action
        (b, "place(0,0)", 2, 409, "stale"),                  # a decision from the future
        (b, "", 1, 400, "legal actions"),
    ]
    for tok, action, decision, status, words in cases:
        r = server.act(tok, action, decision)
        assert r.status_code == status, (action, decision, r.text)
        assert words in r.json()["error"]
        assert "\n" not in r.json()["error"]
    assert [server.state(a), server.state(b)] == before
    # the refused form post shows the page with the message (no JavaScript needed)
    r = http.post(f"{server.url}/s/{b}/act", data={"action": "place(1,1)", "decision": "1"}, timeout=30)
    assert r.status_code == 422 and "is not a legal action now" in r.text
    assert server.act(b, "place(0,0)", 1).status_code == 200


def test_bad_requests_get_one_line_errors(server):
    for path in ("/s/nope", "/api/s/nope", "/s/" + "x" * 500, "/s/nope/log", "/created/nope"):
        r = http.get(server.url + path, timeout=30)
        assert r.status_code == 404, path
    r = http.post(server.url + "/api/tables", content=b"{not json", timeout=30)
    assert r.status_code == 400 and r.json()["error"] == "the request body is not JSON"
    bad = [
        ({"file": 0, "players": 3}, 422, "played by 2 players, not 3"),
        ({"file": 0, "variants": ["nope"]}, 422, "has no variant 'nope'"),
        ({"file": 0, "seats": ["human", "wizard"]}, 422, "unknown agent 'wizard'"),
        ({"file": 0, "seats": ["random", "random"]}, 422, "at least one seat"),
        ({"file": 9}, 400, "no served rule file"),
        ({"file": 0, "seed": -1}, 422, "0 to 2^64-1"),
        ({"file": 0, "seed": "1e9"}, 400, "seed must be a whole number"),
        ({"file": 0, "seed": 2 ** 64}, 422, "0 to 2^64-1"),
        ({"file": 0, "save": "{]"}, 422, "not JSON"),
        ({"file": 0, "save": json.dumps({"format": "x"})}, 422, "cannot start"),
    ]
    for spec, status, words in bad:
        r = http.post(server.url + "/api/tables", json=spec, timeout=60)
        assert r.status_code == status, (spec, r.text)
        assert words in r.json()["error"], (spec, r.text)


def test_request_bodies_and_rule_texts_have_size_limits(server):
    from rulelang.web.app import MAX_BODY
    from rulelang.web.tables import MAX_RULE_BYTES

    r = http.post(server.url + "/api/check", content=b"x" * (MAX_BODY + 1), timeout=30)
    assert r.status_code == 413
    r = http.post(server.url + "/api/check", json={"file": 0, "text": "#" * (MAX_RULE_BYTES + 1)}, timeout=30)
    assert r.status_code == 413 and "rule text is over" in r.json()["error"]


def test_security_headers_keep_seat_links_private(server):
    r = http.get(server.url + "/", timeout=30)
    assert r.headers["referrer-policy"] == "no-referrer"
    assert "script-src 'self'" in r.headers["content-security-policy"]
    t = server.create(file=0, seats=["human", "human"], seed=5)
    r = http.get(f"{server.url}/s/{tokens(t)[0]}", timeout=30)
    assert r.headers["cache-control"] == "no-store"
    assert tokens(t)[1] not in r.text  # a seat's page never links to another seat


# ------------------------------------------------------------------------------------ hidden information
def seat_responses(server, token, others=()):
    """Everything the server answers to this seat's token: the page, its changing part, the JSON state,
    the first live event, a refused decision, the replay log (or why it is refused). Tokens of the
    table are replaced by their seat."""
    out = []
    for path in (f"/s/{token}", f"/s/{token}/fragment", f"/api/s/{token}"):
        out.append(http.get(server.url + path, timeout=30).text)
    with http.stream("GET", f"{server.url}/s/{token}/events", timeout=30) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                out.append(line)
                break
    out.append(server.act(token, "no-such-action", 10 ** 6).text)
    log = http.get(f"{server.url}/s/{token}/log", timeout=30)  # the replay log, when it is offered
    out.append(f"{log.status_code} {log.text}")
    text = "\n".join(out)
    for k, tok in enumerate(others):
        text = text.replace(tok, f"<token of P{k}>")
    return text


def kuhn_tables(server):
    """Two new Kuhn tables dealing P0 the same card and P1 another (each seat's own card read from its
    own view)."""
    seen = []
    for seed in range(60):
        t = server.create(file=1, seats=["human", "human"], seed=seed)
        cards = tuple(server.state(tok)["view"]["vars"]["card"][k] for k, tok in enumerate(tokens(t)))
        for other, c in seen:
            if c[0] == cards[0] and c[1] != cards[1]:
                return other, t
        seen.append((t, cards))
    raise AssertionError("no two tables found")


def test_no_response_to_a_seat_holds_the_other_seats_kuhn_card(server):
    one, two = kuhn_tables(server)
    for step in range(2):  # at P0's decision, then at P1's after P0 passed
        mine = [seat_responses(server, tokens(t)[0], tokens(t)) for t in (one, two)]
        assert mine[0] == mine[1], f"P0's responses depend on P1's card (step {step})"
        theirs = [seat_responses(server, tokens(t)[1], tokens(t)) for t in (one, two)]
        assert theirs[0] != theirs[1], "P1 sees its own card: the comparison can tell a difference"
        if step == 0:
            for t in (one, two):
                at = server.state(tokens(t)[0])["decision"]  # after the deal (two chance decisions)
                assert server.act(tokens(t)[0], "pass", at).status_code == 200


def changed_save(path, players, seed, decisions, seat):
    """A save of a game after `decisions` random decisions, and the same save with one value that `seat`
    may not see changed (how tests/test_hidden_views.py changes hidden values)."""
    try:
        from test_hidden_views import hidden_places, mutate
    except ImportError:  # tests/ as a package
        from tests.test_hidden_views import hidden_places, mutate

    rs = rules(path)
    g = rs.new_game(players, seed=seed)
    rnd = random.Random(seed)
    for _ in range(decisions):
        g.apply(rnd.choice(g.legal_actions()))
    base = json.loads(g.to_json())
    places = hidden_places(rs, base, seat)
    rnd.shuffle(places)
    for place in places:
        save = json.loads(json.dumps(base))
        if not mutate(save, place, rnd):
            continue
        try:
            h = rs.load_game(json.dumps(save))
        except rulelang.GameError:
            continue
        if h.to_json() != g.to_json() and h.view(None)["vars"] != g.view(None)["vars"]:
            return g.to_json(), h.to_json(), place
    raise AssertionError("no hidden value to change")


def test_no_response_to_a_seat_holds_hidden_station_cards(server):
    real, changed, place = changed_save(STATION, 3, 5, 12, seat=0)
    a = server.create(file=2, players=3, seats=["human", "human", "human"], save=real)
    b = server.create(file=2, players=3, seats=["human", "human", "human"], save=changed)
    one = seat_responses(server, tokens(a)[0], tokens(a))
    two = seat_responses(server, tokens(b)[0], tokens(b))
    assert one == two, f"P0's responses changed when the hidden {place} changed"
    assert server.state(tokens(a)[0])["view"] == json.loads(json.dumps(replayed(STATION, 3, None, real).view(0)))


# ------------------------------------------------------------------------------------ what a seat hears of decisions
BIDS = '''game "Sealed Bids" { players 2 }

per player var bid: int = 0 visible to owner
var rounds: int = 0

flow {
  loop {
    for p in players {
      turn p {
        let b = choose one of 1..5 by p prompt "your secret bid"
        bid[p] = b
      }
    }
    rounds += 1
    if rounds == 2 { end_game "two rounds" }
  }
}

score p = 0
'''


def test_a_secret_pick_never_reaches_the_other_seat_in_any_response(server):
    """Issue 31.2: `choose ... by p` into a variable visible to its owner. For each seat, two tables play
    the same seed, the seat's own picks the same at both, every pick of the other seat different; after
    every decision the seat's whole output (page, part, JSON with its log, event, refusal, replay log)
    is the same at both tables, and the other seat's is not."""
    others = [(4, 2), (1, 5)]  # the other seat's picks at table one and table two, round by round
    for me in (0, 1):
        one, two = (server.create(file=0, text=BIDS, seats=["human", "human"], seed=1) for _ in range(2))
        for k in range(4):
            seat = k % 2  # P0, P1, P0, P1
            picks = (3, 3) if seat == me else others[k // 2]
            for t, pick in zip((one, two), picks):
                r = server.act(tokens(t)[seat], str(pick), k)
                assert r.status_code == 200, r.text
            mine = [seat_responses(server, tokens(t)[me], tokens(t)) for t in (one, two)]
            assert mine[0] == mine[1], f"P{me}'s responses depend on the other seat's secret picks (decision {k + 1})"
            if seat != me:
                theirs = [seat_responses(server, tokens(t)[seat], tokens(t)) for t in (one, two)]
                assert theirs[0] != theirs[1], "the picker sees its own pick: the comparison can tell a difference"
        log = server.state(tokens(one)[me])["log"]
        assert [d["text"] for d in log if d["player"] == me] == ["3", "3"]  # its own picks, in words
        for d in (d for d in log if d["player"] != me):
            assert d["hidden"] and d["action"] is None and d["text"] == "your secret bid (hidden)"
        r = http.get(f"{server.url}/s/{tokens(one)[me]}/log", timeout=30)
        assert r.status_code == 403 and "not offered to this seat" in r.text  # the seed and the picks would tell


ROLL = '''game "Rolls" { players 2 }

var face: int = 0

action throw {
  text "throw the die"
  effect {
    let d = roll one of 1..6
    face = d
  }
}

flow { loop { for p in players { turn p { offer [throw] to p } } } }
'''


def test_rolls_and_draws_are_in_the_moves_as_far_as_each_seat_may_know_them(server):
    t = server.create(file=0, text=ROLL, seats=["human", "human"], seed=3)
    a, b = tokens(t)
    assert server.act(a, "throw", 0).status_code == 200
    for tok in (a, b):  # a roll onto the table: everybody sees it
        s = server.state(tok)
        assert [(d["who"], d["text"]) for d in s["log"]] == [
            ("P0", "throw the die"), ("chance", f"rolled {s['view']['vars']['face']}")]
    # Kuhn poker deals each seat a card from a hidden deck: a seat hears of its own card only
    k = server.create(file=1, seats=["human", "human"], seed=8)
    for seat, tok in enumerate(tokens(k)):
        s = server.state(tok)
        card = s["view"]["vars"]["card"][seat]
        deal = [(d["text"], d["hidden"], d["action"]) for d in s["log"]]
        want = [(f"drew {card}", False, str(card)), ("an item is drawn (hidden)", True, None)]
        assert deal == (want if seat == 0 else want[::-1])


# ------------------------------------------------------------------------------------ bots, restarts
def test_bots_move_server_side_and_a_seat_sees_its_own_view(server):
    t = server.create(file=2, players=3, seats=["human", "random", "first"], seed=11)
    me = tokens(t)[0]
    assert tokens(t)[1:] == [None, None]
    s = server.state(me)
    for _ in range(6):
        s = server.wait(me, lambda s: s["your_turn"] or s["over"])
        if s["over"]:
            break
        assert server.act(me, s["legal"][0]["id"], s["decision"]).status_code == 200
    s = server.wait(me, lambda s: s["your_turn"] or s["over"])
    g = replayed_table(server, t, STATION, 3, 11)
    assert len(g.log) == s["decision"] > 6
    assert {d["player"] for d in s["log"]} == {-1, 0, 1, 2}  # chance (the setup's draws), the person, the bots
    assert s["view"] == json.loads(json.dumps(g.view(0)))


def test_a_killed_server_resumes_every_table_from_the_same_state(server):
    srv = server  # killed and started again on the same database and port
    ttt = srv.create(file=0, seats=["human", "human"], seed=2)
    st = srv.create(file=2, players=2, seats=["human", "random"], seed=4)
    a, b = tokens(ttt)
    me = tokens(st)[0]
    for k, (tok, action) in enumerate([(a, "place(1,1)"), (b, "place(0,0)"), (a, "place(2,2)")]):
        assert srv.act(tok, action, k).status_code == 200
    for _ in range(3):
        s = srv.wait(me, lambda s: s["your_turn"])
        assert srv.act(me, s["legal"][-1]["id"], s["decision"]).status_code == 200
    s = srv.wait(me, lambda s: s["your_turn"])
    before = {tok: srv.state(tok) for tok in (a, b, me)}
    srv.kill()  # SIGKILL to the server and its workers: no clean shutdown
    srv.start()
    after = {tok: srv.state(tok) for tok in (a, b, me)}
    for tok in before:
        for k in ("version",):
            before[tok].pop(k), after[tok].pop(k)
    assert after == before
    # and the games go on from there
    assert srv.act(b, "place(0,1)", 3).status_code == 200
    assert srv.act(me, s["legal"][0]["id"], s["decision"]).status_code == 200
    s2 = srv.wait(me, lambda x: x["decision"] > s["decision"] + 1 or x["over"])
    g = replayed_table(srv, st, STATION, 2, 4)
    assert len(g.log) == s2["decision"]
    assert s2["view"] == json.loads(json.dumps(g.view(0)))


# ------------------------------------------------------------------------------------ editing
BROKEN = '''game "Broken" { players 2 }
var n: int = 0
action up { effect { n = n + nope } }
flow { loop { for p in players { turn p { offer [up] to p } } } }
'''


def test_the_edit_check_reports_the_diagnostics_of_rulelang_check(server, tmp_path):
    r = http.post(server.url + "/api/check", json={"file": 0, "text": BROKEN}, timeout=60)
    assert r.status_code == 200, r.text
    got = [(d["line"], d["column"], d["code"], d["severity"]) for d in r.json()["diagnostics"]]
    path = tmp_path / "tictactoe.rules"
    path.write_text(BROKEN)
    want = [(d.line, d.column, d.code, d.severity) for d in rulelang.check(str(path), cache=False)]
    assert got == want and ("error" in {g[3] for g in got})
    assert any(d["line"] == 3 for d in r.json()["diagnostics"])
    r = http.post(server.url + "/api/tables", json={"file": 0, "text": BROKEN}, timeout=60)
    assert r.status_code == 422 and "the rules have errors" in r.json()["error"]


def test_play_this_version_starts_a_table_from_the_edited_text(server):
    text = (ROOT / TTT).read_text().replace('end_game "three in a row"', 'end_game "a line"')
    t = server.create(file=0, text=text, seats=["human", "first"], seed=1)
    me = tokens(t)[0]
    for k in range(3):
        s = server.wait(me, lambda s: s["your_turn"] or s["over"])
        if s["over"]:
            break
        assert server.act(me, f"place(2,{k})", s["decision"]).status_code == 200
    s = server.wait(me, lambda s: s["over"])
    assert s["end_reason"] == "a line" and s["winners"] == [0]  # the edited text ran, not the file


def test_edited_rules_that_run_away_stop_the_table_not_the_server(server):
    text = '''game "Spin" { players 2 }
var n: int = 0
action spin { effect { while true { n = n + 1 } } }
flow { loop { for p in players { turn p { offer [spin] to p } } } }
'''
    t = server.create(file=0, text=text, seats=["human", "human"], seed=1)
    r = server.act(tokens(t)[0], "spin", 0)
    assert r.status_code == 200
    s = r.json()
    assert s["status"] == "error" and "budget" in s["error"]
    assert server.act(tokens(t)[1], "spin", 1).status_code == 409
    assert http.get(server.url + "/", timeout=30).status_code == 200  # the server goes on


def test_worker_calls_have_time_and_memory_limits():
    """The pool that runs rule code kills a call that overruns and refuses one that needs too much
    memory; the next call works."""
    import asyncio

    from rulelang.web.tables import Refused, Tables

    async def run():
        tables = Tables(store=None, served=[], workers=1, memory=512 * 1024 ** 2, call_seconds=1.0)
        tables.start()
        try:
            with pytest.raises(Refused) as slow:
                await tables.call(time.sleep, 30)
            assert slow.value.status == 503 and "longer than 1 seconds" in slow.value.message
            with pytest.raises(Refused) as big:
                await tables.call(bytearray, 1024 ** 3)
            assert "memory" in big.value.message
            assert await tables.call(sum, [1, 2, 3]) == 6
        finally:
            tables.stop()

    started = time.monotonic()
    asyncio.run(run())
    assert time.monotonic() - started < 120  # a hang back-stop, not a speed test


# ------------------------------------------------------------------------------------ denial of service (issue 31.4)
def test_a_persons_decision_is_answered_without_waiting_for_the_bots(server):
    t = server.create(file=0, seats=["human", "first"], seed=1)
    me = tokens(t)[0]
    r = server.act(me, "place(1,1)", 0)
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["decision"] == 1 and s["current_player"] == 1  # committed and answered; the bot moves after
    s = server.wait(me, lambda s: s["your_turn"])
    assert s["decision"] == 2 and s["log"][-1]["who"] == "P1"


def test_search_bots_are_bounded_and_the_bound_is_said():
    from rulelang.web.tables import MAX_BOT_PLAYOUTS, Refused, Tables

    tables = Tables(store=None, served=[])
    assert tables.agent_spec("MCTS:50") == "mcts:50" and tables.agent_spec(" ismcts ") == "ismcts"
    assert tables.agent_spec(f"mcts:{MAX_BOT_PLAYOUTS}") == f"mcts:{MAX_BOT_PLAYOUTS}"
    for spec in (f"mcts:{MAX_BOT_PLAYOUTS + 1}", "mcts:1000000", "ismcts:0", "mcts:-1", "mcts:1e3"):
        with pytest.raises(Refused) as got:
            tables.agent_spec(spec)
        assert got.value.status == 422 and f"from 1 to {MAX_BOT_PLAYOUTS:,} playouts" in got.value.message


def test_a_table_with_a_huge_search_bot_is_refused(server):
    r = http.post(server.url + "/api/tables", json={"file": 0, "seats": ["human", "mcts:1000000"]}, timeout=60)
    assert r.status_code == 422 and "playouts" in r.json()["error"]


def test_editor_checks_and_bots_never_hold_up_the_workers_of_moves():
    """Slow editor checks (two, as in the issue) and a slow bot each hold their own workers; a decision's
    call is answered meanwhile, and checks beyond the short queue are refused at once."""
    import asyncio

    from rulelang.web.tables import CHECK_QUEUE, Refused, Tables

    async def run():
        tables = Tables(store=None, served=[], workers=1, memory=512 * 1024 ** 2, check_seconds=600)
        tables.start()
        waiting = []
        try:
            waiting = [asyncio.ensure_future(tables.compile_check(time.sleep, 600)) for _ in range(2)]
            waiting.append(asyncio.ensure_future(tables.call(time.sleep, 600, pool="bots", seconds=600)))
            await asyncio.sleep(0)
            assert await tables.call(sum, [1, 2, 3]) == 6  # a move's worker is free
            assert not any(f.done() for f in waiting)
            waiting += [asyncio.ensure_future(tables.compile_check(time.sleep, 600)) for _ in range(CHECK_QUEUE - 2)]
            await asyncio.sleep(0)
            with pytest.raises(Refused) as busy:
                await tables.compile_check(sum, [1])
            assert busy.value.status == 503 and "try again" in busy.value.message
        finally:
            for f in waiting:
                f.cancel()
            tables.stop()

    asyncio.run(run())


# ------------------------------------------------------------------------------------ agents from the configuration only (31.5)
PROBE = '''import os
open(os.environ["PROBE_MARKS"] + "/" + __name__, "w").close()  # this module was imported


class Bot:
    def __init__(self, seed=None):
        pass

    def choose(self, game, seat=None):
        return game.legal_actions()[0]
'''


@pytest.fixture(scope="module")
def configured(tmp_path_factory):
    """A server of absolute paths with one agent of its own (`--agent probe_cfg:Bot`); probe_req is
    importable too, but not configured. Each probe module leaves a mark when it is imported."""
    folder = tmp_path_factory.mktemp("probe")
    marks = folder / "marks"
    marks.mkdir()
    for name in ("probe_cfg", "probe_req"):
        (folder / f"{name}.py").write_text(PROBE)
    srv = Server(folder / "games.sqlite", files=[str(ROOT / TTT), str(ROOT / KUHN), str(ROOT / STATION)],
                 args=["--agent", "probe_cfg:Bot"], env={"PYTHONPATH": str(folder), "PROBE_MARKS": str(marks)})
    srv.start()
    yield srv, marks
    srv.kill(signal.SIGTERM)


def test_a_request_cannot_make_the_server_import_a_module(configured):
    srv, marks = configured
    for spec in ("probe_req:Bot", "this:anything", "os:system"):
        r = http.post(srv.url + "/api/tables", json={"file": 0, "seats": ["human", spec]}, timeout=60)
        assert r.status_code == 422 and "unknown agent" in r.json()["error"], r.text
    assert not (marks / "probe_req").exists()
    assert "Beautiful is better than ugly" not in Path(srv.db + ".out").read_text()  # `import this` prints it
    # the agent the server's configuration names is offered and plays
    assert "probe_cfg:Bot" in http.get(srv.url + "/", timeout=30).text
    t = srv.create(file=0, seats=["human", "probe_cfg:Bot"], seed=1)
    me = tokens(t)[0]
    assert srv.act(me, "place(2,2)", 0).status_code == 200
    s = srv.wait(me, lambda s: s["your_turn"])
    assert s["log"][-1]["action"] == "place(0,0)"  # the probe's bot takes the first legal action


def test_pages_name_served_files_relative_to_their_folder(configured):
    srv, _ = configured
    for path in ("/", "/edit?file=2"):
        page = http.get(srv.url + path, timeout=30).text
        assert str(ROOT) not in page
        assert "examples/tictactoe.rules" in page and "station.rules" in page
    r = http.post(srv.url + "/api/check", json={"file": 0, "text": BROKEN}, timeout=60)
    assert r.status_code == 200 and str(ROOT) not in r.text
    assert all(d["text"].startswith("examples/tictactoe.rules:") for d in r.json()["diagnostics"])


def test_the_start_forms_offer_exactly_the_declared_player_counts(server):
    lobby = http.get(server.url + "/", timeout=30).text
    forms = re.findall(r'<form class="newtable".*?</form>', lobby, re.S)
    assert len(forms) == len(SERVED)
    for path, form in zip(SERVED, forms):
        counts = sorted(rules(path).player_counts)
        assert re.findall(r'<select name="players"[^>]*>(.*?)</select>', form, re.S)[0].count("<option") == len(counts)
        assert re.findall(r'<option value="(\d+)">\1</option>', form) == [str(n) for n in counts]
        assert len(re.findall(r'<label class="seat"', form)) == max(counts)  # the script hides the unchosen ones
    edit = http.get(server.url + "/edit?file=2", timeout=30).text
    players = re.search(r'<select name="players"[^>]*>(.*?)</select>', edit, re.S).group(1)
    assert re.findall(r'<option value="(\d+)">', players) == [str(n) for n in sorted(rules(STATION).player_counts)]


# ------------------------------------------------------------------------------------ clean answers (31.6)
BAD_SCORE = '''game "Bad Score" { players 2 }

var n: int = 0

action stop {
  effect { end_game "stopped" }
}

flow { loop { for p in players { turn p { offer [stop] to p } } } }

score p = 10 / n
'''


def test_a_score_that_fails_at_the_end_stops_the_table_with_its_error(server):
    t = server.create(file=0, text=BAD_SCORE, seats=["human", "human"], seed=1)
    a, b = tokens(t)
    r = server.act(a, "stop", 0)
    assert r.status_code == 200, r.text
    for tok in (a, b):
        s = server.state(tok)
        assert s["status"] == "error" and s["decision"] == 1  # the move is committed, the table not "playing"
        assert "while scoring" in s["error"] and "division by zero" in s["error"] and "\n" not in s["error"]
        page = http.get(f"{server.url}/s/{tok}", timeout=30)
        assert page.status_code == 200 and "The game stopped" in page.text
    assert server.act(b, "stop", 1).status_code == 409


def test_texts_that_are_not_unicode_are_refused_in_one_line(server):
    t = server.create(file=0, seats=["human", "human"], seed=1)
    bodies = [(f"/api/s/{tokens(t)[0]}/act", b'{"action": "\\ud800", "decision": 0}'),
              ("/api/tables", b'{"file": 0, "seats": ["human", "\\udfff"]}'),
              ("/api/check", b'{"file": 0, "text": "game \\ud800"}')]
    for path, body in bodies:
        r = http.post(server.url + path, content=body, headers={"content-type": "application/json"}, timeout=30)
        assert r.status_code == 400, (path, r.text)
        assert "not valid Unicode" in r.json()["error"] and "\n" not in r.json()["error"]
    assert server.state(tokens(t)[0])["decision"] == 0


def test_a_chunked_body_over_the_limit_is_413(server):
    from rulelang.web.app import MAX_BODY

    def chunks():
        for _ in range(MAX_BODY // (1024 * 1024) + 2):
            yield b"x" * (1024 * 1024)

    r = http.post(server.url + "/api/check", content=chunks(), timeout=60)  # no length: sent in chunks
    assert r.status_code == 413 and "over" in r.json()["error"]
    assert http.get(server.url + "/", timeout=30).status_code == 200


def test_a_view_of_any_shape_makes_a_panel_of_bounded_size():
    """Values of hostile rules (nested thousands deep, 200 x 200 x 200 items) are shown cut short."""
    from rulelang.web.present import Budget, Schema, show

    class Bare:  # a ruleset that declares nothing
        vars, pieces, table_rows, row_fields, boards = [], {}, {}, {}, None

    deep = 0
    for _ in range(5000):
        deep = [deep]
    wide = [[list(range(200))] * 200] * 200
    wider = [[[[k, "x" * 500] for k in range(200)]] * 200] * 200
    for value in (deep, wide, wider):
        shown = json.dumps(show(Schema(Bare()), value, budget=Budget()))
        assert len(shown) < 1024 * 1024 and "..." in shown


# ------------------------------------------------------------------------------------ the command
def test_serve_reports_bad_files_databases_and_ports_in_one_line(server, tmp_path):
    cases = [
        (["nope.rules"], "nope.rules: cannot read file: no such file"),
        ([TTT, "--db", str(tmp_path / "no" / "such" / "dir.sqlite")], "cannot open the games database"),
        ([TTT, "--port", str(server.port), "--db", str(tmp_path / "x.sqlite")], "cannot listen there"),
    ]
    for args, words in cases:
        done = subprocess.run([sys.executable, "-m", "rulelang", "serve", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 1, done.stderr
        assert words in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_finished_tables_leave_memory_but_games_in_progress_stay():
    from rulelang.web import tables as T

    keeper = T.Tables(store=None, served=[])
    row = {"id": "", "decisions": [], "status": "over", "error": None}
    playing = [T.Live(dict(row, id=f"p{k}", status="playing")) for k in range(3)]
    for live in playing:
        keeper._keep(live)
    for k in range(T.MAX_IN_MEMORY + 50):
        keeper._keep(T.Live(dict(row, id=f"o{k}")))
    assert len(keeper.live) == T.MAX_IN_MEMORY
    assert all(live.id in keeper.live for live in playing)
    assert f"o{T.MAX_IN_MEMORY + 49}" in keeper.live and "o0" not in keeper.live  # the oldest left first

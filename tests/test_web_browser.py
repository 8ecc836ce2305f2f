"""`rulelang serve` in a real browser (issue 14): Debian's headless Chromium (/usr/bin/chromium, installed
by `apt-get install chromium`) driven by Playwright, which is pointed at that binary and never downloads
a browser of its own. The server is a real `rulelang serve` process (tests/test_web.py's Server).

Two people in two browser contexts (separate cookies and storage, as on two devices) play a whole game
of tic-tac-toe, each page updating live when the other moves; a person plays Station against bots; each
page shows exactly its seat's view; the rules editor shows diagnostics at their lines. A screenshot of
the Station table is kept in tests/artifacts/ (git-ignored).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api")

try:
    from test_web import KUHN, STATION, replayed, shared_server, tokens
except ImportError:  # tests/ as a package
    from tests.test_web import KUHN, STATION, replayed, shared_server, tokens

from tests.system_tools import CHROMIUM, require_chromium
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
WAIT = 30_000  # milliseconds a page may take to show a change


@pytest.fixture(scope="module")
def server(request, tmp_path_factory):
    return shared_server(request, tmp_path_factory)  # the one test_web.py starts, if it ran first


@pytest.fixture(scope="module")
def browser():
    require_chromium()
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)  # a fresh profile each launch
        yield b
        b.close()


def your_turn(page, decision):
    """Wait until the page shows that it is this seat's decision number ``decision`` (0-based)."""
    page.wait_for_selector(f'#status[data-decision="{decision}"][data-your-turn="yes"]', timeout=WAIT)


def shown_vars(page) -> dict:
    """The variables the page shows, as the JSON it prints."""
    rows = page.locator("#state table.vars tr").all()
    out = {}
    for row in rows:
        name = row.locator("th").inner_text()
        if "#" not in name:
            out[name] = json.loads(row.locator("code").inner_text())
    return out


def test_two_people_in_two_browsers_play_tictactoe_to_the_end(server, browser):
    t = server.create(file=0, seats=["human", "human"], seed=3)
    pages = []
    for tok in tokens(t):
        context = browser.new_context()  # one per person: nothing shared but the server
        page = context.new_page()
        page.goto(f"{server.url}/s/{tok}")
        pages.append(page)
    x, o = pages
    moves = [(x, "place(0,0)"), (o, "place(1,1)"), (x, "place(2,2)"), (o, "place(0,2)"), (x, "place(2,0)"),
             (o, "place(1,0)"), (x, "place(2,1)")]  # X completes the bottom row
    for k, (page, action) in enumerate(moves):
        your_turn(page, k)  # the page learnt of the other's move by itself (server-sent events)
        other = o if page is x else x
        other.wait_for_selector(f'#status[data-decision="{k}"][data-your-turn="no"]', timeout=WAIT)
        assert other.locator("#actions").count() == 0  # the other seat has no controls now
        page.click(f'button[data-action="{action}"]')
    for page in pages:
        page.wait_for_selector("#outcome", timeout=WAIT)
        assert "three in a row" in page.inner_text("#outcome")
        assert "Winner: P0" in page.inner_text("#outcome")
        assert page.locator("ol.log li").count() == len(moves)
        assert page.locator("#download").count() == 1
    assert shown_vars(x) == shown_vars(o)  # tic-tac-toe hides nothing: both see the same board
    marks = shown_vars(x)["marks"]
    assert marks == {"(0,0)": 0, "(1,1)": 1, "(2,2)": 0, "(0,2)": 1, "(2,0)": 0, "(1,0)": 1, "(2,1)": 0}
    # the board drawing shows the marks too (a cell per node)
    assert x.locator(".boardbox svg").count() == 1
    for page in pages:
        page.context.close()


def test_a_person_plays_station_against_bots_and_sees_only_their_view(server, browser):
    t = server.create(file=2, players=3, seats=["human", "random", "random"], seed=21)
    me = tokens(t)[0]
    page = browser.new_context(viewport={"width": 1200, "height": 1400}).new_page()
    page.goto(f"{server.url}/s/{me}")
    for _ in range(4):
        state = server.wait(me, lambda s: s["your_turn"] or s["over"])
        if state["over"]:
            break
        your_turn(page, state["decision"])
        buttons = page.locator("#actions button")
        assert buttons.count() == len(state["legal"])
        buttons.first.click()
        page.wait_for_selector(f'#status:not([data-decision="{state["decision"]}"])', timeout=WAIT)
    state = server.wait(me, lambda s: s["your_turn"] or s["over"])
    your_turn(page, state["decision"])
    # the page shows seat P0's view exactly: the game replayed from the seed and the decisions
    g = replayed(STATION, 3, 21, decisions=state["log"])
    assert {d["player"] for d in state["log"]} == {0, 1, 2}  # the bots moved
    assert shown_vars(page) == json.loads(json.dumps(g.view(0)["vars"]))
    texts = page.locator("ol.log li").all_inner_texts()
    assert texts == [f"P{d['player']}: {d['text']}" for d in state["log"]]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "station_table.png"), full_page=True)
    page.context.close()


def test_kuhn_pages_show_each_seat_its_own_card_only(server, browser):
    t = server.create(file=1, seats=["human", "human"], seed=5)
    g = replayed(KUHN, 2, 5)
    cards = g.view(None)["vars"]["card"]
    for seat, tok in enumerate(tokens(t)):
        page = browser.new_context().new_page()
        page.goto(f"{server.url}/s/{tok}")
        shown = shown_vars(page)
        assert shown == json.loads(json.dumps(g.view(seat)["vars"]))
        assert shown["card"][seat] == cards[seat] and shown["card"][1 - seat] == "?"
        assert shown["deck"] == {"hidden": 1}
        page.context.close()


def test_the_editor_marks_diagnostics_and_plays_the_edited_version(server, browser):
    page = browser.new_context().new_page()
    page.goto(f"{server.url}/edit?file=0")
    text = page.input_value("#text")
    assert text.startswith("# Tic-tac-toe")
    broken = text.replace("marks[(r, c)] = me", "marks[(r, c)] = mee", 1)
    line = next(k for k, ln in enumerate(broken.splitlines(), 1) if "= mee" in ln)
    page.fill("#text", broken)
    page.click("#check")
    item = page.wait_for_selector("#diagnostics li.error", timeout=WAIT)
    assert item.get_attribute("data-line") == str(line)
    assert "mee" in item.inner_text()
    assert "\u2716 " + str(line) in page.inner_text("#gutter")
    # fixed, then played: the table is made from the text in the editor
    page.fill("#text", text.replace('end_game "three in a row"', 'end_game "edited line"'))
    page.click("#check")
    page.wait_for_selector("#checkstatus.good", timeout=WAIT)
    page.select_option('select[name="seat1"]', "first")
    page.click("#play")
    page.wait_for_selector("a.seatlink", timeout=WAIT)
    page.click("a.seatlink")
    for k, action in enumerate(["place(2,0)", "place(2,1)", "place(2,2)"]):
        your_turn(page, 2 * k)
        page.click(f'button[data-action="{action}"]')
    page.wait_for_selector("#outcome", timeout=WAIT)
    assert "edited line" in page.inner_text("#outcome")
    page.context.close()

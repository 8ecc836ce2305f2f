"""`rulelang serve` in a real browser (issue 14): Debian's headless Chromium (/usr/bin/chromium, installed
by `apt-get install chromium`) driven by Playwright, which is pointed at that binary and never downloads
a browser of its own. The server is a real `rulelang serve` process (tests/test_web.py's Server).

Two people in two browser contexts (separate cookies and storage, as on two devices) play a whole game
of tic-tac-toe, each page updating live when the other moves; a person plays Station against bots; each
page shows exactly its seat's view; the rules editor shows diagnostics at their lines.

Issue 30: a seat's page is a game table, not a dump of data: the boards drawn, one panel per player with
its values by name (hidden parts said in words), the shared values, the choices with the table rows
they name, the moves with the rolls and draws the seat may know. Checked on Station, Vega, Mars and
Connect Four; a screenshot of each table is kept in tests/artifacts/ (git-ignored) for people to look
at: the tests assert the page's structure, not the pictures.
"""
from __future__ import annotations

from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api")

try:
    from test_web import KUHN, ROOT, STATION, Server, replayed_table, tokens
except ImportError:  # tests/ as a package
    from tests.test_web import KUHN, ROOT, STATION, Server, replayed_table, tokens

from tests.system_tools import CHROMIUM, require_chromium
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
WAIT = 120_000  # milliseconds a page may take to show a change (generous: a wall-clock wait must hold on a loaded machine)
TTT = "games/examples/tictactoe.rules"
TABLES = ["games/station.rules", "games/vega.rules", "games/mars.rules", "games/examples/connect4.rules"]
FILES = [TTT, KUHN, STATION] + TABLES[1:]  # file index: tictactoe 0, kuhn 1, station 2, vega 3, mars 4, connect4 5


@pytest.fixture(scope="module")
def server(request, tmp_path_factory):
    """A server of its own (it serves the three big rule files too)."""
    srv = Server(tmp_path_factory.mktemp("webb") / "games.sqlite", files=FILES, workers=1).start()
    yield srv
    srv.kill()


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


def panel(page, where):
    """The values a panel shows by name, as text (``where``: "P0", "P1" ... or "shared"), and the names
    it lists as empty."""
    box = page.locator("#shared" if where == "shared" else f'section.player[data-seat="{where[1:]}"]')
    out = {}
    if box.locator(":scope > dl.kv").count():
        for dd in box.locator(":scope > dl.kv > dd").all():
            out[dd.get_attribute("data-name")] = " ".join(dd.text_content().split())
    empty = box.locator(":scope > p.empty")
    names = empty.text_content().split(":", 1)[1] if empty.count() else ""
    return out, [n.strip() for n in names.split(",") if n.strip()]


def moves(page) -> list:
    """The moves the page lists, oldest first."""
    return [" ".join(t.split()) for t in page.locator("ol.log li").all_inner_texts()][::-1]


def test_two_people_in_two_browsers_play_tictactoe_to_the_end(server, browser):
    t = server.create(file=0, seats=["human", "human"], seed=3)
    pages = []
    for tok in tokens(t):
        context = browser.new_context()  # one per person: nothing shared but the server
        page = context.new_page()
        page.goto(f"{server.url}/s/{tok}")
        pages.append(page)
    x, o = pages
    played = [(x, "place(0,0)"), (o, "place(1,1)"), (x, "place(2,2)"), (o, "place(0,2)"), (x, "place(2,0)"),
              (o, "place(1,0)"), (x, "place(2,1)")]  # X completes the bottom row
    for k, (page, action) in enumerate(played):
        your_turn(page, k)  # the page learnt of the other's move by itself (server-sent events)
        other = o if page is x else x
        other.wait_for_selector(f'#status[data-decision="{k}"][data-your-turn="no"]', timeout=WAIT)
        assert other.locator("#actions").count() == 0  # the other seat has no controls now
        page.click(f'button[data-action="{action}"]')
    for page in pages:
        page.wait_for_selector("#outcome", timeout=WAIT)
        assert "three in a row" in page.inner_text("#outcome")
        assert "Winner: P0" in page.inner_text("#outcome")
        assert len(moves(page)) == len(played)
        assert page.locator("#download").count() == 1  # nothing was hidden: the replay log is offered
    shown = [sorted(p.locator('#shared details.drawn dd[data-name="marks"] .pair').all_text_contents()) for p in pages]
    assert shown[0] == shown[1]  # tic-tac-toe hides nothing: both see the same board
    assert shown[0] == sorted(["(0,0): P0", "(1,1): P1", "(2,2): P0", "(0,2): P1", "(2,0): P0", "(1,0): P1", "(2,1): P0"])
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
    g = replayed_table(server, t, STATION, 3, 21)  # the game from its seed and every stored decision
    view = g.view(0)
    assert {d["player"] for d in state["log"]} >= {0, 1, 2}  # the bots moved
    # one panel per player, with that seat's values by name: numbers as numbers, ships as named chips
    for q in range(3):
        values, empty = panel(page, f"P{q}")
        assert values["gems"] == str(view["vars"]["gems"][q])
        fleet = page.locator(f'section.player[data-seat="{q}"] dd[data-name="fleet"] .row').all_text_contents()
        assert fleet == view["vars"]["fleet"][q]
        assert set(values) | set(empty) == {name for name in view["vars"] if name in g.rs.per_player}
    # a chip says what the row is: its table and fields
    tip = page.locator('section.player[data-seat="0"] dd[data-name="fleet"] .row').first.get_attribute("title")
    first = view["vars"]["fleet"][0][0]
    assert tip.startswith(f"ships {first}: ") and f"kind {g.rs.row_fields[first]['kind']}" in tip
    # the shared values: a bag as its size, in words (nobody knows its order)
    shared, _ = panel(page, "shared")
    assert shared["alien_bag"] == f"{view['vars']['alien_bag']['hidden']} × Kind, shuffled"
    assert "{" not in page.inner_text("#body")  # no data printed as JSON
    texts = moves(page)
    assert len(texts) < len(state["log"]) + 1 and any("(hidden)" in x for x in texts)  # hidden draws told as such
    page.screenshot(path=str(_artifact("station_table.png")), full_page=True)
    page.context.close()


def test_kuhn_pages_show_each_seat_its_own_card_only(server, browser):
    t = server.create(file=1, seats=["human", "human"], seed=5)
    g = replayed_table(server, t, KUHN, 2, 5)
    cards = g.view(None)["vars"]["card"]
    for seat, tok in enumerate(tokens(t)):
        page = browser.new_context().new_page()
        page.goto(f"{server.url}/s/{tok}")
        mine, _ = panel(page, f"P{seat}")
        theirs, _ = panel(page, f"P{1 - seat}")
        assert mine["card"] == str(cards[seat]) and theirs["card"] == "hidden"
        assert panel(page, "shared")[0]["deck"] == "1 item, hidden"
        deal = moves(page)
        assert f"chance: drew {cards[seat]}" in deal and "chance: an item is drawn (hidden)" in deal
        assert str(cards[1 - seat]) not in " ".join(deal)
        page.context.close()


def test_choices_show_the_table_rows_they_name(server, browser):
    from interpreter.values import fmt

    t = server.create(file=2, players=2, seats=["human", "random"], seed=4)
    me = tokens(t)[0]
    state = server.wait(me, lambda s: s["your_turn"])
    page = browser.new_context(viewport={"width": 1200, "height": 1000}).new_page()
    page.goto(f"{server.url}/s/{me}")
    your_turn(page, state["decision"])
    rs = replayed_table(server, t, STATION, 2, 4).rs
    table_of = {row: table for table, rows in rs.table_rows.items() for row in rows}
    named = [a for a in state["legal"] if a["rows"]]
    assert named, "Station's first choice of a person names ships or hubs"
    for a in named:
        row = a["rows"][0]["row"]
        card = page.locator(f'button[data-action="{a["id"]}"] .card').first
        assert card.locator("small").first.text_content() == table_of[row]
        shown = [" ".join(f.split()) for f in card.locator(".field").all_text_contents()]
        want = [f"{k} {fmt(v)}" for k, v in rs.row_fields[row].items()
                if v is not None and v is not False and v != () and v != {}]
        assert shown == want, row
    page.context.close()


@pytest.mark.parametrize("index,path,players", [(2, "games/station.rules", 3), (3, "games/vega.rules", 3),
                                                (4, "games/mars.rules", 2), (5, "games/examples/connect4.rules", 2)])
def test_a_seat_page_is_a_game_table(server, browser, index, path, players):
    t = server.create(file=index, players=players, seats=["human"] + ["random"] * (players - 1), seed=7)
    me = tokens(t)[0]
    for _ in range(3):  # a few decisions, so that the table has something on it
        s = server.wait(me, lambda s: s["your_turn"] or s["over"])
        if s["over"]:
            break
        assert server.act(me, s["legal"][len(s["legal"]) // 2]["id"], s["decision"]).status_code == 200
    s = server.wait(me, lambda s: s["your_turn"] or s["over"])
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{server.url}/s/{me}")
    page.wait_for_selector(f'#status[data-decision="{s["decision"]}"]', timeout=WAIT)
    assert page.locator(".boardbox svg").count() == len(s["boards"])  # every board drawn
    assert page.locator("section.player").count() == players
    assert page.locator("section.player.you").get_attribute("data-seat") == "0"
    if s["your_turn"]:
        assert page.locator("#actions form.act button[data-action]").count() == len(s["legal"])
    body = page.inner_text("#body")
    assert '"hidden"' not in body and "{" not in body  # values in words, never the view's JSON
    assert moves(page)[-1].split(":")[0] in ("chance", "P0", "P1", "P2")
    page.screenshot(path=str(_artifact(f"table_{Path(path).stem}.png")), full_page=True)
    page.context.close()


def test_the_lobby_and_editor_offer_the_declared_seats_only(server, browser):
    page = browser.new_context().new_page()
    page.goto(server.url + "/")
    form = page.locator("form.newtable").nth(2)  # Station, played by 2 to 4
    assert form.locator("h2 small").text_content() == "station.rules"
    assert form.locator("label.seat:visible").count() == 2
    form.locator("select.players").select_option("4")
    assert form.locator("label.seat:visible").count() == 4
    page.goto(server.url + "/edit?file=0")
    play = page.locator("#playform")
    assert play.locator("select.players option").all_text_contents() == ["2"]
    assert play.locator("label.seat:visible").count() == 2
    page.select_option("#base", "2")
    assert play.locator("select.players option").all_text_contents() == ["2", "3", "4"]
    play.locator("select.players").select_option("3")
    assert play.locator("label.seat:visible").count() == 3
    assert str(ROOT) not in page.content()
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


def _artifact(name) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name

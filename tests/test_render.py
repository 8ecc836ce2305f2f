"""Board drawings (interpreter/render.py) and `rulelang show`: square, hex and graph boards, as text and
SVG, holding only what a seat may see (issue 13)."""
from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

import rulelang
from interpreter.render import board_contents, board_svg, board_text, boards_svg, boards_text
from rulelang.cli import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVG = "{http://www.w3.org/2000/svg}"

BOARDS = """
game "Boards" { players 2 }
board grid = square_grid(2, 3)
board ring = hex_grid(1)
board road { camp -- hall -- pit  hall -- well }
var marks: map[node, player] = {}
var secret: map[node, int] = {} visible to none
per player var home: node visible to owner
var lit: set[node] = {}
var rover: node = camp
setup {
  marks[(0, 0)] = 0
  marks[(1, 2)] = 1
  secret[(0, 1)] = 7
  home[0] = (-1, 1)
  home[1] = (1, -1)
  lit = {(0, 0), (1, 0)}
}
action go(n in [hall, pit, well]) {
  text "rover to {n}"
  effect { rover = n }
}
flow { loop { for p in players { turn p { offer [go] to p } } } }
"""


@pytest.fixture(scope="module")
def rules():
    return rulelang.loads(BOARDS)


def _with(game, **data):
    """The same game with some variables set (through a save, as a test of a hidden value changed)."""
    d = json.loads(game.to_json())
    d["data"].update(data)
    return game.rs.load_game(json.dumps(d))


def test_square_hex_and_graph_boards_as_text(rules):
    g = rules.new_game(2, seed=1)
    grid = board_text(g, 0, "grid").splitlines()
    # the square grid: a header of columns, then one row per grid row (marks and lit share the board)
    assert grid[0] == "board grid (marks, lit)"  # secret puts nothing seat 0 may see
    assert grid[1].split() == ["0", "1", "2"]
    # row 0 at the bottom (a board drawn as it stands on the table: connect four's discs fall down)
    assert grid[2].split() == ["1", "lit", ".", "marks=P1"]
    assert grid[3].split() == ["0", "marks=P0,lit", ".", "."]
    assert "hidden: secret: 1 hidden entries" in board_text(g, 0, "grid")
    ring = board_text(g, 0, "ring").splitlines()
    # hex_grid(1): rows r = -1, 0, 1 of 2, 3 and 2 hexes, the short rows shifted half a hex
    assert [len(row.split()) for row in ring[1:4]] == [2, 3, 2]
    def indent(row):
        return len(row) - len(row.lstrip())

    assert ring[1].split() == [".", "."] and indent(ring[1]) > indent(ring[2]) < indent(ring[3])
    # a node value has no board of its own: (0, 0) and (1, 0) are on the hex board too, so drawn there
    assert ring[2].split() == [".", "[2]", "lit"]
    assert ring[3].split() == ["[1]", "."]  # too long for a hex: listed under the drawing
    assert "  [1] (-1,1): home P0" in ring
    road = board_text(g, 0, "road")
    assert "  camp: rover  (next to hall)" in road
    assert "  hall: .  (next to camp, pit, well)" in road
    g.apply("go(pit)")
    assert "  pit: rover  (next to hall)" in board_text(g, 1, "road")


def test_hidden_values_stay_hidden(rules):
    g = rules.new_game(2, seed=1)
    # seat 0 sees its own home, not seat 1's; the secret map shows only how many entries it hides
    c0 = board_contents(g, 0, "ring")
    assert [lab for lab, _ in c0.labels[(-1, 1)]] == ["home P0"] and (1, -1) not in c0.labels
    assert "home P1: hidden" in c0.hidden
    assert board_contents(g, None, "grid").labels[(0, 1)] == [("secret=7", None)]  # the whole state has it
    assert (0, 1) not in board_contents(g, 0, "grid").labels
    # change the hidden values: what seat 0 is shown does not change, byte for byte
    h = json.loads(g.to_json())["data"]
    moved = [h["home"][0], h["home"][0]]  # seat 1's home moved onto seat 0's
    g2 = _with(g, home=moved)
    assert board_contents(g2, None, "ring").labels != board_contents(g, None, "ring").labels  # it did change
    assert boards_text(g2, 0) == boards_text(g, 0)
    assert boards_svg(g2, 0) == boards_svg(g, 0)
    # and seat 1 does see the change of its own home
    assert boards_text(g2, 1) != boards_text(g, 1)


def test_hidden_map_value_changed_is_not_drawn(rules):
    g = rules.new_game(2, seed=1)
    data = json.loads(g.to_json())["data"]
    secret = data["secret"]
    text = json.dumps(secret)
    assert "7" in text
    g2 = _with(g, secret=json.loads(text.replace("7", "9")))
    assert "secret=9" in boards_text(g2, None) and "secret=7" in boards_text(g, None)
    for seat in (0, 1):
        assert boards_text(g2, seat) == boards_text(g, seat)
        assert boards_svg(g2, seat) == boards_svg(g, seat)


def test_svg_draws_every_node_of_every_board(rules):
    g = rules.new_game(2, seed=1)
    root = ET.fromstring(boards_svg(g, 0))
    assert root.tag == SVG + "svg"
    nodes = {el.get("data-node") for el in root.iter(SVG + "g") if el.get("data-node")}
    expected = set()
    for name in ("grid", "ring", "road"):
        expected |= {rulelang_fmt(n) for n in g.rs.boards[name].nodes}
    assert nodes == expected
    assert len(list(root.iter(SVG + "rect"))) == 1 + 6  # the background and the six squares
    assert len(list(root.iter(SVG + "polygon"))) == 7  # hex_grid(1)
    assert len(list(root.iter(SVG + "circle"))) == 4 and len(list(root.iter(SVG + "line"))) == 3
    # a graph board without coordinates is laid out the same way every time
    assert board_svg(g, 0, "road") == board_svg(rules.new_game(2, seed=2), 0, "road")


def rulelang_fmt(n):
    from interpreter.values import fmt

    return fmt(n)


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def test_show_draws_a_saved_game(tmp_path):
    path = os.path.join(ROOT, "games", "examples", "connect4.rules")
    g = rulelang.load(path).new_game(2, seed=3)
    for col in (3, 3, 4):
        g.apply(f"drop({col})")
    save = tmp_path / "save.json"
    save.write_text(g.to_json())
    out = tmp_path / "board.svg"
    r = run("show", path, "--state", save, "--seat", 1, "-o", out)
    assert r.exit_code == 0, r.output
    root = ET.parse(out).getroot()
    titles = [t.text for t in root.iter(SVG + "title")]
    # connect4 fills row 0 first (drawn at the top: rows are drawn in coordinate order)
    assert "board grid" in titles and "(0,3): P0" in titles and "(1,3): P1" in titles and "(0,4): P0" in titles
    assert "(2,3): ." in titles
    # stdout without -o; bad saves, seats and files are one-line errors
    assert run("show", path, "--state", save).stdout.startswith("<?xml")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "rulelang/game-1", "data": 3}')
    r = run("show", path, "--state", bad)
    assert r.exit_code == 1 and r.stderr.startswith(f"rulelang: {bad}: ") and len(r.stderr.splitlines()) == 1
    bad.write_bytes(b"\xff\xfe garbage")
    r = run("show", path, "--state", bad)
    assert r.exit_code == 1 and len(r.stderr.splitlines()) == 1
    bad.write_text("[" * 1_100_000)  # parsed within a save's limits, never by an unbounded json.loads
    r = run("show", path, "--state", bad)
    assert r.exit_code == 1 and "more than 1,000,000 values" in r.stderr and len(r.stderr.splitlines()) == 1
    bad.write_text('{"format": "rulelang-log", "players": 2, "seed": 1, "variants": ["nope"], "log": []}')
    r = run("show", path, "--state", bad)
    assert r.exit_code == 1 and "the log names variant 'nope'" in r.stderr
    r = run("show", path, "--state", tmp_path / "none.json")
    assert r.exit_code == 1 and "cannot read save: no such file" in r.stderr
    r = run("show", path, "--state", save, "--seat", 5)
    assert r.exit_code == 2 and "2 players" in r.stderr
    kuhn = os.path.join(ROOT, "games", "examples", "kuhn_poker.rules")
    ksave = tmp_path / "kuhn.json"
    ksave.write_text(rulelang.load(kuhn).new_game(2, seed=1).to_json())
    r = run("show", kuhn, "--state", ksave)
    assert r.exit_code == 1 and "no board" in r.stderr


def test_graph_board_at_declared_positions():
    rs = rulelang.loads("""
game "G" { players 2 }
board road { a -- b -- c  node a(x: 0, y: 0)  node b(x: 2, y: 0)  node c(x: 2, y: 1) }
action pass { text "pass" effect { } }
flow { loop { for p in players { turn p { offer [pass] to p } } } }
""")
    root = ET.fromstring(board_svg(rs.new_game(2, seed=1), 0, "road"))
    at = {(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(SVG + "circle")}
    xs = sorted({x for x, _ in at})
    ys = sorted({y for _, y in at})
    # three circles: a and b on one row, b and c in one column, b twice as far from a as c from b
    assert len(at) == 3 and len(xs) == 2 and len(ys) == 2
    assert xs[1] - xs[0] == 2 * (ys[1] - ys[0])


def test_show_replays_a_play_log(tmp_path):
    path = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
    log = tmp_path / "game.log.json"
    r = CliRunner().invoke(cli, ["play", path, "--seed", "7", "--log", str(log)])
    assert r.exit_code == 0
    final = [x for x in r.stdout.splitlines() if " (random): " in x]
    r = run("show", path, "--state", log)
    assert r.exit_code == 0, r.output
    titles = [t.text for t in ET.fromstring(r.stdout).iter(SVG + "title")]
    marked = [t for t in titles if t.endswith((": P0", ": P1"))]
    assert len(marked) == len(final)  # every mark of the game, as played
    data = json.loads(log.read_text())
    data["log"][1]["action"] = data["log"][0]["action"]  # the second player marks the same cell
    log.write_text(json.dumps(data))
    r = run("show", path, "--state", log)
    assert r.exit_code == 1 and "the log does not replay" in r.stderr and len(r.stderr.splitlines()) == 1


CONNECT4 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "games", "examples",
                        "connect4.rules")


def test_a_square_grid_is_drawn_with_row_zero_at_the_bottom_unless_the_board_says_otherwise():
    """Connect four's first disc lies in row 0, the lowest row: it is drawn on the last line of the grid and
    lowest in the SVG. `square_grid(..., row_zero_at_top: true)` draws row 0 first, as a page is read."""
    with open(CONNECT4, encoding="utf-8") as fh:
        text = fh.read()
    for flipped in (False, True):
        source = text.replace("square_grid(6, 7)", "square_grid(6, 7, row_zero_at_top: true)") if flipped else text
        assert source != text or not flipped
        g = rulelang.loads(source, name=CONNECT4).new_game(2, seed=1)
        g.apply(g.legal_actions()[0])  # a disc into column 0: it lands in row 0
        rows = board_text(g, None, "grid").splitlines()[2:]
        assert [r.split()[0] for r in rows] == (["0", "1", "2", "3", "4", "5"] if flipped else
                                                ["5", "4", "3", "2", "1", "0"])
        holding = [r for r in rows if "P0" in r]
        assert len(holding) == 1 and holding[0].split()[0] == "0"
        root = ET.fromstring(board_svg(g, None, "grid"))
        y_of = {el.get("data-node"): float(el.find(SVG + "rect").get("y"))
                for el in root.iter(SVG + "g") if el.get("data-node")}
        assert (y_of["(0,0)"] > y_of["(5,0)"]) is not flipped  # larger y: lower on the page

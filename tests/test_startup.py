"""Start-up: what each entry point imports (no timings here: benchmarks/ measures those)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("networkx", "click", "lark", "attrs", "rich", "rulelang.checker", "interpreter.engine")


def imported_after(code: str) -> set:
    probe = code + f"\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env=dict(os.environ, RULELANG_NO_CACHE="1"))
    assert r.returncode == 0, r.stderr
    return set(r.stdout.split())


def test_importing_the_package_loads_nothing_heavy():
    assert imported_after("import rulelang, rulelang.__main__, rulelang.cache") == set()


def test_the_command_line_does_not_load_networkx():
    assert "networkx" not in imported_after("import rulelang.cli")


def test_checking_a_game_without_a_board_does_not_load_networkx():
    got = imported_after("import rulelang\nassert rulelang.check('games/station.rules') == []")
    assert "networkx" not in got and "rulelang.checker" in got


def test_boards_are_built_and_played_without_networkx():
    got = imported_after("import rulelang\ng = rulelang.load('games/examples/connect4.rules').new_game(2, seed=1)\n"
                         "g.apply(g.legal_actions()[0])")
    assert "networkx" not in got and "interpreter.engine" in got


BOARDS = [("square_grid", (r, c), d) for r in (1, 2, 5) for c in (1, 3, 7) for d in ({}, {"diagonals": True})] + \
    [("hex_grid", (r,), {}) for r in (0, 1, 4)] + [("hex_rect", (r, c), {}) for r in (1, 4) for c in (2, 5)] + \
    [("line", (n,), {}) for n in (1, 2, 9)]


@pytest.mark.parametrize("kind,args,kw", BOARDS)
def test_a_board_is_the_graph_networkx_would_hold(kind, args, kw):
    import random

    import networkx as nx

    from interpreter import boards as B

    board = B.GENERATORS[kind]("b", *args, **kw)
    g = board.to_networkx()
    same = B.Board("b", g, board.directions)  # the board over a networkx graph, as boards were built
    assert (board.nodes, board.adj) == (same.nodes, same.adj)
    assert list(board.graph.nodes) == list(g.nodes) and board.graph.number_of_edges() == g.number_of_edges()
    assert all(board.attr(n, k) == same.attr(n, k) for n in board.nodes for k in ("row", "column", "q", "ring", "edge"))
    rnd = random.Random(len(board.nodes))
    for _ in range(20):
        keep = set(rnd.sample(board.nodes, rnd.randint(0, len(board.nodes))))
        comps = sorted((tuple(sorted(c, key=B.skey)) for c in nx.connected_components(g.subgraph(keep))),
                       key=lambda c: B.skey(c[0]))
        assert board.groups(lambda n: n in keep) == tuple(comps)


def test_a_board_from_edges_keeps_attributes_loops_and_repeated_edges():
    from interpreter import boards as B

    board = B.from_edges("b", [["a", "b", "a"], ["c", "c"], ["d"]], [("b", {"x": 1}), ("e", {"x": 2}), ("b", {"y": 3})])
    g = board.to_networkx()
    assert list(g.nodes(data=True)) == [("b", {"x": 1, "y": 3}), ("e", {"x": 2}), ("a", {}), ("c", {}), ("d", {})]
    assert list(g.edges) == [("b", "a"), ("c", "c")] and board.graph.number_of_edges() == 2
    assert board.adj == {"a": ("b",), "b": ("a",), "c": ("c",), "d": (), "e": ()}
    assert [1] not in board.graph and board.attr([1], "x", "none") == "none"


def test_the_api_names_are_there_when_asked_for():
    import rulelang

    for name in rulelang.__all__:
        assert getattr(rulelang, name) is not None
    from rulelang import GameError, RuleError, load  # noqa: F401
    assert set(rulelang.__all__) <= set(dir(rulelang))
    with pytest.raises(AttributeError):
        rulelang.no_such_name  # noqa: B018


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_the_quick_entry_point_answers_as_the_full_one(args):
    def run(module_code):
        r = subprocess.run([sys.executable, "-c", module_code, *args], capture_output=True, text=True,
                           cwd=ROOT, timeout=60)
        return r.returncode, r.stdout, r.stderr
    quick = run("from rulelang.__main__ import main; main()")
    full = run("from rulelang.cli import main; main()")
    assert quick == full and quick[0] == 0

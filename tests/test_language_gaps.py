"""Constructs that games written from the docs needed (issue 35), each on its own, in both backends:
`offer ... else { ... }` (a position with no legal move is something the rules say), the `hex_rhombus`
board (Hex's), and comprehensions with several `for` parts."""
from __future__ import annotations

import pytest

import rulelang
from interpreter.render import board_text

BACKENDS = ["generated", "closures"]


def load(text, backend):
    rs = rulelang.loads(text)
    return rs if backend == "generated" else rs.with_backend("closures")


NO_MOVE = '''game "Tokens" { players 2 }
per player var left: int = 2
var loser: player = none
action take { require left[me] > 0  effect { left[me] -= 1 } }
flow {
  loop {
    for p in players {
      turn p { offer [take] to p else { loser = p  log "no move"  end_game "no move left" } }
    }
  }
}
score p = if loser == p then 0 else 1
'''


@pytest.mark.parametrize("backend", BACKENDS)
def test_offer_else_runs_when_no_action_is_legal(backend):
    rs = load(NO_MOVE, backend)
    g = rs.new_game(2, seed=1)
    while not g.is_over():
        g.apply(g.legal_actions()[0])
    # P0 and P1 take twice each; then P0 has no move: it loses
    assert len(g.log) == 4 and g.end_reason == "no move left" and g.winners() == [1]
    assert rs.load_game(g.to_json()).to_json() == g.to_json()
    # mid-game saves (a pending offer that has an else block) load too
    g = rs.new_game(2, seed=1)
    g.apply("take")
    assert rs.load_game(g.to_json()).to_json() == g.to_json()


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_else_no_legal_action_is_a_stuck_game_with_a_hint(backend):
    rs = load(NO_MOVE.replace(" else { loser = p  log \"no move\"  end_game \"no move left\" }", ""), backend)
    g = rs.new_game(2, seed=1)
    with pytest.raises(rulelang.GameError) as e:
        for _ in range(5):
            g.apply(g.legal_actions()[0])
    assert "has no legal action" in str(e.value) and "else" in str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hex_rhombus_neighbours_are_those_of_hex(backend):
    """OpenSpiel's hex: (r, c) touches (r, c-1), (r, c+1), (r-1, c), (r-1, c+1), (r+1, c-1), (r+1, c)."""
    text = ('game "H" { players 2 }\nboard b = hex_rhombus(7, 7)\nvar near: list[node] = []\n'
            'var corner: list[node] = []\nvar line: int = 0\n'
            'flow { near = neighbors(b, (3, 3))  corner = neighbors(b, (0, 0))\n'
            '  line = line_length(b, (0, 6), where: x => x[0] + x[1] == 6)  end_game }\n')
    rs = load(text, backend)
    g = rs.new_game(2)
    v = g.view(None)["vars"]
    assert sorted(map(tuple, v["near"])) == [(2, 3), (2, 4), (3, 2), (3, 4), (4, 2), (4, 3)]
    assert sorted(map(tuple, v["corner"])) == [(0, 1), (1, 0)]
    assert v["line"] == 7  # the anti-diagonal r + c == 6 is a straight line of 7 hexes
    assert len(rs.boards["b"].nodes) == 49  # a 7x7 board is 49 cells (a hex_grid would need 469 for it)
    rows = board_text(g, None, "b").splitlines()[1:8]
    indents = [len(r) - len(r.lstrip()) for r in rows]
    assert indents == sorted(indents) and len(set(indents)) == 7  # each row shifted half a hex further


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_comprehension_with_several_for_parts(backend):
    text = ('game "C" { players 2 }\nvar out: list[any] = []\nvar out2: list[any] = []\n'
            'flow {\n  out = [(a, b) for a in 1..3 for b in 1..3 if a < b]\n'
            '  out2 = [(a, b, c) for a in 1..3 if a > 1 for b in [10, 20] for c in ["x"]]\n  end_game\n}\n')
    v = load(text, backend).new_game(2).view(None)["vars"]
    assert v["out"] == [[1, 2], [1, 3], [2, 3]]
    assert v["out2"] == [[2, 10, "x"], [2, 20, "x"], [3, 10, "x"], [3, 20, "x"]]


def test_a_comprehension_with_several_for_parts_is_charged_as_its_flatten():
    text = ('game "C" { players 2 }\nvar n: int = 0\n'
            'flow { loop { n = count([(a, b) for a in 1..1000 for b in 1..1000]) } }\n')
    with pytest.raises(rulelang.GameError) as e:
        rulelang.loads(text).new_game(2)
    assert "budget" in str(e.value) or "limit" in str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_decisions_in_the_header_is_a_bound_the_engine_holds(backend):
    text = ('game "T" { players 2  max_decisions 3 }\nper player var n: int\n'
            'action a { effect { n[me] += 1 } }\nflow { loop { for p in players { turn p { offer [a] to p } } } }\n')
    g = load(text, backend).new_game(2)
    for _ in range(3):
        g.apply("a")
    with pytest.raises(rulelang.GameError) as e:
        g.apply("a")
    assert "at most 3 decisions" in str(e.value) and g.error is not None
    with pytest.raises(rulelang.RuleError):
        rulelang.loads(text.replace("max_decisions 3", "max_decisions 0"))


def test_connect_four_declares_its_length_and_openspiel_reports_it():
    pytest.importorskip("pyspiel")
    from pathlib import Path

    from rulelang.openspiel import load_game

    path = Path(__file__).resolve().parent.parent / "games" / "examples" / "connect4.rules"
    assert rulelang.load(str(path)).program.game.max_decisions == 42
    assert load_game(str(path)).max_game_length() == 42  # OpenSpiel's connect_four: 42

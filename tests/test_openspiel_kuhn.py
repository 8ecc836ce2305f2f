"""Kuhn poker (games/examples/kuhn_poker.rules) against OpenSpiel's `kuhn_poker`, over the whole
game tree: every deal and every betting sequence.

At every node: the player to move, the legal actions (our `pass`/`bet` <-> OpenSpiel's 0/1, our
chance outcome `c` <-> OpenSpiel's card `c`), the chance probabilities, the end, and at the end our
scores equal OpenSpiel's returns (chips won or lost).

Hidden information is checked against the reference too: OpenSpiel's information state string for
seat p is what p knows (its own card and the betting). Over all decision nodes, two nodes have the
same view(p) here exactly when they have the same information state for p in OpenSpiel — so a view
shows everything p knows (it tells apart positions p can tell apart) and nothing more (it never tells
apart positions p cannot).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pyspiel = pytest.importorskip("pyspiel")

import rulelang  # noqa: E402

RULES = Path(__file__).resolve().parents[1] / "games" / "examples" / "kuhn_poker.rules"
OURS = {0: "pass", 1: "bet"}


def walk():
    """Every node of the game tree: (OpenSpiel state, our game), depth first."""
    rs = rulelang.load(str(RULES))
    out = []

    def visit(os_state, game):
        out.append((os_state, game))
        if os_state.is_terminal():
            return
        for a in os_state.legal_actions():
            child_os = os_state.child(a)
            child = game.clone()
            child.apply(str(a) if os_state.is_chance_node() else OURS[a])
            visit(child_os, child)

    visit(pyspiel.load_game("kuhn_poker").new_initial_state(), rs.new_game(2, seed=0, chance="explicit"))
    return out


NODES = walk()


def test_the_whole_tree_is_walked():
    assert len(NODES) == 58  # 1 + 3 + 6 deals, then 6 x 8 betting nodes


@pytest.mark.parametrize("i", range(len(NODES)))
def test_each_node_matches_openspiel(i):
    os_state, game = NODES[i]
    if os_state.is_terminal():
        assert game.is_over() and game.current_player == -4
        assert game.scores() == [int(r) for r in os_state.returns()]
        return
    assert game.current_player == os_state.current_player()
    if os_state.is_chance_node():
        ours = {a.id: p for a, p in game.chance_outcomes()}
        assert ours == pytest.approx({str(a): p for a, p in os_state.chance_outcomes()})
    else:
        assert sorted(a.id for a in game.legal_actions()) == sorted(OURS[a] for a in os_state.legal_actions())


@pytest.mark.parametrize("seat", [0, 1])
def test_a_view_shows_exactly_what_the_information_state_knows(seat):
    by_info = {}
    by_view = {}
    decision_nodes = [(s, g) for s, g in NODES if not s.is_terminal() and not s.is_chance_node()]
    assert len(decision_nodes) == 6 * 4  # 6 deals x (start, after p, after b, after pb)
    for os_state, game in decision_nodes:
        info = os_state.information_state_string(seat)
        view = json.dumps(game.view(seat), sort_keys=True)
        by_info.setdefault(info, set()).add(view)
        by_view.setdefault(view, set()).add(info)
    for info, views in by_info.items():
        assert len(views) == 1, f"seat {seat} cannot tell these apart ({info!r}) but its views differ: {views}"
    for view, infos in by_view.items():
        assert len(infos) == 1, f"seat {seat} can tell {infos} apart but sees the same view"
    assert len(by_info) == 3 * 4  # own card x betting position


def test_the_showdown_reveals_both_cards_to_both_seats():
    for os_state, game in NODES:
        if os_state.is_terminal() and game.end_reason == "showdown":
            for seat in (0, 1):
                assert game.view(seat)["vars"]["card"] == game.view(None)["vars"]["card"]
        elif os_state.is_terminal():  # a fold: the folded hand is never shown
            assert "?" in game.view(0)["vars"]["card"] and "?" in game.view(1)["vars"]["card"]

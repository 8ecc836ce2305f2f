"""`rulelang graph`: the diagram's nodes and edges against the program (issue 13), and the SVG that
Graphviz draws of Station."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from tests.system_tools import require_dot
from click.testing import CliRunner

import rulelang
from rulelang import ast as A
from rulelang import graph
from rulelang.cli import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATION = os.path.join(ROOT, "games", "station.rules")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def station():
    return rulelang.load(STATION)


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def _ends(block):
    return {s.reason or "" for s in A.walk(block) if isinstance(s, (A.EndGame, A.TriggerEnd))}


def test_every_action_event_trigger_and_ending_of_station_is_a_node(station):
    prog = station.source_program
    d = graph.build(prog)
    actions = [n for n, x in prog.decls.items() if isinstance(x, A.ActionDecl)]
    assert actions and all(f"action:{a}" in d.nodes for a in actions)
    events = {t.event for t in prog.triggers} | {x.name for x in prog.decls.values() if isinstance(x, A.EventDecl)}
    assert events and all(f"event:{e}" in d.nodes for e in events)
    assert prog.triggers and all(f"trigger:{i}" in d.nodes for i in range(len(prog.triggers)))
    reasons = {e.name for e in prog.endings} | {r for r, _ in station.checker.ends}
    assert reasons and all(f"ending:{r or '(end_game)'}" in d.nodes for r in reasons)
    # every trigger hangs from its event, and a trigger that ends the game has an edge to that ending
    edges = {(e.src, e.dst, e.kind) for e in d.edges}
    for i, t in enumerate(prog.triggers):
        assert (f"event:{t.event}", f"trigger:{i}", "fires") in edges
        for r in _ends(t.body):
            assert (f"trigger:{i}", f"ending:{r or '(end_game)'}", "ends") in edges
    # the flow offers each of Station's actions in the turn of its loop
    offered = {e.dst for e in d.edges if e.kind == "offers"}
    assert offered == {f"action:{a}" for a in actions}


def test_actions_read_and_change_what_their_rules_touch(station):
    d = graph.build(station.source_program, only=("actions",))
    edges = {(e.src, e.dst, e.kind) for e in d.edges}
    # use_own: `cost gems[me]: s.cost` changes gems; `require s not in used[me]` and `add s to used[me]`
    assert ("action:use_own", "var:gems", "changes") in edges
    assert ("action:use_own", "var:used", "changes") in edges
    # use_neutral only reads `used` (it sets token_on instead), and changes token_on
    assert ("var:used", "action:use_neutral", "reads") in edges
    assert ("action:use_neutral", "var:token_on", "changes") in edges
    assert not any(n.kind in ("trigger", "offer") for n in d.nodes.values())  # only the part asked for


CASCADE = """
game "Cascade" { players 2 }
var n: int = 0
per player var hand: list[int] visible to owner
event scored(p: player)
event bonus(p: player)
piece token { owner: player, value: int = 0 }
procedure announce(p: player) { emit bonus(p) }
action score {
  text "score"
  require n < 5
  effect {
    n += 1
    let t = new token(owner: me)
    t.value = 2
    emit scored(me)
  }
}
action pass { text "pass" effect { } }
when scored(p) then { announce(p) }
when bonus(p) if n >= 3 then { trigger_end "three" }
ending "five" when n >= 5
phase play_round {
  for p in players { turn p { offer [score, pass] to p } }
}
flow { loop { play_round() } }
"""


def test_cascades_pieces_phases_and_endings_of_a_small_game():
    rs = rulelang.loads(CASCADE)
    d = graph.build(rs.source_program)
    edges = {(e.src, e.dst, e.kind) for e in d.edges}
    # a trigger whose effect emits an event (through a procedure it calls) has the cascade edge
    assert ("event:scored", "trigger:0", "fires") in edges
    assert ("trigger:0", "event:bonus", "emits") in edges
    assert ("event:bonus", "trigger:1", "fires") in edges
    assert ("trigger:1", "ending:three", "ends") in edges
    assert ("action:score", "event:scored", "emits") in edges
    # the phase is a cluster holding its offer and the actions only it offers; flow calls it in a loop
    assert d.nodes["phase:play_round"].cluster == "phase:play_round"
    assert ("flow", "phase:play_round", "calls") in edges
    assert any(e.src == "flow" and e.dst == "phase:play_round" and e.label == "repeats" for e in d.edges)
    offer = [n for n in d.nodes.values() if n.kind == "offer"]
    assert len(offer) == 1 and offer[0].cluster == "phase:play_round" and offer[0].label.startswith("turn")
    assert d.nodes["action:score"].cluster == "phase:play_round"
    # pieces: the action creates tokens and sets a field; the ending declaration reads n
    assert ("action:score", "piece:token", "changes") in edges
    assert ("action:score", "var:n", "changes") in edges
    assert ("var:n", "ending:five", "reads") in edges
    assert ("action:pass", "var:n", "changes") not in edges
    # the writers: DOT names every node once, Mermaid declares a subgraph per cluster
    dot = graph.to_dot(d)
    declared = [line.split('"')[1] for line in dot.splitlines() if line.startswith("  ") and " [label=" in line
                and " -> " not in line]
    assert sorted(declared) == sorted(d.nodes)
    assert 'subgraph "cluster_phase:play_round"' in dot
    mer = graph.to_mermaid(d)
    assert mer.count("subgraph ") == len(d.clusters) and "flowchart LR" in mer


def test_svg_renders_with_a_title_per_node(station, tmp_path):
    require_dot()
    out = tmp_path / "station.svg"
    r = run("graph", STATION, "--format", "svg", "-o", out)
    assert r.exit_code == 0, r.output
    root = ET.parse(out).getroot()  # valid XML
    assert root.tag == SVG + "svg"
    titles = {t.text for t in root.iter(SVG + "title")}
    d = graph.build(station.source_program)
    assert set(d.nodes) <= titles


def test_cli_formats_parts_and_errors(tmp_path, monkeypatch):
    tictactoe = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
    r = run("graph", tictactoe)
    assert r.exit_code == 0 and r.stdout.startswith("---\ntitle:") and "flowchart LR" in r.stdout
    r = run("graph", tictactoe, "--format", "dot", "--only", "events")
    assert r.exit_code == 0 and r.stdout.startswith("digraph") and '"action:place"' not in r.stdout
    r = run("graph", tmp_path / "missing.rules")
    assert r.exit_code == 1 and r.stderr.strip() == f"rulelang: {tmp_path / 'missing.rules'}: cannot read file: no such file"
    r = run("graph", tictactoe, "--format", "png")
    assert r.exit_code == 2
    bad = tmp_path / "bad.rules"
    bad.write_text('game "B" { players 2 }\nvar x: int = y\n')
    r = run("graph", bad)
    assert r.exit_code == 1 and "error[E201]" in r.stderr
    # without Graphviz, --format svg says what to install, in one line
    monkeypatch.setattr(graph.shutil, "which", lambda name: None)
    r = run("graph", tictactoe, "--format", "svg")
    assert r.exit_code == 1 and len(r.stderr.strip().splitlines()) == 1 and "apt-get install graphviz" in r.stderr


def test_mermaid_says_when_it_passes_mermaids_edge_limit():
    d = graph.Diagram("many")
    for i in range(graph.MERMAID_MAX_EDGES + 1):
        d.add(graph.Node(f"var:v{i}", f"v{i}", "var"))
        d.add(graph.Node("action:a", "a", "action"))
        d.link("action:a", f"var:v{i}", "changes")
    assert "%% 501 edges: Mermaid draws at most 500" in graph.to_mermaid(d)
    del d.edges[-1]
    assert "%%" not in graph.to_mermaid(d)

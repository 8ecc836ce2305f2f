"""Every declaration kind a variant or house rule may `override` is replaced by name, in its place; where
nothing names what would be replaced (an unlabelled trigger) or override means nothing (`extend`), the
override is refused with a hint instead of silently adding a second declaration (issue 30)."""
from __future__ import annotations

from pathlib import Path

import pytest

import rulelang
from rulelang import RuleError

ROOT = Path(__file__).resolve().parent.parent
STATION = ROOT / "games" / "station.rules"

GAME = '''
game "Race" { players 2 }
per player var vp: int
event scored(p: player)
when "goal": scored(p) if vp[p] >= 3 then { trigger_end "three points" }
when scored(p) then { log "a point" }
action point { effect { vp[me] += 1  emit scored(me) } }
flow { loop { for p in players { turn p { offer [point] to p } } if end_triggered { end_game } } }
score p = vp[p]
scenario "three points end the game" {
  players 2
  when { play "point"  play "point"  play "point"  play "point"  play "point" }
  then { expect end_reason == "three points" }
}
'''


def codes(text, variants=()):
    with pytest.raises(RuleError) as e:
        rulelang.loads(text, variants=list(variants))
    return [(d.code, d.message, d.hint) for d in e.value.diagnostics]


def play_out(rs):
    g = rs.new_game(2, seed=1)
    while not g.is_over():
        g.apply(g.legal_actions()[0])
    return g


def test_a_labelled_trigger_is_replaced_in_place_and_the_reason_is_the_new_rules():
    plain = play_out(rulelang.loads(GAME))
    assert plain.end_reason == "three points"
    house = GAME + '''variant short {
  override when "goal": scored(p) if vp[p] >= 2 then { trigger_end "two points" }
}'''
    rs = rulelang.loads(house, variants=["short"])
    assert [t.label for t in rs.program.triggers] == ["goal", None]  # the same place, no second trigger
    g = play_out(rs)
    assert g.end_reason == "two points" and max(g.view(None)["vars"]["vp"]) == 2


def test_an_unlabelled_trigger_cannot_be_overridden():
    got = codes(GAME + "override when scored(p) then { log \"another\" }\n")
    assert [c for c, _, _ in got] == ["E102"]
    _, message, hint = got[0]
    assert "unlabelled trigger cannot be overridden" in message
    assert 'when "LABEL": scored(' in hint


def test_an_unknown_or_doubled_trigger_label_is_an_error():
    got = codes(GAME + 'override when "gaol": scored(p) then { log "x" }\n')
    assert [c for c, _, _ in got] == ["E102"] and '"goal"' in got[0][2]
    got = codes(GAME + 'when "goal": scored(p) then { log "x" }\n')
    assert [c for c, _, _ in got] == ["E101"] and "override when" in got[0][2]


def test_station_house_rule_replaces_the_vp_trigger(tmp_path):
    """The issue's example: a house rule ending Station at 25 VP says so, and does not add a trigger."""
    house = tmp_path / "house.rules"
    house.write_text('extends "station.rules"\n'
                     '@rule "S-12"\n'
                     'override when "40 VP": turn_end(p) if not end_triggered and points[p] >= 25 then {\n'
                     '  trigger_end "25 VP"\n  trigger_seat = p\n}\n', encoding="utf-8")
    (tmp_path / "station.rules").write_text(STATION.read_text(encoding="utf-8"), encoding="utf-8")
    base = rulelang.load(str(tmp_path / "station.rules"))
    rs = rulelang.load(str(house))
    labels = [t.label for t in rs.program.triggers]
    assert labels == [t.label for t in base.program.triggers] and "40 VP" in labels
    replaced = rs.program.triggers[labels.index("40 VP")]
    assert any(getattr(s, "reason", None) == "25 VP" for s in replaced.body.stmts)
    # unlabelled, the same override is refused rather than added
    house.write_text('extends "station.rules"\n@rule "S-12"\n'
                     'override when turn_end(p) if points[p] >= 25 then { trigger_end "25 VP" }\n')
    with pytest.raises(RuleError) as e:
        rulelang.load(str(house))
    assert [d.code for d in e.value.diagnostics] == ["E102"]


def test_override_of_a_scenario_replaces_it_by_name():
    text = GAME + '''override scenario "three points end the game" {
  players 2
  when { play "point" }
  then { expect vp[0] == 1 }
}'''
    rs = rulelang.loads(text)
    assert [s.name for s in rs.program.scenarios] == ["three points end the game"]
    assert len(rs.program.scenarios[0].when[0].stmts) == 1  # the new one, in place of the old
    assert [c for c, _, _ in codes(GAME + 'override scenario "nothing" { players 2 }\n')] == ["E102"]


def test_override_of_a_variant_replaces_it_and_an_unknown_one_is_an_error(tmp_path):
    (tmp_path / "base.rules").write_text(GAME + 'variant fast { override when "goal": scored(p) if vp[p] >= 2 '
                                                'then { trigger_end "two" } }\n', encoding="utf-8")
    (tmp_path / "house.rules").write_text('extends "base.rules"\noverride variant fast { override when "goal": '
                                          'scored(p) if vp[p] >= 1 then { trigger_end "one" } }\n', encoding="utf-8")
    assert play_out(rulelang.load(str(tmp_path / "house.rules"), variants=["fast"])).end_reason == "one"
    (tmp_path / "house.rules").write_text('extends "base.rules"\noverride variant slow { }\n', encoding="utf-8")
    with pytest.raises(RuleError) as e:
        rulelang.load(str(tmp_path / "house.rules"))
    assert [d.code for d in e.value.diagnostics] == ["E102"]


def test_override_extend_is_refused_with_a_hint():
    got = codes(GAME + "override extend point { log \"more\" }\n")
    assert [c for c, _, _ in got] == ["E105"] and "extend point" in got[0][2]

"""Hostile rule files and saves around pieces: endless creation, huge pieces, piece lists walked over
and over, and broken piece data in saves end in a one-line error, within time and memory bounds."""
import json

from hypothesis import given, settings
from hypothesis import strategies as st

import rulelang
from tests.hostile.bounded import run_bounded

HEAD = 'game "H" { players 2 }\npiece Ship { n: int = 0, cargo: list[int] = [] }\n'
FLOW = '''
action pass { }
flow { loop { for p in players { turn p { offer [pass] to p } } } }
ending "never" when false
'''

RUN = '''
import rulelang
try:
    rulelang.loads(ARGS["text"]).new_game(2, seed=1)
    print("ran")
except rulelang.GameError as e:
    print("error:", str(e).splitlines()[0])
'''


def bounded(setup):
    out = run_bounded(RUN, {"text": HEAD + setup + FLOW}, seconds=20)
    assert out.ok, out.explain()
    return out.stdout.strip()


def test_endless_creation_stops_at_the_piece_limit():
    assert "more than 100,000 pieces at once" in bounded("setup { loop { let s = new Ship() } }")


def test_walking_the_piece_list_over_and_over_is_bounded():
    out = bounded("setup { for i in 1..1000 { let s = new Ship() }  loop { let k = count([x for x in Ship if x.n == 0]) } }")
    assert out.startswith("error:") and ("steps" in out)


def test_big_fields_on_many_pieces_are_bounded():
    out = bounded("setup { loop { let s = new Ship(cargo: 1..100000) } }")
    assert out.startswith("error:")


RS = rulelang.loads(HEAD + 'var keep: list[Ship]\nsetup { let a = new Ship(n: 2)  let b = new Ship()  keep = [a, b] }' + FLOW)
SAVE = json.loads(RS.new_game(2, seed=1).to_json())

values = st.recursive(st.none() | st.booleans() | st.integers(-3, 5) | st.text(max_size=3),
                      lambda inner: st.lists(inner, max_size=3) | st.fixed_dictionaries({"$piece": st.text(max_size=4) | st.just("Ship"),
                                                                                           "id": inner}),
                      max_leaves=8)


@settings(deadline=None, max_examples=150)
@given(where=st.sampled_from(["#Ship", "#Ship.next", "keep", "row", "field", "id"]), value=values)
def test_broken_piece_data_in_a_save_is_a_game_error(where, value):
    d = json.loads(json.dumps(SAVE))
    if where == "row":
        d["data"]["#Ship"]["$map"][0][1] = value
    elif where == "field":
        d["data"]["#Ship"]["$map"][0][1][0] = value
    elif where == "id":
        d["data"]["#Ship"]["$map"][0][0] = value
    else:
        d["data"][where] = value
    try:
        g = RS.load_game(json.dumps(d))
    except rulelang.GameError:
        return
    g.view(0)
    g.view(None)
    g.clone().to_json()
    for a in g.legal_actions():
        g.clone().apply(a)

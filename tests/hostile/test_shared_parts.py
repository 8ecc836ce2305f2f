"""Values whose parts are shared many times (issue 31.1): a list of 100,000 references to one list of
100,000 items is 10^10 items by the size rule (shared parts count each time they appear). Measuring such
a value must stop at the size limit, not visit every inner item: each case ends with a GameError naming a
limit, within a few seconds of CPU, in a bounded child."""
from __future__ import annotations

import pytest

from tests.hostile.bounded import run_bounded

CHILD = '''
import time
import rulelang
from rulelang import GameError, RuleError
start = time.process_time()
try:
    rs = rulelang.loads(ARGS["text"])
    g = rs.new_game(2, seed=1)
    g.to_json()
    g.view(0)
    print("NO ERROR")
except GameError as e:
    print("GameError:", e)
except RuleError as e:
    print("RuleError:", e.diagnostics[0].code, e.diagnostics[0].message)
print("cpu", round(time.process_time() - start, 2))
'''

HEAD = 'game "T" { players 2 }\nvar out: any = none\n'
CASES = {
    "list of one shared list": "flow { let a = copies(1, 100000)  out = [a for i in 0..99999] }",
    "copies of a list": "flow { let a = copies(1, 100000)  out = copies(a, 100000) }",
    "map of a shared list": "var m: map[int, any] = {}\nflow { let a = copies(1, 100000)  "
                            "for i in 0..99999 { m[i] = a }  out = m }",
    "shared list two levels down": "flow { let a = copies(1, 1000)  let b = copies(a, 1000)  "
                                   "out = [b for i in 0..99999] }",
    "a constant": "const a = copies(1, 100000)\nconst c = [a for i in 0..99999]\nflow { out = c }",
    "a set of shared lists": "flow { let a = copies(1, 100000)  out = to_set([[a, i] for i in 0..99999]) }",
    "compared": "flow { let a = copies(1, 100000)  let b = copies(a, 100000)  out = b == b }",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_value_of_shared_parts_stops_at_a_limit_without_walking_them(name):
    out = run_bounded(CHILD, {"text": HEAD + CASES[name] + "\n"}, seconds=20)
    assert out.ok, out.explain()
    assert "GameError:" in out.stdout, out.explain()
    assert any(word in out.stdout for word in ("size limit", "work budget", "items")), out.explain()
    assert float(out.stdout.split("cpu")[-1]) < 5, out.explain()

"""The folder of attack inputs (tests/hostile/attacks/): every rule file in it is checked (every variant)
and, if it loads, played with random moves, in a child bounded by CPU time and memory. Its first line
says what must happen: `# expect: clean`, `# expect: RuleError CODE` (a positioned diagnostic of that
code) or `# expect: GameError TEXT` (a run-time error whose message holds TEXT). A file whose first line
says `(a base file ...)` is only read through another. New attacks are added as files, not code."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.bounded import run_bounded

FOLDER = Path(__file__).resolve().parent / "attacks"
CASES = sorted(p for p in FOLDER.rglob("*.rules") if "(a base file" not in p.read_text().splitlines()[0])

CHILD = '''
import random
import rulelang
from rulelang import GameError, RuleError
path = ARGS["path"]
diags = [d for d in rulelang.check(path, cache=False, every_variant=True) if d.severity == "error"]
if diags:
    print("RuleError", diags[0].code, diags[0].render().splitlines()[0])
else:
    try:
        rs = rulelang.load(path)
        rng = random.Random(1)
        g = rs.new_game(min(rs.player_counts), seed=1)
        for _ in range(200):
            if g.is_over():
                break
            g.apply(rng.choice(g.legal_actions()))
        rs.load_game(g.to_json())
        print("clean")
    except GameError as e:
        print("GameError", str(e)[:400])
'''


def test_the_folder_has_attacks():
    assert len(CASES) >= 10


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(FOLDER)))
def test_an_attack_ends_as_its_first_line_says(path):
    expect = path.read_text().splitlines()[0]
    assert expect.startswith("# expect: "), f"{path.name}: the first line must say what is expected"
    kind, _, what = expect[len("# expect: "):].partition(" ")
    out = run_bounded(CHILD, {"path": str(path)}, seconds=30, memory=2 * 1024 ** 3)
    assert out.ok, out.explain()
    got = out.stdout.strip().splitlines()[-1]
    assert got.split(" ")[0] == kind, (expect, got)
    if kind == "RuleError":
        assert got.split(" ")[1] == what, (expect, got)
    elif kind == "GameError":
        assert what in got, (expect, got)

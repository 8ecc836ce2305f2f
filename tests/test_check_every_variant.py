"""`rulelang check` without --variant: the base rules and each declared variant on its own (api.check,
every_variant=True), each file parsed once for all of them (program.build_program's ``parses``).

What docs/api.md says of it: the diagnostics of the base rules, plus each error that a variant applied
alone adds, its message ending in "(with variant NAME)"."""
from __future__ import annotations

import glob
import os

import pytest

import rulelang
from rulelang.diagnostics import ERROR
from rulelang.program import build_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BASE = """game "T" {
  players 2
}
var n: int
procedure bump() {
  n += 1
}
setup {
  bump()
}
flow {
  loop {
    for p in players {
      turn p { offer [pass] to p }
    }
  }
}
action pass {
  effect { n += 1 }
}
ending "long" when n > 5
variant a "declares x" {
  extend bump {
    let x = 1
    n += x
  }
}
variant b "uses an x only variant a declares" {
  extend bump {
    n += x
  }
}
"""

HOUSE = """extends "base.rules"
extend bump {
  n += 3
}
"""


def _one_by_one(path):
    """The reference: the base check, then each variant checked apart (parsed again), its new errors added."""
    base = rulelang.check(path, cache=False)
    key = {(d.path, d.line, d.column, d.code, d.message) for d in base}
    out = list(base)
    prog, _ = build_program(path)
    for name in sorted(prog.variants):
        for d in rulelang.check(path, variants=[name], cache=False):
            if d.severity == ERROR and (d.path, d.line, d.column, d.code, d.message) not in key:
                key.add((d.path, d.line, d.column, d.code, d.message))
                out.append((d, name))
    return base, out


def test_an_extension_in_one_variant_does_not_reach_another(tmp_path):
    path = tmp_path / "base.rules"
    path.write_text(BASE, encoding="utf-8")
    got = rulelang.check(path, cache=False, every_variant=True)
    errors = [d for d in got if d.severity == ERROR]
    # variant b alone has no x: had variant a's `let x` stayed in the shared procedure, b would pass
    assert len(errors) == 1 and errors[0].message.endswith("(with variant b)") and (errors[0].line, errors[0].column) == (30, 10)
    assert rulelang.check(path, cache=False, variants=["a"]) == [d for d in got if d.severity != ERROR]


def test_a_house_rule_extension_is_applied_once_per_build(tmp_path):
    (tmp_path / "base.rules").write_text(BASE, encoding="utf-8")
    house = str(tmp_path / "house.rules")
    (tmp_path / "house.rules").write_text(HOUSE, encoding="utf-8")
    parses = {}
    lengths = []
    for variants in ((), ("a",), ()):
        prog, diags = build_program(house, None, variants, parses=parses)
        lengths.append(len(prog.decls["bump"].body.stmts))
    assert lengths == [2, 4, 2]  # own statement + the house rule's (+ variant a's two), never piling up
    assert len(parses) == 2  # the house file and its base, each parsed once


def _files_with_variants():
    files = sorted(glob.glob(os.path.join(ROOT, "games", "**", "*.rules"), recursive=True)
                   + glob.glob(os.path.join(ROOT, "tests", "**", "*.rules"), recursive=True))
    return [f for f in files if "\nvariant " in open(f, encoding="utf-8").read()]


@pytest.mark.parametrize("path", _files_with_variants(), ids=lambda p: os.path.relpath(p, ROOT))
def test_every_variant_check_matches_checking_each_variant_apart(path):
    base, reference = _one_by_one(path)
    got = rulelang.check(path, cache=False, every_variant=True)
    key = lambda d, suffix="": (d.path, d.line, d.column, d.code, d.message + suffix)  # noqa: E731
    want = [key(d) for d in base] + [key(d, f" (with variant {name})") for d, name in reference[len(base):]]
    assert sorted(map(key, got)) == sorted(want)

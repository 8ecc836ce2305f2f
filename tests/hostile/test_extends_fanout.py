"""`extends` fan-out (issue 31.3): a file naming one base 300 times, each naming another 300 times, took
54 s and hundreds of MB; diamonds grew exponentially. Each file is taken in once; a repeat or a diamond is
refused with a clear error (E014) at the line that names the file again; the whole closure has a size
budget (E010) and a file count (E013). Run in bounded children: CPU time and memory, not the wall clock."""
from __future__ import annotations

from tests.hostile.bounded import run_bounded

CHILD = '''
import time
import rulelang
start = time.process_time()
diags = rulelang.check(ARGS["path"], cache=False)
codes = {}
for d in diags:
    codes[d.code] = codes.get(d.code, 0) + 1
print("codes", sorted(codes.items()))
print("first", diags[0].render().splitlines()[0] if diags else "")
print("cpu", round(time.process_time() - start, 2))
'''

LEAF = ('game "L" { players 2 }\nper player var vp: int\naction a { effect { vp[me] += 1 } }\n'
        'flow { loop { for p in players { turn p { offer [a] to p } } } }\nending "x" when vp[0] > 2\n')


def run(path):
    out = run_bounded(CHILD, {"path": str(path)}, seconds=20, memory=1024 ** 3)
    assert out.ok, out.explain()
    assert float(out.stdout.split("cpu")[-1]) < 5, out.explain()
    return out.stdout


def test_a_fan_out_of_repeated_extends_is_refused_quickly(tmp_path):
    (tmp_path / "leaf.rules").write_text(LEAF)
    (tmp_path / "mid.rules").write_text('extends "leaf.rules"\n' * 300)
    (tmp_path / "top.rules").write_text('extends "mid.rules"\n' * 300)
    got = run(tmp_path / "top.rules")
    assert "('E014', 598)" in got  # 299 repeats in each of the two files, each said at its own line
    assert "mid.rules:2:1: error[E014]: 'leaf.rules' is already part of these rules (named by mid.rules)" in got


def test_a_diamond_is_refused_and_the_rules_still_load_once(tmp_path):
    (tmp_path / "d.rules").write_text(LEAF)
    (tmp_path / "b.rules").write_text('extends "d.rules"\nconst from_b = 1\n')
    (tmp_path / "c.rules").write_text('extends "d.rules"\nconst from_c = 2\n')
    (tmp_path / "a.rules").write_text('extends "b.rules"\nextends "c.rules"\n')
    got = run(tmp_path / "a.rules")
    assert "('E014', 1)" in got and "E101" not in got  # d's declarations are not doubled
    assert "c.rules:1:1: error[E014]: 'd.rules' is already part of these rules (named by b.rules)" in got


def test_a_deep_diamond_lattice_stays_linear(tmp_path):
    """Level k has two files, each extending both files of level k+1: 2^16 paths, 32 files."""
    (tmp_path / "l16a.rules").write_text(LEAF)
    (tmp_path / "l16b.rules").write_text("const other = 1\n")
    for k in range(15, -1, -1):
        for side in "ab":
            (tmp_path / f"l{k}{side}.rules").write_text(f'extends "l{k + 1}a.rules"\nextends "l{k + 1}b.rules"\n'
                                                        f"const n{k}{side} = {k}\n")
    got = run(tmp_path / "l0a.rules")
    assert "E014" in got or "E013" in got


def test_the_whole_closure_has_a_size_budget(tmp_path):
    """Files each under the 1 MB limit, together over the closure's budget: E010 at the extends line."""
    filler = "# " + "x" * 98 + "\n"
    for i in range(4):
        (tmp_path / f"part{i}.rules").write_text((f"const c{i} = {i}\n" + filler * 9_000))
    (tmp_path / "top.rules").write_text(LEAF + "".join(f'extends "part{i}.rules"\n' for i in range(4)))
    got = run(tmp_path / "top.rules")
    assert "E010" in got and "too large together" in got

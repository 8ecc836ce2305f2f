"""Hostile rule files for the deeper static checks (rulelang/lints_static.py): shapes that would make a
naive walk exponential or deep. Each is checked in a bounded child process: no traceback, no hang, no
memory blow-up, and the finding the file was built to have is still reported."""
import json
import os
import tempfile

from tests.hostile.bounded import run_bounded

HEAD = 'game "H" { players 2 }\nper player var vp: int\n'
TAIL = ('action work { effect { vp[me] += 1 } }\n'
        'flow { loop { for p in players { turn p { offer [work] to p } } } }\n'
        'ending "done" when any(players, p => vp[p] >= 3)\nscore p = vp[p]\n')

CHECK = r'''
import rulelang
out = {}
for name, path in ARGS["files"].items():
    diags = rulelang.check(path, cache=False)
    out[name] = sorted({d.code for d in diags})
print(json.dumps(out))
'''


def _procedure_ladder(n=30):
    """p0 calls p1 twice, p1 calls p2 twice, ...: 2^30 paths if every call were followed anew."""
    lines = ["var leader: player"]
    for i in range(n):
        nxt = f"p{i + 1}()  p{i + 1}()" if i + 1 < n else "log leader + 1"
        lines.append(f"phase p{i} {{ if vp[0] > {i} {{ vp[1] += 1 }} {nxt} }}")
    return HEAD + "\n".join(lines) + "\nsetup { p0() }\n" + TAIL


def _trigger_ring(n=400):
    lines = [f"event e{i}(p: player)" for i in range(n)]
    lines += [f"when e{i}(p) then {{ emit e{(i + 1) % n}(p) }}" for i in range(n)]
    lines.append("action shout { effect { emit e0(me) } }")
    return HEAD + "\n".join(lines) + "\n" + TAIL.replace("offer [work]", "offer [work, shout]")


def _long_require(n=190):
    test = " and ".join(f"vp[me] != {i}" for i in range(n)) + " and vp[me] > 0 and vp[me] < 5"
    return HEAD + f'action odd {{ require {test} "x" effect {{ vp[me] += 1 }} }}\n' + \
        TAIL.replace("offer [work]", "offer [work, odd]")


def _many_variants(n=300):
    body = "override action work { effect { vp[me] += 1 } }"
    return HEAD + TAIL + "\n".join(f"variant v{i} {{ {body} }}" for i in range(n)) + "\n"


def _many_assignments(n=3000):
    return HEAD + "var stage: int\nsetup {\n" + "\n".join(f"  stage = {i % 50}" for i in range(n)) + \
        "\n}\naction win { require stage == 77 \"x\" }\n" + TAIL.replace("offer [work]", "offer [work, win]")


def _deep_chains(n=600):
    """600 phases each calling the next, 600 functions each calling the next, deep function bodies: valid
    rules, which must check clean (no 'nested too deeply' from following calls)."""
    lines = []
    for i in range(n):
        lines.append(f"phase p{i} {{ {f'p{i + 1}()' if i + 1 < n else 'vp[0] += 1'} }}")
        lines.append(f"function f{i}(x) = {f'f{i + 1}(x) + 1' if i + 1 < n else 'x'}")
    for i in range(30):
        lines.append(f"function g{i}(x) = " + "(1 + " * 90 + (f"g{i + 1}(x)" if i + 1 < 30 else "x") + ")" * 90)
    return HEAD + "\n".join(lines) + "\nsetup { p0() vp[0] += f0(1) + g0(1) }\n" + TAIL


def test_deep_check_shapes_stay_bounded():
    cases = {"ladder": _procedure_ladder(), "ring": _trigger_ring(), "require": _long_require(),
             "variants": _many_variants(), "assignments": _many_assignments(), "chains": _deep_chains()}
    with tempfile.TemporaryDirectory() as d:
        files = {}
        for name, text in cases.items():
            files[name] = os.path.join(d, name + ".rules")
            with open(files[name], "w", encoding="utf-8") as f:
                f.write(text)
        out = run_bounded(CHECK, {"files": files}, seconds=60)
    assert out.ok, out.explain()
    codes = json.loads(out.stdout.strip().splitlines()[-1])
    assert "W316" in codes["ladder"]      # the read of leader at the ladder's foot
    assert "W314" in codes["ring"]        # the ring of 400 triggers
    assert "W310" in codes["require"]     # 1..4 all excluded
    assert "W315" in codes["variants"]    # each variant restates 'work'
    assert "W311" in codes["assignments"]  # stage only ever 0..49
    assert codes["chains"] == []           # deep but valid: no false 'nested too deeply'

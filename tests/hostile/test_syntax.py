"""Hostile rule texts for the parser and the checker: mutations of the example games (tokens and characters
inserted, deleted and replaced; odd line breaks, NUL, deep brackets, long operator chains, huge numbers, odd
escapes). Each must load cleanly or give diagnostics only, each at a line and column inside the file whose
shown source line is the line the parser meant; never a traceback, a hang or a memory blow-up.

Cases are made by hypothesis in this process and run in batches in one bounded child process each
(tests/hostile/bounded.py), so that a hang or a blow-up fails the test instead of the test run.
"""
import json
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.hostile.bounded import ROOT, run_bounded

BASES = [os.path.join(ROOT, p) for p in ("games/examples/connect4.rules", "games/examples/tictactoe.rules",
                                         "tests/rules/toolkit.rules")]
TEXTS = []
for _p in BASES:
    with open(_p, encoding="utf-8") as _f:
        TEXTS.append(_f.read())

ODD_CHARS = ["\x0b", "\x0c", "\u2028", "\u2029", "\x85", "\x1c", "\x00", "\r", "\n", "\t", '"', "\\", "{", "}",
             "(", ")", "[", "]", "#", "@", "=", "-", ".", ",", ":", "?", "\ud800", "é", "9"]
TOKENS = [
    "if", "then", "else", "elif", "let", "choose one of", "roll one of", "draw one from", "offer [", "to", "turn",
    "for", "in", "function f() =", "action z {", "text \"{zz}\"", "players 0", "players 1..1000000000",
    "var w: player = -1", "score p = if true then \"a\" else 0", "}", "{", "..", "=>", "==", "+=",
    '"\\\\"', '"\\ud800"', '"\\', '"\\N{BOGUS}"', '"\\x"', "9" * 25, "4611686018427387904", "1" + "0" * 5000,
    "(" * 150 + ")" * 150, "[" * 120, " + 1" * 600, " - x" * 250, "not " * 300, "-" * 400 + "1",
    "if a then b else " * 120 + "c", "x[" * 90 + "]" * 90, "\x0b", "\u2028", "\x00",
]

CHECK = r'''
import rulelang, traceback
with open(ARGS["path"], encoding="ascii") as f:
    texts = json.load(f)
bad = []
for i, text in enumerate(texts):
    try:
        rulelang.loads(text, name="h.rules")
        diags = []
    except rulelang.RuleError as e:
        diags = e.diagnostics
        if not [d for d in diags if d.severity == "error"]:
            bad.append((i, "RuleError without an error"))
    except Exception:
        bad.append((i, traceback.format_exc()))
        continue
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    for d in diags:
        d.render()
        if d.path != "h.rules" or not 1 <= d.line <= len(lines):
            bad.append((i, f"position {d.path}:{d.line} outside the file ({len(lines)} lines): {d.message}"))
        elif not 1 <= d.column <= len(lines[d.line - 1]) + 1:
            bad.append((i, f"column {d.column} outside line {d.line}: {d.message}"))
        elif d.source_line != lines[d.line - 1]:
            bad.append((i, f"shown line {d.source_line!r} is not line {d.line}: {d.message}"))
print("BAD", repr(bad))
'''


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert_token", "insert_char", "delete", "replace"]))
        if kind == "insert_token":
            text = text[:i] + " " + draw(st.sampled_from(TOKENS)) + " " + text[i:]
        elif kind == "insert_char":
            text = text[:i] + draw(st.sampled_from(ODD_CHARS)) + text[i:]
        elif kind == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 12)):]
        else:
            text = text[:i] + draw(st.sampled_from(ODD_CHARS)) + text[i + 1:]
    return text


def _run(texts, seconds=60):
    # the texts travel in a file (JSON, ASCII-escaped: lone surrogates survive), not in the environment
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="ascii") as f:
        json.dump(texts, f)
    try:
        out = run_bounded(CHECK, {"path": f.name}, seconds=seconds)
    finally:
        os.unlink(f.name)
    assert out.ok, out.explain()
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("BAD "))
    bad = eval(line[4:])  # a repr of a list of (index, text) written by the child
    assert not bad, "\n".join(f"case {i}: {texts[i][:200]!r}\n{why}" for i, why in bad)


@pytest.mark.slow  # about 20 s (200 game files checked): `pytest -m slow`, which .ci/run runs beside the README's command
@settings(deadline=None, max_examples=8, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(mutated(), min_size=25, max_size=25))
def test_mutated_games_give_positioned_diagnostics_or_load(texts):
    _run(texts)


def test_named_hostile_cases():
    # the cases of the issue, each on its own: they must give diagnostics, in time and memory
    head = 'game "T" { players 2 }\naction a { effect { } }\nflow { loop { turn 0 { offer [a] to 0 } } }\n'
    cases = [
        head + "const x = " + " + ".join(["1"] * 600) + "\n",
        head + "const x = " + " + ".join(["1"] * 100000) + "\n",
        head + 'const s = "\\\\" + f(' + "(" * 5000 + ")" * 5000 + ")\n",
        head + "const n = " + "9" * 100000 + "\n",
        head + "\x0b\n\x0c\n\u2028 const z = zz\n",
        head + 'const s = "\\ud800"\n',
        head + "action b { effect {\n" * 40,
        head + "const k = if true then 1 elif false then 2 else 3\n",
        'game "T" { players 1..1000000000 }\n' + head[len('game "T" { players 2 }\n'):],
    ]
    _run(cases, seconds=90)

"""The generated backend never turns rule text into Python code (interpreter/generate.py, docs/runtime.md).

Rule files with hostile names (Python's own names, names of the generated code, very long names) and
hostile strings (quotes, backslashes, newlines, `__import__('os')`, triple quotes, unicode) must:
  * give a generated source in which none of those names and strings appears: every token of the
    source is a Python keyword, a number, an operator, a fixed text of the generator, a generated
    identifier (t3, k_17, fn_2 ...) or a name of the run-time helpers;
  * play exactly as with the reference closures backend.
"""
from __future__ import annotations

import io
import keyword
import random
import re
import tokenize

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import rulelang
from rulelang import RuleError
from interpreter.generate import SAFE_BUILTINS, _runtime_names, _statement_names

GENERATED_IDENT = re.compile(r"(t|k_|e_|fn_|op_|legal_|p|x|b|h|n|g|lam|out|items|rays|w|m|r|rw|c)\d+")
# attributes and fixed names the generator writes (none comes from a rule file)
FIXED_NAMES = {"G", "L", "K", "err", "data", "consts", "work", "work_mark", "fdepth", "n", "current",
               "end_pending", "active_players", "scenario_value", "get", "append", "__class__", "sp", "aid", "vals",
               "opt", "who", "out", "forget", "frames", "ops", "pop", "join", "mask", "bit", "pair", "known_rays", "rays",
               "copy", "kind", "id",  # (kind, id: the attributes of a piece reference, read by a typed field read)
               "memo", "memo_", "key_", "hit_", "start_"}  # (a rule function's memory: codegen.helpers.emit_memo_lookup)
FIXED_STRINGS = {"'me'", "'+'", "'-'", "'*'", "'/'", "'%'", "'<'", "'<='", "'>'", "'>='"}
DANGER = ("__import__", "import ", "exec", "eval", "open(", "os.", "subprocess", "globals", "getattr", "compile")


ALLOWED = FIXED_NAMES | set(_runtime_names()) | set(_statement_names()) | set(SAFE_BUILTINS) | set(keyword.kwlist)


def foreign_tokens(source):
    """Tokens of generated source that the generator does not write by itself."""
    allowed = ALLOWED
    bad = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME:
            if tok.string not in allowed and not GENERATED_IDENT.fullmatch(tok.string):
                bad.append(tok.string)
        elif tok.type == tokenize.STRING:
            if tok.string not in FIXED_STRINGS:
                bad.append(tok.string)
        elif tok.type == tokenize.COMMENT:
            if not re.fullmatch(r"# line \d+", tok.string):
                bad.append(tok.string)
        elif tok.type == tokenize.NUMBER:
            if not re.fullmatch(r"\d+", tok.string):
                bad.append(tok.string)
    return bad


def quote(s):
    """A rule-file string literal for the text s."""
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


NAME_SLOTS = ["enum", "m1", "m2", "rec", "f1", "f2", "table", "row1", "row2", "v1", "v2", "v3", "fn", "p1", "p2",
              "x", "act", "a1", "l1", "k", "v", "pp", "sp", "lam", "proc", "q"]
STRING_SLOTS = 8


def rules_text(n, s):
    q = [quote(x) for x in s]
    return f'''game "T" {{ players 2 }}
enum {n["enum"]} {{ {n["m1"]}, {n["m2"]} }}
record {n["rec"]} {{ {n["f1"]}: int, {n["f2"]}: str }}
table {n["table"]}: {n["rec"]} {{ {n["row1"]}(1, {q[0]}) {n["row2"]}(2, {q[1]}) }}
var {n["v1"]}: list[str] = [{q[2]}, {q[3]}]
var {n["v2"]}: map[str, int] = {{{q[4]}: 1}}
var {n["v3"]}: int = 0
function {n["fn"]}({n["p1"]}: int, {n["p2"]}: str): int =
  {n["p1"]} + count([{n["x"]} for {n["x"]} in {n["v1"]} if {n["x"]} != {n["p2"]}])
procedure {n["proc"]}({n["q"]}: str) {{
  add {n["q"]} to {n["v1"]}
}}
action {n["act"]}({n["a1"]} in 0..1) {{
  require {n["v3"]} < 5
  effect {{
    let {n["l1"]} = {n["fn"]}({n["a1"]}, {q[5]}) + {n["row1"]}.{n["f1"]}
    {n["v3"]} += 1
    {n["v2"]} = {{{n["k"]}: {n["v"]} + {n["l1"]} for {n["k"]}, {n["v"]} in {n["v2"]}}}
    log {q[6]}, {n["l1"]}, {n["row2"]}.{n["f2"]}, {n["m2"]}
    {n["proc"]}({q[7]})
    if any({n["v1"]}, {n["lam"]} => {n["lam"]} == {q[7]}) {{ {n["v3"]} += 0 }}
  }}
}}
ending {q[0]} when {n["v3"]} >= 4
flow {{ loop {{ for {n["pp"]} in players {{ turn {n["pp"]} {{ offer [{n["act"]}] to {n["pp"]} }} }} }} }}
score {n["sp"]} = {n["v3"]} + count({n["v1"]}) + {n["sp"]}
'''


def play_both(rs, seed=1):
    cl = rs.with_backend("closures")
    a, b = rs.new_game(2, seed=seed), cl.new_game(2, seed=seed)
    rng = random.Random(seed)
    while True:
        assert a.to_json() == b.to_json()
        assert a.view(0) == b.view(0)
        if a.is_over():
            assert a.scores() == b.scores()
            return a
        pick = rng.choice(a.legal_actions()).id
        a.apply(pick)
        b.apply(pick)


def check_clean(rs, names, strings, raw=True):
    """`raw`: also look for the names and texts anywhere in the source (for marked texts only: a random
    text such as "fiel" may well be part of a generated name such as field_slow)."""
    src = rs.generated_source
    assert rs.backend == "generated" and src
    assert foreign_tokens(src) == []
    for word in DANGER:
        assert word not in src
    if not raw:
        return
    for name in names:
        if len(name) > 3 and name not in ALLOWED and not GENERATED_IDENT.fullmatch(name):
            assert name not in src
    for s in strings:
        if len(s) > 3:
            assert s not in src


HOSTILE_STRINGS = ['"""', "'''", "\\", "\n", "__import__('os').system('echo hi')", "\"); import os; #",
                   "é漢字🎲", "\\x00\\n", "{k_0}", "' + K[0] + '", "\r\n\t", "# line 1\ndef e_1(G, L): pass"]
PY_NAMES = ["__import__", "__builtins__", "exec", "eval", "G", "L", "K", "t1", "k_0", "fn_1", "e_1", "x1", "p1",
            "lam1", "over", "charge", "RuleRuntimeError", "print", "os", "self", "def", "class", "lambda",
            "import", "None", "True", "__class__", "MAX_FUNCTION_DEPTH", "BUILTIN_ERRORS", "n", "data", "x" * 300,
            "_" * 50, "Z" + "9" * 200, "yield", "async", "await", "global", "nonlocal", "del", "pass", "raise"]


def _loadable_names():
    ok = []
    for name in PY_NAMES:
        try:
            rulelang.loads(f'game "T" {{ players 2 }}\nvar {name}: int = 0\nflow {{ {name} += 1 }}')
            ok.append(name)
        except RuleError:
            pass
    return ok


def test_python_names_and_hostile_strings_stay_out_of_the_source():
    names = _loadable_names()
    assert len(names) >= 30  # most of them are ordinary rule names
    rnd = random.Random(0)
    for start in range(0, len(names), 5):
        chosen = (names[start:] + names)[:len(NAME_SLOTS)]
        chosen = list(dict.fromkeys(chosen))
        while len(chosen) < len(NAME_SLOTS):
            chosen.append(f"spare_{len(chosen)}")
        rnd.shuffle(chosen)
        n = dict(zip(NAME_SLOTS, chosen))
        strings = [HOSTILE_STRINGS[(start + i) % len(HOSTILE_STRINGS)] + f"#{i}" for i in range(STRING_SLOTS)]
        rs = rulelang.loads(rules_text(n, strings))
        check_clean(rs, chosen, strings)
        g = play_both(rs)
        assert g.end_reason == strings[0]


identifier = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,60}", fullmatch=True).map(lambda s: "h" + s)
texts = st.one_of(st.sampled_from(HOSTILE_STRINGS),
                  st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(identifier, min_size=len(NAME_SLOTS), max_size=len(NAME_SLOTS), unique=True),
       strings=st.lists(texts, min_size=STRING_SLOTS, max_size=STRING_SLOTS, unique=True))
@example(names=(["h" + c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"] + [f"hA{i}" for i in range(40)])[:len(NAME_SLOTS)],
         strings=(['"""', "'''", "\\", "", "0", "1", "2", ">="] + [f"s{i}" for i in range(40)])[:STRING_SLOTS])
def test_fuzzed_names_and_strings_never_reach_the_source(names, strings):
    n = dict(zip(NAME_SLOTS, names))
    rs = rulelang.loads(rules_text(n, strings))
    check_clean(rs, names, strings, raw=False)
    for s in strings:  # no text of the rules is a string literal of the source (tokens are checked above;
        # a text equal to one the generator writes itself, such as '>=' of compare('>=', ...), is no leak)
        assert repr(s) not in rs.generated_source or len(s) < 2 or repr(s) in FIXED_STRINGS
    play_both(rs)


@pytest.mark.slow  # every game file generated whole, about 10 s: `pytest -m slow` (.ci/run runs it)
def test_every_game_file_generates_only_generator_tokens():
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    for path in sorted((root / "games").rglob("*.rules")):
        rs = rulelang.load(str(path))
        assert foreign_tokens(rs.generated_source) == [], path

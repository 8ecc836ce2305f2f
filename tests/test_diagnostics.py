"""Rule files with errors get positioned, collected diagnostics with hints; no input crashes the tool."""
import os

import pytest
from hypothesis import given, settings, strategies as st

import rulelang
from rulelang import RuleError

BAD = '''game "Bad" { players 2..3 }
per player var gems: int = 3
enum Colour { teal, pink }
action buy(c in [teal, pinkk]) {
  require gemz[me] > 2
  effect {
    gems[me] = "x"
    break
  }
}
flow { loop { for p in players { turn p { offer [buy, sell] to p } } } }
'''


def codes(err):
    return [(d.line, d.code) for d in err.diagnostics if d.severity == "error"]


def test_errors_are_collected_with_positions_and_hints():
    with pytest.raises(RuleError) as e:
        rulelang.loads(BAD, name="bad.rules")
    got = codes(e.value)
    assert (4, "E201") in got      # unknown name pinkk
    assert (5, "E201") in got      # unknown name gemz
    assert (7, "E301") in got      # str assigned to int
    assert (8, "E409") in got      # break outside a loop
    assert (11, "E206") in got     # sell is not an action
    d = next(d for d in e.value.diagnostics if d.line == 4)
    assert (d.path, d.column) == ("bad.rules", 24)
    assert d.hint == "did you mean 'pink'?"
    text = d.render()
    assert text.splitlines()[0] == "bad.rules:4:24: error[E201]: unknown name 'pinkk'"
    assert text.splitlines()[2].index("^") == text.splitlines()[1].index("pinkk")


def test_syntax_errors_report_several_places():
    text = 'game "x" { players 2 }\nvar a: int = = 1\nvar b int\nflow { }\n'
    with pytest.raises(RuleError) as e:
        rulelang.loads(text, name="s.rules")
    lines = [d.line for d in e.value.diagnostics]
    assert 2 in lines and 3 in lines


def test_check_returns_warnings_without_raising(tmp_path):
    p = tmp_path / "w.rules"
    p.write_text('game "W" { players 2 }\nphase unused { log 1 }\naction a { effect { } }\n'
                 'flow { loop { turn 0 { offer [a] to 0 } } }\n')
    ds = rulelang.check(str(p))
    found = {d.code for d in ds}
    assert {"W303", "W301"} <= found
    assert all(d.severity == "warning" for d in ds)


@pytest.mark.parametrize("content, code", [
    (b"", "E107"),                                   # empty: no game header
    (b'game "x" { players 2 }\nflow { loop {', "E003"),  # truncated
    (b"\x00\x01\x02binary", "E012"),
    (b"\xff\xfe\xfa not utf8", "E012"),
    (("game \"x\" { players 2 }\nconst a = " + "(" * 3000 + "1" + ")" * 3000).encode(), "E006"),
    (("game \"x\" { players 2 }\nconst a = " + "+".join(["1"] * 30000)).encode(), "E006"),
    (b'game "x" { players 2 }\nconst s = "never closed\n', "E002"),
])
def test_bad_files_give_diagnostics_not_tracebacks(tmp_path, content, code):
    p = tmp_path / "bad.rules"
    p.write_bytes(content)
    ds = rulelang.check(str(p))
    assert code in {d.code for d in ds}
    for d in ds:
        assert d.render().startswith(f"{p}:")


def test_missing_file_is_a_diagnostic():
    ds = rulelang.check("/nonexistent/x.rules")
    assert ds[0].code == "E011"
    with pytest.raises(RuleError):
        rulelang.load("/nonexistent/x.rules")


ALPHABET = st.sampled_from(list('{}()[]<>=+-*/%.,:;"#?@ \n\tabcxyz019') + [
    "game", "var", "per player", "action", "effect", "flow", "loop", "turn", "offer", "to", "let", "choose",
    "one", "of", "if", "then", "else", "for", "in", "players", "me", "=>", "..", "end_game", "when",
    "scenario", "expect", "play", "table", "record", "enum", "board", "square_grid(3,3)"])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=60).map(" ".join))
def test_fuzzed_rule_text_never_crashes(text):
    try:
        rulelang.loads('game "F" { players 2 }\n' + text, name="fuzz.rules")
    except RuleError as e:
        assert e.diagnostics
        for d in e.diagnostics:
            d.render()


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_fuzzed_bytes_never_crash(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("fz") / "f.rules"
    p.write_bytes(data)
    for d in rulelang.check(str(p)):
        d.render()


EXAMPLES = [os.path.join(os.path.dirname(__file__), "..", "games", "examples", f) for f in ("tictactoe.rules", "connect4.rules")]
WORDS = ["me", "current", "players", "none", "true", "0", "1", "-1", "marks", "discs", "grid", "winner", "p", "c", "r",
         "count", "line_length", "place", "drop", "(", ")", "[", "]", "{", "}", "+", "==", "=", "..", "if", "loop",
         "end_game", "\"x\"", "height", "rows", "=>", ",", "not", "emit", "add", "to"]


@settings(max_examples=200, deadline=None)
@given(which=st.integers(0, 1), edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 3),
                                                          st.sampled_from(WORDS)), min_size=1, max_size=4),
       seed=st.integers(0, 100))
def test_mutated_games_fail_cleanly(which, edits, seed):
    """Mutations of a valid file either load (and then run or fail with GameError) or give diagnostics."""
    import random
    from rulelang import GameError, IllegalAction

    tokens = open(EXAMPLES[which], encoding="utf-8").read().split(" ")
    for pos, kind, word in edits:
        i = pos % len(tokens)
        if kind == 0:
            del tokens[i]
        elif kind == 1:
            tokens.insert(i, word)
        else:
            tokens[i] = word
    text = " ".join(tokens)
    try:
        rs = rulelang.loads(text, name="mut.rules")
    except RuleError as e:
        for d in e.diagnostics:
            d.render()
        return
    r = random.Random(seed)
    try:
        g = rs.new_game(min(rs.player_counts), seed=seed)
        for _ in range(60):
            if g.is_over():
                break
            g.apply(r.choice(g.legal_actions()))
        g.to_json()
        g.view(0)
        g.scores()
    except (GameError, IllegalAction):
        pass


def test_constants_may_only_use_constants_declared_before_them():
    with pytest.raises(RuleError) as e:
        rulelang.loads('game "x" { players 2 }\nconst a = b + 1\nconst b = 2\n'
                       'action s { effect { end_game } }\nflow { turn 0 { offer [s] to 0 } }')
    d = e.value.diagnostics[0]
    assert (d.code, d.line, d.column) == ("E211", 2, 11)


def test_a_citation_between_if_and_elif_is_reported_at_the_elif():
    text = ('game "x" { players 2 }\nvar n: int = 0\naction a {\n  effect {\n    if n > 1 { n += 1 }\n'
            '    @rule "S-1"\n    elif n > 0 { n += 2 }\n  }\n}\nflow { turn 0 { offer [a] to 0 } }\n')
    with pytest.raises(RuleError) as e:
        rulelang.loads(text)
    d = e.value.diagnostics[0]
    assert (d.line, d.column, d.code) == (7, 5, "E004") and "inside the block" in d.hint


@pytest.mark.parametrize("decl, code", [
    ("var label: str = text(\"f\", x => x)", "E402"),           # function values only where a built-in takes one
    ("var n: int = count([1], 5)", "E325"),                  # ... and such a place needs one
    ("var m: map[map[str, int], int] = {}", "E324"),         # maps are not keys
    ("board g = square_grid(\"a\", 3)", "E301"),             # generator sizes are numbers
    ("const c: set[int] = [1, 1, 2]", "E301"),               # a list is not a set outside assignments
    ("var t: bool = [1, 2] == {1, 2}", "E318"),
])
def test_checker_rejects_values_that_cannot_work(decl, code):
    with pytest.raises(RuleError) as e:
        rulelang.loads(f'game "x" {{ players 2 }}\n{decl}\naction s {{ effect {{ end_game }} }}\n'
                       'flow { turn 0 { offer [s] to 0 } }')
    assert code in {d.code for d in e.value.diagnostics}


def test_board_sizes_out_of_range_are_diagnostics():
    with pytest.raises(RuleError) as e:
        rulelang.loads('game "x" { players 2 }\nboard g = line(0)\naction s { effect { end_game } }\n'
                       'flow { turn 0 { offer [s] to 0 } }')
    assert e.value.diagnostics[0].code == "E501"


def test_game_statements_do_not_stand_in_scenarios():
    with pytest.raises(RuleError) as e:
        rulelang.loads('game "x" { players 2 }\naction s { effect { end_game } }\n'
                       'flow { turn 0 { offer [s] to 0 } }\nscenario "t" { given { turn 0 { } } then { expect true } }')
    assert "E414" in {d.code for d in e.value.diagnostics}


# ---------------------------------------------------------------- inline expectations (tests/data/diagnostics)
# Each file there is one small rule file. A comment `# E: CODE` (optionally followed by words that must
# appear in the message or hint) marks a line where exactly that error must be reported; every error
# reported must be marked. Warnings are not compared.
DATA = os.path.join(os.path.dirname(__file__), "data", "diagnostics")
DATA_FILES = sorted(f for f in os.listdir(DATA) if f.endswith(".rules"))


def _expectations(text):
    import re
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        m = re.search(r"#\s*E:\s*(E\d{3})(.*)$", line)
        if m:
            out.append((i, m.group(1), m.group(2).strip()))
    return out


@pytest.mark.parametrize("name", DATA_FILES)
def test_inline_expectations(name):
    path = os.path.join(DATA, name)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    want = _expectations(text)
    try:
        rulelang.loads(text, name=name)
        got = []
    except RuleError as e:
        got = [d for d in e.diagnostics if d.severity == "error"]
    assert sorted((d.line, d.code) for d in got) == sorted((line, code) for line, code, _ in want), \
        "\n".join(d.render() for d in got)
    for line, code, words in want:
        if words:
            d = next(d for d in got if (d.line, d.code) == (line, code))
            assert words in d.message + " " + d.hint, d.render()
    for d in got:  # the shown source line is the line the diagnostic is about
        assert d.source_line == text.split("\n")[d.line - 1]


SMALL = ('game "T" { players 2 }\nper player var vp: int = 0\naction a { effect { vp[me] += 1 } }\n'
         'flow { loop { for p in players { turn p { offer [a] to p } } } }\nending "done" when vp[0] > 3\n')


def _errors(text):
    with pytest.raises(RuleError) as e:
        rulelang.loads(text, name="t.rules")
    return [d for d in e.value.diagnostics if d.severity == "error"]


@pytest.mark.parametrize("odd", ["\x0b", "\x0c", "\u2028", "\x1c", "\x85", "\r"])
def test_the_shown_line_is_the_line_the_parser_means(odd):
    # str.splitlines() breaks lines at these characters too; the lexer does not: the line shown under a
    # diagnostic must be the one its line number counts
    text = SMALL + f"# a comment with {odd} inside\nconst x = 1\nconst y = zz\n"
    (d,) = _errors(text)
    assert (d.code, d.line) == ("E201", 8)
    assert d.source_line == "const y = zz"
    assert d.render().splitlines()[1].endswith("const y = zz")


@pytest.mark.parametrize("odd, shown", [("\x0b", "'\\x0b'"), ("\x00", "'\\x00'"), ("\u2028", "'\\u2028'")])
def test_an_unprintable_character_is_shown_escaped(odd, shown):
    text = SMALL + f"const x = 1 {odd} 2\n"
    d = _errors(text)[0]
    assert d.code == "E001" and (d.line, d.column) == (6, 13)
    assert d.message == f"unexpected character {shown}"


def test_a_long_flat_chain_is_reported_where_it_is_not_at_the_top_of_the_file():
    text = SMALL + "const x = " + " + ".join(["1"] * 600) + "\n"
    (d,) = _errors(text)
    assert (d.code, d.line, d.column) == ("E006", 6, 11)
    assert "chains more than" in d.message and "nested" not in d.message


def test_a_long_chain_within_the_limit_loads_and_computes():
    text = SMALL.replace("vp[0] > 3", "vp[0] > x") + "const x = " + " + ".join(["1"] * 150) + "\n"
    rules = rulelang.loads(text)
    game = rules.new_game(2)
    assert game.to_json()  # set up without error
    for _ in range(3):
        game.apply(game.legal_actions()[0])
    assert not game.is_over() if hasattr(game, "is_over") else True


def test_an_escaped_backslash_does_not_hide_deep_brackets():
    text = SMALL + 'const x = count(["\\\\", ' + "[" * 150 + "]" * 150 + "])\n"
    (d,) = _errors(text)
    assert d.code == "E006" and "brackets nested more than 100" in d.message
    assert d.line == 6 and d.source_line[d.column - 1] == "["


def test_the_deepest_accepted_rules_load_and_run():
    # 97 nested blocks (with action and effect: 99 brackets) around an expression 200 deep: the limits
    # of the parser must leave the checker and the compiler room, so it loads and plays
    chain = " + ".join(["vp[me]"] * 197)
    body = "if true { " * 97 + "vp[me] = 1 + " + chain + " }" * 97
    text = ('game "T" { players 2 }\nper player var vp: int = 0\n'
            f"action b {{ effect {{ {body} }} }}\n"
            "function f(x: int) = " + " + ".join(["x"] * 199) + "\n"
            'ending "e" when f(vp[0]) > 10000\n'
            "flow { loop { for p in players { turn p { offer [b] to p } } } }\n")
    game = rulelang.loads(text).new_game(2)
    for _ in range(3):
        game.apply(game.legal_actions()[0])
    assert game.current_player == -4  # 1 -> 199 ... the third action ends it (f(vp[0]) > 10000)

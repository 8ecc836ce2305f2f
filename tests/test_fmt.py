"""`rulelang fmt` (rulelang/fmt.py, docs/authoring.md "Formatting"): what issue 13 asks of a formatter.

For every rule file of the repository and for generated programs (hypothesis): fmt(fmt(x)) == fmt(x);
the AST of fmt(x) equals the AST of x apart from positions; every comment is kept, as often as before,
after the same token, and trailing stays trailing. Then the command: --check, --diff, rewriting, syntax
errors reported and files untouched, Markdown blocks, the exclude list, and the repository itself."""
from __future__ import annotations

import bisect
import collections
import os
import sys
import re
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulelang import ast as A
from rulelang import fmt
from rulelang.cli import cli
from rulelang.parser import parse

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------------ helpers
def shape(value):
    """The AST without its positions: nested tuples of (class, (field, value) ...); spans become None."""
    if isinstance(value, A.Span):
        return None
    if isinstance(value, (list, tuple)):
        return tuple(shape(v) for v in value)
    if hasattr(value, "__attrs_attrs__"):
        return (type(value).__name__,) + tuple(
            (f.name, shape(getattr(value, f.name))) for f in attrs.fields(type(value))
            if f.name != "span" and not f.name.endswith("_span") and not f.name.endswith("_spans"))
    return value


def ast_of(text):
    module, diags = parse(text, "<t>")
    assert module is not None and not diags, "\n".join(d.render() for d in diags)
    return shape(module.items)


def comment_places(text):
    """Each comment with the token before it (its text and how many tokens precede it) and whether it
    trails code on its line."""
    toks, _ = fmt._tokens(text, "<t>", checked=True)
    ends = [t.end for t in toks]
    out = []
    for c in fmt._comments(text):
        n = bisect.bisect_right(ends, c.start)
        prev = toks[n - 1] if n else None
        trailing = prev is not None and "\n" not in text[prev.end:c.start]
        out.append((c.value, n, prev.value if prev else None, trailing))
    return out


def assert_formats_safely(text):
    out = fmt.format_text(text, "<t>")
    assert fmt.format_text(out, "<t>") == out, "not idempotent"
    assert ast_of(out) == ast_of(text), "the AST changed"
    assert collections.Counter(c.value for c in fmt._comments(out)) == \
        collections.Counter(c.value.rstrip() for c in fmt._comments(text))
    assert comment_places(out) == [(c.rstrip(), n, p, t) for c, n, p, t in comment_places(text)]
    assert not any(line != line.rstrip() for line in out.split("\n")), "trailing white space"
    return out


@pytest.fixture
def parse_once(monkeypatch):
    """Parse each text once within a test (the checks below parse the same texts several times)."""
    import rulelang.parser

    def memo(fn):
        seen = {}

        def wrapper(text, *args):
            if text not in seen:
                seen[text] = fn(text, *args)
            return seen[text]
        return wrapper
    monkeypatch.setattr(rulelang.parser, "parse", memo(rulelang.parser.parse))
    monkeypatch.setattr(fmt, "_cst_parse", memo(fmt._cst_parse))
    monkeypatch.setattr(sys.modules[__name__], "parse", rulelang.parser.parse)


def repo_rule_files():
    out = []
    for base in ("games", "tests", "docs"):
        out += sorted((ROOT / base).rglob("*.rules"))
    return out


# ------------------------------------------------------------------------------------------ the properties
@pytest.mark.parametrize("path", repo_rule_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_file_formats_safely(path, parse_once):
    """Also the files the repository excludes from formatting (tests/consistency ...): fmt must be safe
    on them, it is only not applied there so that their line and column expectations stay put. A file
    that does not parse (a deliberate syntax error) is refused with its diagnostics."""
    text = path.read_text(encoding="utf-8")
    if parse(text, str(path))[0] is None:
        with pytest.raises(fmt.FormatError) as refused:
            fmt.format_text(text, str(path))
        assert refused.value.diagnostics
        return
    assert_formats_safely(text)


def test_every_docs_block_formats_safely(parse_once):
    blocks = 0
    for md in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"^```rules\n(.*?)^```", md.read_text(encoding="utf-8"), re.S | re.M):
            if parse(block, "<b>")[0] is not None:
                assert_formats_safely(block)
                blocks += 1
    assert blocks >= 100


# generated programs: small, valid (they parse), built from the grammar's constructs, laid out at random
NAMES = st.sampled_from(["a", "b", "cx", "n", "vp", "pile", "p"])
INTS = st.integers(0, 99).map(str)
STRINGS = st.sampled_from(['"s"', '"S-1"', '"a \\" b"', '"x # not a comment"', '""'])
BINOPS = st.sampled_from(["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "in",
                          "not in", ".."])


def paren(ts):
    return ["("] + ts + [")"]


@st.composite
def exprs(draw, depth=2):
    if depth <= 0:
        return [draw(st.one_of(NAMES, INTS, STRINGS, st.sampled_from(["true", "false", "none"])))]
    sub = exprs(depth - 1)
    kind = draw(st.integers(0, 12))
    if kind == 0:
        return paren(draw(sub)) + draw(BINOPS).split() + paren(draw(sub))
    if kind == 1:
        return [draw(st.sampled_from(["-", "not", "?"]))] + paren(draw(sub))
    if kind == 2:
        args = draw(st.lists(sub, max_size=3))
        out = [draw(NAMES), "("]
        for i, x in enumerate(args):
            out += ([","] if i else []) + (([draw(NAMES), ":"] if draw(st.booleans()) else []) + x)
        return out + [")"]
    if kind == 3:
        return [draw(NAMES), "[", *draw(sub), "]", ".", draw(NAMES)]
    if kind == 4:
        items = draw(st.lists(sub, max_size=3))
        out = ["["]
        for i, x in enumerate(items):
            out += ([","] if i else []) + x
        return out + (["," ] if items and draw(st.booleans()) else []) + ["]"]
    if kind == 5:
        k, v = draw(sub), draw(sub)
        return ["{", *k, ":", *v, ",", *draw(sub), ":", *draw(sub), "}"]
    if kind == 6:
        return ["{", *draw(sub), ",", *draw(sub), "}"] if draw(st.booleans()) else ["{", "}"]
    if kind == 7:
        return ["(", *draw(sub), ",", *draw(sub), ")"]
    if kind == 8:
        return ["if", *draw(sub), "then", *draw(sub), "else", *draw(sub)]
    if kind == 9:
        return [draw(NAMES), "(", draw(NAMES), "=>", *draw(sub), ")"]
    if kind == 10:
        return ["[", *draw(sub), "for", draw(NAMES), "in", *draw(sub), "if", *draw(sub), "]"]
    if kind == 11:
        return ["-", "-", draw(NAMES)]  # two unary minuses: must not become the '--' of a board edge
    return [draw(st.one_of(NAMES, INTS, STRINGS))]


CITES = st.lists(st.sampled_from(['@rule "S-1"', '@rule "S-2", "S-3"']), max_size=1).map(
    lambda cs: [t for c in cs for t in re.findall(r'"[^"]*"|,|@rule', c)])


@st.composite
def blocks(draw, depth=2):
    stmts = draw(st.lists(statements(depth - 1), max_size=3)) if depth > 0 else []
    return ["{"] + [t for s in stmts for t in s] + ["}"]


@st.composite
def statements(draw, depth=1):
    e = exprs(1)
    kind = draw(st.integers(0, 11))
    cites = draw(CITES)
    if kind == 0:
        s = ["let", draw(NAMES), "=", *draw(e)]
    elif kind == 1:
        s = [draw(NAMES), "[", *draw(e), "]", draw(st.sampled_from(["=", "+=", "-="])), *draw(e)]
    elif kind == 2:
        s = ["if", *draw(e), *draw(blocks(depth))]
        if draw(st.booleans()):
            s += ["elif", *draw(e), *draw(blocks(depth))]
        if draw(st.booleans()):
            s += ["else", *draw(blocks(depth))]
    elif kind == 3:
        s = ["for", draw(NAMES), "in", *draw(e), *draw(blocks(depth))]
    elif kind == 4:
        s = ["turn", *draw(e), "{", "offer", "[", draw(NAMES), ",", draw(NAMES), "]", "to", draw(NAMES), "}"]
    elif kind == 5:
        s = ["log", *draw(e), ",", *draw(e)]
    elif kind == 6:
        s = ["let", draw(NAMES), "=", "choose", "one", "of", *draw(e), "by", draw(NAMES), "prompt", '"p"']
    elif kind == 7:
        s = ["loop", *draw(blocks(depth))]
    elif kind == 8:
        s = ["emit", draw(NAMES), "(", *draw(e), ")"]
    elif kind == 9:
        s = ["move", *draw(e), "from", draw(NAMES), "to", draw(NAMES)]
    elif kind == 10:
        s = draw(st.sampled_from([
            ["repeat", "3", "times", "{", "shuffle", "pile", "}"], ["while", "x", "{", "return", "-", "1", "}"],
            ["draw", "2", "from", "pile", "into", "hand", "[", "me", "]"],
            ["let", "r", "=", "roll", "one", "of", "[", "1", ",", "2", "]"],
            ["reveal", "card", "to", "all_players"], ["expect", "x", "==", "1", '"msg"']]))
    else:
        s = [draw(st.sampled_from(["break", "continue", "end_game"]))]
    return cites + s


TYPES = st.sampled_from([["int"], ["map", "[", "Kind", ",", "int", "]"], ["1", "..", "6"], ["list", "[", "player", "]"]])


@st.composite
def declarations(draw):
    kind = draw(st.integers(0, 13))
    name = draw(NAMES)
    e = exprs(2)
    if kind == 0:
        d = ["const", name, "=", *draw(e)]
    elif kind == 1:
        d = (["per", "player"] if draw(st.booleans()) else []) + ["var", name, ":", *draw(TYPES)] + \
            (["=", *draw(e)] if draw(st.booleans()) else []) + (["visible", "to", "owner"] if draw(st.booleans()) else [])
    elif kind == 2:
        d = ["enum", name, "{", "red", ",", "blue", *([","] if draw(st.booleans()) else []), "}"]
    elif kind == 3:
        d = ["record", name, "{", "cost", ":", "int", "=", "0", ",", "kind", ":", *draw(TYPES), "}"]
    elif kind == 4:
        rows = draw(st.lists(st.tuples(NAMES, exprs(1)), max_size=3))
        d = ["table", name, ":", "R", "{"] + [t for n, x in rows for t in [n, "(", *x, ",", "k", ":", "1", ")"]] + ["}"]
    elif kind == 5:
        d = ["action", name, "(", "n", "in", "1", "..", "3", ")", "{", "text", '"t {n}"', "require", *draw(e),
             '"why"', "cost", draw(NAMES), ":", *draw(e), *draw(CITES), "effect", *draw(blocks()), "}"]
    elif kind == 6:
        d = ["function", name, "(", "p", ":", "player", ",", "q", ")", "=", *draw(e)]
    elif kind == 7:
        d = [draw(st.sampled_from(["flow", "setup"])), *draw(blocks())]
    elif kind == 8:
        d = ["procedure", name, "(", ")", "placeholder", '"why"', *draw(blocks())]
    elif kind == 9:
        d = ["scenario", '"s"', "{", "players", "2", "seed", "1", "when", "{", "play", '"a(1)"', "}", "then", "{",
             "expect", *draw(e), "}", "}"]
    elif kind == 10:
        d = ["board", name, "{", "x", "--", "y", "--", "z", "node", "x", "(", "gems", ":", "3", ")", "}"]
    elif kind == 11:
        d = ["when", name, "(", "p", ")", "if", *draw(e), "then", *draw(blocks())]
    elif kind == 12:
        d = ["variant", name, '"short"', "{", "const", "x", "=", *draw(e), *draw(CITES), "override", "var", "y", ":",
             "int", "=", "2", "extend", "setup", *draw(blocks()), "}"]
    else:
        d = draw(st.sampled_from([
            ["ending", '"e"', "when", "x", ">", "3"], ["score", "p", "=", "vp", "[", "p", "]"],
            ["tiebreak", "p", "=", "-", "gems", "[", "p", "]"], ["invariant", '"i"', ":", "x", ">=", "0"],
            ["piece", "Ship", "{", "hp", ":", "int", "=", "3", "visible", "to", "owner", ",", "at", ":", "node", "}"],
            ["event", "scored", "(", "p", ":", "player", ")"], ["game", '"G"', "{", "players", "2", "..", "4", "}"],
            ["board", "g", "=", "hex_grid", "(", "2", ")", "{", "node", "(", "0", ",", "1", ")", "(", "start", ":",
             "true", ")", "}"], ["extends", '"base.rules"']]))
    return draw(CITES) + d


SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\n", "\n  ", "\n\n\n", "\t", "  # note\n", "\n# own line\n",
                              " #no space\n  "])


@st.composite
def programs(draw):
    tokens = [t for d in draw(st.lists(declarations(), min_size=1, max_size=4)) for t in d]
    out = [draw(st.sampled_from(["", "# head\n", "\n\n"]))]
    for t in tokens:
        out += [t, draw(SEPARATORS)]
    return "".join(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_generated_programs_format_safely(text):
    module, diags = parse(text, "<gen>")
    assert module is not None, "the generator must build valid programs:\n" + text + "\n".join(
        d.render() for d in diags)
    assert_formats_safely(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["const", "a", "=", "1", "{", "}", "(", ")", "[", "]", ",", "-", "\"s", '"t"',
                                 "# c", "\n", " ", "@rule", "if", "$", "\x00", "action", "effect", ".."]), max_size=40))
def test_any_text_is_formatted_or_refused_never_a_crash(parts):
    text = " ".join(parts)
    try:
        out = fmt.format_text(text, "<fuzz>")
    except fmt.FormatError as exc:
        assert exc.diagnostics, str(exc)  # refused for its syntax errors, not by a formatter failure
    else:
        assert fmt.format_text(out, "<fuzz>") == out


# ------------------------------------------------------------------------------------------ the layout
def test_the_canonical_layout():
    messy = (
        '#  a header comment kept as written  \n\n\n\n'
        '@rule   "S-1" ,"S-2"\n'
        'game "G"{players 2}\n'
        'enum Kind{red,blue}\n'
        'const xs=[1,2 ,3]\n'
        'var  m : map[ Kind , int ]={red:0,blue : 1}   # trailing\n'
        'function f( p:player )= - p+ ?3*(p%2) ..9\n'
        'action go( n in 1 ..3 ){\n'
        'require m[red]>=n and not(n==2) "why"\n'
        '      effect{ m[red]-=n\n'
        '  @rule "S-3"\n'
        '  if n==1 {log "one"} else { log "other" }\n'
        '# own line, before the closing brace\n'
        '}}\n'
        'flow { loop { for p in players { turn p { offer [go] to p } } } }\n'
    )
    assert fmt.format_text(messy) == (
        '#  a header comment kept as written\n'
        '\n'
        '@rule "S-1", "S-2"\n'
        'game "G" { players 2 }\n'
        'enum Kind { red, blue }\n'
        'const xs = [1, 2, 3]\n'
        'var m: map[Kind, int] = {red: 0, blue: 1}  # trailing\n'
        'function f(p: player) = -p + ?3 * (p % 2)..9\n'
        '\n'
        'action go(n in 1..3) {\n'
        '  require m[red] >= n and not (n == 2) "why"\n'
        '  effect {\n'
        '    m[red] -= n\n'
        '    @rule "S-3"\n'
        '    if n == 1 { log "one" } else { log "other" }\n'
        '    # own line, before the closing brace\n'
        '  }\n'
        '}\n'
        '\n'
        'flow { loop { for p in players { turn p { offer [go] to p } } } }\n'
    )


def test_continuation_lines_and_brackets_are_indented_by_structure():
    text = ('function f(p) =\n'
            'if p == 0 then 1\n'
            '      else g(p,\n'
            '   2)\n'
            'action a {\n'
            '        effect {\n'
            'x = [1,\n'
            '2]\n'
            '}\n'
            '}\n')
    assert fmt.format_text(text) == ('function f(p) =\n'
                                     '  if p == 0 then 1\n'
                                     '  else g(p,\n'
                                     '    2)\n'
                                     '\n'
                                     'action a {\n'
                                     '  effect {\n'
                                     '    x = [1,\n'
                                     '      2]\n'
                                     '  }\n'
                                     '}\n')


def test_statements_side_by_side_stay_on_their_line_two_spaces_apart():
    text = 'scenario "s" {\n  when {\n    play "a(1)" play "a(2)"\n  }\n}\n'
    assert fmt.format_text(text) == 'scenario "s" {\n  when {\n    play "a(1)"  play "a(2)"\n  }\n}\n'


def test_a_body_spanning_lines_opens_and_closes_on_lines_of_their_own():
    assert fmt.format_text("flow { a()\n  b() }\n") == "flow {\n  a()\n  b()\n}\n"


def test_unary_minus_twice_is_not_a_board_edge():
    assert fmt.format_text("const x = - -3\n") == "const x = - -3\n"


def test_a_long_line_is_left_long():
    row = "  r1(" + ", ".join(f"f{i}: {i}" for i in range(40)) + ")"
    text = "table t: R {\n" + row + "\n}\n"
    assert len(row) > 200 and fmt.format_text(text) == text


def test_the_output_is_checked_before_it_is_used(monkeypatch, tmp_path):
    """A layout that would change the tokens (a formatter bug: here one that adds a declaration) is
    refused, and the file is left as it was."""
    real = fmt._layout
    monkeypatch.setattr(fmt, "_layout", lambda text, els, groups: real(text, els, groups) + "const z = 1\n")
    path = tmp_path / "a.rules"
    path.write_text("const  a = [1]\n")
    with pytest.raises(fmt.FormatError, match="would change"):
        fmt.format_text(path.read_text())
    result = CliRunner().invoke(cli, ["fmt", str(path)])
    assert result.exit_code == 1 and "would change" in result.output
    assert path.read_text() == "const  a = [1]\n"


# ------------------------------------------------------------------------------------------ the command
def run(*args):
    return CliRunner().invoke(cli, ["fmt", *map(str, args)])


def test_check_lists_the_files_that_would_change_and_changes_nothing(tmp_path):
    ugly, tidy = tmp_path / "ugly.rules", tmp_path / "tidy.rules"
    ugly.write_text("const a=1\n")
    tidy.write_text("const a = 1\n")
    result = run("--check", tmp_path)
    assert result.exit_code == 1
    assert f"would reformat {ugly}" in result.output and str(tidy) not in result.output.replace(
        "would reformat " + str(ugly), "")
    assert ugly.read_text() == "const a=1\n"
    assert run("--check", tidy).exit_code == 0


def test_diff_prints_the_change_and_writes_nothing(tmp_path):
    ugly = tmp_path / "ugly.rules"
    ugly.write_text("const a=1\n")
    result = run("--diff", ugly)
    assert result.exit_code == 0
    assert "-const a=1\n+const a = 1" in result.output
    assert ugly.read_text() == "const a=1\n"


def test_fmt_rewrites_files_whole(tmp_path):
    ugly = tmp_path / "ugly.rules"
    ugly.write_text("const a=1  \n\n\n\nconst b=2")
    result = run(ugly)
    assert result.exit_code == 0, result.output
    assert ugly.read_text() == "const a = 1\n\nconst b = 2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ugly.rules"]  # no temporary file left behind
    assert run("--check", ugly).exit_code == 0


def test_a_syntax_error_is_reported_with_its_position_and_the_file_left_alone(tmp_path):
    bad = tmp_path / "bad.rules"
    text = "const a=1\nending \"x\" when a = 3\n"
    bad.write_text(text)
    result = run(bad)
    assert result.exit_code == 1
    assert f"{bad}:2:19: error[E004]" in result.output
    assert ' 2 | ending "x" when a = 3\n   |                   ^\n' in result.output  # the line and a caret
    assert "Traceback" not in result.output
    assert bad.read_text() == text


def test_missing_and_unreadable_paths_are_one_line_errors(tmp_path):
    result = run(tmp_path / "nope.rules")
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[0] == f"rulelang: {tmp_path / 'nope.rules'}: no such file or folder"
    binary = tmp_path / "b.rules"
    binary.write_bytes(b"\x00\x01")
    result = run(binary)
    assert result.exit_code == 1 and "cannot read file" in result.output and "Traceback" not in result.output


def test_markdown_rules_blocks_are_formatted_and_broken_ones_left_alone(tmp_path):
    md = tmp_path / "doc.md"
    md.write_text("# Title\n\n```rules\nconst a=1\n```\n\ntext\n\n```rules\nconst b = = 2\n```\n\n"
                  "```python\nx=1\n```\n\n- item\n\n  ```rules\n  const c=[1 ,2]\n  ```\n")
    assert run("--check", md).exit_code == 1
    assert run(md).exit_code == 0
    assert md.read_text() == ("# Title\n\n```rules\nconst a = 1\n```\n\ntext\n\n```rules\nconst b = = 2\n```\n\n"
                              "```python\nx=1\n```\n\n- item\n\n  ```rules\n  const c = [1, 2]\n  ```\n")


def test_the_exclude_list_of_pyproject_is_honoured_for_folders(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rulelang.fmt]\nexclude = ["fixtures/*"]\n')
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "kept.rules").write_text("const a=1\n")
    (tmp_path / "game.rules").write_text("const a=1\n")
    result = run("--check", tmp_path)
    assert result.exit_code == 1
    assert "game.rules" in result.output and "kept.rules" not in result.output
    # a file named on the command line is formatted even when excluded
    assert run("--check", tmp_path / "fixtures" / "kept.rules").exit_code == 1


def test_the_repository_is_formatted():
    """What CI keeps: `rulelang fmt --check games tests docs` (the one command to re-run after a merge)."""
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = run("--check", "games", "tests", "docs")
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output


def test_crlf_and_tabs_become_newlines_and_spaces():
    text = "action a {\r\n\teffect {  # c\r\n\t\tx = 1\r\n\t}\r\n}\r\n"
    assert fmt.format_text(text) == "action a {\n  effect {  # c\n    x = 1\n  }\n}\n"
    assert ast_of(fmt.format_text(text)) == ast_of(text)


def test_a_symbolic_link_is_formatted_through_not_replaced(tmp_path):
    real = tmp_path / "real.rules"
    real.write_text("const a=1\n")
    link = tmp_path / "link.rules"
    link.symlink_to(real)
    assert run(link).exit_code == 0
    assert link.is_symlink() and real.read_text() == "const a = 1\n"

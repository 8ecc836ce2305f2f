"""The quick parser loop (rulelang/lalr_loop.py over rulelang/grammar_tables.py) against Lark's own
(the stand-alone parser Lark's tool generated, rulelang/grammar_standalone.py, through its public API):
for every rule file of the project it builds the same AST (spans, tokens and their positions included)
with the same findings, and for text with errors it gives way, so that the diagnostics are Lark's,
unchanged. Then both against a Lark built from the grammar by the installed Lark, when there is one."""
from __future__ import annotations

import glob
import os

import attrs
from hypothesis import given, settings, strategies as st
import pytest

from rulelang import parser
from rulelang.diagnostics import Source
from rulelang.grammar_standalone import Tree
from rulelang.lalr_loop import NotParsed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = sorted(os.path.relpath(p, ROOT) for pattern in ("games/**/*.rules", "tests/**/*.rules")
               for p in glob.glob(os.path.join(ROOT, pattern), recursive=True))


def same(a, b, where="value"):
    """Structural equality, node classes, token types and positions included (AST nodes compare by
    identity otherwise)."""
    if isinstance(a, str) and hasattr(a, "type"):  # a token (the quick loop's or one of Lark's)
        assert isinstance(b, str) and hasattr(b, "type"), f"{where}: a token and {type(b).__name__}"
    else:
        assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, str) and hasattr(a, "type"):
        assert (a.type, str(a), a.start_pos, a.line, a.column, a.end_line, a.end_column, a.end_pos) == \
               (b.type, str(b), b.start_pos, b.line, b.column, b.end_line, b.end_column, b.end_pos), where
    elif isinstance(a, Tree):
        assert a.data == b.data, where
        same(a.children, b.children, where + ".children")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, Source):
        assert (a.text, a.path) == (b.text, b.path), where
    elif attrs.has(type(a)):
        for f in attrs.fields(type(a)):
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def both(text, path):
    """(value and findings of the quick loop, or NotParsed), (value, findings and errors of Lark's)."""
    source = Source(text, path)
    quick = parser._Builder(path, source)
    try:
        got = (parser._parse_quickly(quick, text), quick.diags, quick.failed)
    except NotParsed as e:
        got = e
    lark = parser._Builder(path, source)
    errors = []
    try:
        value = parser._parse_with_lark(lark, text, lambda e: errors.append(e) or True)
    except Exception as e:  # noqa: BLE001 - the reference's own failure
        errors.append(e)
        value = None
    return got, (value, lark.diags, lark.failed), errors


def values(x):
    """A parse's value as parser.parse reads it (the _Node of the start rule)."""
    return x.value if isinstance(x, parser._Node) else x


def same_as_lark(text, rel):
    """The quick loop builds what Lark's loop builds, or gives way where Lark finds a syntax error."""
    got, want, errors = both(text, rel)
    if errors:
        assert isinstance(got, NotParsed), "the quick loop accepted text Lark rejects"
        return
    assert not isinstance(got, NotParsed), f"the quick loop gave way on a file Lark parses: {got}"
    same(values(got[0]), want[0])
    same([d.render() for d in got[1]], [d.render() for d in want[1]])
    assert (got[2] is None) == (want[2] is None)
    module, diags = parser.parse(text, rel)  # the whole parse, the quick way
    assert (module is None) == bool([d for d in diags if d.severity == "error"])


@pytest.mark.parametrize("rel", FILES)
def test_every_rule_file_parses_to_the_same_tree_as_with_lark(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        same_as_lark(f.read(), rel)


def lark_only(monkeypatch):
    def give_way(builder, text):
        raise NotParsed("the test asks for Lark")
    monkeypatch.setattr(parser, "_parse_quickly", give_way)


def rendered(text, path):
    module, diags = parser.parse(text, path)
    return module, [d.render() for d in diags]


BROKEN = [
    'game "x" { players 2 }\nvar a: int = = 1\nvar b int\nflow { }\n',
    'game "x" { players 2 }\nflow { let x = 1 $ 2 }\n',
    'game "x" { players 2 }\nconst s = "open\n',
    'game "x" { players 2 }\nflow { if true { log 1 }\n',
    'game "x" { players 2 }\nconst a = if true then 1 elif false then 2 else 3\n',
    'game "x" { players 2 }\nflow { draw 2 from deck }\n',
    'game "x" { players 2 }\nconst n = 99999999999999999999999\n',
    'game "x" { players 2 }\nconst s = "\\ud800"\n',
    'game "x" { players 2 }\nconst a = 1 +\n',
    'game "x" { players 2 }\nvar v: int visible to everyone\n',
    '',
    '   \n# only a comment',
    'game',
]


@pytest.mark.parametrize("text", BROKEN)
def test_errors_give_the_messages_lark_gives(text, monkeypatch):
    same_as_lark(text, "b.rules")
    got = rendered(text, "b.rules")
    lark_only(monkeypatch)
    want = rendered(text, "b.rules")
    assert got[1] == want[1]
    assert (got[0] is None) == (want[0] is None)
    if got[0] is not None:
        same(got[0].items, want[0].items)


WORDS = ["in", "into", "inx", " in ", "not", "none", "nonex", "all", "owner", "then", "else", "elif", "elsex",
         "=>", "==", "+=", "-=", "--", "..", "@rule", "ordered", "optional", "sampled", " if ", "for"]


def test_damaged_files_read_as_with_lark(monkeypatch):
    """Characters deleted, doubled or swapped at seeded random places in small rule files: the same
    diagnostics (or the same AST) as Lark gives, whether the quick loop parsed or gave way."""
    import random

    rng = random.Random(7)
    texts = []
    for rel in ("games/examples/tictactoe.rules", "games/examples/kuhn_poker.rules"):
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            text = f.read()
        for _ in range(60):
            i = rng.randrange(len(text))
            j = min(len(text), i + rng.randrange(1, 4))
            how = rng.randrange(4)
            if how == 0:
                texts.append(text[:i] + text[j:])
            elif how == 1:
                texts.append(text[:j] + text[i:])
            elif how == 2:
                texts.append(text[:i] + rng.choice("{}()[]\"#=.,:-+ \nxy1") + text[i:])
            else:  # keywords, names that start like them, operators that start like others
                texts.append(text[:i] + rng.choice(WORDS) + text[i:])
    got = [rendered(t, "d.rules") for t in texts]
    for text in texts:  # the quick loop parses or gives way, nothing else
        try:
            parser._parse_quickly(parser._Builder("d.rules", Source(text, "d.rules")), text)
        except NotParsed:
            pass
    lark_only(monkeypatch)
    for text, (module, diags) in zip(texts, got):
        want_module, want_diags = rendered(text, "d.rules")
        assert diags == want_diags, text
        assert (module is None) == (want_module is None)
        if module is not None:
            same(module.items, want_module.items)


def test_a_file_without_errors_is_parsed_without_lark():
    """The generated tables hold the parser as plain data: parsing text without errors needs neither Lark
    nor the stand-alone parser; a syntax error brings the stand-alone parser in, and its message. Lark
    itself is never imported."""
    import subprocess
    import sys

    code = ("import sys\nfrom rulelang import parser\n"
            "m, d = parser.parse(open('games/examples/tictactoe.rules').read(), 't.rules')\n"
            "print(m is not None, d, 'lark' in sys.modules, 'rulelang.grammar_standalone' in sys.modules)\n"
            "m, d = parser.parse('game \"x\" { players 2 }\\nflow { $ }\\n', 'b.rules')\n"
            "print(m is None, [x.code for x in d], 'lark' in sys.modules, 'rulelang.grammar_standalone' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env=dict(os.environ))
    assert r.stdout.splitlines() == ["True [] False False", "True ['E001'] False True"], r.stdout + r.stderr


# --- against plain Lark: its own parse tree (positions propagated), then the builder's methods --------

@pytest.fixture(scope="module")
def plain_lark():
    """Lark built from the grammar as a user of Lark would build it: a parse tree with positions, then
    the AST built from it node by node with the builder's methods (rulelang's own callbacks left out)."""
    pytest.importorskip("lark")
    from lark import Lark, Token as LarkToken, Tree as LarkTree

    holder = {}

    def on_token(kind):
        return lambda tok: getattr(holder["builder"], kind)(tok)

    with open(os.path.join(ROOT, "rulelang", "grammar.lark"), encoding="utf-8") as f:
        grammar = f.read()
    lark = Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True,
                lexer_callbacks={"INT": on_token("INT"), "STRING": on_token("STRING")})

    def build(text, path):
        builder = holder["builder"] = parser._Builder(path, Source(text, path))
        tree = lark.parse(text)
        done = {}
        stack = [(tree, False)]
        while stack:  # bottom up, without recursion
            node, ready = stack.pop()
            if not ready:
                stack.append((node, True))
                stack.extend((c, False) for c in node.children if isinstance(c, LarkTree))
                continue
            kids = [done.pop(id(c)) if isinstance(c, LarkTree) else c for c in node.children]
            method = getattr(builder, node.data, None)
            if method is None or str(node.data).startswith("_"):
                done[id(node)] = LarkTree(node.data, kids)
            elif getattr(method, "with_meta", False):
                done[id(node)] = method(node.meta, kids)
            else:
                done[id(node)] = method(kids)
        assert not any(isinstance(t, LarkToken) for t in done)
        return done[id(tree)], builder.diags
    return build


@pytest.mark.parametrize("rel", FILES)
def test_every_rule_file_parses_as_plain_lark_builds_it(rel, plain_lark):
    from lark.exceptions import UnexpectedInput

    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        text = f.read()
    quick = parser._Builder(rel, Source(text, rel))
    try:
        want, want_diags = plain_lark(text, rel)
    except UnexpectedInput:  # a syntax error: the quick loop gives way
        with pytest.raises(NotParsed):
            parser._parse_quickly(quick, text)
        return
    got = parser._parse_quickly(quick, text)
    same(values(got), want)
    assert [d.render() for d in quick.diags] == [d.render() for d in want_diags]


FRAGMENTS = WORDS + ["x", "y1", "_z", "0", "42", '"s"', '"a\\\\"b"', "#c\n", "\n", " ", "\t", "(", ")", "[", "]",
                     "{", "}", ",", ":", ".", "=", "-", "+", "*", "/", "%", "<", ">=", "!=", "?", "@rule \"A-1\"",
                     "let", "var", "and", "or", "true", "none", "new", "one", "by", "prompt", "visible", "to",
                     "explicit", "players", "turn", "offer", "eliminate", "emit", "log"]


@settings(max_examples=150, derandomize=True, deadline=None)
@given(data=st.data())
def test_fragments_spliced_into_a_rule_file_read_as_with_lark(data):
    """Keywords, names, operators, strings and comments spliced into a small rule file at any place:
    the quick loop builds what Lark builds, or gives way where Lark finds a syntax error."""
    with open(os.path.join(ROOT, "games/examples/tictactoe.rules"), encoding="utf-8") as f:
        text = f.read()
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3))) + text[at:]
    same_as_lark(text, "f.rules")

"""The symbol index (rulelang/symbols.py) on its own: definitions, references, scopes, citations, outline.

The probe file below uses each kind of name once or twice; each test says what the language (docs/
language.md) makes a name refer to, and checks the index agrees, position by position.
"""
from __future__ import annotations

import pytest

from rulelang import api
from rulelang.symbols import analyse, keywords, lex

PROBE = '''game "Probe" { players 2 }

enum Colour { red, blue }
record Card { colour: Colour, value: int = 1 }
table cards: Card {
  c1 (red, 2)
  c2 (colour: blue, value: 3)
}
piece Token { owner: player, size: int = 1 }
per player var score_of: int = 0
var pile: list[Card] = []
board track = line(5)
event scored(p: player, n: int)

function worth(c: Card) = c.value * 2

procedure gain(p: player, n: int) {
  score_of[p] += n
  emit scored(p, n)
}

@rule "P-1", "P-2"  # taking a card
action take(c in cards) {
  require c.colour == red or c.value > 1
  effect {
    let x = worth(c)
    for y in [1, 2] {
      let x = y + x
      gain(me, x)
    }
    gain(me, x)
    let t = new Token(owner: me, size: 2)
    add c to pile
  }
}

when scored(who, amount) if amount > 0 then {
  log "# not a comment", who, amount
}

flow {
  loop { for p in players { turn p { offer [take] to p } } }
}

ending "enough" when any(players, q => score_of[q] >= 10)
score p = score_of[p] + count([c for c in pile if c.colour == blue])

variant rich "more points" {
  override action take(c in cards) {
    effect { gain(me, worth(c) + 5) }
  }
}

scenario "rich takes" {
  with variant rich
  then { expect count(legal) >= 0 }
}
'''


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    path = tmp_path_factory.mktemp("sym") / "probe.rules"
    path.write_text(PROBE, encoding="utf-8")
    a = analyse(str(path), PROBE)
    assert a.diagnostics == [], [d.render() for d in a.diagnostics]
    return str(path), a.index


LINES = PROBE.split("\n")


def pos(line_text, word, nth=0, line_no=None):
    """The 1-based (line, column) of the nth whole word ``word`` on the line that starts with ``line_text``."""
    import re

    i = line_no if line_no is not None else next(i for i, ln in enumerate(LINES) if ln.strip().startswith(line_text))
    m = [m for m in re.finditer(r"(?<![\w])" + word + r"(?!\w)", LINES[i])][nth]
    return i + 1, m.start() + 1


def refs_of(ix, path, at):
    ref = ix.at(path, *at)
    assert ref is not None, at
    return sorted((r.span.line, r.span.column) for r in ix.references_to(ref.symbol)), ref


def test_a_let_shadowed_in_a_loop_and_read_on_its_own_right_side(probe):
    path, ix = probe
    outer = pos("let x = worth", "x")
    inner = pos("let x = y + x", "x", 0)
    inner_rhs = pos("let x = y + x", "x", 1)  # the right side is read before the new x exists
    in_loop = pos("gain(me, x)", "x", 0, line_no=next(i for i, ln in enumerate(LINES) if ln == "      gain(me, x)"))
    after = pos("gain(me, x)", "x", 0, line_no=next(i for i, ln in enumerate(LINES) if ln == "    gain(me, x)"))
    got, ref = refs_of(ix, path, outer)
    assert got == sorted([outer, inner_rhs, after]) and ref.definition and ref.symbol.kind == "local"
    got, _ = refs_of(ix, path, in_loop)
    assert got == [inner, in_loop]
    assert ix.at(path, *after).type == "int"  # the type the checker gave the value there


def test_record_fields_through_dots_named_row_values_and_new(probe):
    path, ix = probe
    decl = pos("record Card", "value")
    got, ref = refs_of(ix, path, decl)
    assert ref.symbol.kind == "field" and ref.symbol.container == "Card"
    assert got == sorted([decl, pos("c2 (", "value"), pos("function worth", "value"), pos("require", "value")])
    got, _ = refs_of(ix, path, pos("record Card", "colour"))
    assert got == sorted([pos("record Card", "colour"), pos("c2 (", "colour"), pos("require", "colour"),
                          pos("score p", "colour")])
    got, _ = refs_of(ix, path, pos("piece Token", "size"))
    assert got == [pos("piece Token", "size"), pos("let t = new", "size")]


def test_declarations_named_in_offer_emit_when_types_tables_and_overrides(probe):
    path, ix = probe
    got, _ = refs_of(ix, path, pos("action take", "take"))
    assert got == sorted([pos("action take", "take"), pos("loop", "take"), pos("override action take", "take")])
    got, _ = refs_of(ix, path, pos("event scored", "scored"))
    assert got == [pos("event scored", "scored"), pos("emit scored", "scored"), pos("when scored", "scored")]
    got, _ = refs_of(ix, path, pos("record Card", "Card"))
    assert got == sorted([pos("record Card", "Card"), pos("table cards", "Card"), pos("var pile", "Card"),
                          pos("function worth", "Card")])
    got, _ = refs_of(ix, path, pos("enum Colour", "red"))
    assert got == [pos("enum Colour", "red"), pos("c1 (", "red"), pos("require", "red")]
    # code in a variant that is not applied is indexed too
    got, _ = refs_of(ix, path, pos("procedure gain", "gain"))
    assert pos("effect { gain", "gain") in got and len(got) == 4


def test_builtins_parameters_and_lambda_names(probe):
    path, ix = probe
    ref = ix.at(path, *pos("ending", "any"))
    assert ref.symbol.kind == "builtin" and ref.symbol.span is None and ref.type == "bool"
    got, ref = refs_of(ix, path, pos("ending", "q", 0))
    assert got == [pos("ending", "q", 0), pos("ending", "q", 1)] and ref.symbol.kind == "local"
    got, ref = refs_of(ix, path, pos("when scored", "amount", 0))
    assert got == [pos("when scored", "amount", 0), pos("when scored", "amount", 1), pos("log", "amount")]
    assert ref.symbol.kind == "param" and ref.symbol.type == "int"
    assert ix.at(path, *pos("log", "who")).symbol.type == "player"


def test_names_visible_at_a_place(probe):
    path, ix = probe
    line, _ = pos("gain(me, x)", "gain", line_no=next(i for i, ln in enumerate(LINES) if ln == "      gain(me, x)"))
    names = {s.name: s for s in ix.visible(path, line, 7)}
    assert {"x", "y", "c", "take", "gain", "cards", "red", "c1", "pile", "score_of"} <= set(names)
    assert names["x"].span.line == line - 1  # the inner x, not the outer one
    assert "who" not in names and "q" not in names
    first = {s.name for s in ix.visible(path, pos("let x = worth", "x")[0], 5)}
    assert "x" not in first and "y" not in first  # not yet declared there


def test_citations_and_tokens(probe):
    path, ix = probe
    line = next(i for i, ln in enumerate(LINES) if ln.startswith("@rule")) + 1
    text = LINES[line - 1]
    assert ix.citation_at(path, line, text.index("P-2"))[0] == "P-2"
    assert ix.citation_at(path, line, text.index("P-1"))[0] == "P-1"
    assert ix.citation_at(path, line, text.index("taking")) is None  # a comment
    toks = lex('@rule "A" , "B" "C"  # x "D"\nlog "# no comment", \t\u00e9 x')
    assert [(t.kind, t.text) for t in toks if t.kind in ("cite", "string")] == \
        [("cite", '"A"'), ("cite", '"B"'), ("string", '"C"'), ("string", '"# no comment"')]
    x = toks[-1]
    assert (x.text, x.line, x.column) == ("x", 2, 24)  # a tab and an accented letter are one column each


def test_outline_lists_each_declaration_with_its_parts(probe):
    path, ix = probe
    top = [(s.kind, s.name) for s in ix.outline(path)]
    assert top == [("game", "Probe"), ("enum", "Colour"), ("record", "Card"), ("table", "cards"),
                   ("piece", "Token"), ("var", "score_of"), ("var", "pile"), ("board", "track"),
                   ("event", "scored"), ("function", "worth"), ("procedure", "gain"), ("action", "take"),
                   ("trigger", "when scored"), ("flow", "flow"), ("ending", "enough"), ("score", "score"),
                   ("variant", "rich"), ("scenario", "rich takes")]
    by = {s.name: s for s in ix.outline(path)}
    assert [c.name for c in by["Colour"].children] == ["red", "blue"]
    assert [c.name for c in by["cards"].children] == ["c1", "c2"]
    assert [c.name for c in by["Card"].children] == ["colour", "value"]
    assert [(c.kind, c.name) for c in by["rich"].children] == [("action", "take")]
    got, _ = refs_of(ix, path, pos("variant rich", "rich"))
    assert got == [pos("variant rich", "rich"), pos("with variant", "rich")]


@pytest.mark.parametrize("text", [
    PROBE.replace("gain(me, x)\n    let t", "gain(me, xx)\n    let t"),  # an unknown name
    PROBE.replace("add c to pile", "add c to"),  # a syntax error
    PROBE + "\nconst pile = 3\n",  # declared twice: found while merging, before checking
    "\x00\x01 not rules",
])
def test_the_diagnostics_are_those_of_check(tmp_path, text):
    path = tmp_path / "p.rules"
    a = analyse(str(path), text)
    assert a.diagnostics == api.check(str(path), text=text) and a.diagnostics
    if "add c to\n" in text or "\x00" in text:
        assert a.index is None
    else:  # the names are indexed all the same
        assert a.index.symbol_named("worth") is not None


def test_keywords_are_the_grammars_words():
    kw = keywords()
    assert {"let", "action", "offer", "effect", "require", "for", "in", "elif", "else", "visible"} <= kw
    assert not {"take", "marks", "count", "x"} & kw


TEMPLATE = '''game "Template" { players 2 }
var total: int = 0
action add(n in 1..3, (a, b) in [(1, 2), (3, 4)]) {
  text "add {n} then {a} and {b}"
  effect { total += n + a + b }
}
flow { loop { for p in players { turn p { offer [add] to p } } } }
ending "full" when total >= 9
score p = total
'''


def test_a_parameter_named_in_the_action_text_is_a_use_of_it(tmp_path):
    """docs/language.md, "Actions": `{name}` in an action's text shows that parameter (E328 when it is none),
    so renaming the parameter must rename it there too, or the renamed file no longer checks."""
    path = tmp_path / "template.rules"
    path.write_text(TEMPLATE, encoding="utf-8")
    a = analyse(str(path), TEMPLATE)
    assert a.diagnostics == [], [d.render() for d in a.diagnostics]
    lines = TEMPLATE.split("\n")
    text_line = next(i for i, ln in enumerate(lines) if "text \"add" in ln) + 1
    for name in ("n", "a", "b"):
        decl_line = 3
        decl_col = lines[2].index(f"{name} in" if name == "n" else name, lines[2].index("(") + 1) + 1
        ref = a.index.at(str(path), decl_line, decl_col)
        assert ref is not None and ref.symbol.name == name and ref.symbol.kind == "param", name
        uses = sorted((r.span.line, r.span.column, r.span.end_column) for r in a.index.references_to(ref.symbol))
        col = lines[text_line - 1].index("{" + name + "}") + 2
        assert (text_line, col, col + 1) in uses, (name, uses)

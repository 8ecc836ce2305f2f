"""Highlighting (rulelang/highlight.py, editors/vscode/, docs/authoring.md "Highlighting and editors"):
the Pygments lexer registered under the alias `rules`, its keywords taken from the grammar the parser
uses, and the VS Code extension's TextMate grammar generated from the same list."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pygments import highlight, lex
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Error, Keyword, Name, Operator

from rulelang import highlight as H
from rulelang.grammar_standalone import Lark_StandAlone
from rulelang.parser import parse

ROOT = Path(__file__).resolve().parent.parent
VSCODE = ROOT / "editors" / "vscode"


def grammar_words():
    """The words the parser's own lexer knows as keywords: its string terminals, and the words of
    terminals that are alternatives of words (VISIBILITY, CHANCE_MODE)."""
    out = set()
    for t in Lark_StandAlone().lexer_conf.terminals:
        if t.pattern.type == "str" and re.fullmatch(r"[A-Za-z_]\w*", t.pattern.value):
            out.add(t.pattern.value)
        elif t.pattern.type == "re" and re.fullmatch(r"\(\?:[A-Za-z_|]+\)", t.pattern.value):
            out.update(t.pattern.value[3:-1].split("|"))
    return out


def test_the_keyword_list_is_the_grammars():
    assert set(H.keywords()) == grammar_words()
    assert {"effect", "require", "visible", "owner", "sampled", "per", "player", "elif"} <= set(H.keywords())


@pytest.mark.parametrize("word", sorted(grammar_words()))
def test_every_keyword_is_highlighted_as_a_keyword(word):
    (kind, text), *_ = lex(f"{word} x", H.RulesLexer())
    assert text == word
    assert kind in Keyword or kind is Operator.Word, kind


def test_a_keyword_that_is_also_a_built_in_is_a_call_before_a_bracket():
    toks = [(k, v) for k, v in lex("var x: int visible to all\nconst y = all(xs, c => c)\n", H.RulesLexer())
            if v == "all"]
    assert toks[0][0] in Keyword and toks[1][0] is Name.Function


def rule_texts():
    texts = []
    for base in ("games", "tests"):
        for p in sorted((ROOT / base).rglob("*.rules")):
            texts.append((str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")))
    for md in sorted((ROOT / "docs").glob("*.md")):
        for i, block in enumerate(re.findall(r"^```rules\n(.*?)^```", md.read_text(encoding="utf-8"), re.S | re.M)):
            texts.append((f"{md.name}#{i}", block))
    return texts


def test_no_error_tokens_in_any_repository_rule_text():
    """Every rule file and docs block that parses lexes without an Error token (those that do not parse,
    such as tests/consistency/e001_unexpected_character.rules, may have one)."""
    texts = rule_texts()
    assert len(texts) > 150
    for name, text in texts:
        bad = [v for k, v in lex(text, H.RulesLexer()) if k in Error]
        assert not bad or parse(text, name)[0] is None, f"{name}: {bad[:5]}"


def test_an_invalid_character_is_an_error_token():
    assert any(k in Error for k, _ in lex("const a = 3 $\n", H.RulesLexer()))


def test_the_lexer_is_registered_and_highlights_a_docs_block():
    """What docs/ (and MkDocs or Sphinx, which look lexers up by name) rely on: the entry point."""
    lexer = get_lexer_by_name("rules")
    assert isinstance(lexer, H.RulesLexer)
    assert isinstance(get_lexer_for_filename("games/station.rules"), H.RulesLexer)
    block = re.search(r"^```rules\n(.*?)^```", (ROOT / "docs" / "language.md").read_text(encoding="utf-8"),
                      re.S | re.M).group(1)
    html = highlight(block, lexer, HtmlFormatter())
    assert '<span class="kd">game</span>' in html  # a declaration keyword
    assert '<span class="c1">#' in html or "#" not in block


def test_pygmentize_knows_rules(tmp_path):
    src = tmp_path / "t.rules"
    src.write_text('@rule "S-1"\nconst a = 1  # one\n')
    result = subprocess.run([sys.executable, "-m", "pygments", "-l", "rules", "-f", "html", str(src)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert '<span class="kd">const</span>' in result.stdout and '<span class="nd">@rule</span>' in result.stdout


# ------------------------------------------------------------------------------------------ VS Code
def test_the_textmate_grammar_is_generated_from_the_keyword_list():
    on_disk = (VSCODE / "syntaxes" / "rules.tmLanguage.json").read_text(encoding="utf-8")
    assert on_disk == H.textmate_json(), "run: python -m rulelang.highlight editors/vscode/syntaxes/rules.tmLanguage.json"


def test_the_extension_files_are_valid_and_consistent():
    package = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    config = json.loads((VSCODE / "language-configuration.json").read_text(encoding="utf-8"))
    grammar = json.loads((VSCODE / "syntaxes" / "rules.tmLanguage.json").read_text(encoding="utf-8"))
    (language,) = package["contributes"]["languages"]
    (contributed,) = package["contributes"]["grammars"]
    assert language["extensions"] == [".rules"] and contributed["language"] == language["id"]
    assert (VSCODE / language["configuration"]).is_file() and (VSCODE / contributed["path"]).is_file()
    assert contributed["scopeName"] == grammar["scopeName"]
    assert (VSCODE / package["main"]).is_file()
    assert "vscode-languageclient" in package["dependencies"]
    assert config["comments"]["lineComment"] == "#"
    assert ["{", "}"] in config["brackets"]
    js = (VSCODE / "extension.js").read_text(encoding="utf-8")
    assert 'args: ["lsp"]' in js and "vscode-languageclient/node" in js


def textmate_patterns(node):
    if isinstance(node, dict):
        for key in ("match", "begin", "end"):
            if key in node:
                yield node[key]
        for v in node.values():
            yield from textmate_patterns(v)
    elif isinstance(node, list):
        for v in node:
            yield from textmate_patterns(v)


def test_the_textmate_patterns_compile():
    grammar = H.textmate_grammar()
    patterns = list(textmate_patterns(grammar["repository"]))
    assert len(patterns) >= 10
    for p in patterns:
        re.compile(p)
    oniguruma = pytest.importorskip("onigurumacffi")  # the engine of VS Code's TextMate grammars
    for p in patterns:
        oniguruma.compile(p)


def test_the_textmate_grammar_marks_every_keyword():
    keywords = H.textmate_grammar()["repository"]["keywords"]["patterns"]
    for word in grammar_words():
        assert any(re.fullmatch(p["match"], word) for p in keywords), word
    assert not any(re.search(p["match"], "effects player_count x_if") for p in keywords)

"""The language server `rulelang lsp`, end to end: a real LSP client (pytest-lsp) starts the server as a
subprocess and talks to it over stdio, as an editor does. One server session serves the whole module
(checking Mars takes about a second); each game file is opened, edited and closed in it.

What must hold (issue 13): diagnostics as you type with the codes and positions of `rulelang check`
(0-based LSP ranges, UTF-16 columns), gone again once the text is fixed; hover of a built-in (its doc
from library.py) and of a citation (the rulebook section's text, read from the rulebook, never copied
here); go to definition; rename of a variable across the file (every edit position checked against the
text, and the renamed file checks as before); completion of a record's fields after '.'; and a server
that survives garbage, a huge document and malformed requests.
"""
from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types as L  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from rulelang import api  # noqa: E402
from rulelang.library import FUNCTIONS  # noqa: E402
from rulelang.lsp_rulebook import section_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "games"
ASYNC = pytest.mark.asyncio(loop_scope="module")  # one event loop: the module's one server session
TIMEOUT = 120


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-m", "rulelang", "lsp"],
    server_env={**os.environ, "RULELANG_NO_CACHE": "1"}))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(L.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=ROOT.as_uri()))
    yield
    await lsp_client.shutdown_session()


# ------------------------------------------------------------------------------------------- helpers

def utf16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


async def open_doc(client, path: Path, text: str | None = None):
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(L.DidOpenTextDocumentParams(text_document=L.TextDocumentItem(
        uri=uri, language_id="rules", version=1, text=path.read_text(encoding="utf-8") if text is None else text)))
    return uri, await diagnostics(client, uri)


async def change(client, uri: str, version: int, text: str):
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(L.DidChangeTextDocumentParams(
        text_document=L.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[L.TextDocumentContentChangeWholeDocument(text=text)]))
    return await diagnostics(client, uri)


async def diagnostics(client, uri: str):
    async def wait():
        while uri not in client.diagnostics:
            await asyncio.sleep(0.02)
        return client.diagnostics[uri]
    return await asyncio.wait_for(wait(), TIMEOUT)


def close(client, uri):
    client.text_document_did_close(L.DidCloseTextDocumentParams(text_document=L.TextDocumentIdentifier(uri=uri)))


@functools.lru_cache(maxsize=8)
def expected(path: Path, text: str):
    """What `rulelang check` says of the text: (code, severity, 0-based start line, UTF-16 start column)."""
    lines = text.split("\n")
    out = []
    for d in api.check(str(path), text=text):
        if d.path != str(path):
            continue
        line = lines[d.line - 1] if d.line - 1 < len(lines) else ""
        severity = {"error": 1, "warning": 2, "note": 3}[d.severity]  # LSP: Error, Warning, Information
        out.append((d.code, severity, d.line - 1, utf16(line[:d.column - 1])))
    return tuple(sorted(out))


def got(diags):
    return tuple(sorted((d.code, int(d.severity), d.range.start.line, d.range.start.character) for d in diags))


def code_parts(text: str):
    """Each line with comments and strings blanked (same length), to find names by regex in tests."""
    out = []
    for line in text.split("\n"):
        line = re.sub(r'"(?:[^"\\\n]|\\.)*"', lambda m: " " * len(m.group()), line)
        i = line.find("#")
        out.append(line if i < 0 else line[:i] + " " * (len(line) - i))
    return out


def occurrences(text: str, name: str):
    """(line, column) 0-based of every use of the name in code (not after '.', i.e. not a field)."""
    res = []
    for i, line in enumerate(code_parts(text)):
        for m in re.finditer(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", line):
            res.append((i, m.start()))
    return res


async def hover_text(client, uri, line, char):
    h = await client.text_document_hover_async(L.HoverParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=line, character=char)))
    assert h is not None, (line, char)
    return h.contents.value


# the variable renamed, a table row whose record's fields are completed, per game file
CASES = {
    "examples/connect4.rules": ("discs", None),
    "station.rules": ("humans", ("dip1", "Ship")),
    "vega.rules": ("object_at", None),
    "mars.rules": ("discovery_pile", None),
}


def record_fields(text: str, record: str):
    m = re.search(r"^record " + record + r"\s*\{([^}]*)\}", text, re.M)
    return sorted(re.findall(r"(\w+)\s*:", m.group(1)))


def first_row(text: str):
    """The first table's first row and the table's record."""
    m = re.search(r"^table \w+\s*:\s*(\w+)[^{]*\{\s*(?:#[^\n]*\n\s*)*(\w+)\s*\(", text, re.M)
    return m.group(2), m.group(1)


@pytest.mark.parametrize("name", list(CASES))
@ASYNC
async def test_a_game_file_in_an_editor_session(client: LanguageClient, name):
    path = GAMES / name
    text = path.read_text(encoding="utf-8")
    var, _ = CASES[name]
    uri, diags = await open_doc(client, path)
    # 1. the diagnostics of `rulelang check`, warnings included
    assert got(diags) == expected(path, text)

    # 2. an edit introduces an error after non-ASCII text (columns are UTF-16 units): E201 right there
    probe = '\nconst lsp_probe = ["\U0001F600 größe", no_such_name_q]\n'
    bad = text + probe
    diags = await change(client, uri, 2, bad)
    line = len(text.split("\n"))  # 0-based line of the probe
    probe_line = bad.split("\n")[line]
    col = utf16(probe_line[:probe_line.index("no_such_name_q")])
    errs = [d for d in diags if d.code == "E201"]
    assert [(d.range.start.line, d.range.start.character, d.range.end.character) for d in errs] == \
        [(line, col, col + len("no_such_name_q"))]
    if len(text) < 20_000:  # the whole list as `check` gives it (a big file: the one above is enough)
        assert got(diags) == expected(path, bad)
    assert all(d.source == "rulelang" for d in diags)

    # 3. fixed: the error is gone, the diagnostics are the file's again
    diags = await change(client, uri, 3, text)
    assert got(diags) == expected(path, text)
    assert not [d for d in diags if d.code == "E201"]

    # 4. hover a built-in: its doc from the one library table
    lines = code_parts(text)
    i, c = next((i, m.start()) for i, ln in enumerate(lines) for m in [re.search(r"(?<![\w.])count\(", ln)] if m)
    value = await hover_text(client, uri, i, c + 2)
    assert FUNCTIONS["count"].doc in value

    # 5. hover a citation: the text of that section, read from the header's rulebook
    i, ln = next((i, ln) for i, ln in enumerate(text.split("\n")) if ln.startswith("@rule \""))
    sid = re.match(r'@rule "([^"]+)"', ln).group(1)
    value = await hover_text(client, uri, i, utf16(ln[:ln.index('"') + 2]))
    book = re.search(r'^\s*rulebook "([^"]+)"', text, re.M)
    if book and (path.parent / book.group(1)).is_file():
        section = section_text((path.parent / book.group(1)).read_text(encoding="utf-8"), sid)
        assert section and section.split("\n")[0].startswith(f"## [{sid}]")
        assert section in value
    else:  # no rulebook here (a clone with nothing beside it), or none has the example's own ids
        assert "not found" in value and sid in value

    # 6. go to definition: a use of the variable jumps to its declaration's name
    uses = occurrences(text, var)
    decl = next((i, m.start(2)) for i, ln in enumerate(lines)
                for m in [re.match(r"(per player )?var (" + re.escape(var) + r")\b", ln)] if m)
    use = next(u for u in uses if u[0] > decl[0])
    locs = await client.text_document_definition_async(L.DefinitionParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=use[0], character=use[1] + 1)))
    assert [(x.uri, x.range.start.line, x.range.start.character) for x in locs] == [(uri, decl[0], decl[1])]

    # 7. rename the variable across the file: one edit on each use, nothing else; the result checks as before
    edit = await client.text_document_rename_async(L.RenameParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=use[0], character=use[1]),
        new_name=var + "_renamed"))
    edits = edit.changes[uri]
    assert list(edit.changes) == [uri]
    assert sorted((e.range.start.line, e.range.start.character) for e in edits) == uses
    assert all(e.new_text == var + "_renamed" and e.range.end.character - e.range.start.character == len(var)
               for e in edits)
    renamed = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, -e.range.start.character)):
        ln = renamed[e.range.start.line]
        renamed[e.range.start.line] = ln[:e.range.start.character] + e.new_text + ln[e.range.end.character:]
    renamed = "\n".join(renamed)
    diags = await change(client, uri, 4, renamed)
    assert [d for d in diags if d.severity == L.DiagnosticSeverity.Error] == []
    assert len(diags) == len(expected(path, text))

    if name == "station.rules":  # a record field: its declaration and each `x.keep` (rows give it by position)
        where = [(i, m.start()) for i, ln in enumerate(code_parts(renamed)) for m in re.finditer(r"\bkeep\b", ln)]
        assert len(where) == 2
        edit = await client.text_document_rename_async(L.RenameParams(
            text_document=L.TextDocumentIdentifier(uri=uri),
            position=L.Position(line=where[1][0], character=where[1][1]), new_name="kept"))
        assert sorted((e.range.start.line, e.range.start.character) for e in edit.changes[uri]) == where

    # 8. completion after '.' on a table row: its record's fields
    if "table " in text:
        row, record = first_row(text)
    else:  # the example has no record: the editing session adds one
        extra = "\nrecord LspProbe { across: int, down: int }\ntable lsp_probe_rows: LspProbe { lsp_probe_row(1, 2) }\n"
        text = text + extra
        await change(client, uri, 5, text)
        row, record = "lsp_probe_row", "LspProbe"
    typing = text + f"\nconst lsp_probe2 = {row}."
    client.text_document_did_change(L.DidChangeTextDocumentParams(
        text_document=L.VersionedTextDocumentIdentifier(uri=uri, version=6),
        content_changes=[L.TextDocumentContentChangeWholeDocument(text=typing)]))
    last = typing.split("\n")
    result = await client.text_document_completion_async(L.CompletionParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=len(last) - 1, character=len(last[-1])),
        context=L.CompletionContext(trigger_kind=L.CompletionTriggerKind.TriggerCharacter, trigger_character=".")))
    items = result.items if isinstance(result, L.CompletionList) else result
    assert sorted(x.label for x in items) == record_fields(text, record)
    close(client, uri)


@ASYNC
async def test_hover_type_outline_references_and_refused_renames(client: LanguageClient):
    path = GAMES / "examples" / "tictactoe.rules"
    text = path.read_text(encoding="utf-8")
    uri, _ = await open_doc(client, path)
    lines = text.split("\n")
    # the type of a name where it stands: marks is a map[node, player]
    i = next(i for i, ln in enumerate(lines) if ln.startswith("function owns"))
    value = await hover_text(client, uri, i, lines[i].index("marks[") + 1)
    assert "map[node, player]" in value and "var marks" in value
    # the outline: the file's declarations, by kind
    syms = await client.text_document_document_symbol_async(L.DocumentSymbolParams(
        text_document=L.TextDocumentIdentifier(uri=uri)))
    kinds = {(s.name, s.kind) for s in syms}
    assert {("marks", L.SymbolKind.Variable), ("place", L.SymbolKind.Method), ("owns", L.SymbolKind.Function),
            ("flow", L.SymbolKind.Module), ("board full", L.SymbolKind.Boolean), ("grid", L.SymbolKind.Object),
            ("winner", L.SymbolKind.Variable)} <= kinds
    # references of `winner`, declaration included: every use in the code
    j = next(i for i, ln in enumerate(lines) if ln.startswith("var winner"))
    refs = await client.text_document_references_async(L.ReferenceParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=j, character=5),
        context=L.ReferenceContext(include_declaration=True)))
    assert sorted((r.range.start.line, r.range.start.character) for r in refs) == occurrences(text, "winner")
    # completion: the names in scope here (the action's parameters, not the lambda's name elsewhere),
    # declarations, built-ins and keywords
    e = next(i for i, ln in enumerate(lines) if "marks[(r, c)] = me" in ln)
    result = await client.text_document_completion_async(L.CompletionParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=e, character=4)))
    labels = {x.label for x in (result.items if isinstance(result, L.CompletionList) else result)}
    assert {"r", "c", "marks", "winner", "owns", "grid", "count", "me", "players", "let", "offer"} <= labels
    assert "cell" not in labels and "p" not in labels
    # typing fast: only the text as it stands once typing stops is checked and shown (no diagnostics of a
    # text already replaced)
    client.diagnostics.pop(uri, None)
    for v, t in ((2, text + "\nconst a = nope1\n"), (3, text + "\nconst a = nope2\n"), (4, text)):
        client.text_document_did_change(L.DidChangeTextDocumentParams(
            text_document=L.VersionedTextDocumentIdentifier(uri=uri, version=v),
            content_changes=[L.TextDocumentContentChangeWholeDocument(text=t)]))
    assert got(await diagnostics(client, uri)) == expected(path, text)
    await asyncio.sleep(1.0)
    assert got(client.diagnostics[uri]) == expected(path, text)
    # a keyword and a built-in are never renamed; nor is a name renamed to a keyword or onto another name
    k = next(i for i, ln in enumerate(lines) if ln.strip().startswith("for p in players"))
    for char, word in ((lines[k].index("for") + 1, "keyword"), (lines[k].index("players") + 1, "built-in")):
        with pytest.raises(Exception, match=word):
            await client.text_document_prepare_rename_async(L.PrepareRenameParams(
                text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=k, character=char)))
    for new, why in (("let", "keyword"), ("count", "built-in"), ("marks", "already"), ("9x", "not a name")):
        with pytest.raises(Exception, match=why):
            await client.text_document_rename_async(L.RenameParams(
                text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=j, character=5),
                new_name=new))
    close(client, uri)


PATTERN_PARAMS = """game "Jumps" { players 2 }
const jumps = [(5, 0, 4, 1), (2, 3, 1, 1)]
var last: tuple[int, int] = (0, 0)
action jump((fr, fc, tr, tc) in jumps, k in 0..tr) {
  text "jump from {fr},{fc}"
  require fr > tr + k
  effect { last = (tr, tc + k) }
}
flow { repeat 2 times { for p in players { turn p { offer [jump] to p } } } }
"""


@ASYNC
async def test_hover_and_rename_of_a_name_of_an_action_parameters_pattern(client: LanguageClient, tmp_path):
    """docs/language.md, "Tuple patterns": a pattern's names in an action's parameter are parameters; a rename
    edits the pattern and every use (a later domain, the require, the effect)."""
    text = PATTERN_PARAMS
    uri, diags = await open_doc(client, tmp_path / "jumps.rules", text)
    assert got(diags) == ()
    lines = text.split("\n")
    value = await hover_text(client, uri, 5, lines[5].index("tr"))
    assert "tr (in (fr, fc, tr, tc), parameter of jump)" in value and "parameter: `int`" in value
    result = await client.text_document_completion_async(L.CompletionParams(  # in the effect: the names in scope
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=6, character=lines[6].index("last"))))
    labels = {x.label for x in (result.items if isinstance(result, L.CompletionList) else result)}
    assert {"fr", "fc", "tr", "tc", "k", "last", "jumps"} <= labels and not any(x.startswith("%") for x in labels)
    edit = await client.text_document_rename_async(L.RenameParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=3, character=lines[3].index("tr")),
        new_name="row"))
    edits = edit.changes[uri]
    want = sorted((i, m.start()) for i, ln in enumerate(lines) for m in re.finditer(r"\btr\b", ln))
    assert len(want) == 4 and sorted((e.range.start.line, e.range.start.character) for e in edits) == want
    renamed = lines[:]
    for e in sorted(edits, key=lambda e: (e.range.start.line, -e.range.start.character)):
        ln = renamed[e.range.start.line]
        renamed[e.range.start.line] = ln[:e.range.start.character] + e.new_text + ln[e.range.end.character:]
    renamed = "\n".join(renamed)
    assert "action jump((fr, fc, row, tc) in jumps, k in 0..row)" in renamed
    assert got(await change(client, uri, 2, renamed)) == ()
    a, b = (api.loads(t, name="jumps.rules").new_game(2, seed=0) for t in (text, renamed))
    assert [x.id for x in a.legal_actions()] == [x.id for x in b.legal_actions()] == [
        "jump(5,0,4,1,0)", "jump(2,3,1,1,0)"]  # fr > tr + k
    close(client, uri)


@ASYNC
async def test_extends_is_read_from_disk_next_to_the_document(client: LanguageClient, tmp_path):
    base = (GAMES / "examples" / "tictactoe.rules").read_text(encoding="utf-8")
    (tmp_path / "base.rules").write_text(base, encoding="utf-8")
    house = 'extends "base.rules"\n\nconst bonus = count(marks) + nope\n'
    uri, diags = await open_doc(client, tmp_path / "house.rules", house)
    assert got(diags) == expected(tmp_path / "house.rules", house)
    assert [(d.code, d.range.start.line, d.range.start.character) for d in diags if d.code == "E201"] == \
        [("E201", 2, house.split("\n")[2].index("nope"))]
    # `marks` is declared in the base file: definition jumps there
    locs = await client.text_document_definition_async(L.DefinitionParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=2, character=21)))
    bline = next(i for i, ln in enumerate(base.split("\n")) if ln.startswith("var marks"))
    assert [(L_.uri, L_.range.start.line, L_.range.start.character) for L_ in locs] == \
        [((tmp_path / "base.rules").as_uri(), bline, 4)]
    close(client, uri)
    # a problem in the base file is shown on the base file, where `rulelang check` puts it
    (tmp_path / "base.rules").write_text(base.replace("count(marks) == 9", "count(markz) == 9"), encoding="utf-8")
    base_uri = (tmp_path / "base.rules").as_uri()
    client.diagnostics.pop(base_uri, None)
    uri, diags = await open_doc(client, tmp_path / "house.rules", house)
    wrong = await diagnostics(client, base_uri)
    bline = next(i for i, ln in enumerate(base.split("\n")) if "count(marks) == 9" in ln)
    assert [(d.code, d.range.start.line, d.range.start.character) for d in wrong] == \
        [("E201", bline, base.split("\n")[bline].index("marks) == 9"))]
    close(client, uri)


@ASYNC
async def test_citations_found_through_the_rulebooks_setting(client: LanguageClient, tmp_path):
    """A file without a `rulebook` header: its citations are looked up in the folders of the setting."""
    books = tmp_path / "books"
    books.mkdir()
    (books / "mine.md").write_text("# My game\n\n## [Q-1] Setup\nEach player takes two tokens.\n\n"
                                   "## [Q-2] Turns\nPlayers take turns.\n", encoding="utf-8")
    client.workspace_did_change_configuration(L.DidChangeConfigurationParams(
        settings={"rulelang": {"rulebooks": [str(books)]}}))
    text = 'game "Q" { players 2 }\n@rule "Q-1"\nvar tokens: int = 2\nflow { end_game }\n'
    uri, _ = await open_doc(client, tmp_path / "q.rules", text)
    value = await hover_text(client, uri, 1, 8)
    assert "## [Q-1] Setup\nEach player takes two tokens." in value and "Q-2" not in value
    close(client, uri)


@ASYNC
async def test_formatting_goes_through_fmt(client: LanguageClient, tmp_path):
    fmt = pytest.importorskip("rulelang.fmt")  # written by the formatter's engineer: there once merged
    path = GAMES / "examples" / "tictactoe.rules"
    text = path.read_text(encoding="utf-8").replace("players 2\n", "players    2\n", 1)
    uri, _ = await open_doc(client, tmp_path / "t.rules", text)
    edits = await client.text_document_formatting_async(L.DocumentFormattingParams(
        text_document=L.TextDocumentIdentifier(uri=uri), options=L.FormattingOptions(tab_size=2, insert_spaces=True)))
    assert len(edits) == 1 and edits[0].new_text == fmt.format_text(text, str(tmp_path / "t.rules"))
    # a text that does not parse is not formatted: an error answer, the server goes on
    await change(client, uri, 2, text + "\naction {{{\n")
    with pytest.raises(Exception, match="syntax errors"):
        await client.text_document_formatting_async(L.DocumentFormattingParams(
            text_document=L.TextDocumentIdentifier(uri=uri), options=L.FormattingOptions(tab_size=2, insert_spaces=True)))
    close(client, uri)


@ASYNC
async def test_garbage_huge_documents_and_malformed_requests_never_stop_the_server(client: LanguageClient, tmp_path):
    garbage = bytes(range(256)).decode("latin-1") * 40 + "\ud800 \x00 {{{{ ((((" + "[" * 5000
    uri, diags = await open_doc(client, tmp_path / "garbage.rules", garbage)
    assert diags and all(d.severity == L.DiagnosticSeverity.Error for d in diags)
    deep = 'game "D" { players 2 }\nconst x = ' + "(" * 3000 + "1" + ")" * 3000 + "\nconst y = " + "-" * 3000 + "1\n"
    deep_path = tmp_path / "deep.rules"
    _, diags = await open_doc(client, deep_path, deep)
    assert got(diags) == expected(deep_path, deep) and diags  # nested too deeply: said, as `check` says it
    huge = "# x\n" * 400_000  # 1.6 MB: over the 1 MB bound of `rulelang check`
    uri2, diags = await open_doc(client, tmp_path / "huge.rules", huge)
    assert [d.code for d in diags] == ["E010"]
    for u in (uri, uri2, (tmp_path / "never-opened.rules").as_uri()):
        for line, char in ((0, 0), (10**6, 10**6)):
            assert await client.text_document_hover_async(L.HoverParams(
                text_document=L.TextDocumentIdentifier(uri=u), position=L.Position(line=line, character=char))) is None
            await client.text_document_completion_async(L.CompletionParams(
                text_document=L.TextDocumentIdentifier(uri=u), position=L.Position(line=line, character=char)))
            await client.text_document_document_symbol_async(L.DocumentSymbolParams(
                text_document=L.TextDocumentIdentifier(uri=u)))
    # requests whose parameters are not what the protocol says, and bytes that are not JSON at all: written
    # to the server as they are (the client would refuse to send them); each gets an error answer or is
    # dropped, and the server goes on
    server = client._server
    bodies = [json.dumps({"jsonrpc": "2.0", "id": 90001 + i, "method": "textDocument/hover", "params": p}).encode()
              for i, p in enumerate(({"textDocument": 5}, [1, 2], {"textDocument": {"uri": uri},
                                                                 "position": {"line": -1, "character": "x"}}))]
    bodies += [b"{not json", json.dumps({"jsonrpc": "2.0", "id": 90010, "method": "rulelang/nothing"}).encode()]
    for body in bodies:
        server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    await server.stdin.drain()
    close(client, uri)
    close(client, uri2)
    # still answering
    path = GAMES / "examples" / "tictactoe.rules"
    uri3, diags = await open_doc(client, path)
    assert got(diags) == expected(path, path.read_text(encoding="utf-8"))
    close(client, uri3)


def test_without_the_extra_the_command_says_what_to_install():
    code = ("import sys; sys.modules['pygls'] = None; sys.modules['pygls.lsp'] = None\n"
            "from rulelang.cli import main\nmain(['lsp'])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "rulelang: the language server needs the optional extra 'lsp': pip install 'rulelang[lsp]' "
        "(pygls is not installed)"]
    assert "Traceback" not in r.stderr and json  # noqa: B015


# ------------------------------------------------------------------------------ heavy documents (issue 31.8)

def heavy_text(marker: str, size: int = 900_000) -> str:
    """A valid game of about ``size`` bytes (a chain of triggers: seconds of CPU to check and index), with
    one unknown name, ``marker``, on its last line (an E201 that tells which text was checked)."""
    head = 'game "Heavy" { players 2 }\nper player var vp: int\nvar stage: int = 0\n'
    tail = ('action shout { effect { emit e0(me)  stage += 1 } }\n'
            'flow { loop { for p in players { turn p { offer [shout] to p } } } }\n'
            'ending "done" when any(players, p => vp[p] >= 3)\nscore p = vp[p]\n'
            f"const lsp_marker = {marker}\n")
    per = len("event e00000(p: player)\nwhen e00000(p) then { vp[p] += 1  emit e00001(p) }\n")
    n = (size - len(head) - len(tail)) // per
    body = "".join(f"event e{i}(p: player)\n" for i in range(n + 1))
    body += "".join(f"when e{i}(p) then {{ vp[p] += 1  emit e{i + 1}(p) }}\n" for i in range(n))
    return head + body + tail


def server_cpu(client) -> float:
    """Seconds of CPU time the server process has used (user and system), from /proc."""
    with open(f"/proc/{client._server.pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Recorded(dict):
    """client.diagnostics that also keeps every publication, in order: (uri, diagnostics)."""

    def __init__(self, *a):
        super().__init__(*a)
        self.log = []

    def __setitem__(self, uri, diags):
        self.log.append((uri, diags))
        super().__setitem__(uri, diags)


def markers(diags):
    return [m.group(1) for d in diags if d.code == "E201" for m in [re.search(r"'(\w+)'", d.message)] if m]


async def until(test, what, timeout=TIMEOUT):
    """Wait (polling) until test() holds; fail after ``timeout`` seconds, a back-stop for a hang."""
    async def wait():
        while not test():
            await asyncio.sleep(0.02)
    try:
        await asyncio.wait_for(wait(), timeout)
    except asyncio.TimeoutError:
        pytest.fail(f"gave up waiting: {what}")


@pytest.mark.slow  # tens of seconds of CPU on a loaded machine: run by `pytest -m slow` (.ci/run does)
@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads the server's CPU time from /proc")
@ASYNC
async def test_a_heavy_document_never_holds_up_the_others(client: LanguageClient, tmp_path):
    """One heavy document (seconds of CPU to check) and a small one: the small one's diagnostics arrive while
    the heavy one is still being checked; hover answers from the last good index while the heavy one is
    checked again; a newer text of the heavy document stops the check of the older one (the server spends
    less CPU than two checks; only the newest text's diagnostics are ever published)."""
    heavy_path, small_path = tmp_path / "heavy.rules", tmp_path / "small.rules"
    heavy_uri, small_uri = heavy_path.as_uri(), small_path.as_uri()
    small = (GAMES / "examples" / "tictactoe.rules").read_text(encoding="utf-8") + "\nconst q = small_marker\n"
    saved = client.diagnostics
    client.diagnostics = rec = Recorded(saved)
    try:
        for uri in (heavy_uri, small_uri):
            rec.pop(uri, None)
        # 1. the heavy document opened first, then the small one: the small one is answered first
        cpu0 = server_cpu(client)
        client.text_document_did_open(L.DidOpenTextDocumentParams(text_document=L.TextDocumentItem(
            uri=heavy_uri, language_id="rules", version=1, text=heavy_text("first_marker"))))
        client.text_document_did_open(L.DidOpenTextDocumentParams(text_document=L.TextDocumentItem(
            uri=small_uri, language_id="rules", version=1, text=small)))
        assert markers(await diagnostics(client, small_uri)) == ["small_marker"]
        assert heavy_uri not in rec  # still being checked
        assert markers(await diagnostics(client, heavy_uri)) == ["first_marker"]
        # hover on `stage` (line 3) waits for the heavy text's index: there is no older one
        assert "var stage" in await hover_text(client, heavy_uri, 2, 5)
        one_check = server_cpu(client) - cpu0  # CPU of one heavy check and its index (the small one's is noise)
        assert one_check > 1.0, one_check  # heavy indeed: the orderings below mean something

        # 2. a new text: checked again; hover meanwhile answers from the last good index
        start = len(rec.log)
        cpu1 = server_cpu(client)
        client.text_document_did_change(L.DidChangeTextDocumentParams(
            text_document=L.VersionedTextDocumentIdentifier(uri=heavy_uri, version=2),
            content_changes=[L.TextDocumentContentChangeWholeDocument(text=heavy_text("second_marker"))]))
        await until(lambda: server_cpu(client) - cpu1 > 0.2 * one_check, "the check of the second text to run")
        assert "var stage" in await hover_text(client, heavy_uri, 2, 5)
        assert not [u for u, _ in rec.log[start:] if u == heavy_uri]  # answered while the check runs

        # 3. a newer text while that check runs: it is stopped; only the newest text's diagnostics are published
        client.text_document_did_change(L.DidChangeTextDocumentParams(
            text_document=L.VersionedTextDocumentIdentifier(uri=heavy_uri, version=3),
            content_changes=[L.TextDocumentContentChangeWholeDocument(text=heavy_text("third_marker"))]))
        await until(lambda: any(u == heavy_uri for u, _ in rec.log[start:]), "the third text's diagnostics")
        assert "var stage" in await hover_text(client, heavy_uri, 2, 5)  # (waits for the third text's index)
        spent = server_cpu(client) - cpu1
        published = [markers(ds) for u, ds in rec.log[start:] if u == heavy_uri]
        assert published == [["third_marker"]]
        assert spent < 1.7 * one_check, (spent, one_check)  # not two whole checks: the second was stopped
        # the small document was never held up, and is still answered
        assert markers(rec[small_uri]) == ["small_marker"]
        await asyncio.sleep(1.0)
        assert [markers(ds) for u, ds in rec.log[start:] if u == heavy_uri] == [["third_marker"]]
    finally:
        client.diagnostics = saved
        close(client, heavy_uri)
        close(client, small_uri)


@ASYNC
async def test_a_check_past_its_cpu_bound_is_stopped_and_says_so(tmp_path):
    """A server started with a CPU bound of 0.5 s per check (the initialization option max_check_cpu): the
    heavy document's check is stopped, the document gets one note saying so, and the server goes on
    checking other documents."""
    config = ClientServerConfig(server_command=[sys.executable, "-m", "rulelang", "lsp"],
                                server_env={**os.environ, "RULELANG_NO_CACHE": "1"})
    other = await config.start()
    try:
        await other.initialize_session(L.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=ROOT.as_uri(),
            initialization_options={"max_check_cpu": 0.5}))
        heavy_uri = (tmp_path / "heavy.rules").as_uri()
        cpu0 = server_cpu(other)
        other.text_document_did_open(L.DidOpenTextDocumentParams(text_document=L.TextDocumentItem(
            uri=heavy_uri, language_id="rules", version=1, text=heavy_text("never_shown"))))
        [note] = await diagnostics(other, heavy_uri)
        assert note.severity == L.DiagnosticSeverity.Information and note.code is None
        assert "stopped after 0.5 s of CPU time" in note.message and note.range.start.line == 0
        assert server_cpu(other) - cpu0 < 5.0  # the check did not run to its end (several seconds of CPU)
        path = GAMES / "examples" / "tictactoe.rules"
        uri, diags = await open_doc(other, path)
        assert got(diags) == expected(path, path.read_text(encoding="utf-8"))
    finally:
        await other.shutdown_session()


def test_columns_are_converted_line_by_line_as_one_character_at_a_time():
    """_Columns (the conversion of many diagnostics' columns on one line, each line's table made once)
    gives what converting each prefix gives, in every encoding, on ASCII and on astral text."""
    from rulelang.lsp import _Columns, _units

    lines = ["plain ascii line", "größe \U0001F600 x \U0001F600\U0001F600 é", "", "\U0001F600"]
    for enc in (L.PositionEncodingKind.Utf16, L.PositionEncodingKind.Utf8, L.PositionEncodingKind.Utf32):
        cols = _Columns(lines, enc)
        for i, text in enumerate(lines):
            for c in range(len(text) + 1):
                assert cols.units(i, c) == _units(text[:c], enc), (enc, i, c)

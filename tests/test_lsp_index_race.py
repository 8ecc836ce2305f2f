"""The language server keeps the newest symbol index there is (rulelang/lsp.py, RulesServer.stale and
_finished): a check whose diagnostics are out is left to finish its index when the text changes again,
and a completion waits for that index. Two races lost it: the next keystroke stopped such a check, and,
when the next text did not parse (a name typed up to its dot), that text's quick check finished first
and the older check's index was then dropped as out of date, so a completion typed right after an edit
that added a record did not know the record (a rare failure of tests/test_lsp.py on a loaded machine;
this test failed 4 times in 4 before the second fix). Here the server's index is made slow on purpose
(two seconds' sleep in the server process), so both races are taken every time."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types as L  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ASYNC = pytest.mark.asyncio(loop_scope="module")
SLOW_INDEX = ("import time, rulelang.symbols as S\n"
              "made = S.build_index\n"
              "def slow(*args, **kws):\n"
              "    time.sleep(2.0)\n"
              "    return made(*args, **kws)\n"
              "S.build_index = slow\n"
              "from rulelang.cli import cli\n"
              "cli(['lsp'])\n")

BASE = '''game "Probe" { players 2 }
var total: int = 0
action add_one { effect { total += 1 } }
flow { loop { for p in players { turn p { offer [add_one] to p } } } }
ending "full" when total >= 3
score p = total
'''
ADDED = BASE + "record Cell { across: int, down: int }\ntable cells: Cell { corner(1, 2) }\n"


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-c", SLOW_INDEX],
    server_env={**os.environ, "RULELANG_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(L.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=ROOT.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def published(client, uri):
    import asyncio

    async def wait():
        while uri not in client.diagnostics:
            await asyncio.sleep(0.02)
        return client.diagnostics[uri]
    return await asyncio.wait_for(wait(), 120)


def change(client, uri, version, text):
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(L.DidChangeTextDocumentParams(
        text_document=L.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[L.TextDocumentContentChangeWholeDocument(text=text)]))


@ASYNC
async def test_a_completion_right_after_an_edit_knows_what_the_edit_added(client: LanguageClient, tmp_path_factory):
    path = tmp_path_factory.mktemp("lsp") / "probe.rules"
    path.write_text(BASE, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(L.DidOpenTextDocumentParams(text_document=L.TextDocumentItem(
        uri=uri, language_id="rules", version=1, text=BASE)))
    await published(client, uri)
    change(client, uri, 2, ADDED)
    assert list(await published(client, uri)) == []  # the record checks: its diagnostics are out, its index is coming
    typing = ADDED + "const probe = corner."
    change(client, uri, 3, typing)  # the next keystroke, at once
    last = typing.split("\n")
    result = await client.text_document_completion_async(L.CompletionParams(
        text_document=L.TextDocumentIdentifier(uri=uri), position=L.Position(line=len(last) - 1, character=len(last[-1])),
        context=L.CompletionContext(trigger_kind=L.CompletionTriggerKind.TriggerCharacter, trigger_character=".")))
    items = result.items if isinstance(result, L.CompletionList) else result
    assert sorted(x.label for x in items) == ["across", "down"]

"""`rulelang lsp`: the language server (Language Server Protocol over stdio, on pygls).

Needs the optional extra ``lsp`` (``pip install 'rulelang[lsp]'``). Features (docs/authoring.md,
"Language server"):

- diagnostics as you type: the codes, severities and positions of `rulelang check`, warnings included
  (symbols.analyse gives exactly `api.check`'s list); a file that `extends` another reads it from disk
  relative to the document; a problem in such a base file is published for that file;
- hover: the type of a name where it stands and how it is declared (with the comment above the
  declaration); a built-in's signature and doc (library.py); for a citation `@rule "S-7"`, the text of
  that rulebook section (lsp_rulebook.py says where rulebooks are looked for);
- go to definition, find references, rename (a local, parameter, variable, constant, function,
  procedure, phase, action, event, enum and member, record and field, table and row, board and node,
  piece, variant; never a keyword or a built-in), completion (names in scope, built-ins, keywords; a
  record's or piece's fields after `.`), the outline (document symbols), and formatting through
  `rulelang.fmt.format_text` when that module is there.

Checks run in threads of their own, one per document at a time, so that requests are answered and other
documents are checked while a check runs, and a check can be stopped. After an edit the server waits
``DEBOUNCE`` seconds of quiet before checking; the check of an older text of the same document is stopped
as soon as the newer text arrives (its diagnostics are never published: the newest text wins). A check
that runs more than ``MAX_CHECK_CPU`` seconds of CPU time is stopped too, and says so. Hover, definition,
references, the outline and completion answer from the newest symbol index there is while a check runs
(waiting at most ``GRACE`` seconds for the current one); rename waits for the current text's. Other bounds
are those of `rulelang check` (a text over 1 MB is refused with E010; nesting and work are bounded by the
checker and its lints, in proportion to the file), and every handler turns an unexpected failure into an
empty answer: no document or request stops the server.
"""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import re
import sys
import threading
import time
from typing import Any, Awaitable, Callable, Literal, Optional, Union

from lsprotocol import types as L
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from . import symbols as S
from .ast import Span
from .diagnostics import ERROR, WARNING, Diagnostic, printable
from .library import BOARD_GENERATORS, FUNCTIONS, SCENARIO_VALUES, VALUES
from .lsp_rulebook import find_section
from .program import MAX_FILE_BYTES

_format_text: Optional[Callable[[str, str], str]]  # (text, path) -> the formatted text; None: no formatter
try:  # formatting: the formatter's module, when this installation has it
    from .fmt import format_text as _format_text
except ImportError:  # pragma: no cover - depends on the checkout
    _format_text = None

DEBOUNCE = 0.3  # seconds of quiet after an edit before the text is checked
MAX_WAIT = 60.0  # seconds a request waits for the check of the current text (then: the last check)
INDEX_WAIT = 10.0  # seconds a completion waits for the index of a text whose diagnostics are out
GRACE = 0.5  # seconds hover, definition, references and the outline wait for the current text's index
MAX_CHECK_CPU = 60.0  # seconds of CPU time one check may take (a 1 MB file takes about 10); then it is stopped
WATCH_EVERY = 0.25  # seconds between two looks at the running checks (CPU time, stopped ones)
MAX_LINE = 20_000  # characters of one line looked at for a citation or a completion

log = logging.getLogger("rulelang.lsp")
_Handler = Callable[["RulesServer", Any], Awaitable[Any]]  # a request's handler: (server, params) -> answer


class RequestFailed(JsonRpcException):
    """An answer the client shows as an error (LSP's RequestFailed): a refused rename."""
    CODE = -32803

    def __init__(self, message: str):
        super().__init__(code=self.CODE, message=message)


# ------------------------------------------------------------------------------------------- positions

def _units(text: str, encoding: str) -> int:
    if encoding == L.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == L.PositionEncodingKind.Utf32:
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


class _Columns:
    """Columns in characters as the client's units, on the lines of one text: each line's table is made once,
    when first asked (a text on one long line with thousands of diagnostics is converted in time in
    proportion to the line, not to the line times the diagnostics)."""

    def __init__(self, lines: list[str], encoding: str) -> None:
        self.lines, self.encoding = lines, encoding
        # line -> True (a character is a unit), or the units before each character
        self.tables: dict[int, Union[Literal[True], list[int]]] = {}

    def units(self, line0: int, col0: int) -> int:
        t = self.tables.get(line0)
        if t is None:
            text = self.lines[line0]
            if text.isascii() or self.encoding == L.PositionEncodingKind.Utf32:
                t = True  # a character is a unit
            else:
                t = [0]
                for c in text:
                    t.append(t[-1] + _units(c, self.encoding))
            self.tables[line0] = t
        return col0 if t is True else t[col0]


def to_client(lines: list[str], line: int, column: int, encoding: str, cols: Optional[_Columns] = None
              ) -> L.Position:
    """Our 1-based line and column (in characters) as an LSP position (0-based, in the client's units)."""
    line0 = max(0, line - 1)
    if line0 >= len(lines):
        return L.Position(line=max(0, len(lines) - 1), character=_units(lines[-1], encoding) if lines else 0)
    text = lines[line0]
    col0 = min(max(0, column - 1), len(text))
    return L.Position(line=line0, character=cols.units(line0, col0) if cols is not None
                      else _units(text[:col0], encoding))


def from_client(lines: list[str], pos: L.Position, encoding: str) -> tuple[int, int]:
    """An LSP position as our 1-based (line, column in characters), clamped to the text."""
    line0 = min(max(0, pos.line), max(0, len(lines) - 1))
    text = lines[line0] if lines else ""
    want = max(0, pos.character)
    if encoding == L.PositionEncodingKind.Utf32:
        return line0 + 1, min(want, len(text)) + 1
    n = 0
    for i, c in enumerate(text):
        if n >= want:
            return line0 + 1, i + 1
        n += _units(c, encoding)
    return line0 + 1, len(text) + 1


def span_range(lines: list[str], span: Span, encoding: str, cols: Optional[_Columns] = None) -> L.Range:
    start = to_client(lines, span.line, span.column, encoding, cols)
    end_line, end_col = span.end_line or span.line, span.end_column or span.column + 1
    if (end_line, end_col) <= (span.line, span.column):
        end_line, end_col = span.line, span.column + 1
    end = to_client(lines, end_line, end_col, encoding, cols)
    return L.Range(start=start, end=end)


def _lines(text: str) -> list[str]:
    return text.split("\n")


# ------------------------------------------------------------------------------------------- documents

class Doc:
    def __init__(self, uri: str, text: str, version: int) -> None:
        self.uri = uri
        self.path = _path_of(uri)
        self.text = text
        self.version = version
        self.analysis: Optional[S.Analysis] = None  # the newest finished check (of some version)
        self.analysed = -1  # its version
        self.good: Optional[S.Analysis] = None  # the newest check that has a symbol index
        self.good_version = -1  # the version of the text it checked
        self.check: Optional[_Check] = None  # the newest _Check started (running or finished)
        self.debounce: Optional[asyncio.Future[None]] = None  # the task waiting for quiet after an edit
        self.published: set[str] = set()  # URIs we published diagnostics for (this file and its base files)
        self.shown = -1  # the version whose diagnostics were published
        self.closed = False


class _Stopped(BaseException):
    """Raised inside a check's thread to stop it (a BaseException: the checker's `except Exception` lets it
    through)."""


def _raise_in(thread_id: int) -> bool:
    """Raise _Stopped in the thread at its next Python instruction (CPython's PyThreadState_SetAsyncExc)."""
    try:
        n = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(_Stopped))
    except Exception:  # noqa: BLE001 - not CPython: the check runs to its end and is dropped
        return False
    return n == 1


class _Check:
    """One check of one text of a document, in a thread of its own, that can be stopped (``stop``) and whose
    CPU time can be read (``cpu``). ``future`` (of the server's loop) gets the Analysis, or None when the
    check failed or was stopped."""

    def __init__(self, server: RulesServer, doc: Doc) -> None:
        self.server = server
        self.doc = doc
        self.version = doc.version
        self.text = doc.text
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future[Optional[S.Analysis]] = self.loop.create_future()
        self.lock = threading.Lock()
        self.running = False  # in the analysis (where _Stopped may be raised)
        self.finished = False
        self.stopped: Optional[str] = None  # why it was stopped: "stale", "closed", "cpu"
        self.raised = 0.0  # when _Stopped was last raised in it (monotonic)
        self.indexing = False  # its diagnostics are published: only the symbol index is being made
        self.thread = threading.Thread(target=self._run, name="rulelang-check", daemon=True)

    def start(self) -> _Check:
        self.thread.start()
        return self

    def _early(self, diags: list[Diagnostic]) -> bool:
        # in the check's thread: publish now, index after (if still wanted)
        if self.stopped or self.doc.closed or self.doc.version != self.version:
            return False
        self.loop.call_soon_threadsafe(self.server._early, self, diags)
        return True

    def _run(self) -> None:
        an: Optional[S.Analysis] = None
        ran = False
        while True:
            try:
                if not ran:
                    ran = True
                    with self.lock:
                        self.running = not self.stopped
                    if self.running:
                        an = _safe_analyse(self.doc.path, self.text, self._early)
                with self.lock:
                    self.running = False
                    self.finished = True
                self.loop.call_soon_threadsafe(self.server._finished, self, an)
                return
            except _Stopped:  # stopped: drop what there is; loop to finish (a second raise lands here too)
                an = None
            except RuntimeError:  # the loop is closed: the server is going away
                return

    def stop(self, why: str) -> None:
        """Stop the check (its result, if any, is dropped)."""
        with self.lock:
            if self.stopped is None:
                self.stopped = why
            if self.running and not self.finished and self.thread.ident is not None:
                self.raised = time.monotonic()
                _raise_in(self.thread.ident)

    def cpu(self) -> float:
        """Seconds of CPU time the check's thread has used (0 when it cannot be read)."""
        try:
            assert self.thread.ident is not None  # (a thread not started has none: the except answers 0)
            return time.clock_gettime(time.pthread_getcpuclockid(self.thread.ident))
        except Exception:  # noqa: BLE001 - a platform without thread clocks, or the thread has ended
            return 0.0


def _path_of(uri: str) -> str:
    try:
        if uri.startswith("file:"):
            p = to_fs_path(uri)
            if p:
                return p
    except Exception:  # noqa: BLE001 - an odd URI: named by itself (extends then reads from the working folder)
        pass
    return uri


def _uri_of(path: str, doc: Doc) -> str:
    if path == doc.path:
        return doc.uri
    try:
        return from_fs_path(os.path.abspath(path)) or path
    except Exception:  # noqa: BLE001
        return path


def _safe_analyse(path: str, text: str, early: Optional[Callable[[list[Diagnostic]], bool]] = None
                  ) -> Optional[S.Analysis]:
    try:
        return S.analyse(path, text, on_diagnostics=early)
    except Exception as exc:  # noqa: BLE001 - never lose the server to a check that failed
        log.error("the check of %s failed: %s: %s", printable(path), type(exc).__name__, exc)
        return None


# ------------------------------------------------------------------------------------------- the server

class RulesServer(LanguageServer):
    def __init__(self) -> None:
        from . import __version__

        super().__init__("rulelang", __version__, text_document_sync_kind=L.TextDocumentSyncKind.Full)
        self.docs: dict[str, Doc] = {}
        self.running: set[_Check] = set()  # the _Checks whose threads run
        self.max_check_cpu = MAX_CHECK_CPU  # seconds (the initialization option max_check_cpu)
        self.watcher: Optional[asyncio.Future[None]] = None  # the task watching them
        self.rulebooks: list[str] = []  # the `rulebooks` setting: folders

    @property
    def encoding(self) -> str:
        try:
            return self.workspace.position_encoding or L.PositionEncodingKind.Utf16
        except Exception:  # noqa: BLE001
            return L.PositionEncodingKind.Utf16

    # -- checking
    def ensure(self, doc: Doc) -> asyncio.Future[Optional[S.Analysis]]:
        """The future of the check of the document's current text (started now if needed); a check of an
        older text still running is stopped."""
        chk = doc.check
        if chk is not None and chk.version == doc.version and chk.stopped in (None, "cpu"):
            return chk.future  # (a text whose check took too long is not checked again until it changes)
        if chk is not None and not chk.future.done() and not chk.indexing:
            chk.stop("stale")
        doc.check = _Check(self, doc).start()
        self.running.add(doc.check)
        self._watch()
        return doc.check.future

    def stale(self, doc: Doc, why: str = "stale") -> None:
        """The document's text changed (or it was closed): stop its check of an older text now, unless that
        check is only making its symbol index (the index of a text one edit old is still worth having: a
        completion typed right after an edit that added a name must know the name)."""
        chk = doc.check
        if chk is None or chk.future.done() or (chk.version == doc.version and why == "stale"):
            return
        if why == "stale" and chk.indexing:
            return  # its diagnostics are out: let it make its index (completion and hover use the newest one)
        chk.stop(why)

    def _early(self, chk: _Check, diags: list[Diagnostic]) -> None:
        doc = chk.doc
        if chk.version == doc.version and not doc.closed and doc.shown != chk.version and chk.stopped is None:
            chk.indexing = True
            doc.shown = chk.version
            self.publish(doc, S.Analysis(doc.path, chk.text, diags, None), chk.version)

    def _finished(self, chk: _Check, an: Optional[S.Analysis]) -> None:
        self.running.discard(chk)
        doc = chk.doc
        if not chk.future.done():
            chk.future.set_result(an if chk.stopped is None else None)
        if chk.stopped == "cpu" and chk.version == doc.version and not doc.closed:
            log.warning("the check of %s was stopped after %g s of CPU time", printable(doc.path), self.max_check_cpu)
            if doc.shown != chk.version:
                doc.shown = chk.version
                self.publish_stopped(doc)
            return
        if chk.stopped is not None or an is None or doc.closed:
            return
        if an.index is not None and chk.version > doc.good_version:
            # the newest index there is, even when a newer text (one that does not parse, say: a name typed
            # up to its dot) was checked first: completion and hover answer from it
            doc.good, doc.good_version = an, chk.version
        if chk.version < doc.analysed:
            return
        doc.analysis, doc.analysed = an, chk.version
        if chk.version == doc.version and doc.shown != chk.version:  # a check of an older text is never shown
            doc.shown = chk.version
            self.publish(doc, an, chk.version)

    def _watch(self) -> None:
        if self.watcher is None or self.watcher.done():
            self.watcher = asyncio.ensure_future(self._watching())

    async def _watching(self) -> None:
        """While checks run: stop one past MAX_CHECK_CPU; raise _Stopped again in a stopped one still
        running (once a second); settle the future of a check whose thread ended without a word."""
        while self.running:
            await asyncio.sleep(WATCH_EVERY)
            now = time.monotonic()
            for chk in list(self.running):
                if chk.stopped is None and chk.cpu() > self.max_check_cpu:
                    chk.stop("cpu")
                elif chk.stopped is not None and now - chk.raised > 1.0:
                    chk.stop(chk.stopped)
                if not chk.thread.is_alive() and chk.thread.ident is not None:
                    await asyncio.sleep(0)  # its _finished may be queued: let it run first
                    if chk in self.running:
                        self._finished(chk, None)

    def publish(self, doc: Doc, an: S.Analysis, version: int) -> None:
        """Publish the diagnostics of ``an``, the check of the document's text of ``version``."""
        by_uri: dict[str, list[L.Diagnostic]] = {doc.uri: []}
        lines = _lines(an.text)
        # (and per line quoted by a base file's diagnostic: (path, line) -> its columns)
        cols: dict[Union[str, tuple[str, int]], _Columns] = {doc.path: _Columns(lines, self.encoding)}
        for d in an.diagnostics:
            uri = _uri_of(d.path, doc)
            by_uri.setdefault(uri, []).append(self.diagnostic(d, lines if d.path == doc.path else None, cols))
        for uri in doc.published - set(by_uri):
            by_uri[uri] = []
        doc.published = {u for u, ds in by_uri.items() if ds} | {doc.uri}
        for uri, ds in by_uri.items():
            self.text_document_publish_diagnostics(L.PublishDiagnosticsParams(
                uri=uri, diagnostics=ds, version=version if uri == doc.uri else None))

    def diagnostic(self, d: Diagnostic, lines: Optional[list[str]],
                   cols: Optional[dict[Union[str, tuple[str, int]], _Columns]] = None) -> L.Diagnostic:
        sev = {ERROR: L.DiagnosticSeverity.Error, WARNING: L.DiagnosticSeverity.Warning}.get(
            d.severity, L.DiagnosticSeverity.Information)
        message = printable(d.message) + (f"\nhint: {printable(d.hint)}" if d.hint else "")
        span = S.A.Span(d.path, d.line, d.column, d.end_line or d.line, d.end_column or d.column + 1)
        if lines is None:  # another file (a base file): its line as the diagnostic quotes it
            src = d.source_line
            end_col = span.end_column if span.end_line == span.line and span.end_column > span.column \
                else len(src) + 1
            quoted = cols.setdefault((d.path, d.line), _Columns([src], self.encoding)) if cols is not None \
                else _Columns([src], self.encoding)
            start, end = (min(max(0, c - 1), len(src)) for c in (d.column, end_col))
            rng = L.Range(start=L.Position(line=d.line - 1, character=quoted.units(0, start)),
                          end=L.Position(line=d.line - 1, character=quoted.units(0, end)))
        else:
            rng = span_range(lines, span, self.encoding, cols.get(d.path) if cols is not None else None)
        return L.Diagnostic(range=rng, message=message, severity=sev, code=d.code, source="rulelang")

    def publish_stopped(self, doc: Doc) -> None:
        """In place of the diagnostics of a text whose check took too long: one note saying so."""
        span = S.A.Span(doc.path, 1, 1, 1, 1)
        lines = _lines(doc.text)
        self.text_document_publish_diagnostics(L.PublishDiagnosticsParams(uri=doc.uri, version=doc.version, diagnostics=[
            L.Diagnostic(range=span_range(lines, span, self.encoding), severity=L.DiagnosticSeverity.Information,
                         source="rulelang",
                         message=f"the check of this text was stopped after {self.max_check_cpu:g} s of CPU time; "
                                 "`rulelang check` checks the saved file without this bound")]))
        doc.published |= {doc.uri}

    async def current(self, doc: Doc, wait: float = MAX_WAIT) -> Optional[S.Analysis]:
        """The check of the current text (waiting at most ``wait`` seconds for it, following the text if it
        changes meanwhile), or the newest one there is."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not doc.closed:
            version = doc.version
            left = deadline - loop.time()
            if left <= 0:
                break
            try:
                await asyncio.wait_for(asyncio.shield(self.ensure(doc)), left)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001
                break
            if doc.version == version:
                break
        return doc.analysis

    async def index_for(self, doc: Doc, current_only: bool = False
                        ) -> tuple[Optional[S.SymbolIndex], Optional[S.Analysis]]:
        """(index, analysis) for requests: the current text's; else (unless ``current_only``) the newest
        there is, after waiting at most GRACE seconds for the current one (a check of a big file takes
        seconds: hover, definition and the outline answer from the last good index meanwhile)."""
        ready = doc.analysis is not None and doc.analysis.index is not None and doc.analysed == doc.version
        if not ready:
            await self.current(doc, MAX_WAIT if current_only or doc.good is None else GRACE)
        an = doc.analysis
        if an is not None and an.index is not None and doc.analysed == doc.version:
            return an.index, an
        if current_only:
            return None, an
        good = doc.good
        return (good.index, good) if good is not None else (None, an)

    def doc(self, uri: str) -> Optional[Doc]:
        d = self.docs.get(uri)
        if d is None or len(d.text) > MAX_FILE_BYTES:
            return None
        return d

    def position(self, doc: Doc, pos: L.Position) -> tuple[int, int]:
        return from_client(_lines(doc.text), pos, self.encoding)

    def location(self, span: Span, doc: Doc, an: Optional[S.Analysis]) -> L.Location:
        lines = self._lines_of(span.path, doc, an)
        return L.Location(uri=_uri_of(span.path, doc), range=span_range(lines, span, self.encoding))

    def _lines_of(self, path: str, doc: Doc, an: Optional[S.Analysis]) -> list[str]:
        if an is not None and an.index is not None and path in an.index.sources:
            return an.index.sources[path].lines
        return _lines(doc.text)


def _md_code(text: str) -> str:
    return f"```rules\n{text}\n```"


def _builtin_hover(name: str, here: str) -> str:
    if name in FUNCTIONS:
        b = FUNCTIONS[name]
        if b.min_args == b.max_args:
            n = f"{b.min_args} argument{'s' if b.min_args != 1 else ''}"
        elif b.max_args == -1:
            n = f"{b.min_args} or more arguments"
        else:
            n = f"{b.min_args} to {b.max_args} arguments"
        opts = f"; options: {', '.join(k + ':' for k in b.kwargs)}" if b.kwargs else ""
        m = re.match(r"\w+\((?:[^()]|\([^()]*\))*\)", b.doc)
        head = m.group() if m and m.group().startswith(name + "(") else f"{name}(...)"
        out = [_md_code(head + (f"  # -> {here}" if here else "")), f"built-in function ({n}{opts})", "", b.doc]
        return "\n".join(out)
    if name in VALUES or name in SCENARIO_VALUES:
        t, doc = VALUES.get(name) or SCENARIO_VALUES[name]
        where = "built-in value" if name in VALUES else "built-in value (scenarios only)"
        return "\n".join([_md_code(f"{name}: {t}"), where, "", doc])
    if name in BOARD_GENERATORS:
        return "\n".join([_md_code(f"{name}(...)"), "board generator", "", BOARD_GENERATORS[name][3]])
    return _md_code(name)


_KIND_WORD = {"param": "parameter", "local": "local", "member": "enum member", "row": "table row",
              "node": "board node", "field": "field"}


def _symbol_hover(ref: S.Reference, an: Optional[S.Analysis]) -> str:
    sym = ref.symbol
    ty = ref.type or sym.type
    lines = [_md_code(printable(sym.detail or sym.name))]
    what = _KIND_WORD.get(sym.kind, sym.kind)
    info = what
    if ty and ty not in ("none",):
        info += f": `{ty}`" + (" here" if ref.type and sym.kind not in ("var", "const", "table") else "")
    lines.append(info)
    if sym.doc:
        lines += ["", printable(sym.doc)]
    if sym.span is not None and an is not None and sym.span.path != an.path:
        lines += ["", f"declared in {os.path.basename(sym.span.path)}:{sym.span.line}"]
    return "\n".join(lines)


_SYMBOL_KIND = {
    "const": L.SymbolKind.Constant, "var": L.SymbolKind.Variable, "enum": L.SymbolKind.Enum,
    "member": L.SymbolKind.EnumMember, "record": L.SymbolKind.Struct, "field": L.SymbolKind.Field,
    "piece": L.SymbolKind.Class, "table": L.SymbolKind.Array, "row": L.SymbolKind.Object,
    "board": L.SymbolKind.Object, "node": L.SymbolKind.Key, "procedure": L.SymbolKind.Function,
    "phase": L.SymbolKind.Module, "setup": L.SymbolKind.Constructor, "flow": L.SymbolKind.Module,
    "function": L.SymbolKind.Function, "action": L.SymbolKind.Method, "event": L.SymbolKind.Event,
    "trigger": L.SymbolKind.Event, "ending": L.SymbolKind.Boolean, "invariant": L.SymbolKind.Boolean,
    "score": L.SymbolKind.Number, "scenario": L.SymbolKind.Module, "variant": L.SymbolKind.Namespace,
    "game": L.SymbolKind.File, "param": L.SymbolKind.Variable, "local": L.SymbolKind.Variable,
}
_COMPLETION_KIND = {
    "const": L.CompletionItemKind.Constant, "var": L.CompletionItemKind.Variable,
    "enum": L.CompletionItemKind.Enum, "member": L.CompletionItemKind.EnumMember,
    "record": L.CompletionItemKind.Struct, "field": L.CompletionItemKind.Field,
    "piece": L.CompletionItemKind.Class, "table": L.CompletionItemKind.Variable,
    "row": L.CompletionItemKind.Value, "board": L.CompletionItemKind.Variable, "node": L.CompletionItemKind.Value,
    "procedure": L.CompletionItemKind.Function, "phase": L.CompletionItemKind.Function,
    "function": L.CompletionItemKind.Function, "action": L.CompletionItemKind.Method,
    "event": L.CompletionItemKind.Event, "param": L.CompletionItemKind.Variable,
    "local": L.CompletionItemKind.Variable, "variant": L.CompletionItemKind.Module,
}


def _elem(t: str) -> str:
    """The type of ``x[i]`` for ``x`` of type ``t`` (as text), or ""."""
    m = re.fullmatch(r"(\w+)\[(.*)\]", t.strip())
    if not m:
        return ""
    name, args = m.group(1), _split_args(m.group(2))
    if name in ("list", "set", "deck", "bag") and len(args) == 1:
        return args[0]
    if name == "map" and len(args) == 2:
        return args[1]
    return ""


def _split_args(s: str) -> list[str]:
    out: list[str] = []
    depth, cur = 0, ""
    for c in s:
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def _field_owner(index: S.SymbolIndex, an: Optional[S.Analysis], path: str, line_text: str, line: int) -> str:
    """The record or piece whose fields may follow the '.' that ends ``line_text`` (text before the
    cursor), or "": ``row.``, ``xs[i].``, ``first(xs).`` is not followed (only names, indexing and
    fields)."""
    text = line_text[:-1].rstrip()
    steps: list[str] = []  # what is applied to the name, innermost first: "[]" or a field name
    while text:
        if text.endswith("]"):
            depth, i = 0, len(text) - 1
            while i >= 0:
                if text[i] == "]":
                    depth += 1
                elif text[i] == "[":
                    depth -= 1
                    if depth == 0:
                        break
                i -= 1
            if i < 0:
                return ""
            steps.append("[]")
            text = text[:i].rstrip()
            continue
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)$", text)
        if not m:
            return ""
        name = m.group(1)
        before = text[:m.start()].rstrip()
        if before.endswith("."):
            steps.append(name)
            text = before[:-1].rstrip()
            continue
        col = m.start() + 1
        ty = ""
        ref = index.at(path, line, col) if index is not None else None
        if ref is not None and ref.symbol.name == name:
            ty = ref.type or ref.symbol.type
        else:
            sym = next((s for s in index.visible(path, line, col) if s.name == name), None)
            ty = sym.type if sym is not None else ""
        for step in reversed(steps):
            if step == "[]":
                ty = _elem(ty)
            else:
                fs = index.fields.get((ty, step))
                ty = fs.type if fs is not None else ""
            if not ty:
                return ""
        return ty
    return ""


def make_server() -> RulesServer:
    server = RulesServer()

    def guard(default: Any = None) -> Callable[[_Handler], _Handler]:
        """Turn an unexpected failure of a handler into ``default`` (logged): the server keeps running."""
        def wrap(fn: _Handler) -> _Handler:
            async def run(ls: RulesServer, params: Any) -> Any:  # (pygls passes the server to a first `ls`)
                try:
                    return await fn(ls, params)
                except RequestFailed:
                    raise
                except Exception as exc:  # noqa: BLE001
                    log.error("%s failed: %s: %s", fn.__name__, type(exc).__name__, exc)
                    return default
            run.__name__ = fn.__name__
            return run
        return wrap

    @server.feature(L.INITIALIZE)
    def initialize(ls: RulesServer, params: L.InitializeParams) -> None:
        opts = params.initialization_options
        if isinstance(opts, dict) and isinstance(opts.get("rulebooks"), list):
            ls.rulebooks = [f for f in opts["rulebooks"] if isinstance(f, str)]
        if isinstance(opts, dict) and isinstance(opts.get("max_check_cpu"), (int, float)) \
                and not isinstance(opts["max_check_cpu"], bool) and opts["max_check_cpu"] > 0:
            ls.max_check_cpu = float(opts["max_check_cpu"])

    @server.feature(L.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: RulesServer, params: L.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict):
            own = settings.get("rulelang", settings)
            if isinstance(own, dict) and isinstance(own.get("rulebooks"), list):
                ls.rulebooks = [f for f in own["rulebooks"] if isinstance(f, str)]

    @server.feature(L.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: RulesServer, params: L.DidOpenTextDocumentParams) -> None:
        td = params.text_document
        doc = Doc(td.uri, td.text if isinstance(td.text, str) else "", td.version or 0)
        old = ls.docs.get(td.uri)
        if old is not None:
            old.closed = True
            ls.stale(old, "closed")
        ls.docs[td.uri] = doc
        ls.ensure(doc)

    @server.feature(L.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: RulesServer, params: L.DidChangeTextDocumentParams) -> None:
        doc = ls.docs.get(params.text_document.uri)
        if doc is None:
            return
        for change in params.content_changes:
            if isinstance(change, L.TextDocumentContentChangeWholeDocument):
                doc.text = change.text
            elif isinstance(change, L.TextDocumentContentChangePartial):  # full sync is asked for; be lenient
                lines = _lines(doc.text)
                s = from_client(lines, change.range.start, ls.encoding)
                e = from_client(lines, change.range.end, ls.encoding)
                starts = [0]
                for ln in lines:
                    starts.append(starts[-1] + len(ln) + 1)
                a = starts[s[0] - 1] + s[1] - 1
                b = starts[e[0] - 1] + e[1] - 1
                doc.text = doc.text[:a] + change.text + doc.text[b:]
        doc.version = params.text_document.version if params.text_document.version is not None else doc.version + 1
        ls.stale(doc)  # the newest text wins: a check of an older one stops now
        if doc.debounce is not None:
            doc.debounce.cancel()
        doc.debounce = asyncio.ensure_future(_after_quiet(ls, doc, doc.version))

    async def _after_quiet(ls: RulesServer, doc: Doc, version: int) -> None:
        await asyncio.sleep(DEBOUNCE)
        if doc.version == version and not doc.closed:
            ls.ensure(doc)

    @server.feature(L.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: RulesServer, params: L.DidSaveTextDocumentParams) -> None:
        doc = ls.docs.get(params.text_document.uri)
        if doc is not None:  # a base file may have changed on disk: check again, show again
            if doc.check is not None and not doc.check.future.done():
                doc.check.stop("stale")
            doc.check, doc.shown = None, -1
            ls.ensure(doc)

    @server.feature(L.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: RulesServer, params: L.DidCloseTextDocumentParams) -> None:
        doc = ls.docs.pop(params.text_document.uri, None)
        if doc is None:
            return
        doc.closed = True
        ls.stale(doc, "closed")
        if doc.debounce is not None:
            doc.debounce.cancel()
        for uri in doc.published:
            ls.text_document_publish_diagnostics(L.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(L.TEXT_DOCUMENT_HOVER)
    @guard()
    async def hover(ls: RulesServer, params: L.HoverParams) -> Optional[L.Hover]:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return None
        line, col = ls.position(doc, params.position)
        lines = _lines(doc.text)
        text = lines[line - 1][:MAX_LINE]
        for tok in S.lex(text):  # a citation: read from the text as it is now
            if tok.kind == "cite" and tok.column <= col <= tok.end_column:
                sid = S._unquote(tok.text)
                index, an = await ls.index_for(doc)
                prog = index.program if index is not None else None
                found = find_section(sid, doc.path, prog, ls.rulebooks)
                rng = span_range(lines, S.A.Span(doc.path, line, tok.column, line, tok.end_column), ls.encoding)
                if found is None:
                    value = (f"rulebook section **{printable(sid)}**: not found in the rulebooks looked at (the "
                             "header's `rulebook`, the `rulebooks` setting, RULELANG_RULEBOOKS, ../shared/rulebooks)")
                else:
                    where, body = found
                    value = f"{body}\n\n*{printable(os.path.basename(where))}*"
                return L.Hover(contents=L.MarkupContent(kind=L.MarkupKind.Markdown, value=value), range=rng)
        index, an = await ls.index_for(doc)
        if index is None:
            return None
        ref = index.at(doc.path, line, col)
        if ref is None:
            return None
        if ref.symbol.kind == "builtin":
            value = _builtin_hover(ref.symbol.name, ref.type)
        else:
            value = _symbol_hover(ref, an)
        return L.Hover(contents=L.MarkupContent(kind=L.MarkupKind.Markdown, value=value),
                       range=span_range(lines, ref.span, ls.encoding))

    @server.feature(L.TEXT_DOCUMENT_DEFINITION)
    @guard()
    async def definition(ls: RulesServer, params: L.DefinitionParams) -> Optional[list[L.Location]]:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return None
        index, an = await ls.index_for(doc)
        if index is None:
            return None
        line, col = ls.position(doc, params.position)
        ref = index.at(doc.path, line, col)
        if ref is None or ref.symbol.span is None:
            return None
        return [ls.location(ref.symbol.span, doc, an)]

    @server.feature(L.TEXT_DOCUMENT_REFERENCES)
    @guard()
    async def references(ls: RulesServer, params: L.ReferenceParams) -> Optional[list[L.Location]]:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return None
        index, an = await ls.index_for(doc)
        if index is None:
            return None
        line, col = ls.position(doc, params.position)
        ref = index.at(doc.path, line, col)
        if ref is None or ref.symbol.kind == "builtin":
            return None
        include = params.context.include_declaration if params.context is not None else True
        return [ls.location(r.span, doc, an) for r in index.references_to(ref.symbol, include)]

    def _rename_target(ls: RulesServer, doc: Doc, index: Optional[S.SymbolIndex], line: int, col: int
                       ) -> S.Reference:
        ref = index.at(doc.path, line, col) if index is not None else None
        if ref is None:
            tok = S.lex(_lines(doc.text)[line - 1][:MAX_LINE])
            word = next((t.text for t in tok if t.kind == "name" and t.column <= col <= t.end_column), "")
            if word in S.keywords():
                raise RequestFailed(f"'{word}' is a keyword of the rules language; it cannot be renamed")
            if word in S.builtin_names():
                raise RequestFailed(f"'{word}' is a built-in; it cannot be renamed")
            raise RequestFailed("there is no declared name here to rename")
        sym = ref.symbol
        if sym.kind == "builtin":
            raise RequestFailed(f"'{sym.name}' is a built-in; it cannot be renamed")
        if not sym.renamable:
            raise RequestFailed(f"'{sym.name}' ({sym.kind}) cannot be renamed")
        return ref

    @server.feature(L.TEXT_DOCUMENT_PREPARE_RENAME)
    @guard()
    async def prepare_rename(ls: RulesServer, params: L.PrepareRenameParams
                             ) -> Optional[L.PrepareRenamePlaceholder]:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return None
        index, an = await ls.index_for(doc, current_only=True)
        if index is None:
            raise RequestFailed("the file does not parse: fix its syntax errors before renaming")
        line, col = ls.position(doc, params.position)
        ref = _rename_target(ls, doc, index, line, col)
        return L.PrepareRenamePlaceholder(range=span_range(_lines(doc.text), ref.span, ls.encoding),
                                          placeholder=ref.symbol.name)

    @server.feature(L.TEXT_DOCUMENT_RENAME)
    @guard()
    async def rename(ls: RulesServer, params: L.RenameParams) -> Optional[L.WorkspaceEdit]:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return None
        index, an = await ls.index_for(doc, current_only=True)
        if index is None:
            raise RequestFailed("the file does not parse: fix its syntax errors before renaming")
        line, col = ls.position(doc, params.position)
        ref = _rename_target(ls, doc, index, line, col)
        sym, new = ref.symbol, params.new_name
        if not isinstance(new, str) or not S.NAME_RE.match(new):
            raise RequestFailed(f"'{printable(str(new))[:80]}' is not a name: a letter or _, then letters, digits or _")
        if new in S.keywords():
            raise RequestFailed(f"'{new}' is a keyword of the rules language; choose another name")
        if new in S.builtin_names():
            raise RequestFailed(f"'{new}' is a built-in; choose another name")
        if new == sym.name:
            return L.WorkspaceEdit(changes={})
        refs = index.references_to(sym)
        clash = _clash(index, sym, new, refs)
        if clash:
            raise RequestFailed(clash)
        changes: dict[str, list[L.TextEdit]] = {}
        for r in refs:
            uri = _uri_of(r.span.path, doc)
            lines = ls._lines_of(r.span.path, doc, an)
            changes.setdefault(uri, []).append(L.TextEdit(range=span_range(lines, r.span, ls.encoding), new_text=new))
        return L.WorkspaceEdit(changes=changes)

    def _clash(index: S.SymbolIndex, sym: S.Symbol, new: str, refs: list[S.Reference]) -> str:
        if sym.kind == "field":
            if (sym.container, new) in index.fields:
                return f"'{sym.container}' already has a field '{new}'"
            return ""
        if sym.kind == "variant":
            return f"variant '{new}' already exists" if new in index.variants else ""
        g = index.globals.get(new)
        if g is not None and sym.kind not in ("local", "param"):
            return f"'{new}' is already declared (line {g.span.line})" if g.span else f"'{new}' is already declared"
        # a name `new` visible where the symbol is used would capture it: the locals of that name (found
        # once, not every visible name at every use) whose scope holds the use, innermost first; then the
        # declaration of that name (which renaming a local onto would shadow)
        named: list[Any] = [s for s in index.symbols if s.name == new and s is not sym and s.kind in ("local", "param")
                 and s.scope is not None and s.span is not None]
        for r in refs:
            line, col = r.span.line, r.span.column
            here: list[Any] = [s for s in named if s.span.path == r.span.path and S._contains(s.scope, line, col)
                    and (s.kind == "param" or (s.span.line, s.span.column) < (line, col))]
            here.sort(key=lambda s: (s.scope.line, s.scope.column, s.span.line, s.span.column), reverse=True)
            if not here and g is not None and g is not sym and sym.kind in ("local", "param"):
                here = [g]
            for s in here[:1]:
                where = f" (line {s.span.line})" if s.span else ""
                return f"'{new}' is already a name where '{sym.name}' is used, line {r.span.line}{where}"
        return ""

    @server.feature(L.TEXT_DOCUMENT_COMPLETION, L.CompletionOptions(trigger_characters=["."]))
    @guard()
    async def completion(ls: RulesServer, params: L.CompletionParams) -> Optional[L.CompletionList]:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return None
        coming = [c.future for c in ls.running if c.doc is doc and c.indexing and not c.future.done()]
        if coming:  # the index of a newer text than the last indexed one is being made: it is worth a wait
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(asyncio.gather(*coming)), INDEX_WAIT)
        an = doc.analysis if doc.analysed == doc.version else None
        if an is None or an.index is None:
            an = doc.good
        index = an.index if an is not None else None
        line, col = ls.position(doc, params.position)
        before = _lines(doc.text)[line - 1][:col - 1][-MAX_LINE:]
        m = re.search(r"[A-Za-z_][A-Za-z0-9_]*$", before)
        stem = before[:m.start()] if m else before
        items: list[L.CompletionItem] = []
        if stem.rstrip().endswith(".") and not stem.rstrip().endswith(".."):
            if index is None:
                return L.CompletionList(is_incomplete=False, items=[])
            owner = _field_owner(index, an, doc.path, stem.rstrip(), line)
            for fs in index.fields_of(owner):
                items.append(L.CompletionItem(label=fs.name, kind=L.CompletionItemKind.Field,
                                              detail=f"{fs.type} (field of {owner})"))
            sym = index.globals.get(owner)
            if sym is not None and sym.kind == "piece":
                items.append(L.CompletionItem(label="id", kind=L.CompletionItemKind.Field, detail="int (the piece's number)"))
            return L.CompletionList(is_incomplete=False, items=items)
        seen: set[str] = set()
        if index is not None:
            for s in index.visible(doc.path, line, col):
                if s.name in seen:
                    continue
                seen.add(s.name)
                items.append(L.CompletionItem(label=s.name, kind=_COMPLETION_KIND.get(s.kind, L.CompletionItemKind.Text),
                                              detail=printable(s.detail or s.kind),
                                              sort_text=("0" if s.kind in ("local", "param") else "1") + s.name))
        for name, b in FUNCTIONS.items():
            if name not in seen:
                seen.add(name)
                items.append(L.CompletionItem(label=name, kind=L.CompletionItemKind.Function, detail=b.doc,
                                              sort_text="2" + name))
        for table in (VALUES, SCENARIO_VALUES):
            for name, (t, d) in table.items():
                if name not in seen:
                    seen.add(name)
                    items.append(L.CompletionItem(label=name, kind=L.CompletionItemKind.Constant,
                                                  detail=f"{t}: {d}", sort_text="2" + name))
        for name, spec in BOARD_GENERATORS.items():
            if name not in seen:
                seen.add(name)
                items.append(L.CompletionItem(label=name, kind=L.CompletionItemKind.Function, detail=spec[3],
                                              sort_text="3" + name))
        for kw in sorted(S.keywords()):
            if kw not in seen:
                items.append(L.CompletionItem(label=kw, kind=L.CompletionItemKind.Keyword, sort_text="4" + kw))
        return L.CompletionList(is_incomplete=False, items=items)

    @server.feature(L.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guard()
    async def document_symbol(ls: RulesServer, params: L.DocumentSymbolParams) -> Optional[list[L.DocumentSymbol]]:
        doc = ls.doc(params.text_document.uri)
        if doc is None:
            return None
        index, an = await ls.index_for(doc)
        if index is None:
            return []
        assert an is not None  # (an index comes with the analysis that made it)
        lines = _lines(an.text)

        def one(s: S.Symbol) -> L.DocumentSymbol:
            assert s.span is not None  # (only symbols with a span are outlined)
            sel = span_range(lines, s.span, ls.encoding)
            whole = span_range(lines, s.decl_span or s.span, ls.encoding)
            if (whole.start.line, whole.start.character) > (sel.start.line, sel.start.character):
                whole.start = sel.start
            if (whole.end.line, whole.end.character) < (sel.end.line, sel.end.character):
                whole.end = sel.end
            kids = [one(c) for c in s.children if c.span is not None and c.span.path == doc.path]
            return L.DocumentSymbol(name=printable(s.name) or "?", kind=_SYMBOL_KIND.get(s.kind, L.SymbolKind.Object),
                                    range=whole, selection_range=sel, detail=printable(s.detail)[:200] or None,
                                    children=kids or None)
        return [one(s) for s in index.outline(doc.path) if s.span is not None]

    if _format_text is not None:
        @server.feature(L.TEXT_DOCUMENT_FORMATTING)
        @guard()
        async def formatting(ls: RulesServer, params: L.DocumentFormattingParams) -> Optional[list[L.TextEdit]]:
            doc = ls.doc(params.text_document.uri)
            if doc is None:
                return None
            text = doc.text
            try:
                new = _format_text(text, doc.path)
            except Exception as exc:  # noqa: BLE001 - fmt's refusal (a syntax error, or a layout it cannot keep)
                if getattr(exc, "diagnostics", None):
                    raise RequestFailed("the file does not parse: fix its syntax errors before formatting") from None
                raise RequestFailed(printable(str(exc)).split("\n")[0] or "the file cannot be formatted") from None
            if new == text:
                return []
            lines = _lines(text)
            end = L.Position(line=len(lines) - 1, character=_units(lines[-1], ls.encoding))
            return [L.TextEdit(range=L.Range(start=L.Position(line=0, character=0), end=end), new_text=new)]

    return server


class _OneLine(logging.Formatter):
    """Log records as one line each (the editor shows the server's stderr): no tracebacks."""

    def formatException(self, ei: Any) -> str:  # noqa: N802 - logging's name
        return ""

    def formatStack(self, stack_info: str) -> str:  # noqa: N802
        return ""

    def format(self, record: logging.LogRecord) -> str:
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return super().format(record).replace("\n", " ")


WORKER_STACK = 64 * 1024 * 1024  # bytes of stack for the check's thread: as deep as the main thread's checks


WARM_UP = '''game "Warm-up" { players 2 }
board grid = square_grid(2, 2)
piece Token { owner: player }
per player var vp: int
var marks: map[node, player] = {}
action place(r in 0..1) { effect { marks[(r, 0)] = me  vp[me] += 1  let t = new Token(owner: me) } }
flow { loop { for p in players { turn p { offer [place] to p } } } }
ending "full" when count(marks) == 2
score p = vp[p]
'''


def _warm_up() -> None:
    """Check a small game once before serving, so that every module a check imports is imported and every
    table it builds is built before a check can be stopped part way (a stop inside an import would leave the
    module half made)."""
    import interpreter.closures  # noqa: F401
    import interpreter.compiler  # noqa: F401
    import interpreter.engine  # noqa: F401
    import interpreter.generate  # noqa: F401
    from . import api, checker, lints, program  # noqa: F401

    _safe_analyse("<warm-up>", WARM_UP)


def serve() -> None:
    """Run the server on standard input and output until the client says exit."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine("rulelang lsp: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    try:
        threading.stack_size(WORKER_STACK)
    except (ValueError, RuntimeError):  # pragma: no cover - a platform without it keeps its default
        pass
    _warm_up()
    make_server().start_io()

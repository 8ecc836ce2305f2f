"""The symbol index of a rule file: every declaration and every use of a name, with spans and scopes.

Built from the merged, checked program (program.py, checker.py) and the source text, it answers the
questions an editor asks: what is the name at this place (`at`), where is it declared, where is it
used (`references`), which names are visible here (`visible`), what does the file declare (`outline`),
and which citation `@rule "..."` stands here (`citation_at`). The language server (rulelang/lsp.py)
is a thin layer over it; nothing here needs the server.

Names resolve as the checker resolves them (checker.py): a local (a parameter, `let`, a `for` name, a
function value's or comprehension's name) in the innermost scope first, then a declaration of the
file (or of a file it `extends`), then a built-in (library.py). A record or piece field is found from
the type the checker gave the value before the dot. Code the checker does not see (a variant that is
not applied) is resolved the same way, by name; a field there is linked when only one record or piece
declares a field of that name.

Positions are 1-based lines and columns counted in characters, as in diagnostics (ast.Span); an end
column is just past the last character. The AST keeps a span for each expression but not for every
name written in a declaration (`let x`, `for a, b in`, a parameter, an action named in `offer`), so
those are found in the text by a small lexer that agrees with the grammar's tokens (names, strings,
comments).
"""
from __future__ import annotations

import bisect
import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

import attrs

from . import ast as A
from . import types as T
from .library import BOARD_GENERATORS, FUNCTIONS, SCENARIO_VALUES, VALUES

if TYPE_CHECKING:
    from .checker import Checker
    from .diagnostics import Source
    from .program import Program

# ------------------------------------------------------------------------------------------- lexer

_TOKEN_RE = re.compile(r"""
    (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<cite>@rule\b)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9]+)
  | (?P<newline>\n)
  | (?P<space>[ \t\r\f\v]+)
  | (?P<op>=>|\.\.|--|==|!=|<=|>=|\+=|-=|.)
""", re.X | re.S)


@attrs.frozen
class Token:
    kind: str  # name, string, cite (a string after @rule), at (the word @rule), number, op
    text: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    end_column: int  # just past the token (tokens never span lines)

    def span(self, path: str) -> A.Span:
        return A.Span(path, self.line, self.column, self.line, self.end_column)


def lex(text: str) -> list[Token]:
    """The tokens of a rule text (comments and white space left out), with their positions: a string
    right after `@rule` or after a comma following such a string is a citation ("cite")."""
    out = []
    line, start = 1, 0
    citing = False  # inside `@rule "A", "B"`: the next string is a citation
    after_cite = False  # just after a citation string: a comma continues the list
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        assert kind is not None  # (every alternative of _TOKEN_RE is a named group)
        if kind == "newline":
            line, start = line + 1, m.end()
            continue
        if kind in ("space", "comment"):
            continue
        col = m.start() - start + 1
        tok_text = m.group()
        if kind == "cite":
            kind, citing, after_cite = "at", True, False
        elif kind == "string" and citing:
            kind, citing, after_cite = "cite", False, True
        elif kind == "op" and tok_text == "," and after_cite:
            citing, after_cite = True, False
        else:
            citing = after_cite = False
        out.append(Token(kind, tok_text, line, col, col + len(tok_text)))
    return out


@functools.lru_cache(maxsize=1)
def keywords() -> frozenset:
    """The words of the grammar (rulelang/grammar.lark): they can never be renamed to or from."""
    text = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    words = set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', text))
    words |= {"elif", "else", "all", "owner", "none", "known", "explicit", "sampled", "ordered", "optional"}
    return frozenset(words)


def builtin_names() -> frozenset:
    return frozenset(FUNCTIONS) | frozenset(VALUES) | frozenset(SCENARIO_VALUES) | frozenset(BOARD_GENERATORS)


NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


# ------------------------------------------------------------------------------------------- model

@attrs.define(eq=False)
class Symbol:
    """Something a name stands for."""
    name: str
    kind: str  # const var enum member record field piece table row board node procedure phase setup flow
    #            function action event param local variant trigger ending invariant score scenario game
    #            builtin (a built-in function, value or board generator; no span)
    span: Optional[A.Span]  # the name where it is declared (None for a built-in)
    decl_span: Optional[A.Span] = None  # the whole declaration
    container: str = ""  # a field's record or piece, a member's enum, a row's table, a node's board
    type: str = ""  # the type as the checker sees it ("" when unknown)
    detail: str = ""  # one line: how it is declared, e.g. "function owns(p, cell): bool"
    doc: str = ""  # the comment lines right above the declaration
    scope: Optional[A.Span] = None  # a local's region of the file, where it is visible
    children: list = attrs.Factory(list)  # members, fields, rows, parameters (for the outline)

    @property
    def renamable(self) -> bool:
        return self.span is not None and self.kind not in ("builtin", "setup", "flow", "trigger", "ending",
                                                           "invariant", "score", "scenario", "game")


@attrs.define(eq=False)
class Reference:
    """One place where a name is written."""
    span: A.Span  # just the name
    symbol: Symbol
    definition: bool = False  # the declaring occurrence (or a redeclaration: override)
    type: str = ""  # the type of the value written here, as the checker saw it ("" when unknown)


def _contains(span: A.Span, line: int, column: int) -> bool:
    if (line, column) < (span.line, span.column):
        return False
    return (line, column) <= (span.end_line, span.end_column)


def _type_text(t: Any) -> str:
    """A type as written in the rules (syntax, from the AST)."""
    if t is None:
        return ""
    if isinstance(t, A.TypeName):
        return t.name
    if isinstance(t, A.TypeGeneric):
        return f"{t.name}[{', '.join(_type_text(a) for a in t.args)}]"
    if isinstance(t, A.TypeRange):
        return f"{t.low}..{t.high}"
    return ""


def _ty(t: Any) -> str:
    """A checker type as text ("" for none known, or for an error)."""
    if t is None or not isinstance(t, T.Type) or t.kind == "error":
        return ""
    return str(t)


# ------------------------------------------------------------------------------------------- index

class SymbolIndex:
    """Definitions and references of one program, per file. Build with `build_index`."""

    def __init__(self, program: Program, sources: dict[str, Source]) -> None:
        self.program = program
        self.sources = sources  # path -> diagnostics.Source
        self.symbols: list[Symbol] = []  # every Symbol declared in the files (built-ins are not listed)
        self.references: list[Reference] = []  # every Reference, definitions included
        self.top: dict[str, list[Symbol]] = {}  # path -> top-level symbols in source order (for the outline)
        self.globals: dict[str, Symbol] = {}  # name -> Symbol: declarations, members, rows, nodes
        self.fields: dict[tuple[str, str], Symbol] = {}  # (record or piece name, field name) -> Symbol
        self.variants: dict[str, Symbol] = {}  # variant name -> Symbol
        self.tokens: dict[str, list[Token]] = {}  # path -> [Token]
        self._keys: dict[str, list[tuple[int, int]]] = {}  # path -> [(line, column)] of the tokens, for bisect
        self._by_path: dict[str, list[Reference]] = {}  # path -> references sorted by position
        self._ref_keys: dict[str, list[tuple[int, int]]] = {}  # path -> [(line, column)] of those references
        # path -> local Symbols (Any: each has its span and scope, which a Symbol's type says may be None)
        self._locals: dict[str, list[Any]] = {}

    # -- questions
    def at(self, path: str, line: int, column: int) -> Optional[Reference]:
        """The reference (or definition) whose name covers the 1-based position (the end counts: a cursor
        just after a name is on it)."""
        refs = self._by_path.get(path, ())
        i = bisect.bisect_right(self._ref_keys.get(path, []), (line, column))
        for j in (i - 1, i - 2):
            if 0 <= j < len(refs) and _contains(refs[j].span, line, column):
                return refs[j]
        return None

    def references_to(self, symbol: Symbol, include_definition: bool = True) -> list:
        return [r for r in self.references if r.symbol is symbol and (include_definition or not r.definition)]

    def token_at(self, path: str, line: int, column: int) -> Optional[Token]:
        toks = self.tokens.get(path, ())
        keys = self._keys.get(path, [])
        i = bisect.bisect_right(keys, (line, column))
        for j in (i - 1,):
            if 0 <= j < len(toks):
                t = toks[j]
                if t.line == line and t.column <= column <= t.end_column:
                    return t
        return None

    def citation_at(self, path: str, line: int, column: int) -> Optional[tuple]:
        """(section id, span) of the `@rule "ID"` string at the position, or None."""
        t = self.token_at(path, line, column)
        if t is None or t.kind != "cite":
            return None
        return _unquote(t.text), t.span(path)

    def visible(self, path: str, line: int, column: int) -> list:
        """The symbols a name written at this position may refer to: the locals in scope (innermost first),
        then the file's declarations, members, rows and nodes."""
        out, seen = [], set()
        scoped = [s for s in self._locals.get(path, ()) if s.scope is not None and _contains(s.scope, line, column)
                  and (s.kind == "param" or (s.span.line, s.span.column) < (line, column))]
        scoped.sort(key=lambda s: (s.scope.line, s.scope.column, s.span.line, s.span.column), reverse=True)
        for s in scoped:
            if s.name not in seen:
                seen.add(s.name)
                out.append(s)
        for name, s in self.globals.items():
            if name not in seen:
                seen.add(name)
                out.append(s)
        return out

    def fields_of(self, type_name: str) -> list:
        return [s for (owner, _), s in self.fields.items() if owner == type_name]

    def outline(self, path: str) -> list:
        return list(self.top.get(path, ()))

    def symbol_named(self, name: str) -> Optional[Symbol]:
        return self.globals.get(name)

    def _finish(self) -> None:
        self.references.sort(key=lambda r: (r.span.path, r.span.line, r.span.column))
        self._by_path = {}
        for r in self.references:
            self._by_path.setdefault(r.span.path, []).append(r)
        self._ref_keys = {p: [(r.span.line, r.span.column) for r in refs] for p, refs in self._by_path.items()}
        first_type: dict[int, str] = {}
        for r in self.references:
            if r.type and id(r.symbol) not in first_type:
                first_type[id(r.symbol)] = r.type
        for s in self.symbols:
            if s.kind in ("local", "param") and s.span is not None:
                self._locals.setdefault(s.span.path, []).append(s)
                if not s.type:  # a local's type: what the checker gave the value where it is used
                    s.type = first_type.get(id(s), "")


def _unquote(s: str) -> str:
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        s = s[1:-1]
    return re.sub(r"\\(.)", r"\1", s)


# ------------------------------------------------------------------------------------------- building

_DECL_WORD = {
    A.ConstDecl: "const", A.EnumDecl: "enum", A.RecordDecl: "record", A.PieceDecl: "piece", A.TableDecl: "table",
    A.VarDecl: "var", A.BoardDecl: "board", A.FuncDecl: "function", A.ActionDecl: "action", A.EventDecl: "event",
    A.VariantDecl: "variant",
}
_DECL_KIND = {
    A.ConstDecl: "const", A.EnumDecl: "enum", A.RecordDecl: "record", A.PieceDecl: "piece", A.TableDecl: "table",
    A.VarDecl: "var", A.BoardDecl: "board", A.FuncDecl: "function", A.ActionDecl: "action", A.EventDecl: "event",
}


from .scopes import Scope as _Scope  # noqa: E402  (the checker's nested scopes: names -> what they mean)


class _Builder(A.NodeVisitor):
    def __init__(self, program: Program, checker: Optional[Checker], sources: dict[str, Source]) -> None:
        self.prog = program
        self.checker = checker
        self.ix = SymbolIndex(program, sources)
        self.builtins: dict[str, Symbol] = {}
        self.seen_stmts: set[int] = set()
        # (id of the declaring span, name) -> (that span, the first parameter symbol of that name there)
        self.params: dict[tuple[int, str], tuple[A.Span, Symbol]] = {}
        for path, src in sources.items():
            toks = lex(src.text)
            self.ix.tokens[path] = toks
            self.ix._keys[path] = [(t.line, t.column) for t in toks]
        self.unique_fields: dict[str, Symbol] = {}
        self.scenario_symbols: dict[str, Symbol] = {}  # a scenario's name -> its symbol (the first of that name)
        # id of a scenario -> the scope its blocks ended in (None while walked)
        self.scenario_scopes: dict[int, Optional[_Scope]] = {}
        self._scenarios_by_name: Optional[dict] = None  # name -> scenario, made at the first `after`
        self._broken_scenarios: set = set()  # ids of scenarios whose chain of `after` breaks

    # -- tokens
    def _tok_index(self, path: str, line: int, column: int) -> int:
        return bisect.bisect_left(self.ix._keys.get(path, []), (line, column))

    def token_after(self, span: A.Span, pred: Callable[[Token], bool], start: Optional[tuple[int, int]] = None,
                    limit: Optional[int] = None) -> Optional[Token]:
        """The first token at or after ``start`` (default: the span's start), inside the span, passing ``pred``."""
        path = span.path
        toks = self.ix.tokens.get(path, ())
        line, col = start if start is not None else (span.line, span.column)
        i = self._tok_index(path, line, col)
        end = (span.end_line, span.end_column)
        n = 0
        while i < len(toks):
            t = toks[i]
            if (t.line, t.column) >= end:
                return None
            if pred(t):
                return t
            i += 1
            n += 1
            if limit is not None and n >= limit:
                return None
        return None

    def name_token_after(self, span: A.Span, name: str, start: Optional[tuple[int, int]] = None,
                         limit: Optional[int] = None) -> Optional[Token]:
        return self.token_after(span, lambda t: t.kind == "name" and t.text == name, start, limit)

    def name_token_before(self, path: str, line: int, column: int, name: str) -> Optional[Token]:
        """The name token just before a position (skipping punctuation such as ':'), if it reads ``name``."""
        toks = self.ix.tokens.get(path, ())
        i = self._tok_index(path, line, column) - 1
        while i >= 0 and toks[i].kind == "op":
            i -= 1
        if i >= 0 and toks[i].kind == "name" and toks[i].text == name:
            return toks[i]
        return None

    def last_name_token_in(self, span: A.Span, name: str) -> Optional[Token]:
        path = span.path
        toks = self.ix.tokens.get(path, ())
        i = self._tok_index(path, span.end_line, span.end_column) - 1
        while i >= 0:
            t = toks[i]
            if (t.line, t.column) < (span.line, span.column):
                return None
            if t.kind == "name" and t.text == name:
                return t
            i -= 1
        return None

    def decl_name_span(self, d: A.Decl) -> A.Span:
        """Where the name of a declaration is written: the name after its keyword."""
        word = _DECL_WORD.get(type(d))
        if isinstance(d, A.ProcDecl):
            word = d.proc_kind
        if word is None:
            return d.span
        kw = self.token_after(d.span, lambda t: t.kind == "name" and t.text == word, limit=8)
        if kw is not None:
            if d.name == word:  # setup, flow: the keyword is the name
                return kw.span(d.span.path)
            nxt = self.name_token_after(d.span, d.name, start=(kw.line, kw.end_column), limit=1)
            if nxt is not None:
                return nxt.span(d.span.path)
        t = self.name_token_after(d.span, d.name)
        return t.span(d.span.path) if t is not None else d.span

    def doc_above(self, span: A.Span) -> str:
        """The comment lines right above a declaration (its `@rule` lines skipped), and a comment at the end
        of a `@rule` line."""
        src = self.ix.sources.get(span.path)
        if src is None:
            return ""
        out = []
        ln = span.line - 1
        while ln >= 1:
            text = src.line_text(ln).strip()
            if text.startswith("#"):
                out.append(text.lstrip("#").strip())
            elif text.startswith("@rule"):
                if "#" in text:
                    cut = _comment_of(text)
                    if cut:
                        out.append(cut)
            else:
                break
            ln -= 1
            if len(out) > 30:
                break
        return "\n".join(reversed(out))

    # -- recording
    def add_symbol(self, sym: Symbol, top: bool = False, parent: Optional[Symbol] = None) -> Symbol:
        self.ix.symbols.append(sym)
        if sym.kind == "param" and sym.scope is not None:
            self.params.setdefault((id(sym.scope), sym.name), (sym.scope, sym))
        if sym.span is not None:
            self.ix.references.append(Reference(sym.span, sym, definition=True, type=sym.type))
        if top and sym.span is not None:
            self.ix.top.setdefault(sym.span.path, []).append(sym)
        if parent is not None:
            parent.children.append(sym)
        return sym

    def ref(self, span: Optional[A.Span], sym: Optional[Symbol], ty: Any = None) -> None:
        if sym is None or span is None:
            return
        self.ix.references.append(Reference(span, sym, type=_ty(ty)))

    def builtin(self, name: str) -> Symbol:
        s = self.builtins.get(name)
        if s is None:
            s = self.builtins[name] = Symbol(name, "builtin", None)
        return s

    def global_type(self, name: str) -> str:
        if self.checker is None:
            return ""
        got = self.checker.globals.get(name)
        return _ty(got[1]) if got else ""

    # -- declarations
    def collect_items(self) -> list[A.Decl]:
        p = self.prog
        items = list(p.decls.values()) + list(p.triggers) + list(p.endings) + list(p.invariants) + \
            list(p.scenarios) + list(p.variants.values()) + list(p.extensions) + [old for old, _ in p.replaced]
        for x in (p.score, p.tiebreak, p.heuristic, p.game):
            if x is not None:
                items.append(x)
        seen, out = set(), []
        for it in items:
            if id(it) not in seen:
                seen.add(id(it))
                out.append(it)
        out.sort(key=lambda d: (d.span.path, d.span.line, d.span.column))
        return out

    def build(self) -> SymbolIndex:
        items = self.collect_items()
        # declarations first (a name may be used before it is declared), then bodies
        for d in items:
            self.declare(d, top=True)
        for d in items:
            if isinstance(d, A.VariantDecl):
                for sub in d.items:
                    self.declare(sub, top=False, parent=self.ix.variants.get(d.name))
        names: dict[str, list[Symbol]] = {}
        for (owner, fname), s in self.ix.fields.items():
            names.setdefault(fname, []).append(s)
        self.unique_fields = {n: ss[0] for n, ss in names.items() if len(ss) == 1}
        for d in items:
            self.walk_decl(d)
            if isinstance(d, A.VariantDecl):
                for sub in d.items:
                    self.walk_decl(sub)
        self.ix._finish()
        return self.ix

    def declare(self, d: A.Decl, top: bool, parent: Optional[Symbol] = None) -> None:
        kind: Optional[str]  # the symbol's kind (None: the declaration declares no name)
        path = d.span.path
        if isinstance(d, A.GameDecl):
            t = self.token_after(d.span, lambda t: t.kind == "string", limit=3)
            sym = Symbol(d.title, "game", t.span(path) if t else d.span, d.span, detail=f'game "{d.title}"')
            self.add_symbol(sym, top=top, parent=parent)
            return
        if isinstance(d, A.VariantDecl):
            name_span = self.decl_name_span(d)
            sym = Symbol(d.name, "variant", name_span, d.span, detail=f"variant {d.name}",
                         doc=d.description or self.doc_above(d.span))
            if d.name in self.ix.variants:
                self.ix.references.append(Reference(name_span, self.ix.variants[d.name], definition=True))
                return
            self.ix.variants[d.name] = sym
            self.add_symbol(sym, top=top, parent=parent)
            return
        if isinstance(d, (A.TriggerDecl, A.EndingDecl, A.InvariantDecl, A.ScoreDecl, A.ScenarioDecl, A.ExtendDecl)):
            kind = {A.TriggerDecl: "trigger", A.EndingDecl: "ending", A.InvariantDecl: "invariant",
                    A.ScoreDecl: "score", A.ScenarioDecl: "scenario", A.ExtendDecl: "extend"}[type(d)]
            if kind == "extend":
                return
            name = d.name
            if kind in ("ending", "invariant", "scenario"):
                t = self.token_after(d.span, lambda t: t.kind == "string", limit=3)
                where = t.span(path) if t else d.span
            else:
                first = self.token_after(d.span, lambda t: t.kind == "name", limit=3)
                where = first.span(path) if first else d.span
                if isinstance(d, A.ScoreDecl) and (d.tiebreak or d.heuristic):  # (the kind "score")
                    name = "tiebreak" if d.tiebreak else "heuristic"
            sym = Symbol(name, kind, where, d.span, detail=_detail(d), doc=self.doc_above(d.span))
            self.ix.symbols.append(sym)
            if kind == "scenario":
                self.scenario_symbols.setdefault(name, sym)
            if top:
                self.ix.top.setdefault(path, []).append(sym)
            elif parent is not None:
                parent.children.append(sym)
            return
        kind = _DECL_KIND.get(type(d))
        if isinstance(d, A.ProcDecl):
            kind = d.proc_kind
        if kind is None:
            return
        span = self.decl_name_span(d)
        old = self.ix.globals.get(d.name)
        if old is not None and old.kind == kind and d.mode == "override":
            # an override (in a variant or a house-rule file) declares the same thing again
            self.ix.references.append(Reference(span, old, definition=True))
            sym = old
            self._declare_parts(d, sym, register=False)
            if parent is not None:
                parent.children.append(Symbol(d.name, kind, span, d.span, detail="override " + _detail(d)))
            return
        if old is not None and old.kind in ("setup", "flow") and old.kind == kind:
            return
        sym = Symbol(d.name, kind, span, d.span, type=self.global_type(d.name), detail=_detail(d),
                     doc=self.doc_above(d.span))
        if old is None:
            self.ix.globals[d.name] = sym
        self.add_symbol(sym, top=top, parent=parent)
        self._declare_parts(d, sym, register=old is None)

    def _declare_parts(self, d: A.Decl, sym: Symbol, register: bool = True) -> None:
        path = d.span.path
        if isinstance(d, A.EnumDecl):
            for m, mspan in zip(d.members, d.member_spans):
                self._member(m, "member", mspan, sym, d.name, register, type_=d.name)
        elif isinstance(d, A.TableDecl):
            for row in d.rows:
                t = self.name_token_after(row.span, row.name, limit=1)
                self._member(row.name, "row", t.span(path) if t else row.span, sym, d.name, register,
                             type_=d.record, decl_span=row.span)
        elif isinstance(d, (A.RecordDecl, A.PieceDecl)):
            for f in d.fields:
                t = self.name_token_after(f.span, f.name, limit=1)
                fspan = t.span(path) if t else f.span
                fs = Symbol(f.name, "field", fspan, f.span, container=d.name,
                            type=_type_text(f.type), detail=f"{f.name}: {_type_text(f.type)}"
                            + (f" (field of {d.kind} {d.name})"))
                key = (d.name, f.name)
                if key in self.ix.fields:
                    self.ix.references.append(Reference(fspan, self.ix.fields[key], definition=True))
                    continue
                self.ix.fields[key] = fs
                self.add_symbol(fs, parent=sym)
                self.type_refs(f.type)
        elif isinstance(d, A.BoardDecl) and d.spec is None:
            toks = self.ix.tokens.get(path, ())
            start = self.decl_name_span(d)
            i = self._tok_index(path, start.end_line, start.end_column)
            end = (d.span.end_line, d.span.end_column)
            names: set[str] = set()
            for chain in d.edges:
                names.update(chain)
            for n, _, _ in d.nodes:
                if isinstance(n, str):
                    names.add(n)
            while i < len(toks) and (toks[i].line, toks[i].column) < end:
                t = toks[i]
                i += 1
                if t.kind != "name" or t.text not in names:
                    continue
                prev = self.ix.globals.get(t.text)
                if prev is not None and prev.kind == "node" and prev.container == d.name:
                    self.ix.references.append(Reference(t.span(path), prev))
                elif prev is None or not register:
                    self._member(t.text, "node", t.span(path), sym, d.name, register, type_="node")

    def _member(self, name: str, kind: str, span: A.Span, parent: Symbol, container: str, register: bool,
                type_: str = "", decl_span: Optional[A.Span] = None) -> None:
        if not register:
            prev = self.ix.globals.get(name)
            if prev is not None and prev.kind == kind:
                self.ix.references.append(Reference(span, prev, definition=True))
                return
        what = {"member": "member of enum", "row": "row of table", "node": "node of board"}[kind]
        s = Symbol(name, kind, span, decl_span or span, container=container, type=type_,
                   detail=f"{name} ({what} {container})")
        if name not in self.ix.globals:
            self.ix.globals[name] = s
        self.add_symbol(s, parent=parent)

    # -- bodies
    def type_refs(self, t: Any) -> None:
        if t is None:
            return
        if isinstance(t, A.TypeName):
            s = self.ix.globals.get(t.name)
            if s is not None and s.kind in ("enum", "record", "piece"):
                self.ref(A.Span(t.span.path, t.span.line, t.span.column, t.span.line, t.span.column + len(t.name)), s)
        elif isinstance(t, A.TypeGeneric):
            for a in t.args:
                self.type_refs(a)

    def param_symbols(self, params: list[A.Param], scope: Optional[_Scope], owner: str, decl: A.Decl,
                      kind: str = "param") -> None:
        for p in params:
            if p.domain is not None:
                self.expr(p.domain, scope)
            self.type_refs(p.type)
            t = self.name_token_after(p.span, p.name, limit=1)
            span = t.span(p.span.path) if t else p.span
            s = Symbol(p.name, kind, span, p.span, container=owner, type=_type_text(p.type),
                       scope=decl.span, detail=f"{p.name}" + (f": {_type_text(p.type)}" if p.type else "")
                       + f" (parameter of {owner})")
            self.add_symbol(s)
            if scope is not None:
                scope.names[p.name] = s

    def text_template_refs(self, d: A.ActionDecl, scope: _Scope) -> None:
        """Each `{name}` in an action's text is a use of that parameter (so a rename changes it too)."""
        if not d.text or d.text_span is None or "{" not in d.text:
            return
        t = self.token_after(d.text_span, lambda t: t.kind == "string", limit=3)
        if t is None:
            return
        for m in re.finditer(r"\{(\w+)\}", t.text):
            sym = scope.names.get(m.group(1))
            if sym is not None and sym.kind == "param":
                self.ref(A.Span(d.text_span.path, t.line, t.column + m.start(1), t.line, t.column + m.end(1)), sym)

    def local(self, name: str, span: A.Span, scope_span: A.Span, scope: _Scope, owner: str, ty: Any = None,
              decl_span: Optional[A.Span] = None) -> Symbol:
        s = Symbol(name, "local", span, decl_span or span, container=owner, type=_ty(ty), scope=scope_span,
                   detail=f"{name} (local in {owner})" if owner else name)
        self.add_symbol(s)
        scope.names[name] = s
        return s

    def walk_decl(self, d: A.Decl) -> None:
        self.owner: str = getattr(d, "name", "")
        path = d.span.path
        if isinstance(d, A.ConstDecl):
            self.type_refs(d.type)
            self.expr(d.value, _Scope())
        elif isinstance(d, A.VarDecl):
            self.type_refs(d.type)
            if d.value is not None:
                self.expr(d.value, _Scope())
        elif isinstance(d, (A.RecordDecl, A.PieceDecl)):
            for f in d.fields:
                if f.default is not None:
                    self.expr(f.default, _Scope())
        elif isinstance(d, A.TableDecl):
            t = self.token_after(d.span, lambda t: t.kind == "name" and t.text == d.record,
                                 start=(self.decl_name_span(d).end_line, self.decl_name_span(d).end_column), limit=2)
            rec = self.ix.globals.get(d.record)
            if t is not None and rec is not None:
                self.ref(t.span(path), rec)
            for row in d.rows:
                for fname, value in row.values:
                    if fname is not None:
                        ft = self.name_token_before(path, value.span.line, value.span.column, fname)
                        fs = self.ix.fields.get((d.record, fname))
                        if ft is not None and fs is not None:
                            self.ref(ft.span(path), fs)
                    self.expr(value, _Scope())
        elif isinstance(d, A.BoardDecl):
            if d.spec is not None:
                self.expr(d.spec, _Scope())
            for name, args, _ in d.nodes:
                if isinstance(name, A.Expr):
                    self.expr(name, _Scope())
                for a in args:
                    self.expr(a.value, _Scope())
        elif isinstance(d, A.FuncDecl):
            scope = _Scope()
            self.param_symbols(d.params, scope, d.name, d)
            self.type_refs(d.result)
            self.expr(d.body, scope)
        elif isinstance(d, A.ProcDecl):
            scope = _Scope()
            self.param_symbols(d.params, scope, d.name, d)
            self.block(d.body, scope)
        elif isinstance(d, A.ActionDecl):
            scope = _Scope()
            lets = A.pattern_lets(d)  # the names of the parameters' tuple patterns: parameters here
            self.seen_stmts.update(id(s) for s in lets)
            types = {s.name: _ty(getattr(s.value, "ty", None)) for s in lets}
            for p in d.params:
                if p.shape is None:
                    self.param_symbols([p], scope, d.name, d)
                    continue
                self.expr(p.domain, scope)
                for _hidden, text, bound in p.patterns:
                    for name, span in bound:
                        s = Symbol(name, "param", span, p.span, container=d.name, type=types.get(name, ""),
                                   scope=d.span, detail=f"{name} (in {text}, parameter of {d.name})")
                        self.add_symbol(s)
                        scope.names[name] = s
            self.text_template_refs(d, scope)
            for r in d.requires:
                self.expr(r.test, scope)
            for c in d.costs:
                self.expr(c.target, scope)
                self.expr(c.amount, scope)
            if d.effect is not None:
                self.block(d.effect, _Scope(scope))
        elif isinstance(d, A.EventDecl):
            for p in d.params:
                self.type_refs(p.type)
            self.param_symbols(d.params, None, d.name, d)
        elif isinstance(d, A.TriggerDecl):
            scope = _Scope()
            ev = self.token_after(d.span, lambda t: t.kind == "name" and t.text == d.event, limit=3)
            sym = self.ix.globals.get(d.event)
            if ev is not None and sym is not None and sym.kind == "event":
                self.ref(ev.span(path), sym)
            start = (ev.line, ev.end_column) if ev is not None else None
            for name in d.params:
                t = self.name_token_after(d.span, name, start=start)
                span = t.span(path) if t else d.span
                if t is not None:
                    start = (t.line, t.end_column)
                s = Symbol(name, "param", span, span, container=d.name, scope=d.span,
                           detail=f"{name} (parameter of {d.name})")
                self.add_symbol(s)
                scope.names[name] = s
            if d.condition is not None:
                self.expr(d.condition, scope)
            self.block(d.body, _Scope(scope))
        elif isinstance(d, (A.EndingDecl, A.InvariantDecl)):
            self.expr(d.condition, _Scope())
        elif isinstance(d, A.ScoreDecl):
            scope = _Scope()
            t = self.name_token_after(d.span, d.param, limit=3)
            if t is not None:
                s = Symbol(d.param, "param", t.span(path), t.span(path), container=d.name, scope=d.span,
                           type="player", detail=f"{d.param}: player (the player scored)")
                self.add_symbol(s)
                scope.names[d.param] = s
            self.expr(d.value, scope)
        elif isinstance(d, A.ScenarioDecl):
            if id(d) in self.scenario_scopes:
                return  # walked already, before a scenario that continues it
            self.scenario_scopes[id(d)] = None
            scope = _Scope(self._continued_scope(d))
            toks = self.ix.tokens.get(path, ())
            i = self._tok_index(path, d.span.line, d.span.column)
            end = (d.span.end_line, d.span.end_column)
            while i + 2 < len(toks) and (toks[i].line, toks[i].column) < end:  # `with variant NAME`
                if toks[i].text == "with" and toks[i + 1].text == "variant" and toks[i + 2].kind == "name":
                    sym = self.ix.variants.get(toks[i + 2].text)
                    if sym is not None:
                        self.ref(toks[i + 2].span(path), sym)
                i += 1
            blocks = [b for _, b in d.parts] if d.parts else d.given + d.when + d.then
            for b in blocks:
                self.block(b, scope, new_scope=False)
            self.scenario_scopes[id(d)] = scope
        elif isinstance(d, A.ExtendDecl):
            t = self.token_after(d.span, lambda t: t.kind == "name" and t.text == d.target, limit=2)
            target = self.ix.globals.get(d.target)
            if t is not None and target is not None:
                self.ref(t.span(path), target)
            scope = _Scope()
            td = self.prog.decls.get(d.target)
            if isinstance(td, (A.ProcDecl, A.ActionDecl)):
                for p in td.params:
                    sym = self._param_symbol(td, p.name)
                    if sym is not None:
                        scope.names[p.name] = sym
            self.block(d.body, scope)

    def _continued_scope(self, d: A.ScenarioDecl) -> Optional[_Scope]:
        """For `scenario "B" after "A"`: the reference from the name "A" to scenario A, and the scope A's blocks
        ended in (its locals are known in B's blocks), A walked first if it was not; None for any other
        scenario, and for one whose chain of `after` is broken (a name no scenario has, a cycle)."""
        if d.after is None:
            return None
        target = self.scenario_symbols.get(d.after)
        if target is not None and d.after_span is not None:
            self.ref(d.after_span, target)
        if self._scenarios_by_name is None:
            self._scenarios_by_name = self.prog.scenarios_by_name()
        parent = self._scenarios_by_name.get(d.after)
        if parent is None:
            return None
        # d is marked as being walked (in scenario_scopes): a cycle back to it ends the walk there
        path, _known, whole = self.prog.scenario_walk(parent, self._scenarios_by_name, self.scenario_scopes,
                                                      self._broken_scenarios)
        if not whole:
            self._broken_scenarios.update(id(part) for part in path)
            return None
        for earlier in reversed(path):  # the first one first: each walks with its own parent walked, no deep recursion
            self.walk_decl(earlier)
        return self.scenario_scopes.get(id(parent))

    def _param_symbol(self, decl: A.Decl, name: str) -> Optional[Symbol]:
        got = self.params.get((id(decl.span), name))  # looked up, not searched: many extends stay quick
        return got[1] if got is not None and got[0] is decl.span else None

    def block(self, b: Optional[A.Block], scope: _Scope, new_scope: bool = True) -> None:
        if b is None:
            return
        s = _Scope(scope) if new_scope else scope
        for st in b.stmts:
            if id(st) in self.seen_stmts:
                continue
            self.seen_stmts.add(id(st))
            self.stmt(st, s, b)

    def stmt(self, s: A.Stmt, scope: _Scope, block: A.Block) -> None:
        """Index a statement: visit_<Statement>, else generic_visit (its blocks and expressions)."""
        self.visit(s, scope, block)

    def visit_Let(self, s: A.Let, scope: _Scope, block: A.Block) -> None:
        path = s.span.path
        self.expr(s.value, scope)
        if A.is_hidden(s.name):  # the tuple of a pattern (`let (a, b) = t`): no name of the file
            return
        t = self.name_token_after(s.span, s.name, limit=3)
        span = t.span(path) if t else s.span
        region = A.Span(path, s.span.line, s.span.column, block.span.end_line, block.span.end_column)
        self.local(s.name, span, region, scope, self.owner, ty=getattr(s.value, "ty", None), decl_span=s.span)

    def visit_For(self, s: A.For, scope: _Scope, block: A.Block) -> None:
        path = s.span.path
        self.expr(s.source, scope)
        inner = _Scope(scope)
        start = None
        for n in s.names:
            if A.is_hidden(n):  # a tuple pattern's tuple: its names are the Lets first in the body
                continue
            t = self.name_token_after(s.span, n, start=start, limit=4)
            if t is not None:
                start = (t.line, t.end_column)
            self.local(n, t.span(path) if t else s.span, s.span, inner, self.owner)
        self.block(s.body, inner, new_scope=False)

    def visit_Offer(self, s: A.Offer, scope: _Scope, block: A.Block) -> None:
        path = s.span.path
        end = (s.player.span.line, s.player.span.column) if s.player is not None else None
        start = None
        for n in s.actions:
            t = self.name_token_after(s.span, n, start=start)
            if t is None or (end is not None and (t.line, t.column) > end):
                continue
            start = (t.line, t.end_column)
            sym = self.ix.globals.get(n)
            if sym is not None and sym.kind == "action":
                self.ref(t.span(path), sym)
        if s.player is not None:
            self.expr(s.player, scope)

    def visit_Emit(self, s: A.Emit, scope: _Scope, block: A.Block) -> None:
        path = s.span.path
        t = self.name_token_after(s.span, s.event, limit=2)
        sym = self.ix.globals.get(s.event)
        if t is not None and sym is not None and sym.kind == "event":
            self.ref(t.span(path), sym)
        for a in s.args:
            self.expr(a, scope)

    def visit_If(self, s: A.If, scope: _Scope, block: A.Block) -> None:
        for test, body in s.branches:
            self.expr(test, scope)
            self.block(body, scope)
        if s.orelse is not None:
            self.block(s.orelse, scope)

    def visit_Reveal(self, s: A.Reveal, scope: _Scope, block: A.Block) -> None:
        self.expr(s.item, scope)
        if not (isinstance(s.to, A.Name) and s.to.ident == "all"):
            self.expr(s.to, scope)

    def generic_visit(self, s: A.Stmt, scope: _Scope, block: A.Block) -> None:  # any other statement: its parts
        for child in A.iter_child_nodes(s):  # (citations are text: no nodes)
            if isinstance(child, A.Block):
                self.block(child, scope)
            elif isinstance(child, A.Expr):
                self.expr(child, scope)

    def expr(self, e: Optional[A.Expr], scope: Optional[_Scope]) -> None:
        """Resolve the names of an expression (an explicit stack: expressions may be deep)."""
        stack: list[tuple[Any, Optional[_Scope]]] = [(e, scope)]
        while stack:
            e, scope = stack.pop()
            if e is None or not isinstance(e, A.Expr):
                continue
            if isinstance(e, A.Name):
                self.name(e, scope, e.ty)
            elif isinstance(e, A.Call):
                f = e.func
                if isinstance(f, A.Name):
                    self.name(f, scope, e.ty if f.ident in FUNCTIONS or f.ref == "func" else f.ty, call=True)
                else:
                    stack.append((f, scope))
                for a in e.args:
                    stack.append((a.value, scope))
            elif isinstance(e, A.Field):
                stack.append((e.target, scope))
                self._pending_field(e)
            elif isinstance(e, A.Lambda):
                inner = _Scope(scope)
                t = self.name_token_after(e.span, e.param, limit=1)
                if t is not None:
                    self.local(e.param, t.span(e.span.path), e.span, inner, self.owner)
                stack.append((e.body, inner))
            elif isinstance(e, A.Comprehension):
                stack.append((e.source, scope))
                inner = _Scope(scope)
                assert e.element is not None  # (the grammar gives every comprehension its element)
                after = e.value.span if (e.kind == "map" and e.value is not None) else e.element.span
                start = (after.end_line, after.end_column)
                for n in e.names:
                    if A.is_hidden(n):
                        continue
                    t = self.name_token_after(e.span, n, start=start)
                    if t is not None:
                        start = (t.line, t.end_column)
                        self.local(n, t.span(e.span.path), e.span, inner, self.owner)
                for _hidden, _text, bound in e.patterns:  # the names of its tuple patterns (bound by Binds)
                    for n, span in bound:
                        self.local(n, span, e.span, inner, self.owner)
                for x in (e.element, e.value, e.condition):
                    stack.append((x, inner))
            elif isinstance(e, A.Bind) and not A.is_hidden(e.name):  # a pattern's name: bound above
                stack.append((e.value, scope))
                stack.append((e.body, scope))
            elif isinstance(e, A.New):
                t = self.name_token_after(e.span, e.kind, limit=2)
                sym = self.ix.globals.get(e.kind)
                if t is not None and sym is not None and sym.kind == "piece":
                    self.ref(t.span(e.span.path), sym)
                for a in e.args:
                    if a.name is not None:
                        fs = self.ix.fields.get((e.kind, a.name))
                        ft = self.name_token_after(a.span, a.name, limit=1)
                        if fs is not None and ft is not None:
                            self.ref(ft.span(a.span.path), fs)
                    stack.append((a.value, scope))
            elif isinstance(e, (A.Choose, A.Roll, A.Draw, A.Placeholder, A.Unary, A.Binary, A.Cond, A.Index,
                                A.TupleLit, A.ListLit, A.SetLit, A.MapLit, A.Bind)):
                stack.extend((child, scope) for child in A.iter_child_nodes(e))  # (only expressions are read)
        self._flush_fields()

    _fields_todo: Optional[list[A.Field]] = None

    def _pending_field(self, e: A.Field) -> None:
        # a field's record is known from the type of the value before the dot, which the checker set
        if self._fields_todo is None:
            self._fields_todo = []
        self._fields_todo.append(e)

    def _flush_fields(self) -> None:
        todo, self._fields_todo = self._fields_todo or [], None
        for e in todo:
            tt = getattr(e.target, "ty", None)
            fs = None
            if isinstance(tt, T.Type) and tt.kind in ("record", "piece"):
                fs = self.ix.fields.get((tt.name, e.name))
            elif tt is None or (isinstance(tt, T.Type) and tt.name == "any"):
                fs = self.unique_fields.get(e.name)
            if fs is None:
                continue
            t = self.last_name_token_in(e.span, e.name)
            if t is not None:
                self.ref(t.span(e.span.path), fs, e.ty)

    def name(self, n: A.Name, scope: Optional[_Scope], ty: Any, call: bool = False) -> None:
        ident = n.ident
        sym = scope.lookup(ident) if scope is not None else None
        if sym is None:
            sym = self.ix.globals.get(ident)
        if sym is None and (ident in FUNCTIONS or ident in VALUES or ident in SCENARIO_VALUES
                            or ident in BOARD_GENERATORS):
            sym = self.builtin(ident)
        if sym is None:
            return
        sp = n.span
        span = A.Span(sp.path, sp.line, sp.column, sp.line, sp.column + len(ident))
        self.ref(span, sym, ty)


def _comment_of(line: str) -> str:
    """The comment at the end of a line (outside strings), or ""."""
    for t in _TOKEN_RE.finditer(line):
        if t.lastgroup == "comment":
            return t.group().lstrip("#").strip()
    return ""


def _params_text(params: list[A.Param]) -> str:
    out = []
    for p in params:
        s = A.param_text(p)
        if p.type is not None:
            s += f": {_type_text(p.type)}"
        if p.domain is not None:
            s += " in ..."
        out.append(s)
    return ", ".join(out)


def _detail(d: A.Decl) -> str:
    """One line saying how a declaration is written (its header, without the body)."""
    prefix = "override " if d.mode == "override" else ""
    if isinstance(d, A.ConstDecl):
        return f"{prefix}const {d.name}" + (f": {_type_text(d.type)}" if d.type else "")
    if isinstance(d, A.VarDecl):
        vis = f" visible to {d.visibility}" if d.visibility != "all" else ""
        return f"{prefix}{'per player ' if d.per_player else ''}var {d.name}: {_type_text(d.type)}{vis}"
    if isinstance(d, A.EnumDecl):
        return f"{prefix}enum {d.name} {{ {', '.join(d.members)} }}"
    if isinstance(d, (A.RecordDecl, A.PieceDecl)):
        return f"{prefix}{d.kind} {d.name} {{ " + ", ".join(f"{f.name}: {_type_text(f.type)}" for f in d.fields) + " }"
    if isinstance(d, A.TableDecl):
        return f"{prefix}table {d.name}: {d.record} ({len(d.rows)} rows)"
    if isinstance(d, A.BoardDecl):
        if d.spec is not None and isinstance(d.spec, A.Call) and isinstance(d.spec.func, A.Name):
            return f"{prefix}board {d.name} = {d.spec.func.ident}(...)"
        return f"{prefix}board {d.name}"
    if isinstance(d, A.FuncDecl):
        res = f": {_type_text(d.result)}" if d.result is not None else ""
        return f"{prefix}function {d.name}({_params_text(d.params)}){res}"
    if isinstance(d, A.ProcDecl):
        if d.proc_kind in ("setup", "flow"):
            return f"{prefix}{d.proc_kind}"
        if d.proc_kind == "phase":
            return f"{prefix}phase {d.name}"
        return f"{prefix}procedure {d.name}({_params_text(d.params)})"
    if isinstance(d, A.ActionDecl):
        return f"{prefix}action {d.name}({_params_text(d.params)})" + (f'  text "{d.text}"' if d.text else "")
    if isinstance(d, A.EventDecl):
        return f"{prefix}event {d.name}({_params_text(d.params)})"
    if isinstance(d, A.TriggerDecl):
        return f"when {d.event}({', '.join(d.params)})"
    if isinstance(d, A.EndingDecl):
        return f'{prefix}ending "{d.name}"'
    if isinstance(d, A.InvariantDecl):
        return f'{prefix}invariant "{d.name}"'
    if isinstance(d, A.ScoreDecl):
        return f"{prefix}{'tiebreak' if d.tiebreak else 'heuristic' if d.heuristic else 'score'} {d.param} = ..."
    if isinstance(d, A.ScenarioDecl):
        return f'scenario "{d.name}"' + (f' after "{d.after}"' if d.after is not None else "")
    if isinstance(d, A.VariantDecl):
        return f"variant {d.name}" + (f' "{d.description}"' if d.description else "")
    return d.kind


def build_index(program: Program, checker: Optional[Checker] = None) -> SymbolIndex:
    """The symbol index of a merged program (program.build_program); ``checker`` (check_program's result,
    or None) supplies the types."""
    return _Builder(program, checker, program.sources).build()


# ------------------------------------------------------------------------------------------- analysis

@attrs.define
class Analysis:
    """One check of a text: the diagnostics `rulelang check` gives, and the symbol index (None when the
    text did not parse: a syntax error, or a file that is not rule text)."""
    path: str
    text: str
    diagnostics: list
    index: Optional[SymbolIndex]


def analyse(path: str, text: Optional[str] = None, variants: Iterable[str] = (), root: Optional[str] = None,
            on_diagnostics: Optional[Callable[[list], object]] = None) -> Analysis:
    """Check ``text`` (read from ``path`` when None) as `rulelang check` would, keeping the program to
    index its symbols. The diagnostics are exactly `api.check(path, variants, text, root)`'s.

    ``on_diagnostics(diagnostics)``, when given, is called as soon as the diagnostics are known, before
    the index is built; when it returns False the index is not built (the text is out of date)."""
    from .api import _compile, _order
    from .checker import check_program

    seen: dict[str, Any] = {}
    _, diags = _compile(os.fspath(path), text, tuple(variants), root, optimise=False, seen=seen)
    diags = _order(diags)
    prog, checker = seen.get("program"), seen.get("checker")
    index = None
    if on_diagnostics is not None and on_diagnostics(diags) is False:
        prog = None
    if prog is not None:
        if checker is None:
            # errors while merging (e.g. a name declared twice): index the names without the checker's types
            try:
                checker = check_program(prog)
            except Exception:  # noqa: BLE001 - the index is a help: it goes without types
                checker = None
        try:
            index = build_index(prog, checker)
        except RecursionError:
            index = None
    if text is None:
        src = seen["program"].sources.get(os.fspath(path)) if seen.get("program") is not None else None
        text = src.text if src is not None else ""
    return Analysis(os.fspath(path), text, diags, index)

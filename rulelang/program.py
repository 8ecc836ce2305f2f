"""Parsed files -> one Program: follows `extends`, applies the chosen variants, merges declarations.

Order of application: the base file (a house-rule file's `extends` parent first, then the file
itself), then each chosen variant in the order given. A declaration introduces a new name; an
`override` declaration replaces an existing one of the same kind; `extend NAME { ... }` appends
statements to a procedure, phase, setup, flow or an action's effect.
"""
from __future__ import annotations

import os
from typing import Optional

import attrs

from . import ast as A
from .diagnostics import ERROR, Source
from .parser import parse

MAX_EXTENDS_DEPTH = 16
MAX_FILE_BYTES = 1_000_000  # a rule file of a large game is ~100 KB; 1 MB still checks in seconds


@attrs.define
class Program:
    path: str
    sources: dict  # path -> Source
    game: Optional[A.GameDecl] = None
    decls: dict = attrs.Factory(dict)  # name -> Decl (consts, vars, enums, records, tables, boards, procs, funcs, actions, events)
    members: dict = attrs.Factory(dict)  # enum member / table row name -> declaring Enum/Table decl
    triggers: list = attrs.Factory(list)
    endings: list = attrs.Factory(list)
    score: Optional[A.ScoreDecl] = None
    tiebreak: Optional[A.ScoreDecl] = None
    scenarios: list = attrs.Factory(list)
    variants: dict = attrs.Factory(dict)  # name -> VariantDecl (declared anywhere in the files)
    active_variants: tuple = ()
    order: list = attrs.Factory(list)  # declaration names in source order

    def of_kind(self, kind):
        return [d for d in self.decls.values() if d.kind == kind]


def read_source(path: str):
    """Read a rule file as text. Returns (text, diagnostic-or-None)."""
    src = Source("", path)
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            return None, src.diag("E010", f"file is too large ({size} bytes; the limit is {MAX_FILE_BYTES})", 1, 1)
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None, src.diag("E011", "no such file", 1, 1, hint="check the path")
    except IsADirectoryError:
        return None, src.diag("E011", "this is a folder, not a rule file", 1, 1)
    except OSError as e:
        return None, src.diag("E011", f"cannot read the file ({e.strerror})", 1, 1)
    if b"\x00" in data:
        return None, src.diag("E012", "this is a binary file, not a rule file", 1, 1,
                              hint="rule files are UTF-8 text")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        return None, src.diag("E012", "the file is not valid UTF-8 text", line, 1, hint="save it as UTF-8")


class Merger:
    def __init__(self):
        self.diags = []
        self.sources = {}

    def err(self, node, code, message, hint="", severity=ERROR):
        span = node.span
        src = self.sources.get(span.path) or Source("", span.path)
        self.diags.append(src.diag(code, message, span.line, span.column, severity=severity, hint=hint,
                                   end_line=span.end_line, end_column=span.end_column))

    # -------------------------------------------------------------- files
    def load_file(self, path, text=None, depth=0, chain=()):
        """Return the list of items of a file with its `extends` parents expanded (parents first)."""
        if text is None:
            text, d = read_source(path)
            if d:
                self.diags.append(d)
                return []
        elif len(text) > MAX_FILE_BYTES:
            self.diags.append(Source("", path).diag(
                "E010", f"the rules are too large ({len(text)} characters; the limit is {MAX_FILE_BYTES})", 1, 1))
            return []
        module, diags = parse(text, path)
        self.sources[path] = Source(text, path)
        self.diags.extend(diags)
        if module is None:
            return []
        items = []
        for item in module.items:
            if isinstance(item, A.ExtendsDecl):
                if depth >= MAX_EXTENDS_DEPTH:
                    self.err(item, "E013", "too many nested 'extends'", hint="a file extends another at most 16 deep")
                    continue
                base = os.path.normpath(os.path.join(os.path.dirname(path) or ".", item.path))
                if os.path.abspath(base) in chain or os.path.abspath(base) == os.path.abspath(path):
                    self.err(item, "E014", f"'{item.path}' extends itself (a cycle of extends)")
                    continue
                if not os.path.exists(base):
                    self.err(item, "E011", f"the base rule file '{item.path}' does not exist",
                             hint="paths in 'extends' are relative to this file")
                    continue
                items.extend(self.load_file(base, None, depth + 1, chain + (os.path.abspath(path),)))
            else:
                items.append(item)
        return items

    # -------------------------------------------------------------- merge
    def add(self, prog: Program, item, origin: str):
        item.origin = origin
        if isinstance(item, A.ExtendsDecl):
            self.err(item, "E104", "'extends' names the base file of a house-rule file; it cannot stand in a variant",
                     hint="put extends \"base.rules\" at the top of a file of its own")
            return
        if isinstance(item, A.GameDecl):
            if prog.game is not None and item.mode != "override":
                # a house-rule file may restate the header; the later one wins
                pass
            prog.game = item
            return
        if isinstance(item, A.VariantDecl):
            if origin.startswith("variant "):
                self.err(item, "E104", "a variant cannot declare another variant")
                return
            if item.name in prog.variants:
                self.err(item, "E101", f"variant '{item.name}' is declared twice",
                         hint=f"the first is at {prog.variants[item.name].span.where()}")
                return
            prog.variants[item.name] = item
            return
        if isinstance(item, A.TriggerDecl):
            prog.triggers.append(item)
            return
        if isinstance(item, A.EndingDecl):
            for old in prog.endings:
                if old.name == item.name:
                    if item.mode == "override":
                        prog.endings[prog.endings.index(old)] = item
                        return
                    self.err(item, "E101", f"ending \"{item.name}\" is declared twice",
                             hint=f"the first is at {old.span.where()}; write 'override ending' to replace it")
                    return
            if item.mode == "override":
                self.err(item, "E102", f"there is no ending \"{item.name}\" to override")
                return
            prog.endings.append(item)
            return
        if isinstance(item, A.ScoreDecl):
            attr = "tiebreak" if item.tiebreak else "score"
            old = getattr(prog, attr)
            if old is not None and item.mode != "override":
                self.err(item, "E101", f"'{attr}' is declared twice",
                         hint=f"the first is at {old.span.where()}; write 'override {attr}' to replace it")
                return
            setattr(prog, attr, item)
            return
        if isinstance(item, A.ScenarioDecl):
            prog.scenarios.append(item)
            return
        if isinstance(item, A.ExtendDecl):
            target = prog.decls.get(item.target)
            if isinstance(target, A.ProcDecl):
                target.body = A.Block(stmts=list(target.body.stmts) + list(item.body.stmts), span=target.body.span)
            elif isinstance(target, A.ActionDecl):
                if target.effect is None:
                    target.effect = item.body
                else:
                    target.effect = A.Block(stmts=list(target.effect.stmts) + list(item.body.stmts),
                                            span=target.effect.span)
            else:
                what = "not declared" if target is None else f"a {target.kind}"
                self.err(item, "E103", f"cannot extend '{item.target}': it is {what}",
                         hint="'extend' adds statements to setup, flow, a phase, a procedure or an action's effect")
            return
        old = prog.decls.get(item.name)
        if item.mode == "override":
            if old is None:
                self.err(item, "E102", f"there is no {item.kind} '{item.name}' to override",
                         hint="drop 'override' to declare something new")
                return
            if old.kind != item.kind:
                self.err(item, "E105", f"'{item.name}' is a {old.kind}; it cannot be overridden by a {item.kind}")
                return
            self._forget_members(prog, old)
            prog.decls[item.name] = item
            self._add_members(prog, item)
            return
        if old is not None or item.name in prog.members:
            first = old.span.where() if old is not None else prog.members[item.name].span.where()
            self.err(item, "E101", f"'{item.name}' is declared twice",
                     hint=f"the first is at {first}; write 'override {item.kind}' to replace it in a variant")
            return
        prog.decls[item.name] = item
        prog.order.append(item.name)
        self._add_members(prog, item)

    def _members_of(self, item):
        if isinstance(item, A.EnumDecl):
            return list(zip(item.members, item.member_spans))
        if isinstance(item, A.TableDecl):
            return [(r.name, r.span) for r in item.rows]
        if isinstance(item, A.BoardDecl) and item.spec is None:
            names = {}
            for chain in item.edges:
                for n in chain:
                    names.setdefault(n, item.span)
            for n, _, span in item.nodes:
                if isinstance(n, str):
                    names.setdefault(n, span)
            return list(names.items())
        return []

    def _forget_members(self, prog, item):
        for name, _ in self._members_of(item):
            prog.members.pop(name, None)

    def _add_members(self, prog, item):
        for name, span in self._members_of(item):
            if name in prog.decls or name in prog.members:
                other = prog.decls.get(name) or prog.members.get(name)
                src = self.sources.get(span.path) or Source("", span.path)
                self.diags.append(src.diag("E101", f"'{name}' is declared twice", span.line, span.column,
                                           hint=f"the first is at {other.span.where()}; enum members, table rows and graph "
                                                "nodes share one namespace with all other names"))
                continue
            prog.members[name] = item


def build_program(path: str, text: Optional[str] = None, variants=()):
    """Parse a file (and its `extends` chain), apply variants. Returns (Program or None, diagnostics)."""
    m = Merger()
    items = m.load_file(path, text)
    prog = Program(path=path, sources=m.sources)
    if not items and any(d.severity == ERROR for d in m.diags):
        return None, m.diags
    for item in items:
        m.add(prog, item, origin=os.path.basename(path))
    active = []
    for v in variants:
        decl = prog.variants.get(v)
        if decl is None:
            src = m.sources.get(path) or Source("", path)
            known = ", ".join(sorted(prog.variants)) or "none"
            m.diags.append(src.diag("E106", f"unknown variant '{v}'", 1, 1, hint=f"variants in this file: {known}"))
            continue
        if v in active:
            continue
        active.append(v)
        for item in decl.items:
            m.add(prog, item, origin=f"variant {v}")
    prog.active_variants = tuple(active)
    if prog.game is None:
        src = m.sources.get(path) or Source("", path)
        m.diags.append(src.diag("E107", "the file has no 'game' header", 1, 1,
                                hint='start the file with: game "Name" { players 2..4 }'))
    return prog, m.diags

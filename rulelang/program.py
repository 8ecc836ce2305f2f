"""Parsed files -> one Program: follows `extends`, applies the chosen variants, merges declarations.

Order of application: the base file (a house-rule file's `extends` parent first, then the file
itself), then each chosen variant in the order given. A declaration introduces a new name; an
`override` declaration replaces an existing one of the same kind; `extend NAME { ... }` appends
statements to a procedure, phase, setup, flow or an action's effect.
"""
from __future__ import annotations

import copy
import os
import stat
from typing import Any, Container, Iterable, Optional

import attrs

from . import ast as A
from .cache import note as _note_read
from .diagnostics import ERROR, Diagnostic, Source, printable
from .openflags import open_flags
from .parser import parse

MAX_EXTENDS_DEPTH = 16
MAX_FILE_BYTES = 1_000_000  # a rule file of a large game is ~100 KB; 1 MB still checks in seconds
MAX_TOTAL_BYTES = 2_000_000  # the rules with every file they extend, together
MAX_EXTENDED_FILES = 64  # files one set of rules may be built from (the top file and every base file)


@attrs.define
class Program:
    path: str
    sources: dict  # path -> Source
    game: Optional[A.GameDecl] = None
    decls: dict = attrs.Factory(dict)  # name -> Decl (consts, vars, enums, records, tables, boards, procs, funcs, actions, events)
    members: dict = attrs.Factory(dict)  # enum member / table row name -> declaring Enum/Table decl
    triggers: list = attrs.Factory(list)
    endings: list = attrs.Factory(list)
    invariants: list = attrs.Factory(list)  # InvariantDecl, in declaration order
    score: Optional[A.ScoreDecl] = None
    tiebreak: Optional[A.ScoreDecl] = None
    payoff: Optional[A.ScoreDecl] = None  # `payoff p = EXPR` (see "Payoffs" in docs/language.md)
    heuristic: Optional[A.ScoreDecl] = None  # `heuristic p = EXPR` (docs/agents.md, the heuristic agent)
    scenarios: list = attrs.Factory(list)
    variants: dict = attrs.Factory(dict)  # name -> VariantDecl (declared anywhere in the files)
    active_variants: tuple = ()
    order: list = attrs.Factory(list)  # declaration names in source order
    root: str = ""  # the folder `extends` stays inside
    rulebook_root: Optional[str] = None  # the folder `rulebook` stays inside (None: any .md file, by a relative path)
    replaced: list = attrs.Factory(list)  # (old, new) for every `override` applied (read by the lint W315)
    extensions: list = attrs.Factory(list)  # every `extend` applied (read by the lint W315)

    def of_kind(self, kind: str) -> list[Any]:
        return [d for d in self.decls.values() if d.kind == kind]

    def scenario_chain(self, scenario: A.ScenarioDecl, by_name: Optional[dict] = None
                       ) -> tuple[list, Optional[A.ScenarioDecl]]:
        """The scenarios ``scenario`` continues (`scenario "B" after "A"`), the first one (which continues
        none) first and ``scenario`` itself last; and the scenario whose `after` stops the chain short, or
        None when it is whole. It stops at a name no scenario has, or at a scenario already in the chain (a
        cycle). ``by_name`` is ``scenarios_by_name()``, for a caller that asks for many chains."""
        if by_name is None:
            by_name = self.scenarios_by_name()
        chain, seen = [scenario], {id(scenario)}
        while chain[-1].after is not None:
            parent = by_name.get(chain[-1].after)
            if parent is None or id(parent) in seen:
                return chain[::-1], chain[-1]
            chain.append(parent)
            seen.add(id(parent))
        return chain[::-1], None

    @staticmethod
    def scenario_walk(scenario: A.ScenarioDecl, by_name: dict, known: Container[int], broken: set
                      ) -> tuple[list, Optional[A.ScenarioDecl], bool]:
        """Follow `after` up from ``scenario`` until a scenario whose id is in ``known`` (one the caller has
        dealt with), the first scenario of the chain, or a break: a name no scenario has, a cycle, or a
        scenario whose id is in ``broken``. Returns the scenarios walked over (``scenario`` first, the
        known one not included), the known scenario reached (or None) and whether the chain is whole.
        A caller that adds the walked ids of a broken chain to ``broken`` and those it dealt with to
        ``known`` walks over each scenario of a file once in all: linear time for any chains and cycles."""
        path: list = []
        seen: set = set()
        now = scenario
        while True:
            if id(now) in known:
                return path, now, True
            if id(now) in broken or id(now) in seen:
                return path, None, False
            path.append(now)
            seen.add(id(now))
            if now.after is None:
                return path, None, True
            parent = by_name.get(now.after)
            if parent is None:
                return path, None, False
            now = parent

    def scenarios_by_name(self) -> dict:
        """name -> scenario; a name written twice means its first scenario."""
        by_name: dict = {}
        for sc in self.scenarios:
            by_name.setdefault(sc.name, sc)
        return by_name


def show_path(path: object) -> str:
    """A path as it may be shown in a message: no control characters, no lone surrogates."""
    return printable(path)


def bad_name(path: str) -> str:
    """Why ``path`` cannot be a file name at all (a NUL byte, a lone surrogate), or ``""``."""
    if "\x00" in path:
        return "the path contains a NUL character"
    try:
        os.fsencode(path)
    except (UnicodeError, ValueError):
        return "the path is not valid text"
    return ""


class FileProblem(Exception):
    """A file that cannot be read as a rule file or rulebook; ``str()`` is a message that never
    quotes the file's content."""


def read_limited(path: str, limit: int = MAX_FILE_BYTES, follow: bool = True) -> bytes:
    """The bytes of a regular file, reading at most ``limit + 1`` bytes: special files (devices,
    FIFOs, sockets) and folders are refused without reading, a FIFO cannot block (``O_NONBLOCK``).
    ``follow=False`` refuses a symbolic link as the last component (for a path already resolved
    and checked, so that a link swapped in afterwards is not followed). Raises FileProblem."""
    problem = bad_name(path)
    if problem:
        raise FileProblem(problem)
    flags = open_flags(follow)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileProblem("no such file") from None
    except IsADirectoryError:
        raise FileProblem("this is a folder, not a file") from None
    except OSError as e:
        raise FileProblem(f"cannot read the file ({e.strerror or 'error'})") from None
    except ValueError:
        raise FileProblem("the path is not valid text") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise FileProblem("this is a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise FileProblem("this is a device, pipe or socket, not a regular file")
        if st.st_size > limit:
            raise FileProblem(f"file is too large ({st.st_size} bytes; the limit is {limit})")
        chunks, got = [], 0
        while got <= limit:
            try:
                chunk = os.read(fd, min(1 << 16, limit + 1 - got))
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise FileProblem(f"file is too large (more than {limit} bytes; the limit is {limit})")
        return b"".join(chunks)
    except OSError as e:
        raise FileProblem(f"cannot read the file ({e.strerror or 'error'})") from None
    finally:
        os.close(fd)


def within(path: str, root: str) -> bool:
    """Whether ``path``, with every symbolic link resolved, lies inside the folder ``root``."""
    real = os.path.realpath(path)
    top = os.path.realpath(root)
    try:
        return os.path.commonpath([real, top]) == top
    except ValueError:
        return False


def read_source(path: str, real: Optional[str] = None) -> tuple[Optional[str], Optional[Diagnostic]]:
    """Read a rule file as text (from ``real``, its resolved path, when given: not following a
    symbolic link swapped in since). Returns (text, diagnostic-or-None)."""
    src = Source("", path)
    try:
        data = read_limited(real or path, follow=real is None)
    except FileProblem as e:
        _note_read(path)  # for the check cache (rulelang/cache.py): what stood there
        msg = str(e)
        if msg == "no such file":
            return None, src.diag("E011", "no such file", 1, 1, hint="check the path")
        if msg.startswith("file is too large"):
            return None, src.diag("E010", msg, 1, 1)
        if msg.startswith("this is a folder"):
            return None, src.diag("E011", "this is a folder, not a rule file", 1, 1)
        return None, src.diag("E011", msg, 1, 1)
    _note_read(path, data)
    if b"\x00" in data:
        return None, src.diag("E012", "this is a binary file, not a rule file", 1, 1,
                              hint="rule files are UTF-8 text")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        return None, src.diag("E012", "the file is not valid UTF-8 text", line, 1, hint="save it as UTF-8")


def _rules_before(text: str, line: int) -> bool:
    """Whether some rule text (a line that is neither blank nor a comment) comes before ``line``:
    a file whose first error comes before any rule is not taken for rule text."""
    for ln in text.splitlines()[: max(0, line - 1)]:
        stripped = ln.strip()
        if stripped and not stripped.startswith("#"):
            return True
    return False


class Merger:
    def __init__(self, root: str, parses: Optional[dict] = None):
        self.diags: list[Diagnostic] = []
        # (path, text) -> parse's result, shared by the builds of one check (the base rules and each
        # variant): the parsed nodes are never changed here (see the `extend` below), so one parse serves all
        self.parses = parses
        self.sources: dict[str, Source] = {}
        self.root = root  # the folder every `extends` must stay inside (set by build_program)
        self.included: dict[str, str] = {}  # real path of every file taken in -> the path of the file that named it first
        self.total_bytes = 0  # text taken in so far, every file together (at most MAX_TOTAL_BYTES)

    def err(self, node: Any, code: str, message: str, hint: str = "", severity: str = ERROR) -> None:
        span = node.span
        src = self.sources.get(span.path) or Source("", span.path)
        self.diags.append(src.diag(code, message, span.line, span.column, severity=severity, hint=hint,
                                   end_line=span.end_line, end_column=span.end_column))

    # -------------------------------------------------------------- files
    def load_file(self, path: str, text: Optional[str] = None, depth: int = 0, chain: tuple[str, ...] = (),
                  via: Optional[A.ExtendsDecl] = None) -> list[Any]:
        """Return the list of items of a file with its `extends` parents expanded (parents first).
        ``via`` is the `extends` declaration naming this file (None for the top file)."""
        if text is None:
            text, d = read_source(path, os.path.realpath(path) if via is not None else None)
            if d:
                if via is None:
                    self.diags.append(d)
                else:
                    self.err(via, d.code, f"the base rule file '{show_path(via.path)}' cannot be used: {d.message}",
                             hint=d.hint)
                return []
            assert text is not None  # (read_source gives the text or a diagnostic)
        elif len(text) > MAX_FILE_BYTES:
            self.diags.append(Source("", path).diag(
                "E010", f"the rules are too large ({len(text)} characters; the limit is {MAX_FILE_BYTES})", 1, 1))
            return []
        self.total_bytes += len(text)
        if via is not None and self.total_bytes > MAX_TOTAL_BYTES:
            self.err(via, "E010", f"the rules and the files they extend are too large together (more than "
                                  f"{MAX_TOTAL_BYTES:,} characters)",
                     hint="extend fewer or smaller files")
            return []
        parsed = None if self.parses is None else self.parses.get((path, text))
        if parsed is None:
            parsed = parse(text, path)
            if self.parses is not None:
                self.parses[(path, text)] = parsed
        module, diags = parsed
        if via is not None:
            errors = [d for d in diags if d.severity == ERROR]
            if (module is None or errors) and not _rules_before(text, min((d.line for d in errors), default=1)):
                # not rule text at all: say so without quoting a line of it
                self.err(via, "E016", f"'{show_path(via.path)}' is not a rule file (it does not parse as rules "
                                      f"from its first line on)",
                         hint="'extends' names another .rules file; run 'rulelang check' on that file to see why")
                return []
        self.sources[path] = Source(text, path)
        self.diags.extend(diags)
        if module is None:
            return []
        items: list[Any] = []
        here = os.path.realpath(path)
        for item in module.items:
            if isinstance(item, A.ExtendsDecl):
                if depth >= MAX_EXTENDS_DEPTH:
                    self.err(item, "E013", "too many nested 'extends'", hint="a file extends another at most 16 deep")
                    continue
                base = self.resolve_extends(item, path)
                if base is None:
                    continue
                real = os.path.realpath(base)
                if real in chain or real == here:
                    self.err(item, "E014", f"'{show_path(item.path)}' extends itself (a cycle of extends)")
                    continue
                if real in self.included:  # each file is taken in once: a repeat or a diamond
                    first = self.included[real]
                    if self.root and within(first, self.root):
                        first = os.path.relpath(first, self.root)
                    self.err(item, "E014", f"'{show_path(item.path)}' is already part of these rules (named "
                                           f"by {show_path(first)}): a file is taken in once",
                             hint="remove this 'extends'; its declarations are there already")
                    continue
                if len(self.included) + 1 >= MAX_EXTENDED_FILES:
                    self.err(item, "E013", f"these rules extend more than {MAX_EXTENDED_FILES - 1} files",
                             hint="merge some of the base files")
                    continue
                self.included[real] = path
                items.extend(self.load_file(base, None, depth + 1, chain + (here,), via=item))
            else:
                items.append(item)
        return items

    def resolve_extends(self, item: A.ExtendsDecl, path: str) -> Optional[str]:
        """The path of the file an `extends` names, or None (with a diagnostic) if it may not be read."""
        raw = item.path
        shown = show_path(raw)
        problem = bad_name(raw)
        if problem:
            self.err(item, "E015", f"'{shown}' cannot be a file name: {problem}")
            return None
        if os.path.isabs(raw) or raw.startswith("~"):
            self.err(item, "E015", f"'extends' takes a path relative to this file, not '{shown}'",
                     hint="name a .rules file in this folder or below it")
            return None
        if not raw.endswith(".rules"):
            self.err(item, "E015", f"'{shown}' is not a .rules file",
                     hint="'extends' names another rule file, whose name ends in .rules")
            return None
        base = os.path.normpath(os.path.join(os.path.dirname(path) or ".", raw))
        if not within(base, self.root):
            _note_read(base)
            self.err(item, "E015", f"'{shown}' is outside the rules folder",
                     hint=f"'extends' may only name files inside {show_path(self.root)} (the folder of the "
                          "top file, unless a wider one is given with --root or root=)")
            return None
        if not os.path.lexists(base):
            _note_read(base)
            self.err(item, "E011", f"the base rule file '{shown}' does not exist",
                     hint="paths in 'extends' are relative to this file")
            return None
        return base

    # -------------------------------------------------------------- merge
    def add(self, prog: Program, item: Any, origin: str) -> None:
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
            if item.mode == "override":
                if item.name not in prog.variants:
                    self.err(item, "E102", f"there is no variant '{item.name}' to override",
                             hint="drop 'override' to declare a new variant")
                    return
                prog.replaced.append((prog.variants[item.name], item))
                prog.variants[item.name] = item
                return
            if item.name in prog.variants:
                self.err(item, "E101", f"variant '{item.name}' is declared twice",
                         hint=f"the first is at {prog.variants[item.name].span.where()}; write 'override variant' "
                              "to replace it")
                return
            prog.variants[item.name] = item
            return
        if isinstance(item, A.TriggerDecl):
            self._add_trigger(prog, item)
            return
        if isinstance(item, A.EndingDecl):
            for old in prog.endings:
                if old.name == item.name:
                    if item.mode == "override":
                        prog.endings[prog.endings.index(old)] = item
                        prog.replaced.append((old, item))
                        return
                    self.err(item, "E101", f"ending \"{item.name}\" is declared twice",
                             hint=f"the first is at {old.span.where()}; write 'override ending' to replace it")
                    return
            if item.mode == "override":
                self.err(item, "E102", f"there is no ending \"{item.name}\" to override")
                return
            prog.endings.append(item)
            return
        if isinstance(item, A.InvariantDecl):
            for i, old in enumerate(prog.invariants):
                if old.name == item.name:
                    if item.mode == "override":
                        prog.invariants[i] = item
                        return
                    self.err(item, "E101", f"invariant \"{item.name}\" is declared twice",
                             hint=f"the first is at {old.span.where()}; write 'override invariant' to replace it")
                    return
            if item.mode == "override":
                self.err(item, "E102", f"there is no invariant \"{item.name}\" to override")
                return
            prog.invariants.append(item)
            return
        if isinstance(item, A.ScoreDecl):
            attr = ("payoff" if item.payoff else "tiebreak" if item.tiebreak else
                    "heuristic" if item.heuristic else "score")
            old = getattr(prog, attr)
            if old is not None and item.mode != "override":
                self.err(item, "E101", f"'{attr}' is declared twice",
                         hint=f"the first is at {old.span.where()}; write 'override {attr}' to replace it")
                return
            if old is not None:
                prog.replaced.append((old, item))
            setattr(prog, attr, item)
            return
        if isinstance(item, A.ScenarioDecl):
            if item.mode == "override":
                for i, old in enumerate(prog.scenarios):
                    if old.name == item.name:
                        prog.scenarios[i] = item
                        prog.replaced.append((old, item))
                        return
                self.err(item, "E102", f"there is no scenario \"{item.name}\" to override",
                         hint="drop 'override' to add a new scenario")
                return
            prog.scenarios.append(item)
            return
        if isinstance(item, A.ExtendDecl):
            if item.mode == "override":
                self.err(item, "E105", "'override extend' means nothing: 'extend' adds to a declaration",
                         hint=f"write 'extend {item.target} {{ ... }}' to add statements, or "
                              f"'override' with the whole new declaration of '{item.target}' to replace it")
                return
            prog.extensions.append(item)
            target = prog.decls.get(item.target)
            assert item.body is not None  # (the parser gives every `extend` a body, and every procedure)
            # a new declaration in the old one's place: the parsed one may serve other builds (Merger.parses)
            if isinstance(target, A.ProcDecl):
                assert target.body is not None
                body = A.Block(stmts=list(target.body.stmts) + list(item.body.stmts), span=target.body.span)
                target = prog.decls[item.target] = copy.copy(target)
                target.body = body
            elif isinstance(target, A.ActionDecl):
                target = prog.decls[item.target] = copy.copy(target)
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
            prog.replaced.append((old, item))
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

    def _add_trigger(self, prog: Program, item: A.TriggerDecl) -> None:
        """Triggers are kept in order; one with a label (`when "LABEL": EVENT(...)`) can be overridden by
        that label, in its place. An unlabelled one has nothing to name it by, so it cannot."""
        if item.mode == "override":
            if item.label is None:
                self.err(item, "E102", "an unlabelled trigger cannot be overridden: nothing names the trigger "
                                       "it would replace (this would add a second one)",
                         hint=f'label the trigger in the base file (when "LABEL": {item.event}(...) ...), then '
                              f'write override when "LABEL": {item.event}(...) ...; or drop \'override\' to add one')
                return
            for i, old in enumerate(prog.triggers):
                if old.label == item.label:
                    prog.triggers[i] = item
                    prog.replaced.append((old, item))
                    return
            self.err(item, "E102", f"there is no trigger \"{item.label}\" to override",
                     hint="labels of triggers: " + (", ".join(f'"{t.label}"' for t in prog.triggers if t.label)
                                                    or "none"))
            return
        if item.label is not None:
            for old in prog.triggers:
                if old.label == item.label:
                    self.err(item, "E101", f"trigger \"{item.label}\" is declared twice",
                             hint=f"the first is at {old.span.where()}; write 'override when' to replace it")
                    return
        prog.triggers.append(item)

    def _members_of(self, item: Any) -> list[tuple[str, A.Span]]:
        if isinstance(item, A.EnumDecl):
            return list(zip(item.members, item.member_spans))
        if isinstance(item, A.TableDecl):
            return [(r.name, r.span) for r in item.rows]
        if isinstance(item, A.BoardDecl) and item.spec is None:
            names: dict[str, A.Span] = {}
            for chain in item.edges:
                for n in chain:
                    names.setdefault(n, item.span)
            for n, _, span in item.nodes:
                if isinstance(n, str):
                    names.setdefault(n, span)
            return list(names.items())
        return []

    def _forget_members(self, prog: Program, item: Any) -> None:
        for name, _ in self._members_of(item):
            prog.members.pop(name, None)

    def _add_members(self, prog: Program, item: Any) -> None:
        for name, span in self._members_of(item):
            if name in prog.decls or name in prog.members:
                other = prog.decls.get(name) or prog.members[name]
                src = self.sources.get(span.path) or Source("", span.path)
                self.diags.append(src.diag("E101", f"'{name}' is declared twice", span.line, span.column,
                                           hint=f"the first is at {other.span.where()}; enum members, table rows and graph "
                                                "nodes share one namespace with all other names"))
                continue
            prog.members[name] = item


def default_root(path: str) -> str:
    """The folder `extends` must stay inside when no root is given: the top file's folder."""
    return os.path.dirname(os.path.abspath(path)) if path else os.getcwd()


def build_program(path: str, text: Optional[str] = None, variants: Iterable[str] = (),
                  root: Optional[str] = None,
                  parses: Optional[dict] = None) -> tuple[Optional[Program], list[Diagnostic]]:
    """Parse a file (and its `extends` chain), apply variants. Returns (Program or None, diagnostics).
    ``parses``: a dict that keeps each file's parse for the next build given the same dict.

    ``root`` is the folder that `extends` (and, when given, `rulebook`) paths must stay inside; by
    default the top file's folder (see "Files and paths" in docs/language.md)."""
    m = Merger(os.path.abspath(os.fspath(root)) if root is not None else default_root(path), parses)
    items = m.load_file(path, text)
    prog = Program(path=path, sources=m.sources, root=m.root, rulebook_root=m.root if root is not None else None)
    if not items and any(d.severity == ERROR for d in m.diags):
        return None, m.diags
    for item in items:
        m.add(prog, item, origin=os.path.basename(path))
    active: list[str] = []
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


MAX_RULEBOOK_BYTES = MAX_FILE_BYTES


def read_rulebook(prog: Program) -> tuple[Optional[str], Optional[str]]:
    """The text of the header's rulebook, for the citation lint only: (text, None) or (None, why not).

    Only a regular Markdown file (name ending in .md, at most 1 MB of UTF-8 text) named by a path
    relative to the top file is read; with an explicit root it must lie inside it. Nothing of its
    text but the section ids of its headings is ever shown."""
    game = prog.game
    assert game is not None  # (only a header names a rulebook)
    raw = game.rulebook
    problem = bad_name(raw)
    if problem:
        return None, problem
    if os.path.isabs(raw) or raw.startswith("~"):
        return None, "not read: the path must be relative to this file"
    if not raw.lower().endswith(".md"):
        return None, "not read: a rulebook is a Markdown file ending in .md"
    path = os.path.normpath(os.path.join(os.path.dirname(game.span.path) or ".", raw))
    if prog.rulebook_root is not None and not within(path, prog.rulebook_root):
        _note_read(path)
        return None, "not read: it is outside the rules folder given as root"
    try:
        data = read_limited(path, MAX_RULEBOOK_BYTES)
    except FileProblem as e:
        _note_read(path)
        return None, str(e)
    _note_read(path, data)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "the file is not UTF-8 text"

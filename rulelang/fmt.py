"""`rulelang fmt`: the one canonical layout of rule files (docs/authoring.md, "Formatting").

How it works: the file is parsed (syntax errors are reported as by `rulelang check`, and the file is left
alone), then parsed again into a concrete syntax tree that keeps every token (Lark's ``keep_all_tokens``),
while the comments are found by a scan of the text (a ``#`` outside a string starts one). The output is the
same tokens and comments, in the same order, with the white space between them decided here:

* horizontal: one space around operators, ``=``, ``=>`` and keywords, none inside ``(`` ``[``, before ``,``
  ``:`` ``.`` or after a unary ``-`` / ``?``, none around ``..``; a call's (and a table row's) ``(`` and
  an index's ``[`` stand next to what they apply to; a body in braces has spaces inside (``{ a, b }``),
  a set or map none (``{a: 1}``), an empty one is ``{}``; two spaces before a trailing comment and
  between two statements on one line; the trailing comments of consecutive lines line up (two spaces
  after the longest code among them, as gofmt does);
* indentation: two spaces per block (``{`` of a block, action, table, record, enum, game, variant,
  scenario or board); a line inside brackets opened on an earlier line one level deeper than the line that
  opened them; a line that continues a statement or declaration one level deeper than the statement;
  a comment on its own line at the level of the code that follows it;
* line breaks are the author's (like gofmt), except that every top-level declaration starts a line, and
  a body that spans several lines has its ``{`` end a line and its ``}`` start one;
* blank lines: at most one in a row, none at the start of the file, after an opening bracket or before a
  closing one; one between top-level declarations when either of them spans several lines; single-line
  declarations may stay grouped;
* long lines are never broken nor joined: where to break an expression is the author's choice, and a
  table row stays one line however long it is (rows are data). ``fmt`` does not change a line's length
  except for its white space.

Every output is checked before it is used: it must hold the very same tokens and comments as the input,
else nothing is written (an internal error). ``format_text`` is idempotent (tests/test_fmt.py).
"""
from __future__ import annotations

import difflib
import fnmatch
import functools
import os
import re

from .diagnostics import Diagnostic, printable

INDENT = "  "
MARKDOWN_SUFFIXES = (".md", ".markdown")

# nodes of the concrete syntax tree whose first token starts a line of its own kind (not a continuation)
STARTERS = frozenset({
    "item", "stmt", "elif_part", "else_part",
    "game_decl", "extends_decl", "const_decl", "enum_decl", "record_decl", "table_decl", "var_decl",
    "board_expr", "board_graph", "setup_decl", "flow_decl", "phase_decl", "proc_decl", "func_decl",
    "action_decl", "event_decl", "trigger_decl", "ending_decl", "score_decl", "tiebreak_decl",
    "variant_decl", "override_decl", "extend_decl", "scenario_decl", "piece_decl", "invariant_decl",
    "game_players", "game_rulebook", "game_max_decisions", "field_decl", "piece_field", "row", "board_edges",
    "board_node",
    "board_node_at", "require_clause", "cost_clause", "effect_clause", "text_clause",
    "sc_players", "sc_seed", "sc_variant", "sc_chance", "sc_given", "sc_when", "sc_then",
})
# nodes that may begin with citations (@rule ...): the first token after them starts the line too
CITED = frozenset({"item", "stmt", "require_clause", "cost_clause", "effect_clause"})
# things that may stand side by side on one line, two spaces apart (statements, rows, scenario parts ...)
SIDE_BY_SIDE = frozenset({
    "item", "stmt", "require_clause", "cost_clause", "effect_clause", "text_clause", "row", "board_edges",
    "board_node", "board_node_at", "game_players", "game_rulebook", "game_max_decisions",
    "sc_players", "sc_seed", "sc_variant", "sc_chance", "sc_given", "sc_when", "sc_then",
})
# the '{' of these nodes opens a body (indented one level from the line where the node starts); any
# other '{' (sets, maps, comprehensions) is an expression bracket
BODY_PARENTS = frozenset({"block", "game_decl", "enum_decl", "record_decl", "piece_decl", "table_decl",
                          "action_decl", "variant_decl", "scenario_decl", "board_expr", "board_graph"})
OPENS = {"(": ")", "[": "]", "{": "}"}
CLOSES = frozenset(OPENS.values())
OPERANDS = frozenset({"NAME", "INT", "STRING"})

# a string or a comment: outside strings, '#' only ever starts a comment (see grammar.lark's STRING, COMMENT)
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*')
_FENCE_OPEN = re.compile(r"^([ \t]*)```rules[ \t]*$")
_FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*$")


class FormatError(Exception):
    """A file that cannot be formatted: ``diagnostics`` (positioned, as `rulelang check` prints them)
    or a one-line ``str()``."""

    def __init__(self, message: str, diagnostics=()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


# ------------------------------------------------------------------------------------------ parsing
class _Tree:
    """A node of the concrete syntax tree: the rule's name and every child, tokens included."""
    __slots__ = ("data", "children")

    def __init__(self, data, children):
        self.data, self.children = data, children


@functools.lru_cache(maxsize=1)
def _cst_loop():
    """The language's parser (rulelang/grammar_tables.py, run by rulelang/lalr_loop.py) with, for each
    rule, a callback that builds a tree node holding every token, as Lark's ``keep_all_tokens`` would:
    rules whose name starts with '_' (Lark's own, for repetitions) are inlined, a '?rule' with one child
    is that child."""
    from .grammar_tables import TABLES
    from .lalr_loop import Loop

    def callback_of(name, expand1):
        def callback(raw):
            kids = []
            for c in raw:
                if c.__class__ is _Tree and c.data.startswith("_"):
                    kids.extend(c.children)
                else:
                    kids.append(c)
            if expand1 and len(kids) == 1:
                return kids[0]
            return _Tree(name, kids)
        return callback
    callbacks = [callback_of(name, expand1) for _, _, name, _, _, expand1 in TABLES["rules"]]
    return Loop(TABLES), callbacks


def _cst_parse(text: str):
    """The concrete syntax tree of ``text`` (which rulelang.parser has already accepted)."""
    loop, callbacks = _cst_loop()
    return loop.parse(text, callbacks, {})


class _El:
    """A token or a comment of the file, with what the layout needs to know about it."""
    __slots__ = ("value", "type", "start", "end", "comment", "starter", "stmt_start", "body", "owner",
                 "unary", "match")

    def __init__(self, value, type_, start, end, comment=False):
        self.value, self.type, self.start, self.end, self.comment = value, type_, start, end, comment
        self.starter = self.stmt_start = self.body = self.unary = False
        self.owner = None  # for a body '{': the token that starts the node owning the body
        self.match = None  # for a bracket: the index of its partner


def _tokens(text: str, path: str, checked: bool = False):
    """(tokens, groups): the tokens of ``text`` with their roles, and the top-level declarations as a
    group (a list) of (first token, first token after its citations, last token). The tree is walked
    without recursion. Raises FormatError on a syntax error."""
    from .lalr_loop import Token
    from .parser import parse

    Tree = _Tree

    if not checked:
        module, diags = parse(text, path)
        if module is None or diags:
            raise FormatError(f"{path}: the file has errors", diags)
    try:
        tree = _cst_parse(text)
    except Exception as exc:  # the language's parser accepted it: this is a formatter bug, never a crash
        raise FormatError(f"{path}: cannot format this file ({type(exc).__name__})") from None
    toks = []
    groups = []
    stack = [(tree, None, None)]
    first_of = {}  # id(node) -> first token element
    last_of = {}
    order = []  # nodes in pre-order
    while stack:
        node, parent, grand = stack.pop()
        if isinstance(node, Token):
            el = _El(str(node), node.type, node.start_pos, node.end_pos)
            pname = parent.data if parent is not None else ""
            if el.value == "{" and (pname in BODY_PARENTS):
                el.body = True
                el.owner = grand if pname == "block" else parent
            if el.value == "-" and pname == "neg_op" or el.value == "?" and pname == "placeholder":
                el.unary = True
            toks.append(el)
            continue
        order.append(node)
        kids = node.children
        for k in reversed(kids):
            stack.append((k, node, parent))
    # first and last token of every node (walk the pre-order list backwards: children before parents)
    index_by_start = {el.start: i for i, el in enumerate(toks)}
    for node in reversed(order):
        first = last = None
        for k in node.children:
            if isinstance(k, Token):
                i = index_by_start[k.start_pos]
            else:
                if id(k) not in first_of:
                    continue
                i = first_of[id(k)]
            if first is None:
                first = i
            j = index_by_start[k.start_pos] if isinstance(k, Token) else last_of.get(id(k))
            if j is not None:
                last = j
        if first is not None:
            first_of[id(node)], last_of[id(node)] = first, last
    for node in order:
        name = node.data
        if id(node) not in first_of:
            continue
        first = first_of[id(node)]
        if name in STARTERS:
            toks[first].starter = True
        if name in SIDE_BY_SIDE:
            toks[first].stmt_start = True
        if name in CITED:
            for k in node.children:
                if isinstance(k, Tree) and k.data == "cite":
                    continue
                i = index_by_start[k.start_pos] if isinstance(k, Token) else first_of.get(id(k))
                if i is not None:
                    toks[i].starter = True
                break
        if name == "enum_decl":  # each member after the enum's name
            for k in [k for k in node.children if isinstance(k, Token) and k.type == "NAME"][1:]:
                toks[index_by_start[k.start_pos]].starter = True
        if name == "start":
            group = []
            for k in node.children:
                if isinstance(k, Tree) and k.data == "item" and id(k) in first_of:
                    decl = next((c for c in k.children if not (isinstance(c, Tree) and c.data == "cite")), None)
                    d = index_by_start[decl.start_pos] if isinstance(decl, Token) else first_of[id(decl)]
                    group.append((toks[first_of[id(k)]], toks[d], toks[last_of[id(k)]]))
            groups.append(group)
    for el in toks:
        if el.owner is not None:
            el.owner = toks[first_of[id(el.owner)]]
    return toks, groups


def _comments(text: str):
    return [_El(m.group().rstrip(), "COMMENT", m.start(), m.end(), comment=True)
            for m in _STRING_OR_COMMENT.finditer(text) if m.group().startswith("#")]


# ------------------------------------------------------------------------------------------ layout
def _space(a: _El, b: _El) -> str:
    """The white space between tokens ``a`` and ``b`` on one line."""
    av, bv = a.value, b.value
    if b.stmt_start and av not in OPENS and av != ",":
        return "  "
    if av in ("(", "[") or bv in (")", "]"):
        return ""
    if av == "{":
        return " " if a.body and bv != "}" else ""
    if bv == "}":
        return " " if b.body and av != "{" else ""
    if bv in (",", ":"):
        return ""
    if av in (",", ":"):
        return " "
    if a.unary:
        return " " if av == bv == "-" else ""  # '- -x', never '--x' (which reads as a board edge)
    if "." in (av, bv) or ".." in (av, bv):
        return ""
    if bv in ("(", "["):
        if a.type in OPERANDS or av in (")", "]", "}", "true", "false", "none"):
            return ""
    return " "


def _layout(text: str, els, groups) -> str:
    n = len(els)
    index = {id(e): i for i, e in enumerate(els)}
    nl = [0] * n
    for i in range(1, n):
        nl[i] = text.count("\n", els[i - 1].end, els[i].start)
        if els[i - 1].comment:
            nl[i] = max(nl[i], 1)
    # matching brackets (tokens only)
    stack = []
    for i, e in enumerate(els):
        if e.comment:
            continue
        if e.value in OPENS:
            stack.append(i)
        elif e.value in CLOSES and stack:
            j = stack.pop()
            els[j].match, e.match = i, j
            e.body = els[j].body
    # every top-level declaration starts a line
    for group in groups:
        for first, _, _ in group:
            i = index[id(first)]
            if i:
                nl[i] = max(nl[i], 1)
    # a body spanning several lines: '{' ends its line, '}' starts one (inner bodies first)
    for c in sorted((e.match for e in els if e.body and e.value == "{" and e.match is not None)):
        o = els[c].match
        if any(nl[k] for k in range(o + 1, c + 1)):
            if not els[o + 1].comment:
                nl[o + 1] = max(nl[o + 1], 1)
            nl[c] = max(nl[c], 1)
    # blank lines: at most one; none after an opening bracket or before a closing one
    for i in range(1, n):
        nl[i] = min(nl[i], 2)
        if (not els[i - 1].comment and els[i - 1].value in OPENS) or (not els[i].comment and els[i].value in CLOSES):
            nl[i] = min(nl[i], 1)
    # one blank line between neighbouring declarations when either spans several lines
    for group in groups:
        spans = []
        for first, decl, last in group:
            d, last_i = index[id(decl)], index[id(last)]
            spans.append((index[id(first)], last_i, any(nl[k] for k in range(d + 1, last_i + 1))))
        for (_, a_last, a_multi), (b_first, _, b_multi) in zip(spans, spans[1:]):
            if not (a_multi or b_multi) or any(nl[k] >= 2 for k in range(a_last + 1, b_first + 1)):
                continue
            j = next(k for k in range(a_last + 1, b_first + 1) if nl[k])
            nl[j] = 2
    # emit
    out = []
    line = []
    opened = []  # (index of the bracket, inner indent)
    line_indent = [0] * n
    cur = 0

    def indent_for(i):
        e = els[i]
        if not e.comment and e.value in CLOSES:
            return (opened[-1][1] - 1) if opened else 0
        if e.comment:
            nxt = next((k for k in range(i + 1, n) if not els[k].comment), None)
            if nxt is None:
                return 0
            if els[nxt].value in CLOSES:
                return opened[-1][1] if opened else 0
            return indent_for(nxt)
        if not opened:
            return 0 if e.starter else 1
        inner = opened[-1][1]
        body = els[opened[-1][0]].body
        return inner + 1 if body and not e.starter else inner

    trailing = {}  # output line number -> its trailing comment
    for i, e in enumerate(els):
        if i == 0 or nl[i]:
            if line:
                out.append("".join(line).rstrip())
            if i and nl[i] >= 2:
                out.append("")
            cur = indent_for(i)
            line = [INDENT * cur, e.value]
        elif e.comment:
            trailing[len(out)] = e.value
        else:
            line.append(_space(els[i - 1], e))
            line.append(e.value)
        line_indent[i] = cur
        if e.comment:
            continue
        if e.value in OPENS:
            if e.body and e.owner is not None:
                opened.append((i, line_indent[index[id(e.owner)]] + 1))
            else:
                opened.append((i, cur + 1))
        elif e.value in CLOSES and opened:
            opened.pop()
    if line:
        out.append("".join(line).rstrip())
    # trailing comments of consecutive lines line up, two spaces after the longest code among them
    k = 0
    while k < len(out):
        if k not in trailing:
            k += 1
            continue
        run = k
        while run + 1 in trailing:
            run += 1
        width = max(len(out[j]) for j in range(k, run + 1))
        for j in range(k, run + 1):
            out[j] = out[j].ljust(width) + "  " + trailing[j]
        k = run + 1
    return "\n".join(out) + "\n" if out else ""


def _signature(text: str, path: str):
    """What formatting must keep: the tokens (type and text) and the comments, in order."""
    toks, _ = _tokens(text, path, checked=True)
    return [(t.type, t.value) for t in toks], [c.value for c in _comments(text)]


def format_text(text: str, path: str = "<string>") -> str:
    """``text`` (a whole rule file) in the canonical layout. Raises FormatError when it has syntax errors
    (``.diagnostics``), or when the result would not hold the same tokens and comments (a formatter bug)."""
    toks, groups = _tokens(text, path)
    els = sorted(toks + _comments(text), key=lambda e: e.start)
    out = _layout(text, els, groups)
    if out != text:
        try:
            same = _signature(out, path) == ([(t.type, t.value) for t in toks], [c.value for c in _comments(text)])
        except FormatError:  # the output does not even parse
            same = False
    if out != text and not same:
        raise FormatError(f"{path}: the formatter would change this file's tokens or comments; it is left as it "
                          f"is (a bug in rulelang fmt: please report it)")
    return out


def format_markdown(text: str, path: str = "<string>") -> str:
    """``text`` (Markdown) with every ```rules block that parses as a whole rule file in the canonical
    layout; blocks that do not parse (fragments, the deliberate errors of docs/checks.md) stay as written."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        prefix = m.group(1)
        body = []
        while i < len(lines) and not _FENCE_CLOSE.match(lines[i]):
            body.append(lines[i])
            i += 1
        if i >= len(lines):  # an unterminated fence: leave the rest alone
            out.extend(body)
            break
        block = "\n".join(ln[len(prefix):] if ln.startswith(prefix) else ln.lstrip() for ln in body) + "\n"
        try:
            formatted = format_text(block, f"{path}:{i - len(body) + 1}")
        except FormatError as exc:
            if exc.diagnostics:
                out.extend(body)
                continue
            raise
        if formatted:
            out.extend((prefix + ln if ln else ln) for ln in formatted[:-1].split("\n"))
    return "\n".join(out)


# ------------------------------------------------------------------------------------------ files
def _project_config(start: str) -> tuple:
    """(project root, exclude patterns) from the nearest pyproject.toml at or above ``start`` that has a
    [tool.rulelang.fmt] table; (None, ()) when there is none."""
    import tomllib

    here = os.path.abspath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    while True:
        candidate = os.path.join(here, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                with open(candidate, "rb") as fh:
                    data = tomllib.load(fh)
            except (OSError, tomllib.TOMLDecodeError):
                data = {}
            conf = data.get("tool", {}).get("rulelang", {}).get("fmt")
            if isinstance(conf, dict):
                patterns = conf.get("exclude", [])
                if isinstance(patterns, list):
                    return here, tuple(str(p) for p in patterns)
        parent = os.path.dirname(here)
        if parent == here:
            return None, ()
        here = parent


def _excluded(path: str, root, patterns) -> bool:
    if root is None:
        return False
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    return any(fnmatch.fnmatch(rel, p) for p in patterns)


def collect(paths) -> tuple:
    """(files to format, problems, notes): each folder becomes the *.rules and Markdown files below it
    (sorted, without those matched by [tool.rulelang.fmt] exclude in the project's pyproject.toml, nor
    hidden folders, nor symbolic links out of the folder: ``notes`` names those); a file named on the
    command line is always taken."""
    files, problems, notes = [], [], []
    for path in paths:
        if os.path.isdir(path):
            from .folders import files_below

            root, patterns = _project_config(path)
            found, outside = files_below(
                path, lambda f: f.endswith(".rules") or f.endswith(MARKDOWN_SUFFIXES),
                lambda dirpath, d: (d.startswith(".") or d == "__pycache__"
                                    or _excluded(os.path.join(dirpath, d) + "/", root, patterns)))
            files.extend(f for f in found if not _excluded(f, root, patterns))
            notes.extend(f"{f}: skipped: a symbolic link to a file outside {path}" for f in outside)
        elif os.path.lexists(path):
            files.append(path)
        else:
            problems.append(f"{path}: no such file or folder")
    return files, problems, notes


def format_file(path: str) -> tuple:
    """(old text, new text) of one file (a .md file: its ```rules blocks). Raises FormatError."""
    from .program import MAX_FILE_BYTES, FileProblem, read_limited, read_source

    if path.endswith(MARKDOWN_SUFFIXES):
        try:
            data = read_limited(path, limit=4 * MAX_FILE_BYTES)
            text = data.decode("utf-8")
        except FileProblem as exc:
            raise FormatError(f"{path}: cannot read file: {exc}") from None
        except UnicodeDecodeError:
            raise FormatError(f"{path}: cannot read file: not valid UTF-8 text") from None
        return text, format_markdown(text, path)
    text, problem = read_source(path)
    if problem is not None:
        raise FormatError(f"{path}: cannot read file: {problem.message}")
    return text, format_text(text, path)


def diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"{path} (original)",
                                        f"{path} (formatted)"))


def run(paths, check: bool = False, show_diff: bool = False, echo=print, echo_err=None) -> int:
    """The `rulelang fmt` command: format (or with ``check``/``show_diff`` only inspect) the files; returns
    the exit code: 0 all well (or all formatted), 1 a file would change (``check``) or has errors."""
    echo_err = echo_err or echo
    files, problems, notes = collect(paths)
    failed = bool(problems)
    for p in problems + notes:
        echo_err(f"rulelang: {printable(p)}")
    changed = unchanged = errors = 0
    for path in files:
        try:
            old, new = format_file(path)
        except FormatError as exc:
            errors += 1
            for d in exc.diagnostics:
                echo_err(d.render() if isinstance(d, Diagnostic) else str(d))
            echo_err(f"rulelang: {printable(exc)} (left unchanged)" if not exc.diagnostics else
                     f"rulelang: {printable(path)}: not formatted: it has syntax errors (left unchanged)")
            continue
        if old == new:
            unchanged += 1
            continue
        changed += 1
        if show_diff:
            echo(diff(old, new, path).rstrip("\n"))
        if check:
            echo_err(f"would reformat {printable(path)}")
        elif not show_diff:
            from .atomic import write_text_atomic

            write_text_atomic(os.path.realpath(path), new)  # through a symbolic link, not over it
            echo_err(f"reformatted {printable(path)}")
    verb = "would be reformatted" if (check or show_diff) else "reformatted"
    parts = []
    if changed:
        parts.append(f"{changed} file{'s' if changed != 1 else ''} {verb}")
    if unchanged:
        parts.append(f"{unchanged} file{'s' if unchanged != 1 else ''} left unchanged")
    if errors:
        parts.append(f"{errors} file{'s' if errors != 1 else ''} with errors")
    echo_err(", ".join(parts) if parts else "no files to format")
    return 1 if failed or errors or (check and changed) else 0

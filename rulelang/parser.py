"""Text -> AST. Parses a rule file with the grammar (rulelang/grammar.lark) and builds `rulelang.ast`
nodes with spans.

Syntax errors become diagnostics (`E001`..`E009`) with the offending line, a caret and a hint; the
parser recovers and keeps going so that one run reports several errors.

The parser is generated from the grammar by Lark's stand-alone tool (`python -m rulelang.parser_generate`,
see docs/index.md, "How the parser is made"): no Lark is imported at run time. Two runs of the same
LALR parser, with the same builder (rulelang/ast_builder.py) making the AST:

* the quick loop of rulelang/lalr_loop.py over the parser as plain data (rulelang/grammar_tables.py),
  for text without errors: the builder's methods are its callbacks, and positions are worked out as
  Lark's ``propagate_positions`` does, in the same pass;
* at the first syntax error it gives way to Lark's own parser (rulelang/grammar_standalone.py), through
  its public API: ``parse(text, on_error=...)`` with its error recovery and messages, a tree with
  positions, then the builder's methods node by node (see _parse_with_lark).
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Sequence

from . import ast as A
from .diagnostics import Diagnostic, Source
from .ast_builder import MAX_NUMBER, MAX_PLAYERS, _Builder, _meta, _unquote  # noqa: F401  (MAX_*: imported from here too)

if TYPE_CHECKING:
    from .lalr_loop import Loop

Callback = Callable[[list[Any]], Any]  # a rule's callback: the matched children -> its value

MAX_NESTING = 100
MAX_ERRORS = 8
MAX_DEPTH = 200  # operators chained in one expression (a + b + ... ): deeper trees are refused, with the place
DECL_WORDS = {"game", "extends", "const", "enum", "record", "table", "var", "per", "board", "setup", "flow", "phase",
              "procedure", "function", "action", "event", "ending", "score", "tiebreak", "payoff", "heuristic", "variant", "override",
              "extend", "scenario", "invariant", "@rule"}

TOKEN_WORDS = {
    "RBRACE": "'}'", "LBRACE": "'{'", "RPAR": "')'", "LPAR": "'('", "RSQB": "']'", "LSQB": "'['",
    "COMMA": "','", "COLON": "':'", "EQUAL": "'='", "NAME": "a name", "INT": "a number",
    "STRING": "a string", "DOT": "'.'", "MINUS": "'-'", "PLUS": "'+'", "CMP_OP": "a comparison",
    "$END": "the end of the file", "__ANON_0": "'..'",
}


class _Node:
    """A value on the parser's stack, with the positions Lark's ``propagate_positions`` would give the
    tree node it stands for: a node starts where its first child's container starts and ends where its
    last child's container ends (a container being a node that was inlined, such as the '( ... )'
    around an expression). ``_span`` reads these as Lark's ``meta``. ``depth``: at least the number
    of expressions nested in the value, less a few (see _DEPTH_SLACK)."""
    __slots__ = ("value", "children", "empty", "line", "column", "end_line", "end_column",
                 "cline", "ccolumn", "cend_line", "cend_column", "depth")
    line: Optional[int]
    column: Optional[int]
    end_line: Optional[int]
    end_column: Optional[int]
    cline: Optional[int]  # the positions of its container (see above)
    ccolumn: Optional[int]
    cend_line: Optional[int]
    cend_column: Optional[int]

    def __init__(self, value: Any, children: Optional[list[Any]] = None) -> None:
        self.value = value
        self.children = children  # only for an inlined rule (its children go to its parent)
        self.empty = True
        self.line = self.column = self.end_line = self.end_column = None
        self.depth = 0


# A builder method may wrap expressions of its children in a new expression inside a value that is not
# one (board_node_at): depths counted here may fall short of _too_deep's by that many levels.
_DEPTH_SLACK = 4


def _place(node: _Node, raw: Sequence[Any]) -> None:
    """Set ``node``'s positions from the children the rule matched (as PropagatePositions does)."""
    for c in raw:
        if c.__class__ is _Node:
            if not c.empty:
                line, column = c.cline, c.ccolumn
                break
        elif isinstance(c, str):  # a token (Lark's or the quick loop's)
            line, column = c.line, c.column  # type: ignore[attr-defined]  # (a token has its positions)
            break
    else:
        return
    for c in reversed(raw):
        if c.__class__ is _Node:
            if not c.empty:
                end_line, end_column = c.cend_line, c.cend_column
                break
        elif isinstance(c, str):
            end_line, end_column = c.end_line, c.end_column  # type: ignore[attr-defined]
            break
    if node.line is None:
        node.line, node.column = line, column
        node.empty = False
    if node.end_line is None:
        node.end_line, node.end_column = end_line, end_column
        node.empty = False
    node.cline, node.ccolumn, node.cend_line, node.cend_column = line, column, end_line, end_column


class _BuildFailed(Exception):
    def __init__(self, exc: BaseException, line: int) -> None:
        super().__init__(str(exc))
        self.exc = exc
        self.line = line


def _plans_of(shapes: Iterable[tuple[Any, ...]]) -> tuple[Any, ...]:
    """For each rule, how its children become the builder's arguments: (key, builder method name or None,
    with positions, children to keep, Nones to add at the end, single child passed through, length),
    from its shape (key, name, children to keep, Nones, passed through, length; see
    lalr_tables.rule_shapes) and the builder's methods."""
    plans = []
    for key, name, include, nones, expand1, length in shapes:
        wrapped = next((k.__dict__[name] for k in _Builder.__mro__ if name in k.__dict__), None)
        if wrapped is None or name.startswith("_"):
            method, with_meta = None, False
        else:
            method, with_meta = name, bool(getattr(wrapped, "with_meta", False))
        plans.append((key, name, method, with_meta, include, nones, expand1, length))
    return tuple(plans)


def _passes(plan: tuple[Any, ...]) -> bool:
    """Whether a rule's value is its only child, unchanged (`?sum_expr: term` and the like)."""
    _, _, _, _, include, _, expand1, length = plan
    return expand1 and include is None and length == 1


def _pass_through(raw: list[Any]) -> Any:
    return raw[0]


def _callbacks(builder: _Builder, plans: Sequence[tuple[Any, ...]]) -> dict[Any, Any]:
    """The parser's callbacks: for each grammar rule, one call that builds the AST node directly from the
    matched children, as Lark's tree builder (child filter, placeholders, inlining, positions) followed
    by the builder's method would, without building a tree in between. Token callbacks (INT, STRING)
    run as each token is shifted. A failing builder method is kept (``builder.failed``) and reported
    after the parse."""
    out: dict[Any, Any] = {"INT": builder.INT, "STRING": builder.STRING}
    for plan in plans:
        key, name, method, with_meta, include, nones, expand1, _ = plan
        if _passes(plan):
            # `?sum_expr: term` and the like: the child itself, its positions unchanged (one child is
            # its own container)
            out[key] = _pass_through
            continue
        fn = None if method is None else getattr(builder, method)
        out[key] = _rule_callback(builder, name, fn, with_meta, include, nones, expand1)
    return out


def _built(builder: _Builder, node: _Node, fn: Callable[..., Any], values: list[Any], with_meta: bool,
           depth: int) -> _Node:
    """`node` with the builder's value of its children's values, and its depth (one more for an
    expression); a builder failure is kept for after the parse, never raised."""
    try:
        node.value = value = fn(node, values) if with_meta else fn(values)
    except Exception as e:  # a builder bug or odd input: reported after the parse, never a crash
        if builder.failed is None:
            builder.failed = _BuildFailed(e, node.line or 1)
        return node
    node.depth = depth + 1 if isinstance(value, A.Expr) else depth
    return node


def _rule_callback(builder: _Builder, name: str, fn: Optional[Callable[..., Any]], with_meta: bool,
                   include: Optional[Sequence[tuple[int, bool, int]]], nones: int, expand1: bool) -> Callback:
    if include is None and not expand1 and fn is not None:
        return _building_callback(builder, fn, with_meta)
    tree_name = None if name.startswith("_") else name  # an inlined rule has no value of its own

    def callback(raw):
        # type: (list[Any]) -> Any
        if include is None:
            kids = raw
        else:
            kids = []
            for i, expand, add_none in include:
                if add_none:
                    kids += [None] * add_none
                if expand:
                    if kids:
                        kids += raw[i].children
                    else:  # the list so far, extended in place (as Lark does: a long list stays linear)
                        kids = raw[i].children
                else:
                    kids.append(raw[i])
            if nones:
                kids += [None] * nones
        if expand1 and len(kids) == 1:
            node = kids[0]
            if node.__class__ is _Node:
                _place(node, raw)
            return node
        depth = 0
        for k in raw:  # an inlined child carries the depth of all it holds
            if k.__class__ is _Node and k.depth > depth:
                depth = k.depth
        if fn is None:  # an inlined rule (its children go to the parent)
            node = _Node(None, kids)
            node.depth = depth
            _place(node, raw)
            if tree_name is not None and builder.failed is None:  # (the grammar has none: a rule without a
                # builder method always passes its lone child on)
                builder.failed = _BuildFailed(ValueError(f"no builder for the rule {tree_name}"),
                                              node.line or 1)
            return node
        node = _Node(None)
        _place(node, raw)
        values = [k.value if k.__class__ is _Node else k for k in kids]
        return _built(builder, node, fn, values, with_meta, depth)
    return callback


@functools.lru_cache(maxsize=1)
def _quick() -> tuple[Loop, tuple[Any, ...]]:
    """The quick parser loop (rulelang/lalr_loop.py) over the generated tables, and the plans of its
    rules (by number)."""
    from .grammar_tables import TABLES
    from .lalr_loop import Loop

    rules: list[Any] = TABLES["rules"]  # type: ignore[assignment]  # (the generated tables: plain data)
    plans = _plans_of([(number, name, include, nones, expand1, length)
                       for number, (length, _, name, include, nones, expand1) in enumerate(rules)])
    return Loop(TABLES, [plan[0] for plan in plans if _passes(plan)]), plans


def _parse_quickly(builder: _Builder, text: str) -> Any:
    """The value of the start rule for text without syntax errors, as a _Node; raises lalr_loop.NotParsed
    at the first error (``builder`` may then hold part of a parse: parse again with a new one)."""
    loop, plans = _quick()
    callbacks = _callbacks(builder, plans)
    return loop.parse(text, [callbacks[plan[0]] for plan in plans], {"INT": builder.INT, "STRING": builder.STRING})


def _building_callback(builder: _Builder, fn: Callable[..., Any], with_meta: bool) -> Callback:
    """What _rule_callback makes for the commonest rules (every child kept, a builder method), in one
    pass over the children; a lone token (a name, a number) placed directly."""
    def callback(raw):
        # type: (list[Any]) -> Any
        if len(raw) == 1 and raw[0].__class__ is not _Node:  # a token: the node spans it
            tok = raw[0]
            node = _Node(None)
            node.line = node.cline = tok.line
            node.column = node.ccolumn = tok.column
            node.end_line = node.cend_line = tok.end_line
            node.end_column = node.cend_column = tok.end_column
            node.empty = False
            depth = 0
            values = [tok]
        else:
            node = _Node(None)
            _place(node, raw)
            depth = 0
            values = []
            for k in raw:  # an inlined child carries the depth of all it holds
                if k.__class__ is _Node:
                    if k.depth > depth:
                        depth = k.depth
                    values.append(k.value)
                else:
                    values.append(k)
        return _built(builder, node, fn, values, with_meta, depth)
    return callback


@functools.lru_cache(maxsize=1)
def _lark() -> Any:
    """Lark's stand-alone parser of the grammar (made once: some 60 ms)."""
    from .grammar_standalone import Lark_StandAlone

    return Lark_StandAlone()


def _parse_with_lark(builder: _Builder, text: str, on_error: Callable[[Any], bool]) -> Any:
    """Parse ``text`` with Lark's own parser and its error recovery (``on_error``, as Lark's
    ``Lark.parse`` takes it), then build the AST from its tree node by node, bottom up and without
    recursion, with the builder's methods (as a Lark ``Transformer`` with ``v_args(meta=True)`` on the
    methods marked ``_meta`` would). Returns the value of the start rule; raises Lark's UnexpectedInput
    when it cannot recover."""
    from .grammar_standalone import Token, Tree

    tree = _lark().parse(text, on_error=on_error)
    tokens = {"INT": builder.INT, "STRING": builder.STRING}
    done: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        node, ready = stack.pop()
        if not ready:
            stack.append((node, True))
            stack.extend((c, False) for c in node.children if isinstance(c, Tree))
            continue
        kids = [done.pop(id(c)) if isinstance(c, Tree) else
                tokens[c.type](c) if isinstance(c, Token) and c.type in tokens else c for c in node.children]
        method = getattr(builder, node.data, None)
        try:
            if method is None or str(node.data).startswith("_"):
                raise ValueError(f"no builder for the rule {node.data}")
            done[id(node)] = method(node.meta, kids) if getattr(method, "with_meta", False) else method(kids)
        except Exception as e:  # a builder bug or odd input: reported after the parse, never a crash
            if builder.failed is None:
                builder.failed = _BuildFailed(e, getattr(node.meta, "line", 1))
            done[id(node)] = None
    # the quick loop reports the findings of tokens as it reads them, in the order of the text
    builder.diags.sort(key=lambda d: (d.line, d.column))
    return done[id(tree)]


def _code_chars(text: str) -> Iterator[tuple[int, int, int, str]]:
    """The characters of rule text that are code (not in a string or comment), as (index, line, column,
    character); every newline is given too, so that a scanner can follow lines."""
    line, col = 1, 0
    in_str = in_comment = escaped = False
    for i, ch in enumerate(text):
        col += 1
        if ch == "\n":
            line += 1
            col = 0
            in_comment = in_str = escaped = False
            yield i, line, col, ch
        elif in_comment:
            pass
        elif in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == "#":
            in_comment = True
        elif ch == '"':
            in_str = True
        else:
            yield i, line, col, ch


# what _code_chars skips (a string up to its closing quote or the end of its line, a comment), or a bracket
_SKIP_OR_BRACKET = re.compile(r'"(?:[^"\\\n]|\\[^\n])*"?|#[^\n]*|[()\[\]{}]')


def _nesting_problem(text: str) -> Optional[tuple[int, int]]:
    """Find a bracket nested deeper than MAX_NESTING, before the recursive AST builder meets it (the
    brackets of code as _code_chars finds them, scanned by a regular expression)."""
    depth = 0
    for m in _SKIP_OR_BRACKET.finditer(text):
        ch = m.group()
        if ch in "([{":
            depth += 1
            if depth > MAX_NESTING:
                i = m.start()
                return text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i)
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return None


def _unclosed_block(text: str) -> Optional[tuple[int, int, str]]:
    """When the file opens more '{' than it closes, the '{' that is never closed: (line, column, what).

    The outermost block still open when a declaration starts at the left margin is the one missing its
    '}' (declarations do not nest, except inside a variant); failing that, the outermost one left open."""
    stack: list[tuple[int, int, str]] = []
    at_margin = None  # the outermost open block when a declaration word first stood at the left margin
    line_start = 0
    for i, line, col, ch in _code_chars(text):
        if ch == "\n":
            line_start = i + 1
            if stack and at_margin is None:
                word = text[i + 1:i + 40].split(None, 1)
                if word and text[i + 1:i + 2] not in (" ", "\t") and word[0] in DECL_WORDS:
                    if not any(w == "variant" for _, _, w in stack):
                        at_margin = stack[0]
        elif ch == "{":
            before = text[line_start:i].strip()
            stack.append((line, col, before.split("{")[-1].strip() or before))
        elif ch == "}" and stack:
            stack.pop()
    if not stack:
        return None
    return at_margin or stack[0]


def _block_words(before: str) -> str:
    words = before.replace("(", " ").split()
    if not words:
        return "this block"
    rest = before.strip()[len(words[0]):].strip()
    if words[0] in DECL_WORDS and rest.startswith('"') and '"' in rest[1:]:
        return words[0] + " " + rest[:rest.index('"', 1) + 1]  # scenario "name", game "title"
    if len(words) >= 2 and words[0] in DECL_WORDS and words[1].isidentifier():
        return f"{words[0]} '{words[1]}'"
    if words[0] in DECL_WORDS or words[0] in ("effect", "if", "else", "elif", "for", "while", "loop", "repeat",
                                              "turn", "given", "when", "then"):
        return f"'{words[0]}'"
    return "this block"


def _too_deep(module_items: Iterable[Any]) -> Optional[A.Expr]:
    """The first expression nested more than MAX_DEPTH operators deep (walked without recursion)."""
    stack: list[tuple[Any, int, Optional[A.Expr]]] = [(x, 0, None) for x in module_items]
    while stack:
        node, depth, top = stack.pop()
        if isinstance(node, A.Expr):
            depth += 1
            top = top or node
            if depth > MAX_DEPTH + 1:  # (the path's last expression is an operand, not an operator)
                return top  # reported at the outermost expression, where the long chain starts
        stack.extend((child, depth, top) for child in A.iter_child_nodes(node))
    return None


def _describe_expected(expected: Iterable[str]) -> str:
    words = sorted({TOKEN_WORDS.get(e, "'" + e.lower() + "'" if e.isupper() and not e.startswith("__") else e)
                    for e in expected})
    words = [w for w in words if not w.startswith("__")]
    if not words:
        return ""
    if len(words) > 8:
        words = words[:8] + ["..."]
    return "expected " + ", ".join(words)


def _token_text(tok: Any) -> str:
    if tok is None:
        return "end of file"
    if getattr(tok, "type", "") == "$END":
        return "the end of the file"
    return repr(str(tok))


def _syntax_diag(source: Source, err: Any) -> Diagnostic:
    from .grammar_standalone import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    line = getattr(err, "line", None) or 1
    col = getattr(err, "column", None) or 1
    if isinstance(err, UnexpectedCharacters):
        ch = getattr(err, "char", None) or source.line_text(line)[col - 1:col] or "?"
        if ch == '"':
            return source.diag("E002", "unterminated string", line, col,
                               hint="close the string with '\"' on the same line")
        return source.diag("E001", f"unexpected character {ch!r}", line, col,
                           hint="rule files use names, numbers, \"strings\", brackets and operators; "
                                "# starts a comment")
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        last = max(1, len(source.lines))
        while last > 1 and not source.line_text(last).strip():
            last -= 1
        return source.diag("E003", "the file ends in the middle of a declaration", last,
                           len(source.line_text(last)) + 1,
                           hint="a '}' or ')' is probably missing; " + _describe_expected(err.expected))
    if isinstance(err, UnexpectedToken):
        tok = err.token
        hint = _describe_expected(err.accepts or err.expected)
        message = f"unexpected {_token_text(tok)}"
        expected = set(err.accepts or err.expected or ())
        if str(tok) == "elif" and "ELSE" in expected:
            hint = ("a conditional expression has no 'elif': write if A then B else if C then D else E "
                    "('elif' only follows the block of an if statement)")
        elif str(tok) in ("elif", "else"):
            hint = (f"'{tok}' follows the block of an if directly; a citation (@rule) cannot stand between "
                    "them: put it inside the block")
        elif str(tok) == "into":
            hint = ("'draw ... into' and 'shuffle ... into' are statements of their own: draw N from PILE into "
                    "PLACE (without let), shuffle SOURCE into PILE")
        elif expected == {"INTO"}:
            hint = ("a draw outside 'let' puts its items somewhere: draw N from PILE into PLACE; "
                    "or keep them: let x = draw N from PILE")
        elif str(tok) == "placeholder":
            hint = ("a placeholder mark stands just before the body of a table, procedure, phase, function "
                    "or action, e.g. procedure p(x) placeholder \"why\" { ... }; an invented value is "
                    "marked ?VALUE")
        if str(tok) == "=" and "EQUAL" not in (err.accepts or err.expected):
            hint = "use '==' to compare; '=' only assigns in a statement"
        elif (hint == _describe_expected(err.accepts or err.expected) and tok.type != "NAME" and str(tok).isidentifier() and str(tok).lower() == tok.type.lower()
              and "NAME" in expected):
            # a keyword where a name could stand: the parser takes keywords for names only where no
            # keyword can stand, so the same name works in one place and not in the next
            message = f"unexpected keyword '{tok}'"
            hint = (f"'{tok}' is a keyword, reserved by the language; a name cannot be '{tok}' "
                    f"(rename it, e.g. '{tok}_it', everywhere it is declared and used)")
        return source.diag("E004", message, tok.line, tok.column, hint=hint,
                           end_column=(tok.end_column or tok.column + 1))
    return source.diag("E005", "syntax error", line, col)


def parse(text: str, path: str = "<string>") -> tuple[Optional[A.Module], list[Diagnostic]]:
    """Parse one file. Returns (Module or None, diagnostics)."""
    source = Source(text, path)
    diags = []
    deep = _nesting_problem(text)
    if deep:
        diags.append(source.diag("E006", f"brackets nested more than {MAX_NESTING} levels deep", deep[0], deep[1],
                                 hint="split the expression with 'let' or a function"))
        return None, diags
    errors = []

    def on_error(e):
        # type: (Any) -> bool
        errors.append(e)
        if set(getattr(e, "accepts", None) or getattr(e, "expected", None) or ()) == {"INTO"}:
            return False  # a draw statement without 'into': skipping tokens would only repeat the error
        return len(errors) < MAX_ERRORS

    first = _Builder(path, source)
    builder: Optional[_Builder] = first
    try:
        tree = _parse_quickly(first, text)
    except Exception:  # noqa: BLE001 - a syntax error (NotParsed), or anything unforeseen (never seen in
        # the tests, which call _parse_quickly directly): Lark parses it again, with its errors and messages
        builder = None
    if builder is None:
        from .grammar_standalone import UnexpectedInput

        builder = _Builder(path, source)
        try:
            tree = _parse_with_lark(builder, text, on_error)
        except UnexpectedInput as e:
            errors.append(e)
            tree = None
        except RecursionError:
            diags.append(source.diag("E006", "the file is nested too deeply to read", 1, 1,
                                     hint="split long expressions with 'let'"))
            return None, diags
    seen_lines = set()
    for err in errors:
        d = _syntax_diag(source, err)
        if d.line in seen_lines:
            continue
        seen_lines.add(d.line)
        diags.append(d)
    if errors:
        open_at = _unclosed_block(text)
        if open_at is not None:
            # one error where the block opens, instead of errors at whatever follows the missing '}'
            oline, ocol, before = open_at
            what = _block_words(before)
            diags = [d for d in diags if (d.line, d.column) < (oline, ocol)]
            diags.append(source.diag("E003", f"the block of {what} is never closed", oline, ocol,
                                     hint=f"add the '}}' that ends the block of {what} opened here"))
    if errors or tree is None:
        return None, diags
    if builder.failed is not None:  # a builder bug or odd input: report, never crash
        if isinstance(builder.failed.exc, RecursionError):
            diags.append(source.diag("E006", "the file is nested too deeply to read", 1, 1,
                                     hint="split long expressions with 'let'"))
            return None, diags
        diags.append(source.diag("E009", f"could not read this construct ({builder.failed.exc})",
                                 builder.failed.line, 1))
        return None, diags
    items = tree.value if tree.__class__ is _Node else tree
    shallow = tree.__class__ is _Node and tree.depth + _DEPTH_SLACK <= MAX_DEPTH
    if builder.diags:
        return None, diags + builder.diags
    deepest = None if shallow else _too_deep(items)  # the exact walk only when some expression may be too deep
    if deepest is not None:
        sp = deepest.span
        diags.append(source.diag("E006", f"this expression chains more than {MAX_DEPTH} operators", sp.line,
                                 sp.column, end_line=sp.end_line, end_column=sp.end_column,
                                 hint="split it into parts with 'let', or add up a list with sum([...])"))
        return None, diags
    return A.Module(path=path, items=items, source=source), diags

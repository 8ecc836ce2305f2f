"""Text -> AST. Parses a rule file with the Lark grammar and builds `rulelang.ast` nodes with spans.

Syntax errors become diagnostics (`E001`..`E009`) with the offending line, a caret and a hint; the
parser recovers and keeps going so that one run reports several errors.

Two runs of the same LALR parser (Lark's tables and lexers, built once and kept in the cache folder),
with the same callbacks building the AST: first the quick loop of rulelang/lalr_loop.py over the tables
as plain data (no Lark import); at the first syntax error it gives way and Lark's own parser parses the
text again, with its error recovery, for the diagnostics.
"""
from __future__ import annotations

import ast as pyast
import copy
import functools
import re
from pathlib import Path

from . import ast as A
from .diagnostics import Source

MAX_NESTING = 100
MAX_ERRORS = 8
MAX_NUMBER = (1 << 62) - 1  # the largest number a literal may write (the run-time limit, compiler.MAX_INT, is 2^62)
MAX_PLAYERS = 100  # the most seats a game header may ask for
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


_OPTIONS = {"parser": "lalr", "propagate_positions": False, "maybe_placeholders": True}


def _lark(cache=False):
    """Lark built from the grammar (~2 s; ``cache=True``: Lark's own cache of its tables, a pickle in the
    temp folder, used only when the user's cache folder cannot hold them)."""
    from lark import Lark

    grammar = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    try:
        return Lark(grammar, cache=cache, **_OPTIONS)
    except OSError:
        return Lark(grammar, **_OPTIONS)


# the modules whose classes make up Lark's parser (nothing else may be in the stored tables)
_TABLE_MODULES = frozenset({"lark.common", "lark.grammar", "lark.lark", "lark.lexer", "lark.parser_frontends",
                            "lark.parsers.lalr_analysis", "lark.parsers.lalr_parser",
                            "lark.parsers.lalr_parser_state", "lark.tree", "lark.utils"})


def _lark_version() -> str:
    """Lark's version, read from its package without importing it (importing Lark takes some 20 ms that a
    parse from the stored tables does not need)."""
    import sys

    lark = sys.modules.get("lark")
    if lark is None:
        try:
            import importlib.util

            spec = importlib.util.find_spec("lark")
            with open(spec.origin, encoding="utf-8") as f:
                found = re.search(r"^__version__\s*(?::\s*str\s*)?=\s*[\"']([^\"'\n]+)[\"']", f.read(), re.M)
            if found:
                return found.group(1)
        except (OSError, ValueError, AttributeError, TypeError, ImportError):
            pass
        import lark
    return lark.__version__


def _tables_key() -> str:
    """What the stored parser depends on: the grammar, the options, Lark's and Python's versions, the
    layout of the file (so that versions of rulelang that store it differently keep a file each)."""
    import sys

    from .cache import TABLES_FORMAT, _sha256  # the built-in SHA-256: hashlib's OpenSSL takes longer to load
    from .lalr_tables import FORMAT

    grammar = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    return _sha256(f"{_lark_version()}\n{sys.version_info[:2]}\n{_OPTIONS}\n{TABLES_FORMAT} {FORMAT}\n"
                          f"{grammar}".encode()).hexdigest()


def _singletons() -> dict:
    from lark.parsers.lalr_analysis import Reduce, Shift

    return {"Shift": Shift, "Reduce": Reduce}  # the parser tells them apart by identity


@functools.lru_cache(maxsize=1)
def _frontend():
    """Lark's parser (tables and lexers) for the grammar: from the user's cache folder when it holds the
    one built for this grammar, Lark and Python version (see rulelang/cache.py, "parser tables"), else
    built and kept there. No parse tree is built (see _callbacks): positions are worked out by the
    callbacks that build the AST, in the same pass."""
    from . import cache

    key, singletons = _tables_key(), _singletons()
    found = cache.load_tables(key, _TABLE_MODULES, singletons)
    if found is not None and found.__class__.__name__ == "ParsingFrontend":
        return found
    if not cache.tables_usable():
        return _lark(cache=True).parser
    frontend = _lark().parser
    frontend.parser_conf.callbacks = {}  # Lark's tree builder: never used here (see _callbacks)
    frontend.parser.parser.callbacks = {}
    pickled = cache.pickle_tables(frontend, singletons)  # before the lexers compile their expressions
    if pickled is not None:
        cache.write_tables(key, pickled, _plain_tables(frontend))
    return frontend


def _plain_tables(frontend):
    """The parser as plain data for the quick loop (rulelang/lalr_tables.py), or None."""
    from .lalr_tables import from_lark

    return from_lark(frontend, _rule_shapes(frontend))


@functools.lru_cache(maxsize=1)
def _rule_shapes(frontend):
    from .lalr_tables import rule_shapes

    return rule_shapes(frontend)


class _Node:
    """A value on the parser's stack, with the positions Lark's ``propagate_positions`` would give the
    tree node it stands for: a node starts where its first child's container starts and ends where its
    last child's container ends (a container being a node that was inlined, such as the '( ... )'
    around an expression). ``_span`` reads these as Lark's ``meta``. ``depth``: at least the number
    of expressions nested in the value, less a few (see _DEPTH_SLACK)."""
    __slots__ = ("value", "children", "empty", "line", "column", "end_line", "end_column",
                 "cline", "ccolumn", "cend_line", "cend_column", "depth")

    def __init__(self, value, children=None):
        self.value = value
        self.children = children  # only for an inlined rule (its children go to its parent)
        self.empty = True
        self.line = self.column = self.end_line = self.end_column = None
        self.depth = 0


# A builder method may wrap expressions of its children in a new expression inside a value that is not
# one (board_node_at): depths counted here may fall short of _too_deep's by that many levels.
_DEPTH_SLACK = 4


def _place(node, raw):
    """Set ``node``'s positions from the children the rule matched (as PropagatePositions does)."""
    for c in raw:
        if c.__class__ is _Node:
            if not c.empty:
                line, column = c.cline, c.ccolumn
                break
        elif isinstance(c, str):  # a token (Lark's or the quick loop's)
            line, column = c.line, c.column
            break
    else:
        return
    for c in reversed(raw):
        if c.__class__ is _Node:
            if not c.empty:
                end_line, end_column = c.cend_line, c.cend_column
                break
        elif isinstance(c, str):
            end_line, end_column = c.end_line, c.end_column
            break
    if node.line is None:
        node.line, node.column = line, column
        node.empty = False
    if node.end_line is None:
        node.end_line, node.end_column = end_line, end_column
        node.empty = False
    node.cline, node.ccolumn, node.cend_line, node.cend_column = line, column, end_line, end_column


class _BuildFailed(Exception):
    def __init__(self, exc, line):
        super().__init__(str(exc))
        self.exc = exc
        self.line = line


def _meta(method):
    """Mark a builder method that also gets the positions of what its rule matched (as Lark's
    ``v_args(meta=True)``)."""
    method.with_meta = True
    return method


def _plans_of(shapes) -> tuple:
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


@functools.lru_cache(maxsize=1)
def _plans() -> tuple:
    """The plans of the rules of Lark's parse table, keyed by the very rule objects its parser looks up."""
    return _plans_of([(rule, name, include, nones, expand1, len(rule.expansion))
                      for rule, name, include, nones, expand1 in _rule_shapes(_frontend())])


def _passes(plan) -> bool:
    """Whether a rule's value is its only child, unchanged (`?sum_expr: term` and the like)."""
    _, _, _, _, include, _, expand1, length = plan
    return expand1 and include is None and length == 1


def _pass_through(raw):
    return raw[0]


def _callbacks(builder, plans) -> dict:
    """The parser's callbacks: for each grammar rule, one call that builds the AST node directly from the
    matched children, as Lark's tree builder (child filter, placeholders, inlining, positions) followed
    by the builder's method would, without building a tree in between. Token callbacks (INT, STRING)
    run as each token is shifted. A failing builder method is kept (``builder.failed``) and reported
    after the parse."""
    out = {"INT": builder.INT, "STRING": builder.STRING}
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


def _built(builder, node, fn, values, with_meta, depth):
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


def _rule_callback(builder, name, fn, with_meta, include, nones, expand1):
    if include is None and not expand1 and fn is not None:
        return _building_callback(builder, fn, with_meta)
    tree_name = None if name.startswith("_") else name  # an inlined rule has no value of its own

    def callback(raw):
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
        if fn is None:  # an inlined rule (its children go to the parent) or a rule left as a tree
            value = None
            if tree_name is not None:
                from lark import Tree

                value = Tree(tree_name, [k.value if k.__class__ is _Node else k for k in kids])
            node = _Node(value, kids)
            node.depth = depth
            _place(node, raw)
            return node
        node = _Node(None)
        _place(node, raw)
        values = [k.value if k.__class__ is _Node else k for k in kids]
        return _built(builder, node, fn, values, with_meta, depth)
    return callback


@functools.lru_cache(maxsize=1)
def _quick():
    """The quick parser loop (rulelang/lalr_loop.py) and the plans of its rules (by number), over the
    plain tables kept with Lark's parser in the cache folder; made from Lark's parser when they are not
    there. None when the loop cannot run this parser."""
    from . import cache
    from .lalr_loop import Loop
    from .lalr_tables import FORMAT

    tables = cache.load_plain_tables(_tables_key())
    if tables is None or tables.get("format") != FORMAT:
        tables = _plain_tables(_frontend())
        if tables is None:
            return None
    try:
        plans = _plans_of([(number, name, include, nones, expand1, length)
                           for number, (length, _, name, include, nones, expand1) in enumerate(tables["rules"])])
        return Loop(tables, [plan[0] for plan in plans if _passes(plan)]), plans
    except (KeyError, TypeError, ValueError):  # not the layout lalr_tables.py writes: Lark parses
        return None


def _parse_quickly(builder, text):
    """As _parse_building, for text without syntax errors; raises lalr_loop.NotParsed at the first error
    (``builder`` may then hold part of a parse: parse again with a new one)."""
    from .lalr_loop import NotParsed

    quick = _quick()
    if quick is None:
        raise NotParsed("no plain tables")
    loop, plans = quick
    callbacks = _callbacks(builder, plans)
    return loop.parse(text, [callbacks[plan[0]] for plan in plans], {"INT": builder.INT, "STRING": builder.STRING})


def _building_callback(builder, fn, with_meta):
    """What _rule_callback makes for the commonest rules (every child kept, a builder method), in one
    pass over the children; a lone token (a name, a number) placed directly."""
    def callback(raw):
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


def _parse_building(builder, text, on_error):
    """Parse ``text`` with the rule callbacks of ``builder`` (a parser of its own: the shared one is
    never changed, so that parses may run side by side). Returns the value of the start rule."""
    from lark.parsers.lalr_parser import LALR_Parser, _Parser

    frontend = _frontend()
    lalr = LALR_Parser.__new__(LALR_Parser)
    lalr._parse_table = frontend.parser._parse_table
    lalr.parser = _Parser(lalr._parse_table, _callbacks(builder, _plans()))
    own = copy.copy(frontend)
    own.parser = lalr
    return own.parse(text, None, on_error=on_error)


def _unquote(tok: str) -> str:
    if "\\" not in tok:  # no escape: the text between the quotes (what literal_eval gives, only faster)
        return str(tok[1:-1])
    try:
        return pyast.literal_eval(tok)
    except Exception:
        return tok[1:-1]


class _Builder:
    """The AST of each grammar rule, from its children (tokens, None for a missing optional part, and
    the values built for sub-rules); methods marked ``_meta`` also get the positions."""

    def __init__(self, path: str, source: Source):
        self.path = path
        self.source = source
        self.diags = []
        self.failed = None  # the first exception a method raised (see _callbacks)

    # ------------------------------------------------------------ tokens checked as they are read
    def INT(self, tok):
        text = str(tok)
        if len(text) > 19 or int(text) > MAX_NUMBER:
            shown = text if len(text) <= 30 else text[:12] + "..." + text[-6:] + f" ({len(text)} digits)"
            self.diags.append(self.source.diag(
                "E007", f"the number {shown} is too large", tok.line, tok.column,
                end_line=tok.end_line or tok.line, end_column=tok.end_column or tok.column + 1,
                hint=f"numbers in rules stay below 2^62 (at most {MAX_NUMBER:,} either way)"))
            return tok.new_borrow_pos("INT", "0", tok)
        return tok

    def STRING(self, tok):
        value = _unquote(tok)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            self.diags.append(self.source.diag(
                "E008", "this string is not valid text (it holds a lone surrogate such as \\ud800)",
                tok.line, tok.column, end_line=tok.end_line or tok.line,
                end_column=tok.end_column or tok.column + 1,
                hint="strings are Unicode text: write the character itself, or a full escape like \\U0001F600"))
        return tok

    def _span(self, meta) -> A.Span:
        if getattr(meta, "empty", True):
            return A.Span(self.path, 1, 1, 1, 1)
        return A.Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tspan(self, tok) -> A.Span:
        return A.Span(self.path, tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + 1)

    # ------------------------------------------------------------ items
    def start(self, items):
        return items

    @_meta
    def item(self, meta, children):
        *cites, decl = children
        for c in cites:
            decl.cites.extend(c)
        return decl

    def cite(self, children):
        return [_unquote(c) for c in children]

    @_meta
    def game_decl(self, meta, children):
        title, *fields = children
        d = A.GameDecl(name="game", span=self._span(meta), title=_unquote(title))
        for kind, value in fields:
            if kind == "players":
                d.player_counts = value
            elif kind == "max_decisions":
                d.max_decisions = value
            else:
                d.rulebook = value
        return d

    def game_players(self, c):
        return ("players", c[0])

    def game_rulebook(self, c):
        return ("rulebook", _unquote(c[0]))

    def game_max_decisions(self, c):
        n = int(c[0])
        if not 1 <= n <= 10_000_000:
            self.diags.append(self.source.diag("E301", f"max_decisions is a number of decisions from 1 to 10,000,000, "
                                               f"not {n}", c[0].line, c[0].column))
        return ("max_decisions", n)

    def _counts(self, toks, counts):
        bad = next((t for t in toks if not 1 <= int(t) <= MAX_PLAYERS), None)
        if bad is not None or not counts:
            at = bad if bad is not None else toks[0]
            self.diags.append(self.source.diag(
                "E327", f"a game is for 1 to {MAX_PLAYERS} players, not {at}" if bad is not None else
                f"the player counts {toks[0]}..{toks[-1]} are empty", at.line, at.column,
                end_column=(at.end_column or at.column + 1),
                hint="write players N, players LOW..HIGH or players A, B, C with counts from 1 up"))
            return (2,)
        return counts

    def pc_single(self, c):
        return self._counts(c, (int(c[0]),))

    def pc_range(self, c):
        low, high = int(c[0]), int(c[1])
        if not (1 <= low <= MAX_PLAYERS and 1 <= high <= MAX_PLAYERS):
            return self._counts(c, ())
        return self._counts(c, tuple(range(low, high + 1)))

    def pc_list(self, c):
        return self._counts(c, tuple(sorted({int(x) for x in c})))

    @_meta
    def extends_decl(self, meta, c):
        return A.ExtendsDecl(name="extends", span=self._span(meta), path=_unquote(c[0]))

    @_meta
    def const_decl(self, meta, c):
        return A.ConstDecl(name=str(c[0]), span=self._span(meta), type=c[1], value=c[2])

    @_meta
    def enum_decl(self, meta, c):
        return A.EnumDecl(name=str(c[0]), span=self._span(meta), members=[str(x) for x in c[1:]],
                          member_spans=[self._tspan(x) for x in c[1:]])

    @_meta
    def record_decl(self, meta, c):
        return A.RecordDecl(name=str(c[0]), span=self._span(meta), fields=list(c[1:]))

    @_meta
    def piece_decl(self, meta, c):
        return A.PieceDecl(name=str(c[0]), span=self._span(meta), fields=list(c[1:]))

    @_meta
    def piece_field(self, meta, c):
        return A.PieceField(name=str(c[0]), type=c[1], default=c[2], visibility=c[3] or "all",
                            span=self._span(meta))

    @_meta
    def field_decl(self, meta, c):
        return A.FieldDecl(name=str(c[0]), type=c[1], default=c[2], span=self._span(meta))

    @_meta
    def table_decl(self, meta, c):
        name, record, mark, *rows = c
        return A.TableDecl(name=str(name), span=self._span(meta), record=str(record), rows=rows,
                           placeholder=mark)

    def placeholder_mark(self, c):
        return _unquote(c[0]) if c and c[0] is not None else ""

    @_meta
    def row(self, meta, c):
        name = c[0]
        mark = c[-1]
        values = [v for v in c[1:-1] if v is not None]
        return A.Row(name=str(name), values=values, placeholder=mark, span=self._span(meta))

    def row_pos(self, c):
        return (None, c[0])

    def row_named(self, c):
        return (str(c[0]), c[1])

    @_meta
    def var_decl(self, meta, c):
        per, name, typ, value, vis = c
        return A.VarDecl(name=str(name), span=self._span(meta), per_player=per is not None, type=typ,
                         value=value, visibility=vis or "all")

    def per_player(self, c):
        return True

    def visibility(self, c):
        return str(c[0])

    @_meta
    def board_expr(self, meta, c):
        d = A.BoardDecl(name=str(c[0]), span=self._span(meta), spec=c[1])
        for item in c[2:]:
            if item is None:
                continue
            kind, value = item
            (d.edges if kind == "edges" else d.nodes).append(value)
        return d

    @_meta
    def board_graph(self, meta, c):
        d = A.BoardDecl(name=str(c[0]), span=self._span(meta))
        for kind, value in c[1:]:
            (d.edges if kind == "edges" else d.nodes).append(value)
        return d

    def board_edges(self, c):
        return ("edges", [str(x) for x in c])

    @_meta
    def board_node(self, meta, c):
        return ("node", (str(c[0]), [a for a in c[1:] if a is not None], self._span(meta)))

    @_meta
    def board_node_at(self, meta, c):
        coords = [x for x in c if isinstance(x, A.Expr)]
        args = [x for x in c if isinstance(x, A.Arg)]
        key = A.TupleLit(span=self._span(meta), items=coords)
        return ("node", (key, args, self._span(meta)))

    @_meta
    def setup_decl(self, meta, c):
        return A.ProcDecl(name="setup", span=self._span(meta), body=c[0], proc_kind="setup")

    @_meta
    def flow_decl(self, meta, c):
        return A.ProcDecl(name="flow", span=self._span(meta), body=c[0], proc_kind="flow")

    @_meta
    def phase_decl(self, meta, c):
        return A.ProcDecl(name=str(c[0]), span=self._span(meta), placeholder=c[1], body=c[2], proc_kind="phase")

    @_meta
    def proc_decl(self, meta, c):
        return A.ProcDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [], placeholder=c[2], body=c[3])

    @_meta
    def func_decl(self, meta, c):
        return A.FuncDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [], result=c[2], placeholder=c[3],
                          body=c[4])

    def params(self, c):
        return list(c)

    @_meta
    def param(self, meta, c):
        return A.Param(name=str(c[0]), type=c[1], domain=c[2], span=self._span(meta))

    @_meta
    def action_decl(self, meta, c):
        name, params, mark, *clauses = c
        d = A.ActionDecl(name=str(name), span=self._span(meta), params=params or [], placeholder=mark)
        for kind, value in clauses:
            if kind == "require":
                d.requires.append(value)
                d.order += ("require",)
            elif kind == "cost":
                d.costs.extend(value)
                d.order += ("cost",) * len(value)
            elif kind == "effect":
                if d.effect is None:
                    d.effect = value
                else:
                    d.effect.stmts.extend(value.stmts)
            else:
                d.text, d.text_span = value
        return d

    def _split_cites(self, c):
        cites = []
        rest = []
        for x in c:
            if isinstance(x, list) and all(isinstance(s, str) for s in x) and x and not isinstance(x, A.Block):
                cites.extend(x)
            else:
                rest.append(x)
        return cites, rest

    @_meta
    def require_clause(self, meta, c):
        cites, rest = self._split_cites(c)
        test, msg = rest
        return ("require", A.Require(test=test, message=_unquote(msg) if msg else "", span=self._span(meta),
                                     cites=cites))

    def cost_clause(self, c):
        cites, rest = self._split_cites(c)
        for item in rest:
            item.cites = list(cites) + item.cites
        return ("cost", rest)

    @_meta
    def cost_item(self, meta, c):
        return A.Cost(target=c[0], amount=c[1], span=self._span(meta))

    def effect_clause(self, c):
        cites, rest = self._split_cites(c)
        block = rest[0]
        if cites:
            for s in block.stmts:
                s.cites = list(cites) + s.cites
        return ("effect", block)

    @_meta
    def text_clause(self, meta, c):
        return ("text", (_unquote(c[0]), self._span(meta)))

    @_meta
    def event_decl(self, meta, c):
        return A.EventDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [])

    @_meta
    def trigger_decl(self, meta, c):
        label = _unquote(c[0]) if c[0] is not None else None
        event = str(c[1])
        names = [str(x) for x in c[2:-2] if x is not None]
        cond, body = c[-2], c[-1]
        return A.TriggerDecl(name=f"when {event}", span=self._span(meta), event=event, params=names,
                             condition=cond, body=body, label=label)

    @_meta
    def ending_decl(self, meta, c):
        return A.EndingDecl(name=_unquote(c[0]), span=self._span(meta), condition=c[1])

    @_meta
    def invariant_decl(self, meta, c):
        return A.InvariantDecl(name=_unquote(c[0]), span=self._span(meta), condition=c[1])

    @_meta
    def score_decl(self, meta, c):
        return A.ScoreDecl(name="score", span=self._span(meta), param=str(c[0]), value=c[1])

    @_meta
    def tiebreak_decl(self, meta, c):
        return A.ScoreDecl(name="tiebreak", span=self._span(meta), param=str(c[0]), value=c[1], tiebreak=True)

    @_meta
    def payoff_decl(self, meta, c):
        return A.ScoreDecl(name="payoff", span=self._span(meta), param=str(c[0]), value=c[1], payoff=True)

    @_meta
    def heuristic_decl(self, meta, c):
        return A.ScoreDecl(name="heuristic", span=self._span(meta), param=str(c[0]), value=c[1], heuristic=True)

    @_meta
    def variant_decl(self, meta, c):
        name, desc, *items = c
        return A.VariantDecl(name=str(name), span=self._span(meta), description=_unquote(desc) if desc else "",
                             items=items)

    @_meta
    def override_decl(self, meta, c):
        d = c[0]
        d.mode = "override"
        return d

    @_meta
    def extend_decl(self, meta, c):
        target, body = c
        return A.ExtendDecl(name=f"extend {target}", span=self._span(meta), target=target, body=body)

    def extend_setup(self, c):
        return "setup"

    def extend_flow(self, c):
        return "flow"

    def extend_named(self, c):
        return str(c[0])

    @_meta
    def scenario_decl(self, meta, c):
        d = A.ScenarioDecl(name=_unquote(c[0]), span=self._span(meta))
        for kind, value in c[1:]:
            if kind == "players":
                d.players = value
            elif kind == "seed":
                d.seed = value
            elif kind == "variant":
                d.variants.append(value)
            elif kind == "chance":
                d.chance = value
            else:
                getattr(d, kind).append(value)
                d.parts.append((kind, value))
        return d

    def sc_players(self, c):
        return ("players", int(c[0]))

    def sc_seed(self, c):
        return ("seed", int(c[0]))

    def sc_variant(self, c):
        return ("variant", str(c[0]))

    def sc_chance(self, c):
        return ("chance", str(c[0]))

    def sc_given(self, c):
        return ("given", c[0])

    def sc_when(self, c):
        return ("when", c[0])

    def sc_then(self, c):
        return ("then", c[0])

    # ------------------------------------------------------------ types
    @_meta
    def type_name(self, meta, c):
        return A.TypeName(name=str(c[0]), span=self._span(meta))

    @_meta
    def type_generic(self, meta, c):
        return A.TypeGeneric(name=str(c[0]), args=list(c[1:]), span=self._span(meta))

    @_meta
    def type_range(self, meta, c):
        return A.TypeRange(low=int(c[0]), high=int(c[1]), span=self._span(meta))

    # ------------------------------------------------------------ statements
    @_meta
    def block(self, meta, c):
        return A.Block(stmts=list(c), span=self._span(meta))

    def stmt(self, c):
        *cites, s = c
        for x in cites:
            s.cites.extend(x)
        return s

    @_meta
    def let_stmt(self, meta, c):
        return A.Let(name=str(c[0]), value=c[1], span=self._span(meta))

    @_meta
    def choose_rhs(self, meta, c):
        count, ordered, options, player, optional, prompt = c
        return A.Choose(span=self._span(meta), count=count, ordered=ordered is not None, options=options,
                        player=player, optional=optional is not None, prompt=_unquote(prompt) if prompt else "")

    @_meta
    def roll_rhs(self, meta, c):
        return A.Roll(span=self._span(meta), count=c[0], faces=c[1])

    @_meta
    def draw_rhs(self, meta, c):
        return A.Draw(span=self._span(meta), count=c[0], pile=c[1])

    def count_one(self, c):
        return None

    def count_expr(self, c):
        return c[0]

    @_meta
    def expr_stmt(self, meta, c):
        return A.ExprStmt(span=self._span(meta), expr=c[0])

    @_meta
    def assign_set(self, meta, c):
        return A.Assign(span=self._span(meta), op="=", target=c[0], value=c[1])

    @_meta
    def assign_add(self, meta, c):
        return A.Assign(span=self._span(meta), op="+=", target=c[0], value=c[1])

    @_meta
    def assign_sub(self, meta, c):
        return A.Assign(span=self._span(meta), op="-=", target=c[0], value=c[1])

    @_meta
    def add_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="+", left=c[0], right=c[1])

    @_meta
    def sub_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="-", left=c[0], right=c[1])

    @_meta
    def if_stmt(self, meta, c):
        test, body, *rest = c
        s = A.If(span=self._span(meta), branches=[(test, body)])
        for part in rest:
            if part is None:
                continue
            if part[0] == "elif":
                s.branches.append((part[1], part[2]))
            else:
                s.orelse = part[1]
        return s

    def elif_part(self, c):
        return ("elif", c[0], c[1])

    def else_part(self, c):
        return ("else", c[0])

    @_meta
    def for_stmt(self, meta, c):
        n1, n2, source, body = c
        names = [str(n1)] + ([str(n2)] if n2 is not None else [])
        return A.For(span=self._span(meta), names=names, source=source, body=body)

    @_meta
    def while_stmt(self, meta, c):
        return A.While(span=self._span(meta), test=c[0], body=c[1])

    @_meta
    def repeat_stmt(self, meta, c):
        return A.Repeat(span=self._span(meta), times=c[0], body=c[1])

    @_meta
    def loop_stmt(self, meta, c):
        return A.Loop(span=self._span(meta), body=c[0])

    @_meta
    def break_stmt(self, meta, c):
        return A.Break(span=self._span(meta))

    @_meta
    def continue_stmt(self, meta, c):
        return A.Continue(span=self._span(meta))

    @_meta
    def return_stmt(self, meta, c):
        return A.Return(span=self._span(meta), value=c[0])

    @_meta
    def turn_stmt(self, meta, c):
        return A.Turn(span=self._span(meta), player=c[0], body=c[1])

    @_meta
    def offer_stmt(self, meta, c):
        return A.Offer(span=self._span(meta), actions=[str(x) for x in c[:-2] if x is not None], player=c[-2],
                       orelse=c[-1])

    @_meta
    def shuffle_stmt(self, meta, c):
        if c[1] is not None:  # shuffle SOURCE into PILE
            return A.Shuffle(span=self._span(meta), pile=c[1], source=c[0])
        return A.Shuffle(span=self._span(meta), pile=c[0])

    @_meta
    def draw_stmt(self, meta, c):
        return A.DrawInto(span=self._span(meta), count=c[0], pile=c[1], target=c[2])

    @_meta
    def add_stmt(self, meta, c):
        return A.Add(span=self._span(meta), item=c[0], target=c[1])

    @_meta
    def remove_stmt(self, meta, c):
        return A.Remove(span=self._span(meta), item=c[0], source=c[1])

    @_meta
    def move_stmt(self, meta, c):
        return A.Move(span=self._span(meta), item=c[0], source=c[1], target=c[2])

    @_meta
    def reveal_stmt(self, meta, c):
        return A.Reveal(span=self._span(meta), item=c[0], to=c[1])

    @_meta
    def emit_stmt(self, meta, c):
        return A.Emit(span=self._span(meta), event=str(c[0]), args=[a for a in c[1:] if a is not None])

    @_meta
    def end_stmt(self, meta, c):
        kind, value = c[0] if c[0] is not None else ("text", None)
        if kind == "text":
            return A.EndGame(span=self._span(meta), reason=value)
        return A.EndGame(span=self._span(meta), reason_expr=value)

    @_meta
    def trigger_end_stmt(self, meta, c):
        kind, value = c[0]
        if kind == "text":
            return A.TriggerEnd(span=self._span(meta), reason=value)
        return A.TriggerEnd(span=self._span(meta), reason_expr=value)

    def reason_text(self, c):
        return ("text", _unquote(c[0]))

    def reason_expr(self, c):
        return ("expr", c[0])

    @_meta
    def eliminate_stmt(self, meta, c):
        return A.Eliminate(span=self._span(meta), player=c[0])

    @_meta
    def log_stmt(self, meta, c):
        return A.Log(span=self._span(meta), items=list(c))

    @_meta
    def play_stmt(self, meta, c):
        return A.Play(span=self._span(meta), action=c[0])

    @_meta
    def chance_stmt(self, meta, c):
        return A.ChanceStep(span=self._span(meta), outcome=c[0])

    @_meta
    def destroy_stmt(self, meta, c):
        return A.Destroy(span=self._span(meta), piece=c[0])

    @_meta
    def new_expr(self, meta, c):
        return A.New(span=self._span(meta), kind=str(c[0]), args=[a for a in c[1:] if a is not None])

    @_meta
    def expect_stmt(self, meta, c):
        return A.Expect(span=self._span(meta), test=c[0], message=_unquote(c[1]) if c[1] else "")

    # ------------------------------------------------------------ expressions
    @_meta
    def lambda_expr(self, meta, c):
        return A.Lambda(span=self._span(meta), param=str(c[0]), body=c[-1])

    @_meta
    def cond_expr(self, meta, c):
        return A.Cond(span=self._span(meta), test=c[0], then=c[1], orelse=c[2])

    @_meta
    def or_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="or", left=c[0], right=c[1])

    @_meta
    def and_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="and", left=c[0], right=c[1])

    @_meta
    def not_op(self, meta, c):
        return A.Unary(span=self._span(meta), op="not", operand=c[0])

    @_meta
    def cmp_op(self, meta, c):
        return A.Binary(span=self._span(meta), op=str(c[1]), left=c[0], right=c[2])

    @_meta
    def in_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="in", left=c[0], right=c[1])

    @_meta
    def not_in_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="not in", left=c[0], right=c[1])

    @_meta
    def range_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="..", left=c[0], right=c[1])

    @_meta
    def bin_op(self, meta, c):
        return A.Binary(span=self._span(meta), op=str(c[1]), left=c[0], right=c[2])

    @_meta
    def neg_op(self, meta, c):
        return A.Unary(span=self._span(meta), op="-", operand=c[0])

    @_meta
    def placeholder(self, meta, c):
        return A.Placeholder(span=self._span(meta), inner=c[0])

    @_meta
    def call(self, meta, c):
        return A.Call(span=self._span(meta), func=c[0], args=[a for a in c[1:] if a is not None])

    @_meta
    def arg_pos(self, meta, c):
        return A.Arg(name=None, value=c[0], span=self._span(meta))

    @_meta
    def arg_named(self, meta, c):
        return A.Arg(name=str(c[0]), value=c[1], span=self._span(meta))

    @_meta
    def index(self, meta, c):
        return A.Index(span=self._span(meta), target=c[0], index=c[1])

    @_meta
    def field(self, meta, c):
        return A.Field(span=self._span(meta), target=c[0], name=str(c[1]))

    @_meta
    def int_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=int(c[0]))

    @_meta
    def str_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=_unquote(c[0]))

    @_meta
    def true_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=True)

    @_meta
    def false_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=False)

    @_meta
    def none_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=None)

    @_meta
    def name(self, meta, c):
        return A.Name(span=self._span(meta), ident=str(c[0]))

    @_meta
    def tuple_lit(self, meta, c):
        return A.TupleLit(span=self._span(meta), items=[x for x in c if x is not None])

    @_meta
    def list_lit(self, meta, c):
        return A.ListLit(span=self._span(meta), items=[x for x in c if x is not None])

    @_meta
    def list_comp(self, meta, c):
        elem, n1, n2, source, cond = c
        names = [str(n1)] + ([str(n2)] if n2 is not None else [])
        return A.Comprehension(span=self._span(meta), kind="list", element=elem, names=names, source=source,
                               condition=cond)

    @_meta
    def list_comp_nested(self, meta, c):
        """[E for a in A if p for b in B if q ...]: the list of E for every a, then b (each `if` filtering
        what its `for` takes), written as flatten([flatten([... [E for b in B if q] ...]) for a in A if p])."""
        elem, n1, n2, source, cond, *more = c
        parts = [([str(n1)] + ([str(n2)] if n2 is not None else []), source, cond)] + list(more)
        span = self._span(meta)
        names, source, cond = parts[-1]
        out = A.Comprehension(span=span, kind="list", element=elem, names=names, source=source, condition=cond)
        for names, source, cond in reversed(parts[:-1]):
            outer = A.Comprehension(span=span, kind="list", element=out, names=names, source=source, condition=cond)
            out = A.Call(span=span, func=A.Name(span=span, ident="flatten"), args=[A.Arg(None, outer, span)])
        return out

    def comp_for(self, c):
        n1, n2, source, cond = c
        return ([str(n1)] + ([str(n2)] if n2 is not None else []), source, cond)

    @_meta
    def map_comp(self, meta, c):
        key, value, n1, n2, source, cond = c
        names = [str(n1)] + ([str(n2)] if n2 is not None else [])
        return A.Comprehension(span=self._span(meta), kind="map", element=key, value=value, names=names,
                               source=source, condition=cond)

    @_meta
    def empty_lit(self, meta, c):
        return A.EmptyLit(span=self._span(meta))

    @_meta
    def set_lit(self, meta, c):
        return A.SetLit(span=self._span(meta), items=list(c))

    @_meta
    def map_lit(self, meta, c):
        return A.MapLit(span=self._span(meta), entries=list(c))

    def map_entry(self, c):
        return (c[0], c[1])


def _code_chars(text: str):
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


def _nesting_problem(text: str):
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


def _unclosed_block(text: str):
    """When the file opens more '{' than it closes, the '{' that is never closed: (line, column, what).

    The outermost block still open when a declaration starts at the left margin is the one missing its
    '}' (declarations do not nest, except inside a variant); failing that, the outermost one left open."""
    stack = []
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


def _too_deep(module_items):
    """The first expression nested more than MAX_DEPTH operators deep (walked without recursion)."""
    stack = [(x, 0, None) for x in module_items]
    while stack:
        node, depth, top = stack.pop()
        if isinstance(node, A.Expr):
            depth += 1
            top = top or node
            if depth > MAX_DEPTH + 1:  # (the path's last expression is an operand, not an operator)
                return top  # reported at the outermost expression, where the long chain starts
        if isinstance(node, (list, tuple)):
            stack.extend((x, depth, top) for x in node)
            continue
        if not hasattr(node, "__attrs_attrs__") or isinstance(node, A.Span):
            continue
        for f in node.__attrs_attrs__:
            v = getattr(node, f.name)
            if isinstance(v, (list, tuple)) or hasattr(v, "__attrs_attrs__"):
                stack.append((v, depth, top))
    return None


def _describe_expected(expected) -> str:
    words = sorted({TOKEN_WORDS.get(e, "'" + e.lower() + "'" if e.isupper() and not e.startswith("__") else e)
                    for e in expected})
    words = [w for w in words if not w.startswith("__")]
    if not words:
        return ""
    if len(words) > 8:
        words = words[:8] + ["..."]
    return "expected " + ", ".join(words)


def _token_text(tok) -> str:
    if tok is None:
        return "end of file"
    if getattr(tok, "type", "") == "$END":
        return "the end of the file"
    return repr(str(tok))


def _syntax_diag(source: Source, err):
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

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


def parse(text: str, path: str = "<string>"):
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
        errors.append(e)
        if set(getattr(e, "accepts", None) or getattr(e, "expected", None) or ()) == {"INTO"}:
            return False  # a draw statement without 'into': skipping tokens would only repeat the error
        return len(errors) < MAX_ERRORS

    builder = _Builder(path, source)
    try:
        tree = _parse_quickly(builder, text)
    except Exception:  # noqa: BLE001 - a syntax error (NotParsed), or anything unforeseen (never seen in
        # the tests, which call _parse_quickly directly): Lark parses it again, with its errors and messages
        builder = None
    if builder is None:
        from lark.exceptions import UnexpectedInput

        builder = _Builder(path, source)
        try:
            tree = _parse_building(builder, text, on_error)
        except UnexpectedInput as e:
            errors.append(e)
            tree = None
        except RecursionError:
            diags.append(source.diag("E006", "the file is nested too deeply to read", 1, 1,
                                     hint="split long expressions with 'let'"))
            return None, diags
    seen_lines = set()
    for e in errors:
        d = _syntax_diag(source, e)
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
    deep = None if shallow else _too_deep(items)  # the exact walk only when some expression may be too deep
    if deep is not None:
        sp = deep.span
        diags.append(source.diag("E006", f"this expression chains more than {MAX_DEPTH} operators", sp.line,
                                 sp.column, end_line=sp.end_line, end_column=sp.end_column,
                                 hint="split it into parts with 'let', or add up a list with sum([...])"))
        return None, diags
    return A.Module(path=path, items=items, source=source), diags

"""The tree builder: Lark's parse of a rule file -> the attrs AST of rulelang/ast.py, with spans. Each
method builds one grammar rule's node from its children (rulelang/parser.py runs Lark, or its quick loop,
with these methods as callbacks)."""
from __future__ import annotations

import ast as pyast
from typing import Any, Callable, Optional, TypeVar, Union

from . import ast as A
from .diagnostics import Diagnostic, Source

MAX_NUMBER = (1 << 62) - 1  # the largest number a literal may write (the run-time limit, compiler.MAX_INT, is 2^62)
MAX_PLAYERS = 100  # the most seats a game header may ask for


# The positions of what a rule matched: Lark's Meta, or the quick parser's node (parser.py); both have
# line, column, end_line, end_column and empty
Meta = Any
# A token (a NAME, INT, STRING...): a str with its position (line, column, end_line, end_column), of
# Lark's standalone parser or of the quick parser (lalr_loop.py)
Token = Any
_F = TypeVar("_F", bound=Callable[..., Any])


def _meta(method: _F) -> _F:
    """Mark a builder method that also gets the positions of what its rule matched (as Lark's
    ``v_args(meta=True)``)."""
    method.with_meta = True  # type: ignore[attr-defined]  # (a mark on the function itself, read by parser.py)
    return method


def _unquote(tok: str) -> str:
    if "\\" not in tok:  # no escape: the text between the quotes (what literal_eval gives, only faster)
        return str(tok[1:-1])
    try:
        return pyast.literal_eval(tok)
    except Exception:
        return tok[1:-1]


class _Pattern:
    """A tuple pattern as parsed (`(a, (b, c))`): its items, each a NAME token or a _Pattern, and its span.
    It never reaches the tree: the builder turns it into Lets (or Binds) of Unpack items."""

    def __init__(self, items: list, span: A.Span) -> None:
        self.items, self.span = items, span

    def text(self) -> str:
        inner = ", ".join(x.text() if isinstance(x, _Pattern) else str(x) for x in self.items)
        return f"({inner},)" if len(self.items) == 1 else f"({inner})"

    def shape(self) -> tuple:
        """(the pattern as written, its items: a name, `_`, or a nested pattern's shape): Param.shape."""
        return (self.text(), tuple(x.shape() if isinstance(x, _Pattern) else str(x) for x in self.items))

    def names(self) -> set:
        return {n for x in self.items for n in (x.names() if isinstance(x, _Pattern) else [str(x)])} - {A.DISCARD}

    @staticmethod
    def hidden(k: int = 0) -> str:
        """The local holding the tuple of the k-th pattern of a `for` (0 for `let`). It is read only by the
        items of its pattern, bound right after it, so the same name may be bound again by the next
        pattern; and it depends on nothing of the layout (fmt keeps the tree)."""
        return f"{A.HIDDEN}t{k}"


class _Builder:
    """The AST of each grammar rule, from its children (tokens, None for a missing optional part, and
    the values built for sub-rules); methods marked ``_meta`` also get the positions."""

    def __init__(self, path: str, source: Source) -> None:
        self.path = path
        self.source = source
        self.diags: list[Diagnostic] = []
        # the first exception a method raised, as parser._BuildFailed (see _callbacks); Any: parser.py imports
        # this module, so it is not imported back, even for its types (tests/test_layers.py: no import circle)
        self.failed: Any = None

    # ------------------------------------------------------------ tokens checked as they are read
    def INT(self, tok: Token) -> Token:
        text = str(tok)
        if len(text) > 19 or int(text) > MAX_NUMBER:
            shown = text if len(text) <= 30 else text[:12] + "..." + text[-6:] + f" ({len(text)} digits)"
            self.diags.append(self.source.diag(
                "E007", f"the number {shown} is too large", tok.line, tok.column,
                end_line=tok.end_line or tok.line, end_column=tok.end_column or tok.column + 1,
                hint=f"numbers in rules stay below 2^62 (at most {MAX_NUMBER:,} either way)"))
            return tok.new_borrow_pos("INT", "0", tok)
        return tok

    def STRING(self, tok: Token) -> Token:
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

    def _span(self, meta: Meta) -> A.Span:
        if getattr(meta, "empty", True):
            return A.Span(self.path, 1, 1, 1, 1)
        return A.Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tspan(self, tok: Token) -> A.Span:
        return A.Span(self.path, tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + 1)

    # ------------------------------------------------------------ items
    def start(self, items: list[Any]) -> list[A.Decl]:
        return items

    @_meta
    def item(self, meta: Meta, children: list[Any]) -> A.Decl:
        *cites, decl = children
        for c in cites:
            decl.cites.extend(c)
        return decl

    def cite(self, children: list[Any]) -> list[str]:
        return [_unquote(c) for c in children]

    @_meta
    def game_decl(self, meta: Meta, children: list[Any]) -> A.GameDecl:
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

    def game_players(self, c: list[Any]) -> tuple[str, tuple[int, ...]]:
        return ("players", c[0])

    def game_rulebook(self, c: list[Any]) -> tuple[str, str]:
        return ("rulebook", _unquote(c[0]))

    def game_max_decisions(self, c: list[Any]) -> tuple[str, int]:
        n = int(c[0])
        if not 1 <= n <= 10_000_000:
            self.diags.append(self.source.diag("E301", f"max_decisions is a number of decisions from 1 to 10,000,000, "
                                               f"not {n}", c[0].line, c[0].column))
        return ("max_decisions", n)

    def _counts(self, toks: list[Token], counts: tuple[int, ...]) -> tuple[int, ...]:
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

    def pc_single(self, c: list[Any]) -> tuple[int, ...]:
        return self._counts(c, (int(c[0]),))

    def pc_range(self, c: list[Any]) -> tuple[int, ...]:
        low, high = int(c[0]), int(c[1])
        if not (1 <= low <= MAX_PLAYERS and 1 <= high <= MAX_PLAYERS):
            return self._counts(c, ())
        return self._counts(c, tuple(range(low, high + 1)))

    def pc_list(self, c: list[Any]) -> tuple[int, ...]:
        return self._counts(c, tuple(sorted({int(x) for x in c})))

    @_meta
    def extends_decl(self, meta: Meta, c: list[Any]) -> A.ExtendsDecl:
        return A.ExtendsDecl(name="extends", span=self._span(meta), path=_unquote(c[0]))

    @_meta
    def const_decl(self, meta: Meta, c: list[Any]) -> A.ConstDecl:
        return A.ConstDecl(name=str(c[0]), span=self._span(meta), type=c[1], value=c[2])

    @_meta
    def enum_decl(self, meta: Meta, c: list[Any]) -> A.EnumDecl:
        return A.EnumDecl(name=str(c[0]), span=self._span(meta), members=[str(x) for x in c[1:]],
                          member_spans=[self._tspan(x) for x in c[1:]])

    @_meta
    def record_decl(self, meta: Meta, c: list[Any]) -> A.RecordDecl:
        return A.RecordDecl(name=str(c[0]), span=self._span(meta), fields=list(c[1:]))

    @_meta
    def piece_decl(self, meta: Meta, c: list[Any]) -> A.PieceDecl:
        return A.PieceDecl(name=str(c[0]), span=self._span(meta), fields=list(c[1:]))

    @_meta
    def piece_field(self, meta: Meta, c: list[Any]) -> A.PieceField:
        return A.PieceField(name=str(c[0]), type=c[1], default=c[2], visibility=c[3] or "all",
                            span=self._span(meta))

    @_meta
    def field_decl(self, meta: Meta, c: list[Any]) -> A.FieldDecl:
        return A.FieldDecl(name=str(c[0]), type=c[1], default=c[2], span=self._span(meta))

    @_meta
    def table_decl(self, meta: Meta, c: list[Any]) -> A.TableDecl:
        name, record, mark, *rows = c
        return A.TableDecl(name=str(name), span=self._span(meta), record=str(record), rows=rows,
                           placeholder=mark)

    def placeholder_mark(self, c: list[Any]) -> str:
        return _unquote(c[0]) if c and c[0] is not None else ""

    @_meta
    def row(self, meta: Meta, c: list[Any]) -> A.Row:
        name = c[0]
        mark = c[-1]
        values = [v for v in c[1:-1] if v is not None]
        return A.Row(name=str(name), values=values, placeholder=mark, span=self._span(meta))

    def row_pos(self, c: list[Any]) -> tuple[None, A.Expr]:
        return (None, c[0])

    def row_named(self, c: list[Any]) -> tuple[str, A.Expr]:
        return (str(c[0]), c[1])

    @_meta
    def var_decl(self, meta: Meta, c: list[Any]) -> A.VarDecl:
        per, name, typ, value, vis = c
        return A.VarDecl(name=str(name), span=self._span(meta), per_player=per is not None, type=typ,
                         value=value, visibility=vis or "all")

    def per_player(self, c: list[Any]) -> bool:
        return True

    def visibility(self, c: list[Any]) -> str:
        return str(c[0])

    @_meta
    def board_expr(self, meta: Meta, c: list[Any]) -> A.BoardDecl:
        d = A.BoardDecl(name=str(c[0]), span=self._span(meta), spec=c[1])
        for item in c[2:]:
            if item is None:
                continue
            kind, value = item
            (d.edges if kind == "edges" else d.nodes).append(value)
        return d

    @_meta
    def board_graph(self, meta: Meta, c: list[Any]) -> A.BoardDecl:
        d = A.BoardDecl(name=str(c[0]), span=self._span(meta))
        for kind, value in c[1:]:
            (d.edges if kind == "edges" else d.nodes).append(value)
        return d

    def board_edges(self, c: list[Any]) -> tuple[str, list[str]]:
        return ("edges", [str(x) for x in c])

    @_meta
    def board_node(self, meta: Meta, c: list[Any]) -> tuple[str, tuple[str, list[A.Arg], A.Span]]:
        return ("node", (str(c[0]), [a for a in c[1:] if a is not None], self._span(meta)))

    @_meta
    def board_node_at(self, meta: Meta, c: list[Any]) -> tuple[str, tuple[A.TupleLit, list[A.Arg], A.Span]]:
        coords = [x for x in c if isinstance(x, A.Expr)]
        args = [x for x in c if isinstance(x, A.Arg)]
        key = A.TupleLit(span=self._span(meta), items=coords)
        return ("node", (key, args, self._span(meta)))

    @_meta
    def setup_decl(self, meta: Meta, c: list[Any]) -> A.ProcDecl:
        return A.ProcDecl(name="setup", span=self._span(meta), body=c[0], proc_kind="setup")

    @_meta
    def flow_decl(self, meta: Meta, c: list[Any]) -> A.ProcDecl:
        return A.ProcDecl(name="flow", span=self._span(meta), body=c[0], proc_kind="flow")

    @_meta
    def phase_decl(self, meta: Meta, c: list[Any]) -> A.ProcDecl:
        return A.ProcDecl(name=str(c[0]), span=self._span(meta), placeholder=c[1], body=c[2], proc_kind="phase")

    @_meta
    def proc_decl(self, meta: Meta, c: list[Any]) -> A.ProcDecl:
        return A.ProcDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [], placeholder=c[2], body=c[3])

    @_meta
    def func_decl(self, meta: Meta, c: list[Any]) -> A.FuncDecl:
        return A.FuncDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [], result=c[2], placeholder=c[3],
                          body=c[4])

    def params(self, c: list[Any]) -> list[A.Param]:
        return list(c)

    @_meta
    def param(self, meta: Meta, c: list[Any]) -> A.Param:
        return A.Param(name=str(c[0]), type=c[1], domain=c[2], span=self._span(meta))

    def action_params(self, c: list[Any]) -> list[Any]:
        return list(c)

    @_meta
    def pattern_param(self, meta: Meta, c: list[Any]) -> tuple[str, _Pattern, Optional[A.Expr], A.Span]:
        """`(a, b) in DOMAIN`: made a Param by action_decl, which knows its position."""
        return ("pattern", c[0], c[1], self._span(meta))

    def _action_params(self, raw: list) -> tuple:
        """The Params of an action, and [(hidden name, _Pattern)] of those written as tuple patterns: each
        holds its tuple in the hidden local `%pK` (K: its position), and a later domain that mentions its
        names computes with them bound."""
        params: list[A.Param] = []
        pats: list[tuple[str, _Pattern]] = []
        for k, p in enumerate(raw):
            if isinstance(p, A.Param):
                p.domain = self._wrap_used(pats, p.domain)
                params.append(p)
                continue
            _, pat, domain, span = p
            hidden = A.param_hidden(k)
            params.append(A.Param(name=hidden, domain=self._wrap_used(pats, domain), span=span, shape=pat.shape(),
                                  patterns=self._patterns_note([(hidden, pat)])))
            pats.append((hidden, pat))
        return params, pats

    def _wrap_used(self, pats: list[tuple[str, _Pattern]], e: Optional[A.Expr]) -> Optional[A.Expr]:
        """e computed with the names of those patterns it mentions bound (it is left alone otherwise: a
        domain that reads no parameter stays one known when the rules load)."""
        if e is None or not pats:
            return e
        used = {x.ident for x in A.walk(e) if isinstance(x, A.Name)}
        return self._wrap([(h, p) for h, p in pats if p.names() & used], e, True)

    def _wrap_place(self, pats: list[tuple[str, _Pattern]], e: Any) -> Any:
        """A cost's target (a place: NAME, its items and fields) with the pattern names bound in its indexes."""
        if isinstance(e, A.Index):
            e.target = self._wrap_place(pats, e.target)
            e.index = self._wrap_used(pats, e.index)
        elif isinstance(e, A.Field):
            e.target = self._wrap_place(pats, e.target)
        return e

    @_meta
    def action_decl(self, meta: Meta, c: list[Any]) -> A.ActionDecl:
        name, raw, mark, *clauses = c
        params, pats = self._action_params(raw or [])
        d = A.ActionDecl(name=str(name), span=self._span(meta), params=params, placeholder=mark)
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
        if pats:  # the names of the parameters' patterns: bound where they are read, and first in the effect
            for r in d.requires:
                r.test = self._wrap_used(pats, r.test)
            for cost in d.costs:
                cost.target = self._wrap_place(pats, cost.target)
                cost.amount = self._wrap_used(pats, cost.amount)
            lets = [A.Let(name=n, value=v, span=sp, pattern=p.text())
                    for h, p in pats for n, v, sp in self._pattern_binds(p, h)]
            effect = d.effect or A.Block(stmts=[], span=d.span)
            d.effect = A.Block(stmts=lets + effect.stmts, span=effect.span)
        return d

    def _split_cites(self, c: list[Any]) -> tuple[list[str], list[Any]]:
        cites = []
        rest = []
        for x in c:
            if isinstance(x, list) and all(isinstance(s, str) for s in x) and x and not isinstance(x, A.Block):
                cites.extend(x)
            else:
                rest.append(x)
        return cites, rest

    @_meta
    def require_clause(self, meta: Meta, c: list[Any]) -> tuple[str, A.Require]:
        cites, rest = self._split_cites(c)
        test, msg = rest
        return ("require", A.Require(test=test, message=_unquote(msg) if msg else "", span=self._span(meta),
                                     cites=cites))

    def cost_clause(self, c: list[Any]) -> tuple[str, list[A.Cost]]:
        cites, rest = self._split_cites(c)
        for item in rest:
            item.cites = list(cites) + item.cites
        return ("cost", rest)

    @_meta
    def cost_item(self, meta: Meta, c: list[Any]) -> A.Cost:
        return A.Cost(target=c[0], amount=c[1], span=self._span(meta))

    def effect_clause(self, c: list[Any]) -> tuple[str, A.Block]:
        cites, rest = self._split_cites(c)
        block = rest[0]
        if cites:
            for s in block.stmts:
                s.cites = list(cites) + s.cites
        return ("effect", block)

    @_meta
    def text_clause(self, meta: Meta, c: list[Any]) -> tuple[str, tuple[str, A.Span]]:
        return ("text", (_unquote(c[0]), self._span(meta)))

    @_meta
    def event_decl(self, meta: Meta, c: list[Any]) -> A.EventDecl:
        return A.EventDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [])

    @_meta
    def trigger_decl(self, meta: Meta, c: list[Any]) -> A.TriggerDecl:
        label = _unquote(c[0]) if c[0] is not None else None
        event = str(c[1])
        names = [str(x) for x in c[2:-2] if x is not None]
        cond, body = c[-2], c[-1]
        return A.TriggerDecl(name=f"when {event}", span=self._span(meta), event=event, params=names,
                             condition=cond, body=body, label=label)

    @_meta
    def ending_decl(self, meta: Meta, c: list[Any]) -> A.EndingDecl:
        return A.EndingDecl(name=_unquote(c[0]), span=self._span(meta), condition=c[1])

    @_meta
    def invariant_decl(self, meta: Meta, c: list[Any]) -> A.InvariantDecl:
        return A.InvariantDecl(name=_unquote(c[0]), span=self._span(meta), condition=c[1])

    @_meta
    def score_decl(self, meta: Meta, c: list[Any]) -> A.ScoreDecl:
        return A.ScoreDecl(name="score", span=self._span(meta), param=str(c[0]), value=c[1])

    @_meta
    def tiebreak_decl(self, meta: Meta, c: list[Any]) -> A.ScoreDecl:
        return A.ScoreDecl(name="tiebreak", span=self._span(meta), param=str(c[0]), value=c[1], tiebreak=True)

    @_meta
    def payoff_decl(self, meta: Meta, c: list[Any]) -> A.ScoreDecl:
        return A.ScoreDecl(name="payoff", span=self._span(meta), param=str(c[0]), value=c[1], payoff=True)

    @_meta
    def heuristic_decl(self, meta: Meta, c: list[Any]) -> A.ScoreDecl:
        return A.ScoreDecl(name="heuristic", span=self._span(meta), param=str(c[0]), value=c[1], heuristic=True)

    @_meta
    def variant_decl(self, meta: Meta, c: list[Any]) -> A.VariantDecl:
        name, desc, *items = c
        return A.VariantDecl(name=str(name), span=self._span(meta), description=_unquote(desc) if desc else "",
                             items=items)

    @_meta
    def override_decl(self, meta: Meta, c: list[Any]) -> A.Decl:
        d = c[0]
        d.mode = "override"
        return d

    @_meta
    def extend_decl(self, meta: Meta, c: list[Any]) -> A.ExtendDecl:
        target, body = c
        return A.ExtendDecl(name=f"extend {target}", span=self._span(meta), target=target, body=body)

    def extend_setup(self, c: list[Any]) -> str:
        return "setup"

    def extend_flow(self, c: list[Any]) -> str:
        return "flow"

    def extend_named(self, c: list[Any]) -> str:
        return str(c[0])

    @_meta
    def scenario_decl(self, meta: Meta, c: list[Any]) -> A.ScenarioDecl:
        d = A.ScenarioDecl(name=_unquote(c[0]), span=self._span(meta))
        if c[1] is not None:  # after "A"
            d.after, d.after_span = _unquote(c[1]), self._tspan(c[1])
        for kind, value, *at in c[2:]:
            if at:
                d.setting_spans.append((kind, at[0]))
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

    @_meta
    def sc_players(self, meta: Meta, c: list[Any]) -> tuple[str, int, A.Span]:
        return ("players", int(c[0]), self._span(meta))

    @_meta
    def sc_seed(self, meta: Meta, c: list[Any]) -> tuple[str, int, A.Span]:
        return ("seed", int(c[0]), self._span(meta))

    @_meta
    def sc_variant(self, meta: Meta, c: list[Any]) -> tuple[str, str, A.Span]:
        return ("variant", str(c[0]), self._span(meta))

    @_meta
    def sc_chance(self, meta: Meta, c: list[Any]) -> tuple[str, str, A.Span]:
        return ("chance", str(c[0]), self._span(meta))

    def sc_given(self, c: list[Any]) -> tuple[str, A.Block]:
        return ("given", c[0])

    def sc_when(self, c: list[Any]) -> tuple[str, A.Block]:
        return ("when", c[0])

    def sc_then(self, c: list[Any]) -> tuple[str, A.Block]:
        return ("then", c[0])

    # ------------------------------------------------------------ types
    @_meta
    def type_name(self, meta: Meta, c: list[Any]) -> A.TypeName:
        return A.TypeName(name=str(c[0]), span=self._span(meta))

    @_meta
    def type_generic(self, meta: Meta, c: list[Any]) -> A.TypeGeneric:
        return A.TypeGeneric(name=str(c[0]), args=list(c[1:]), span=self._span(meta))

    @_meta
    def type_range(self, meta: Meta, c: list[Any]) -> A.TypeRange:
        return A.TypeRange(low=int(c[0]), high=int(c[1]), span=self._span(meta))

    # ------------------------------------------------------------ statements
    @_meta
    def block(self, meta: Meta, c: list[Any]) -> A.Block:
        stmts = []
        for s in c:
            if isinstance(s, list):  # a `let` of a tuple pattern: its Lets
                stmts.extend(s)
            else:
                stmts.append(s)
        return A.Block(stmts=stmts, span=self._span(meta))

    def stmt(self, c: list[Any]) -> Union[A.Stmt, list[A.Let]]:
        *cites, s = c
        for x in cites:
            (s[0] if isinstance(s, list) else s).cites.extend(x)
        return s

    @_meta
    def let_stmt(self, meta: Meta, c: list[Any]) -> A.Let:
        return A.Let(name=str(c[0]), value=c[1], span=self._span(meta))

    # ------------------------------------------------------------ tuple patterns
    @_meta
    def tuple_pattern(self, meta: Meta, c: list[Any]) -> _Pattern:
        return _Pattern([x for x in c if x is not None], self._span(meta))

    def _pattern_binds(self, pat: _Pattern, source: str, check: bool = True) -> list:
        """[(name, Unpack, span)] binding the names of pat from the tuple in the local `source`, in order
        (a nested pattern: its hidden name, then its own names). The first item checks the tuple's size,
        so it is bound even when it is `_`."""
        out = []
        size, text = len(pat.items), pat.text()
        for i, item in enumerate(pat.items):
            if isinstance(item, _Pattern):
                name, span = f"{source}_{i}", item.span  # a nested pattern's tuple
            else:
                name, span = str(item), self._tspan(item)
                if name == A.DISCARD:
                    if i:
                        continue
                    name = f"{source}_{i}"
            value = A.Unpack(span=pat.span, value=A.Name(span=pat.span, ident=source), size=size, index=i,
                             check=check and i == 0, pattern=text, discard=str(item) == A.DISCARD)
            out.append((name, value, span))
            if isinstance(item, _Pattern):
                out.extend(self._pattern_binds(item, name, check))
        return out

    def _binders(self, binders: list[Any]) -> tuple:
        """The names of a `for` (a NAME token or a _Pattern each), and [(hidden name, pattern)]."""
        names, pats = [], []
        for k, b in enumerate(binders):
            if isinstance(b, _Pattern):
                names.append(_Pattern.hidden(k))
                pats.append((_Pattern.hidden(k), b))
            elif b is not None:
                names.append(str(b))
        return names, pats

    def _patterns_note(self, pats: list[tuple[str, _Pattern]]) -> list:
        return [(h, p.text(), [(n, sp) for n, _, sp in self._pattern_binds(p, h) if not A.is_hidden(n)])
                for h, p in pats]

    def _wrap(self, pats: list[tuple[str, _Pattern]], e: Optional[A.Expr], check: bool) -> Optional[A.Expr]:
        """e computed with the names of the patterns bound (Binds of Unpack items)."""
        if e is None:
            return None
        binds = [b for h, p in pats for b in self._pattern_binds(p, h, check)]
        for name, value, span in reversed(binds):
            e = A.Bind(span=span, name=name, value=value, body=e)
        return e

    @_meta
    def let_unpack(self, meta: Meta, c: list[Any]) -> list[A.Let]:
        """`let (a, b) = EXPR`: `let %t = EXPR`, then a Let of each name (a list: block() splices it)."""
        pat, value = c
        span, text = self._span(meta), pat.text()
        lets = [A.Let(name=_Pattern.hidden(), value=value, span=span, pattern=text)]
        lets += [A.Let(name=n, value=v, span=sp, pattern=text) for n, v, sp in self._pattern_binds(pat, _Pattern.hidden())]
        return lets

    @_meta
    def choose_rhs(self, meta: Meta, c: list[Any]) -> A.Choose:
        count, ordered, options, player, optional, prompt = c
        return A.Choose(span=self._span(meta), count=count, ordered=ordered is not None, options=options,
                        player=player, optional=optional is not None, prompt=_unquote(prompt) if prompt else "")

    @_meta
    def roll_rhs(self, meta: Meta, c: list[Any]) -> A.Roll:
        return A.Roll(span=self._span(meta), count=c[0], faces=c[1])

    @_meta
    def draw_rhs(self, meta: Meta, c: list[Any]) -> A.Draw:
        return A.Draw(span=self._span(meta), count=c[0], pile=c[1])

    def count_one(self, c: list[Any]) -> None:
        return None

    def count_expr(self, c: list[Any]) -> A.Expr:
        return c[0]

    @_meta
    def expr_stmt(self, meta: Meta, c: list[Any]) -> A.ExprStmt:
        return A.ExprStmt(span=self._span(meta), expr=c[0])

    @_meta
    def assign_set(self, meta: Meta, c: list[Any]) -> A.Assign:
        return A.Assign(span=self._span(meta), op="=", target=c[0], value=c[1])

    @_meta
    def assign_add(self, meta: Meta, c: list[Any]) -> A.Assign:
        return A.Assign(span=self._span(meta), op="+=", target=c[0], value=c[1])

    @_meta
    def assign_sub(self, meta: Meta, c: list[Any]) -> A.Assign:
        return A.Assign(span=self._span(meta), op="-=", target=c[0], value=c[1])

    @_meta
    def add_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op="+", left=c[0], right=c[1])

    @_meta
    def sub_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op="-", left=c[0], right=c[1])

    @_meta
    def if_stmt(self, meta: Meta, c: list[Any]) -> A.If:
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

    def elif_part(self, c: list[Any]) -> tuple[str, A.Expr, A.Block]:
        return ("elif", c[0], c[1])

    def else_part(self, c: list[Any]) -> tuple[str, A.Block]:
        return ("else", c[0])

    @_meta
    def for_stmt(self, meta: Meta, c: list[Any]) -> A.For:
        n1, n2, source, body = c
        names, pats = self._binders([n1, n2])
        if pats:  # the patterns' names: Lets first in the body
            lets = [A.Let(name=n, value=v, span=sp, pattern=p.text())
                    for h, p in pats for n, v, sp in self._pattern_binds(p, h)]
            body = A.Block(stmts=lets + body.stmts, span=body.span)
        return A.For(span=self._span(meta), names=names, source=source, body=body,
                     patterns=self._patterns_note(pats))

    @_meta
    def while_stmt(self, meta: Meta, c: list[Any]) -> A.While:
        return A.While(span=self._span(meta), test=c[0], body=c[1])

    @_meta
    def repeat_stmt(self, meta: Meta, c: list[Any]) -> A.Repeat:
        return A.Repeat(span=self._span(meta), times=c[0], body=c[1])

    @_meta
    def loop_stmt(self, meta: Meta, c: list[Any]) -> A.Loop:
        return A.Loop(span=self._span(meta), body=c[0])

    @_meta
    def break_stmt(self, meta: Meta, c: list[Any]) -> A.Break:
        return A.Break(span=self._span(meta))

    @_meta
    def continue_stmt(self, meta: Meta, c: list[Any]) -> A.Continue:
        return A.Continue(span=self._span(meta))

    @_meta
    def return_stmt(self, meta: Meta, c: list[Any]) -> A.Return:
        return A.Return(span=self._span(meta), value=c[0])

    @_meta
    def turn_stmt(self, meta: Meta, c: list[Any]) -> A.Turn:
        return A.Turn(span=self._span(meta), player=c[0], body=c[1])

    @_meta
    def offer_stmt(self, meta: Meta, c: list[Any]) -> A.Offer:
        return A.Offer(span=self._span(meta), actions=[str(x) for x in c[:-2] if x is not None], player=c[-2],
                       orelse=c[-1])

    @_meta
    def shuffle_stmt(self, meta: Meta, c: list[Any]) -> A.Shuffle:
        if c[1] is not None:  # shuffle SOURCE into PILE
            return A.Shuffle(span=self._span(meta), pile=c[1], source=c[0])
        return A.Shuffle(span=self._span(meta), pile=c[0])

    @_meta
    def draw_stmt(self, meta: Meta, c: list[Any]) -> A.DrawInto:
        return A.DrawInto(span=self._span(meta), count=c[0], pile=c[1], target=c[2])

    @_meta
    def add_stmt(self, meta: Meta, c: list[Any]) -> A.Add:
        return A.Add(span=self._span(meta), item=c[0], target=c[1])

    @_meta
    def remove_stmt(self, meta: Meta, c: list[Any]) -> A.Remove:
        return A.Remove(span=self._span(meta), item=c[0], source=c[1])

    @_meta
    def move_stmt(self, meta: Meta, c: list[Any]) -> A.Move:
        return A.Move(span=self._span(meta), item=c[0], source=c[1], target=c[2])

    @_meta
    def reveal_stmt(self, meta: Meta, c: list[Any]) -> A.Reveal:
        return A.Reveal(span=self._span(meta), item=c[0], to=c[1])

    @_meta
    def emit_stmt(self, meta: Meta, c: list[Any]) -> A.Emit:
        return A.Emit(span=self._span(meta), event=str(c[0]), args=[a for a in c[1:] if a is not None])

    @_meta
    def end_stmt(self, meta: Meta, c: list[Any]) -> A.EndGame:
        kind, value = c[0] if c[0] is not None else ("text", None)
        if kind == "text":
            return A.EndGame(span=self._span(meta), reason=value)
        return A.EndGame(span=self._span(meta), reason_expr=value)

    @_meta
    def trigger_end_stmt(self, meta: Meta, c: list[Any]) -> A.TriggerEnd:
        kind, value = c[0]
        if kind == "text":
            return A.TriggerEnd(span=self._span(meta), reason=value)
        return A.TriggerEnd(span=self._span(meta), reason_expr=value)

    def reason_text(self, c: list[Any]) -> tuple[str, str]:
        return ("text", _unquote(c[0]))

    def reason_expr(self, c: list[Any]) -> tuple[str, A.Expr]:
        return ("expr", c[0])

    @_meta
    def eliminate_stmt(self, meta: Meta, c: list[Any]) -> A.Eliminate:
        return A.Eliminate(span=self._span(meta), player=c[0])

    @_meta
    def log_stmt(self, meta: Meta, c: list[Any]) -> A.Log:
        return A.Log(span=self._span(meta), items=list(c))

    @_meta
    def play_stmt(self, meta: Meta, c: list[Any]) -> A.Play:
        return A.Play(span=self._span(meta), action=c[0])

    @_meta
    def chance_stmt(self, meta: Meta, c: list[Any]) -> A.ChanceStep:
        return A.ChanceStep(span=self._span(meta), outcome=c[0])

    @_meta
    def destroy_stmt(self, meta: Meta, c: list[Any]) -> A.Destroy:
        return A.Destroy(span=self._span(meta), piece=c[0])

    @_meta
    def new_expr(self, meta: Meta, c: list[Any]) -> A.New:
        return A.New(span=self._span(meta), kind=str(c[0]), args=[a for a in c[1:] if a is not None])

    @_meta
    def expect_stmt(self, meta: Meta, c: list[Any]) -> A.Expect:
        return A.Expect(span=self._span(meta), test=c[0], message=_unquote(c[1]) if c[1] else "")

    # ------------------------------------------------------------ expressions
    @_meta
    def lambda_expr(self, meta: Meta, c: list[Any]) -> A.Lambda:
        return A.Lambda(span=self._span(meta), param=str(c[0]), body=c[-1])

    @_meta
    def cond_expr(self, meta: Meta, c: list[Any]) -> A.Cond:
        return A.Cond(span=self._span(meta), test=c[0], then=c[1], orelse=c[2])

    @_meta
    def or_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op="or", left=c[0], right=c[1])

    @_meta
    def and_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op="and", left=c[0], right=c[1])

    @_meta
    def not_op(self, meta: Meta, c: list[Any]) -> A.Unary:
        return A.Unary(span=self._span(meta), op="not", operand=c[0])

    @_meta
    def cmp_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op=str(c[1]), left=c[0], right=c[2])

    @_meta
    def in_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op="in", left=c[0], right=c[1])

    @_meta
    def not_in_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op="not in", left=c[0], right=c[1])

    @_meta
    def range_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op="..", left=c[0], right=c[1])

    @_meta
    def bin_op(self, meta: Meta, c: list[Any]) -> A.Binary:
        return A.Binary(span=self._span(meta), op=str(c[1]), left=c[0], right=c[2])

    @_meta
    def neg_op(self, meta: Meta, c: list[Any]) -> A.Unary:
        return A.Unary(span=self._span(meta), op="-", operand=c[0])

    @_meta
    def placeholder(self, meta: Meta, c: list[Any]) -> A.Placeholder:
        return A.Placeholder(span=self._span(meta), inner=c[0])

    @_meta
    def call(self, meta: Meta, c: list[Any]) -> A.Call:
        return A.Call(span=self._span(meta), func=c[0], args=[a for a in c[1:] if a is not None])

    @_meta
    def arg_pos(self, meta: Meta, c: list[Any]) -> A.Arg:
        return A.Arg(name=None, value=c[0], span=self._span(meta))

    @_meta
    def arg_named(self, meta: Meta, c: list[Any]) -> A.Arg:
        return A.Arg(name=str(c[0]), value=c[1], span=self._span(meta))

    @_meta
    def index(self, meta: Meta, c: list[Any]) -> A.Index:
        return A.Index(span=self._span(meta), target=c[0], index=c[1])

    @_meta
    def field(self, meta: Meta, c: list[Any]) -> A.Field:
        return A.Field(span=self._span(meta), target=c[0], name=str(c[1]))

    @_meta
    def int_lit(self, meta: Meta, c: list[Any]) -> A.Literal:
        return A.Literal(span=self._span(meta), value=int(c[0]))

    @_meta
    def str_lit(self, meta: Meta, c: list[Any]) -> A.Literal:
        return A.Literal(span=self._span(meta), value=_unquote(c[0]))

    @_meta
    def true_lit(self, meta: Meta, c: list[Any]) -> A.Literal:
        return A.Literal(span=self._span(meta), value=True)

    @_meta
    def false_lit(self, meta: Meta, c: list[Any]) -> A.Literal:
        return A.Literal(span=self._span(meta), value=False)

    @_meta
    def none_lit(self, meta: Meta, c: list[Any]) -> A.Literal:
        return A.Literal(span=self._span(meta), value=None)

    @_meta
    def name(self, meta: Meta, c: list[Any]) -> A.Name:
        return A.Name(span=self._span(meta), ident=str(c[0]))

    @_meta
    def tuple_lit(self, meta: Meta, c: list[Any]) -> A.TupleLit:
        return A.TupleLit(span=self._span(meta), items=[x for x in c if x is not None])

    @_meta
    def list_lit(self, meta: Meta, c: list[Any]) -> A.ListLit:
        return A.ListLit(span=self._span(meta), items=[x for x in c if x is not None])

    def _comprehension(self, span: A.Span, kind: str, elem: Optional[A.Expr], value: Optional[A.Expr],
                       binders: list[Any], source: A.Expr, cond: Optional[A.Expr]) -> A.Comprehension:
        names, pats = self._binders(binders)
        if pats:  # the first part computed checks the tuples' size: the condition, else the element
            elem, value, cond = (self._wrap(pats, elem, cond is None), self._wrap(pats, value, False),
                                 self._wrap(pats, cond, True))
        return A.Comprehension(span=span, kind=kind, element=elem, value=value, names=names, source=source,
                               condition=cond, patterns=self._patterns_note(pats))

    @_meta
    def list_comp(self, meta: Meta, c: list[Any]) -> A.Comprehension:
        elem, n1, n2, source, cond = c
        return self._comprehension(self._span(meta), "list", elem, None, [n1, n2], source, cond)

    @_meta
    def list_comp_nested(self, meta: Meta, c: list[Any]) -> A.Expr:
        """[E for a in A if p for b in B if q ...]: the list of E for every a, then b (each `if` filtering
        what its `for` takes), written as flatten([flatten([... [E for b in B if q] ...]) for a in A if p])."""
        elem, n1, n2, source, cond, *more = c
        parts = [([n1, n2], source, cond)] + list(more)
        span = self._span(meta)
        binders, source, cond = parts[-1]
        out: A.Expr = self._comprehension(span, "list", elem, None, binders, source, cond)
        for binders, source, cond in reversed(parts[:-1]):
            outer = self._comprehension(span, "list", out, None, binders, source, cond)
            out = A.Call(span=span, func=A.Name(span=span, ident="flatten"), args=[A.Arg(None, outer, span)])
        return out

    def comp_for(self, c: list[Any]) -> tuple[list[Any], A.Expr, Optional[A.Expr]]:
        n1, n2, source, cond = c
        return ([n1, n2], source, cond)

    @_meta
    def map_comp(self, meta: Meta, c: list[Any]) -> A.Comprehension:
        key, value, n1, n2, source, cond = c
        return self._comprehension(self._span(meta), "map", key, value, [n1, n2], source, cond)

    @_meta
    def empty_lit(self, meta: Meta, c: list[Any]) -> A.EmptyLit:
        return A.EmptyLit(span=self._span(meta))

    @_meta
    def set_lit(self, meta: Meta, c: list[Any]) -> A.SetLit:
        return A.SetLit(span=self._span(meta), items=list(c))

    @_meta
    def map_lit(self, meta: Meta, c: list[Any]) -> A.MapLit:
        return A.MapLit(span=self._span(meta), entries=list(c))

    def map_entry(self, c: list[Any]) -> tuple[A.Expr, A.Expr]:
        return (c[0], c[1])

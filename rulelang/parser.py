"""Text -> AST. Parses a rule file with the Lark grammar and builds `rulelang.ast` nodes with spans.

Syntax errors become diagnostics (`E001`..`E009`) with the offending line, a caret and a hint; the
parser recovers and keeps going so that one run reports several errors.
"""
from __future__ import annotations

import ast as pyast
import functools
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import ast as A
from .diagnostics import Source

MAX_NESTING = 100
MAX_ERRORS = 8

TOKEN_WORDS = {
    "RBRACE": "'}'", "LBRACE": "'{'", "RPAR": "')'", "LPAR": "'('", "RSQB": "']'", "LSQB": "'['",
    "COMMA": "','", "COLON": "':'", "EQUAL": "'='", "NAME": "a name", "INT": "a number",
    "STRING": "a string", "DOT": "'.'", "MINUS": "'-'", "PLUS": "'+'", "CMP_OP": "a comparison",
    "$END": "the end of the file", "__ANON_0": "'..'",
}


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    # cache=True keeps the built parser tables in the temp folder, keyed by the grammar's hash: the
    # command line starts in a fraction of the time
    try:
        return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=True)
    except OSError:
        return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def _unquote(tok: str) -> str:
    try:
        return pyast.literal_eval(tok)
    except Exception:
        return tok[1:-1]


class _Builder(Transformer):
    def __init__(self, path: str):
        super().__init__(visit_tokens=False)
        self.path = path

    def _span(self, meta) -> A.Span:
        if getattr(meta, "empty", True):
            return A.Span(self.path, 1, 1, 1, 1)
        return A.Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tspan(self, tok: Token) -> A.Span:
        return A.Span(self.path, tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + 1)

    # ------------------------------------------------------------ items
    def start(self, items):
        return items

    @v_args(meta=True)
    def item(self, meta, children):
        *cites, decl = children
        for c in cites:
            decl.cites.extend(c)
        return decl

    def cite(self, children):
        return [_unquote(c) for c in children]

    @v_args(meta=True)
    def game_decl(self, meta, children):
        title, *fields = children
        d = A.GameDecl(name="game", span=self._span(meta), title=_unquote(title))
        for kind, value in fields:
            if kind == "players":
                d.player_counts = value
            else:
                d.rulebook = value
        return d

    def game_players(self, c):
        return ("players", c[0])

    def game_rulebook(self, c):
        return ("rulebook", _unquote(c[0]))

    def pc_single(self, c):
        return (int(c[0]),)

    def pc_range(self, c):
        low, high = int(c[0]), int(c[1])
        if high - low > 10_000:  # too many to list: the loader reports the limit on player counts
            return (low, high)
        return tuple(range(low, high + 1))

    def pc_list(self, c):
        return tuple(sorted({int(x) for x in c}))

    @v_args(meta=True)
    def extends_decl(self, meta, c):
        return A.ExtendsDecl(name="extends", span=self._span(meta), path=_unquote(c[0]))

    @v_args(meta=True)
    def const_decl(self, meta, c):
        return A.ConstDecl(name=str(c[0]), span=self._span(meta), type=c[1], value=c[2])

    @v_args(meta=True)
    def enum_decl(self, meta, c):
        return A.EnumDecl(name=str(c[0]), span=self._span(meta), members=[str(x) for x in c[1:]],
                          member_spans=[self._tspan(x) for x in c[1:]])

    @v_args(meta=True)
    def record_decl(self, meta, c):
        return A.RecordDecl(name=str(c[0]), span=self._span(meta), fields=list(c[1:]))

    @v_args(meta=True)
    def field_decl(self, meta, c):
        return A.FieldDecl(name=str(c[0]), type=c[1], default=c[2], span=self._span(meta))

    @v_args(meta=True)
    def table_decl(self, meta, c):
        name, record, mark, *rows = c
        return A.TableDecl(name=str(name), span=self._span(meta), record=str(record), rows=rows,
                           placeholder=mark)

    def placeholder_mark(self, c):
        return _unquote(c[0]) if c and c[0] is not None else ""

    @v_args(meta=True)
    def row(self, meta, c):
        name = c[0]
        mark = c[-1]
        values = [v for v in c[1:-1] if v is not None]
        return A.Row(name=str(name), values=values, placeholder=mark, span=self._span(meta))

    def row_pos(self, c):
        return (None, c[0])

    def row_named(self, c):
        return (str(c[0]), c[1])

    @v_args(meta=True)
    def var_decl(self, meta, c):
        per, name, typ, value, vis = c
        return A.VarDecl(name=str(name), span=self._span(meta), per_player=per is not None, type=typ,
                         value=value, visibility=vis or "all")

    def per_player(self, c):
        return True

    def visibility(self, c):
        return str(c[0])

    @v_args(meta=True)
    def board_expr(self, meta, c):
        d = A.BoardDecl(name=str(c[0]), span=self._span(meta), spec=c[1])
        for item in c[2:]:
            if item is None:
                continue
            kind, value = item
            (d.edges if kind == "edges" else d.nodes).append(value)
        return d

    @v_args(meta=True)
    def board_graph(self, meta, c):
        d = A.BoardDecl(name=str(c[0]), span=self._span(meta))
        for kind, value in c[1:]:
            (d.edges if kind == "edges" else d.nodes).append(value)
        return d

    def board_edges(self, c):
        return ("edges", [str(x) for x in c])

    @v_args(meta=True)
    def board_node(self, meta, c):
        return ("node", (str(c[0]), [a for a in c[1:] if a is not None], self._span(meta)))

    @v_args(meta=True)
    def board_node_at(self, meta, c):
        coords = [x for x in c if isinstance(x, A.Expr)]
        args = [x for x in c if isinstance(x, A.Arg)]
        key = A.TupleLit(span=self._span(meta), items=coords)
        return ("node", (key, args, self._span(meta)))

    @v_args(meta=True)
    def setup_decl(self, meta, c):
        return A.ProcDecl(name="setup", span=self._span(meta), body=c[0], proc_kind="setup")

    @v_args(meta=True)
    def flow_decl(self, meta, c):
        return A.ProcDecl(name="flow", span=self._span(meta), body=c[0], proc_kind="flow")

    @v_args(meta=True)
    def phase_decl(self, meta, c):
        return A.ProcDecl(name=str(c[0]), span=self._span(meta), body=c[1], proc_kind="phase")

    @v_args(meta=True)
    def proc_decl(self, meta, c):
        return A.ProcDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [], body=c[2])

    @v_args(meta=True)
    def func_decl(self, meta, c):
        return A.FuncDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [], result=c[2], body=c[3])

    def params(self, c):
        return list(c)

    @v_args(meta=True)
    def param(self, meta, c):
        return A.Param(name=str(c[0]), type=c[1], domain=c[2], span=self._span(meta))

    @v_args(meta=True)
    def action_decl(self, meta, c):
        name, params, *clauses = c
        d = A.ActionDecl(name=str(name), span=self._span(meta), params=params or [])
        for kind, value in clauses:
            if kind == "require":
                d.requires.append(value)
            elif kind == "cost":
                d.costs.extend(value)
            elif kind == "effect":
                if d.effect is None:
                    d.effect = value
                else:
                    d.effect.stmts.extend(value.stmts)
            else:
                d.text = value
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

    @v_args(meta=True)
    def require_clause(self, meta, c):
        cites, rest = self._split_cites(c)
        test, msg = rest
        return ("require", A.Require(test=test, message=_unquote(msg) if msg else "", span=self._span(meta),
                                     cites=cites))

    def cost_clause(self, c):
        cites, rest = self._split_cites(c)
        return ("cost", rest)

    @v_args(meta=True)
    def cost_item(self, meta, c):
        return A.Cost(target=c[0], amount=c[1], span=self._span(meta))

    def effect_clause(self, c):
        cites, rest = self._split_cites(c)
        block = rest[0]
        if cites:
            for s in block.stmts:
                s.cites = list(cites) + s.cites
        return ("effect", block)

    def text_clause(self, c):
        return ("text", _unquote(c[0]))

    @v_args(meta=True)
    def event_decl(self, meta, c):
        return A.EventDecl(name=str(c[0]), span=self._span(meta), params=c[1] or [])

    @v_args(meta=True)
    def trigger_decl(self, meta, c):
        event = str(c[0])
        names = [str(x) for x in c[1:-2] if x is not None]
        cond, body = c[-2], c[-1]
        return A.TriggerDecl(name=f"when {event}", span=self._span(meta), event=event, params=names,
                             condition=cond, body=body)

    @v_args(meta=True)
    def ending_decl(self, meta, c):
        return A.EndingDecl(name=_unquote(c[0]), span=self._span(meta), condition=c[1])

    @v_args(meta=True)
    def score_decl(self, meta, c):
        return A.ScoreDecl(name="score", span=self._span(meta), param=str(c[0]), value=c[1])

    @v_args(meta=True)
    def tiebreak_decl(self, meta, c):
        return A.ScoreDecl(name="tiebreak", span=self._span(meta), param=str(c[0]), value=c[1], tiebreak=True)

    @v_args(meta=True)
    def variant_decl(self, meta, c):
        name, desc, *items = c
        return A.VariantDecl(name=str(name), span=self._span(meta), description=_unquote(desc) if desc else "",
                             items=items)

    @v_args(meta=True)
    def override_decl(self, meta, c):
        d = c[0]
        d.mode = "override"
        return d

    @v_args(meta=True)
    def extend_decl(self, meta, c):
        target, body = c
        return A.ExtendDecl(name=f"extend {target}", span=self._span(meta), target=target, body=body)

    def extend_setup(self, c):
        return "setup"

    def extend_flow(self, c):
        return "flow"

    def extend_named(self, c):
        return str(c[0])

    @v_args(meta=True)
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
    @v_args(meta=True)
    def type_name(self, meta, c):
        return A.TypeName(name=str(c[0]), span=self._span(meta))

    @v_args(meta=True)
    def type_generic(self, meta, c):
        return A.TypeGeneric(name=str(c[0]), args=list(c[1:]), span=self._span(meta))

    @v_args(meta=True)
    def type_range(self, meta, c):
        return A.TypeRange(low=int(c[0]), high=int(c[1]), span=self._span(meta))

    # ------------------------------------------------------------ statements
    @v_args(meta=True)
    def block(self, meta, c):
        return A.Block(stmts=list(c), span=self._span(meta))

    def stmt(self, c):
        *cites, s = c
        for x in cites:
            s.cites.extend(x)
        return s

    @v_args(meta=True)
    def let_stmt(self, meta, c):
        return A.Let(name=str(c[0]), value=c[1], span=self._span(meta))

    @v_args(meta=True)
    def choose_rhs(self, meta, c):
        count, ordered, options, player, optional, prompt = c
        return A.Choose(span=self._span(meta), count=count, ordered=ordered is not None, options=options,
                        player=player, optional=optional is not None, prompt=_unquote(prompt) if prompt else "")

    @v_args(meta=True)
    def roll_rhs(self, meta, c):
        return A.Roll(span=self._span(meta), count=c[0], faces=c[1])

    @v_args(meta=True)
    def draw_rhs(self, meta, c):
        return A.Draw(span=self._span(meta), count=c[0], pile=c[1])

    def count_one(self, c):
        return None

    def count_expr(self, c):
        return c[0]

    @v_args(meta=True)
    def expr_stmt(self, meta, c):
        return A.ExprStmt(span=self._span(meta), expr=c[0])

    @v_args(meta=True)
    def assign_set(self, meta, c):
        return A.Assign(span=self._span(meta), op="=", target=c[0], value=c[1])

    @v_args(meta=True)
    def assign_add(self, meta, c):
        return A.Assign(span=self._span(meta), op="+=", target=c[0], value=c[1])

    @v_args(meta=True)
    def assign_sub(self, meta, c):
        return A.Assign(span=self._span(meta), op="-=", target=c[0], value=c[1])

    @v_args(meta=True)
    def add_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="+", left=c[0], right=c[1])

    @v_args(meta=True)
    def sub_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="-", left=c[0], right=c[1])

    @v_args(meta=True)
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

    @v_args(meta=True)
    def for_stmt(self, meta, c):
        n1, n2, source, body = c
        names = [str(n1)] + ([str(n2)] if n2 is not None else [])
        return A.For(span=self._span(meta), names=names, source=source, body=body)

    @v_args(meta=True)
    def while_stmt(self, meta, c):
        return A.While(span=self._span(meta), test=c[0], body=c[1])

    @v_args(meta=True)
    def repeat_stmt(self, meta, c):
        return A.Repeat(span=self._span(meta), times=c[0], body=c[1])

    @v_args(meta=True)
    def loop_stmt(self, meta, c):
        return A.Loop(span=self._span(meta), body=c[0])

    @v_args(meta=True)
    def break_stmt(self, meta, c):
        return A.Break(span=self._span(meta))

    @v_args(meta=True)
    def continue_stmt(self, meta, c):
        return A.Continue(span=self._span(meta))

    @v_args(meta=True)
    def return_stmt(self, meta, c):
        return A.Return(span=self._span(meta), value=c[0])

    @v_args(meta=True)
    def turn_stmt(self, meta, c):
        return A.Turn(span=self._span(meta), player=c[0], body=c[1])

    @v_args(meta=True)
    def offer_stmt(self, meta, c):
        return A.Offer(span=self._span(meta), actions=[str(x) for x in c[:-1]], player=c[-1])

    @v_args(meta=True)
    def shuffle_stmt(self, meta, c):
        return A.Shuffle(span=self._span(meta), pile=c[0])

    @v_args(meta=True)
    def add_stmt(self, meta, c):
        return A.Add(span=self._span(meta), item=c[0], target=c[1])

    @v_args(meta=True)
    def remove_stmt(self, meta, c):
        return A.Remove(span=self._span(meta), item=c[0], source=c[1])

    @v_args(meta=True)
    def move_stmt(self, meta, c):
        return A.Move(span=self._span(meta), item=c[0], source=c[1], target=c[2])

    @v_args(meta=True)
    def reveal_stmt(self, meta, c):
        return A.Reveal(span=self._span(meta), item=c[0], to=c[1])

    @v_args(meta=True)
    def emit_stmt(self, meta, c):
        return A.Emit(span=self._span(meta), event=str(c[0]), args=[a for a in c[1:] if a is not None])

    @v_args(meta=True)
    def end_stmt(self, meta, c):
        return A.EndGame(span=self._span(meta), reason=_unquote(c[0]) if c[0] else None)

    @v_args(meta=True)
    def trigger_end_stmt(self, meta, c):
        return A.TriggerEnd(span=self._span(meta), reason=_unquote(c[0]))

    @v_args(meta=True)
    def eliminate_stmt(self, meta, c):
        return A.Eliminate(span=self._span(meta), player=c[0])

    @v_args(meta=True)
    def log_stmt(self, meta, c):
        return A.Log(span=self._span(meta), items=list(c))

    @v_args(meta=True)
    def play_stmt(self, meta, c):
        return A.Play(span=self._span(meta), action=c[0])

    @v_args(meta=True)
    def chance_stmt(self, meta, c):
        return A.ChanceStep(span=self._span(meta), outcome=c[0])

    @v_args(meta=True)
    def expect_stmt(self, meta, c):
        return A.Expect(span=self._span(meta), test=c[0], message=_unquote(c[1]) if c[1] else "")

    # ------------------------------------------------------------ expressions
    @v_args(meta=True)
    def lambda_expr(self, meta, c):
        return A.Lambda(span=self._span(meta), param=str(c[0]), body=c[-1])

    @v_args(meta=True)
    def cond_expr(self, meta, c):
        return A.Cond(span=self._span(meta), test=c[0], then=c[1], orelse=c[2])

    @v_args(meta=True)
    def or_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="or", left=c[0], right=c[1])

    @v_args(meta=True)
    def and_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="and", left=c[0], right=c[1])

    @v_args(meta=True)
    def not_op(self, meta, c):
        return A.Unary(span=self._span(meta), op="not", operand=c[0])

    @v_args(meta=True)
    def cmp_op(self, meta, c):
        return A.Binary(span=self._span(meta), op=str(c[1]), left=c[0], right=c[2])

    @v_args(meta=True)
    def in_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="in", left=c[0], right=c[1])

    @v_args(meta=True)
    def not_in_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="not in", left=c[0], right=c[1])

    @v_args(meta=True)
    def range_op(self, meta, c):
        return A.Binary(span=self._span(meta), op="..", left=c[0], right=c[1])

    @v_args(meta=True)
    def bin_op(self, meta, c):
        return A.Binary(span=self._span(meta), op=str(c[1]), left=c[0], right=c[2])

    @v_args(meta=True)
    def neg_op(self, meta, c):
        return A.Unary(span=self._span(meta), op="-", operand=c[0])

    @v_args(meta=True)
    def placeholder(self, meta, c):
        return A.Placeholder(span=self._span(meta), inner=c[0])

    @v_args(meta=True)
    def call(self, meta, c):
        return A.Call(span=self._span(meta), func=c[0], args=[a for a in c[1:] if a is not None])

    @v_args(meta=True)
    def arg_pos(self, meta, c):
        return A.Arg(name=None, value=c[0], span=self._span(meta))

    @v_args(meta=True)
    def arg_named(self, meta, c):
        return A.Arg(name=str(c[0]), value=c[1], span=self._span(meta))

    @v_args(meta=True)
    def index(self, meta, c):
        return A.Index(span=self._span(meta), target=c[0], index=c[1])

    @v_args(meta=True)
    def field(self, meta, c):
        return A.Field(span=self._span(meta), target=c[0], name=str(c[1]))

    @v_args(meta=True)
    def int_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=int(c[0]))

    @v_args(meta=True)
    def str_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=_unquote(c[0]))

    @v_args(meta=True)
    def true_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=True)

    @v_args(meta=True)
    def false_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=False)

    @v_args(meta=True)
    def none_lit(self, meta, c):
        return A.Literal(span=self._span(meta), value=None)

    @v_args(meta=True)
    def name(self, meta, c):
        return A.Name(span=self._span(meta), ident=str(c[0]))

    @v_args(meta=True)
    def tuple_lit(self, meta, c):
        return A.TupleLit(span=self._span(meta), items=[x for x in c if x is not None])

    @v_args(meta=True)
    def list_lit(self, meta, c):
        return A.ListLit(span=self._span(meta), items=[x for x in c if x is not None])

    @v_args(meta=True)
    def list_comp(self, meta, c):
        elem, n1, n2, source, cond = c
        names = [str(n1)] + ([str(n2)] if n2 is not None else [])
        return A.Comprehension(span=self._span(meta), kind="list", element=elem, names=names, source=source,
                               condition=cond)

    @v_args(meta=True)
    def map_comp(self, meta, c):
        key, value, n1, n2, source, cond = c
        names = [str(n1)] + ([str(n2)] if n2 is not None else [])
        return A.Comprehension(span=self._span(meta), kind="map", element=key, value=value, names=names,
                               source=source, condition=cond)

    @v_args(meta=True)
    def empty_lit(self, meta, c):
        return A.EmptyLit(span=self._span(meta))

    @v_args(meta=True)
    def set_lit(self, meta, c):
        return A.SetLit(span=self._span(meta), items=list(c))

    @v_args(meta=True)
    def map_lit(self, meta, c):
        return A.MapLit(span=self._span(meta), entries=list(c))

    def map_entry(self, c):
        return (c[0], c[1])


def _nesting_problem(text: str):
    """Find a bracket nested deeper than MAX_NESTING, before the recursive AST builder meets it."""
    depth = 0
    line = 1
    col = 0
    in_str = False
    in_comment = False
    prev = ""
    for ch in text:
        col += 1
        if ch == "\n":
            line += 1
            col = 0
            in_comment = False
            in_str = False
        elif in_comment:
            pass
        elif in_str:
            if ch == '"' and prev != "\\":
                in_str = False
        elif ch == "#":
            in_comment = True
        elif ch == '"':
            in_str = True
        elif ch in "([{":
            depth += 1
            if depth > MAX_NESTING:
                return line, col
        elif ch in ")]}":
            depth = max(0, depth - 1)
        prev = ch
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


def _syntax_diag(source: Source, err: UnexpectedInput):
    line = getattr(err, "line", None) or 1
    col = getattr(err, "column", None) or 1
    if isinstance(err, UnexpectedCharacters):
        ch = source.line_text(line)[col - 1:col] if source.line_text(line) else "?"
        if ch == '"':
            return source.diag("E002", "unterminated string", line, col,
                               hint="close the string with '\"' on the same line")
        return source.diag("E001", f"unexpected character {ch!r}", line, col,
                           hint="rule files use names, numbers, \"strings\", brackets and operators; "
                                "# starts a comment")
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        last = max(1, len(source.lines))
        return source.diag("E003", "the file ends in the middle of a declaration", last,
                           len(source.line_text(last)) + 1,
                           hint="a '}' or ')' is probably missing; " + _describe_expected(err.expected))
    if isinstance(err, UnexpectedToken):
        tok = err.token
        hint = _describe_expected(err.accepts or err.expected)
        message = f"unexpected {_token_text(tok)}"
        if str(tok) in ("elif", "else"):
            hint = (f"'{tok}' follows the block of an if directly; a citation (@rule) cannot stand between "
                    "them: put it inside the block")
        if str(tok) == "=" and "EQUAL" not in (err.accepts or err.expected):
            hint = "use '==' to compare; '=' only assigns in a statement"
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
        return len(errors) < MAX_ERRORS

    try:
        tree = _lark().parse(text, on_error=on_error)
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
    if errors or tree is None:
        return None, diags
    try:
        items = _Builder(path).transform(tree)
    except RecursionError:
        diags.append(source.diag("E006", "the file is nested too deeply to read", 1, 1,
                                 hint="split long expressions with 'let'"))
        return None, diags
    except VisitError as e:  # a builder bug or odd input: report, never crash
        if isinstance(e.orig_exc, RecursionError):
            diags.append(source.diag("E006", "the file is nested too deeply to read", 1, 1,
                                     hint="split long expressions with 'let'"))
            return None, diags
        diags.append(source.diag("E009", f"could not read this construct ({e.orig_exc})",
                                 getattr(e.obj, "meta", None) and e.obj.meta.line or 1, 1))
        return None, diags
    return A.Module(path=path, items=items, source=source), diags

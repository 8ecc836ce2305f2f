"""The abstract syntax tree of a rule file.

Every node is an attrs class carrying `span`: where it stands in its source (path, line, column,
end line, end column; lines and columns 1-based). The parser builds these; the checker resolves
and types them; the interpreter compiles them. Nothing here knows any game.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional, TypeVar

import attrs

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # (read by type checkers only: they learn from it that `node` makes attrs classes)
    def dataclass_transform(**_options):
        return lambda decorator: decorator

_Class = TypeVar("_Class", bound=type)


@attrs.frozen
class Span:
    path: str = "<string>"
    line: int = 1
    column: int = 1
    end_line: int = 1
    end_column: int = 1

    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


NO_SPAN = Span()


@dataclass_transform(field_specifiers=(attrs.field,))
def node(cls: _Class) -> _Class:
    """Declare an AST node class: attrs, mutable (the checker annotates types), with a span."""
    return attrs.define(slots=True, eq=False, repr=False)(cls)


# ---------------------------------------------------------------------------- types (syntax)
@node
class TypeName:
    name: str
    span: Span = NO_SPAN


@node
class TypeGeneric:
    name: str
    args: list
    span: Span = NO_SPAN


@node
class TypeRange:
    low: int
    high: int
    span: Span = NO_SPAN


# ---------------------------------------------------------------------------- expressions
@node
class Expr:
    span: Span = NO_SPAN
    ty: Any = None  # set by the checker


@node
class Literal(Expr):
    value: Any = None


@node
class Name(Expr):
    ident: str = ""
    ref: str = ""  # set by the checker: local, const, var, member, builtin, func, board, event ...


@node
class Placeholder(Expr):
    """`?3`: a value invented because the real component value is not known."""
    inner: Optional[Expr] = None


@node
class Unary(Expr):
    op: str = ""  # "-", "not"
    operand: Optional[Expr] = None


@node
class Binary(Expr):
    op: str = ""  # + - * / % == != < <= > >= in "not in" and or ..
    left: Optional[Expr] = None
    right: Optional[Expr] = None


@node
class Cond(Expr):
    test: Optional[Expr] = None
    then: Optional[Expr] = None
    orelse: Optional[Expr] = None


@node
class Lambda(Expr):
    param: str = ""
    body: Optional[Expr] = None


@node
class Arg:
    name: Optional[str]
    value: Expr
    span: Span = NO_SPAN


@node
class Call(Expr):
    func: Optional[Expr] = None
    args: list = attrs.Factory(list)  # list[Arg]


@node
class Index(Expr):
    target: Optional[Expr] = None
    index: Optional[Expr] = None


@node
class Field(Expr):
    target: Optional[Expr] = None
    name: str = ""


@node
class TupleLit(Expr):
    items: list = attrs.Factory(list)


@node
class ListLit(Expr):
    items: list = attrs.Factory(list)


@node
class SetLit(Expr):
    items: list = attrs.Factory(list)


@node
class MapLit(Expr):
    entries: list = attrs.Factory(list)  # list[(Expr, Expr)]


@node
class EmptyLit(Expr):
    """`{}`: an empty map or set; its kind comes from the declared type."""


@node
class Comprehension(Expr):
    kind: str = "list"  # "list" or "map"
    element: Optional[Expr] = None
    value: Optional[Expr] = None  # map comprehensions: element is the key
    names: list = attrs.Factory(list)
    source: Optional[Expr] = None
    condition: Optional[Expr] = None
    # tuple patterns among the names (`for (a, b) in pairs`): (hidden name in `names`, the pattern as
    # written, [(name, Span) bound by it]); the names are bound by Bind nodes (of Unpack) around the
    # element, value and condition
    patterns: list = attrs.Factory(list)


@node
class Unpack(Expr):
    """An item of a tuple that a pattern (`let (a, b) = t`, `for (r, c) in cells`) binds: `value[index]`.
    Made by the tree builder, never written. With `check`, first checks that value is a tuple of `size`
    items (the checker from its type, at run time a rules error otherwise); one item of each pattern checks."""
    value: Optional[Expr] = None
    size: int = 0
    index: int = 0
    check: bool = False
    pattern: str = ""  # the pattern as written, for messages
    discard: bool = False  # the item is `_`: bound (to a hidden name) only to check the size


@node
class Bind(Expr):
    """Not written by users: made by the optimiser (interpreter/optimise). `body` computed with the hidden
    local `name` (it starts with '%', so it never clashes with a rule name) set to `value`, computed once."""
    name: str = ""
    value: Optional[Expr] = None
    body: Optional[Expr] = None


@node
class New(Expr):
    """`new KIND(field: value, ...)`: creates a piece (only on the right of `let`)."""
    kind: str = ""
    args: list = attrs.Factory(list)  # list[Arg]


# ---------------------------------------------------------------------------- statements
@node
class Stmt:
    span: Span = NO_SPAN
    cites: list = attrs.Factory(list)


@node
class Block:
    stmts: list
    span: Span = NO_SPAN


@node
class Let(Stmt):
    name: str = ""
    value: Optional[Expr] = None
    pattern: str = ""  # made from a tuple pattern (`let (a, b) = t`): the pattern as written


HIDDEN = "%"  # names made by the tree builder and the optimiser start with it: never a rule's name
DISCARD = "_"  # in a tuple pattern, binds nothing: `let (_, b) = t`


def is_hidden(name: str) -> bool:
    return name.startswith(HIDDEN)


@node
class Choose(Expr):
    """`choose COUNT [ordered] of OPTIONS [by PLAYER] [optional] [prompt "..."]` (only in `let`)."""
    count: Optional[Expr] = None  # None means "one"
    ordered: bool = False
    options: Optional[Expr] = None
    player: Optional[Expr] = None
    optional: bool = False
    prompt: str = ""


@node
class Roll(Expr):
    """`roll COUNT of FACES`: independent uniform picks (dice), only in `let`."""
    count: Optional[Expr] = None
    faces: Optional[Expr] = None


@node
class Draw(Expr):
    """`draw COUNT from PILE`: removes and returns items (random from a shuffled deck or bag)."""
    count: Optional[Expr] = None
    pile: Optional[Expr] = None


@node
class ExprStmt(Stmt):
    expr: Optional[Expr] = None


@node
class Assign(Stmt):
    op: str = "="  # = += -=
    target: Optional[Expr] = None
    value: Optional[Expr] = None
    loose_type: Any = None  # set by the checker: the target's type, when the value must be checked as stored


@node
class If(Stmt):
    branches: list = attrs.Factory(list)  # list[(Expr, Block)]
    orelse: Optional[Block] = None


@node
class For(Stmt):
    names: list = attrs.Factory(list)
    source: Optional[Expr] = None
    body: Optional[Block] = None
    patterns: list = attrs.Factory(list)  # as Comprehension.patterns; the names are bound by Lets first in body


@node
class While(Stmt):
    test: Optional[Expr] = None
    body: Optional[Block] = None


@node
class Repeat(Stmt):
    times: Optional[Expr] = None
    body: Optional[Block] = None


@node
class Loop(Stmt):
    body: Optional[Block] = None


@node
class Break(Stmt):
    pass


@node
class Continue(Stmt):
    pass


@node
class Return(Stmt):
    value: Optional[Expr] = None


@node
class Turn(Stmt):
    player: Optional[Expr] = None
    body: Optional[Block] = None


@node
class Offer(Stmt):
    actions: list = attrs.Factory(list)  # names
    player: Optional[Expr] = None
    orelse: Optional[Block] = None  # `offer [...] to p else { ... }`: what happens when no action is legal


@node
class Shuffle(Stmt):
    """`shuffle PILE`, or `shuffle SOURCE into PILE` (SOURCE's items join PILE, all shuffled)."""
    pile: Optional[Expr] = None
    source: Optional[Expr] = None


@node
class DrawInto(Stmt):
    """`draw COUNT from PILE into TARGET`: `let x = draw COUNT from PILE` and adding the items to TARGET."""
    count: Optional[Expr] = None  # None means "one"
    pile: Optional[Expr] = None
    target: Optional[Expr] = None


@node
class Add(Stmt):
    item: Optional[Expr] = None
    target: Optional[Expr] = None


@node
class Remove(Stmt):
    item: Optional[Expr] = None
    source: Optional[Expr] = None


@node
class Move(Stmt):
    item: Optional[Expr] = None
    source: Optional[Expr] = None
    target: Optional[Expr] = None


@node
class Reveal(Stmt):
    item: Optional[Expr] = None
    to: Optional[Expr] = None  # a player expression, or Name("all")


@node
class Emit(Stmt):
    event: str = ""
    args: list = attrs.Factory(list)


@node
class EndGame(Stmt):
    reason: Optional[str] = None  # a "literal" reason
    reason_expr: Optional[Expr] = None  # or one computed: end_game (EXPR), end_game if A then "x" else "y"


@node
class TriggerEnd(Stmt):
    reason: str = ""
    reason_expr: Optional[Expr] = None


@node
class Eliminate(Stmt):
    player: Optional[Expr] = None


@node
class Log(Stmt):
    items: list = attrs.Factory(list)


@node
class Play(Stmt):
    """Scenario step: take the decision with this id (or matching this value)."""
    action: Optional[Expr] = None


@node
class ChanceStep(Stmt):
    """Scenario step: force the outcome of the pending chance decision."""
    outcome: Optional[Expr] = None


@node
class Destroy(Stmt):
    """`destroy PIECE`: the piece leaves the game."""
    piece: Optional[Expr] = None


@node
class Expect(Stmt):
    test: Optional[Expr] = None
    message: str = ""


# ---------------------------------------------------------------------------- declarations
@node
class Decl:
    name: str = ""
    span: Span = NO_SPAN
    cites: list = attrs.Factory(list)
    mode: str = "new"  # "new", "override"
    origin: str = ""  # variant name or file that contributed it

    kind = "declaration"


@node
class GameDecl(Decl):
    title: str = ""
    player_counts: tuple = ()
    rulebook: str = ""
    max_decisions: Optional[int] = None  # the most player decisions a game takes (the engine holds it to it)
    kind = "game"


@node
class ExtendsDecl(Decl):
    path: str = ""
    kind = "extends"


@node
class ConstDecl(Decl):
    type: Any = None
    value: Optional[Expr] = None
    kind = "const"


@node
class EnumDecl(Decl):
    members: list = attrs.Factory(list)
    member_spans: list = attrs.Factory(list)
    kind = "enum"


@node
class FieldDecl:
    name: str
    type: Any
    default: Optional[Expr] = None
    span: Span = NO_SPAN


@node
class PieceField:
    name: str
    type: Any
    default: Optional[Expr] = None
    visibility: str = "all"
    span: Span = NO_SPAN


@node
class PieceDecl(Decl):
    """`piece NAME { field: TYPE [= default] [visible to ...], ... }`: objects created during the game."""
    fields: list = attrs.Factory(list)  # list[PieceField]
    kind = "piece"


@node
class RecordDecl(Decl):
    fields: list = attrs.Factory(list)
    kind = "record"


@node
class Row:
    name: str
    values: list  # list[(Optional[str], Expr)]
    placeholder: Optional[str] = None
    span: Span = NO_SPAN


@node
class TableDecl(Decl):
    record: str = ""
    rows: list = attrs.Factory(list)
    placeholder: Optional[str] = None  # reason, "" when no reason was given
    kind = "table"


@node
class VarDecl(Decl):
    per_player: bool = False
    type: Any = None
    value: Optional[Expr] = None
    visibility: str = "all"
    kind = "var"


@node
class BoardDecl(Decl):
    spec: Optional[Expr] = None  # generator call
    edges: list = attrs.Factory(list)  # list[list[str]] chains
    nodes: list = attrs.Factory(list)  # list[(name, list[Arg], Span)]
    kind = "board"


@node
class Param:
    name: str
    type: Any = None
    domain: Optional[Expr] = None
    span: Span = NO_SPAN
    # an action's parameter written as a tuple pattern (`action move((src, dst) in moves)`): `name` is hidden
    # (it holds the whole tuple), `shape` is (the pattern as written, its items: each a name, `_` or the
    # shape of a nested pattern), and `patterns` notes [(name, the pattern as written, [(name, Span) bound
    # by it])] as For.patterns does. The names are bound by Binds (of Unpack items) around the later
    # domains, the requires, the cost amounts and the indexes of the cost targets that mention them, and
    # by Lets first in the effect (pattern_lets).
    shape: Any = None
    patterns: list = attrs.Factory(list)


def param_hidden(k: int) -> str:
    """The hidden local holding the tuple of an action's k-th parameter, written as a tuple pattern."""
    return f"{HIDDEN}p{k}"


def pattern_lets(d: ActionDecl) -> list:
    """The Lets first in an action's effect that bind the names of its parameters' tuple patterns."""
    out = []
    for s in (d.effect.stmts if d.effect is not None else ()):
        u = s.value if isinstance(s, Let) else None
        if not (isinstance(u, Unpack) and isinstance(u.value, Name) and u.value.ident.startswith(HIDDEN + "p")):
            break
        out.append(s)
    return out


def param_text(p: Param) -> str:
    """A parameter as its author wrote it: its name, or its tuple pattern."""
    return p.shape[0] if p.shape else p.name


def shape_names(shape: tuple) -> list:
    """The names a parameter's tuple pattern binds, in order, nested patterns flattened (`_` left out)."""
    out = []
    for item in shape[1]:
        if isinstance(item, str):
            if item != DISCARD:
                out.append(item)
        else:
            out.extend(shape_names(item))
    return out


@node
class ProcDecl(Decl):
    params: list = attrs.Factory(list)
    body: Optional[Block] = None
    proc_kind: str = "procedure"  # setup, flow, phase, procedure
    placeholder: Optional[str] = None  # an invented rule: reason, "" when no reason was given
    kind = "procedure"


@node
class FuncDecl(Decl):
    params: list = attrs.Factory(list)
    result: Any = None
    body: Optional[Expr] = None
    placeholder: Optional[str] = None  # an invented rule: reason, "" when no reason was given
    kind = "function"


@node
class Require:
    test: Expr
    message: str = ""
    span: Span = NO_SPAN
    cites: list = attrs.Factory(list)


@node
class Cost:
    target: Expr
    amount: Expr
    span: Span = NO_SPAN
    cites: list = attrs.Factory(list)  # `@rule` before the cost clause (on each of its items)


@node
class ActionDecl(Decl):
    params: list = attrs.Factory(list)
    requires: list = attrs.Factory(list)
    costs: list = attrs.Factory(list)
    # "require" or "cost" for each require and cost item, in the order they are written: the order
    # they are tested in (empty: the requires, then the costs)
    order: tuple = ()
    effect: Optional[Block] = None
    text: str = ""
    text_span: Optional[Span] = None  # where the text "..." clause stands
    placeholder: Optional[str] = None  # an invented rule: reason, "" when no reason was given
    kind = "action"


@node
class EventDecl(Decl):
    params: list = attrs.Factory(list)
    kind = "event"


@node
class TriggerDecl(Decl):
    """`when ["LABEL":] EVENT(params) [if COND] then BLOCK`; only a labelled trigger can be overridden."""
    event: str = ""
    params: list = attrs.Factory(list)
    condition: Optional[Expr] = None
    body: Optional[Block] = None
    label: Optional[str] = None
    kind = "trigger"


@node
class EndingDecl(Decl):
    condition: Optional[Expr] = None
    kind = "ending"


@node
class InvariantDecl(Decl):
    """`invariant "NAME": CONDITION`: what the rulebook guarantees of every position; checked only when
    asked (`Game.check_invariants()`, `rulelang validate`), never in normal play."""
    condition: Optional[Expr] = None
    kind = "invariant"


@node
class ScoreDecl(Decl):
    param: str = "p"
    value: Optional[Expr] = None
    tiebreak: bool = False
    payoff: bool = False  # `payoff p = EXPR`: each seat's utility at the end (Game.returns(), the adapters)
    heuristic: bool = False  # `heuristic p = EXPR`: how good a position looks for p (the heuristic agent)
    kind = "score"


@node
class VariantDecl(Decl):
    description: str = ""
    items: list = attrs.Factory(list)
    kind = "variant"


@node
class ExtendDecl(Decl):
    target: str = ""  # "setup", "flow" or a name
    body: Optional[Block] = None
    kind = "extend"


@node
class ScenarioDecl(Decl):
    after: Optional[str] = None  # `scenario "B" after "A"`: the name of the scenario this one continues
    after_span: Optional[Span] = None  # where that name is written
    setting_spans: list = attrs.Factory(list)  # ("players" / "seed" / "chance" / "variant", where written)
    players: Optional[int] = None
    seed: int = 0
    variants: list = attrs.Factory(list)
    chance: str = "explicit"
    given: list = attrs.Factory(list)  # Blocks
    when: list = attrs.Factory(list)
    then: list = attrs.Factory(list)
    parts: list = attrs.Factory(list)  # (kind, Block) in source order: how they run
    kind = "scenario"


@node
class Module:
    """One parsed file."""
    path: str
    items: list
    source: Any = None  # diagnostics.Source


_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in attrs.fields(cls)
                                     if f.name not in ("span", "ty", "ref", "loose_type", "patterns"))  # (types: no nodes)
    return names


def walk(obj: Any) -> Iterator[Any]:
    """Yield every AST node below (and including) obj, depth first."""
    kinds = _WALK_KINDS
    stack = [obj]
    pop = stack.pop
    push = stack.append
    while stack:
        cur = pop()
        cls = cur.__class__
        names = kinds.get(cls)
        if names is None:
            names = kinds[cls] = _walk_kind(cls)
        if names is _SEQUENCE:
            stack.extend(reversed(cur))
            continue
        if names is _LEAF:
            continue
        yield cur
        for name in names:
            val = getattr(cur, name)
            vcls = val.__class__
            kind = kinds.get(vcls)
            if kind is None:
                kind = kinds[vcls] = _walk_kind(vcls)
            if kind is not _LEAF:
                push(val)


_SEQUENCE = ("<sequence>",)  # markers of _WALK_KINDS: a list or tuple (walked through), not a node
_LEAF = ("<leaf>",)
_WALK_KINDS: dict[type, tuple[str, ...]] = {}  # class -> its child field names (a node), _SEQUENCE or _LEAF


def _walk_kind(cls: type) -> tuple[str, ...]:
    if issubclass(cls, (list, tuple)):
        return _SEQUENCE
    if attrs.has(cls):
        return _child_fields(cls)
    return _LEAF


# ---------------------------------------------------------------------------- the one child walk
child_fields = _child_fields  # the fields of a node class that may hold nodes (not its span nor checker notes)


def _kind_of(cls: type) -> tuple[str, ...]:
    kind = _WALK_KINDS.get(cls)
    if kind is None:
        kind = _WALK_KINDS[cls] = _walk_kind(cls)
    return kind


def iter_child_nodes(node: Any) -> Iterator[Any]:
    """The nodes directly below ``node``, in the order of its fields (lists and tuples in them looked
    through), as Python's ``ast.iter_child_nodes``; ``walk`` goes down the same way."""
    names = _kind_of(node.__class__)
    if names is _LEAF:
        return
    stack = [node] if names is _SEQUENCE else [getattr(node, name) for name in reversed(names)]
    while stack:
        value = stack.pop()
        kind = _kind_of(value.__class__)
        if kind is _SEQUENCE:
            stack.extend(reversed(value))
        elif kind is not _LEAF:
            yield value


# ---------------------------------------------------------------------------- the one dispatch
class _Methods(dict):
    """{node class: the visitor class's method for it (a function: call it with the visitor first)},
    filled on first use: the method named prefix + the node's class name, or that of its nearest base
    class that has one, else the fallback."""
    __slots__ = ("owner", "prefix", "fallback")

    def __init__(self, owner: type, prefix: str, fallback: Optional[str]) -> None:
        super().__init__()
        self.owner, self.prefix, self.fallback = owner, prefix, fallback

    def __missing__(self, node_class: type) -> Any:
        for klass in node_class.__mro__:
            method = getattr(self.owner, self.prefix + klass.__name__, None)
            if method is not None:
                break
        else:
            if self.fallback is None:
                raise AttributeError(f"{self.owner.__name__} has no method {self.prefix}{node_class.__name__}")
            method = getattr(self.owner, self.fallback)
        self[node_class] = method
        return method


def methods_of(visitor_class: type, prefix: str, fallback: Optional[str] = None) -> dict[type, Any]:
    """The dispatch table of ``visitor_class`` for the methods named ``prefix`` + node class name."""
    tables = visitor_class.__dict__.get("_node_methods")
    if tables is None:
        tables = {}
        setattr(visitor_class, "_node_methods", tables)
    table = tables.get(prefix)
    if table is None:
        table = tables[prefix] = _Methods(visitor_class, prefix, fallback)
    return table


class Dispatch:
    """A class attribute naming a family of visitor methods by their prefix: on an instance,
    ``self.ATTR[node.__class__](self, node, ...)`` calls the method for the node's class (see methods_of):
    one dictionary look-up, kept per class (a subclass's own methods win) and then on the instance."""

    def __init__(self, prefix: str, fallback: Optional[str] = None) -> None:
        self.prefix, self.fallback = prefix, fallback
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type) -> dict[type, Any]:
        table = methods_of(owner, self.prefix, self.fallback)
        if instance is not None:
            instance.__dict__[self.name] = table  # (not a data descriptor: the instance's own is used next)
        return table


class NodeVisitor:
    """As Python's ``ast.NodeVisitor`` (and Jinja2's): ``visit(node, *args)`` calls
    ``self.visit_<NodeClass>(node, *args)`` (or the method of its nearest base class), else
    ``generic_visit``, which visits the node's children. Visitors with several families of methods (the
    checker's ``e_``/``s_``, the compilers' ``x_``/``g_``/``s_``) declare each as a ``Dispatch``."""

    visit_methods = Dispatch("visit_", fallback="generic_visit")

    def visit(self, node: Any, *args: Any) -> Any:
        return self.visit_methods[node.__class__](self, node, *args)

    def generic_visit(self, node: Any, *args: Any) -> Any:
        for child in iter_child_nodes(node):
            self.visit(child, *args)

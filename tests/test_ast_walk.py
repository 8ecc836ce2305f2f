"""The AST's one child walk (rulelang/ast.py: iter_child_nodes, walk), its one dispatch (NodeVisitor,
Dispatch: as Python's ast.NodeVisitor, `visit_<NodeClass>` with a generic fallback) and its one printer
(rulelang/ast_print.py: to_text), against what they are meant to be: Python's ast module's meanings, and
the parser itself (printed text parses back to the same tree)."""
from __future__ import annotations

import glob
import os

import pytest

from rulelang import ast as A
from rulelang import parser
from rulelang.ast_print import to_text
from tests.ast_compare import same_tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "games", "**", "*.rules"),
                                                           recursive=True))


def expr(text):
    module, diags = parser.parse(f"const zz = {text}\n", "x.rules")
    assert module is not None, diags
    return module.items[0].value


def test_iter_child_nodes_gives_the_direct_children_in_field_order():
    e = expr("f(a, k: b) + {c: d}[e]")
    assert isinstance(e, A.Binary)
    assert list(A.iter_child_nodes(e)) == [e.left, e.right]
    call = e.left
    assert list(A.iter_child_nodes(call)) == [call.func, *call.args]  # a list looked through
    index = e.right
    (key, value), = index.target.entries
    assert list(A.iter_child_nodes(index.target)) == [key, value]  # tuples in a list too
    assert list(A.iter_child_nodes(key)) == []


def _walk_recursively(node):
    yield node
    for child in A.iter_child_nodes(node):
        yield from _walk_recursively(child)


@pytest.mark.parametrize("rel", ["games/station.rules", "games/examples/connect4.rules"])
def test_walk_goes_down_as_iter_child_nodes_does(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        module, _ = parser.parse(f.read(), rel)
    for item in module.items:  # the same nodes as often (the order is walk's own, as in Python's ast.walk)
        assert sorted(map(id, A.walk(item))) == sorted(map(id, _walk_recursively(item)))


class _Names(A.NodeVisitor):
    def __init__(self):
        self.seen = []

    def visit_Name(self, node):
        self.seen.append(node.ident)


class _Kinds(_Names):
    def visit_Expr(self, node):  # every expression without a method of its own
        self.seen.append(type(node).__name__)
        self.generic_visit(node)


def test_the_visitor_calls_visit_class_else_a_base_class_else_generic_visit():
    e = expr("a + g(b) * -c")
    names = _Names()
    names.visit(e)  # generic_visit goes down through Binary, Call, Arg, Unary
    assert names.seen == ["a", "g", "b", "c"]
    kinds = _Kinds()
    kinds.visit(e)
    assert kinds.seen == ["Binary", "a", "Binary", "Call", "g", "b", "Unary", "c"]


class _Family:
    methods = A.Dispatch("x_")

    def x_Name(self, node):
        return "name " + node.ident


class _Override(_Family):
    def x_Name(self, node):
        return "own " + node.ident


def test_a_family_of_methods_dispatches_by_prefix_and_a_subclass_method_wins():
    name = expr("q")
    assert _Family().methods[A.Name](_Family(), name) == "name q"
    sub = _Override()
    assert sub.methods[name.__class__](sub, name) == "own q"
    with pytest.raises(AttributeError):  # no fallback: a missing method is an error, as getattr made it
        _Family().methods[A.Literal]


_same = same_tree


@pytest.mark.parametrize("rel", GAMES)
def test_every_expression_of_the_games_prints_as_text_that_parses_back_to_it(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        module, _ = parser.parse(f.read(), rel)
    # (choose, roll and draw stand only on the right of let: not in a constant)
    nodes = [node for node in A.walk(module.items) if isinstance(node, A.Expr)
             and not any(isinstance(x, (A.Choose, A.Roll, A.Draw)) for x in A.walk(node))]
    texts = [to_text(node) for node in nodes]
    again, diags = parser.parse("".join(f"const z{i} = {t}\n" for i, t in enumerate(texts)), "x.rules")
    assert again is not None and len(again.items) == len(nodes) > 0, diags
    for node, text, item in zip(nodes, texts, again.items):
        assert _same(item.value, node), text


@pytest.mark.parametrize("text, short", [
    ("pos[p] > 10", "..."), ("pos[p]", "pos[p]"), ("a.b", "a.b"), ('"x"', '"x"'), ("f(a, b)", "f(...)"),
    ("none", "none"), ("true", "true"), ("-x", "..."), ("[1, 2]", "..."),
])
def test_the_short_form_quotes_names_literals_and_places_only(text, short):
    assert to_text(expr(text), short=True) == short


def test_the_printer_brackets_only_where_precedence_needs_it():
    for text in ["(a + b) * c", "a + b * c", "a - (b - c)", "not (a and b)", "-(a + b)", "(x => x + 1)(2)",
                 "if a then b else c", "[x * 2 for x in xs if x > 1]", "?3", "(1,)", "{}", "{a: 1}", "1..5"]:
        assert to_text(expr(text)) == text

"""Quick paths of values.py and builtins.py against their plain definitions: sorting by skey, and the
size and depth measure() finds (the work charged for a value, and the value limits)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interpreter.builtins import MAX_SIZE, RuleRuntimeError, measure
from interpreter.values import skey, sort_values

scalars = st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.none(), st.text(max_size=3))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4).map(tuple), st.frozensets(scalars, max_size=4),
    st.dictionaries(scalars, inner, max_size=3)), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(st.integers()), st.lists(st.text(max_size=3)), st.lists(scalars), st.lists(values),
                 st.lists(st.lists(st.integers(-3, 3), max_size=3).map(tuple)),
                 st.lists(st.lists(st.one_of(st.integers(-3, 3), st.booleans()), max_size=2).map(tuple)),
                 st.lists(st.lists(st.text(max_size=2), max_size=3).map(tuple))))
def test_sort_values_is_sorting_by_skey(xs):
    assert [skey(x) for x in sort_values(xs)] == [skey(x) for x in sorted(xs, key=skey)]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.frozensets(st.integers()), st.frozensets(st.text(max_size=3)), st.frozensets(scalars)))
def test_sort_values_of_a_set_is_sorting_by_skey(xs):
    assert sort_values(xs) == sorted(xs, key=skey)


def test_ints_with_bools_and_texts_keep_the_order_of_kinds():
    assert sort_values((3, True, 1, False)) == [False, True, 1, 3]  # bools before numbers, as skey
    assert sort_values(["b", 2, "a", None]) == [None, 2, "a", "b"]


def reference_measure(v, d=0):
    """measure() as documented: every item counted, the deepest nesting."""
    if v.__class__ not in (tuple, frozenset, dict):
        return 1, 0
    parts = [y for kv in v.items() for y in kv] if v.__class__ is dict else list(v)
    size, depth = 1, 0
    for y in parts:
        s, dd = reference_measure(y, d + 1)
        size += s
        depth = max(depth, dd + 1)
    return size, depth


@settings(max_examples=300, deadline=None)
@given(values)
def test_measure_counts_as_the_plain_walk(v):
    assert measure(v) == reference_measure(v)


def test_a_flat_value_past_the_size_limit_is_stopped():
    with pytest.raises(RuleRuntimeError, match="size limit"):
        measure(tuple(range(MAX_SIZE)))
    assert measure(tuple(range(MAX_SIZE - 1))) == (MAX_SIZE, 1)


def test_the_depth_limit_holds_for_flat_innermost_lists():
    from interpreter.builtins import MAX_DEPTH

    def nested(n):  # n lists, one in another, the innermost holding a number
        v = (1,)
        for _ in range(n - 1):
            v = (v,)
        return v

    assert measure(nested(MAX_DEPTH + 1)) == (MAX_DEPTH + 2, MAX_DEPTH + 1)
    with pytest.raises(RuleRuntimeError, match="depth limit"):
        measure(nested(MAX_DEPTH + 2))
    assert measure((nested(MAX_DEPTH), frozenset({1}), ())) == (MAX_DEPTH + 5, MAX_DEPTH + 1)


@pytest.mark.parametrize("v", [
    ((1, 2), (3, 4)), frozenset({(1, 2), (3, 4), ()}), ((), ()), ((1,), frozenset({2, 3})), {(1, 2): 0, (3, 4): 1},
    {1: (2, 3), 4: ()}, {(1,): (2,)}, {(1,): ((2,),)}, ((1, 2), 3), (((1,),),), ({1: 2},), {1: {2: 3}}, {(): ()},
])
def test_measure_of_lists_of_coordinates_counts_as_the_plain_walk(v):
    assert measure(v) == reference_measure(v)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(st.integers(-5, 5), max_size=8), st.lists(scalars, max_size=8), st.lists(values, max_size=6)),
       st.data())
def test_adding_to_and_removing_from_a_pile_keep_the_order_a_new_pile_sorts_into(xs, data):
    """add_item and remove_item put an item in a pile's sorted pool at its place (or take it out) instead of
    sorting the pool again: the same pile as one made from the new items."""
    from interpreter.runtime import add_item, remove_item
    from interpreter.values import Pile

    kind = data.draw(st.sampled_from(["bag", "deck"]))
    known = tuple(data.draw(st.lists(scalars, max_size=3)))
    pile = Pile(kind, known, xs)
    x = data.draw(st.one_of(st.sampled_from(xs), values) if xs else values)
    added = add_item(pile, x)
    if kind == "bag" or pile.pool:
        made = Pile(kind, known, pile.pool + (x,))
    else:
        made = Pile(kind, known + (x,), ())
    assert added == made and [skey(v) for v in added.pool] == [skey(v) for v in made.pool]
    assert added.known == made.known
    for gone in [x, *pile.pool[:2], *known[:1]]:
        if gone not in pile:
            continue
        taken = remove_item(pile, gone)
        if gone in known:
            i = known.index(gone)
            made = Pile(kind, known[:i] + known[i + 1:], pile.pool)
        else:
            i = pile.pool.index(gone)
            made = Pile(kind, known, pile.pool[:i] + pile.pool[i + 1:])
        assert taken == made and [skey(v) for v in taken.pool] == [skey(v) for v in made.pool]


@pytest.mark.parametrize("value, text", [
    ((), "()"), ((0, 2), "(0,2)"), ((-3,), "(-3,)"), (("lamp", 4), "(lamp,4)"), (("a",), "(a,)"),
    ((True, 1), "(true,1)"), ((None, 0), "(none,0)"), (((1, 2), 3), "((1,2),3)"), ((frozenset({2, 1}),), "({1,2},)"),
])
def test_lists_have_the_canonical_text_of_action_ids(value, text):
    # docs/language.md, "Action ids": tuples as (0,2), no spaces, one item (x,); true/false/none as words
    from interpreter.values import fmt
    assert fmt(value) == text

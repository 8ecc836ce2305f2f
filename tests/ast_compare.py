"""Comparing two syntax trees by their structure: what a printed and re-parsed tree must keep."""
import attrs

from rulelang import ast as A

IGNORED_FIELDS = ("span", "ty", "ref", "loose_type")  # positions and the checker's notes


def same_tree(a, b):
    """Structural equality, positions and checker notes aside."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    if isinstance(a, A.Span):
        return True
    if attrs.has(type(a)):
        return all(same_tree(getattr(a, f.name), getattr(b, f.name)) for f in attrs.fields(type(a))
                   if f.name not in IGNORED_FIELDS)
    return a == b

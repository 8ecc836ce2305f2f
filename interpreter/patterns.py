"""Tuple patterns when the rules run (docs/language.md, "Tuple patterns"): a value taken apart by a pattern
(`let (a, b) = v`, `for (r, c) in cells`, an action's `(src, dst) in moves`), checked to be a tuple of the
pattern's size, and an action parameter's pattern written flat in its id (`move(5,0,4,1)`)."""
from __future__ import annotations

from .builtins import RuleRuntimeError
from .values import Value, fmt


def unpacked(v: Value, size: int, pattern: str) -> tuple[Value, ...]:
    """v, a tuple of `size` items for a tuple pattern (`let (a, b) = v`); else the rules error that says
    what v is (its type was loose: `any`, a node, or none)."""
    if v.__class__ is tuple:
        if len(v) == size:
            return v
        raise RuleRuntimeError(f"the pattern {pattern} takes {size} items, but {fmt(v)[:100]} has {len(v)}")
    raise RuleRuntimeError(f"the pattern {pattern} takes a tuple apart, not {fmt(v)[:100]}")


def pattern_items(v: Value, shape: tuple) -> list[tuple[str, Value]]:
    """[(name, item)] that an action parameter's tuple pattern (Param.shape) takes from v, nested patterns
    flattened, in order (`_` items included); the rules error of unpacked() when v does not fit."""
    text, items = shape
    out: list[tuple[str, Value]] = []
    for item, x in zip(items, unpacked(v, len(items), text)):
        if item.__class__ is str:
            out.append((item, x))
        else:
            out.extend(pattern_items(x, item))
    return out


def flat_text(v: Value, shape: tuple) -> str:
    """The value of a parameter written as a tuple pattern in an action id: its items flat, `5,0,4,1`."""
    return ",".join([fmt(x) for _, x in pattern_items(v, shape)])

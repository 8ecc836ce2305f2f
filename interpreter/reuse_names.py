"""Fewer Python locals in a generated function: temporaries whose uses do not overlap share one name.

The generator gives every value it computes a fresh name (`t5`, `w21`, `items14`, ...), so a rule function
with many branches has a hundred locals though each call uses a few of them. CPython clears every local
of a function's frame when a call returns, used or not (benchmarks/README.md has the figures of a
seeded game). This pass renames, in the lines of one generated function, each temporary to the
first earlier name of the same kind (the same letters) whose uses all come before it, so the function
has as many locals as it holds values at once.

When two names may share one: every use of the first is on a line before the first use of the second,
where a name used before a loop and inside it is in use to the loop's end (the next round reads it
again). This is sound because the generator never reads a temporary that the same round of its loop has
not set, nor one that is set only on another path: a read always follows a set of the same name, above
it, in the same block or an enclosing one (the cache of generated values is forgotten when a block ends,
see generate.Function). A function that defines a function inside it (a lambda value: its locals are
cells shared with the inner function) is left as it is.
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

_NAME = re.compile(r"(?<![.\w])([a-z]+)([0-9]+)\b")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_LOOP = re.compile(r"(for|while) ")
_NEWLINE = re.compile("\n")


MIN_NAMES = 12  # a function with fewer temporaries is left as it is (little to gain, quicker to load)


def reuse_names(lines: Sequence[str], params: Iterable[str] = ()) -> list[str]:
    """The lines of one function's body with its temporaries renamed (a new list; `lines` is not changed).
    `params`: the function's parameter names (never renamed)."""
    text = "\n".join(lines)
    if "def " in text or "lambda" in text:
        return list(lines)
    # the text with every string literal blanked out (same length: a position means the same in both)
    plain = _STRING.sub(lambda m: "'" + " " * (len(m.group(0)) - 2) + "'", text) if ("'" in text or '"' in text) else text
    found = [(m.start(), m.end(), m.group(0), m.group(1)) for m in _NAME.finditer(plain)]
    breaks = [m.start() for m in _NEWLINE.finditer(plain)]
    first: dict[str, int] = {}  # name -> the line of its first use
    last: dict[str, int] = {}  # name -> the line of its last use
    kind_of: dict[str, str] = {}
    line_no = 0
    for pos, _, name, kind in found:
        while line_no < len(breaks) and breaks[line_no] < pos:
            line_no += 1
        if name not in first:
            first[name] = line_no
            kind_of[name] = kind
        last[name] = line_no
    for p in params:
        first.pop(p, None)
    if len(first) < MIN_NAMES:
        return list(lines)
    ends = dict(last)
    code = plain.split("\n")
    for head, end in _loops(code):  # a name set before a loop and used in it is in use to the loop's end
        for name, f in first.items():
            if f < head < last[name] and ends[name] < end:
                ends[name] = end
    # per kind of name, in order of first use: the first earlier name free by then, else a name of its own
    rename: dict[str, str] = {}
    free: dict[str, list[tuple[str, int]]] = {}  # kind -> (name, line it is in use until)
    for name in sorted(first, key=first.__getitem__):
        slots = free.setdefault(kind_of[name], [])
        for k, (held, until) in enumerate(slots):
            if until < first[name]:
                slots[k] = (held, ends[name])
                rename[name] = held
                break
        else:
            slots.append((name, ends[name]))
    if not rename:
        return list(lines)
    out: list[str] = []
    at = 0
    for pos, end, name, _ in found:
        new = rename.get(name)
        if new is not None:
            out.append(text[at:pos])
            out.append(new)
            at = end
    out.append(text[at:])
    return "".join(out).split("\n")


def _loops(code: Sequence[str]) -> list[tuple[int, int]]:
    """(header line, last line of its body) of every `for` and `while` loop, by indentation."""
    out = []
    for i, line in enumerate(code):
        stripped = line.lstrip()
        if _LOOP.match(stripped) and stripped.endswith(":"):
            indent = len(line) - len(stripped)
            end = i
            for j in range(i + 1, len(code)):
                s = code[j].lstrip()
                if s and len(code[j]) - len(s) <= indent:
                    break
                end = j
            out.append((i, end))
    return out
